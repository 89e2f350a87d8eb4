package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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

// TestReadBatchesKeyOrderAcrossPages: in a file of few distinct event times written with small
// pages, a pair of adjacent sort keys out of order anywhere — inside a page, across a page
// boundary, across the boundary of the spans a read decodes — fails a read of the id column
// with ErrRecordsUnsorted, in both directions, while the sorted file reads whole.
func TestReadBatchesKeyOrderAcrossPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("keys", routing.CalendarMonthUTC, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	const n = 300
	recs := make([]routing.Record, n)
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
