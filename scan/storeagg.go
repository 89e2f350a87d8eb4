package scan

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// storeStream is the coordinator's light path for a routed aggregate the pushdown rewrite
// sent to the stores (routedNode.store), outside the MIN/MAX launch policy: no per-fragment
// pipeline, channel or batch hand-over. On the first Next it asks every bucket's
// partial-aggregate port (routing.DurableTable.AggregateBucket), at most the fan-out at once —
// the coordinator's goroutine is one of the askers, so a query whose answers come from
// cached manifests starts fanout−1 goroutines at most — and reads each answer back into its
// partial groups. It then yields, in unit order as fragments would, each run of answered
// buckets as one batch of the partial-aggregate schema (the coordinator's final aggregate
// combines them) and each run of buckets whose store could not answer without rows
// (routing.ErrNoAggregate) as row-reading fragments under the fan-out bound.
// Each ask holds a ledger reservation (one fragment) until its answer is read. Like
// fragmentStream it is pulled by one goroutine; Release (or cancelling ctx) stops everything
// it started and waits for it.
type storeStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	rt     *runtime
	n      *routedNode
	fanout int
	// ask asks the stores and sets out: (*storeStream).askStores for the store-aggregate
	// rewrite, (*storeStream).askHot for the hot row aggregate (hotagg.go).
	ask func(*storeStream) error

	asked bool
	out   array.RecordReader // the combined answer, then the fallback fragments
	batch arrow.RecordBatch
	err   error
	refs  atomic.Int64
}

func newStoreStream(ctx context.Context, rt *runtime, n *routedNode) *storeStream {
	ctx, cancel := context.WithCancel(ctx)
	s := &storeStream{ctx: ctx, cancel: cancel, rt: rt, n: n, fanout: rt.fanout(n), ask: (*storeStream).askStores}
	if n.hot != nil {
		s.ask = (*storeStream).askHot
	}
	s.refs.Store(1)
	return s
}

func (s *storeStream) Schema() *arrow.Schema          { return s.n.partialSch }
func (s *storeStream) Record() arrow.RecordBatch      { return s.batch }
func (s *storeStream) RecordBatch() arrow.RecordBatch { return s.batch }
func (s *storeStream) Err() error                     { return s.err }
func (s *storeStream) Retain()                        { s.refs.Add(1) }

func (s *storeStream) Release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	s.cancel()
	if s.out != nil {
		s.out.Release()
		s.out = nil
	}
	s.batch = nil
}

func (s *storeStream) Next() bool {
	s.batch = nil
	if s.err != nil {
		return false
	}
	if !s.asked {
		s.asked = true
		if s.err = s.ask(s); s.err != nil {
			s.cancel()
			return false
		}
	}
	if s.out == nil {
		return false
	}
	if s.out.Next() {
		s.batch = s.out.RecordBatch()
		return true
	}
	s.err = s.out.Err()
	s.out.Release()
	s.out = nil
	return false
}

// each runs ask(0) … ask(n-1), at most the fan-out at once (the coordinator's goroutine among
// the workers), and returns the first error (cancelling the others), a recovered panic (as
// INTERNAL, where naming the place), or the stream's cancellation.
func (s *storeStream) each(n int, where string, ask func(i int) error) error {
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err })
		s.cancel()
	}
	work := func() {
		defer func() {
			if p := recover(); p != nil {
				fail(panics.FromValue(where, p))
			}
		}()
		for i := int(next.Add(1) - 1); i < n && s.ctx.Err() == nil; i = int(next.Add(1) - 1) {
			if err := ask(i); err != nil {
				fail(err)
				return
			}
		}
	}
	for range min(s.fanout, n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if first != nil {
		return first
	}
	return s.ctx.Err()
}

// askStores asks every unit's store, combines the answers into one partial batch and sets out
// to yield it, then the fallback fragments' partial aggregates.
func (s *storeStream) askStores() error {
	units := s.n.units
	rw := s.n.store.rw
	grouped := rw.Bin != nil
	answers := make([][]routing.PartialGroup, len(units))
	declined := make([]bool, len(units))
	err := s.each(len(units), "store aggregate", func(i int) error {
		gs, err := s.askUnit(units[i], grouped)
		switch {
		case errors.Is(err, routing.ErrNoAggregate):
			declined[i] = true
		case err != nil:
			return err
		default:
			answers[i] = gs
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Output in unit order, as the fragments' outputs are concatenated: each run of answered
	// units as one batch, each run of declined ones as row-reading fragments.
	req := s.n.store.request(s.n.src.Range, s.rt.mem)
	var outs []array.RecordReader
	release := func() {
		for _, r := range outs {
			r.Release()
		}
	}
	for i := 0; i < len(units); {
		j := i + 1
		for j < len(units) && declined[j] == declined[i] && (!rw.Partition || string(units[j].partition) == string(units[i].partition)) {
			j++
		}
		if declined[i] {
			// Each of these units was counted as started when asked; its fragment counts it
			// again.
			s.rt.fellBack.Add(int64(j - i))
			s.rt.started.Add(-int64(j - i))
			rows := *s.n
			rows.analyzed = s.n.analysisNode()
			rows.store, rows.units = nil, units[i:j]
			outs = append(outs, newFragmentStream(s.ctx, s.rt, &rows, s.n.partialSch, -1))
		} else {
			n := 0
			for _, a := range answers[i:j] {
				n += len(a)
			}
			gs := make([]routing.PartialGroup, 0, n)
			for _, a := range answers[i:j] {
				for _, g := range a {
					// Grouped by partition, a partition without records in the range has no
					// group (an ungrouped answer always has its one row).
					if !rw.Partition || g.Count > 0 || g.Found {
						gs = append(gs, g)
					}
				}
			}
			if rw.Partition && len(gs) == 0 {
				i = j
				continue
			}
			r, err := req.Answer(gs)
			if err != nil {
				release()
				return err
			}
			outs = append(outs, s.n.store.reader(r, s.n.partialSch, units[i].partition))
		}
		i = j
	}
	switch len(outs) {
	case 0:
		if rw.Partition {
			// No partition has a record: no group.
			r, err := array.NewRecordReader(s.n.partialSch, nil)
			if err != nil {
				return err
			}
			s.out = r
			break
		}
		r, err := req.Answer(nil)
		if err != nil {
			return err
		}
		s.out = s.n.store.reader(r, s.n.partialSch, nil)
	case 1:
		s.out = outs[0]
	default:
		s.out = ops.UnionAll(outs)
	}
	return nil
}

// askUnit asks one unit's store for its partial groups under a ledger reservation.
func (s *storeStream) askUnit(u unit, grouped bool) ([]routing.PartialGroup, error) {
	s.rt.started.Add(1)
	res := s.rt.mem.Reserve(0)
	defer res.Release()
	t0 := time.Now()
	gs, tier, err := s.n.src.Table.AggregateGroups(s.ctx, u.bucket, s.n.store.request(s.n.src.Range, s.rt.mem))
	if err != nil {
		return nil, err
	}
	// EXPLAIN ANALYZE's figures of the store's answers, as a fragment reading the answer's
	// batches would count them.
	s.rt.analysis.tier(s.n, opStore, tier)
	s.rt.analysis.answered(s.n, opStore, len(gs), time.Since(t0))
	if err := res.AddRows(int64(len(gs))); err != nil {
		return nil, err
	}
	s.rt.pushed.Add(1)
	s.rt.countTier(tier)
	return gs, nil
}
