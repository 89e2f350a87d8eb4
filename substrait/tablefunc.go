package substrait

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
)

// Set-returning functions in FROM (docs/sql.md, "Set-returning functions in FROM"): generate_series(start, stop
// [, step]) of integers or of timestamps with an interval step, and unnest(ARRAY[…]) of
// constants, are computed when binding (their arguments are constants, as BI tools write
// them) into a VirtualTableReadRel of one column, at most MaxSeriesRows rows (a longer
// generate_series is a ProjectSet over one row, standaloneSet); no rows is a virtual row
// filtered out. They are FROM items like a subquery: alone, as a CTE, or in a
// subquery. PostgreSQL's rules: generate_series(integer, integer) is integer,
// (bigint, bigint) bigint; a zero step is "step size cannot equal zero" (22023); the
// timestamp series adds the step to the previous value each time (January 31 + 1 month is
// February 28, then March 28) and is timestamp without time zone when an end is one and
// neither is timestamptz, else timestamptz (seriesTimestampType); the column is named by the
// alias (AS g, or AS g(n)) or after the function. Column definition lists are refused by
// name. The other functions in FROM, and these with WITH ORDINALITY, ROWS FROM (…), LATERAL
// or arguments reading other FROM items' columns (generate_series(a, 3)), are ProjectSets
// (projectset.go).

// MaxSeriesRows bounds the rows of a generate_series or unnest in FROM held as constants of
// the plan (each row is a few plan expression nodes, under MaxExpressionNodes): a longer
// generate_series (a week of minutes, 10,080 rows) is bound as a ProjectSet over one row,
// whose executor streams its rows under the query's memory limit; a longer unnest(ARRAY[…])
// is refused (54000).
const MaxSeriesRows = 10_000

// seriesIntType is the type of generate_series of integers (args, none a timestamp): integer,
// or bigint when an argument is; a numeric argument is refused by name, another type is
// PostgreSQL's "function … does not exist", and only smallints and untyped literals its
// 42725 (PostgreSQL's integer, bigint and numeric candidates fit equally).
func seriesIntType(args []bval) (types.Type, error) {
	t := i32Type()
	wide := false // an argument is integer or bigint
	for _, a := range args {
		if a.untyped() {
			continue
		}
		switch familyOf(a.typ()) {
		case famInt:
			if numRank(a.typ()) > numRank(t) {
				t = i64Type()
			}
			wide = wide || numRank(a.typ()) >= numRank(i32Type())
		case famNumeric:
			return nil, unimplemented("generate_series of numeric values")
		default:
			return nil, errorf(InvalidArgument, "function generate_series(%s) does not exist", argTypeNames(args))
		}
	}
	if !wide {
		return nil, refused(InvalidArgument, "42725", "function generate_series(%s) is not unique", argTypeNames(args))
	}
	return t, nil
}

// rangeFunction binds a function in FROM.
func (bd *binder) rangeFunction(rf *pg.RangeFunction) (*fromItem, error) {
	switch {
	case needsProjectSet(rf):
		return bd.standaloneSet(rf)
	case len(rf.GetColdeflist()) > 0:
		return nil, unimplementedAre("column definition lists")
	}
	items := rf.GetFunctions()[0].GetList().GetItems()
	if len(items) == 0 {
		return nil, unimplementedAre("table functions")
	}
	fc := items[0].GetFuncCall()
	if fc == nil {
		return nil, unimplementedAre("table functions")
	}
	name := funcName(fc)
	var (
		rows []expr.Expression
		typ  types.Type
		err  error
	)
	switch name {
	case "generate_series":
		rows, typ, err = bd.generateSeries(fc)
		if errors.Is(err, errSeriesProjectSet) {
			return bd.standaloneSet(rf)
		}
	case "unnest":
		rows, typ, err = bd.unnest(fc)
	default:
		return nil, refused(Unimplemented, "0A000", "the table function %s is not supported (generate_series and unnest are)", name)
	}
	if err != nil {
		return nil, err
	}
	colName := name
	alias := ""
	if al := rf.GetAlias(); al != nil {
		alias = al.GetAliasname()
		colName = alias
		if cn := al.GetColnames(); len(cn) > 1 {
			return nil, errorf(InvalidArgument, "too many column aliases: %d for %d columns", len(cn), 1)
		} else if len(cn) == 1 {
			colName = cn[0].GetString_().GetSval()
		}
	}
	return bd.constantColumn(rows, typ, colName, alias)
}

// constantColumn is a FROM item of one column named name holding rows (literals of typ, in
// order), qualified by alias.
func (bd *binder) constantColumn(rows []expr.Expression, typ types.Type, name, alias string) (*fromItem, error) {
	typ = typ.WithNullability(nullableN)
	empty := len(rows) == 0
	if empty {
		rows = []expr.Expression{expr.NewNullLiteral(typ)}
	}
	vals := make([]expr.VirtualTableExpressionValue, len(rows))
	for i, r := range rows {
		vals[i] = expr.VirtualTableExpressionValue{nullable(r)}
	}
	rel, err := bd.b.VirtualTableFromExpr([]string{name}, vals...)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", name, err)
	}
	br := &boundRel{rel: rel, sc: &scope{cols: []col{{name: name, qual: alias, typ: typ}}}, names: []string{name}}
	if empty {
		f, err := bd.b.Filter(rel, expr.NewPrimitiveLiteral(false, false))
		if err != nil {
			return nil, fmt.Errorf("bind %s: %w", name, err)
		}
		br.rel = f
	}
	return &fromItem{boundRel: br}, nil
}

// errSeriesProjectSet is generateSeries' answer for a series it does not hold as constants —
// of more than MaxSeriesRows rows, or of arguments that are expressions rather than literals
// (-5::bigint, now() - interval '1 day') — which rangeFunction then binds as a ProjectSet
// over one row (standaloneSet), evaluated by the executor.
var errSeriesProjectSet = errors.New("generate_series is not a constant series")

// errSeriesRows refuses a series or array of more than MaxSeriesRows rows.
func errSeriesRows(name string) *Error {
	return refused(InvalidArgument, "54000", "%s in FROM of more than %d rows is not supported", name, MaxSeriesRows)
}

// generateSeries computes generate_series(start, stop[, step]) of constants: integers, or
// timestamps with an interval step.
func (bd *binder) generateSeries(fc *pg.FuncCall) ([]expr.Expression, types.Type, error) {
	raw := fc.GetArgs()
	if len(raw) < 2 || len(raw) > 3 || fc.GetAggStar() || fc.GetAggDistinct() || fc.GetOver() != nil {
		return nil, nil, errorf(InvalidArgument, "function generate_series with %d arguments does not exist", len(raw))
	}
	args := make([]bval, len(raw))
	for i, a := range raw {
		v, err := bd.bindExpr(a, &scope{})
		if err != nil {
			return nil, nil, lateralArgument(err)
		}
		args[i] = v
	}
	if timeSeriesArgs(args) {
		return bd.timestampSeries(args)
	}
	for _, a := range args {
		if !a.untyped() && familyOf(a.typ()) == famNumeric {
			return bd.numericSeries(args)
		}
	}
	t, err := seriesIntType(args)
	if err != nil {
		return nil, nil, err
	}
	vals := make([]int64, 3)
	vals[2] = 1
	for i, a := range args {
		e, err := bd.coerce(a, i64Type(), "argument of generate_series")
		if err != nil {
			return nil, nil, err
		}
		var casts []types.Type // an integer constant cast to integer types: its value, in range
		for c, ok := e.(*expr.Cast); ok; c, ok = e.(*expr.Cast) {
			casts, e = append(casts, c.Type), c.Input
		}
		switch l := e.(type) {
		case *expr.PrimitiveLiteral[int64]:
			vals[i] = l.Value
		case *expr.PrimitiveLiteral[int32]:
			vals[i] = int64(l.Value)
		case *expr.PrimitiveLiteral[int16]:
			vals[i] = int64(l.Value)
		case *expr.NullLiteral:
			return nil, t, nil // a NULL argument: no rows, as PostgreSQL (strict)
		default:
			return nil, nil, errSeriesProjectSet
		}
		for _, ct := range casts {
			switch {
			case familyOf(ct) != famInt:
				return nil, nil, errSeriesProjectSet
			case numRank(ct) == numRank(i16Type()) && (vals[i] < math.MinInt16 || vals[i] > math.MaxInt16):
				return nil, nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "smallint out of range"}
			case numRank(ct) == numRank(i32Type()) && (vals[i] < math.MinInt32 || vals[i] > math.MaxInt32):
				return nil, nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "integer out of range"}
			}
		}
	}
	start, stop, step := vals[0], vals[1], vals[2]
	if step == 0 {
		return nil, nil, &Error{Code: InvalidArgument, SQLState: "22023", Msg: "step size cannot equal zero"}
	}
	var rows []expr.Expression
	for v := start; step > 0 && v <= stop || step < 0 && v >= stop; v += step {
		if len(rows) == MaxSeriesRows {
			return nil, nil, errSeriesProjectSet
		}
		if _, ok := t.(*types.Int32Type); ok {
			rows = append(rows, expr.NewPrimitiveLiteral(int32(v), false))
		} else {
			rows = append(rows, expr.NewPrimitiveLiteral(v, false))
		}
		if step > 0 && v > math.MaxInt64-step || step < 0 && v < math.MinInt64-step {
			break // the next value would overflow: PostgreSQL stops there too
		}
	}
	return rows, t, nil
}

// timestampSeries computes generate_series(start, stop, step) of timestamps (a date is
// midnight UTC, as in the UTC session) with a constant interval step.
func (bd *binder) timestampSeries(args []bval) ([]expr.Expression, types.Type, error) {
	if len(args) != 3 {
		return nil, nil, errorf(InvalidArgument, "function generate_series(timestamp with time zone, timestamp with time zone) does not exist")
	}
	// PostgreSQL's candidates are generate_series(timestamp, timestamp, interval) and
	// (timestamptz, timestamptz, interval): a timestamptz argument, or none of the ends typed
	// as timestamp without time zone (dates, untyped literals: timestamptz is the category's
	// preferred type), chooses timestamptz; otherwise the series is timestamp without time
	// zone. The session's zone is UTC, so both hold the same wall clock.
	typ := seriesTimestampType(args[:2])
	iv, ok := args[2].intervalConst()
	if !ok && args[2].str != nil && args[2].param == 0 {
		iv, ok = *args[2].str, true // an untyped literal step reads as an interval
	}
	if !ok {
		if args[2].null {
			return nil, typ, nil
		}
		return nil, nil, errSeriesProjectSet
	}
	var ends [2]time.Time
	for i, a := range args[:2] {
		e, err := bd.coerce(a, typ, "argument of generate_series")
		if err != nil {
			return nil, nil, err
		}
		if _, null := e.(*expr.NullLiteral); null {
			return nil, typ, nil
		}
		lit, ok := e.(*expr.ProtoLiteral)
		ns, okv := int64(0), false
		if ok {
			ns, okv = lit.Value.(int64)
		}
		if !okv {
			return nil, nil, errSeriesProjectSet
		}
		ends[i] = time.Unix(0, ns).UTC()
	}
	us, months, err := readInterval(iv)
	if err != nil {
		return nil, nil, err
	}
	if !months.IsInt() || !months.Num().IsInt64() {
		return nil, nil, unimplementedAre("intervals with a fractional number of months")
	}
	m := months.Num().Int64()
	nsRat := new(big.Rat).Mul(us, big.NewRat(1000, 1))
	nsf, _ := nsRat.Float64()
	if math.Abs(nsf) > math.MaxInt64 {
		return nil, nil, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "interval out of range"}
	}
	d := time.Duration(math.Round(nsf))
	// The step's direction, and a zero step: PostgreSQL compares the interval with a zero
	// interval (months as 30 days, so '1 mon -30 days' is zero).
	span := time.Duration(m)*30*24*time.Hour + d
	if span == 0 {
		return nil, nil, &Error{Code: InvalidArgument, SQLState: "22023", Msg: "step size cannot equal zero"}
	}
	up := span > 0
	var rows []expr.Expression
	for t := ends[0]; up && !t.After(ends[1]) || !up && !t.Before(ends[1]); {
		if len(rows) == MaxSeriesRows {
			return nil, nil, errSeriesProjectSet
		}
		if isWallclock(typ) {
			rows = append(rows, expr.NewPrecisionTimestampLiteral(t.UnixNano(), types.PrecisionNanoSeconds, nullableN))
		} else {
			rows = append(rows, tsLiteral(t))
		}
		next := calendar.AddMonths(t, m).Add(d)
		if next.Before(minNanoTime) || next.After(maxNanoTime) {
			break
		}
		if up && !next.After(t) || !up && !next.Before(t) {
			// A step that does not advance from here ('-1 mon 31 days' from January 1,
			// '1 mon -29 days' from January 30): PostgreSQL repeats the value until the
			// query is cancelled or a LIMIT stops it; so does the executor's series.
			return nil, nil, errSeriesProjectSet
		}
		t = next
	}
	return rows, typ, nil
}

// timeSeriesArgs reports whether generate_series(args) is the series of timestamps: an end is
// a timestamp or a date, or the step is an interval.
func timeSeriesArgs(args []bval) bool {
	for _, a := range args[:min(2, len(args))] {
		if !a.untyped() && (familyOf(a.typ()) == famTimestamp || familyOf(a.typ()) == famDate) {
			return true
		}
	}
	return len(args) == 3 && isIntervalVal(args[2])
}

// seriesTimestampType is the type of generate_series(start, stop, interval) of ends: timestamp
// without time zone when one end is one and neither is timestamptz, else timestamptz.
func seriesTimestampType(ends []bval) types.Type {
	wall := false
	for _, a := range ends {
		if a.untyped() {
			continue
		}
		if isWallclock(a.typ()) {
			wall = true
		} else if familyOf(a.typ()) == famTimestamp {
			return tsType()
		}
	}
	if wall {
		return wallclockType()
	}
	return tsType()
}

// unnest computes unnest(ARRAY[…]) of constants: one row per element, NULLs kept, the
// elements of their common type.
func (bd *binder) unnest(fc *pg.FuncCall) ([]expr.Expression, types.Type, error) {
	raw := fc.GetArgs()
	if len(raw) != 1 {
		return nil, nil, unimplemented(fmt.Sprintf("unnest of %d arrays", len(raw)))
	}
	elems, elem, err := arrayElements(raw[0])
	if err != nil {
		return nil, nil, err
	}
	if len(elems) > MaxSeriesRows {
		return nil, nil, errSeriesRows("unnest")
	}
	vals := make([]bval, len(elems))
	for i, el := range elems {
		v, err := bd.bindExpr(el, &scope{})
		if err != nil {
			return nil, nil, lateralArgument(err)
		}
		if v.bpchar > 0 {
			// Its column would be bpchar: refused rather than text.
			return nil, nil, unimplementedAre("unnest arguments of character(n) values")
		}
		vals[i] = v
	}
	if len(vals) == 0 {
		if elem == nil {
			return nil, nil, errEmptyArray
		}
		t, err := bd.emptyArrayType(elem)
		return nil, t, err
	}
	common, err := bd.commonType(vals, "ARRAY")
	if err != nil {
		return nil, nil, err
	}
	for _, e := range common {
		if !isConstant(e) {
			return nil, nil, unimplementedAre("unnest arguments other than ARRAY[…] of constants")
		}
	}
	return common, common[0].GetType(), nil
}

// emptyArrayType is the type of the elements of ARRAY[]::elem[] (no row of it); one whose
// column would not be elem (character(n), json, jsonb, bytea, numeric of varying scale) is
// refused by name.
func (bd *binder) emptyArrayType(elem *pg.TypeName) (types.Type, error) {
	v, err := bd.bindExpr(&pg.Node{Node: &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}}, TypeName: elem}}}, &scope{})
	if err != nil {
		return nil, err
	}
	if v.bpchar > 0 || v.json || v.jsonb || v.bytea || v.ds != nil {
		return nil, unimplemented("unnest of an empty array of " + argTypeName(v))
	}
	return v.typ(), nil
}

// lateralArgument turns the error of a set-returning function's argument that names a column
// (generate_series(a, 3) beside the FROM item a: PostgreSQL calls it once per row of a, an
// implicitly LATERAL call) into the refusal of such arguments by name; the arguments are bound
// without columns, so a column of another FROM item reads as undefined here.
func lateralArgument(err error) error {
	var e *Error
	if errors.As(err, &e) && (e.SQLState == "42703" || e.SQLState == "42P01") {
		return unimplementedAre("arguments of a function in FROM that reference columns (a LATERAL function call)")
	}
	return err
}

// isConstant reports whether e references no column (a literal, a cast of one, a call over
// them): the executor evaluates such a row once (a VirtualTableReadRel's values).
func isConstant(e expr.Expression) bool {
	constant := true
	var visit expr.VisitFunc
	visit = func(x expr.Expression) expr.Expression {
		if _, ok := x.(*expr.FieldReference); ok {
			constant = false
			return x
		}
		return x.Visit(visit)
	}
	visit(e)
	return constant
}
