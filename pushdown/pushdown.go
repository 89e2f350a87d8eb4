package pushdown

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// Kind says which executor path a physical plan takes.
type Kind uint8

const (
	// KindScan reads records through the routed scan (bounded parallel bucket fan-out,
	// ordered merge) and runs the generic operators on them: projection, order, limit and,
	// when Aggregate is set, the aggregate. It is correct for every supported shape.
	KindScan Kind = iota
	// KindCount answers COUNT(*) through the durable-table count port
	// (routing.DurableTable.Count): per bucket, a hot count or archive statistics, never
	// records (seed: "Push down only recognized DataFusion aggregates").
	KindCount
	// KindMinMax answers MIN(timestamp)/MAX(timestamp) per bucket without records (the
	// seed's next candidates). Produced only when Options.MinMax says the executor has it.
	KindMinMax
	// KindHistogram answers COUNT(*) grouped by a time bin of the timestamp through the
	// durable-table per-bin count port (routing.DurableTable.CountByBin): per bucket, a
	// bucket count when the bucket lies in one bin, else one GROUP BY statement (hot) or
	// statistics and event_time decoding (archive), never values (histogram.go).
	KindHistogram
)

// String returns "scan", "count", "minmax" or "histogram".
func (k Kind) String() string {
	switch k {
	case KindScan:
		return "scan"
	case KindCount:
		return "count"
	case KindMinMax:
		return "minmax"
	case KindHistogram:
		return "histogram"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Options configure the planner.
type Options struct {
	// Pushdown enables aggregate pushdown. The seed's rollout puts the COUNT(*) path behind an
	// opt-in flag first; when false every query takes the scan path.
	Pushdown bool
	// MinMax declares that the executor implements KindMinMax. Until it does, MIN/MAX of the
	// timestamp are recognised (and said so in Decisions) but run on the scan path.
	MinMax bool
}

// Aggregate is the ungrouped aggregation of an aggregate query: its measures in output order.
type Aggregate = substrait.Aggregate

// Physical is the executor's plan for one query. It holds no Substrait: everything the
// executor needs is here, and Decisions explains the choice for EXPLAIN. A Physical is not
// modified after Plan returns; Partition must not be modified.
type Physical struct {
	// Kind is the executor path.
	Kind Kind
	// Table is the routed table read.
	Table routing.TableDef
	// Partition is the pinned partition value (routing.Query.PartitionKey).
	Partition []byte
	// Range is the finite half-open range [Start, End), UTC, Start < End.
	Range routing.TimeRange
	// Buckets is the number of strategy buckets the range intersects (what the fan-out
	// visits).
	Buckets int
	// Columns are the table columns the scan path must read, in output order for plain
	// scans; for aggregates on the scan path, the aggregates' argument columns (none for
	// COUNT(*)); nil for pushed-down kinds other than KindMinMax ([timestamp]).
	Columns []string
	// Ordered is set when the query has an ORDER BY; Desc gives its direction. The order is
	// always the clustering key (timestamp, id).
	Ordered bool
	Desc    bool
	// Limit is the maximum number of output rows, -1 when none. For aggregates it applies to
	// the one-row result (LIMIT 0 returns no row).
	Limit int64
	// Aggregate is set for every aggregate query, pushed down or not; Kind says where it
	// runs. Nil for plain scans.
	Aggregate *Aggregate
	// Group is set for COUNT(*) grouped by a time bin (KindHistogram, or the scan path when
	// pushdown is off): the binning, the bin column's name and output position. Ordered and
	// Desc then give the order of the bins and Limit bounds their number.
	Group *substrait.TimeBin
	// Schema is the output schema: the selected columns under their output names, or one
	// field per measure (COUNT(*) → non-null int64 named "count" unless aliased; MIN/MAX →
	// nullable timestamp[ns, tz=UTC]). It equals the prepared statement's dataset schema.
	Schema *arrow.Schema
	// Decisions are human-readable pushdown decisions for EXPLAIN, in order. They name
	// tables, columns and counts but never partition values or literals, so they may also be
	// logged and traced.
	Decisions []string
}

// Plan decides how to execute p. It validates p with substrait.Analyze, which walks the
// relation tree once (ReadRel, FilterRel, SortRel, ProjectRel, AggregateRel, FetchRel) and
// refuses unknown or unsupported relation kinds with an error; p is never modified. Then it
// matches the aggregate subtree:
//
//   - every measure COUNT(*) over the one routed scan, whose only predicate is the routed one
//     (one partition equality, finite bounds: Analyze refuses anything else), no grouping,
//     DISTINCT, join or window (unsupported by the front ends) → KindCount when
//     opts.Pushdown, else the scan path with the count aggregate (seed, "Push down only
//     recognized DataFusion aggregates");
//   - every measure MIN(timestamp) or MAX(timestamp) → a KindMinMax candidate: KindMinMax
//     when opts.Pushdown and opts.MinMax, else the scan path with the aggregate;
//   - COUNT(*) grouped by one time bin of the timestamp (date_trunc, date_bin) →
//     KindHistogram when opts.Pushdown, else the scan path counting per bin (histogram.go);
//   - anything else (COUNT(column), mixed measures, plain scans) → the scan path, unchanged.
//
// Errors are substrait *Error values (codes for the Flight layer) or internal errors.
func Plan(p *plan.Plan, cat substrait.Catalog, opts Options) (*Physical, error) {
	q, err := substrait.Analyze(p, cat)
	if err != nil {
		return nil, err
	}
	return PlanQuery(q, opts), nil
}

// PlanQuery decides how to execute an already analysed query (see Plan), for callers that
// hold a substrait.Query (Statement.Query) and need no Substrait round trip. q is not
// modified.
func PlanQuery(q *substrait.Query, opts Options) *Physical {
	ph := &Physical{
		Kind:      KindScan,
		Table:     q.Table,
		Partition: q.Partition,
		Range:     q.Range,
		Buckets:   bucketCount(q.Table.Strategy, q.Range),
		Limit:     q.Limit,
		Schema:    q.Schema(),
	}
	ph.decide(fmt.Sprintf("routed scan of table %q: one partition pinned by equality, finite range over %d %s bucket(s)",
		q.Table.Name, ph.Buckets, q.Table.Strategy))
	if q.Aggregate == nil {
		for _, c := range q.Columns {
			ph.Columns = append(ph.Columns, c.Column)
		}
		ph.Ordered, ph.Desc = q.Order != substrait.OrderNone, q.Order == substrait.OrderDesc
		ph.decide("scan path: read columns [" + strings.Join(ph.Columns, ", ") + "]" + orderAndLimit(ph))
		return ph
	}
	if q.Group != nil {
		return planHistogram(q, ph, opts)
	}
	agg := &substrait.Aggregate{Measures: append([]substrait.Measure(nil), q.Aggregate.Measures...)}
	ph.Aggregate = agg
	counts, minmax := 0, 0
	for _, m := range agg.Measures {
		switch m.Func {
		case substrait.CountStar:
			counts++
		case substrait.Min, substrait.Max:
			minmax++
		}
	}
	all := len(agg.Measures)
	switch {
	case counts == all && opts.Pushdown:
		ph.Kind = KindCount
		ph.decide("COUNT(*) over one routed scan with only the routed predicate: pushed down to the durable-table count (no record is read)")
	case counts == all:
		ph.decide("COUNT(*) is a pushdown candidate but pushdown is disabled: counted on the scan path")
	case minmax == all && opts.Pushdown && opts.MinMax:
		ph.Kind = KindMinMax
		ph.Columns = []string{substrait.TimestampColumn}
		ph.decide("MIN/MAX(timestamp) over one routed scan with only the routed predicate: pushed down (only event times are read)")
	case minmax == all && opts.Pushdown:
		ph.decide("MIN/MAX(timestamp) is a pushdown candidate but the executor has no MIN/MAX pushdown yet: aggregated on the scan path")
	case minmax == all:
		ph.decide("MIN/MAX(timestamp) is a pushdown candidate but pushdown is disabled: aggregated on the scan path")
	default:
		ph.decide("aggregates " + measureList(agg) + " are not pushed down (seed: only COUNT(*), then MIN/MAX(timestamp); COUNT(column) needs explicit null semantics): aggregated on the scan path")
	}
	if ph.Kind == KindScan {
		ph.Columns = argumentColumns(q.Table, agg)
		read := "scan path: read columns [" + strings.Join(ph.Columns, ", ") + "]"
		if len(ph.Columns) == 0 {
			read = "scan path: read rows, no column value needed"
		}
		ph.decide(read + orderAndLimit(ph))
	} else if ph.Limit >= 0 {
		ph.decide(fmt.Sprintf("limit %d applied to the aggregate result", ph.Limit))
	}
	return ph
}

func (ph *Physical) decide(s string) { ph.Decisions = append(ph.Decisions, s) }

func orderAndLimit(ph *Physical) string {
	var b strings.Builder
	switch {
	case ph.Ordered && ph.Desc:
		b.WriteString(", order timestamp DESC, id DESC")
	case ph.Ordered:
		b.WriteString(", order timestamp ASC, id ASC")
	}
	if ph.Limit >= 0 {
		fmt.Fprintf(&b, ", limit %d", ph.Limit)
	}
	if ph.Aggregate != nil {
		b.WriteString(", then aggregate " + measureList(ph.Aggregate))
	}
	return b.String()
}

func measureList(agg *Aggregate) string {
	parts := make([]string, len(agg.Measures))
	for i, m := range agg.Measures {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}

// argumentColumns returns the distinct argument columns of the measures, in table order.
func argumentColumns(def routing.TableDef, agg *Aggregate) []string {
	need := map[string]bool{}
	for _, m := range agg.Measures {
		if m.Column != "" {
			need[m.Column] = true
		}
	}
	var out []string
	for _, f := range substrait.TableSchema(def).Fields() {
		if need[f.Name] {
			out = append(out, f.Name)
		}
	}
	return out
}

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
