package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// ConnGauge is implemented by the stores given to the suite (typically a test wrapper around
// the adapter) to report how many pooled connections are in use: the reads pool of SQLite,
// the acquired connections of a pgx pool. The batch-scan tests use it to check that a reader
// returns its connection when its rows end, when it fails and when it is released early.
type ConnGauge interface {
	ConnsInUse() int
}

// The batch-scan tests (routing.HotBatchScanner), the stores' one read path. Expected rows come
// from the records the test appended (expect).

func scanner(t *testing.T, s Store) routing.HotBatchScanner {
	t.Helper()
	hs, ok := s.(routing.HotBatchScanner)
	if !ok {
		t.Fatalf("%T does not implement routing.HotBatchScanner", s)
	}
	return hs
}

// scanResult is one ScanRange read to its end: the route, the rows (only the requested
// columns filled in) and each batch's row count.
type scanResult struct {
	route   routing.Route
	archive bool // the reader was nil
	recs    []routing.Record
	batches []int64
	err     error // from the reader
}

// runScan calls ScanRange and reads the reader to its end with a checked allocator, checking
// every batch (schema, types, no nulls, never empty, within the batch limits) and that the
// allocator and the store's connections are back to zero after Release. A ScanRange error is
// fatal unless allowErr, when it is returned as the result's err.
func runScan(t *testing.T, s Store, b routing.BucketID, req routing.BatchRequest, allowErr bool) scanResult {
	t.Helper()
	return runScanCtx(t, bg, s, b, req, allowErr)
}

func runScanCtx(t *testing.T, ctx context.Context, s Store, b routing.BucketID, req routing.BatchRequest, allowErr bool) scanResult {
	t.Helper()
	mem := memory.NewCheckedAllocator(dirtyAllocator{memory.NewGoAllocator()})
	req.Alloc = mem
	route, r, err := scanner(t, s).ScanRange(ctx, b, req)
	if err != nil {
		if !allowErr {
			t.Fatalf("ScanRange(%v): %v", req.Columns, err)
		}
		wantConnsReleased(t, s, "after a failed ScanRange")
		mem.AssertSize(t, 0)
		return scanResult{err: err}
	}
	res := scanResult{route: route}
	if r == nil {
		res.archive = true
		wantConnsReleased(t, s, "after an archived route")
		return res
	}
	if !r.Ordered() {
		t.Errorf("hot reader is not ordered")
	}
	checkSchema(t, r.Schema(), req.Columns)
	for r.Next() {
		batch := r.RecordBatch()
		if !batch.Schema().Equal(r.Schema()) {
			t.Fatalf("batch schema %s differs from the reader's %s", batch.Schema(), r.Schema())
		}
		res.recs = append(res.recs, batchRecords(t, batch, req.Columns, b.PartitionKey)...)
		res.batches = append(res.batches, batch.NumRows())
	}
	res.err = r.Err()
	if res.err != nil && !allowErr {
		t.Fatalf("reader(%v): %v", req.Columns, res.err)
	}
	if r.Next() {
		t.Fatalf("Next after the end returned a batch")
	}
	r.Release()
	wantConnsReleased(t, s, "after the reader's release")
	mem.AssertSize(t, 0)
	return res
}

// dirtyAllocator hands out memory filled with garbage, as allocators other than Go's may:
// readers must not rely on zeroed buffers.
type dirtyAllocator struct{ memory.Allocator }

func (d dirtyAllocator) Allocate(size int) []byte {
	b := d.Allocator.Allocate(size)
	for i := range b {
		b[i] = 0xa5
	}
	return b
}

func (d dirtyAllocator) Reallocate(size int, b []byte) []byte {
	old := len(b)
	b = d.Allocator.Reallocate(size, b)
	for i := old; i < len(b); i++ {
		b[i] = 0xa5
	}
	return b
}

// checkSchema checks a reader's schema against routing.TableDef.BatchSchema(cols): the same
// types in order; field names other than the partition column's (the table's own) too.
func checkSchema(t *testing.T, got *arrow.Schema, cols []routing.Column) {
	t.Helper()
	want := routing.TableDef{PartitionColumn: "partition"}.BatchSchema(cols)
	if got.NumFields() != want.NumFields() {
		t.Fatalf("schema %s, want %s", got, want)
	}
	for i, c := range cols {
		g, w := got.Field(i), want.Field(i)
		if !arrow.TypeEqual(g.Type, w.Type) || (c != routing.ColumnPartition && g.Name != w.Name) {
			t.Fatalf("schema field %d is %s, want %s", i, g, w)
		}
	}
}

// batchRecords converts a batch to records holding only the requested columns, checking the
// batch: never empty, at most routing.MaxBatchRows rows, and past its first row at most
// routing.MaxBatchBytes bytes of the selected variable-width columns; no nulls; the partition
// column equal to the bucket's key.
func batchRecords(t *testing.T, batch arrow.RecordBatch, cols []routing.Column, pk []byte) []routing.Record {
	t.Helper()
	n := int(batch.NumRows())
	if n == 0 {
		t.Fatalf("empty batch")
	}
	if n > routing.MaxBatchRows {
		t.Fatalf("batch of %d rows, more than MaxBatchRows", n)
	}
	out := make([]routing.Record, n)
	size := 0
	for ci, c := range cols {
		col := batch.Column(ci)
		if col.Len() != n || col.NullN() != 0 {
			t.Fatalf("column %s: %d values, %d nulls in a batch of %d rows", c, col.Len(), col.NullN(), n)
		}
		switch c {
		case routing.ColumnPartition:
			a := col.(*array.String)
			for i := range out {
				v := []byte(a.Value(i))
				if !bytes.Equal(v, pk) {
					t.Fatalf("partition column holds %q, want the bucket's %q", v, pk)
				}
				out[i].PartitionKey = v
				size += len(v)
			}
		case routing.ColumnTimestamp:
			a := col.(*array.Timestamp)
			for i := range out {
				out[i].EventTime = time.Unix(0, int64(a.Value(i))).UTC()
			}
		case routing.ColumnID:
			a := col.(*array.String)
			for i := range out {
				out[i].SortKey = []byte(a.Value(i))
				size += len(out[i].SortKey)
			}
		case routing.ColumnValue:
			a := col.(*array.Binary)
			for i := range out {
				out[i].Value = slices.Clone(a.Value(i))
				size += len(out[i].Value)
			}
		}
	}
	if n > 1 && size > routing.MaxBatchBytes {
		t.Fatalf("batch of %d rows holds %d bytes, more than MaxBatchBytes", n, size)
	}
	return out
}

// project keeps only the requested columns of recs (a copy).
func project(recs []routing.Record, cols []routing.Column) []routing.Record {
	out := make([]routing.Record, len(recs))
	for i, r := range recs {
		for _, c := range cols {
			switch c {
			case routing.ColumnPartition:
				out[i].PartitionKey = r.PartitionKey
			case routing.ColumnTimestamp:
				out[i].EventTime = r.EventTime
			case routing.ColumnID:
				out[i].SortKey = r.SortKey
			case routing.ColumnValue:
				out[i].Value = r.Value
			}
		}
	}
	return out
}

func sameProjected(t *testing.T, what string, got, want []routing.Record) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		g, w := got[i], want[i]
		ok = g.EventTime.Equal(w.EventTime) && bytes.Equal(g.PartitionKey, w.PartitionKey) &&
			bytes.Equal(g.SortKey, w.SortKey) && bytes.Equal(g.Value, w.Value)
		if !ok {
			t.Errorf("%s: row %d differs:\n got %s\nwant %s", what, i, show(got[i:i+1]), show(want[i:i+1]))
		}
	}
	if !ok {
		t.Fatalf("%s: got %d rows, want %d", what, len(got), len(want))
	}
}

// wantConnsReleased waits (briefly: pools may destroy a connection asynchronously) until the
// store reports no connection in use.
func wantConnsReleased(t *testing.T, s Store, what string) {
	t.Helper()
	g, ok := s.(ConnGauge)
	if !ok {
		t.Fatalf("%T does not implement storetest.ConnGauge", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for g.ConnsInUse() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d connections still in use", what, g.ConnsInUse())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// columnSets is every subset of the columns in table order, including none, plus orders other
// than the table's.
func columnSets() [][]routing.Column {
	var sets [][]routing.Column
	for mask := range 16 {
		var cols []routing.Column
		for i, c := range routing.AllColumns {
			if mask&(1<<i) != 0 {
				cols = append(cols, c)
			}
		}
		sets = append(sets, cols)
	}
	return append(sets,
		[]routing.Column{routing.ColumnValue, routing.ColumnID, routing.ColumnTimestamp, routing.ColumnPartition},
		[]routing.Column{routing.ColumnID, routing.ColumnPartition})
}

// scanFixture appends 2·MaxBatchRows+77 records to a day bucket: event times shared by runs of
// one to four records (ties broken by sort key), sort keys not in insertion order and with
// multi-byte UTF-8, values of 0 to 120 bytes, the bucket's first and last microseconds; and a
// record in each neighbouring day bucket of the partition, at the bucket's edges.
func scanFixture(t *testing.T, s Store, table string) (routing.BucketID, []routing.Record) {
	t.Helper()
	b := dayBucket(table, "chan-ü", "2024-03-10")
	rng := rand.New(rand.NewPCG(5, 8))
	const n = 2*routing.MaxBatchRows + 77
	all := make([]routing.Record, 0, n)
	at := b.Start
	for len(all) < n {
		switch len(all) {
		case 0:
		case n - 1:
			at = b.End.Add(-time.Microsecond)
		default:
			at = at.Add(time.Duration(1+rng.IntN(5000)) * time.Microsecond)
		}
		for range 1 + rng.IntN(4) {
			if len(all) == n {
				break
			}
			id := fmt.Sprintf("id-%05d-ß%d", rng.IntN(100000), len(all))
			all = append(all, rec(b, at, id, strings.Repeat("v", rng.IntN(121))))
		}
	}
	shuffled := slices.Clone(all)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for i := 0; i < len(shuffled); i += 4096 {
		mustAppend(t, s, b, shuffled[i:min(i+4096, len(shuffled))]...)
	}
	before := dayBucket(table, "chan-ü", "2024-03-09")
	mustAppend(t, s, before, rec(before, b.Start.Add(-time.Microsecond), "neighbour-before", "x"))
	after := dayBucket(table, "chan-ü", "2024-03-11")
	mustAppend(t, s, after, rec(after, b.End, "neighbour-after", "x"))
	return b, all
}

// testScanRows: every column subset both ways over a bucket of more than two batches, then
// limits (0, 1, exactly one batch, more than the rows), against the appended records.
func testScanRows(t *testing.T, s Store) {
	b, all := scanFixture(t, s, "t.scan-rows")
	n := len(all)
	whole := b.Range()
	for _, desc := range []bool{false, true} {
		dir := map[bool]string{false: "asc", true: "desc"}[desc]
		want := expect(all, whole, nil, desc, n+10)
		for _, cols := range columnSets() {
			what := fmt.Sprintf("%s %v", dir, cols)
			res := runScan(t, s, b, routing.BatchRequest{Range: whole, Columns: cols, Desc: desc, Limit: -1}, false)
			wantRoute(t, what, res.route, routing.StateHot, "", false)
			sameProjected(t, what, res.recs, project(want, cols))
			if len(res.batches) != 3 || res.batches[0] != routing.MaxBatchRows || res.batches[1] != routing.MaxBatchRows {
				t.Fatalf("%s: batches of %v rows; small rows should fill MaxBatchRows", what, res.batches)
			}
		}
		for _, limit := range []int64{0, 1, 2, routing.MaxBatchRows, routing.MaxBatchRows + 1, int64(n), int64(n) + 5} {
			for _, cols := range [][]routing.Column{routing.AllColumns, {}, {routing.ColumnValue}} {
				what := fmt.Sprintf("%s %v limit %d", dir, cols, limit)
				res := runScan(t, s, b, routing.BatchRequest{Range: whole, Columns: cols, Desc: desc, Limit: limit}, false)
				wantRoute(t, what, res.route, routing.StateHot, "", false)
				sameProjected(t, what, res.recs, project(expect(all, whole, nil, desc, int(limit)), cols))
				if limit == routing.MaxBatchRows && !slices.Equal(res.batches, []int64{routing.MaxBatchRows}) {
					t.Fatalf("%s: batches %v, want one full batch", what, res.batches)
				}
			}
		}
	}
}

// testScanBounds: ranges clipped to the bucket, ranges outside it, and bounds on the
// microsecond grid (a bound one nanosecond after a stored microsecond excludes it as a start
// and includes it as an end).
func testScanBounds(t *testing.T, s Store) {
	b := dayBucket("t.scan-bounds", "p", "2023-07-14")
	t0 := ts("2023-07-14T08:00:00.000010Z")
	all := []routing.Record{
		rec(b, b.Start, "first", "f"),
		rec(b, t0, "a", "1"), rec(b, t0, "b", "2"),
		rec(b, t0.Add(time.Microsecond), "a", "3"),
		rec(b, t0.Add(-time.Microsecond), "z", "4"),
		rec(b, b.End.Add(-time.Microsecond), "last", "l"),
	}
	mustAppend(t, s, b, all...)
	// Nanoseconds are truncated at the write: stored at .000001.
	ns := rec(b, ts("2023-07-14T09:00:00.000001999Z"), "ns", "5")
	mustAppend(t, s, b, ns)
	ns.EventTime = ts("2023-07-14T09:00:00.000001Z")
	all = append(all, ns)
	neighbour := dayBucket("t.scan-bounds", "p", "2023-07-15")
	mustAppend(t, s, neighbour, rec(neighbour, neighbour.Start, "next", "n"))

	ranges := []routing.TimeRange{
		fullRange, // clipped to the bucket
		{Start: b.Start.Add(-time.Hour), End: b.Start.Add(time.Nanosecond)},
		{Start: b.End.Add(-time.Nanosecond), End: b.End.Add(time.Hour)},
		{Start: b.End, End: b.End.Add(time.Hour)},                                               // outside: the neighbour's rows never leak
		{Start: b.Start.Add(-time.Hour), End: b.Start},                                          // outside
		{Start: b.End, End: b.Start},                                                            // reversed
		{Start: t0.Add(time.Nanosecond), End: t0.Add(2 * time.Microsecond)},                     // excludes t0
		{Start: t0.Add(-time.Nanosecond), End: t0.Add(time.Nanosecond)},                         // only t0
		{Start: t0.Add(-time.Microsecond - 999*time.Nanosecond), End: t0.Add(time.Microsecond)}, // includes t0−1µs
		{Start: t0, End: t0.Add(time.Microsecond + time.Nanosecond)},                            // includes t0+1µs
		{Start: t0.Add(time.Nanosecond), End: t0.Add(999 * time.Nanosecond)},                    // nothing
		{Start: ns.EventTime, End: ns.EventTime.Add(time.Nanosecond)},                           // the truncated time
		{Start: ns.EventTime.Add(time.Nanosecond), End: b.End},
	}
	for _, r := range ranges {
		for _, desc := range []bool{false, true} {
			for _, limit := range []int64{-1, 1} {
				what := fmt.Sprintf("range %v..%v desc=%v limit %d", r.Start, r.End, desc, limit)
				res := runScan(t, s, b, routing.BatchRequest{Range: r, Columns: routing.AllColumns, Desc: desc, Limit: limit}, false)
				wantRoute(t, what, res.route, routing.StateHot, "", false)
				lim := len(all)
				if limit >= 0 {
					lim = int(limit)
				}
				want := expect(all, r.Intersect(b.Range()), nil, desc, lim)
				sameProjected(t, what, res.recs, want)
			}
		}
	}
}

// testScanRoutes: a bucket without metadata is hot and empty; an archiving bucket reads its
// hot rows; an archived bucket (hot rows kept, then deleted) returns its route and no reader;
// a limit of 0 returns the route and no batch.
func testScanRoutes(t *testing.T, s Store) {
	never := dayBucket("t.scan-routes", "p", "2022-01-01")
	for _, desc := range []bool{false, true} {
		res := runScan(t, s, never, routing.BatchRequest{Range: never.Range(), Columns: routing.AllColumns, Desc: desc, Limit: -1}, false)
		if res.archive || res.route != (routing.Route{State: routing.StateHot}) || len(res.batches) != 0 {
			t.Fatalf("never-appended bucket: %+v", res)
		}
	}

	b := dayBucket("t.scan-routes", "p", "2022-01-02")
	all := []routing.Record{rec(b, ts("2022-01-02T01:00:00Z"), "a", "1"), rec(b, ts("2022-01-02T02:00:00Z"), "b", "2")}
	mustAppend(t, s, b, all...)
	res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 0}, false)
	if res.archive || res.route.State != routing.StateHot || len(res.batches) != 0 {
		t.Fatalf("limit 0: %+v", res)
	}
	sess := mustClaim(t, s, b, time.Minute)
	res = runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: true, Limit: -1}, false)
	wantRoute(t, "archiving", res.route, routing.StateArchiving, "", false)
	if res.route.Generation != sess.Generation {
		t.Fatalf("archiving route generation %d, want %d", res.route.Generation, sess.Generation)
	}
	sameProjected(t, "archiving bucket", res.recs, expect(all, b.Range(), nil, true, 10))

	const manifest = "archives/p/day/generation-1/manifest.json"
	if err := s.PublishArchive(bg, sess, manifest); err != nil {
		t.Fatal(err)
	}
	for _, deleted := range []bool{false, true} {
		if deleted {
			if err := s.DeleteHotBucket(bg, sess); err != nil {
				t.Fatal(err)
			}
		}
		for _, cols := range [][]routing.Column{routing.AllColumns, {}} {
			for _, limit := range []int64{-1, 0, 1} {
				res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Limit: limit}, false)
				if !res.archive {
					t.Fatalf("archived bucket (hot rows deleted: %v) returned a reader", deleted)
				}
				wantRoute(t, "archived", res.route, routing.StateArchived, manifest, deleted)
			}
		}
	}
}

// testScanBatchBytes: large values cut batches at routing.MaxBatchBytes; a value larger than
// the limit travels alone; only the selected columns count.
func testScanBatchBytes(t *testing.T, s Store) {
	b := dayBucket("t.scan-bytes", "p", "2024-06-01")
	var all []routing.Record
	for i := range 60 {
		size := 100_000 + i*1000
		if i == 31 {
			size = routing.MaxBatchBytes + 1000 // alone in its batch
		}
		all = append(all, rec(b, b.Start.Add(time.Duration(i)*time.Minute), fmt.Sprintf("k%02d", i), strings.Repeat(string(rune('a'+i%26)), size)))
	}
	for i := 0; i < len(all); i += 10 {
		mustAppend(t, s, b, all[i:i+10]...)
	}
	for _, cols := range [][]routing.Column{
		{routing.ColumnValue}, routing.AllColumns, {routing.ColumnID, routing.ColumnTimestamp}, {},
	} {
		for _, desc := range []bool{false, true} {
			what := fmt.Sprintf("%v desc=%v", cols, desc)
			res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Desc: desc, Limit: -1}, false)
			sameProjected(t, what, res.recs, project(expect(all, b.Range(), nil, desc, 100), cols))
			withValue := slices.Contains(cols, routing.ColumnValue)
			if withValue && len(res.batches) < 4 {
				t.Fatalf("%s: %d batches for 60 values of 100 kB and more", what, len(res.batches))
			}
			if !withValue && len(res.batches) != 1 {
				t.Fatalf("%s: %d batches; without the value the rows are small", what, len(res.batches))
			}
		}
	}
}

// testScanInvalidUTF8: a stored sort key (or the bucket's partition key) that is not valid
// UTF-8 fails a read that returns the id (partition) column, with a value-free error wrapping
// routing.ErrOperationFailed, and does not affect reads without that column.
func testScanInvalidUTF8(t *testing.T, s Store) {
	b := dayBucket("t.scan-utf8", "secret-channel", "2024-07-01")
	bad := "secret\xff\xfe"
	all := []routing.Record{rec(b, b.Start.Add(time.Hour), "ok-1", "v1")}
	for i := range routing.MaxBatchRows + 10 { // the invalid key arrives in the second batch
		all = append(all, rec(b, b.Start.Add(2*time.Hour+time.Duration(i)*time.Millisecond), fmt.Sprintf("ok-%05d", i), "v"))
	}
	all = append(all, rec(b, b.Start.Add(3*time.Hour), bad, "v2"))
	mustAppend(t, s, b, all...)
	for _, desc := range []bool{false, true} {
		for _, cols := range [][]routing.Column{{routing.ColumnID}, routing.AllColumns} {
			res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Desc: desc, Limit: -1}, true)
			wantErr(t, fmt.Sprintf("%v desc=%v over an invalid sort key", cols, desc), res.err, routing.ErrOperationFailed)
			privateError(t, res.err, "secret", "day:2024-07-01", "ok-")
		}
		for _, cols := range [][]routing.Column{{}, {routing.ColumnTimestamp, routing.ColumnValue, routing.ColumnPartition}} {
			res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: cols, Desc: desc, Limit: -1}, false)
			sameProjected(t, fmt.Sprintf("%v without the id", cols), res.recs, project(expect(all, b.Range(), nil, desc, len(all)), cols))
		}
		// A limit that stops before the invalid key reads fine.
		res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Desc: desc, Limit: 3}, true)
		if desc {
			wantErr(t, "descending limit 3 starting at the invalid key", res.err, routing.ErrOperationFailed)
		} else if res.err != nil {
			t.Fatalf("ascending limit 3 before the invalid key: %v", res.err)
		}
	}

	pb := dayBucket("t.scan-utf8", "\xffsecret-partition", "2024-07-01")
	mustAppend(t, s, pb, rec(pb, pb.Start, "k", "v"))
	res := runScan(t, s, pb, routing.BatchRequest{Range: pb.Range(), Columns: []routing.Column{routing.ColumnPartition}, Limit: -1}, true)
	wantErr(t, "invalid partition key", res.err, routing.ErrOperationFailed)
	privateError(t, res.err, "secret", "day:2024-07-01")
	res = runScan(t, s, pb, routing.BatchRequest{Range: pb.Range(), Columns: []routing.Column{routing.ColumnID, routing.ColumnValue}, Limit: -1}, false)
	sameProjected(t, "invalid partition key, column not read", res.recs, []routing.Record{{SortKey: []byte("k"), Value: []byte("v")}})
	empty := dayBucket("t.scan-utf8", "\xffsecret-partition", "2024-07-02")
	res = runScan(t, s, empty, routing.BatchRequest{Range: empty.Range(), Columns: routing.AllColumns, Limit: -1}, false)
	if len(res.recs) != 0 {
		t.Fatalf("empty bucket of an invalid partition key returned rows")
	}
}

func privateError(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, leak := range append(secrets, "SELECT", "pulpitum_v4") {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error %q reveals %q", err, leak)
		}
	}
}

// testScanRelease: a reader released early (before its first batch, mid-stream with and
// without a limit) or whose context is cancelled returns its connection and frees its
// batches; several readers stream side by side; the store keeps working afterwards.
func testScanRelease(t *testing.T, s Store) {
	b, all := scanFixture(t, s, "t.scan-release")
	hs := scanner(t, s)
	whole := b.Range()
	for _, tc := range []struct {
		name    string
		limit   int64
		batches int
	}{
		{"before any batch", -1, 0},
		{"after one batch", -1, 1},
		{"after one batch of a limited read", routing.MaxBatchRows + 100, 1},
		{"after two batches of a limited read", 2*routing.MaxBatchRows + 50, 2},
	} {
		for _, desc := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			_, r, err := hs.ScanRange(bg, b, routing.BatchRequest{Range: whole, Columns: routing.AllColumns, Desc: desc, Limit: tc.limit, Alloc: mem})
			if err != nil {
				t.Fatal(err)
			}
			var got []routing.Record
			for range tc.batches {
				if !r.Next() {
					t.Fatalf("%s: no batch: %v", tc.name, r.Err())
				}
				got = append(got, batchRecords(t, r.RecordBatch(), routing.AllColumns, b.PartitionKey)...)
			}
			sameProjected(t, tc.name, got, expect(all, whole, nil, desc, len(got)))
			r.Release()
			wantConnsReleased(t, s, tc.name)
			mem.AssertSize(t, 0)
		}
	}

	// A retained batch outlives the reader; the reader's own references are released.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	_, r, err := hs.ScanRange(bg, b, routing.BatchRequest{Range: whole, Columns: routing.AllColumns, Limit: -1, Alloc: mem})
	if err != nil || !r.Next() {
		t.Fatalf("ScanRange: %v", errors.Join(err, r.Err()))
	}
	kept := r.RecordBatch()
	kept.Retain()
	r.Retain()
	r.Release() // one reference left: the read goes on
	if !r.Next() {
		t.Fatalf("second batch after Retain/Release: %v", r.Err())
	}
	r.Release()
	wantConnsReleased(t, s, "after the last reference")
	sameProjected(t, "retained batch", batchRecords(t, kept, routing.AllColumns, b.PartitionKey), expect(all, whole, nil, false, routing.MaxBatchRows))
	kept.Release()
	mem.AssertSize(t, 0)

	// Cancellation: before the call, and mid-stream.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	res := runScanCtx(t, ctx, s, b, routing.BatchRequest{Range: whole, Columns: routing.AllColumns, Limit: -1}, true)
	wantErr(t, "cancelled before ScanRange", res.err, context.Canceled)
	for _, limit := range []int64{-1, 3 * routing.MaxBatchRows} {
		ctx, cancel := context.WithCancel(bg)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, r, err := hs.ScanRange(ctx, b, routing.BatchRequest{Range: whole, Columns: routing.AllColumns, Limit: limit, Alloc: mem})
		if err != nil || !r.Next() {
			t.Fatalf("ScanRange: %v", errors.Join(err, r.Err()))
		}
		cancel()
		if r.Next() {
			t.Fatalf("Next after cancellation returned a batch")
		}
		wantErr(t, "cancelled mid-stream", r.Err(), context.Canceled)
		wantErr(t, "cancelled mid-stream", r.Err(), routing.ErrOperationFailed)
		r.Release()
		wantConnsReleased(t, s, "after cancellation")
		mem.AssertSize(t, 0)
	}

	// Readers side by side, consumed in turn, each seeing its own rows.
	mem = memory.NewCheckedAllocator(memory.NewGoAllocator())
	var (
		readers     []routing.BatchReader
		colsOf      [][]routing.Column
		wants, gots [][]routing.Record
	)
	for i, desc := range []bool{false, true, false} {
		cols := columnSets()[5+i]
		_, r, err := hs.ScanRange(bg, b, routing.BatchRequest{Range: whole, Columns: cols, Desc: desc, Limit: -1, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, r)
		colsOf = append(colsOf, cols)
		wants = append(wants, project(expect(all, whole, nil, desc, len(all)), cols))
		gots = append(gots, nil)
	}
	for live := len(readers); live > 0; {
		live = 0
		for i, r := range readers {
			if r.Next() {
				live++
				gots[i] = append(gots[i], batchRecords(t, r.RecordBatch(), colsOf[i], b.PartitionKey)...)
			}
		}
	}
	for i, r := range readers {
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Release()
		sameProjected(t, fmt.Sprintf("side-by-side reader %d", i), gots[i], wants[i])
	}
	wantConnsReleased(t, s, "after side-by-side readers")
	mem.AssertSize(t, 0)
	res = runScan(t, s, b, routing.BatchRequest{Range: whole, Columns: routing.AllColumns, Limit: -1}, false)
	sameProjected(t, "read after early releases", res.recs, expect(all, whole, nil, false, len(all)))
}

// testScanSnapshot: a reader keeps reading the rows of its snapshot while the bucket is
// published and its hot rows are deleted; a read started afterwards gets the archived route.
func testScanSnapshot(t *testing.T, s Store) {
	b, all := scanFixture(t, s, "t.scan-snapshot")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	route, r, err := scanner(t, s).ScanRange(bg, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: -1, Alloc: mem})
	if err != nil || !r.Next() {
		t.Fatalf("ScanRange: %v", errors.Join(err, r.Err()))
	}
	wantRoute(t, "before publication", route, routing.StateHot, "", false)
	got := batchRecords(t, r.RecordBatch(), routing.AllColumns, b.PartitionKey)

	sess := mustClaim(t, s, b, time.Minute)
	if err := s.PublishArchive(bg, sess, "m/snapshot"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHotBucket(bg, sess); err != nil {
		t.Fatal(err)
	}
	if _, n := mustCount(t, s, b, b.Range()); n != 0 {
		t.Fatalf("hot rows left after deletion: %d", n)
	}
	for r.Next() {
		got = append(got, batchRecords(t, r.RecordBatch(), routing.AllColumns, b.PartitionKey)...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Release()
	mem.AssertSize(t, 0)
	sameProjected(t, "rows of the snapshot taken before publication", got, expect(all, b.Range(), nil, false, len(all)))
	res := runScan(t, s, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: -1}, false)
	if !res.archive {
		t.Fatal("read after publication returned hot rows")
	}
	wantRoute(t, "after publication", res.route, routing.StateArchived, "m/snapshot", true)
}

// testScanStats: one statement per ScanRange, hot or archived, and HotRows counts the rows
// returned.
func testScanStats(t *testing.T, s Store) {
	b := dayBucket("t.scan-stats", "p", "2024-09-09")
	var all []routing.Record
	for i := range 25 {
		all = append(all, rec(b, b.Start.Add(time.Duration(i)*time.Second), fmt.Sprint(i), "v"))
	}
	mustAppend(t, s, b, all...)
	for _, tc := range []struct {
		limit int64
		rows  int64
	}{{-1, 25}, {10, 10}, {0, 0}} {
		stats := &routing.ReadStats{}
		res := runScanCtx(t, routing.WithReadStats(bg, stats), s, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp}, Limit: tc.limit}, false)
		if int64(len(res.recs)) != tc.rows {
			t.Fatalf("limit %d: %d rows", tc.limit, len(res.recs))
		}
		if n := stats.HotStatements.Load(); n != 1 {
			t.Errorf("limit %d: ScanRange sent %d statements, want exactly 1 (route and rows from one snapshot)", tc.limit, n)
		}
		if n := stats.HotRows.Load(); n != tc.rows {
			t.Errorf("limit %d: HotRows = %d, want %d", tc.limit, n, tc.rows)
		}
	}
	sess := mustClaim(t, s, b, time.Minute)
	if err := s.PublishArchive(bg, sess, "m/stats"); err != nil {
		t.Fatal(err)
	}
	stats := &routing.ReadStats{}
	if res := runScanCtx(t, routing.WithReadStats(bg, stats), s, b, routing.BatchRequest{Range: b.Range(), Limit: -1}, false); !res.archive {
		t.Fatal("archived bucket returned a reader")
	}
	if stats.HotStatements.Load() != 1 || stats.HotRows.Load() != 0 {
		t.Errorf("archived ScanRange: %d statements, %d rows", stats.HotStatements.Load(), stats.HotRows.Load())
	}
	// Invalid requests fail before any statement.
	stats = &routing.ReadStats{}
	ctx := routing.WithReadStats(bg, stats)
	for name, req := range map[string]routing.BatchRequest{
		"repeated column": {Range: b.Range(), Columns: []routing.Column{routing.ColumnID, routing.ColumnID}, Limit: -1},
		"unknown column":  {Range: b.Range(), Columns: []routing.Column{routing.Column(9)}, Limit: -1},
	} {
		res := runScanCtx(t, ctx, s, b, req, true)
		wantErr(t, name, res.err, routing.ErrOperationFailed)
	}
	bad := b
	bad.Key = "day:2024-09-10"
	res := runScanCtx(t, ctx, s, bad, routing.BatchRequest{Range: b.Range(), Limit: -1}, true)
	wantErr(t, "invalid bucket id", res.err, routing.ErrInvalidRecord)
	if n := stats.HotStatements.Load(); n != 0 {
		t.Errorf("invalid requests sent %d statements", n)
	}
}

// testScanBucket: routing.DurableTable.ScanBucket over the store: hot buckets stream from it;
// an archived bucket goes to the archive batch reader with its manifest key, and is then
// served from the route cache without a hot statement.
func testScanBucket(t *testing.T, s Store) {
	def := routing.TableDef{Name: "messages", TableID: "t.scan-bucket", PartitionColumn: "channel_id",
		Strategy: routing.CalendarDayUTC, WritableBuckets: 400}
	arch := &fakeBatchArchive{}
	table, err := routing.NewDurableTable(def, s, arch, routing.Options{Cache: routing.NewRouteCache(16),
		Clock: func() time.Time { return ts("2024-03-02T00:00:00Z") }})
	if err != nil {
		t.Fatal(err)
	}
	hot, cold := dayBucket(def.TableID, "general", "2024-03-01"), dayBucket(def.TableID, "general", "2024-02-29")
	mustAppend(t, s, hot, rec(hot, hot.Start, "h", "hot"))
	mustAppend(t, s, cold, rec(cold, cold.Start, "c", "cold"))
	sess := mustClaim(t, s, cold, time.Minute)
	if err := s.PublishArchive(bg, sess, "m/cold"); err != nil {
		t.Fatal(err)
	}
	cols := []routing.Column{routing.ColumnPartition, routing.ColumnID}
	for range 2 {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		stats := &routing.ReadStats{}
		ctx := routing.WithReadStats(bg, stats)
		r, tier, err := table.ScanBucket(ctx, hot, routing.BatchRequest{Range: fullRange, Columns: cols, Limit: -1, Alloc: mem})
		if err != nil || tier != routing.TierHot || !r.Next() {
			t.Fatalf("hot ScanBucket: tier %v, %v", tier, err)
		}
		sameProjected(t, "hot ScanBucket", batchRecords(t, r.RecordBatch(), cols, hot.PartitionKey), []routing.Record{{PartitionKey: []byte("general"), SortKey: []byte("h")}})
		r.Release()
		mem.AssertSize(t, 0)

		r, tier, err = table.ScanBucket(ctx, cold, routing.BatchRequest{Range: fullRange, Columns: cols, Limit: -1, Alloc: mem})
		if err != nil || tier != routing.TierArchive || r == nil {
			t.Fatalf("archived ScanBucket: tier %v, %v", tier, err)
		}
		r.Release()
		if arch.lastKey != "m/cold" {
			t.Fatalf("archive asked for %q", arch.lastKey)
		}
		wantConnsReleased(t, s, "after ScanBucket")
		mem.AssertSize(t, 0)
	}
	if arch.calls != 2 {
		t.Fatalf("archive batch reader called %d times, want 2", arch.calls)
	}
	stats := &routing.ReadStats{}
	r, _, err := table.ScanBucket(routing.WithReadStats(bg, stats), cold, routing.BatchRequest{Range: fullRange, Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if n := stats.HotStatements.Load(); n != 0 {
		t.Errorf("cached archived route sent %d hot statements", n)
	}
}

// fakeBatchArchive is an archive that records the manifest keys it is asked for and answers
// with no rows.
type fakeBatchArchive struct {
	calls   int
	lastKey string
}

func (f *fakeBatchArchive) Read(context.Context, string, routing.BucketID, routing.ReadRequest) ([]routing.Record, error) {
	return nil, errors.New("fake archive: not implemented")
}

func (f *fakeBatchArchive) Count(context.Context, string, routing.BucketID, routing.TimeRange) (uint64, error) {
	return 0, errors.New("fake archive: not implemented")
}

func (f *fakeBatchArchive) AggregateGroups(context.Context, string, routing.BucketID, routing.AggregateRequest) ([]routing.PartialGroup, error) {
	return nil, routing.ErrNoAggregate
}

func (f *fakeBatchArchive) ReadBatches(_ context.Context, key string, _ routing.BucketID, req routing.BatchRequest) (routing.BatchReader, error) {
	f.calls++
	f.lastKey = key
	return routing.EmptyBatchReader(routing.TableDef{PartitionColumn: "channel_id"}.BatchSchema(req.Columns)), nil
}
