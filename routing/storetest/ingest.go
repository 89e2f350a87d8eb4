package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// sliceSource is a routing.RecordSource over fixed batches; fail, when set, is returned after
// failAfter batches (a client that breaks off mid-stream).
type sliceSource struct {
	batches   [][]routing.Record
	next      int
	failAfter int
	fail      error
}

func (s *sliceSource) Next(context.Context) ([]routing.Record, error) {
	if s.fail != nil && s.next == s.failAfter {
		return nil, s.fail
	}
	if s.next == len(s.batches) {
		return nil, io.EOF
	}
	b := slices.Clone(s.batches[s.next]) // the fence normalises times in place
	s.next++
	return b, nil
}

// batchesOf cuts recs into batches of n (the last may be shorter).
func batchesOf(recs []routing.Record, n int) [][]routing.Record {
	var out [][]routing.Record
	for lo := 0; lo < len(recs); lo += n {
		out = append(out, recs[lo:min(lo+n, len(recs))])
	}
	return out
}

var errClientGone = errors.New("storetest: the client went away")

// testIngest checks the write port of a whole request (HotStore.AppendStream through
// DurableTable.Ingest): rows of several partitions and buckets in odd-sized batches are all
// stored, each read back equal to what was sent; every refusal — a duplicate of a stored
// record or inside the request, a bucket being archived, a source failing mid-stream, a record
// outside the writable window or without an id, another strategy under the same table id —
// stores nothing of its request: no record and no metadata row (a partition only the refused
// request wrote is not discovered).
func testIngest(t *testing.T, s Store) {
	def := routing.TableDef{Name: "ingest", TableID: "t.ingest", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 5}
	now := ts("2024-05-10T12:00:00Z")
	table, err := routing.NewDurableTable(def, s, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 1))
	days := []string{"2024-05-08", "2024-05-09", "2024-05-10"}
	want := map[string][]routing.Record{} // bucket cache key → records
	var all []routing.Record
	for _, pk := range []string{"a", "b", "c"} {
		for _, day := range days {
			b := dayBucket(def.TableID, pk, day)
			for i := range 40 {
				at := b.Start.Add(time.Duration(rng.Int64N(int64(24 * time.Hour)))).Truncate(time.Microsecond)
				r := rec(b, at, fmt.Sprintf("%s-%s-%03d", pk, day, i), fmt.Sprintf(`{"i":%d}`, i))
				want[b.CacheKey()] = append(want[b.CacheKey()], r)
				all = append(all, r)
			}
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	n, err := table.Ingest(bg, &sliceSource{batches: batchesOf(all, 7)})
	if err != nil || n != int64(len(all)) {
		t.Fatalf("ingest = %d, %v; want %d", n, err, len(all))
	}
	check := func(what string) {
		t.Helper()
		for _, pk := range []string{"a", "b", "c"} {
			for _, day := range days {
				b := dayBucket(def.TableID, pk, day)
				w := slices.Clone(want[b.CacheKey()])
				slices.SortFunc(w, func(x, y routing.Record) int { return cmpRec(x.EventTime, x.SortKey, y.EventTime, y.SortKey) })
				_, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 1000})
				sameRecords(t, what, got, w)
			}
		}
		parts, err := s.Partitions(bg, def.TableID, def.Strategy, routing.TimeRange{Start: ts("2024-01-01T00:00:00Z"), End: ts("2025-01-01T00:00:00Z")}, 0)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([][]byte, len(parts))
		for i, p := range parts {
			keys[i] = p.Key
		}
		if got := fmt.Sprintf("%q", keys); got != `["a" "b" "c"]` {
			t.Fatalf("%s: partitions %s, want a, b, c (a refused request left metadata rows)", what, got)
		}
	}
	check("after the ingest")
	if n, err := table.Ingest(bg, &sliceSource{}); err != nil || n != 0 {
		t.Fatalf("empty ingest = %d, %v", n, err)
	}

	// Each refused request carries new rows of partition "q" (days 8 and 9) before its fault.
	fresh := func(k int) []routing.Record {
		var out []routing.Record
		for i := range k {
			b := dayBucket(def.TableID, "q", days[i%2])
			out = append(out, rec(b, b.Start.Add(time.Duration(i)*time.Minute), fmt.Sprintf("q%d", i), "{}"))
		}
		return out
	}
	stored := want[dayBucket(def.TableID, "b", days[1]).CacheKey()][3]
	claimed := dayBucket(def.TableID, "c", days[0])
	sess := mustClaim(t, s, claimed, time.Minute)
	for _, tc := range []struct {
		name   string
		src    *sliceSource
		target error
	}{
		{"duplicate of a stored record", &sliceSource{batches: batchesOf(append(fresh(30), stored), 8)}, routing.ErrDuplicateRecord},
		{"duplicate inside the request", &sliceSource{batches: batchesOf(append(fresh(30), fresh(1)...), 8)}, routing.ErrDuplicateRecord},
		{"bucket being archived", &sliceSource{batches: batchesOf(append(fresh(30), rec(claimed, claimed.Start.Add(time.Second), "late", "{}")), 8)}, routing.ErrBucketReadOnly},
		{"source fails mid-stream", &sliceSource{batches: batchesOf(fresh(30), 8), failAfter: 2, fail: errClientGone}, errClientGone},
		{"record in a future bucket", &sliceSource{batches: batchesOf(append(fresh(30), rec(dayBucket(def.TableID, "q", "2024-05-11"), ts("2024-05-11T00:00:01Z"), "f", "{}")), 8)}, routing.ErrOutsideWriteWindow},
		{"record without an id", &sliceSource{batches: batchesOf(append(fresh(30), routing.Record{PartitionKey: []byte("q"), EventTime: ts("2024-05-09T01:00:00Z")}), 8)}, routing.ErrInvalidRecord},
		// Keys past MaxKeyBytes: PostgreSQL's primary key index could not hold them (54000).
		{"record whose id is 1 MiB", &sliceSource{batches: batchesOf(append(fresh(30), rec(dayBucket(def.TableID, "q", "2024-05-09"), ts("2024-05-09T01:00:00Z"), strings.Repeat("i", 1<<20), "{}")), 8)}, routing.ErrInvalidRecord},
		{"record whose keys take one byte too many", &sliceSource{batches: batchesOf(append(fresh(30), rec(dayBucket(def.TableID, "q", "2024-05-09"), ts("2024-05-09T01:00:00Z"), strings.Repeat("i", routing.MaxKeyBytes), "{}")), 8)}, routing.ErrInvalidRecord},
	} {
		n, err := table.Ingest(bg, tc.src)
		wantErr(t, tc.name, err, tc.target)
		// A duplicate names its record's position: the 31st (after thirty fresh ones).
		var dup *routing.DuplicateRecordError
		if errors.Is(tc.target, routing.ErrDuplicateRecord) && (!errors.As(err, &dup) || dup.Record != 30) {
			t.Fatalf("%s: %v, want the duplicate named as record 30", tc.name, err)
		}
		if n != 0 {
			t.Fatalf("%s: %d records reported stored", tc.name, n)
		}
		check(tc.name)
	}
	if err := s.DeferArchive(bg, sess, -time.Second); err != nil {
		t.Fatal(err)
	}
	other, err := routing.NewDurableTable(routing.TableDef{Name: "other", TableID: def.TableID, PartitionColumn: "p", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2},
		s, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Ingest(bg, &sliceSource{batches: [][]routing.Record{{{PartitionKey: []byte("q"), EventTime: now, SortKey: []byte("m"), Value: []byte("{}")}}}})
	wantErr(t, "another strategy", err, routing.ErrStrategyMismatch)
	check("after every refusal")
}

// RunIngest runs the suite's test of whole write requests (IngestAllOrNothing) alone, over a
// store open returns: for a store configured to cut requests into small pieces (routing/
// cockroach moves a pipelined request a few records at a time in its test), so that every
// refusal comes after earlier pieces were written inside the request's transaction.
func RunIngest(t *testing.T, open func(t *testing.T) Store) { testIngest(t, open(t)) }
