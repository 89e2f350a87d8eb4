package scan

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
)

// Analysis collects what the operators of one execution did, for EXPLAIN ANALYZE: per
// coordinator operator and per operator of the bucket fragments (summed over the fragments),
// the rows and batches it produced, the time spent in it and below it (its Next calls; summed
// over fragments, which run concurrently, so a fragment operator's time may exceed the wall
// time), how many times it was opened (fragments), and, for a fragment's bucket read, the
// buckets read from each tier. Pass it to Prepared.ExecuteAnalyzed, read the result in full,
// then print Prepared.ExplainAnalyzed. Safe for concurrent use; the zero value is not usable,
// NewAnalysis makes one. A nil *Analysis records nothing (executions without ANALYZE pay one
// nil check per operator opened).
type Analysis struct {
	mu  sync.Mutex
	ops map[opKey]*opStats
}

type opKey struct {
	node node
	op   string // "" for a coordinator node's output; a fragment operator's name
}

type opStats struct {
	rows, batches, nanos, opened, hot, archive atomic.Int64
	// shredHits and shredMisses count the fragments of a node with a shredded variant that
	// read a whole archived bucket from the shredded-column cache, or could not (shredded.go);
	// shredPruned the hits that read nothing, the cached ranges proving a filter false.
	shredHits, shredMisses, shredPruned atomic.Int64
}

// NewAnalysis returns an empty analysis.
func NewAnalysis() *Analysis { return &Analysis{ops: map[opKey]*opStats{}} }

// stats returns the counters of operator op of n, made on first use.
func (a *Analysis) stats(n node, op string) *opStats {
	if rn, ok := n.(*routedNode); ok {
		n = rn.analysisNode()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.ops[opKey{n, op}]
	if s == nil {
		s = &opStats{}
		a.ops[opKey{n, op}] = s
	}
	return s
}

// analysisNode is the node n's counters belong to (routedNode.analyzed, else n).
func (n *routedNode) analysisNode() *routedNode {
	if n.analyzed != nil {
		return n.analyzed
	}
	return n
}

// track returns r counting into operator op of n (r itself when a is nil).
func (a *Analysis) track(n node, op string, r array.RecordReader) array.RecordReader {
	if a == nil {
		return r
	}
	s := a.stats(n, op)
	s.opened.Add(1)
	return &countingReader{RecordReader: r, s: s}
}

// answered counts a store's answer of rows partial groups to operator op of n, as track
// counts the batches of an answer read as Arrow (at most routing.MaxBatchRows rows a batch),
// with d the time it took.
func (a *Analysis) answered(n node, op string, rows int, d time.Duration) {
	if a == nil {
		return
	}
	s := a.stats(n, op)
	s.opened.Add(1)
	s.rows.Add(int64(rows))
	s.batches.Add(int64((rows + routing.MaxBatchRows - 1) / routing.MaxBatchRows))
	s.nanos.Add(int64(d))
}

// tier counts a bucket of operator op of n read from tier.
func (a *Analysis) tier(n node, op string, t routing.Tier) {
	if a == nil {
		return
	}
	if t == routing.TierArchive {
		a.stats(n, op).archive.Add(1)
	} else {
		a.stats(n, op).hot.Add(1)
	}
}

// shredHit counts a fragment's read from the shredded-column cache (hit) or not.
func (a *Analysis) shredHit(n node, hit bool) {
	if a == nil {
		return
	}
	if hit {
		a.stats(n, opScan).shredHits.Add(1)
	} else {
		a.stats(n, opScan).shredMisses.Add(1)
	}
}

// shredPrune counts a fragment whose bucket the cached ranges pruned (shredHit counts it as a
// hit too).
func (a *Analysis) shredPrune(n node) {
	if a == nil {
		return
	}
	a.stats(n, opScan).shredPruned.Add(1)
}

// suffix returns the measured text of operator op of n to append to its EXPLAIN line (""
// when a is nil or the operator never ran).
func (a *Analysis) suffix(n node, op string) string {
	if a == nil {
		return ""
	}
	a.mu.Lock()
	s := a.ops[opKey{n, op}]
	a.mu.Unlock()
	if s == nil {
		return " (never executed)"
	}
	out := fmt.Sprintf(" (actual rows=%d batches=%d time=%.3f ms", s.rows.Load(), s.batches.Load(), float64(s.nanos.Load())/1e6)
	if op != "" && op != opConcat {
		out += fmt.Sprintf(" fragments=%d", s.opened.Load())
	}
	if h, ar := s.hot.Load(), s.archive.Load(); h+ar > 0 {
		out += fmt.Sprintf(" buckets hot=%d archived=%d", h, ar)
	}
	if h, m := s.shredHits.Load(), s.shredMisses.Load(); h+m > 0 {
		out += fmt.Sprintf(" shred cache hits=%d misses=%d", h, m)
		if p := s.shredPruned.Load(); p > 0 {
			out += fmt.Sprintf(" pruned=%d", p)
		}
	}
	return out + ")"
}

// Rows returns the rows the plan's top operator produced (its output: the rows returned).
func (a *Analysis) Rows(pr *Prepared) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.ops[opKey{pr.n, ""}]; s != nil {
		return s.rows.Load()
	}
	return 0
}

// countingReader counts its reader's batches, rows and the time of its Next calls.
type countingReader struct {
	array.RecordReader
	s *opStats
}

func (r *countingReader) Next() bool {
	t := time.Now()
	ok := r.RecordReader.Next()
	r.s.nanos.Add(int64(time.Since(t)))
	if ok {
		r.s.batches.Add(1)
		r.s.rows.Add(r.RecordReader.RecordBatch().NumRows())
	}
	return ok
}

// openNode opens n, its output tracked when the execution is analysed.
func openNode(ctx context.Context, rt *runtime, n node) (array.RecordReader, error) {
	r, err := n.open(ctx, rt)
	if err != nil {
		return nil, err
	}
	return rt.analysis.track(n, "", r), nil
}

// ExecuteAnalyzed is Execute, recording what the operators do into a (NewAnalysis).
func (pr *Prepared) ExecuteAnalyzed(ctx context.Context, a *Analysis) (*Result, error) {
	return pr.execute(ctx, a)
}

// ExplainAnalyzed is Explain with each operator's measures of a (an execution by
// ExecuteAnalyzed, read in full) appended to its line.
func (pr *Prepared) ExplainAnalyzed(a *Analysis) []string { return pr.n.explain(a) }
