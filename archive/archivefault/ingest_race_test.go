package archivefault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// streamSource is a write request's records handed to DurableTable.Ingest in batches of
// batch records, with a pause before each batch (a client sending slowly, so that the request
// overlaps the archiver's steps). Next hands out copies: the fence normalises in place.
type streamSource struct {
	recs  []routing.Record
	batch int
	pause time.Duration
	off   int
	out   []routing.Record
}

func (s *streamSource) Next(context.Context) ([]routing.Record, error) {
	if s.off >= len(s.recs) {
		return nil, io.EOF
	}
	time.Sleep(s.pause)
	hi := min(len(s.recs), s.off+s.batch)
	s.out = append(s.out[:0], s.recs[s.off:hi]...)
	s.off = hi
	return s.out, nil
}

// TestIngestRacesArchiver: write requests (DurableTable.Ingest, the path of Flight SQL bulk
// ingest and load) contend with the archiver (claim → snapshot → upload → publish → delete)
// for the same buckets, on both hot stores. First at fixed points: a request before the claim
// is stored (and archived with the bucket); requests made after the claim, after the snapshot
// and after the publish are refused as read-only and store nothing. Then, round after round
// (one day's buckets a round), one slow stream per partition races a cycle archiving exactly
// those buckets. Each request either stores all its records or is refused with
// routing.ErrBucketReadOnly storing none; in the end every bucket is archived under a manifest
// that validates and every partition reads, counted and scanned, exactly the records of its
// buckets plus those of the requests that were stored — none lost, none twice.
func TestIngestRacesArchiver(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) { testIngestRacesArchiver(t, kind) })
	}
}

func testIngestRacesArchiver(t *testing.T, kind string) {
	const rounds, seed, streamRecs = 6, 3, 300
	parts := []string{"a", "b", "c", "d"}
	e := newEnv(t, kind, parts, rounds+1, seed) // days -rounds … 0, all writable
	var mu sync.Mutex
	var seq atomic.Int64
	// request builds n records of bucket b with sort keys of their own.
	request := func(b routing.BucketID, n int) []routing.Record {
		s := seq.Add(1)
		recs := make([]routing.Record, n)
		for i := range recs {
			recs[i] = routing.Record{
				PartitionKey: b.PartitionKey,
				EventTime:    b.Start.Add(time.Duration(i*97+int(s)) * time.Second),
				SortKey:      fmt.Appendf(nil, "req%03d-%04d", s, i),
				Value:        fmt.Appendf(nil, `{"req":%d,"i":%d}`, s, i),
			}
		}
		return recs
	}
	// send writes recs as one request; stored requests join the reference.
	send := func(recs []routing.Record, batch int, pause time.Duration) (int64, error) {
		n, err := e.table.Ingest(bg, &streamSource{recs: recs, batch: batch, pause: pause})
		switch {
		case err == nil && n == int64(len(recs)):
			mu.Lock()
			pk := string(recs[0].PartitionKey)
			e.want[pk] = append(e.want[pk], recs...)
			mu.Unlock()
		case err == nil || n != 0:
			t.Errorf("a request of %d records stored %d (%v)", len(recs), n, err)
		}
		return n, err
	}
	day := func(d int) time.Time { return today.AddDate(0, 0, d) }

	// Fixed points, on the oldest day's buckets.
	var hooked atomic.Bool
	hooked.Store(true)
	refusedAt := map[string]int{}
	a := e.runner(t, runnerOpts{hook: func(op string, s *routing.ArchiveSession) {
		if !hooked.Load() || (op != "snapshot" && op != "publish" && op != "delete") {
			return
		}
		_, err := send(request(s.Bucket, 20), 7, 0)
		if !errors.Is(err, routing.ErrBucketReadOnly) {
			t.Errorf("a request before %s of a claimed bucket: %v, want ErrBucketReadOnly", op, err)
		}
		mu.Lock()
		refusedAt[op]++
		mu.Unlock()
	}})
	oldest := day(-rounds)
	for _, pk := range parts {
		b := routing.BucketFor(e.table.Def().TableID, []byte(pk), e.table.Def().Strategy, oldest)
		if _, err := send(request(b, 20), 7, 0); err != nil {
			t.Fatalf("a request before the claim: %v", err)
		}
	}
	e.eligible = e.eligible[:0]
	for _, pk := range parts {
		e.eligible = append(e.eligible, routing.BucketFor(e.table.Def().TableID, []byte(pk), e.table.Def().Strategy, oldest))
	}
	e.cutoff = routing.BucketFor("", nil, e.table.Def().Strategy, oldest).End
	if e.drive(t, 20, a) < 0 {
		t.Fatal("the oldest buckets were not archived")
	}
	hooked.Store(false)
	for _, op := range []string{"snapshot", "publish", "delete"} {
		if refusedAt[op] != len(parts) {
			t.Fatalf("requests refused before %s: %d, want %d (%v)", op, refusedAt[op], len(parts), refusedAt)
		}
	}
	e.sortWant()
	if err := e.readAll(); err != nil {
		t.Fatal(err)
	}

	// Races: each round one stream per partition into that day's buckets against a cycle
	// archiving them.
	rng := rand.New(rand.NewPCG(21, uint64(len(kind))))
	var stored, refused int
	for d := -rounds + 1; d < 0; d++ {
		e.cutoff = routing.BucketFor("", nil, e.table.Def().Strategy, day(d)).End
		var wg sync.WaitGroup
		for _, pk := range parts {
			b := routing.BucketFor(e.table.Def().TableID, []byte(pk), e.table.Def().Strategy, day(d))
			e.eligible = append(e.eligible, b)
			recs := request(b, streamRecs)
			delay := time.Duration(rng.IntN(4000)) * time.Microsecond
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(delay)
				_, err := send(recs, 30, 200*time.Microsecond)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					stored++
				case errors.Is(err, routing.ErrBucketReadOnly):
					refused++
				default:
					t.Errorf("a stream racing the archiver: %v, want success or ErrBucketReadOnly", err)
				}
			}()
		}
		if e.drive(t, 20, a) < 0 {
			t.Fatalf("day %d's buckets were not archived", d)
		}
		wg.Wait()
		e.sortWant()
		if err := e.readAll(); err != nil {
			t.Fatalf("after day %d: %v", d, err)
		}
	}
	t.Logf("racing streams: %d stored, %d refused as read-only", stored, refused)
	e.check(t)
}

// sortWant puts each partition's reference records in (event_time, sort_key) order again.
func (e *env) sortWant() {
	for _, pk := range e.parts {
		slices.SortFunc(e.want[pk], func(a, b routing.Record) int { return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey) })
	}
}
