package substrait

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	substraitgo "github.com/substrait-io/substrait-go/v8"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flightsrv/flightsrv/routing"
)

// FromSubstrait validates a client-supplied Substrait plan (the serialized substrait.Plan
// protobuf of Flight SQL's CommandStatementSubstraitPlan) against the catalog and returns
// the canonical plan of the same query (Build of Analyze): client plans and SQL take the same
// road from here on. Bytes that do not decode, or decode into an inconsistent plan, are
// ErrInvalidPlan; relations and expressions outside Analyze's shapes are Unimplemented or
// break the routed contract (InvalidArgument).
func FromSubstrait(planBytes []byte, cat Catalog) (*plan.Plan, error) {
	p, err := decodePlan(planBytes)
	if err != nil {
		return nil, err
	}
	q, err := Analyze(p, cat)
	if err != nil {
		return nil, err
	}
	return Build(q)
}

// decodePlan decodes a serialized substrait.Plan with substrait-go's decoder, which panics on some malformed input (a nil
// literal from an unsupported literal encoding reaches code that dereferences it). The plan
// is first normalised into what substrait-go v8.1.1 decodes (normalizePlan).
func decodePlan(planBytes []byte) (p *plan.Plan, err error) {
	var pb substraitpb.Plan
	if err := proto.Unmarshal(planBytes, &pb); err != nil {
		return nil, ErrInvalidPlan
	}
	normalizePlan(pb.ProtoReflect())
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, ErrInvalidPlan
		}
	}()
	p, err = plan.FromProto(&pb, collection())
	if err != nil {
		if errors.Is(err, substraitgo.ErrNotImplemented) {
			return nil, unimplemented("a relation or expression kind in the Substrait plan")
		}
		if errors.Is(err, substraitgo.ErrNotFound) {
			return nil, unimplemented("a function or type extension of the Substrait plan")
		}
		return nil, ErrInvalidPlan
	}
	return p, nil
}

// normalizePlan rewrites, in every relation of m (any message of a plan), the valid
// encodings substrait-go v8.1.1 cannot decode into equivalent ones it can: a relation without
// its optional RelCommon (substrait-python writes none on an AggregateRel) gets an empty one
// (direct output, as the absence means; the decoder dereferences it); a FetchRel whose offset
// or count is an integer literal expression (offset_expr, count_expr: how current producers
// write them) or absent gets the integer fields (offset 0, count -1 for all rows when absent).
func normalizePlan(m protoreflect.Message) {
	if fd := m.Descriptor().Fields().ByName("common"); fd != nil && fd.Kind() == protoreflect.MessageKind &&
		fd.Message().FullName() == "substrait.RelCommon" && !m.Has(fd) {
		m.Set(fd, protoreflect.ValueOfMessage((&substraitpb.RelCommon{}).ProtoReflect()))
	}
	if f, ok := m.Interface().(*substraitpb.FetchRel); ok {
		switch o := f.GetOffsetMode().(type) {
		case nil:
			f.OffsetMode = &substraitpb.FetchRel_Offset{Offset: 0}
		case *substraitpb.FetchRel_OffsetExpr:
			if n, ok := integerLiteral(o.OffsetExpr); ok {
				f.OffsetMode = &substraitpb.FetchRel_Offset{Offset: n}
			}
		}
		switch c := f.GetCountMode().(type) {
		case nil:
			f.CountMode = &substraitpb.FetchRel_Count{Count: -1}
		case *substraitpb.FetchRel_CountExpr:
			if n, ok := integerLiteral(c.CountExpr); ok {
				f.CountMode = &substraitpb.FetchRel_Count{Count: n}
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				normalizePlan(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind:
			normalizePlan(v.Message())
		}
		return true
	})
}

// integerLiteral reads a non-null integer literal expression.
func integerLiteral(e *substraitpb.Expression) (int64, bool) {
	l := e.GetLiteral()
	if l == nil || l.GetNull() != nil {
		return 0, false
	}
	switch v := l.GetLiteralType().(type) {
	case *substraitpb.Expression_Literal_I64:
		return v.I64, true
	case *substraitpb.Expression_Literal_I32:
		return int64(v.I32), true
	case *substraitpb.Expression_Literal_I16:
		return int64(v.I16), true
	case *substraitpb.Expression_Literal_I8:
		return int64(v.I8), true
	}
	return 0, false
}

// lineage says what one output column of a relation is: a table column (col ≥ 0), an
// aggregate measure (measure ≥ 0) or the time bin of a grouped aggregate (bin).
type lineage struct {
	col     int
	measure int
	bin     bool
}

// relState is what Analyze knows about a relation's output.
type relState struct {
	def     routing.TableDef
	coll    *collector
	out     []lineage
	sorted  bool
	order   Order
	agg     []Measure // measure names are filled from the root names
	hasAgg  bool
	bin     *routing.Binning // the grouping of a histogram (groupby.go)
	limit   int64
	fetched bool
}

// Analyze validates a plan and returns its logical content. It accepts exactly one root
// relation built from these relations, bottom up:
//
//   - ReadRel of a NamedTable (one name) of the catalog, whose base schema names and type
//     families match TableSchema; its optional filter counts as a FilterRel, its best-effort
//     filter is ignored (a consumer may); projection masks are refused (substrait-go types
//     the relations above a read without them);
//   - FilterRels over the scan whose conditions are routed predicates: equal, gte, lt (and
//     lte/gt with the literal on the left, normalised by swapping), joined by and, with
//     literals of the column's family (precision timestamps of any precision, timestamp,
//     timestamp_tz, date, and string/varchar/fixedchar), casts of literals unwrapped;
//   - one SortRel on (timestamp[, id]) in one direction;
//   - ProjectRels of plain field references (any emit mapping);
//   - one AggregateRel without grouping, measures count(), count(x), min(timestamp),
//     max(timestamp), no DISTINCT, no filter, no sort, initial-to-result phase; or one
//     AggregateRel grouped by one time bin of the timestamp (round_calendar or
//     round_temporal, see groupby.go) with count() measures, optionally followed by a SortRel
//     on the bin;
//   - one FetchRel on top, offset 0.
//
// Any other relation (joins, sets, virtual tables, files, extensions, writes…) is
// Unimplemented; predicates outside the routed contract get the reference's errors. Analyze
// never modifies p.
func Analyze(p *plan.Plan, cat Catalog) (*Query, error) {
	if p == nil {
		return nil, ErrInvalidPlan
	}
	if err := checkPlanShape(p); err != nil {
		return nil, err
	}
	root := p.GetRoots()[0]
	st, err := analyzeRel(root.Input(), cat)
	if err != nil {
		return nil, err
	}
	if err := st.coll.finish(); err != nil {
		return nil, err
	}
	names := root.Names()
	if len(names) != len(st.out) || len(st.out) == 0 {
		return nil, ErrInvalidPlan
	}
	part, r := st.coll.routed()
	q := &Query{Table: st.def, Partition: part, Range: r, Limit: st.limit}
	if !st.fetched {
		q.Limit = -1
	}
	cols := columnNames(st.def)
	if st.bin != nil {
		return st.groupedQuery(q, names)
	}
	if st.hasAgg {
		q.Aggregate = &Aggregate{}
		for i, l := range st.out {
			m := st.agg[l.measure]
			m.Name = names[i]
			q.Aggregate.Measures = append(q.Aggregate.Measures, m)
		}
		return q, nil
	}
	for i, l := range st.out {
		q.Columns = append(q.Columns, OutputColumn{Column: cols[l.col], Name: names[i]})
	}
	if st.sorted {
		q.Order = st.order
	}
	return q, nil
}

// relName names a relation kind for errors and EXPLAIN.
func relName(rel plan.Rel) string {
	switch rel.(type) {
	case *plan.NamedTableReadRel, *plan.VirtualTableReadRel, *plan.LocalFileReadRel,
		*plan.ExtensionTableReadRel, *plan.IcebergTableReadRel:
		return "ReadRel"
	case *plan.FilterRel:
		return "FilterRel"
	case *plan.ProjectRel:
		return "ProjectRel"
	case *plan.AggregateRel:
		return "AggregateRel"
	case *plan.SortRel:
		return "SortRel"
	case *plan.FetchRel:
		return "FetchRel"
	case *plan.JoinRel:
		return "JoinRel"
	case *plan.CrossRel:
		return "CrossRel"
	case *plan.HashJoinRel:
		return "HashJoinRel"
	case *plan.SetRel:
		return "SetRel"
	case *plan.NamedTableWriteRel:
		return "WriteRel"
	case *plan.ExtensionSingleRel, *plan.ExtensionMultiRel, *plan.ExtensionLeafRel:
		return "extension relations"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", rel), "*plan.")
}

func analyzeRel(rel plan.Rel, cat Catalog) (*relState, error) {
	var (
		st  *relState
		err error
	)
	switch r := rel.(type) {
	case *plan.NamedTableReadRel:
		st, err = analyzeRead(r, cat)
	case *plan.FilterRel:
		if st, err = analyzeRel(r.Input(), cat); err != nil {
			return nil, err
		}
		if st.hasAgg || st.fetched {
			return nil, unimplemented("FilterRel above an AggregateRel or FetchRel")
		}
		err = st.conditions(r.Condition())
	case *plan.SortRel:
		if st, err = analyzeRel(r.Input(), cat); err != nil {
			return nil, err
		}
		err = st.sort(r.Sorts())
	case *plan.ProjectRel:
		if st, err = analyzeRel(r.Input(), cat); err != nil {
			return nil, err
		}
		err = st.project(r.Expressions())
	case *plan.AggregateRel:
		if st, err = analyzeRel(r.Input(), cat); err != nil {
			return nil, err
		}
		err = st.aggregate(r)
	case *plan.FetchRel:
		if st, err = analyzeRel(r.Input(), cat); err != nil {
			return nil, err
		}
		switch {
		case st.fetched:
			err = unimplementedAre("several FetchRels")
		case r.Offset() != 0:
			err = unimplemented("OFFSET")
		case r.Count() < plan.FETCH_COUNT_ALL_RECORDS:
			err = ErrNegativeLimit
		default:
			st.fetched, st.limit = r.Count() >= 0, r.Count()
		}
	case nil:
		return nil, ErrInvalidPlan
	default:
		return nil, unimplemented(relName(rel))
	}
	if err != nil {
		return nil, err
	}
	if err := st.remap(rel.OutputMapping()); err != nil {
		return nil, err
	}
	return st, nil
}

// remap applies a relation's emit mapping to its output columns.
func (st *relState) remap(mapping []int32) error {
	if len(mapping) == 0 {
		return nil
	}
	out := make([]lineage, len(mapping))
	for i, m := range mapping {
		if m < 0 || int(m) >= len(st.out) {
			return ErrInvalidPlan
		}
		out[i] = st.out[m]
	}
	st.out = out
	return nil
}

func analyzeRead(r *plan.NamedTableReadRel, cat Catalog) (*relState, error) {
	names := r.Names()
	if len(names) != 1 {
		return nil, unimplementedAre("multi-part table names")
	}
	def, err := lookupTable(cat, names[0])
	if err != nil {
		return nil, err
	}
	if !schemaMatches(def, r.BaseSchema()) {
		return nil, errorf(InvalidArgument, "ReadRel base schema does not match table %q", def.Name)
	}
	st := &relState{def: def, coll: &collector{}, limit: -1}
	for i := range numFields {
		st.out = append(st.out, lineage{col: i, measure: -1})
	}
	if f := r.Filter(); f != nil {
		if err := st.conditions(f); err != nil {
			return nil, err
		}
	}
	if r.Projection() != nil {
		// substrait-go v8 types every relation above a ReadRel against the whole base
		// schema, ignoring the projection mask, so field references above a masked read
		// cannot be interpreted consistently with the decoder's type checks.
		return nil, unimplementedAre("ReadRel projection masks")
	}
	return st, nil
}

// schemaMatches checks that a client's base schema describes the table: the same column
// names (case-insensitively, in order) with types of the same family. Nullability and
// timestamp precision are not checked; literals are converted to nanoseconds.
func schemaMatches(def routing.TableDef, ns types.NamedStruct) bool {
	want := columnNames(def)
	if len(ns.Names) != numFields || len(ns.Struct.Types) != numFields {
		return false
	}
	for i, n := range ns.Names {
		if !strings.EqualFold(n, want[i]) {
			return false
		}
	}
	for i, t := range ns.Struct.Types {
		var ok bool
		switch i {
		case partitionField, idField:
			switch t.(type) {
			case *types.StringType, *types.VarCharType:
				ok = true
			}
		case timestampField:
			switch t.(type) {
			case *types.PrecisionTimestampTzType, *types.PrecisionTimestampType, *types.TimestampTzType, *types.TimestampType:
				ok = true
			}
		case valueField:
			_, ok = t.(*types.BinaryType)
		}
		if !ok {
			return false
		}
	}
	return true
}

// column returns the table column referenced by e (a direct root field reference, possibly
// wrapped in a cast to the column's own family), or -1.
func (st *relState) column(e expr.Expression) (int, error) {
	if c, ok := e.(*expr.Cast); ok {
		idx, err := st.column(c.Input)
		if err != nil || idx < 0 {
			return -1, err
		}
		if sameFamily(idx, c.Type) {
			return idx, nil
		}
		return -1, nil
	}
	fr, ok := e.(*expr.FieldReference)
	if !ok {
		return -1, nil
	}
	sf, ok := fr.Reference.(*expr.StructFieldRef)
	if !ok || fr.Root != expr.RootReference || sf.Child != nil {
		return -1, nil
	}
	if sf.Field < 0 || int(sf.Field) >= len(st.out) {
		return -1, ErrInvalidPlan
	}
	l := st.out[sf.Field]
	if l.col < 0 {
		return -1, nil
	}
	return l.col, nil
}

func sameFamily(col int, t types.Type) bool {
	switch t.(type) {
	case *types.StringType, *types.VarCharType:
		return col == partitionField || col == idField
	case *types.PrecisionTimestampTzType, *types.TimestampTzType:
		return col == timestampField
	}
	return false
}

// conditions adds the conjuncts of a filter condition, left to right.
func (st *relState) conditions(e expr.Expression) error {
	if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == "and" && f.ID().URN == URNBoolean {
		for i := range f.NArgs() {
			arg, ok := f.Arg(i).(expr.Expression)
			if !ok {
				return ErrUnsupportedPredicate
			}
			if err := st.conditions(arg); err != nil {
				return err
			}
		}
		return nil
	}
	a, err := st.conjunct(e)
	if err != nil {
		return err
	}
	return st.coll.add(a)
}

// substraitOps maps Substrait comparison functions to SQL operators.
var substraitOps = map[string]string{"equal": "=", "not_equal": "<>", "lt": "<", "gt": ">", "lte": "<=", "gte": ">="}

// conjunct classifies one Substrait conjunct with the same rules as the SQL front end.
func (st *relState) conjunct(e expr.Expression) (atom, error) {
	f, ok := e.(*expr.ScalarFunction)
	if !ok || f.NArgs() != 2 {
		return atom{}, ErrUnsupportedPredicate
	}
	op, ok := substraitOps[f.Name()]
	if !ok || (f.ID().URN != URNComparison && f.ID().URN != URNDatetime) {
		return atom{}, ErrUnsupportedPredicate
	}
	l, lok := f.Arg(0).(expr.Expression)
	r, rok := f.Arg(1).(expr.Expression)
	if !lok || !rok {
		return atom{}, ErrUnsupportedPredicate
	}
	lcol, err := st.column(l)
	if err != nil {
		return atom{}, err
	}
	rcol, err := st.column(r)
	if err != nil {
		return atom{}, err
	}
	col, value := lcol, r
	switch {
	case lcol >= 0 && rcol < 0:
	case rcol >= 0 && lcol < 0:
		col, value, op = rcol, l, swapped[op]
	default:
		return atom{}, ErrUnsupportedPredicate
	}
	lit, ok := literalOf(value)
	if !ok {
		return atom{}, ErrUnsupportedPredicate
	}
	switch {
	case col == partitionField && op == "=":
		s, ok := stringLiteral(lit)
		if !ok {
			return atom{}, ErrUnsupportedPredicate
		}
		return atom{kind: atomPartition, val: operand{str: s}}, nil
	case col == timestampField && (op == ">=" || op == "<"):
		ts, err := timestampLiteralValue(lit)
		if err != nil {
			return atom{}, err
		}
		kind := atomLower
		if op == "<" {
			kind = atomUpper
		}
		return atom{kind: kind, val: operand{ts: ts}}, nil
	}
	return atom{}, ErrUnsupportedPredicate
}

// literalOf unwraps casts around a literal; a cast to a string or timestamp type keeps the
// literal's value, which stringLiteral/timestampLiteralValue then interpret.
func literalOf(e expr.Expression) (expr.Literal, bool) {
	for {
		c, ok := e.(*expr.Cast)
		if !ok {
			break
		}
		switch c.Type.(type) {
		case *types.StringType, *types.VarCharType, *types.PrecisionTimestampTzType,
			*types.PrecisionTimestampType, *types.TimestampTzType, *types.TimestampType:
		default:
			return nil, false
		}
		e = c.Input
	}
	l, ok := e.(expr.Literal)
	if !ok || l == nil {
		return nil, false
	}
	if _, null := l.(*expr.NullLiteral); null {
		return nil, false
	}
	return l, true
}

func stringLiteral(l expr.Literal) (string, bool) {
	switch v := l.(type) {
	case *expr.PrimitiveLiteral[string]:
		return v.Value, true
	case *expr.PrimitiveLiteral[types.FixedChar]:
		return string(v.Value), true
	case *expr.ProtoLiteral:
		if _, ok := v.Type.(*types.VarCharType); ok {
			s, ok := v.Value.(string)
			return s, ok
		}
	}
	return "", false
}

// timestampLiteralValue converts a timestamp-family literal (any precision), a date, or a
// string literal (ParseTimestamp) to an instant.
func timestampLiteralValue(l expr.Literal) (time.Time, error) {
	var (
		v    int64
		prec types.TimePrecision
	)
	switch x := l.(type) {
	case *expr.PrimitiveLiteral[types.Timestamp]:
		v, prec = int64(x.Value), types.PrecisionMicroSeconds
	case *expr.PrimitiveLiteral[types.TimestampTz]:
		v, prec = int64(x.Value), types.PrecisionMicroSeconds
	case *expr.PrimitiveLiteral[types.Date]:
		v, prec = int64(x.Value)*86400, types.PrecisionSeconds
	case *expr.PrimitiveLiteral[string]:
		return ParseTimestamp(x.Value)
	case *expr.ProtoLiteral:
		n, ok := x.Value.(int64)
		if !ok {
			return time.Time{}, ErrUnsupportedPredicate
		}
		switch t := x.Type.(type) {
		case *types.PrecisionTimestampTzType:
			v, prec = n, t.Precision
		case *types.PrecisionTimestampType:
			v, prec = n, t.Precision
		default:
			return time.Time{}, ErrUnsupportedPredicate
		}
	default:
		return time.Time{}, ErrUnsupportedPredicate
	}
	if prec < types.PrecisionSeconds || prec > types.PrecisionNanoSeconds {
		return time.Time{}, ErrInvalidTimestampLiteral
	}
	mult := int64(1)
	for range types.PrecisionNanoSeconds - prec {
		mult *= 10
	}
	if v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return time.Time{}, ErrTimestampOutOfRange
	}
	return time.Unix(0, v*mult).UTC(), nil
}

// sort accepts (timestamp[, id]) in one direction.
func (st *relState) sort(sorts []expr.SortField) error {
	if st.bin != nil {
		return st.sortBins(sorts)
	}
	switch {
	case st.hasAgg:
		return unimplemented("SortRel above an AggregateRel")
	case st.fetched:
		return unimplemented("SortRel above a FetchRel")
	case st.sorted:
		return unimplementedAre("several SortRels")
	}
	var cols []int
	var dirs []Order
	for _, s := range sorts {
		idx, err := st.column(s.Expr)
		if err != nil {
			return err
		}
		var d Order
		switch s.Kind {
		case types.SortAscNullsFirst, types.SortAscNullsLast:
			d = OrderAsc
		case types.SortDescNullsFirst, types.SortDescNullsLast:
			d = OrderDesc
		default:
			return unimplemented("this sort direction")
		}
		cols, dirs = append(cols, idx), append(dirs, d)
	}
	ok := len(cols) > 0 && cols[0] == timestampField &&
		(len(cols) == 1 || (len(cols) == 2 && cols[1] == idField && dirs[1] == dirs[0]))
	if !ok {
		return unimplemented("SortRel other than timestamp [, id] in one direction")
	}
	st.sorted, st.order = true, dirs[0]
	return nil
}

// project accepts ProjectRels of plain field references.
func (st *relState) project(exprs []expr.Expression) error {
	out := append([]lineage(nil), st.out...)
	for _, e := range exprs {
		fr, ok := e.(*expr.FieldReference)
		if !ok {
			return unimplementedAre("expressions in ProjectRel")
		}
		sf, ok := fr.Reference.(*expr.StructFieldRef)
		if !ok || fr.Root != expr.RootReference || sf.Child != nil {
			return unimplementedAre("expressions in ProjectRel")
		}
		if sf.Field < 0 || int(sf.Field) >= len(st.out) {
			return ErrInvalidPlan
		}
		out = append(out, st.out[sf.Field])
	}
	st.out = out
	return nil
}

// aggregate accepts one ungrouped AggregateRel of recognised measures.
func (st *relState) aggregate(r *plan.AggregateRel) error {
	switch {
	case st.hasAgg:
		return unimplementedAre("several AggregateRels")
	case st.fetched:
		return unimplemented("AggregateRel above a FetchRel")
	case len(r.GroupingExpressions()) > 0:
		return st.groupedAggregate(r)
	}
	for _, g := range r.GroupingReferences() {
		if len(g) > 0 {
			return st.groupedAggregate(r)
		}
	}
	if len(r.GroupingReferences()) > 1 {
		return unimplementedAre("several grouping sets")
	}
	measures := r.Measures()
	if len(measures) == 0 {
		return unimplemented("AggregateRel without measures")
	}
	var (
		aggs []Measure
		out  []lineage
	)
	for i := range measures {
		m, err := st.measure(&measures[i])
		if err != nil {
			return err
		}
		aggs = append(aggs, m)
		out = append(out, lineage{col: -1, measure: i})
	}
	st.agg, st.out = aggs, out
	st.hasAgg, st.sorted = true, false
	return nil
}

func (st *relState) measure(am *plan.AggRelMeasure) (Measure, error) {
	if f, ok := am.Filter().(*expr.PrimitiveLiteral[bool]); !ok || !f.Value {
		return Measure{}, unimplemented("aggregate FILTER")
	}
	f := am.Measure()
	name := f.Name()
	switch {
	case f.Invocation() == types.AggInvocationDistinct:
		return Measure{}, unimplemented(strings.ToUpper(name) + "(DISTINCT …)")
	case f.Phase() != types.AggPhaseUnspecified && f.Phase() != types.AggPhaseInitialToResult:
		return Measure{}, unimplementedAre("partial aggregation phases")
	case len(f.Sorts) > 0:
		return Measure{}, unimplementedAre("ordered aggregates")
	}
	urn := f.ID().URN
	arg := func() (int, error) {
		if f.NArgs() != 1 {
			return -1, unimplemented(strings.ToUpper(name) + " with several arguments")
		}
		e, ok := f.Arg(0).(expr.Expression)
		if !ok {
			return -1, unimplemented(strings.ToUpper(name) + " of an expression")
		}
		idx, err := st.column(e)
		if err == nil && idx < 0 {
			err = unimplemented(strings.ToUpper(name) + " of an expression")
		}
		return idx, err
	}
	cols := columnNames(st.def)
	switch {
	case name == "count" && urn == URNAggregate && f.NArgs() == 0:
		return Measure{Func: CountStar}, nil
	case name == "count" && urn == URNAggregate:
		idx, err := arg()
		if err != nil {
			return Measure{}, err
		}
		return Measure{Func: Count, Column: cols[idx]}, nil
	case name == "min" || name == "max":
		idx, err := arg()
		if err != nil {
			return Measure{}, err
		}
		if idx != timestampField {
			return Measure{}, unimplemented(strings.ToUpper(name) + "(" + cols[idx] + ")")
		}
		if name == "min" {
			return Measure{Func: Min, Column: cols[idx]}, nil
		}
		return Measure{Func: Max, Column: cols[idx]}, nil
	}
	return Measure{}, unimplemented("aggregate function " + name)
}

// ImpliedByRoute reports whether conjunct e, an expression over the base schema of a ReadRel
// of def, holds for every record a routed read of partitions inside r returns, so that the
// executor need not evaluate it: a partition equality whose literal is every partition read,
// a lower bound `timestamp >= L` with L <= r.Start, or an upper bound `timestamp < L` with
// L >= r.End (either operand order, casts of literals unwrapped, as Analyze reads them). Any
// other expression, or one it cannot read, is not implied (the executor evaluates it).
func ImpliedByRoute(e expr.Expression, def routing.TableDef, partitions [][]byte, r routing.TimeRange) bool {
	if sol, ok := e.(*expr.SingularOrList); ok {
		// partition IN (…) listing every partition read.
		if !routedColumn(sol.Value, partitionField) || len(partitions) == 0 {
			return false
		}
		in := map[string]bool{}
		for _, o := range sol.Options {
			s, ok := o.(*expr.PrimitiveLiteral[string])
			if !ok {
				return false
			}
			in[s.Value] = true
		}
		for _, p := range partitions {
			if !in[string(p)] {
				return false
			}
		}
		return true
	}
	st := &relState{def: def}
	for i := range numFields {
		st.out = append(st.out, lineage{col: i, measure: -1})
	}
	a, err := st.conjunct(e)
	if err != nil {
		return false
	}
	switch a.kind {
	case atomPartition:
		if len(partitions) == 0 {
			return false
		}
		for _, p := range partitions {
			if string(p) != a.val.str {
				return false
			}
		}
		return true
	case atomLower:
		return !a.val.ts.After(r.Start)
	case atomUpper:
		return !a.val.ts.Before(r.End)
	}
	return false
}
