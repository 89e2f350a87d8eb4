package cockroach_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestBinningMatchesPostgreSQL compares routing.Binning, which every tier and the scan path
// bin with, with PostgreSQL's own date_trunc and date_bin on UTC instants.
func TestBinningMatchesPostgreSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, cockroach.Config{})
	rng := rand.New(rand.NewPCG(3, 4))
	var instants []time.Time
	for _, x := range []string{"2024-02-29T23:59:59.999999Z", "2024-03-04T00:00:00Z", "2024-03-03T23:59:59.999999Z",
		"1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00Z", "2000-12-31T23:50:00Z", "1900-01-01T00:00:00Z"} {
		at, _ := time.Parse(time.RFC3339Nano, x)
		instants = append(instants, at.UTC())
	}
	for range 150 {
		instants = append(instants, time.UnixMicro(rng.Int64N(200*365*86_400_000_000)-100*365*86_400_000_000).UTC())
	}
	for _, bin := range storetest.Binnings {
		for _, at := range instants {
			var got time.Time
			var err error
			if bin.Unit != 0 {
				err = s.Pool().QueryRow(ctx, `SELECT date_trunc($1, $2::TIMESTAMPTZ AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
					bin.Unit.String(), at).Scan(&got)
			} else {
				err = s.Pool().QueryRow(ctx, `SELECT date_bin(make_interval(secs => $1::FLOAT8 / 1000000), $2::TIMESTAMPTZ, $3::TIMESTAMPTZ)`,
					int64(bin.Stride/time.Microsecond), at, bin.Origin).Scan(&got)
			}
			if err != nil {
				t.Fatalf("%v at %v: %v", bin, at, err)
			}
			if want := bin.Floor(at); !got.Equal(want) {
				t.Fatalf("%v at %v: PostgreSQL says %v, Floor says %v", bin, at, got.UTC(), want)
			}
		}
	}
}

// TestBinStrideIsDateTrunc: for every unit the row-aggregate statement bins with date_bin
// (cockroach.BinStride), PostgreSQL's date_bin with that stride and origin is its
// date_trunc(unit, t, 'UTC') at every instant: around the origin and the epochs to the
// microsecond, far before and after them, at the ends of the timestamptz range, infinity and
// 300,000 instants at random (all in one statement).
func TestBinStrideIsDateTrunc(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, cockroach.Config{})
	units := 0
	for u := routing.TruncSecond; u <= routing.TruncYear; u++ {
		stride, origin, ok := cockroach.BinStride(u)
		if !ok {
			continue
		}
		units++
		var n, differ int64
		err := s.Pool().QueryRow(ctx, `WITH t(ts) AS (
			SELECT to_timestamp(random() * 2e11 - 1e11) FROM generate_series(1, 200000)
			UNION ALL SELECT to_timestamp(trunc(random() * 2e9 - 1e9)) FROM generate_series(1, 100000)
			UNION ALL SELECT b + g * interval '1 microsecond' FROM generate_series(-3, 3) AS g,
				unnest(ARRAY[$3::TIMESTAMPTZ, TIMESTAMPTZ '2000-01-01 00:00:00+00', TIMESTAMPTZ '1970-01-01 00:00:00+00',
					TIMESTAMPTZ '1900-01-01 00:00:00+00', TIMESTAMPTZ '2024-03-04 00:00:00+00']) AS b
			UNION ALL SELECT unnest(ARRAY[TIMESTAMPTZ '4713-01-01 00:00:00+00 BC', TIMESTAMPTZ '294276-12-31 23:59:59.999999+00',
				TIMESTAMPTZ 'infinity', TIMESTAMPTZ '-infinity'])
		)
		SELECT count(*), count(*) FILTER (WHERE date_bin($2::INTERVAL, ts, $3::TIMESTAMPTZ) IS DISTINCT FROM date_trunc($1, ts, 'UTC'))
		FROM t`, u.String(), stride, origin).Scan(&n, &differ)
		if err != nil {
			t.Fatalf("%v: %v", u, err)
		}
		if n < 300000 || differ != 0 {
			t.Fatalf("%v: date_bin(%s, t, %s) differs from date_trunc at %d of %d instants", u, stride, origin, differ, n)
		}
	}
	if units == 0 {
		t.Fatal("no unit is binned with date_bin")
	}
}

// TestBinStatementReadsKeysOnly: the partial-aggregate statements (per bin, ungrouped with a
// count, MIN/MAX probes) name neither value nor sort_key and are one statement per call.
func TestBinStatementReadsKeysOnly(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	b := routing.BucketFor("t", []byte("p"), routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	rec.take()
	hour, month := routing.TruncBinning(routing.TruncHour), routing.TruncBinning(routing.TruncMonth)
	for _, req := range []routing.AggregateRequest{
		{Range: b.Range(), Bin: &hour, Measures: []routing.Measure{routing.CountStar}}, {Range: b.Range(), Bin: &month, Measures: []routing.Measure{routing.CountStar, routing.MinTime}},
		{Range: b.Range(), Measures: []routing.Measure{routing.CountStar}}, {Range: b.Range(), Measures: []routing.Measure{routing.MaxTime}},
	} {
		_, rd, err := s.AggregateRange(context.Background(), b, req)
		if err != nil {
			t.Fatal(err)
		}
		rd.Release()
		sqls := rec.take()
		if len(sqls) != 1 {
			t.Fatalf("%d statements, want 1", len(sqls))
		}
		if strings.Contains(sqls[0], "value") || strings.Contains(sqls[0], "sort_key") || (req.Bin != nil) != strings.Contains(sqls[0], "GROUP BY") {
			t.Fatalf("statement reads more than keys:\n%s", sqls[0])
		}
	}
}
