package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// batchRead is the outcome of one ReadBatches, drained: its rows as records (fields of
// columns that were not requested stay zero), Ordered and the error.
type batchRead struct {
	recs    []routing.Record
	ordered bool
	batches int
	err     error
}

// readBatches runs ReadBatches with a checked allocator, drains the reader checking every
// batch (schema, non-empty, limits, no nulls), releases it and requires every buffer to be
// freed. A ReadBatches error is returned in err too.
func readBatches(t *testing.T, ctx context.Context, r *Reader, key string, b routing.BucketID, req routing.BatchRequest) batchRead {
	t.Helper()
	// A ledger over a poisoning pool, as the engine's (recycled buffers hand out garbage to
	// whatever reads a byte before writing it), that must hold nothing at the end.
	mem := ledger.New(&ledger.Pool{Poison: true}, 0)
	defer func() {
		if n := mem.Bytes(); n != 0 {
			t.Errorf("%d bytes still allocated after the read", n)
		}
	}()
	req.Alloc = mem
	br, err := r.ReadBatches(ctx, key, b, req)
	if err != nil {
		return batchRead{err: err}
	}
	defer br.Release()
	out := batchRead{ordered: br.Ordered()}
	want := batchSchemaDef.BatchSchema(req.Columns)
	if !br.Schema().Equal(want) {
		t.Fatalf("schema %v, want %v", br.Schema(), want)
	}
	for br.Next() {
		rec := br.RecordBatch()
		out.batches++
		if !rec.Schema().Equal(want) {
			t.Fatalf("batch schema %v, want %v", rec.Schema(), want)
		}
		n := int(rec.NumRows())
		if n == 0 || n > routing.MaxBatchRows {
			t.Fatalf("batch of %d rows", n)
		}
		varBytes := 0
		base := len(out.recs)
		out.recs = append(out.recs, make([]routing.Record, n)...)
		for ci, c := range req.Columns {
			col := rec.Column(ci)
			if col.Len() != n || col.NullN() != 0 {
				t.Fatalf("column %s: %d values, %d nulls in a batch of %d rows", c, col.Len(), col.NullN(), n)
			}
			if vo, ok := col.(interface{ ValueOffset(int) int }); ok && c != routing.ColumnPartition && (col.Data().Offset() != 0 || vo.ValueOffset(0) != 0) {
				// The IPC writer would copy the offsets of an array not based at zero.
				t.Fatalf("column %s: array offset %d, first value offset %d, want both 0", c, col.Data().Offset(), vo.ValueOffset(0))
			}
			for i := 0; i < n; i++ {
				o := &out.recs[base+i]
				switch c {
				case routing.ColumnPartition:
					o.PartitionKey = []byte(col.(*array.String).Value(i))
					varBytes += len(o.PartitionKey)
				case routing.ColumnTimestamp:
					o.EventTime = col.(*array.Timestamp).Value(i).ToTime(arrow.Nanosecond)
				case routing.ColumnID:
					o.SortKey = []byte(col.(*array.String).Value(i))
					varBytes += len(o.SortKey)
				case routing.ColumnValue:
					o.Value = bytes.Clone(col.(*array.Binary).Value(i))
					varBytes += len(o.Value)
				}
			}
		}
		if n > 1 && varBytes > routing.MaxBatchBytes {
			t.Fatalf("batch of %d rows holds %d bytes of variable-width data", n, varBytes)
		}
	}
	out.err = br.Err()
	return out
}

// project keeps the fields of recs that cols select (the others are zeroed).
func project(recs []routing.Record, cols []routing.Column) []routing.Record {
	out := make([]routing.Record, len(recs))
	for i := range recs {
		for _, c := range cols {
			switch c {
			case routing.ColumnPartition:
				out[i].PartitionKey = recs[i].PartitionKey
			case routing.ColumnTimestamp:
				out[i].EventTime = recs[i].EventTime.UTC()
			case routing.ColumnID:
				out[i].SortKey = recs[i].SortKey
			case routing.ColumnValue:
				out[i].Value = recs[i].Value
			}
		}
	}
	return out
}

// sameProjected compares records field by field, nil and empty byte slices being equal.
func sameProjected(t *testing.T, what string, got, want []routing.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.PartitionKey, w.PartitionKey) || !g.EventTime.Equal(w.EventTime) ||
			!bytes.Equal(g.SortKey, w.SortKey) || !bytes.Equal(g.Value, w.Value) {
			t.Fatalf("%s: row %d: got {%q %v %q %x}, want {%q %v %q %x}", what, i,
				g.PartitionKey, g.EventTime, g.SortKey, g.Value, w.PartitionKey, w.EventTime, w.SortKey, w.Value)
		}
	}
}

// requireSorted checks that recs follow (event_time, sort_key) order, descending when desc.
func requireSorted(t *testing.T, what string, recs []routing.Record, desc bool) {
	t.Helper()
	for i := 1; i < len(recs); i++ {
		c := routing.Compare(recs[i-1].EventTime, recs[i-1].SortKey, recs[i].EventTime, recs[i].SortKey)
		if (!desc && c > 0) || (desc && c < 0) {
			t.Fatalf("%s: rows %d and %d out of order", what, i-1, i)
		}
	}
}

// allColumnLists returns every ordered list of distinct columns (65, the empty one included).
func allColumnLists() [][]routing.Column {
	var out [][]routing.Column
	var rec func(prefix []routing.Column)
	rec = func(prefix []routing.Column) {
		out = append(out, slices.Clone(prefix))
		for _, c := range routing.AllColumns {
			if !slices.Contains(prefix, c) {
				rec(append(prefix, c))
			}
		}
	}
	rec(nil)
	return out
}

// randomColumns returns a random ordered list of distinct columns.
func randomColumns(rng *rand.Rand) []routing.Column {
	cols := slices.Clone(routing.AllColumns)
	rng.Shuffle(len(cols), func(i, j int) { cols[i], cols[j] = cols[j], cols[i] })
	return cols[:rng.IntN(len(cols)+1)]
}

// randomLimit picks a limit: none, 0, 1, a page or row-group boundary, more than the rows, or
// anything in between.
func randomLimit(rng *rand.Rand, rows int, boundaries ...int) int64 {
	switch k := rng.IntN(8); k {
	case 0, 1:
		return -1
	case 2:
		return 0
	case 3:
		return 1
	case 4:
		if len(boundaries) > 0 {
			return int64(boundaries[rng.IntN(len(boundaries))])
		}
	case 5:
		return int64(rows + 1 + rng.IntN(10))
	}
	return int64(1 + rng.IntN(rows+1))
}

// readReference reads the same rows through Read, the independent reference.
func readReference(t *testing.T, ctx context.Context, r *Reader, key string, b routing.BucketID, req routing.BatchRequest) []routing.Record {
	t.Helper()
	if req.Limit == 0 {
		return nil
	}
	limit := 1 << 30
	if req.Limit > 0 {
		limit = int(min(req.Limit, 1<<30))
	}
	recs, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: req.Range, Desc: req.Desc, Limit: limit})
	if err != nil {
		t.Fatalf("Read(%v): %v", req, err)
	}
	return recs
}

func init() { poisonTails = true }

// TestReadBatchesMatchesRead compares ReadBatches with Read over many requests — ranges
// (whole bucket, inside a page, across row groups, empty, outside), both directions, limits
// (none, 0, 1, page and row-group boundaries, more than the rows) and column lists (random,
// and every one of the 65 for some requests) — for Parquet layouts (several row groups and
// pages, one group, the defaults, a payload small enough to arrive with the footer, spans cut
// inside row groups, VerifyFully) and JSON.
func TestReadBatchesMatchesRead(t *testing.T) {
	t.Parallel()
	type layout struct {
		name     string
		format   Format
		rows     int // rows per row group
		page     int // page buffer bytes
		opts     ReaderOptions
		requests int
	}
	layouts := []layout{
		{"parquet-small-groups-small-pages", FormatParquet, 97, 256, ReaderOptions{TailBytes: 1024, CoalesceGapBytes: 64}, 160},
		{"parquet-small-spans", FormatParquet, 300, 256, ReaderOptions{TailBytes: 1024, BatchSpanRows: 40}, 160},
		{"parquet-one-group", FormatParquet, 1 << 20, 1024, ReaderOptions{TailBytes: 1024}, 80},
		{"parquet-default", FormatParquet, 0, 0, ReaderOptions{TailBytes: 1024}, 80},
		{"parquet-whole-with-footer", FormatParquet, 200, 512, ReaderOptions{TailBytes: 1 << 20}, 80},
		// Footers never cached: each read's tail (the whole payload) goes back to the tail
		// free lists when it ends, poisoned (poisonTails), and the next read takes it.
		{"parquet-whole-uncached", FormatParquet, 200, 512, ReaderOptions{TailBytes: 1 << 20, FooterCacheEntries: -1}, 80},
		{"parquet-verify-fully", FormatParquet, 64, 512, ReaderOptions{VerifyFully: true}, 60},
		{"json", FormatJSON, 0, 0, ReaderOptions{}, 60},
	}
	for i, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(77, uint64(i)))
			bkt := openTestBucket(t)
			w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: l.format, RowGroupRows: l.rows, PageBufferBytes: l.page})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bkt, l.opts)
			if err != nil {
				t.Fatal(err)
			}
			b := testBucket("chan-é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
			recs := genRecords(rng, b, 2500)
			key, err := w.Put(ctx, b, 3, recs)
			if err != nil {
				t.Fatal(err)
			}
			times := eventTimes(recs)
			boundaries := []int{32, 64, 97, 300}
			lists := allColumnLists()
			for k := 0; k < l.requests; k++ {
				req := routing.BatchRequest{
					Range:   randomRange(rng, b, times),
					Desc:    rng.IntN(2) == 0,
					Limit:   randomLimit(rng, len(recs), boundaries...),
					Columns: randomColumns(rng),
				}
				if k%5 == 0 {
					req.Range = b.Range()
				}
				want := readReference(t, ctx, r, key, b, req)
				check := func(req routing.BatchRequest) {
					what := fmt.Sprintf("request %d %+v", k, req)
					got := readBatches(t, ctx, r, key, b, req)
					if got.err != nil {
						t.Fatalf("%s: %v", what, got.err)
					}
					if !got.ordered {
						t.Fatalf("%s: reader of an envelope payload is not ordered", what)
					}
					sameProjected(t, what, got.recs, project(want, req.Columns))
				}
				check(req)
				if k%60 == 0 {
					for _, cols := range lists {
						req.Columns = cols
						check(req)
					}
				}
			}
		})
	}
}

// TestReadBatchesValidation gives ReadBatches the archives of TestValidationFailures' checks
// that a partial read detects and requires each to surface as its own sentinel: manifest
// failures from ReadBatches itself, decoded-row failures from Err.
func TestReadBatchesValidation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("general", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	other := testBucket("other", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	recs := []routing.Record{
		{PartitionKey: []byte("general"), EventTime: b.Start, SortKey: []byte("a"), Value: []byte("1")},
		{PartitionKey: []byte("general"), EventTime: b.Start.Add(time.Hour), SortKey: []byte("b"), Value: []byte("2")},
		{PartitionKey: []byte("general"), EventTime: b.Start.Add(2 * time.Hour), SortKey: []byte("c"), Value: []byte("3")},
	}
	unsorted := []routing.Record{recs[1], recs[0], recs[2]}
	sameTimeUnsorted := slices.Clone(recs)
	sameTimeUnsorted[1].EventTime, sameTimeUnsorted[1].SortKey = recs[0].EventTime, []byte("0")
	outsideTime := slices.Clone(recs)
	outsideTime[2].EventTime = b.End
	outsidePK := slices.Clone(recs)
	outsidePK[1].PartitionKey = []byte("intruder")
	all := routing.AllColumns
	partial := routing.TimeRange{Start: b.Start, End: b.Start.Add(90 * time.Minute)}

	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			bkt := openTestBucket(t)
			// A tiny tail keeps Parquet reads partial (no digest check).
			r, err := NewReader(bkt, ReaderOptions{TailBytes: 16})
			if err != nil {
				t.Fatal(err)
			}
			good := encodeFormat(t, f, recs, 2)
			goodKey := publishRaw(t, bkt, b, f, good, len(recs), nil)
			flipped := slices.Clone(good)
			flipped[len(flipped)/2] ^= 0x55
			cases := []struct {
				name string
				key  string
				b    routing.BucketID
				rng  routing.TimeRange
				cols []routing.Column
				want error
			}{
				{"wrong bucket", goodKey, other, b.Range(), all, ErrBucketMismatch},
				{"wrong version", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.Version = 3 }), b, b.Range(), all, ErrManifestVersion},
				{"wrong payload length", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.PayloadBytes++ }), b, partial, all, ErrPayloadLength},
				{"wrong record count", publishRaw(t, bkt, b, f, good, 4, nil), b, partial, all, ErrRecordCount},
				{"unsorted records", publishRaw(t, bkt, b, f, encodeFormat(t, f, unsorted, 3), 3, nil), b, b.Range(), nil, ErrRecordsUnsorted},
				{"unsorted keys", publishRaw(t, bkt, b, f, encodeFormat(t, f, sameTimeUnsorted, 3), 3, nil), b, b.Range(), []routing.Column{routing.ColumnID}, ErrRecordsUnsorted},
				{"record after the bucket", publishRaw(t, bkt, b, f, encodeFormat(t, f, outsideTime, 3), 3, nil), b, partial, nil, ErrRecordOutsideBucket},
				{"record of another partition", publishRaw(t, bkt, b, f, encodeFormat(t, f, outsidePK, 3), 3, nil), b, b.Range(), all, ErrRecordOutsideBucket},
			}
			if f == FormatJSON {
				cases = append(cases, struct {
					name string
					key  string
					b    routing.BucketID
					rng  routing.TimeRange
					cols []routing.Column
					want error
				}{"wrong payload digest", publishRaw(t, bkt, b, f, flipped, 3, func(m *Manifest) { m.SHA256 = sha256Hex(good) }), b, partial, all, ErrPayloadDigest})
			}
			for _, c := range cases {
				for _, desc := range []bool{false, true} {
					got := readBatches(t, ctx, r, c.key, c.b, routing.BatchRequest{Range: c.rng, Columns: c.cols, Desc: desc, Limit: -1})
					requireOnly(t, fmt.Sprintf("%s (desc %v)", c.name, desc), got.err, c.want, c.b)
				}
			}
			// Without the partition column a Parquet read does not decode partition keys.
			pkKey := publishRaw(t, bkt, b, f, encodeFormat(t, f, outsidePK, 3), 3, nil)
			got := readBatches(t, ctx, r, pkKey, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
			if f == FormatParquet && (got.err != nil || len(got.recs) != 3) {
				t.Fatalf("read without the partition column: %d rows, %v", len(got.recs), got.err)
			}
			// The request itself: repeated columns are refused.
			_, err = r.ReadBatches(ctx, goodKey, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID, routing.ColumnID}, Limit: -1})
			if err == nil {
				t.Fatal("a request repeating a column was accepted")
			}
		})
	}
}

// TestReadBatchesUTF8 checks that keys read as utf8 must be valid UTF-8 (ErrKeyNotUTF8, as the
// hot stores' scans fail) while values may hold any bytes.
func TestReadBatchesUTF8(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			bkt := openTestBucket(t)
			r, _ := NewReader(bkt, ReaderOptions{TailBytes: 16})
			b := testBucket("general", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
			recs := []routing.Record{
				{PartitionKey: []byte("general"), EventTime: b.Start, SortKey: []byte("a"), Value: []byte{0xff, 0xfe}},
				{PartitionKey: []byte("general"), EventTime: b.Start.Add(time.Hour), SortKey: []byte{'b', 0xff}, Value: []byte("2")},
			}
			key := publishRaw(t, bkt, b, f, encodeFormat(t, f, recs, 2), 2, nil)
			got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnValue, routing.ColumnTimestamp}, Limit: -1})
			if got.err != nil || len(got.recs) != 2 {
				t.Fatalf("values: %d rows, %v", len(got.recs), got.err)
			}
			got = readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID}, Limit: -1})
			requireOnly(t, "invalid sort key", got.err, ErrKeyNotUTF8, b)
			got = readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnID}, Limit: 1})
			if got.err != nil || len(got.recs) != 1 {
				t.Fatalf("valid first key: %d rows, %v", len(got.recs), got.err)
			}

			bad := testBucket("bad-\xff", routing.CalendarYearUTC, b.Start)
			badRecs := slices.Clone(recs[:1])
			badRecs[0].PartitionKey = bad.PartitionKey
			badKey := publishRaw(t, bkt, bad, f, encodeFormat(t, f, badRecs, 2), 1, nil)
			got = readBatches(t, ctx, r, badKey, bad, routing.BatchRequest{Range: bad.Range(), Columns: []routing.Column{routing.ColumnPartition}, Limit: -1})
			requireOnly(t, "invalid partition key", got.err, ErrKeyNotUTF8, bad)
			got = readBatches(t, ctx, r, badKey, bad, routing.BatchRequest{Range: bad.Range(), Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
			if got.err != nil || len(got.recs) != 1 {
				t.Fatalf("invalid partition key not read: %d rows, %v", len(got.recs), got.err)
			}
		})
	}
}

// TestReadBatchesLimitsAndRelease checks the batch limits with large values and many rows, the
// statistics, and that every buffer is returned after an early Release and after the context
// is cancelled mid-stream, in both directions.
func TestReadBatchesLimitsAndRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := make([]routing.Record, 30000)
	for i := range recs {
		v := []byte("v")
		switch {
		case i%1000 == 7:
			v = bytes.Repeat([]byte{byte(i)}, 300<<10) // 300 KiB: a few per batch
		case i == 20000:
			v = bytes.Repeat([]byte{1}, 5<<19) // 2.5 MiB: alone in its batch
		}
		recs[i] = routing.Record{PartitionKey: []byte("general"), EventTime: b.Start.Add(time.Duration(i) * time.Minute), SortKey: fmt.Appendf(nil, "k%06d", i), Value: v}
	}
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 5000})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 4096, BatchSpanRows: 3000})
	for _, desc := range []bool{false, true} {
		st := &routing.ReadStats{}
		req := routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: desc, Limit: -1}
		got := readBatches(t, routing.WithReadStats(ctx, st), r, key, b, req)
		if got.err != nil {
			t.Fatal(got.err)
		}
		want := slices.Clone(recs)
		if desc {
			slices.Reverse(want)
		}
		sameProjected(t, "large values", got.recs, want)
		if got.batches < len(recs)/routing.MaxBatchRows+2 {
			t.Fatalf("%d batches", got.batches)
		}
		if st.ArchiveRows.Load() != int64(len(recs)) {
			t.Fatalf("ArchiveRows = %d, want %d", st.ArchiveRows.Load(), len(recs))
		}
	}

	for _, desc := range []bool{false, true} {
		// Early release after one batch.
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		req := routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: desc, Limit: -1, Alloc: mem}
		br, err := r.ReadBatches(ctx, key, b, req)
		if err != nil {
			t.Fatal(err)
		}
		if !br.Next() {
			t.Fatal(br.Err())
		}
		br.RecordBatch().Retain()
		kept := br.RecordBatch()
		br.Release()
		kept.Release()
		mem.AssertSize(t, 0)

		// Cancellation mid-stream.
		cctx, cancel := context.WithCancel(ctx)
		br, err = r.ReadBatches(cctx, key, b, req)
		if err != nil {
			t.Fatal(err)
		}
		if !br.Next() || !br.Next() {
			t.Fatal(br.Err())
		}
		cancel()
		if br.Next() {
			t.Fatal("Next after cancellation returned a batch")
		}
		if !errors.Is(br.Err(), context.Canceled) {
			t.Fatalf("Err after cancellation = %v", br.Err())
		}
		br.Release()
		mem.AssertSize(t, 0)
	}

	// A cancelled context fails the call or the first Next.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	got := readBatches(t, cctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: -1})
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("cancelled read: %v", got.err)
	}
}

// TestReadBatchesIO checks what ReadBatches fetches once manifest and footer are cached: a
// range inside one page fetches that page of the requested columns only, a read that does not
// ask for values fetches far fewer bytes, and a small limit fetches one row group.
func TestReadBatchesIO(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := make([]routing.Record, 1000)
	rng := newRand(3)
	for i := range recs {
		v := make([]byte, 120) // incompressible
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		recs[i] = routing.Record{
			PartitionKey: []byte("general"),
			EventTime:    b.Start.Add(time.Duration(i) * time.Minute),
			SortKey:      fmt.Appendf(nil, "k%04d", i),
			Value:        v,
		}
	}
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 100, PageBufferBytes: 256})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024, CoalesceGapBytes: 1})
	if _, err := countRecords(ctx, r, key, b, routing.TimeRange{Start: b.Start, End: recs[1].EventTime}); err != nil {
		t.Fatal(err) // warms the manifest and footer caches
	}
	read := func(req routing.BatchRequest) (*routing.ReadStats, int) {
		t.Helper()
		st := &routing.ReadStats{}
		got := readBatches(t, routing.WithReadStats(ctx, st), r, key, b, req)
		if got.err != nil {
			t.Fatal(got.err)
		}
		if st.ArchiveRows.Load() != int64(len(got.recs)) {
			t.Fatalf("ArchiveRows = %d for %d rows", st.ArchiveRows.Load(), len(got.recs))
		}
		return st, len(got.recs)
	}
	inPage := routing.TimeRange{Start: recs[505].EventTime, End: recs[510].EventTime}
	ts, n := read(routing.BatchRequest{Range: inPage, Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
	if n != 5 || ts.ObjectReads.Load() > 2 {
		t.Fatalf("timestamps inside one page: %d rows, %d object reads", n, ts.ObjectReads.Load())
	}
	all, n := read(routing.BatchRequest{Range: inPage, Columns: routing.AllColumns, Limit: -1})
	if n != 5 || all.ObjectReads.Load() > 8 {
		t.Fatalf("all columns inside one page: %d rows, %d object reads", n, all.ObjectReads.Load())
	}
	whole, _ := read(routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp, routing.ColumnID}, Limit: -1})
	withValues, _ := read(routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp, routing.ColumnValue}, Limit: -1})
	if 3*whole.BytesRead.Load() > withValues.BytesRead.Load() {
		t.Fatalf("without values %d bytes fetched, with values %d", whole.BytesRead.Load(), withValues.BytesRead.Load())
	}
	for _, desc := range []bool{false, true} {
		first, n := read(routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: desc, Limit: 3})
		if n != 3 || 5*first.BytesRead.Load() > withValues.BytesRead.Load() {
			t.Fatalf("limit 3 (desc %v): %d rows, %d bytes fetched of %d", desc, n, first.BytesRead.Load(), withValues.BytesRead.Load())
		}
	}
	t.Logf("inside a page: %d reads, %d bytes (timestamps), %d reads, %d bytes (all); whole bucket: %d bytes (timestamp, id), %d bytes (timestamp, value)",
		ts.ObjectReads.Load(), ts.BytesRead.Load(), all.ObjectReads.Load(), all.BytesRead.Load(), whole.BytesRead.Load(), withValues.BytesRead.Load())
}

// TestReadBatchesNoGoroutineLeft releases readers mid-stream, with a background fetch likely
// in flight, and after cancellation, and requires the goroutine count to come back. It is not
// parallel, so no other test's goroutines are counted.
func TestReadBatchesNoGoroutineLeft(t *testing.T) {
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(4), b, 3000)
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 200, PageBufferBytes: 512})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	before := runtime.NumGoroutine()
	for i := range 20 {
		cctx, cancel := context.WithCancel(ctx)
		br, err := r.ReadBatches(cctx, key, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: i%2 == 1, Limit: -1})
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < i%4 && br.Next(); k++ {
		}
		if i%3 == 0 {
			cancel()
			br.Next()
		}
		br.Release()
		cancel()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the reads, %d before", n, before)
	}
}

// TestReadBatchesManifestRows: a whole-bucket request for at most the partition column with
// ManifestRows answers the manifest's record count (the partition as its constant) without
// fetching the payload once its check is trusted; any other request ignores the flag.
func TestReadBatchesManifestRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("chan-é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(9), b, 20000)
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 3000})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	for _, cols := range [][]routing.Column{nil, {routing.ColumnPartition}} {
		full := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Limit: -1})
		st := &routing.ReadStats{}
		got := readBatches(t, routing.WithReadStats(ctx, st), r, key, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Limit: -1, ManifestRows: true})
		if got.err != nil || full.err != nil || len(got.recs) != len(recs) || len(full.recs) != len(recs) {
			t.Fatalf("columns %v: %d rows (%v), decoded %d (%v), want %d", cols, len(got.recs), got.err, len(full.recs), full.err, len(recs))
		}
		for i := range got.recs {
			if string(got.recs[i].PartitionKey) != string(full.recs[i].PartitionKey) {
				t.Fatalf("row %d: partition %q, decoded %q", i, got.recs[i].PartitionKey, full.recs[i].PartitionKey)
			}
		}
		if n := st.ObjectReads.Load(); n != 0 {
			t.Fatalf("columns %v: %d object reads, want none (manifest and payload check cached)", cols, n)
		}
	}
	// A partial range or another column reads the payload as always.
	st := &routing.ReadStats{}
	half := routing.TimeRange{Start: b.Start, End: recs[len(recs)/2].EventTime}
	got := readBatches(t, routing.WithReadStats(ctx, st), r, key, b, routing.BatchRequest{Range: half, Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1, ManifestRows: true})
	if got.err != nil || len(got.recs) == 0 || len(got.recs) >= len(recs) || st.ObjectReads.Load() == 0 {
		t.Fatalf("partial read: %d rows, %d object reads, %v", len(got.recs), st.ObjectReads.Load(), got.err)
	}
}

// TestBatchSchemaShared checks batchSchema against routing's BatchSchema for every ordered
// selection of the four columns (and the empty one), and that reads of the same columns share
// one schema while different orders get their own.
func TestBatchSchemaShared(t *testing.T) {
	sels := allColumnLists()
	if len(sels) != 65 {
		t.Fatalf("%d selections, want 65", len(sels))
	}
	seen := map[*arrow.Schema]string{}
	for _, cols := range sels {
		got, want := batchSchema(cols), batchSchemaDef.BatchSchema(cols)
		if !got.Equal(want) {
			t.Fatalf("%v: schema %v, want %v", cols, got, want)
		}
		if again := batchSchema(slices.Clone(cols)); again != got {
			t.Fatalf("%v: a second read got another schema", cols)
		}
		if prev, dup := seen[got]; dup {
			t.Fatalf("%v shares its schema with %s", cols, prev)
		}
		seen[got] = fmt.Sprint(cols)
	}
	// A list no read can ask for (a repeated column) still gets its schema.
	cols := []routing.Column{routing.ColumnValue, routing.ColumnValue, routing.ColumnID, routing.ColumnID, routing.ColumnPartition}
	if got, want := batchSchema(cols), batchSchemaDef.BatchSchema(cols); !got.Equal(want) {
		t.Fatalf("%v: schema %v, want %v", cols, got, want)
	}
}
