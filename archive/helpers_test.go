package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/routing"
)

const testPrefix = "archives"

// openTestBucket opens a file:// bucket in a fresh temporary directory, the way cmd opens
// any bucket URL.
func openTestBucket(t testing.TB) *blob.Bucket {
	t.Helper()
	dir := t.TempDir()
	b, err := blob.OpenBucket(context.Background(), "file://"+dir+"?metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func testBucket(pk string, s routing.Strategy, at time.Time) routing.BucketID {
	return routing.BucketFor("test-table", []byte(pk), s, at)
}

// genRecords returns n sorted records of b with deliberately repeated event times (so that
// sort keys break ties) and event times at the bucket's first instant.
func genRecords(rng *rand.Rand, b routing.BucketID, n int) []routing.Record {
	span := b.End.Sub(b.Start)
	recs := make([]routing.Record, 0, n)
	for i := 0; i < n; i++ {
		var t time.Time
		switch {
		case i == 0:
			t = b.Start
		case i%7 == 3 && len(recs) > 0:
			t = recs[rng.IntN(len(recs))].EventTime // a duplicate time
		default:
			t = b.Start.Add(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Microsecond)
		}
		val := make([]byte, rng.IntN(40))
		for j := range val {
			val[j] = byte(rng.IntN(256))
		}
		recs = append(recs, routing.Record{
			PartitionKey: bytes.Clone(b.PartitionKey),
			EventTime:    t,
			SortKey:      fmt.Appendf(nil, "id-%06d", i),
			Value:        val,
		})
	}
	sortRecords(recs)
	return recs
}

func sortRecords(recs []routing.Record) {
	slices.SortFunc(recs, func(a, b routing.Record) int {
		return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey)
	})
}

// bruteRead is the reference semantics of a bucket read (routing.ReadRequest), written independently of the
// implementation: filter by range and cursor, order, truncate.
func bruteRead(all []routing.Record, b routing.BucketID, req routing.ReadRequest) []routing.Record {
	r := req.Range.Intersect(b.Range())
	var out []routing.Record
	for i := range all {
		rec := all[i]
		if !r.Contains(rec.EventTime) {
			continue
		}
		if req.After != nil {
			c := routing.Compare(rec.EventTime, rec.SortKey, req.After.EventTime, req.After.SortKey)
			if (!req.Desc && c <= 0) || (req.Desc && c >= 0) {
				continue
			}
		}
		out = append(out, rec)
	}
	if req.Desc {
		slices.Reverse(out)
	}
	if len(out) > req.Limit {
		out = out[:req.Limit]
	}
	return out
}

func bruteCount(times []time.Time, r routing.TimeRange) uint64 {
	var n uint64
	for _, t := range times {
		if r.Contains(t) {
			n++
		}
	}
	return n
}

func eventTimes(recs []routing.Record) []time.Time {
	out := make([]time.Time, len(recs))
	for i := range recs {
		out[i] = recs[i].EventTime
	}
	return out
}

func sameRecords(t *testing.T, what string, got, want []routing.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d records, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.PartitionKey, w.PartitionKey) || !g.EventTime.Equal(w.EventTime) ||
			!bytes.Equal(g.SortKey, w.SortKey) || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("%s: record %d: got {%x %v %q %x}, want {%x %v %q %x}", what, i,
				g.PartitionKey, g.EventTime, g.SortKey, g.Value, w.PartitionKey, w.EventTime, w.SortKey, w.Value)
		}
		if g.EventTime.Location() != time.UTC {
			t.Fatalf("%s: record %d: event time not in UTC", what, i)
		}
	}
}

// randomRange returns a range around bucket b: often aligned to record times or bucket
// bounds, sometimes empty, reversed or outside the bucket.
func randomRange(rng *rand.Rand, b routing.BucketID, times []time.Time) routing.TimeRange {
	span := b.End.Sub(b.Start)
	pick := func() time.Time {
		switch rng.IntN(6) {
		case 0:
			return b.Start
		case 1:
			return b.End
		case 2:
			if len(times) > 0 {
				return times[rng.IntN(len(times))]
			}
		case 3:
			if len(times) > 0 {
				return times[rng.IntN(len(times))].Add(time.Duration(rng.IntN(3)-1) * time.Nanosecond)
			}
		case 4:
			return b.Start.Add(time.Duration(rng.Int64N(int64(span)*3)) - span)
		}
		return b.Start.Add(time.Duration(rng.Int64N(int64(span))))
	}
	s, e := pick(), pick()
	if rng.IntN(10) > 0 && e.Before(s) {
		s, e = e, s
	}
	return routing.TimeRange{Start: s, End: e}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// aggregateGroups asks r's partial-aggregate port for req over b and reads the answer back
// (exactly one group when ungrouped); routing.ErrNoAggregate passes through.
func aggregateGroups(ctx context.Context, r *Reader, key string, b routing.BucketID, req routing.AggregateRequest) ([]routing.PartialGroup, error) {
	rd, err := r.Aggregate(ctx, key, b, req)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	grouped := req.Bin != nil
	out, err := routing.ReadPartial(rd, grouped)
	if err != nil {
		return nil, err
	}
	if !grouped && len(out) != 1 {
		return nil, fmt.Errorf("an ungrouped answer of %d rows", len(out))
	}
	return out, nil
}

// rowTimes reads the event times of b's records inside rng with ReadBatches: what the
// executor's fragment reads when the port declines.
func rowTimes(ctx context.Context, r *Reader, key string, b routing.BucketID, rng routing.TimeRange) ([]time.Time, error) {
	rd, err := r.ReadBatches(ctx, key, b, routing.BatchRequest{Range: rng, Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	var out []time.Time
	for rd.Next() {
		col := rd.RecordBatch().Column(0).(*array.Timestamp)
		for i := range col.Len() {
			out = append(out, time.Unix(0, int64(col.Value(i))).UTC())
		}
	}
	return out, rd.Err()
}

// minMaxOf is the count and extremes of b's records inside rng through the port, or through
// the rows when the port declines (declined then reports it).
func minMaxOf(ctx context.Context, r *Reader, key string, b routing.BucketID, rng routing.TimeRange) (n uint64, lo, hi time.Time, declined bool, err error) {
	gs, err := aggregateGroups(ctx, r, key, b, routing.AggregateRequest{Range: rng, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}})
	if errors.Is(err, routing.ErrNoAggregate) {
		ts, err := rowTimes(ctx, r, key, b, rng)
		if err != nil || len(ts) == 0 {
			return 0, time.Time{}, time.Time{}, true, err
		}
		lo, hi = ts[0], ts[0]
		for _, x := range ts {
			lo, hi = minTime(lo, x), maxTime(hi, x)
		}
		return uint64(len(ts)), lo, hi, true, nil
	}
	if err != nil {
		return 0, time.Time{}, time.Time{}, false, err
	}
	return uint64(gs[0].Count), gs[0].Min, gs[0].Max, false, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// countRecords is count(*) of b inside rng through the port, or through the rows when the
// port declines.
func countRecords(ctx context.Context, r *Reader, key string, b routing.BucketID, rng routing.TimeRange) (uint64, error) {
	gs, err := aggregateGroups(ctx, r, key, b, routing.AggregateRequest{Range: rng, Measures: []routing.Measure{routing.CountStar}})
	if errors.Is(err, routing.ErrNoAggregate) {
		ts, err := rowTimes(ctx, r, key, b, rng)
		return uint64(len(ts)), err
	}
	if err != nil {
		return 0, err
	}
	return uint64(gs[0].Count), nil
}

// binCount is one non-empty time bin of a histogram: its start and count.
type binCount struct {
	Start time.Time
	Count uint64
}

// binsOf is the histogram of b's records inside rng through the port (grouped count(*)), or
// through the rows when the port declines.
func binsOf(ctx context.Context, r *Reader, key string, b routing.BucketID, rng routing.TimeRange, bin routing.Binning) ([]binCount, bool, error) {
	gs, err := aggregateGroups(ctx, r, key, b, routing.AggregateRequest{Range: rng, Bin: &bin, Measures: []routing.Measure{routing.CountStar}})
	if errors.Is(err, routing.ErrNoAggregate) {
		ts, err := rowTimes(ctx, r, key, b, rng)
		return binTimes(bin, ts), true, err
	}
	var out []binCount
	for _, g := range gs {
		out = append(out, binCount{g.Bin, uint64(g.Count)})
	}
	return out, false, err
}

// binTimes is the histogram of instants by definition: the non-empty bins, ascending.
func binTimes(bin routing.Binning, ts []time.Time) []binCount {
	counts := map[int64]uint64{}
	for _, x := range ts {
		counts[bin.Floor(x).UnixNano()]++
	}
	out := make([]binCount, 0, len(counts))
	for s, n := range counts {
		out = append(out, binCount{time.Unix(0, s).UTC(), n})
	}
	slices.SortFunc(out, func(x, y binCount) int { return x.Start.Compare(y.Start) })
	return out
}

// tableBucketCount is count(*) of b inside rng through routing.DurableTable.AggregateBucket.
func tableBucketCount(ctx context.Context, tbl *routing.DurableTable, b routing.BucketID, rng routing.TimeRange) (uint64, error) {
	rd, _, err := tbl.AggregateBucket(ctx, b, routing.AggregateRequest{Range: rng, Measures: []routing.Measure{routing.CountStar}})
	if err != nil {
		return 0, err
	}
	defer rd.Release()
	gs, err := routing.ReadPartial(rd, false)
	if err != nil || len(gs) != 1 {
		return 0, errors.Join(err, fmt.Errorf("an ungrouped answer of %d rows", len(gs)))
	}
	return uint64(gs[0].Count), nil
}

// readRecords reads the archived bucket b's records through the reader's one read path
// (ReadBatches of every column) and routing.ReadRecords (req's cursor and limit).
func readRecords(r *Reader, ctx context.Context, key string, b routing.BucketID, req routing.ReadRequest) ([]routing.Record, error) {
	if req.Limit <= 0 {
		return nil, nil
	}
	br, err := r.ReadBatches(ctx, key, b, req.Batch())
	if err != nil {
		return nil, err
	}
	defer br.Release()
	return routing.ReadRecords(br, b.PartitionKey, req)
}
