package pushdown

import (
	"math"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// StartOrder is the start-order policy for extremes (Rewrite.Extremes), the MIN/MAX launch
// policy of the seed: the units are one partition's buckets in time order, walked from the
// first bucket while MIN is unanswered and one from the last while MAX is, taking turns; minAt is the
// least unit that answered a non-null MIN and maxAt the greatest that answered a non-null
// MAX. Buckets of a partition never overlap in time, so once a MIN is answered no later
// bucket can lower it (symmetrically for MAX): the walks stop and the buckets between them
// never start. Next is called by the coordinator only; Observe by the fragments (safe
// concurrently with each other and with Next).
type StartOrder struct {
	rw           *Rewrite
	minAt, maxAt atomic.Int64
	lo, hi       int // the next unit of each walk
	turn         bool
}

// NewStartOrder returns the policy over units buckets (unit 0 the earliest) of rw, which
// must have Extremes.
func NewStartOrder(rw *Rewrite, units int) *StartOrder {
	e := &StartOrder{rw: rw, hi: units - 1}
	e.minAt.Store(math.MaxInt64)
	e.maxAt.Store(-1)
	return e
}

// Next returns the next unit to start and whether the MAX walk (from the last bucket) takes
// it, or -1 when no unstarted unit can change the answer.
func (e *StartOrder) Next() (int, bool) {
	if e.lo > e.hi {
		return -1, false
	}
	minOpen := e.rw.MinCol >= 0 && e.minAt.Load() == math.MaxInt64
	maxOpen := e.rw.MaxCol >= 0 && e.maxAt.Load() < 0
	e.turn = !e.turn
	switch {
	case minOpen && (e.turn || !maxOpen):
		e.lo++
		return e.lo - 1, false
	case maxOpen:
		e.hi--
		return e.hi + 1, true
	}
	return -1, false
}

// Observe records what unit u, taken by the MAX walk when fromEnd, answered in its partial
// state b; it reports whether it answered its walk's extreme. Only a walk's own units settle
// it: a MAX found by the MIN walk says nothing of the buckets after it, which the MAX walk has
// not reached.
func (e *StartOrder) Observe(u int, fromEnd bool, b arrow.RecordBatch) bool {
	found := false
	if c := e.rw.MinCol; c >= 0 && !fromEnd && hasValue(b.Column(c)) {
		found = true
		for x := e.minAt.Load(); int64(u) < x && !e.minAt.CompareAndSwap(x, int64(u)); x = e.minAt.Load() {
		}
	}
	if c := e.rw.MaxCol; c >= 0 && fromEnd && hasValue(b.Column(c)) {
		found = true
		for x := e.maxAt.Load(); int64(u) > x && !e.maxAt.CompareAndSwap(x, int64(u)); x = e.maxAt.Load() {
		}
	}
	return found
}

func hasValue(a arrow.Array) bool { return a.Len() > a.NullN() }

// Walks is how many fragments start first: one per end.
func (e *StartOrder) Walks() int {
	if e.rw.MinCol >= 0 && e.rw.MaxCol >= 0 {
		return 2
	}
	return 1
}
