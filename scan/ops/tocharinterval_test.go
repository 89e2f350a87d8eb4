package ops_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// toCharIntervals are intervals (months, days, microseconds) of both signs, mixed signs,
// zero fields, hours past a day and past noon, years past 99 centuries.
var toCharIntervals = [][3]int64{{0, 0, 0}, {15, 5, -25_689_123_456}, {-15, -5, 25_689_123_456}, {0, 40, 90_061_000_001}, {-3, 0, 0}, {-24, 0, 0},
	{24, 0, 0}, {1, 1, 1}, {0, 0, -1}, {0, 0, 43_200_000_000}, {0, 0, -43_200_000_000}, {1200, 400, 360_000_000_000_000}, {-120_000, 0, 0},
	{11, 29, 86_399_999_999}, {7, -3, 3_600_000_000}, {12, 0, -3_600_000_000}, {-1, 31, 0}}

// TestToCharIntervalMatchesPostgres: to_char of every interval above with every keyword
// (with and without FM and TH) is PostgreSQL's text, or its error (22007) for the keywords an
// interval has not.
func TestToCharIntervalMatchesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := pgSession(t, "SET TimeZone = 'UTC'; SET lc_time = 'C'")
	var ms, ds []int32
	var us []int64
	for _, v := range toCharIntervals {
		ms, ds, us = append(ms, int32(v[0])), append(ds, int32(v[1])), append(us, v[2])
	}
	formats := []string{"HH24:MI:SS.US", "FMHH12 am", "DD \"days\" HH24:MI", "YYYY-MM-DD", "SSSS", "FMDDD", "FF1 FF2 FF3 FF4 FF5 FF6 MS"}
	for _, k := range toCharKeywords {
		for _, pre := range []string{"", "FM"} {
			for _, suf := range []string{"", "TH"} {
				formats = append(formats, pre+k+suf+"|")
			}
		}
	}
	compared := 0
	for _, f := range formats {
		rows, _ := conn.Query(ctx, "SELECT to_char(m * interval '1 month' + d * interval '1 day' + u * interval '1 microsecond', $4) "+
			"FROM unnest($1::int[], $2::int[], $3::bigint[]) WITH ORDINALITY AS x(m, d, u, n) ORDER BY n", ms, ds, us, f)
		want, err := pgx.CollectRows(rows, pgx.RowTo[string])
		var pe *pgconn.PgError
		if err != nil && !(errors.As(err, &pe) && pe.Code == "22007") {
			t.Fatalf("%q: %v", f, err)
		}
		for i, v := range toCharIntervals {
			compared++
			got, gerr := ops.ToCharInterval(arrow.MonthDayNanoInterval{Months: int32(v[0]), Days: int32(v[1]), Nanoseconds: v[2] * 1000}, f)
			switch {
			case err != nil && gerr != ops.ErrIntervalFormat:
				t.Errorf("to_char(%v, %q) = %q, %v; PostgreSQL: %v", v, f, got, gerr, err)
			case err == nil && (gerr != nil || got != want[i]):
				t.Errorf("to_char(%v, %q) = %q, %v; PostgreSQL %q", v, f, got, gerr, want[i])
			}
		}
	}
	t.Logf("%d cases", compared)
}
