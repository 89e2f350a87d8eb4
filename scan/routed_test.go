package scan_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
)

// runScan runs spec to the end with a checked allocator: the reader must announce
// spec.Schema, stay finished after the end, and leave no allocated byte once released.
func runScan(t testing.TB, ctx context.Context, spec *scanSpec) (rows [][]any, batches []int, err error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(testPool)
	rdr, err := openScan(ctx, spec, mem)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if !rdr.Schema().Equal(spec.Schema) {
		t.Fatalf("reader schema %s, want %s", rdr.Schema(), spec.Schema)
	}
	rows, batches, err = drain(t, rdr)
	if rdr.Next() {
		t.Fatal("Next returned true after the end of the stream")
	}
	rdr.Release()
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes still allocated after Release", n)
	}
	return rows, batches, err
}

// rangeCases are the time ranges every order/limit test runs over.
func rangeCases() []struct {
	name string
	r    routing.TimeRange
} {
	recs := expected(pGeneral, span(0, days(numDays)), false, -1)
	a, b := recs[100].EventTime, recs[250].EventTime
	cases := []struct {
		name string
		r    routing.TimeRange
	}{
		{"whole data set", span(0, days(numDays))},
		{"wider than the data", span(-days(10), days(numDays+10))},
		{"mid-bucket to mid-bucket", span(days(2)+5*time.Hour, days(20)+7*time.Hour+30*time.Minute)},
		{"exactly on bucket bounds", span(days(3), days(9))},
		{"one whole bucket", span(days(15), days(16))},
		{"inside one bucket", span(days(15)+time.Hour, days(15)+23*time.Hour)},
		{"bounds on record times", routing.TimeRange{Start: a, End: b}},
		{"sub-microsecond bounds", routing.TimeRange{Start: a.Add(time.Nanosecond), End: b.Add(time.Nanosecond)}},
		{"one microsecond at a bucket bound", span(days(5), days(5)+time.Microsecond)},
		{"last microsecond of a bucket", span(days(8)-time.Microsecond, days(8))},
		{"across the month boundary", span(days(29)+12*time.Hour, days(33)+time.Hour)},
		{"only empty buckets", span(days(10), days(14))},
		{"empty buckets in the middle", span(days(8), days(16))},
		{"before the data", span(-days(30), -days(1))},
	}
	if raceEnabled { // see raceEnabled
		cases = slices.DeleteFunc(cases, func(c struct {
			name string
			r    routing.TimeRange
		}) bool {
			return !slices.Contains([]string{"whole data set", "mid-bucket to mid-bucket", "exactly on bucket bounds",
				"sub-microsecond bounds", "across the month boundary", "only empty buckets"}, c.name)
		})
	}
	return cases
}

// TestScanOrderAndRanges: every range, in both directions, over the all-hot and the mixed
// fixture, yields exactly the brute-force rows in (timestamp, id) order.
func TestScanOrderAndRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for _, rc := range rangeCases() {
			for _, desc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/desc=%v", f.name, rc.name, desc), func(t *testing.T) {
					t.Parallel()
					parts := []string{pGeneral, pRandom, pEmpty}
					if raceEnabled {
						parts = parts[:1] // see raceEnabled
					}
					for _, part := range parts {
						want := rowsOf(expected(part, rc.r, desc, -1), allColumns)
						got, batches, err := runScan(t, ctx, makeSpec(tbl, part, rc.r, allColumns, desc, -1))
						if err != nil {
							t.Fatalf("%s: %v", part, err)
						}
						sameRows(t, part, got, want)
						if len(want) == 0 && len(batches) != 0 {
							t.Fatalf("%s: %d batches for no row", part, len(batches))
						}
					}
				})
			}
		}
	}
}

// TestScanLimit: LIMIT 0, smaller than one bucket, spanning several buckets, equal to and
// one less than the number of rows, and larger than the data, in both directions.
func TestScanLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ranges := []routing.TimeRange{span(0, days(numDays)), span(days(2)+5*time.Hour, days(20)+7*time.Hour)}
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for ri, r := range ranges {
			total := int64(len(expected(pGeneral, r, false, -1)))
			limits := []int64{0, 1, 3, 25, 60, total - 1, total, total + 1, 100_000}
			if raceEnabled {
				limits = []int64{0, 3, 25, total} // see raceEnabled
			}
			for _, limit := range limits {
				for _, desc := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/range%d/limit=%d/desc=%v", f.name, ri, limit, desc), func(t *testing.T) {
						t.Parallel()
						want := rowsOf(expected(pGeneral, r, desc, limit), allColumns)
						got, batches, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, allColumns, desc, limit))
						if err != nil {
							t.Fatal(err)
						}
						sameRows(t, "rows", got, want)
						if limit == 0 && len(batches) != 0 {
							t.Fatalf("LIMIT 0 gave %d batches", len(batches))
						}
					})
				}
			}
		}
	}
}

// TestScanColumns: any subset and order of the four columns, repeated columns and renamed
// output fields; the batch content follows Spec.Columns and the types follow Spec.Schema.
func TestScanColumns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(days(1)+time.Hour, days(25))
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 3, false)
		for _, tc := range []struct {
			cols, names []string
		}{
			{cols: []string{"id"}},
			{cols: []string{"value"}},
			{cols: []string{"timestamp"}},
			{cols: []string{"channel_id"}},
			{cols: []string{"value", "id", "timestamp", "channel_id"}},
			{cols: []string{"timestamp", "channel_id"}, names: []string{"ts", "chan"}},
			{cols: []string{"id", "id", "value"}, names: []string{"id", "id2", "payload"}},
			{cols: []string{"channel_id", "timestamp", "id", "value"}},
		} {
			t.Run(f.name+"/"+strings.Join(tc.cols, ","), func(t *testing.T) {
				t.Parallel()
				for _, desc := range []bool{false, true} {
					spec := makeSpec(tbl, pGeneral, r, tc.cols, desc, 40, tc.names...)
					got, _, err := runScan(t, ctx, spec)
					if err != nil {
						t.Fatal(err)
					}
					sameRows(t, "rows", got, rowsOf(expected(pGeneral, r, desc, 40), tc.cols))
				}
			})
		}
	}
}

// TestScanEmpty: a partition without records, a range without records and LIMIT 0 give the
// schema and no batch, without error (an empty range cannot be planned: the binder
// refuses it).
func TestScanEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 0, false)
		for _, spec := range []*scanSpec{
			makeSpec(tbl, pEmpty, span(0, days(numDays)), allColumns, false, -1),
			makeSpec(tbl, pEmpty, span(0, days(numDays)), []string{"timestamp"}, true, 5),
			makeSpec(tbl, pGeneral, span(days(10), days(14)), allColumns, false, -1),
			makeSpec(tbl, pGeneral, span(0, days(numDays)), allColumns, false, 0),
		} {
			rows, batches, err := runScan(t, ctx, spec)
			if err != nil || len(rows) != 0 || len(batches) != 0 {
				t.Fatalf("%s: %d rows in %d batches, err %v; want nothing", f.name, len(rows), len(batches), err)
			}
		}
	}
}

// TestScanBatchRowCap: a bucket of exactly PageRows records and one of PageRows+1000 (read
// in two pages whose boundary falls inside a run of equal timestamps) are split into batches
// of at most MaxBatchRows rows, in (timestamp, id) order, across hot and archived buckets;
// LIMITs crossing the page size and the bucket boundary are exact.
func TestScanBatchRowCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(days(4), days(6))
	for _, f := range capFixtures(t) {
		tbl := f.table(t, nil, 2, false)
		for _, tc := range []struct {
			cols  []string
			desc  bool
			limit int64
		}{
			{allColumns, false, -1},
			{allColumns, true, -1},
			{[]string{"timestamp"}, false, -1},
			{[]string{"id", "timestamp"}, false, pageRows + 1},
			{[]string{"id"}, true, manyDay2Rows + 10},
			{[]string{"id", "timestamp"}, false, routing.MaxBatchRows},
			{[]string{"timestamp", "id"}, true, 20_000},
			{[]string{"id"}, false, 2*pageRows + 1},
		} {
			if raceEnabled && tc.limit != 20_000 {
				continue // see raceEnabled
			}
			t.Run(fmt.Sprintf("%s/%v/desc=%v/limit=%d", f.name, tc.cols, tc.desc, tc.limit), func(t *testing.T) {
				t.Parallel()
				want := rowsOf(expected(pMany, r, tc.desc, tc.limit), tc.cols)
				got, batches, err := runScan(t, ctx, makeSpec(tbl, pMany, r, tc.cols, tc.desc, tc.limit))
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, "rows", got, want)
				// Hot buckets fill batches to the row cap; archives with small row groups are
				// coalesced to at least half of it (ops.Rebatch): never more batches than that
				// allows per bucket (two buckets here), never fewer than the cap allows.
				if len(want) > routing.MaxBatchRows && f.name == "caps-hot" && !slices.Contains(batches, routing.MaxBatchRows) {
					t.Fatalf("batches %v: the row cap never filled a batch", batches)
				}
				half := routing.MaxBatchRows / 2
				if max := (len(want)+half-1)/half + 2; len(batches) > max {
					t.Fatalf("batches %v: %d batches for %d rows, want at most %d", batches, len(batches), len(want), max)
				}
				if min := (len(want) + routing.MaxBatchRows - 1) / routing.MaxBatchRows; len(batches) < min {
					t.Fatalf("%d batches for %d rows", len(batches), len(want))
				}
			})
		}
	}
}

// TestScanBatchByteCap: 256 KiB values are split into batches of at most MaxBatchBytes of
// variable-width data (checked in drain), and a value larger than the cap travels alone in
// its batch.
func TestScanBatchByteCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(days(6), days(8))
	for _, f := range capFixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for _, desc := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/desc=%v", f.name, desc), func(t *testing.T) {
				t.Parallel()
				recs := expected(pBig, r, desc, -1)
				got, batches, err := runScan(t, ctx, makeSpec(tbl, pBig, r, []string{"id", "value"}, desc, -1))
				if err != nil {
					t.Fatal(err)
				}
				sameRows(t, "rows", got, rowsOf(recs, []string{"id", "value"}))
				// The huge value is alone; every other batch holds at most MaxBatchBytes.
				rest := 0
				for _, rec := range recs {
					if len(rec.Value) != hugeValue {
						rest += len(rec.Value)
					}
				}
				if min := 1 + (rest+routing.MaxBatchBytes-1)/routing.MaxBatchBytes; len(batches) < min {
					t.Fatalf("batches %v for %d value bytes: byte cap not applied", batches, rest+hugeValue)
				}
				i := 0
				for _, n := range batches {
					for j := i; j < i+n; j++ {
						if len(recs[j].Value) == hugeValue && n != 1 {
							t.Fatalf("the %d-byte value shares a batch of %d rows", hugeValue, n)
						}
					}
					i += n
				}
			})
		}
	}
}

// TestScanInvalidUTF8: a stored id (or partition key) that is not valid UTF-8 fails the
// scan through Err() with routing.ErrOperationFailed and a message that does not contain it, after
// the batches of earlier buckets; scans not projecting that column are unaffected; nothing
// leaks (runScan checks the allocator).
func TestScanInvalidUTF8(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := span(0, days(3))
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for _, tc := range []struct {
			part string
			cols []string
			desc bool
			bad  bool
			rows int // rows delivered before the error
		}{
			{pBad, []string{"timestamp", "id"}, false, true, 2},
			{pBad, []string{"id"}, true, true, 0},
			{pBad, []string{"timestamp", "value", "channel_id"}, false, false, 5},
			{pBadKey, []string{"channel_id"}, false, true, 0},
			{pBadKey, []string{"id", "timestamp"}, false, false, 2},
		} {
			got, _, err := runScan(t, ctx, makeSpec(tbl, tc.part, r, tc.cols, tc.desc, -1))
			if !tc.bad {
				if err != nil {
					t.Fatalf("%s %v: %v", f.name, tc.cols, err)
				}
				sameRows(t, "rows", got, rowsOf(expected(tc.part, r, tc.desc, -1), tc.cols))
				continue
			}
			if !errors.Is(err, routing.ErrOperationFailed) {
				t.Fatalf("%s %v: err %v, want ErrRoutedRead", f.name, tc.cols, err)
			}
			for _, secret := range []string{"secret", "\xff", "\xfe"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q leaks a stored value", err)
				}
			}
			sameRows(t, "rows before the error", got, rowsOf(expected(tc.part, r, tc.desc, -1)[:tc.rows], tc.cols))
		}
	}
}

// TestScanRouteCache: with a route cache, a second scan reads archived buckets through the
// cached routes and returns the same rows; hot and mixed fixtures agree row for row.
func TestScanRouteCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := fixtures(t)
	if fs[1].archived < 30 {
		t.Fatalf("mixed fixture has %d archived buckets", fs[1].archived)
	}
	r := span(days(1)+3*time.Hour, days(45))
	var first [][]any
	for _, f := range fs {
		tbl := f.table(t, nil, 4, true)
		for pass := range 2 {
			got, _, err := runScan(t, ctx, makeSpec(tbl, pGeneral, r, allColumns, pass == 1, -1))
			if err != nil {
				t.Fatal(err)
			}
			if pass == 1 {
				slices.Reverse(got)
			}
			if first == nil {
				first = got
			}
			sameRows(t, fmt.Sprintf("%s pass %d", f.name, pass), got, first)
		}
	}
	sameRows(t, "brute force", first, rowsOf(expected(pGeneral, r, false, -1), allColumns))
}

// TestSummarize: Summarize equals the brute-force count, minimum and maximum for every
// range, partition and fixture, ignoring Desc and Limit.
func TestSummarize(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		tbl := f.table(t, nil, 4, false)
		for _, rc := range rangeCases() {
			t.Run(f.name+"/"+rc.name, func(t *testing.T) {
				t.Parallel()
				parts := []string{pGeneral, pRandom, pEmpty}
				if raceEnabled {
					parts = parts[:1] // see raceEnabled
				}
				for _, part := range parts {
					checkSummary(t, tbl, part, rc.r)
				}
			})
		}
	}
	for _, f := range capFixtures(t) {
		tbl := f.table(t, nil, 4, false)
		ranges := []routing.TimeRange{span(days(4)+time.Hour, days(7)+time.Hour), span(0, days(numDays))}
		if raceEnabled {
			ranges = ranges[:1] // see raceEnabled
		}
		for _, r := range ranges {
			if !raceEnabled {
				checkSummary(t, tbl, pMany, r)
			}
			checkSummary(t, tbl, pBig, r)
		}
	}
}

// checkSummary compares Summarize (also with Desc and Limit set, which it ignores) with
// the brute-force count, minimum and maximum.
func checkSummary(t *testing.T, tbl *routing.DurableTable, part string, r routing.TimeRange) {
	t.Helper()
	recs := expected(part, r, false, -1)
	var want summary
	if len(recs) > 0 {
		want = summary{Rows: uint64(len(recs)), Min: recs[0].EventTime, Max: recs[len(recs)-1].EventTime}
	}
	for _, spec := range []*scanSpec{
		{Table: tbl, Partition: []byte(part), Range: r},
		{Table: tbl, Partition: []byte(part), Range: r, Desc: true, Limit: 1},
	} {
		got, err := summarize(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rows != want.Rows || !got.Min.Equal(want.Min) || !got.Max.Equal(want.Max) {
			t.Fatalf("%s: Summarize = %+v, want %+v", part, got, want)
		}
		if got.Rows > 0 && (got.Min.Location() != time.UTC || got.Max.Location() != time.UTC) {
			t.Fatalf("%s: summary times are not UTC", part)
		}
	}
}

// TestEmptyAndErrReaders: the helper readers of the package.
func TestEmptyAndErrReaders(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(testPool)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String}}, nil)
	e := scan.EmptyReader(schema)
	if e.Next() || e.Err() != nil || !e.Schema().Equal(schema) {
		t.Fatal("EmptyReader yielded a batch or an error")
	}
	e.Release()
	boom := errors.New("boom")
	er := scan.ErrReader(schema, boom)
	if er.Next() || !errors.Is(er.Err(), boom) || !er.Schema().Equal(schema) {
		t.Fatal("ErrReader")
	}
	er.Release()
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes leaked", n)
	}
}
