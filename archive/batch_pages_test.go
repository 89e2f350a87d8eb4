package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/parquet-go/parquet-go"

	"github.com/flightsrv/flightsrv/routing"
)

// TestReadBatchesCorruptPages flips single bytes all over the data pages of an envelope (page
// headers, levels, compressed values) and reads the whole bucket with every column, in both
// directions, with the page decoder ReadBatches uses for the envelope. Each read must either
// fail with a payload sentinel — never panic, never leak a buffer (readBatches checks the
// allocator) — or, when the flipped byte does not matter (page statistics, say), return
// exactly the records written. The page CRCs the writer records catch every flip of a page
// body.
func TestReadBatchesCorruptPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("corrupt", routing.CalendarMonthUTC, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(31), b, 400)
	good, err := encodeParquetPayload(recs, 150, 512)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	// The data area: from the first column chunk to the end of the last.
	lo, hi := int64(len(good)), int64(0)
	for _, rg := range f.Metadata().RowGroups {
		for i := range rg.Columns {
			s, e := chunkBounds(&rg.Columns[i])
			lo, hi = min(lo, s), max(hi, e)
		}
	}
	if lo >= hi {
		t.Fatal("no data pages")
	}
	bkt := openTestBucket(t)
	r, err := NewReader(bkt, ReaderOptions{TailBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	allowed := []error{ErrPayloadDecode, ErrPayloadSchema, ErrRecordOutsideBucket, ErrRecordsUnsorted, ErrKeyNotUTF8}
	rng := newRand(32)
	const flips = 120
	failed := 0
	for k := 0; k < flips; k++ {
		pos := lo + rng.Int64N(hi-lo)
		bad := bytes.Clone(good)
		bad[pos] ^= byte(1 + rng.IntN(255))
		key := publishRaw(t, bkt, b, FormatParquet, bad, len(recs), nil)
		req := routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: k%2 == 1, Limit: -1}
		got := readBatches(t, ctx, r, key, b, req)
		what := fmt.Sprintf("byte %d of %d flipped", pos, len(good))
		if got.err != nil {
			ok := false
			for _, e := range allowed {
				ok = ok || errors.Is(got.err, e)
			}
			if !ok {
				t.Fatalf("%s: error %v, want a payload sentinel", what, got.err)
			}
			failed++
			continue
		}
		want := project(recs, req.Columns)
		if req.Desc {
			want = reversedRecords(want)
		}
		sameProjected(t, what, got.recs, want)
	}
	t.Logf("%d of %d single-byte corruptions detected, the others read correctly", failed, flips)
	if failed < flips/2 {
		t.Fatalf("only %d of %d corruptions detected", failed, flips)
	}
}

// reversedRecords returns recs in reverse order, as a new slice.
func reversedRecords(recs []routing.Record) []routing.Record {
	out := make([]routing.Record, len(recs))
	for i, r := range recs {
		out[len(recs)-1-i] = r
	}
	return out
}

// keysFixture is the reader and records of the sort-key order tests: 300 records of the month
// bucket starting at month, event times shared by runs of 100 (so that only the keys order
// rows), and a reader that decodes spans of 16 rows from a tail of 16 bytes.
func keysFixture(t *testing.T, month time.Time) (routing.BucketID, []routing.Record, *blob.Bucket, *Reader) {
	t.Helper()
	b := testBucket("keys", routing.CalendarMonthUTC, month)
	recs := make([]routing.Record, 300)
	for i := range recs {
		recs[i] = routing.Record{
			PartitionKey: []byte("keys"),
			EventTime:    b.Start.Add(time.Duration(i/100) * time.Hour),
			SortKey:      fmt.Appendf(nil, "k%05d", i),
			Value:        []byte("v"),
		}
	}
	bkt := openTestBucket(t)
	r, err := NewReader(bkt, ReaderOptions{TailBytes: 16, BatchSpanRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	return b, recs, bkt, r
}

// testFooter returns the (cached) footer of the Parquet payload of manifest key and its range
// reader, failing tb on any error.
func testFooter(tb testing.TB, r *Reader, key string, b routing.BucketID) (*footer, *rangeReader) {
	tb.Helper()
	ctx := context.Background()
	c := &ioCounter{}
	m, err := r.manifest(ctx, key, b, c)
	if err != nil {
		tb.Fatal(err)
	}
	ft, rr, err := r.parquetFooter(ctx, m, c)
	if err != nil {
		tb.Fatal(err)
	}
	return ft, rr
}

// TestReadBatchesKeyOrderAcrossPages: in a file of few distinct event times written with small
// pages, a pair of adjacent sort keys out of order anywhere — inside a page, across a page
// boundary, across the boundary of the spans a read decodes — fails a read of the id column
// with ErrRecordsUnsorted, in both directions, while the sorted file reads whole.
func TestReadBatchesKeyOrderAcrossPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, recs, bkt, r := keysFixture(t, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	n := len(recs)
	cols := []routing.Column{routing.ColumnID}
	payload, err := encodeParquetPayload(recs, 1000, 256)
	if err != nil {
		t.Fatal(err)
	}
	key := publishRaw(t, bkt, b, FormatParquet, payload, n, nil)
	for _, desc := range []bool{false, true} {
		got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Desc: desc, Limit: -1})
		if got.err != nil || len(got.recs) != n {
			t.Fatalf("sorted file (desc %v): %d rows, %v", desc, len(got.recs), got.err)
		}
	}
	for i := 0; i+1 < n; i += 7 {
		if i%100 == 99 {
			continue // the next row has a later time: swapping keys there keeps the order
		}
		bad := make([]routing.Record, n)
		copy(bad, recs)
		bad[i].SortKey, bad[i+1].SortKey = bad[i+1].SortKey, bad[i].SortKey
		payload, err := encodeParquetPayload(bad, 1000, 256)
		if err != nil {
			t.Fatal(err)
		}
		key := publishRaw(t, bkt, b, FormatParquet, payload, n, nil)
		for _, desc := range []bool{false, true} {
			got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Desc: desc, Limit: -1})
			requireOnly(t, fmt.Sprintf("keys %d and %d swapped (desc %v)", i, i+1, desc), got.err, ErrRecordsUnsorted, b)
		}
	}
}

// TestReadBatchesKeysCheckedOnce: the sort keys of a payload are compared until one read has
// compared every row in file order (and validated every key as UTF-8); later reads of that
// payload (same footer) skip both. A read with a limit, of part of the range, in descending
// order or without the id column does not count, and a file whose keys are out of order, or
// not UTF-8, is refused by every read and never flagged. Flagging such a file's footer by
// hand shows that a flagged read no longer compares or validates keys.
func TestReadBatchesKeysCheckedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, recs, bkt, r := keysFixture(t, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	n := len(recs)
	footerOf := func(key string) *footer {
		t.Helper()
		ft, _ := testFooter(t, r, key, b)
		return ft
	}
	publish := func(recs []routing.Record) string {
		payload, err := encodeParquetPayload(recs, 1000, 256)
		if err != nil {
			t.Fatal(err)
		}
		return publishRaw(t, bkt, b, FormatParquet, payload, n, nil)
	}
	ids := []routing.Column{routing.ColumnTimestamp, routing.ColumnID}
	key := publish(recs)
	ft := footerOf(key)
	part := routing.TimeRange{Start: b.Start, End: b.Start.Add(90 * time.Minute)}
	for _, req := range []routing.BatchRequest{
		{Range: b.Range(), Columns: ids, Limit: int64(n - 1)},
		{Range: part, Columns: ids, Limit: -1},
		{Range: b.Range(), Columns: ids, Desc: true, Limit: -1},
		{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp, routing.ColumnValue}, Limit: -1},
	} {
		got := readBatches(t, ctx, r, key, b, req)
		if got.err != nil {
			t.Fatalf("%+v: %v", req, got.err)
		}
		if ft.keysChecked.Load() {
			t.Fatalf("keys marked checked after a read that did not compare them all: %+v", req)
		}
	}
	for i := range 2 {
		got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: ids, Limit: -1})
		if got.err != nil || len(got.recs) != n {
			t.Fatalf("whole read %d: %d rows, %v", i, len(got.recs), got.err)
		}
		for j, rec := range got.recs {
			if string(rec.SortKey) != string(recs[j].SortKey) {
				t.Fatalf("whole read %d, row %d: key %q, want %q", i, j, rec.SortKey, recs[j].SortKey)
			}
		}
		if !ft.keysChecked.Load() {
			t.Fatalf("keys not marked checked after whole read %d", i)
		}
	}

	// A file with two keys out of order, or a key that is not UTF-8, fails every read, so it
	// is never flagged; flagged by hand, it reads without its keys compared or validated.
	for _, c := range []struct {
		what   string
		breaks func([]routing.Record)
		want   error
	}{
		{"keys 150 and 151 swapped", func(rs []routing.Record) { rs[150].SortKey, rs[151].SortKey = rs[151].SortKey, rs[150].SortKey }, ErrRecordsUnsorted},
		{"key 200 not UTF-8", func(rs []routing.Record) { rs[200].SortKey = []byte("k00200\xff") }, ErrKeyNotUTF8},
	} {
		broken := slices.Clone(recs)
		c.breaks(broken)
		badKey := publish(broken)
		for range 2 {
			got := readBatches(t, ctx, r, badKey, b, routing.BatchRequest{Range: b.Range(), Columns: ids, Limit: -1})
			requireOnly(t, c.what, got.err, c.want, b)
		}
		bft := footerOf(badKey)
		if bft.keysChecked.Load() {
			t.Fatalf("%s: marked checked", c.what)
		}
		bft.keysChecked.Store(true)
		if got := readBatches(t, ctx, r, badKey, b, routing.BatchRequest{Range: b.Range(), Columns: ids, Limit: -1}); got.err != nil {
			t.Fatalf("%s: a read of its footer marked checked still checked its keys: %v", c.what, got.err)
		}
	}
}
