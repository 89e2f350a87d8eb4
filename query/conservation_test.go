package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// cancelKey carries a stream's store-side cancellation point: the stream is cancelled when
// its at-th bucket read starts.
type cancelKey struct{}

type cancelPoint struct {
	mu     sync.Mutex
	at     int
	reads  int
	cancel context.CancelFunc
}

// cancellingStore cancels a stream when the bucket read its context names starts (hot
// buckets through ScanRange; archived ones pass through it too, to learn their route).
type cancellingStore struct{ *sqlite.Store }

func (s cancellingStore) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	if p, ok := ctx.Value(cancelKey{}).(*cancelPoint); ok {
		p.mu.Lock()
		p.reads++
		if p.reads == p.at {
			p.cancel()
		}
		p.mu.Unlock()
	}
	return s.Store.ScanRange(ctx, b, req)
}

// fragmentWindow decodes the time window of a fragment spec (query.SpecJSON: {"w": [start,
// end]} in Unix nanoseconds; absent for the whole query).
func fragmentWindow(t *testing.T, spec []byte, whole routing.TimeRange) routing.TimeRange {
	t.Helper()
	var s struct {
		W *[2]int64 `json:"w"`
	}
	js, err := query.SpecJSON(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatal(err)
	}
	if s.W == nil {
		return whole
	}
	return routing.TimeRange{Start: time.Unix(0, s.W[0]).UTC(), End: time.Unix(0, s.W[1]).UTC()}
}

// TestRowConservation (issue 10): a multi-endpoint scan of the mixed fixture (hot and archived
// day buckets) runs all its fragments at once, over 1 to 4 concurrent bucket reads per
// fragment, while cancellation is injected at random points — by the consumer after a random
// number of batches, or inside the executor when a random bucket read starts. Every stream
// that completes returns exactly the records of its buckets (the brute-force ids in order:
// nothing dropped, nothing duplicated), every other one ends with CANCELLED, and every buffer
// is returned. The trials are seeded: each run makes the same choices.
func TestRowConservation(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "mixed", true)
	whole := routing.TimeRange{Start: engDay0.AddDate(0, 0, -3), End: engDay0.AddDate(0, 0, engDays+3)}
	sql := "SELECT id FROM messages" + engWhere("general", whole) + " ORDER BY timestamp, id"
	trials := 24
	if engRace {
		trials = 4
	}
	completed, cancelled := 0, 0
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 10))
		fanout := 1 + rng.IntN(4)
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var tables []*routing.DurableTable
		for _, def := range []routing.TableDef{engMessages, engFlights} {
			tbl, err := routing.NewDurableTable(def, cancellingStore{f.store}, f.reader, routing.Options{Clock: engClock, Fanout: fanout, Cache: routing.NewRouteCache(256)})
			if err != nil {
				t.Fatal(err)
			}
			tables = append(tables, tbl)
		}
		e, err := query.New(tables, query.Options{Pushdown: true, Alloc: alloc, EndpointBuckets: 1 + rng.IntN(6)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		frags, err := e.Fragments(ctx, sql, nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		type outcome struct {
			ids []string
			err error
		}
		outcomes := make([]outcome, len(frags))
		var wg sync.WaitGroup
		for i, fr := range frags {
			// A third of the streams are cancelled by their consumer, a third inside the
			// executor, a third run to the end.
			mode, k := rng.IntN(3), rng.IntN(4)
			wg.Add(1)
			go func() {
				defer wg.Done()
				sctx, cancel := context.WithCancel(ctx)
				defer cancel()
				if mode == 1 {
					sctx = context.WithValue(sctx, cancelKey{}, &cancelPoint{at: 1 + k, cancel: cancel})
				}
				rdr, err := e.ExecuteFragment(sctx, sql, nil, nil, fr.Spec)
				if err != nil {
					outcomes[i].err = err
					return
				}
				defer rdr.Release()
				batches := 0
				for rdr.Next() {
					if mode == 0 && batches == k {
						cancel()
					}
					batches++
					col := rdr.RecordBatch().Column(0).(*array.String)
					for j := range col.Len() {
						outcomes[i].ids = append(outcomes[i].ids, col.Value(j))
					}
				}
				outcomes[i].err = rdr.Err()
			}()
		}
		wg.Wait()
		for i, o := range outcomes {
			if o.err != nil {
				if status.Code(wire(o.err)) != codes.Canceled && !errors.Is(o.err, context.Canceled) {
					t.Fatalf("trial %d fragment %d: %v, want CANCELLED", trial, i, o.err)
				}
				cancelled++
				continue
			}
			completed++
			var want []string
			for _, r := range f.engRecords("general", fragmentWindow(t, frags[i].Spec, whole)) {
				want = append(want, string(r.SortKey))
			}
			if !slices.Equal(o.ids, want) {
				t.Fatalf("trial %d (fan-out %d) fragment %d of %d: %d rows, want its buckets' %d: %s", trial, fanout, i, len(frags), len(o.ids), len(want),
					fmt.Sprint(o.ids))
			}
		}
		if n := alloc.CurrentAlloc(); n != 0 {
			t.Fatalf("trial %d: %d bytes still allocated", trial, n)
		}
	}
	if completed == 0 || cancelled == 0 {
		t.Fatalf("%d streams completed and %d were cancelled: the trials test nothing", completed, cancelled)
	}
}
