package pushdown

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// Options configure the planner.
type Options struct {
	// Pushdown enables the aggregate pushdown rewrite (the --pushdown flag; seed rollout: a
	// configuration flag). When false every fragment reads rows.
	Pushdown bool
}

// Aggregate is the ungrouped aggregation of an aggregate query: its measures in output order.
type Aggregate = substrait.Aggregate

// Physical binds a validated plan's routed read for the executor (scan.Prepare): the table,
// the pinned partition and the finite range, with what EXPLAIN, the bucket bound and the
// metrics need. The aggregate pushdown itself is a rewrite of the executor's fragments, made on
// the relations it lowers (scan/pushdown.go), so it applies wherever a store-answerable
// aggregate sits in a plan. A Physical is not modified after Plan returns; Partition must not
// be modified.
type Physical struct {
	// Table is the routed table read.
	Table routing.TableDef
	// Partition is the pinned partition value (routing.Query.PartitionKey).
	Partition []byte
	// Range is the finite half-open range [Start, End), UTC, Start < End.
	Range routing.TimeRange
	// Buckets is the number of strategy buckets the range intersects (what the fan-out
	// visits).
	Buckets int
	// Aggregate is set for every aggregate query (its measures); nil for plain scans.
	Aggregate *Aggregate
	// Group is set for COUNT(*) grouped by a time bin: the binning, the bin column's name and
	// output position.
	Group *substrait.TimeBin
	// Schema is the output schema; it equals the prepared statement's dataset schema.
	Schema *arrow.Schema
	// Decisions are human-readable planning decisions for EXPLAIN, in order. They name
	// tables, shapes and counts but never partition values or literals, so they may also be
	// logged and traced. The executor's EXPLAIN adds the pushdown decision of each routed
	// aggregate.
	Decisions []string
}

// Plan binds the routed read of p. It validates p with substrait.Analyze, which walks the
// relation tree once (ReadRel, FilterRel, SortRel, ProjectRel, AggregateRel, FetchRel) and
// refuses unknown or unsupported relation kinds with an error (Mimir's astmapper rule: known
// shapes it cannot rewrite are not errors, unknown node kinds are); p is never modified.
// Errors are substrait *Error values (codes for the Flight layer) or internal errors.
func Plan(p *plan.Plan, cat substrait.Catalog, opts Options) (*Physical, error) {
	q, err := substrait.Analyze(p, cat)
	if err != nil {
		return nil, err
	}
	return PlanQuery(q, opts), nil
}

// PlanQuery binds an already analysed query (see Plan), for callers that hold a
// substrait.Query (Statement.Query) and need no Substrait round trip. q is not modified.
func PlanQuery(q *substrait.Query, opts Options) *Physical {
	ph := &Physical{
		Table:     q.Table,
		Partition: q.Partition,
		Range:     q.Range,
		Buckets:   bucketCount(q.Table.Strategy, q.Range),
		Schema:    q.Schema(),
	}
	if q.Aggregate != nil {
		ph.Aggregate = &substrait.Aggregate{Measures: append([]substrait.Measure(nil), q.Aggregate.Measures...)}
	}
	if q.Group != nil {
		g := *q.Group
		ph.Group = &g
	}
	ph.decide(fmt.Sprintf("routed scan of table %q: one partition pinned by equality, finite range over %d %s bucket(s)",
		q.Table.Name, ph.Buckets, q.Table.Strategy))
	if opts.Pushdown {
		ph.decide("aggregate pushdown on: a fragment whose partial aggregate is count(*), min(timestamp) or max(timestamp), grouped by nothing or one time bin, over only the routed predicate asks its bucket's store")
	} else {
		ph.decide("aggregate pushdown off: every fragment reads rows")
	}
	return ph
}

func (ph *Physical) decide(s string) { ph.Decisions = append(ph.Decisions, s) }

// bucketCount returns the number of buckets of strategy s intersecting the non-empty range
// r, computed from calendar arithmetic (routing.BucketsForRange would allocate every
// bucket of a range that may span centuries of days).
func bucketCount(s routing.Strategy, r routing.TimeRange) int {
	if r.Empty() || !s.Valid() {
		return 0
	}
	first, last := r.Start.UTC(), r.End.UTC().Add(-time.Nanosecond)
	switch s {
	case routing.CalendarYearUTC:
		return last.Year() - first.Year() + 1
	case routing.CalendarMonthUTC:
		return (last.Year()*12 + int(last.Month())) - (first.Year()*12 + int(first.Month())) + 1
	default:
		_, a, _ := s.Bounds(first)
		_, b, _ := s.Bounds(last)
		return int((b.Unix()-a.Unix())/86400) + 1 // not Sub: a Duration saturates at 292 years
	}
}

// BucketCount returns the number of buckets of strategy s that the non-empty range r
// intersects, from calendar arithmetic (no bucket is allocated); 0 for an empty range.
func BucketCount(s routing.Strategy, r routing.TimeRange) int { return bucketCount(s, r) }
