package substrait

import (
	"fmt"
	"slices"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Extension URNs of the Substrait functions the plans use (substrait-go v8 / Substrait
// 0.7x+ "extension:io.substrait:" URNs). arrow-go's compute/exprs resolves equal, gte, lt
// (functions_comparison) and and (functions_boolean) to its kernels.
const (
	URNComparison = extensions.SubstraitDefaultURNPrefix + "functions_comparison"
	URNBoolean    = extensions.SubstraitDefaultURNPrefix + "functions_boolean"
	URNAggregate  = extensions.SubstraitDefaultURNPrefix + "functions_aggregate_generic"
	URNDatetime   = extensions.SubstraitDefaultURNPrefix + "functions_datetime"
)

// Build returns the canonical Substrait plan of q. The relation tree, bottom up:
//
//	ReadRel      NamedTable [q.Table.Name], base schema of TableSchema (precision_timestamp_tz<9>)
//	FilterRel    and(and(equal($partition, 'p'), gte($timestamp, start)), lt($timestamp, end))
//	SortRel      timestamp, id ASC or DESC                    (plain scans with an order only)
//	ProjectRel   field references, emit = the references     (plain scans not selecting *)
//	AggregateRel count() | count(col) | min(ts) | max(ts)      (aggregate queries, no grouping)
//	AggregateRel group [time bin], count()…, then SortRel on the bin and a ProjectRel placing
//	             the bin column                                (grouped queries, groupby.go)
//	FetchRel     offset 0, count = LIMIT                      (only with a LIMIT)
//
// and the root names are the output names. Timestamp literals are precision timestamps with
// time zone in nanoseconds, the unit of the timestamp column (arrow-go compute/exprs needs the
// literal's unit to match the column's). `and` is nested binary because arrow-go maps it to
// and_kleene, which takes exactly two arguments. The sort sits below the projection so that
// ORDER BY may name columns that are not selected.
//
// q must be valid: Start < End, known columns, MIN/MAX on timestamp only.
func Build(q *Query) (*plan.Plan, error) {
	if err := validateQuery(q); err != nil {
		return nil, err
	}
	// A fresh builder per plan: a builder's extension set keeps every function it ever
	// resolved, and plan.Plan exports that whole set.
	b := plan.NewBuilderDefault()
	read := b.NamedScan([]string{q.Table.Name}, baseSchema(q.Table))
	ref := func(rel plan.Rel, i int) *expr.FieldReference {
		r, err := b.RootFieldRef(rel, int32(i))
		if err != nil {
			panic(err) // indices are in range by construction
		}
		return r
	}
	eq, err := b.ScalarFn(URNComparison, "equal", nil, ref(read, partitionField), expr.NewPrimitiveLiteral(string(q.Partition), false))
	if err != nil {
		return nil, fmt.Errorf("build equal: %w", err)
	}
	gte, err := b.ScalarFn(URNComparison, "gte", nil, ref(read, timestampField), timestampLiteral(q.Range.Start.UnixNano()))
	if err != nil {
		return nil, fmt.Errorf("build gte: %w", err)
	}
	lt, err := b.ScalarFn(URNComparison, "lt", nil, ref(read, timestampField), timestampLiteral(q.Range.End.UnixNano()))
	if err != nil {
		return nil, fmt.Errorf("build lt: %w", err)
	}
	and1, err := b.ScalarFn(URNBoolean, "and", nil, eq, gte)
	if err != nil {
		return nil, fmt.Errorf("build and: %w", err)
	}
	cond, err := b.ScalarFn(URNBoolean, "and", nil, and1, lt)
	if err != nil {
		return nil, fmt.Errorf("build and: %w", err)
	}
	var rel plan.Rel
	if rel, err = b.Filter(read, cond); err != nil {
		return nil, fmt.Errorf("build filter: %w", err)
	}
	var names []string
	if q.Group != nil {
		if rel, names, err = buildGrouped(b, q, rel); err != nil {
			return nil, err
		}
	} else if q.Aggregate != nil {
		measures := make([]plan.AggRelMeasure, len(q.Aggregate.Measures))
		for i, m := range q.Aggregate.Measures {
			var f *expr.AggregateFunction
			switch m.Func {
			case CountStar:
				f, err = b.AggregateFn(URNAggregate, "count", nil)
			case Count:
				idx, _ := columnIndex(q.Table, m.Column)
				// "count" is overloaded (count() and count(any)); substrait-go only finds
				// the one-argument variant by its compound name.
				f, err = b.AggregateFn(URNAggregate, "count:any", nil, ref(rel, idx))
			case Min:
				f, err = b.AggregateFn(URNDatetime, "min", nil, ref(rel, timestampField))
			case Max:
				f, err = b.AggregateFn(URNDatetime, "max", nil, ref(rel, timestampField))
			}
			if err != nil {
				return nil, fmt.Errorf("build %s: %w", m, err)
			}
			measures[i] = b.Measure(f, nil)
			names = append(names, m.Name)
		}
		if rel, err = b.GetRelBuilder().AggregateRel(rel, measures).Build(); err != nil {
			return nil, fmt.Errorf("build aggregate: %w", err)
		}
	} else {
		if q.Order != OrderNone {
			kind := types.SortAscNullsLast
			if q.Order == OrderDesc {
				kind = types.SortDescNullsFirst
			}
			sorts := []expr.SortField{{Expr: ref(rel, timestampField), Kind: kind}, {Expr: ref(rel, idField), Kind: kind}}
			if rel, err = b.Sort(rel, sorts...); err != nil {
				return nil, fmt.Errorf("build sort: %w", err)
			}
		}
		if !isIdentity(q) {
			refs := make([]expr.Expression, len(q.Columns))
			emit := make([]int32, len(q.Columns))
			for i, c := range q.Columns {
				idx, _ := columnIndex(q.Table, c.Column)
				refs[i] = ref(rel, idx)
				emit[i] = int32(numFields + i)
			}
			p, err := b.Project(rel, refs...)
			if err != nil {
				return nil, fmt.Errorf("build project: %w", err)
			}
			// A ProjectRel outputs its input columns followed by its expressions; the emit
			// mapping keeps only the expressions.
			if rel, err = p.Remap(emit...); err != nil {
				return nil, fmt.Errorf("build project: %w", err)
			}
		}
		for _, c := range q.Columns {
			names = append(names, c.Name)
		}
	}
	if q.Limit >= 0 {
		if rel, err = b.Fetch(rel, 0, q.Limit); err != nil {
			return nil, fmt.Errorf("build fetch: %w", err)
		}
	}
	p, err := b.Plan(rel, names)
	if err != nil {
		return nil, fmt.Errorf("build plan: %w", err)
	}
	return p, nil
}

// timestampLiteral is a non-null precision_timestamp_tz<9> literal.
func timestampLiteral(ns int64) expr.Literal {
	return expr.NewPrecisionTimestampTzLiteral(ns, types.PrecisionNanoSeconds, types.NullabilityRequired)
}

// isIdentity reports whether the selection is every column in table order under its own
// name (SELECT *), which needs no ProjectRel.
func isIdentity(q *Query) bool {
	names := columnNames(q.Table)
	return slices.Equal(names, columnsOf(q.Columns)) && slices.EqualFunc(q.Columns, names, func(c OutputColumn, n string) bool { return c.Name == n })
}

func columnsOf(cols []OutputColumn) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Column
	}
	return out
}

// validateQuery checks a Query built by hand before it is turned into a plan.
func validateQuery(q *Query) error {
	switch {
	case q == nil:
		return fmt.Errorf("substrait: nil query")
	case q.Table.Validate() != nil:
		return fmt.Errorf("substrait: invalid table: %w", q.Table.Validate())
	case q.Range.Empty():
		return ErrInvalidTimestampRange
	case checkNanoRange(q.Range.Start) != nil || checkNanoRange(q.Range.End) != nil:
		return ErrTimestampOutOfRange
	case q.Limit < -1:
		return ErrNegativeLimit
	}
	if q.Group != nil {
		return validateGroup(q)
	}
	if q.Aggregate != nil {
		if len(q.Columns) > 0 || len(q.Aggregate.Measures) == 0 {
			return fmt.Errorf("substrait: a query has either columns or measures")
		}
		for _, m := range q.Aggregate.Measures {
			idx, ok := columnIndex(q.Table, m.Column)
			switch {
			case m.Func == CountStar:
			case m.Func == Count && ok:
			case (m.Func == Min || m.Func == Max) && idx == timestampField:
			default:
				return fmt.Errorf("substrait: invalid measure %s", m)
			}
		}
		return nil
	}
	if len(q.Columns) == 0 {
		return fmt.Errorf("substrait: query selects no column")
	}
	for _, c := range q.Columns {
		if _, ok := columnIndex(q.Table, c.Column); !ok {
			return fmt.Errorf("substrait: unknown column %q", c.Column)
		}
	}
	return nil
}
