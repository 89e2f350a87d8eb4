package substrait

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flightsrv/flightsrv/routing"
)

// Query is the logical content of a supported plan: one routed scan pinned to one partition
// and a finite half-open time range, then either a column selection, ungrouped aggregates, or
// COUNT(*) grouped by a time bin of the timestamp (Group), an optional order and an optional
// limit. Analyze derives it from a *plan.Plan; the SQL front end and FromSubstrait build plans
// from it.
type Query struct {
	// Table is the routed table scanned.
	Table routing.TableDef
	// Partition is the pinned partition value (the partition column equality).
	Partition []byte
	// Range is the finite half-open range [Start, End) of the timestamp bounds, UTC,
	// Start < End.
	Range routing.TimeRange
	// Columns are the output columns of a plain scan, in output order; nil for aggregate
	// queries.
	Columns []OutputColumn
	// Aggregate holds the aggregates of an aggregate query (one output row without Group; one
	// row per non-empty bin with it); nil for plain scans.
	Aggregate *Aggregate
	// Group, when set, groups the aggregate (COUNT(*) measures only) by a time bin of the
	// timestamp column; see TimeBin.
	Group *TimeBin
	// Order is the requested row order of a plain scan; of a grouped query, the order of the
	// bins (OrderAsc or OrderDesc on the bin column; OrderNone emits them ascending). Always
	// OrderNone for ungrouped aggregates.
	Order Order
	// Limit is the maximum number of output rows, or -1 when there is none.
	Limit int64
}

// OutputColumn is one output column of a plain scan.
type OutputColumn struct {
	// Column is the table column read (a name of TableSchema).
	Column string
	// Name is the output name: the SQL alias, or the column name.
	Name string
}

// Order is the row order of a scan. Rows of a routed table are totally ordered by
// (timestamp, id), the physical clustering key (pulpitum-reference.md §3.2); `ORDER BY
// timestamp` alone is planned as the full key in the same direction.
type Order uint8

const (
	// OrderNone: no ORDER BY; the executor may return rows in any order.
	OrderNone Order = iota
	// OrderAsc: ORDER BY timestamp ASC, id ASC.
	OrderAsc
	// OrderDesc: ORDER BY timestamp DESC, id DESC.
	OrderDesc
)

// String returns "none", "timestamp ASC, id ASC" or "timestamp DESC, id DESC".
func (o Order) String() string {
	switch o {
	case OrderAsc:
		return "timestamp ASC, id ASC"
	case OrderDesc:
		return "timestamp DESC, id DESC"
	}
	return "none"
}

// AggFunc is an aggregate function the planner accepts.
type AggFunc uint8

const (
	// CountStar is COUNT(*) (also COUNT(<non-null constant>)): the number of rows. Substrait
	// count() with no argument (functions_aggregate_generic).
	CountStar AggFunc = iota + 1
	// Count is COUNT(column): the number of non-null values of Column. The seed keeps it off
	// the pushdown path ("COUNT(column)… require explicit null/value semantics").
	Count
	// Min is MIN(timestamp) (functions_datetime min): the earliest instant, NULL on no rows.
	Min
	// Max is MAX(timestamp) (functions_datetime max): the latest instant, NULL on no rows.
	Max
)

// String returns the SQL spelling: COUNT(*), COUNT, MIN or MAX.
func (f AggFunc) String() string {
	switch f {
	case CountStar:
		return "COUNT(*)"
	case Count:
		return "COUNT"
	case Min:
		return "MIN"
	case Max:
		return "MAX"
	}
	return fmt.Sprintf("aggfunc(%d)", uint8(f))
}

// Measure is one aggregate output column.
type Measure struct {
	// Func is the aggregate function.
	Func AggFunc
	// Column is the argument column (a name of TableSchema); empty for CountStar.
	Column string
	// Name is the output name: the SQL alias, or PostgreSQL's default ("count", "min",
	// "max").
	Name string
}

// String returns the measure as SQL, e.g. COUNT(*) or MIN(timestamp).
func (m Measure) String() string {
	if m.Func == CountStar {
		return "COUNT(*)"
	}
	return m.Func.String() + "(" + m.Column + ")"
}

// Aggregate is the aggregation of an aggregate query: no grouping, one output row.
type Aggregate struct {
	// Measures are the aggregate output columns in output order.
	Measures []Measure
}

// Schema returns the query's output schema: OutputSchema of its table, columns and
// aggregate; for a grouped query, the bin column (non-null timestamp[ns, tz=UTC]) at
// Group.Index and one non-null int64 per COUNT(*).
func (q *Query) Schema() *arrow.Schema {
	if q.Group != nil {
		return groupedSchema(q.Aggregate, q.Group)
	}
	return OutputSchema(q.Table, q.Columns, q.Aggregate)
}

// OutputSchema returns the Arrow schema of a result: for a plain scan, the selected table
// fields renamed to their output names (types and nullability of TableSchema); for an
// aggregate, one field per measure: COUNT(*) and COUNT(column) are non-null int64 (Substrait's
// count returns i64 and PostgreSQL's count bigint; the seed's PulpitumCountExec emitted UInt64,
// which arrow-go's database/sql driver cannot read, so flightsrv follows Substrait), MIN and
// MAX(timestamp) are nullable timestamp[ns, tz=UTC] (NULL when no row matches).
func OutputSchema(def routing.TableDef, cols []OutputColumn, agg *Aggregate) *arrow.Schema {
	if agg != nil {
		fields := make([]arrow.Field, len(agg.Measures))
		for i, m := range agg.Measures {
			switch m.Func {
			case Min, Max:
				fields[i] = arrow.Field{Name: m.Name, Type: timestampType, Nullable: true}
			default:
				fields[i] = arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Int64}
			}
		}
		return arrow.NewSchema(fields, nil)
	}
	table := TableSchema(def)
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		idx, _ := columnIndex(def, c.Column)
		f := table.Field(idx)
		f.Name = c.Name
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil)
}

// operand is the value side of a conjunct or LIMIT: a literal, or a parameter $param
// (param ≥ 1) whose value arrives at bind time.
type operand struct {
	param int
	str   string    // partition literal
	ts    time.Time // timestamp literal, UTC
	n     int64     // LIMIT literal
}

type atomKind uint8

const (
	atomPartition atomKind = iota + 1 // partition_col = value
	atomLower                         // timestamp >= value
	atomUpper                         // timestamp < value
)

// atom is one accepted conjunct of the routed predicate, normalised (column on the left,
// operator swapped when the literal was on the left).
type atom struct {
	kind atomKind
	val  operand
}

// collector applies the routed-predicate rules of pulpitum-reference.md §5.2–§5.3 to the
// conjuncts of a WHERE clause or Substrait condition, read left to right. Shape errors are
// returned as soon as the offending conjunct is added; finish runs the final checks in the
// reference's order (start, end, range, partition). Values of parameters are unknown until
// bind time: a nil resolve (prepare time) skips the checks that need them.
type collector struct {
	resolve func(operand) (any, bool)
	atoms   []atom

	partSeen, lowerSeen, upperSeen bool
	part                           *string
	start, end                     *time.Time
}

// add records one accepted conjunct.
func (c *collector) add(a atom) error {
	var v any
	known := a.val.param == 0
	switch {
	case known:
		switch a.kind {
		case atomPartition:
			v = a.val.str
		default:
			v = a.val.ts
		}
	case c.resolve != nil:
		v, known = c.resolve(a.val)
	}
	switch a.kind {
	case atomPartition:
		c.partSeen = true
		if known {
			s := v.(string)
			if c.part != nil && *c.part != s {
				return ErrConflictingShardEquality
			}
			c.part = &s
		}
	case atomLower:
		if c.lowerSeen {
			return ErrConflictingTimestampBounds
		}
		c.lowerSeen = true
		if known {
			t := v.(time.Time)
			c.start = &t
		}
	case atomUpper:
		if c.upperSeen {
			return ErrConflictingTimestampBounds
		}
		c.upperSeen = true
		if known {
			t := v.(time.Time)
			c.end = &t
		}
	}
	c.atoms = append(c.atoms, a)
	return nil
}

// finish runs the reference's final checks: start, end, range, partition. The range check
// is skipped when a bound is a parameter not yet known.
func (c *collector) finish() error {
	switch {
	case !c.lowerSeen:
		return ErrMissingTimestampStart
	case !c.upperSeen:
		return ErrMissingTimestampEnd
	case c.start != nil && c.end != nil && !c.start.Before(*c.end):
		return ErrInvalidTimestampRange
	case !c.partSeen:
		return ErrMissingShardEquality
	}
	return nil
}

// routed returns the pinned partition and range once every value is known.
func (c *collector) routed() ([]byte, routing.TimeRange) {
	return []byte(*c.part), routing.TimeRange{Start: *c.start, End: *c.end}
}
