package pushdown

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
)

// GroupKind is what one grouping key of a routed partial aggregate is.
type GroupKind uint8

const (
	// GroupOther is any key the stores cannot group by.
	GroupOther GroupKind = iota
	// GroupPartition is the table's partition column: constant in every bucket (a bucket
	// belongs to one partition), so the executor adds the bucket's partition key to its
	// store's answer.
	GroupPartition
	// GroupTimeBin is one time bin of the timestamp (Group.Bin: date_trunc or date_bin in
	// UTC, as substrait.TimeBinOf recognises them).
	GroupTimeBin
)

// Group is one grouping key of Shape.
type Group struct {
	Kind GroupKind
	Bin  routing.Binning // GroupTimeBin's bin
}

// Func is a measure's aggregate function as the executor knows it.
type Func uint8

const (
	// FuncOther is any function the stores do not answer (sum, avg…).
	FuncOther Func = iota
	// FuncCountStar is count(*) (count(1) binds to it).
	FuncCountStar
	// FuncCount is count(expression).
	FuncCount
	// FuncMin and FuncMax are min and max of their argument.
	FuncMin
	FuncMax
)

// Measure is one measure of Shape.
type Measure struct {
	Func Func
	// Name is the function's name as the executor spells it (for the reason a shape is not
	// rewritten: "measure sum").
	Name string
	// Column is the base column the argument references directly ("timestamp", the
	// partition column…), or "" when the argument is another expression or there is none.
	Column string
	// Filter and Distinct report a FILTER clause and DISTINCT.
	Filter, Distinct bool
}

// Shape is the narrow form of a routed partial aggregate the executor builds for the rule:
// each fragment aggregates its bucket's rows of one routed read, grouped by Groups, computing
// Measures, after Residual conjuncts beyond the routed predicate. Partitions is how many
// partitions the read lists (an analytical read's discovered partitions count as many).
type Shape struct {
	Residual   int
	Groups     []Group
	Measures   []Measure
	Partitions int
}

// SourceKind says where one partial-state column of a rewritten fragment comes from.
type SourceKind uint8

const (
	// SourcePartition is the bucket's partition key (the executor adds it).
	SourcePartition SourceKind = iota + 1
	// SourceBin is the store answer's bin column.
	SourceBin
	// SourceMeasure is the store answer's column of Rewrite.Measures[Source.Measure].
	SourceMeasure
)

// Source is where one partial-state column comes from.
type Source struct {
	Kind    SourceKind
	Measure int // index into Rewrite.Measures, for SourceMeasure
}

// Rewrite is the store-aggregate rewrite of one routed partial aggregate (Match): every
// bucket is asked Request (the store answers Measures, grouped by Bin when set, without
// reading rows), and the fragment's partial state is built column by column from Columns
// (groups in the shape's order, then measures). Immutable once returned; safe to share.
type Rewrite struct {
	// Measures are asked of every bucket, each once, in first-use order.
	Measures []routing.Measure
	// Bin, when set, groups each bucket's answer by one time bin of the timestamp.
	Bin *routing.Binning
	// Partition reports a grouping by the partition column.
	Partition bool
	// Columns maps the partial state's columns onto the answer and the partition key.
	Columns []Source
	// MinCol and MaxCol are the partial-state columns of the first min and max measure when
	// the start-order policy for extremes applies (Extremes), else -1.
	MinCol, MaxCol int
	names          []string
}

// Match matches s against the aggregates the stores answer: count(*), min(timestamp) and
// max(timestamp), grouped by nothing, by the partition column, by one time bin of the
// timestamp, or by both, over only the routed predicate. It returns the rewrite, or nil and
// the reason it does not apply (a shape, never a value). A shape it cannot rewrite is left to
// read rows (Grafana Mimir's astmapper rule: an unsupported subtree is not an error).
func Match(s Shape) (*Rewrite, string) {
	if s.Residual > 0 {
		return nil, fmt.Sprintf("%d residual conjunct(s) beyond the routed predicate", s.Residual)
	}
	if len(s.Groups) == 0 && len(s.Measures) == 0 {
		return nil, "no measure"
	}
	rw := &Rewrite{MinCol: -1, MaxCol: -1}
	for _, g := range s.Groups {
		switch {
		case g.Kind == GroupPartition && !rw.Partition:
			rw.Partition = true
			rw.Columns = append(rw.Columns, Source{Kind: SourcePartition})
		case g.Kind == GroupTimeBin && rw.Bin == nil:
			bin := g.Bin
			rw.Bin = &bin
			rw.Columns = append(rw.Columns, Source{Kind: SourceBin})
		case len(s.Groups) == 1:
			return nil, "grouping other than the partition column or one time bin of timestamp"
		default:
			return nil, fmt.Sprintf("grouping by %d keys other than the partition column and one time bin of timestamp", len(s.Groups))
		}
	}
	for _, m := range s.Measures {
		var want routing.Measure
		switch {
		case m.Filter:
			return nil, "a measure with a FILTER clause"
		case m.Func == FuncCountStar:
			want = routing.CountStar
		case (m.Func == FuncMin || m.Func == FuncMax) && m.Column != routing.TimeColumn:
			return nil, fmt.Sprintf("%s of anything but timestamp", strings.ToLower(m.Name))
		case m.Func == FuncMin:
			want = routing.MinTime
		case m.Func == FuncMax:
			want = routing.MaxTime
		default:
			return nil, fmt.Sprintf("measure %s (the stores answer count(*), min(timestamp) and max(timestamp))", m.Name)
		}
		idx := -1
		for i, have := range rw.Measures {
			if have == want {
				idx = i
			}
		}
		if idx < 0 {
			idx = len(rw.Measures)
			rw.Measures = append(rw.Measures, want)
		}
		rw.Columns = append(rw.Columns, Source{Kind: SourceMeasure, Measure: idx})
		rw.names = append(rw.names, want.String())
	}
	if len(rw.Measures) == 0 {
		// Grouped without measures (SELECT DISTINCT origin, a GROUP BY alone): the groups
		// are those holding records, which a count finds.
		rw.Measures = []routing.Measure{routing.CountStar}
	}
	// The start-order policy for extremes: every measure a min or max of the timestamp,
	// ungrouped, one partition.
	if len(s.Groups) == 0 && s.Partitions == 1 && !slicesContains(rw.Measures, routing.CountStar) {
		for i, c := range rw.Columns {
			switch m := rw.Measures[c.Measure]; {
			case m == routing.MinTime && rw.MinCol < 0:
				rw.MinCol = i
			case m == routing.MaxTime && rw.MaxCol < 0:
				rw.MaxCol = i
			}
		}
	}
	return rw, ""
}

func slicesContains(ms []routing.Measure, m routing.Measure) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// Request is the request every bucket of the rewrite is asked over rng (clipped to each
// bucket by routing.DurableTable.AggregateBucket), its batches allocated from alloc.
func (rw *Rewrite) Request(rng routing.TimeRange, alloc memory.Allocator) routing.AggregateRequest {
	return routing.AggregateRequest{Range: rng, Bin: rw.Bin, Measures: rw.Measures, Alloc: alloc}
}

// Extremes reports whether the start-order policy for extremes applies (NewStartOrder): the
// aggregate is ungrouped over one partition and every measure is min or max of the timestamp.
func (rw *Rewrite) Extremes() bool { return rw.MinCol >= 0 || rw.MaxCol >= 0 }

// MeasureNames lists the measures in the shape's order, as SQL spells them (count(*),
// min(timestamp)…).
func (rw *Rewrite) MeasureNames() []string { return rw.names }

// Operation names the span of a query whose aggregates were rewritten, from their measures:
// COUNT when every measure is count(*), MIN, MAX or MINMAX when every one is min or max of the
// timestamp, AGGREGATE for a mix; "" without a rewrite. (The reference's span operations,
// docs/pulpitum-v4.md §6.1; see docs/.)
func Operation(rws []*Rewrite) string {
	var counts, mins, maxs int
	for _, rw := range rws {
		for _, c := range rw.Columns {
			if c.Kind != SourceMeasure {
				continue
			}
			switch rw.Measures[c.Measure].Func {
			case routing.MeasureCount:
				counts++
			case routing.MeasureMin:
				mins++
			default:
				maxs++
			}
		}
	}
	switch {
	case len(rws) == 0:
		return ""
	case mins == 0 && maxs == 0:
		return "COUNT"
	case counts > 0:
		return "AGGREGATE"
	case maxs == 0:
		return "MIN"
	case mins == 0:
		return "MAX"
	}
	return "MINMAX"
}

// Explain describes the rewrite for EXPLAIN: shapes only, never a partition value or
// literal. strategy is the table's bucket strategy.
func (rw *Rewrite) Explain(strategy routing.Strategy) []string {
	what := "[" + strings.Join(rw.names, ", ") + "]"
	var by []string
	if rw.Partition {
		by = append(by, "the partition column")
	}
	if rw.Bin != nil {
		by = append(by, rw.Bin.Shape())
	}
	if len(by) > 0 {
		what += " grouped by " + strings.Join(by, " and ")
	}
	out := []string{
		"StoreAggregate " + what + ": pushed down to the bucket's partial-aggregate port (hot: one key-only statement; archived: manifest record count or trusted statistics, decoding only event_time where they do not settle a row group or page)",
	}
	if rw.Partition {
		out = append(out, "  each bucket holds one partition: its answer is that partition's group")
	}
	switch {
	case rw.Bin != nil && routing.StrategyInsideBins(strategy, *rw.Bin):
		out = append(out, fmt.Sprintf("  every %s bucket lies inside one bin: each bucket is asked ungrouped (hot count, manifest record count or statistics)", strategy))
	case rw.Bin != nil:
		out = append(out, "  a bucket whose part of the range lies inside one bin is asked ungrouped; others answer per bin (one GROUP BY statement per hot bucket)")
	}
	if rw.Extremes() {
		out = append(out, "  buckets start in time order from the ends the measures need; none starts once earlier ones answered")
	}
	return append(out, "  a bucket the store cannot answer without rows (untrusted statistics) reads its rows:")
}
