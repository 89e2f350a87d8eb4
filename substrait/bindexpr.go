package substrait

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
	"github.com/flightsrv/flightsrv/internal/exprs"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
	"github.com/flightsrv/flightsrv/routing"
)

// URNs of the extension functions the binder emits besides those of build.go.
const (
	URNArithmetic = extensions.SubstraitDefaultURNPrefix + "functions_arithmetic"
	URNString     = extensions.SubstraitDefaultURNPrefix + "functions_string"
	// URNPostgres is flightsrv's own extension, the URN scan/ops evaluates (ops.URNPostgres,
	// which documents each function): JSON access, LIKE, string functions with PostgreSQL's
	// meaning, date_part, to_char, round; and min/max of text.
	URNPostgres = "extension:dev.flightsrv:functions_postgres"
)

// ownAggregates returns the YAML declaring the aggregates of URNPostgres: min and max of
// text, binary, boolean and interval (Substrait's standard min/max are numeric and temporal only),
// PostgreSQL's variance family over fp64 (var_samp, var_pop, stddev_samp, stddev_pop),
// bool_and and bool_or over boolean, bit_and, bit_or and bit_xor over integers (scan/aggregate statagg.go evaluates them), sum of
// bigint as numeric (decimal<38,0>, PostgreSQL's type for it). Loaded into
// substrait-go's default collection once, so that plans using them decode too.
func ownAggregates() string {
	var b strings.Builder
	b.WriteString("%YAML 1.2\n---\nurn: " + URNPostgres + "\naggregate_functions:\n")
	decl := func(name string, ts ...string) {
		fmt.Fprintf(&b, "  - name: %q\n    impls:\n", name)
		for _, t := range ts {
			fmt.Fprintf(&b, "      - args:\n          - value: %s\n        nullability: DECLARED_OUTPUT\n"+
				"        decomposable: MANY\n        intermediate: %s?\n        return: %s?\n", t, t, t)
		}
	}
	for _, name := range []string{"min", "max"} {
		decl(name, "string", "binary", "boolean")
		// min and max of time (timetype.go): functions_datetime declares its deprecated time only.
		b.WriteString("      - args:\n          - value: precision_time<P>\n        nullability: DECLARED_OUTPUT\n" +
			"        decomposable: MANY\n        intermediate: precision_time?<P>\n        return: precision_time?<P>\n")
		// Of intervals (scan/aggregate's intervalExtremes): substrait-go's YAML types have no
		// interval_compound, so the argument's own type, last, after the impls above; bound
		// by the compound name min:any (intervalMinMax).
		decl(name, "any1")
	}
	for _, name := range varianceAggregates {
		decl(name, "fp64")
	}
	decl("bool_and", "boolean")
	decl("bool_or", "boolean")
	for _, name := range []string{"bit_and", "bit_or", "bit_xor"} {
		decl(name, "i16", "i32", "i64")
	}
	// sum(bigint) → numeric, PostgreSQL's type for it (the executor's exact 128-bit total).
	b.WriteString("  - name: \"sum\"\n    impls:\n")
	b.WriteString("      - args:\n          - value: i64\n        nullability: DECLARED_OUTPUT\n        decomposable: MANY\n        intermediate: decimal?<38,0>\n        return: decimal?<38,0>\n")
	// avg(bigint) → numeric, PostgreSQL's type for it (numeric_div's quotient shown at avgScale).
	fmt.Fprintf(&b, "  - name: \"avg\"\n    impls:\n      - args:\n          - value: i64\n        nullability: DECLARED_OUTPUT\n"+
		"        decomposable: MANY\n        intermediate: decimal?<38,0>\n        return: decimal?<38,%d>\n", avgScale)
	// The ordered-set aggregates: (fraction, x) → x's type, and mode(x).
	b.WriteString("  - name: \"percentile_cont\"\n    impls:\n")
	b.WriteString("      - args:\n          - value: fp64\n          - value: fp64\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: fp64?\n")
	// percentile_cont(ARRAY[fractions]): an array of one answer per fraction.
	b.WriteString("      - args:\n          - value: list<fp64?>\n          - value: fp64\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: list?<fp64?>\n")
	// percentile_cont(float8, interval): an interval (scan/aggregate's intervalContAcc);
	// substrait-go's YAML types have no interval_compound: the argument's own type, last, so
	// that double precision matches the impl above.
	b.WriteString("      - args:\n          - value: fp64\n          - value: any1\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: any1?\n")
	// percentile_cont(float8[], interval): an array of intervals (intervalContAcc's Multi).
	b.WriteString("      - args:\n          - value: list<fp64?>\n          - value: any1\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: list?<any1?>\n")
	b.WriteString("  - name: \"percentile_disc\"\n    impls:\n")
	for _, t := range []string{"i64", "fp64"} {
		fmt.Fprintf(&b, "      - args:\n          - value: fp64\n          - value: %s\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: %s?\n", t, t)
	}
	// percentile_disc of the types mode() takes as they are (scan/aggregate's ordered store).
	for _, t := range [][2]string{{"string", "string?"}, {"boolean", "boolean?"}, {"date", "date?"}, {"decimal<P,S>", "decimal?<P,S>"},
		{"precision_timestamp<P>", "precision_timestamp?<P>"}, {"precision_timestamp_tz<P>", "precision_timestamp_tz?<P>"}} {
		fmt.Fprintf(&b, "      - args:\n          - value: fp64\n          - value: %s\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: %s\n", t[0], t[1])
	}
	// percentile_disc(ARRAY[fractions]): an array of one answer per fraction, of x's type (the
	// lowering widens integers to bigint).
	for _, t := range []string{"i16", "i32", "i64", "fp64"} {
		fmt.Fprintf(&b, "      - args:\n          - value: list<fp64?>\n          - value: %s\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: list?<%s?>\n", t, t)
	}
	b.WriteString("  - name: \"string_agg\"\n    impls:\n")
	b.WriteString("      - args:\n          - value: string\n          - value: string\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: string?\n")
	// array_agg(x) → a list of x's type, NULL elements included (arrayagg.go).
	b.WriteString("  - name: \"array_agg\"\n    impls:\n")
	for _, t := range []string{"string", "i32", "i64", "fp64", "boolean"} {
		fmt.Fprintf(&b, "      - args:\n          - value: %s\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: list?<%s?>\n", t, t)
		// Over a window, with its FILTER as the second argument (window.go's collectWindow).
		fmt.Fprintf(&b, "      - args:\n          - value: %s\n          - value: boolean\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: list?<%s?>\n", t, t)
	}
	// mode(x) → x's type, of every type the executor orders (scan/aggregate arrayagg.go).
	b.WriteString("  - name: \"mode\"\n    impls:\n")
	for _, t := range [][2]string{{"i64", "i64?"}, {"fp64", "fp64?"}, {"string", "string?"}, {"boolean", "boolean?"}, {"date", "date?"},
		{"decimal<P,S>", "decimal?<P,S>"}, {"precision_timestamp<P>", "precision_timestamp?<P>"}, {"precision_timestamp_tz<P>", "precision_timestamp_tz?<P>"}} {
		fmt.Fprintf(&b, "      - args:\n          - value: %s\n        nullability: DECLARED_OUTPUT\n        decomposable: NONE\n        return: %s\n", t[0], t[1])
	}
	// PostgreSQL's binary aggregates of double precision pairs (Y, X): regr_count is bigint,
	// the others double precision (scan/aggregate regr.go).
	for _, name := range regressionAggregates {
		ret := "fp64?"
		if name == "regr_count" {
			ret = "i64"
		}
		fmt.Fprintf(&b, "  - name: %q\n    impls:\n      - args:\n          - value: fp64\n          - value: fp64\n        nullability: DECLARED_OUTPUT\n"+
			"        decomposable: NONE\n        return: %s\n", name, ret)
	}
	return b.String()
}

// regressionAggregates are PostgreSQL's binary aggregates of (Y, X) pairs the executor runs.
var regressionAggregates = []string{"corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count",
	"regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy"}

// varianceAggregates are the names the executor runs PostgreSQL's variance family under.
var varianceAggregates = []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop"}

var loadOwn sync.Once

// collection returns substrait-go's default extension collection with URNPostgres's
// aggregates loaded.
// ownExtensionURI is the URI URNPostgres is loaded from (plans of producers before URNs may
// reference it).
const ownExtensionURI = "https://flightsrv.dev/extensions/functions_postgres.yaml"

func collection() *extensions.Collection {
	c := extensions.GetDefaultCollectionWithNoError()
	loadOwn.Do(func() {
		if err := c.Load(ownExtensionURI, strings.NewReader(ownAggregates())); err != nil {
			panic(fmt.Sprintf("substrait: load own extensions: %v", err))
		}
	})
	return c
}

const nullableN = types.NullabilityNullable

func booleanType() types.Type { return &types.BooleanType{Nullability: nullableN} }
func i16Type() types.Type     { return &types.Int16Type{Nullability: nullableN} }
func i32Type() types.Type     { return &types.Int32Type{Nullability: nullableN} }
func i64Type() types.Type     { return &types.Int64Type{Nullability: nullableN} }
func fp64Type() types.Type    { return &types.Float64Type{Nullability: nullableN} }
func fp32Type() types.Type    { return &types.Float32Type{Nullability: nullableN} }
func strType() types.Type     { return &types.StringType{Nullability: nullableN} }
func binType() types.Type     { return &types.BinaryType{Nullability: nullableN} }
func dateType() types.Type    { return &types.DateType{Nullability: nullableN} }
func tsType() types.Type {
	return &types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: nullableN}}
}

// nullableOf returns e unchanged when its type is nullable, else a no-op cast to the
// nullable type (IfThen and SetRel need equal types, nullability included).
func nullableOfExpr(e expr.Expression) expr.Expression {
	if e.GetType().GetNullability() == nullableN {
		return e
	}
	return &expr.Cast{Type: e.GetType().WithNullability(nullableN), Input: e, FailureBehavior: types.BehaviorThrowException}
}

// nullable is nullableOfExpr (short name for the binder's code).
func nullable(e expr.Expression) expr.Expression { return nullableOfExpr(e) }

// bval is a bound expression, or a value still without a type: a string literal, NULL, or a
// parameter, typed by the context it is used in (PostgreSQL's unknown-type literals).
type bval struct {
	e     expr.Expression
	str   *string
	null  bool
	param int
	// ds is the display scale of a numeric whose values' scales differ row by row (avg of
	// integers, CASE of numerics of different scales: dscale.go); nil when every value shows
	// its type's scale.
	ds dscale
	// bytea: the value is bytea, not a JSON document (both are Arrow binary): the result of a
	// cast to bytea, whose text is byteaout's (bytea.go).
	bytea bool
	// json: the value is known to be a json document (a ::json cast, the value column of a
	// table declaring JSON values, a member of one); jsonb: a jsonb document in jsonb's
	// canonical text (jsonb.go). A binary value that is none of these (the value column of a
	// table not declaring its values) compares bytewise.
	json, jsonb bool
	// bpchar is n for a character(n) value (bpchar.go), -1 for a bpchar without a length
	// whose text has no trailing spaces (bpcharNoLength), 0 for any other: the value is held
	// without its trailing spaces, as bpchar compares, groups, sorts and casts to text, and a
	// character(n) one is blank-padded to n characters where PostgreSQL reads the padding (the
	// result's text, octet_length, LIKE and regular expressions, concat and format).
	bpchar int32
	// varchar: the value is the result of a cast to varchar, which beside a bpchar value is
	// bpchar too (PostgreSQL's implicit varchar to bpchar cast: 'a '::varchar = 'a'::char(3)
	// holds, where 'a '::text = 'a'::char(3) does not).
	varchar bool
	// typmod is PostgreSQL's name of the value's type with its type modifier where it has one
	// ("character varying(3)", "character(3)", "numeric(4,1)": a cast to varchar(n), char(n)
	// or numeric(p,s), a column of such values, a CASE or COALESCE whose every branch has the
	// same), "" where its typmod is -1. Only a recursive query's check of its column types
	// reads it (recursive.go).
	typmod string
	// domainKey: a reference to a correlated subquery's domain column (col.domainKey),
	// grouped, ordered and partitioned bytewise.
	domainKey bool
}

func typed(e expr.Expression) bval { return bval{e: e} }

func (v bval) untyped() bool { return v.e == nil }

// typ returns the type of a typed value, nil for an untyped one.
func (v bval) typ() types.Type {
	if v.e == nil {
		return nil
	}
	return v.e.GetType()
}

// value binds n and gives untyped values their default type (text).
func (bd *binder) value(n *pg.Node, sc *scope) (expr.Expression, error) {
	v, err := bd.bindExpr(n, sc)
	if err != nil {
		return nil, err
	}
	return bd.defaultType(v)
}

func (bd *binder) defaultType(v bval) (expr.Expression, error) {
	if v.e != nil {
		return v.e, nil
	}
	if _, ok := v.intervalConst(); ok {
		return bd.intervalValue(v, "")
	}
	if v.param > 0 {
		if t, ok := bd.ps.types[v.param]; ok {
			return bd.coerce(v, t, "")
		}
		e := errorf(InvalidArgument, "could not determine the data type of parameter $%d: cast it ($%d::int, $%d::text…)", v.param, v.param, v.param)
		e.untypedParam = v.param
		return nil, e
	}
	return bd.coerce(v, strType(), "")
}

// family classifies types for coercion.
type family uint8

const (
	famOther family = iota
	famBool
	famInt
	famFloat
	famString
	famBinary
	famTimestamp
	famDate
	famNumeric
	famTime // time without time zone (timetype.go)
)

// isNumber reports whether f is a family of numbers (integers, numeric, floats).
func isNumber(f family) bool { return f == famInt || f == famFloat || f == famNumeric }

func familyOf(t types.Type) family {
	switch t.(type) {
	case *types.BooleanType:
		return famBool
	case *types.Int8Type, *types.Int16Type, *types.Int32Type, *types.Int64Type:
		return famInt
	case *types.Float32Type, *types.Float64Type:
		return famFloat
	case *types.StringType, *types.VarCharType, *types.FixedCharType:
		return famString
	case *types.BinaryType:
		return famBinary
	case *types.PrecisionTimestampTzType, *types.PrecisionTimestampType, *types.TimestampTzType, *types.TimestampType:
		return famTimestamp
	case *types.DateType:
		return famDate
	case *types.DecimalType:
		return famNumeric
	case *types.PrecisionTimeType, *types.TimeType:
		return famTime
	}
	return famOther
}

// numRank orders numeric types for promotion.
func numRank(t types.Type) int {
	switch t.(type) {
	case *types.Int8Type:
		return 1
	case *types.Int16Type:
		return 2
	case *types.Int32Type:
		return 3
	case *types.Int64Type:
		return 4
	case *types.DecimalType:
		return 5
	case *types.Float32Type:
		return 6
	case *types.Float64Type:
		return 7
	}
	return 0
}

// coerce gives v the type t: an untyped literal is read as a t literal, NULL becomes a typed
// NULL, a parameter takes t; a typed value is cast when the cast is implicit in PostgreSQL
// (numeric widening); anything else is an error naming what.
func (bd *binder) coerce(v bval, t types.Type, what string) (expr.Expression, error) {
	switch {
	case isIntervalType(t) && (v.null || v.str != nil):
		return bd.intervalValue(v, what)
	case v.null:
		return expr.NewNullLiteral(t.WithNullability(nullableN)), nil
	case v.str != nil:
		if _, ok := v.intervalConst(); ok {
			// An interval constant is an interval value (intervaltype.go), never the text it
			// was written in: as text, PostgreSQL's output form of the interval.
			iv, err := bd.intervalValue(v, what)
			if err != nil {
				return nil, err
			}
			return bd.coerce(typed(iv), t, what)
		}
		if familyOf(t) == famTimestamp && !bd.comparing {
			if _, err := TimestampIn(*v.str, isWallclock(t)); err != nil && err.(*Error).SQLState == "22008" {
				return nil, err
			}
		}
		return literalOfType(*v.str, t)
	case v.param > 0 && familyOf(t) == famNumeric:
		// A parameter given a numeric type by its company (CASE, COALESCE, a list): its value's
		// display scale would be lost to the type's (numparam.go binds the parameters that
		// are cast to numeric or stand beside one in an operator).
		return nil, refused(Unimplemented, "0A000", "a numeric parameter here is not supported: cast it ($%d::numeric)", v.param)
	case v.param > 0:
		if prev, ok := bd.ps.types[v.param]; ok && !sameType(prev, t) {
			return nil, errorf(InvalidArgument, "parameter $%d is used both as %s and as %s", v.param, typeName(prev), typeName(t))
		}
		bd.ps.types[v.param] = t
		if bd.ps.vals == nil {
			if familyOf(t) == famInt {
				bd.ps.countInt(false, v.param)
			}
			lit := expr.NewNullLiteral(t.WithNullability(nullableN))
			bd.ps.placeholders[lit] = v.param
			return lit, nil
		}
		if v.param > len(bd.ps.vals) {
			return nil, errorf(InvalidArgument, "parameter $%d has no value", v.param)
		}
		if familyOf(t) == famTimestamp && !bd.comparing {
			// A value (not a comparison's operand, which paramLiteral clamps as a bound):
			// an instant outside timestamp[ns] is 22008, never clamped.
			if err := paramInNanoRange(bd.ps.vals[v.param-1], isWallclock(t)); err != nil {
				return nil, err
			}
		}
		return paramLiteral(bd.ps.vals[v.param-1], t, v.param)
	}
	have := v.e.GetType()
	if sameType(have, t) {
		return v.e, nil
	}
	if isIntervalType(have) && familyOf(t) == famString {
		c, _, err := bd.castInterval(v.e, t)
		return c.e, err
	}
	hf, tf := familyOf(have), familyOf(t)
	if hf == famNumeric && tf == famFloat {
		return bd.numericToFloatType(v.e, t)
	}
	if tf == famNumeric && (hf == famInt || hf == famNumeric) {
		return bd.coerceNumeric(v, t)
	}
	if (hf == famInt || hf == famFloat) && (tf == famInt || tf == famFloat) && numRank(have) < numRank(t) {
		if lit := foldNumber(v.e, t); lit != nil {
			return lit, nil
		}
		return &expr.Cast{Type: t.WithNullability(have.GetNullability()), Input: v.e, FailureBehavior: types.BehaviorThrowException}, nil
	}
	if hf == famString && tf == famString {
		return v.e, nil
	}
	if hf == famDate && tf == famTimestamp {
		if d, ok := v.e.(*expr.PrimitiveLiteral[types.Date]); ok && !bd.comparing {
			// A date constant read as a timestamp (COALESCE(ts, date '0001-01-01'), least,
			// CASE, an argument): midnight UTC, which outside timestamp[ns] is 22008, never
			// clamped (PostgreSQL answers such a value, which this engine cannot hold).
			if checkNanoRange(time.Unix(int64(d.Value)*86400, 0).UTC()) != nil {
				return nil, errTimestampRange()
			}
		}
		return bd.dateToTimestamp(v.e, t), nil
	}
	if hf == famTimestamp && tf == famTimestamp {
		// timestamp without time zone ↔ with time zone, in the session's zone (UTC).
		return bd.retypeTimestamp(v.e, t)
	}
	if what == "" {
		what = "the expression"
	}
	return nil, errorf(InvalidArgument, "%s must be %s, not %s", what, typeName(t), typeName(have))
}

// dateToTimestamp is PostgreSQL's implicit cast of a date to a timestamp (date → timestamp
// with time zone in comparisons with the timestamp column): midnight of the date in the
// session's zone, UTC. A date literal is folded to the timestamp literal (clamped to the
// nanosecond range, whose bound selects the same rows: the caller, coerce, refuses one
// beyond it outside a comparison), so that a bound such as timestamp >= DATE '2001-01-01' is
// a routed bound; a date parameter at prepare time is stood in for by a
// placeholder of type t (the parameter keeps its declared type, date); any other date
// expression is cast.
func (bd *binder) dateToTimestamp(e expr.Expression, t types.Type) expr.Expression {
	if num, ph := bd.ps.placeholders[e]; ph {
		stand := expr.NewNullLiteral(t.WithNullability(nullableN))
		bd.ps.placeholders[stand] = num
		return stand
	}
	if d, ok := e.(*expr.PrimitiveLiteral[types.Date]); ok {
		ts := clampNano(time.Unix(int64(d.Value)*86400, 0).UTC())
		if _, wall := t.(*types.PrecisionTimestampType); wall {
			return expr.NewPrecisionTimestampLiteral(ts.UnixNano(), types.PrecisionNanoSeconds, nullableN)
		}
		return tsLiteral(ts)
	}
	return &expr.Cast{Type: t.WithNullability(e.GetType().GetNullability()), Input: e, FailureBehavior: types.BehaviorThrowException}
}

// clampNano clamps t to the instants of timestamp[ns].
func clampNano(t time.Time) time.Time {
	if t.Before(minNanoTime) {
		return minNanoTime
	}
	if t.After(maxNanoTime) {
		return maxNanoTime
	}
	return t
}

// foldNumber converts a numeric literal to the wider numeric type t, nil when e is not one.
func foldNumber(e expr.Expression, t types.Type) expr.Expression {
	var i int64
	var f float64
	isFloat := false
	switch l := e.(type) {
	case *expr.PrimitiveLiteral[int16]:
		i = int64(l.Value)
	case *expr.PrimitiveLiteral[int32]:
		i = int64(l.Value)
	case *expr.PrimitiveLiteral[int64]:
		i = l.Value
	case *expr.PrimitiveLiteral[float64]:
		f, isFloat = l.Value, true
	case *expr.PrimitiveLiteral[float32]:
		f, isFloat = float64(l.Value), true
	default:
		return nil
	}
	switch t.(type) {
	case *types.Float32Type:
		if !isFloat {
			// int2/int4/int8 → float4 rounds to the nearest real, as C's conversion does.
			return expr.NewPrimitiveLiteral(float32(i), false)
		}
	case *types.Int32Type:
		if !isFloat {
			return expr.NewPrimitiveLiteral(int32(i), false) // from int2: always in range
		}
	case *types.Int64Type:
		if !isFloat {
			return expr.NewPrimitiveLiteral(i, false)
		}
	case *types.Float64Type:
		if !isFloat {
			f = float64(i)
		}
		return expr.NewPrimitiveLiteral(f, false)
	}
	return nil
}

// literalOfType reads an untyped string literal as a literal of type t. Messages never quote
// the literal.
func literalOfType(s string, t types.Type) (expr.Expression, error) {
	switch familyOf(t) {
	case famString:
		return expr.NewPrimitiveLiteral(s, true), nil
	case famBinary:
		return expr.NewByteSliceLiteral([]byte(s), true), nil
	case famBool:
		// boolin: prefixes of true/false/yes/no, on/off, 1/0, any case, between white space.
		b, err := pgnumfmt.BoolIn(s)
		if err != nil {
			return nil, floatInError(err, "22P02", "invalid input syntax for type boolean")
		}
		return expr.NewPrimitiveLiteral(b, true), nil
	case famInt:
		// int2in, int4in and int8in: decimal digits only, between white space.
		bits := 64
		switch t.(type) {
		case *types.Int16Type:
			bits = 16
		case *types.Int32Type:
			bits = 32
		}
		n, err := pgnumfmt.IntIn(s, bits)
		if err != nil {
			return nil, floatInError(err, "22P02", "invalid input syntax for type "+typeName(t))
		}
		switch bits {
		case 16:
			return expr.NewPrimitiveLiteral(int16(n), true), nil
		case 32:
			return expr.NewPrimitiveLiteral(int32(n), true), nil
		}
		return expr.NewPrimitiveLiteral(n, true), nil
	case famFloat:
		// float4in and float8in: the nearest value of the type to the text.
		f, err := pgnumfmt.FloatIn(s, floatBits(t))
		if err != nil {
			return nil, floatInError(err, "22P02", "invalid input syntax for type "+typeName(t))
		}
		return floatConstant(f, t, true), nil
	case famNumeric:
		return numericLiteralOfType(s, t)
	case famTimestamp:
		if isWallclock(t) {
			// timestamp without time zone: PostgreSQL ignores a zone written in the literal.
			ts, err := parseWallclock(s)
			if err != nil {
				return nil, err
			}
			return expr.NewPrecisionTimestampLiteral(ts.UnixNano(), types.PrecisionNanoSeconds, nullableN), nil
		}
		ts, err := parseClamped(s)
		if err != nil {
			return nil, err
		}
		return tsLiteral(ts), nil
	case famDate:
		d, err := parseDate(s)
		if err != nil {
			return nil, err
		}
		return expr.NewPrimitiveLiteral(types.Date(d.Unix()/86400), true), nil
	case famTime:
		us, err := timeIn(s)
		if err != nil {
			return nil, err
		}
		return timeLiteral(us), nil
	}
	return nil, errorf(InvalidArgument, "a literal of type %s is not supported", typeName(t))
}

// parseClamped parses a timestamp literal; instants outside timestamp[ns] are clamped to its
// bounds (a bound beyond them selects the same rows).
func parseClamped(s string) (time.Time, error) {
	return parseTimestampText(s, false)
}

// parseWallclock parses a timestamp without time zone literal: a zone designator is read and
// ignored, as PostgreSQL ignores it; clamped as parseClamped is.
func parseWallclock(s string) (time.Time, error) {
	return parseTimestampText(s, true)
}

func parseTimestampText(s string, naive bool) (time.Time, error) {
	t, err := readTimestamp(s, naive)
	if err != nil {
		return time.Time{}, err
	}
	if t.Before(minNanoTime) {
		return minNanoTime, nil
	}
	if t.After(maxNanoTime) {
		return maxNanoTime, nil
	}
	return t, nil
}

// readTimestamp reads timestamp text (naive: without time zone, a zone in the text ignored),
// unclamped; errors are tsParser.err's.
func readTimestamp(s string, naive bool) (time.Time, error) {
	p := tsParser{s: strings.TrimSpace(s), naive: naive}
	t, ok := p.parse()
	if !ok {
		if naive {
			return time.Time{}, p.err(typeTimestamp)
		}
		return time.Time{}, p.err(typeTimestamptz)
	}
	return t, nil
}

func tsLiteral(t time.Time) expr.Literal {
	return expr.NewPrecisionTimestampTzLiteral(t.UnixNano(), types.PrecisionNanoSeconds, nullableN)
}

// paramLiteral turns a bound parameter value into a literal of type t.
func paramLiteral(v any, t types.Type, pos int) (expr.Expression, error) {
	if v == nil {
		return expr.NewNullLiteral(t.WithNullability(nullableN)), nil
	}
	wrong := func() error {
		return errorf(InvalidArgument, "parameter $%d must be %s, got %s", pos, typeName(t), valueTypeName(v))
	}
	if x, ok := v.(string); ok {
		switch familyOf(t) {
		case famBool, famInt, famFloat, famTimestamp, famDate, famTime:
			// A bound string is an untyped literal (DeclareParameterTypes): read by the type's
			// input function (boolin, int2in/int4in/int8in, float4in/float8in, timestamp_in
			// ignoring a written zone, timestamptz_in, date_in), as PostgreSQL reads a parameter
			// of type unknown, and as a constant of the type is read (literalOfType).
			e, err := literalOfType(x, t)
			if err != nil {
				return nil, paramError(pos, err)
			}
			return e, nil
		}
	}
	switch familyOf(t) {
	case famString:
		// text (a partition value among them) is UTF-8, as the stores and the loader hold it
		// (load refuses other bytes): anything else is refused, as PostgreSQL refuses a byte
		// sequence invalid in the server's encoding.
		switch x := v.(type) {
		case string:
			if !validText(x) {
				return nil, errInvalidUTF8Param(pos, x)
			}
			return expr.NewPrimitiveLiteral(x, true), nil
		case []byte:
			if !validText(string(x)) {
				return nil, errInvalidUTF8Param(pos, string(x))
			}
			return expr.NewPrimitiveLiteral(string(x), true), nil
		}
	case famBinary:
		switch x := v.(type) {
		case string:
			return expr.NewByteSliceLiteral([]byte(x), true), nil
		case []byte:
			return expr.NewByteSliceLiteral(x, true), nil
		}
	case famBool:
		if x, ok := v.(bool); ok {
			return expr.NewPrimitiveLiteral(x, true), nil
		}
	case famInt:
		n, ok := asInt64(v)
		if !ok {
			if isUnsigned(v) {
				return nil, limitRange(pos)
			}
			return nil, wrong()
		}
		// The value is a bigint (the parameter schema declares int64 for every integer
		// parameter), converted to the parameter's type as PostgreSQL's int84 and int82
		// casts convert it: refused past the type's range, never wrapped.
		return intLiteral(n, t, true)
	case famFloat:
		if _, real := t.(*types.Float32Type); real {
			// A real parameter: a float32 as it is, a double or an integer rounded to the
			// nearest real (float8 → float4 past real's range is 22003, as in PostgreSQL).
			var f float64
			switch x := v.(type) {
			case float32:
				return expr.NewPrimitiveLiteral(x, true), nil
			case float64:
				f = x
			default:
				n, ok := asInt64(v)
				if !ok {
					return nil, wrong()
				}
				f = float64(n)
			}
			// float84 (double precision → real): a finite value past real's range overflows,
			// a nonzero one below its smallest denormal underflows (SQLSTATE 22003).
			if r := float32(f); math.IsInf(float64(r), 0) && !math.IsInf(f, 0) {
				return nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "value out of range: overflow"}
			} else if r == 0 && f != 0 {
				return nil, &Error{Code: InvalidArgument, SQLState: "22003", Msg: "value out of range: underflow"}
			}
			return expr.NewPrimitiveLiteral(float32(f), true), nil
		}
		switch x := v.(type) {
		case float64:
			return expr.NewPrimitiveLiteral(x, true), nil
		case float32:
			return expr.NewPrimitiveLiteral(float64(x), true), nil
		}
		if n, ok := asInt64(v); ok {
			return expr.NewPrimitiveLiteral(float64(n), true), nil
		}
	case famTime:
		switch x := v.(type) {
		case timeOfDayParam:
			if x < 0 || x > calendar.MicrosPerDay {
				return nil, errFieldRange // past 24:00:00, as time_in refuses it
			}
			return timeLiteral(int64(x)), nil
		case time.Time:
			// An instant (database/sql's time64[ns]): its time of day in UTC, as
			// timestamptz::time in the session's zone.
			return timeLiteral(calendar.TimeOfDay(x.UnixNano())), nil
		}
	case famTimestamp:
		switch x := v.(type) {
		case time.Time:
			if x.Before(minNanoTime) {
				x = minNanoTime
			} else if x.After(maxNanoTime) {
				x = maxNanoTime
			}
			return tsLiteral(x), nil
		}
	case famDate:
		if x, ok := v.(time.Time); ok {
			// A date32/date64 value (midnight UTC) or an instant: its date in UTC.
			days := x.UTC().Unix() / 86400
			if x.UTC().Unix() < 0 && x.UTC().Unix()%86400 != 0 {
				days--
			}
			return expr.NewPrimitiveLiteral(types.Date(days), true), nil
		}
	}
	return nil, wrong()
}

// validText reports whether s can be a text value: UTF-8 without a NUL byte, as PostgreSQL's
// pg_verify_mbstr verifies a text parameter's bytes (a NUL is invalid in every encoding).
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// errInvalidUTF8Param refuses text s of parameter $pos that is no text value (validText):
// PostgreSQL's character_not_in_repertoire (22021), without the bytes.
func errInvalidUTF8Param(pos int, s string) *Error {
	msg := fmt.Sprintf("parameter $%d must be valid UTF-8", pos)
	if utf8.ValidString(s) {
		msg = fmt.Sprintf("parameter $%d must not hold a NUL byte (text cannot hold one)", pos)
	}
	return &Error{Code: InvalidArgument, SQLState: "22021", Msg: msg}
}

// valueTypeName names the type of a bound parameter value as PostgreSQL would name it
// (BindGeneral's Go values, BindGeneralRecord's Arrow values read as Go values), never Go's
// name and never the value.
func valueTypeName(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case []byte:
		return "bytea"
	case bool:
		return "boolean"
	case int8, int16, uint8:
		return "smallint"
	case int32, uint16:
		return "integer"
	case int, int64, uint, uint32, uint64:
		return "bigint"
	case float32:
		return "real"
	case float64:
		return "double precision"
	case time.Time:
		return "timestamp with time zone"
	case timeOfDayParam:
		return "time without time zone"
	case []any:
		return "an array"
	case *apd.Decimal:
		return "numeric"
	}
	return "a value of an unsupported type"
}

func isUnsigned(v any) bool {
	switch v.(type) {
	case uint, uint64:
		return true
	}
	return false
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		if uint64(x) <= math.MaxInt64 {
			return int64(x), true
		}
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// fn builds a scalar function call of urn:name with the given output type.
func (bd *binder) fn(urn, name string, out types.Type, args ...types.FuncArg) (*expr.ScalarFunction, error) {
	var opts []*types.FunctionOption
	if urn == URNArithmetic {
		// PostgreSQL raises an error on integer overflow: arrow-go's checked kernels.
		opts = []*types.FunctionOption{{Name: "overflow", Preference: []string{"ERROR"}}}
	}
	f, err := expr.NewCustomScalarFunc(bd.reg, extensions.NewScalarFuncVariant(extensions.ID{URN: urn, Name: name}), out, opts, args...)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", name, err)
	}
	return f, nil
}

func (bd *binder) ifThen(pairs []expr.IfThenPair, els expr.Expression) (expr.Expression, error) {
	for i := range pairs {
		pairs[i].Then = nullable(pairs[i].Then)
	}
	e, err := expr.NewIfThen(pairs[0], nullable(els), pairs[1:]...)
	if err != nil {
		return nil, fmt.Errorf("bind CASE: %w", err)
	}
	return e, nil
}

// datetimeCommon is the type PostgreSQL resolves a timestamp (with or without time zone) and a
// timestamp or a date to, nil for other types: the implicit timestamp → timestamp with time
// zone (in the session's zone, UTC), date → timestamp or timestamp with time zone (midnight,
// UTC) casts, timestamptz being the datetime category's preferred type.
func datetimeCommon(a, b types.Type) types.Type {
	af, bf := familyOf(a), familyOf(b)
	switch {
	case af == famTimestamp && bf == famTimestamp:
		if sameType(a, b) {
			return a
		}
		return tsType()
	case af == famTimestamp && bf == famDate:
		return a
	case af == famDate && bf == famTimestamp:
		return b
	}
	return nil
}

// unify gives two values a common type (PostgreSQL's operator resolution, simplified):
// untyped values take the other's type (text when both are untyped), numbers are promoted.
func (bd *binder) unify(a, b bval, what string) (expr.Expression, expr.Expression, error) {
	var t types.Type
	switch {
	case a.untyped() && b.untyped():
		t = strType()
		if a.param > 0 {
			if pt, ok := bd.ps.types[a.param]; ok {
				t = pt
			}
		} else if b.param > 0 {
			if pt, ok := bd.ps.types[b.param]; ok {
				t = pt
			}
		}
	case a.untyped():
		t = b.typ()
	case b.untyped():
		t = a.typ()
	default:
		at, btt := a.typ(), b.typ()
		af, bf := familyOf(at), familyOf(btt)
		switch {
		case sameType(at, btt):
			t = at
		case isNumber(af) && isNumber(bf):
			t = operatorNumber(at, btt)
		case af == famString && bf == famString:
			t = at
		case datetimeCommon(at, btt) != nil:
			t = datetimeCommon(at, btt)
		default:
			return nil, nil, errorf(InvalidArgument, "operator does not exist: %s %s %s", typeName(at), what, typeName(btt))
		}
	}
	t = t.WithNullability(nullableN)
	x, err := bd.coerceBeside(a, b, t, "")
	if err != nil {
		return nil, nil, err
	}
	y, err := bd.coerceBeside(b, a, t, "")
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// operands binds the two operands of a binary operator, left then right. A decimal constant
// past the 38 digits of flightsrv's numeric (22003 alone) beside a double precision or real
// value is read as a double: PostgreSQL's operators on a float and a numeric are float8's, the
// constant cast by numeric_float8 (float8in of its text, floatOfDecimalText), so x > 1e300
// answers and x = 1e-400 is 22003 as PostgreSQL's.
func (bd *binder) operands(ln, rn *pg.Node, sc *scope) (l, r bval, err error) {
	l, lerr := bd.bindExpr(ln, sc)
	if lerr != nil && !bigDecimal(ln) {
		return bval{}, bval{}, lerr
	}
	r, err = bd.bindExpr(rn, sc)
	switch {
	case lerr != nil && err == nil && !r.untyped() && familyOf(r.typ()) == famFloat:
		e, ferr := floatOfDecimalText(ln.GetAConst().GetFval().GetFval(), fp64Type())
		return typed(e), r, ferr
	case lerr != nil:
		return bval{}, bval{}, lerr
	case err != nil && bigDecimal(rn) && !l.untyped() && familyOf(l.typ()) == famFloat:
		e, ferr := floatOfDecimalText(rn.GetAConst().GetFval().GetFval(), fp64Type())
		return l, typed(e), ferr
	}
	return l, r, err
}

// bigDecimal reports whether n is a decimal constant (an A_Const float).
func bigDecimal(n *pg.Node) bool { return n.GetAConst().GetFval() != nil }

// coerceBeside is coerce of v, met by other in an operator, an IN list or a common type: an
// untyped text constant beside a bytea value (other.bytea) is PostgreSQL's unknown literal
// typed bytea, read as byteain reads it (bytea.go: b = '\x61' compares with the byte 'a', not
// with the literal's four characters); an untyped constant or parameter beside a character(n)
// value is bpchar, its trailing spaces dropped (bpchar.go).
func (bd *binder) coerceBeside(v, other bval, t types.Type, what string) (expr.Expression, error) {
	if other.bytea && v.str != nil && familyOf(t) == famBinary {
		b, err := bd.byteaCast(v)
		return b.e, err
	}
	if e, ok := bpcharBeside(v, other); ok && familyOf(t) == famString {
		return e, nil
	}
	e, err := bd.coerce(v, t, what)
	if err == nil && (v.param > 0 || v.varchar) && other.bpchar != 0 && familyOf(t) == famString {
		// A parameter or a varchar beside a character(n) value is bpchar: its trailing
		// spaces dropped.
		if lit, ok := e.(*expr.PrimitiveLiteral[string]); ok {
			return expr.NewPrimitiveLiteral(strings.TrimRight(lit.Value, " "), false), nil
		}
		return bd.fn(URNPostgres, "rtrim", strType(), e, expr.NewPrimitiveLiteral(" ", false))
	}
	return e, err
}

// isReal reports whether t is real (float4, Arrow float32).
func isReal(t types.Type) bool {
	_, ok := t.(*types.Float32Type)
	return ok
}

// errSumDistinctReal refuses sum(DISTINCT real): PostgreSQL adds the distinct reals in single
// precision in their sorted order, which the distinct measures (kept in the order the values
// first come) do not reproduce.
var errSumDistinctReal = refused(Unimplemented, "0A000", "sum(DISTINCT real) is not supported: PostgreSQL adds the distinct reals in single precision in sorted order; sum(DISTINCT x::float8) is the double precision sum")

// operatorNumber is the type two numbers of different types meet in under PostgreSQL's
// operator resolution: real beside a number of another type (an integer, a numeric, double
// precision) is double precision, as PostgreSQL prefers float8's operators (float48pl,
// float48eq…) over casting the other operand to real; otherwise widerNumber's.
func operatorNumber(a, b types.Type) types.Type {
	if isReal(a) != isReal(b) {
		return fp64Type()
	}
	return widerNumber(a, b)
}

var comparisons = map[string]string{"=": "equal", "<>": "not_equal", "!=": "not_equal", "<": "lt", ">": "gt", "<=": "lte", ">=": "gte"}

var arithmetic = map[string]string{"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}

// compare builds a comparison.
func (bd *binder) compare(op string, a, b bval) (expr.Expression, error) {
	if isIntervalVal(a) || isIntervalVal(b) {
		v, _, err := bd.intervalBinary(op, a, b)
		return v.e, err
	}
	if e, ok, err := bd.jsonCompare(op, a, b); ok {
		return e, err
	}
	if involvesNumeric(a, b) {
		v, err := bd.numericBinary(op, a, b)
		return v.e, err
	}
	bd.noteIntComparison(a, b)
	bd.noteIntComparison(b, a)
	a, b = wholeFloatAsInt(a, b), wholeFloatAsInt(b, a)
	bd.comparing = true
	x, y, err := bd.unify(a, b, op)
	bd.comparing = false
	if err != nil {
		return nil, err
	}
	if _, isBool := x.GetType().(*types.BooleanType); isBool && op != "=" && op != "<>" && op != "!=" {
		// PostgreSQL orders booleans false < true; the executor's kernels order numbers, so
		// both sides are compared as 0 and 1 (NULL stays NULL).
		x = &expr.Cast{Type: i32Type().WithNullability(x.GetType().GetNullability()), Input: x, FailureBehavior: types.BehaviorThrowException}
		y = &expr.Cast{Type: i32Type().WithNullability(y.GetType().GetNullability()), Input: y, FailureBehavior: types.BehaviorThrowException}
	}
	return bd.fn(URNComparison, comparisons[op], booleanType(), x, y)
}

// bindExpr binds a scalar expression over sc. In an aggregate context (bd.agg), aggregate
// calls become references to measures and expressions equal to a grouping expression
// references to it; other column references are errors.
func (bd *binder) bindExpr(n *pg.Node, sc *scope) (bval, error) {
	if n == nil {
		return bval{}, ErrInvalidPlan
	}
	if ac := bd.agg; ac != nil {
		return bd.bindInAggregate(n, sc, ac)
	}
	return bd.bindPlain(n, sc)
}

func (bd *binder) bindPlain(n *pg.Node, sc *scope) (bval, error) {
	switch v := n.GetNode().(type) {
	case *pg.Node_ColumnRef:
		return bd.columnRef(v.ColumnRef, sc)
	case *pg.Node_AConst:
		return constant(v.AConst)
	case *pg.Node_ParamRef:
		p := int(v.ParamRef.GetNumber())
		if p < 1 {
			return bval{}, errorf(InvalidArgument, "parameter $%d is invalid: parameters are numbered from $1", p)
		}
		if _, ok := bd.ps.types[p]; !ok && bd.ps.vals != nil && p > len(bd.ps.vals) {
			return bval{}, errorf(InvalidArgument, "parameter $%d has no value", p)
		}
		return bval{param: p}, nil
	case *pg.Node_TypeCast:
		return bd.typeCast(v.TypeCast, sc)
	case *pg.Node_AExpr:
		return bd.aExpr(v.AExpr, sc)
	case *pg.Node_BoolExpr:
		return bd.boolExpr(v.BoolExpr, sc)
	case *pg.Node_NullTest:
		arg, err := bd.value(v.NullTest.GetArg(), sc)
		if err != nil {
			return bval{}, err
		}
		name := "is_null"
		if v.NullTest.GetNulltesttype() == pg.NullTestType_IS_NOT_NULL {
			name = "is_not_null"
		}
		f, err := bd.fn(URNComparison, name, booleanType(), arg)
		return typed(f), err
	case *pg.Node_BooleanTest:
		return bd.booleanTest(v.BooleanTest, sc)
	case *pg.Node_CaseExpr:
		return bd.caseExpr(v.CaseExpr, sc)
	case *pg.Node_CoalesceExpr:
		return bd.coalesce(v.CoalesceExpr.GetArgs(), sc)
	case *pg.Node_MinMaxExpr:
		return bd.greatest(v.MinMaxExpr, sc)
	case *pg.Node_FuncCall:
		return bd.funcCall(v.FuncCall, sc)
	case *pg.Node_SqlvalueFunction:
		return bd.sqlValue(v.SqlvalueFunction)
	case *pg.Node_SubLink:
		return bd.sublinkValue(v.SubLink, sc)
	case *pg.Node_AIndirection:
		return bd.indirection(v.AIndirection, sc)
	case *pg.Node_ArrayExpr, *pg.Node_AArrayExpr:
		return bval{}, unimplementedAre("arrays outside = ANY (…)")
	case *pg.Node_RowExpr:
		return bval{}, unimplementedAre("row values")
	case *pg.Node_CollateClause:
		return bd.collate(v.CollateClause, sc)
	}
	return bval{}, unimplemented("this expression")
}

// bytewiseCollations are the collations whose order of UTF-8 text is its bytes' order, the
// one flightsrv compares, sorts and groups text in (PostgreSQL's "C" and "POSIX", and
// "ucs_basic", code point order; "default" is the database's, which flightsrv's is: C).
var bytewiseCollations = map[string]bool{"C": true, "POSIX": true, "ucs_basic": true, "default": true}

// collate binds x COLLATE name: x itself for a bytewise collation (bytewiseCollations;
// `ORDER BY x COLLATE "C"`, which tools write to get byte order from a server whose default
// collation is a locale's), 42704 for c and posix (COLLATE C unquoted, which PostgreSQL folds to
// a name no database has), any other collation (a locale's) refused by name, and 42804 for a
// value of a type without collations, as PostgreSQL's.
func (bd *binder) collate(c *pg.CollateClause, sc *scope) (bval, error) {
	names := c.GetCollname()
	name := ""
	if len(names) > 0 {
		name = names[len(names)-1].GetString_().GetSval()
	}
	if len(names) > 2 || len(names) == 2 && names[0].GetString_().GetSval() != "pg_catalog" {
		return bval{}, unimplemented("collations outside pg_catalog")
	}
	v, err := bd.bindExpr(c.GetArg(), sc)
	if err != nil {
		return bval{}, err
	}
	if !v.untyped() && (v.e == nil || familyOf(v.typ()) != famString) {
		return bval{}, &Error{Code: InvalidArgument, SQLState: "42804", Msg: "collations are not supported by type " + opTypeName(v)}
	}
	switch {
	case bytewiseCollations[name]:
		return v, nil
	case name == "c" || name == "posix":
		// COLLATE C unquoted: PostgreSQL folds it to c, which no database has.
		return bval{}, quoting(InvalidArgument, "42704", "collation %q for encoding \"UTF8\" does not exist", name)
	}
	return bval{}, unimplemented("COLLATE of a collation other than \"C\", \"POSIX\", \"ucs_basic\" and \"default\" (text is compared bytewise)")
}

func (bd *binder) columnRef(cr *pg.ColumnRef, sc *scope) (bval, error) {
	fields := cr.GetFields()
	var qual, name string
	switch len(fields) {
	case 1:
		name = fields[0].GetString_().GetSval()
	case 2:
		qual, name = fields[0].GetString_().GetSval(), fields[1].GetString_().GetSval()
	case 3:
		// schema.table.column (Metabase qualifies every column so): the tables live in the
		// public schema, as FROM public.<table> says; under another schema no FROM item
		// matches (an alias never does), PostgreSQL's 42P01.
		if fields[0].GetString_().GetSval() != "public" {
			tbl := fields[1].GetString_().GetSval()
			var pe *Error
			if _, err := sc.lookup(tbl, fields[2].GetString_().GetSval()); err == nil || !errors.As(err, &pe) || pe.SQLState != "42P01" {
				// A FROM item is named so, but not under that schema.
				return bval{}, quoting(InvalidArgument, "42P01", "invalid reference to FROM-clause entry for table %q", tbl)
			}
			return bval{}, missingFromEntry(tbl)
		}
		qual, name = fields[1].GetString_().GetSval(), fields[2].GetString_().GetSval()
	default:
		return bval{}, unimplementedAre("column references qualified by a catalog")
	}
	if fields[len(fields)-1].GetAStar() != nil {
		return bval{}, unimplemented("* in this position")
	}
	i, err := sc.lookup(qual, name)
	if err != nil {
		if len(fields) == 1 {
			if v, ok := bd.keywordValue(name); ok {
				return v, nil
			}
		}
		bd.noteDeepRef(qual, name, err)
		if len(fields) == 1 {
			bd.noteWholeRow(sc, name, err)
		}
		return bval{}, err
	}
	v := typed(sc.ref(i))
	v.bytea, v.json, v.jsonb, v.bpchar, v.typmod = sc.cols[i].bytea, sc.cols[i].json, sc.cols[i].jsonb, sc.cols[i].bpchar, sc.cols[i].typmod
	v.domainKey = sc.cols[i].domainKey
	if sc.cols[i].vary {
		v.ds = bd.scaleOf(sc, i)
	}
	return v, nil
}

// noteWholeRow records, for err (the 42703 of name, which sc does not resolve as a column),
// the refusal by name of a whole-row reference when name is one of sc's tables (a FROM item's
// alias) and no column of an enclosing query: PostgreSQL reads it as the whole row of that
// table, a composite value (SELECT e FROM json_each(…) e is (key,value)). The statement's
// error is replaced by it only when the statement fails with err (deepRefError): a reference
// decorrelation resolves after all still binds.
func (bd *binder) noteWholeRow(sc *scope, name string, err error) {
	var pe *Error
	if !errors.As(err, &pe) || pe.SQLState != "42703" {
		return
	}
	for _, e := range bd.enclosing {
		if _, lerr := e.sc.lookup("", name); lerr == nil {
			return
		}
	}
	if slices.ContainsFunc(sc.cols, func(c col) bool { return !c.hidden && c.qual != "" && c.qual == name }) {
		if bd.wholeRows == nil {
			bd.wholeRows = map[string]*Error{}
		}
		bd.wholeRows[pe.Msg] = quoting(Unimplemented, "0A000", "whole-row references to a table or a function of several columns (%s) are not supported: select its columns by name", name)
	}
}

// keywordValue answers the parameterless SQL functions written without parentheses that the
// grammar leaves as column references.
func (bd *binder) keywordValue(name string) (bval, bool) {
	switch name {
	case "current_role":
		return typed(expr.NewPrimitiveLiteral(bd.user(), true)), true
	}
	return bval{}, false
}

func constant(c *pg.A_Const) (bval, error) {
	switch {
	case c.GetIsnull():
		return bval{null: true}, nil
	case c.GetIval() != nil:
		return typed(expr.NewPrimitiveLiteral(c.GetIval().GetIval(), false)), nil
	case c.GetFval() != nil:
		s := c.GetFval().GetFval()
		if !strings.ContainsAny(s, ".eE") {
			n, err := strconv.ParseInt(s, 10, 64)
			if err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
				// PostgreSQL's grammar folds the sign into the constant's text before typing
				// it, so -2147483648 (text "-2147483648" here, not an Ival) is an integer.
				return typed(expr.NewPrimitiveLiteral(int32(n), false)), nil
			}
			if err == nil {
				return typed(expr.NewPrimitiveLiteral(n, false)), nil
			}
		}
		// A decimal constant is PostgreSQL's numeric (0.1 + 0.2 = 0.3 holds).
		return decimalConstant(s)
	case c.GetSval() != nil:
		s := c.GetSval().GetSval()
		return bval{str: &s}, nil
	case c.GetBoolval() != nil:
		return typed(expr.NewPrimitiveLiteral(c.GetBoolval().GetBoolval(), false)), nil
	case c.GetBsval() != nil:
		return bval{}, unimplementedAre("bit string literals")
	}
	return bval{}, unimplemented("this constant")
}

// castTarget maps a cast's type name to a Substrait type.
func castTarget(tn *pg.TypeName) (types.Type, string, error) {
	if tn == nil || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return nil, "", unimplemented("casts to this type")
	}
	if len(tn.GetTypmods()) > 0 {
		return nil, "", typmodCastRefusal(tn)
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return nil, "", unimplemented("casts to this type")
	}
	name := names[0].GetString_().GetSval()
	switch name {
	case "text", "varchar", "string", "name", "bpchar":
		return strType(), name, nil
	case "char":
		return nil, "", unimplementedAre(`casts to "char" (PostgreSQL's single-byte internal type)`)
	case "int2", "smallint":
		return i16Type(), name, nil
	case "int4", "int", "integer":
		return i32Type(), name, nil
	case "int8", "bigint":
		return i64Type(), name, nil
	case "float4", "real":
		// Arrow float32 end to end: 0.1::real::float8 is 0.10000000149011612, as in PostgreSQL.
		return fp32Type(), name, nil
	case "float8", "numeric", "decimal", "double precision":
		return fp64Type(), name, nil
	case "bool", "boolean":
		return booleanType(), name, nil
	case "timestamptz":
		return tsType(), name, nil
	case "timestamp":
		return wallclockType(), name, nil
	case "date":
		return dateType(), name, nil
	case "time":
		return timeType(), name, nil
	case "bytea":
		return binType(), name, nil
	case "json", "jsonb":
		return binType(), name, nil
	case "interval":
		return nil, "interval", nil
	}
	return nil, "", unimplementedAre("casts to " + name)
}

func (bd *binder) typeCast(tc *pg.TypeCast, sc *scope) (res bval, rerr error) {
	if v, ok, err := bd.numericTypeCast(tc, sc); ok {
		return v, err
	}
	if v, ok, err := bd.varcharTypeCast(tc, sc); ok {
		return v, err
	}
	if v, ok, err := bd.intervalTypeCast(tc); ok {
		return v, err
	}
	if v, ok, err := bd.timestampTypmodCast(tc, sc); ok {
		return v, err
	}
	if v, ok, err := bd.timeTypeCast(tc, sc); ok {
		return v, err
	}
	t, name, err := castTarget(tc.GetTypeName())
	if err != nil {
		return bval{}, err
	}
	if name == "interval" {
		if c := tc.GetArg().GetAConst(); c != nil && c.GetSval() != nil {
			s := intervalTag + c.GetSval().GetSval()
			return bd.intervalConstant(s), nil
		}
		v, err := bd.bindExpr(tc.GetArg(), sc)
		if err != nil {
			return bval{}, err
		}
		if v.e != nil && isIntervalType(v.typ()) || v.null || v.param > 0 || isTimeVal(v) {
			e, err := bd.intervalValue(v, "")
			return typed(e), err
		}
		if v.e != nil && familyOf(v.typ()) == famString {
			// Text computed per row: interval_in, the constants' reader (IntervalIn).
			f, err := bd.fn(URNPostgres, "interval_in", intervalType().WithNullability(nullableN), v.e)
			return typed(f), err
		}
		return bval{}, unimplemented("casts to interval of values that are not interval constants")
	}
	if c := tc.GetArg().GetAConst(); c != nil && c.GetFval() != nil {
		if lit, ok, err := decimalToInteger(c.GetFval().GetFval(), t); ok || err != nil {
			return typed(lit), err
		}
		if familyOf(t) == famFloat {
			// numeric_float8 and numeric_float4 of the constant: float8in or float4in of its
			// text, which holds the same number as numeric_out's, so that a constant past
			// the 38 digits of flightsrv's numeric (1e40::float8) is read as PostgreSQL
			// reads it.
			lit, err := floatOfDecimalText(c.GetFval().GetFval(), t)
			return typed(lit), err
		}
	}
	v, err := bd.bindExpr(tc.GetArg(), sc)
	if err == nil && familyOf(t) != famString {
		// A character(n) value casts to another type through its text, padding and all
		// (PostgreSQL's I/O conversion: bpcharout, then the type's input function).
		v, err = bd.padded(v)
	}
	if err != nil {
		return bval{}, err
	}
	if name == "bpchar" {
		// bpchar without a length (bpchar.go): the value's text, marked bpchar.
		if err := bpcharNoLength(v); err != nil || v.bpchar != 0 {
			return v, err
		}
		defer func() {
			if rerr == nil {
				res.bpchar = -1
			}
		}()
	}
	if name == "varchar" {
		defer func() { res.varchar = rerr == nil }()
	}
	if name == "name" {
		// name holds NAMEDATALEN - 1 = 63 bytes: longer text is cut at a character boundary
		// (PostgreSQL's namein; the executor's name_in). A constant that fits stays the
		// constant (a partition key's value written 'BOS'::name routes).
		defer func() {
			if lit, ok := res.e.(*expr.PrimitiveLiteral[string]); ok && len(lit.Value) <= 63 {
				return
			}
			if rerr == nil && res.e != nil {
				var f *expr.ScalarFunction
				f, rerr = bd.fn(URNPostgres, "name_in", res.typ(), res.e)
				res = typed(f)
			}
		}()
	}
	if v.param > 0 && name == "timestamp" {
		return bd.wallclockParam(v)
	}
	if name == "bytea" {
		return bd.byteaCast(v)
	}
	if name == "jsonb" {
		return bd.jsonbCast(v)
	}
	if name == "json" && (v.json || v.jsonb) {
		// A json document (jsonb's text is json too): marked json, so that = and the other
		// operators json lacks are PostgreSQL's 42883.
		v.json, v.jsonb = true, false
		return v, nil
	}
	if name == "json" && (v.untyped() || !v.bytea && (familyOf(v.typ()) == famBinary || familyOf(v.typ()) == famString)) {
		// Text (or a binary value not known to be a document): json_in validates it.
		if v.untyped() {
			return bd.jsonLiteral(v)
		}
		return bd.jsonIn(v.e)
	}
	if name == "json" {
		// bytea and the types without text: PostgreSQL has no cast (42846).
		return bval{}, errorf(InvalidArgument, "cannot cast type %s to json", opTypeName(v))
	}
	if isJSONDoc(v) && familyOf(t) != famString {
		return bd.docCast(v, t)
	}
	if v.bytea && familyOf(t) == famString {
		if _, plain := t.(*types.StringType); plain {
			return bd.byteaText(v)
		}
	}
	if familyOf(t) == famTime {
		return bd.toTime(v)
	}
	if v.str != nil && familyOf(t) == famTimestamp {
		// An explicit cast's value is the text's instant: one outside timestamp[ns] is
		// refused (22008 "timestamp out of range"), not clamped to the range as a bound
		// compared with a column is ('1500-01-01'::timestamptz was 1677-09-21 00:12:43…).
		if _, err := TimestampIn(*v.str, isWallclock(t)); err != nil && err.(*Error).SQLState == "22008" {
			return bval{}, err
		}
	}
	if v.untyped() {
		e, err := bd.coerce(v, t, "")
		return typed(e), err
	}
	if v.ds != nil && familyOf(t) == famString {
		if _, plain := t.(*types.StringType); !plain {
			return bval{}, unimplemented("a cast of a numeric whose display scale varies by row to " + typeName(t))
		}
		return bd.varyingText(v)
	}
	return bd.cast(v.e, t)
}

// paramInNanoRange is 22008 "timestamp out of range" when parameter value v, read as a
// timestamp (an Arrow timestamp or date, or text as timestamp input reads it), is an instant
// outside timestamp[ns]; nil otherwise (other values are paramLiteral's to refuse).
func paramInNanoRange(v any, naive bool) error {
	switch x := v.(type) {
	case time.Time:
		if checkNanoRange(x) != nil {
			return errTimestampRange()
		}
	case string:
		if _, err := TimestampIn(x, naive); err != nil && err.(*Error).SQLState == "22008" {
			return err
		}
	}
	return nil
}

// wallclockType is PostgreSQL's timestamp without time zone, the declared type of a parameter
// cast to timestamp (CAST($1 AS timestamp), $1::timestamp).
func wallclockType() types.Type {
	return &types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: nullableN}
}

// paramWallclockType is the Arrow type declared for a wallclockType parameter: zone-less, in
// milliseconds for the JDBC driver's sake as paramTimestampType is.
var paramWallclockType = &arrow.TimestampType{Unit: arrow.Millisecond}

// wallclockParam binds parameter v cast to timestamp without time zone. The parameter is
// declared as one (PostgreSQL's parameter type), and its value is a timestamp with time zone:
// in the session's zone, UTC, a wall-clock time and the UTC instant coincide, and PostgreSQL
// converts such a value to the column's timestamp with time zone in that zone. A zone-less
// bound value is read as UTC and an aware one as its instant (what PostgreSQL's conversion
// through the UTC wall clock gives); a value bound as text is read as the constant is
// (timestamp_in: a zone written in it ignored). A parameter also used as another type is refused, as
// PostgreSQL refuses inconsistent types.
func (bd *binder) wallclockParam(v bval) (bval, error) {
	if prev, ok := bd.ps.types[v.param]; ok {
		if !sameType(prev, wallclockType()) {
			return bval{}, errorf(InvalidArgument, "parameter $%d is used both as %s and as %s", v.param, typeName(prev), typeName(wallclockType()))
		}
		delete(bd.ps.types, v.param)
	}
	if bd.boundString(v.param) != nil {
		// Bound as text: timestamp_in's wall clock, a written zone ignored, as the constant
		// '…'::timestamp is read (literalOfType), not the instant the zone would name.
		e, err := bd.coerce(v, wallclockType(), "")
		return typed(e), err
	}
	e, err := bd.coerce(v, tsType(), "")
	if err != nil {
		return bval{}, err
	}
	bd.ps.types[v.param] = wallclockType()
	// Its value is a timestamp without time zone (AT TIME ZONE reads it as one).
	e, err = bd.retypeTimestamp(e, wallclockType())
	return typed(e), err
}

// cast converts a typed value: numbers, text, booleans, timestamps and binary JSON, with
// arrow-go's safe casts (an invalid value is an error, as in PostgreSQL).
func (bd *binder) cast(e expr.Expression, t types.Type) (bval, error) {
	have := e.GetType()
	if sameType(have, t) {
		return typed(e), nil
	}
	if familyOf(have) == famTime || familyOf(t) == famTime {
		return bd.castTime(e, t)
	}
	if v, ok, err := bd.castInterval(e, t); ok {
		return v, err
	}
	hf, tf := familyOf(have), familyOf(t)
	if isArray(have) && tf == famString {
		return bd.arrayTextCast(e)
	}
	if hf == famNumeric {
		if v, ok, err := bd.castFromNumeric(e, t); ok {
			return v, err
		}
	}
	ok := false
	switch tf {
	case famString:
		ok = hf != famOther && hf != famBinary
		if hf == famBinary {
			// bytea::text would print hex in PostgreSQL; JSON (our binary value) prints as text.
			ok = true
		}
	case famInt, famFloat:
		// boolean casts to integer only (PostgreSQL has no boolean → smallint, bigint, real
		// or double precision cast).
		_, int4 := t.(*types.Int32Type)
		ok = hf == famInt || hf == famFloat || hf == famString || hf == famBool && int4
	case famBool:
		// integer casts to boolean (int4_bool); PostgreSQL has no smallint or bigint cast.
		_, int4 := have.(*types.Int32Type)
		ok = hf == famString || int4
	case famTimestamp:
		ok = hf == famString || hf == famDate || hf == famTimestamp
	case famDate:
		ok = hf == famTimestamp || hf == famString
	case famBinary:
		ok = hf == famString
	}
	if !ok {
		return bval{}, errorf(InvalidArgument, "cannot cast type %s to %s", typeName(have), typeName(t))
	}
	if hf == famString && (tf == famTimestamp || tf == famDate) {
		// A text parameter (CAST($1 AS text)::timestamptz) stays a parameter of type text, as in
		// PostgreSQL: at prepare time its cast stands in for it (a routed bound may be one);
		// bound, its text is read as a timestamp in the session's zone (UTC), as a literal is.
		if num, ph := bd.ps.placeholders[e]; ph {
			stand := expr.NewNullLiteral(t.WithNullability(nullableN))
			bd.ps.placeholders[stand] = num
			return typed(stand), nil
		}
		if lit, isLit := e.(*expr.PrimitiveLiteral[string]); isLit {
			folded, err := literalOfType(lit.Value, t)
			return typed(folded), err
		}
	}
	if d, isDate := e.(*expr.PrimitiveLiteral[types.Date]); isDate && tf == famTimestamp {
		// An explicit cast of a date literal: midnight UTC, within timestamp[ns].
		ts := time.Unix(int64(d.Value)*86400, 0).UTC()
		if err := checkNanoRange(ts); err != nil {
			return bval{}, err
		}
		return typed(bd.dateToTimestamp(e, t)), nil
	}
	if hf == famTimestamp && tf == famTimestamp {
		e, err := bd.retypeTimestamp(e, t)
		return typed(e), err
	}
	if hf == famTimestamp && tf == famDate {
		// A timestamp constant or now() (Metabase's CAST(now() AS date) - 7 as a bound): its
		// UTC day, stable_value of it for now(), so that the route reads it.
		x, stable := stableArg(e)
		if lit, isLit := x.(*expr.ProtoLiteral); isLit {
			if ns, ok := lit.Value.(int64); ok {
				day := expr.NewPrimitiveLiteral(types.Date(time.Unix(0, ns).UTC().Truncate(24*time.Hour).Unix()/86400), true)
				if stable {
					return bd.stable(day)
				}
				return typed(day), nil
			}
		}
	}
	if hf == famFloat && tf == famInt {
		// PostgreSQL rounds to the nearest integer (half to even); arrow-go's safe cast refuses
		// any fraction. A real is rounded as the double it widens to exactly.
		if _, real := have.(*types.Float32Type); real {
			e = &expr.Cast{Type: fp64Type().WithNullability(have.GetNullability()), Input: e, FailureBehavior: types.BehaviorThrowException}
		}
		r, err := bd.fn(URNPostgres, "round", fp64Type(), e)
		if err != nil {
			return bval{}, err
		}
		e = r
	}
	return typed(&expr.Cast{Type: t.WithNullability(have.GetNullability()), Input: e, FailureBehavior: types.BehaviorThrowException}), nil
}

func (bd *binder) boolExpr(b *pg.BoolExpr, sc *scope) (bval, error) {
	args := make([]types.FuncArg, 0, len(b.GetArgs()))
	for _, a := range b.GetArgs() {
		v, err := bd.bindExpr(a, sc)
		if err != nil {
			return bval{}, err
		}
		e, err := bd.coerce(v, booleanType(), "argument of "+strings.TrimSuffix(b.GetBoolop().String(), "_EXPR"))
		if err != nil {
			return bval{}, err
		}
		args = append(args, e)
	}
	if op := b.GetBoolop(); op == pg.BoolExprType_AND_EXPR || op == pg.BoolExprType_OR_EXPR {
		// PostgreSQL's planner stops at the first operand that folds to false (AND) or true
		// (OR), before folding the next (simplify_and_arguments, simplify_or_arguments): the
		// operands after a FALSE (TRUE) constant are dropped, a failing constant among them
		// (1/0 = 1) never raises.
		decides := op == pg.BoolExprType_OR_EXPR
		for i, a := range args {
			if l, ok := a.(*expr.PrimitiveLiteral[bool]); ok && l.Value == decides {
				if i == 0 {
					return typed(l), nil
				}
				args = args[:i+1]
				break
			}
		}
	}
	switch b.GetBoolop() {
	case pg.BoolExprType_AND_EXPR:
		f, err := bd.fn(URNBoolean, "and", booleanType(), args...)
		return typed(f), err
	case pg.BoolExprType_OR_EXPR:
		if args = foldEqualities(args); len(args) == 1 {
			return typed(args[0].(expr.Expression)), nil
		}
		f, err := bd.fn(URNBoolean, "or", booleanType(), args...)
		return typed(f), err
	}
	f, err := bd.fn(URNBoolean, "not", booleanType(), args...)
	return typed(f), err
}

// foldEqualities rewrites the disjuncts of an OR that compare one expression with constants,
// x = a OR x = b OR …, into x IN (a, b, …) (a SingularOrList, where the first of them stood),
// keeping the other disjuncts in order. Both have SQL's three-valued meaning (NULL when x is
// NULL, or when nothing matches and a constant is NULL), and the IN form evaluates x once per
// row instead of once per term: an OR of 250 JSON fields took 25 s where the IN list took
// 0.24 s (a user trial). A partition column's OR of equalities becomes its IN list route.
func foldEqualities(args []types.FuncArg) []types.FuncArg {
	type group struct {
		x    expr.Expression
		lits []expr.Expression
		at   int
	}
	var groups []*group
	// byText holds the groups under their subject's text, so that finding x's group costs an
	// Equals per group of the same text, not one per group: a chain of 8,000 equalities of
	// distinct JSON fields took 20 s of planning with a scan of every group.
	byText := map[string][]*group{}
	member := make([]*group, len(args))
	equality := func(a types.FuncArg) (expr.Expression, expr.Expression, bool) {
		f, ok := a.(*expr.ScalarFunction)
		if !ok || f.ID().URN != URNComparison || f.Name() != "equal" || f.NArgs() != 2 {
			return nil, nil, false
		}
		l, lok := f.Arg(0).(expr.Expression)
		r, rok := f.Arg(1).(expr.Expression)
		if !lok || !rok {
			return nil, nil, false
		}
		if _, isLit := r.(expr.Literal); isLit {
			if _, null := r.(*expr.NullLiteral); !null {
				return l, r, true
			}
		}
		if _, isLit := l.(expr.Literal); isLit {
			if _, null := l.(*expr.NullLiteral); !null {
				return r, l, true
			}
		}
		return nil, nil, false
	}
	for i, a := range args {
		x, lit, ok := equality(a)
		if !ok {
			continue
		}
		if _, isLit := x.(expr.Literal); isLit {
			continue
		}
		var g *group
		key := x.String()
		for _, h := range byText[key] {
			if exprs.Same(h.x, x) && sameType(h.lits[0].GetType(), lit.GetType()) {
				g = h
				break
			}
		}
		if g == nil {
			g = &group{x: x, at: i}
			groups = append(groups, g)
			byText[key] = append(byText[key], g)
		}
		g.lits = append(g.lits, lit)
		member[i] = g
	}
	if !slices.ContainsFunc(groups, func(g *group) bool { return len(g.lits) > 1 }) {
		return args
	}
	out := make([]types.FuncArg, 0, len(args))
	for i, a := range args {
		switch g := member[i]; {
		case g == nil || len(g.lits) == 1:
			out = append(out, a)
		case g.at == i:
			out = append(out, &expr.SingularOrList{Value: g.x, Options: g.lits})
		}
		// Other members of a folded group are in its IN list.
	}
	return out
}

func (bd *binder) booleanTest(bt *pg.BooleanTest, sc *scope) (bval, error) {
	v, err := bd.bindExpr(bt.GetArg(), sc)
	if err != nil {
		return bval{}, err
	}
	x, err := bd.coerce(v, booleanType(), "argument of IS TRUE")
	if err != nil {
		return bval{}, err
	}
	isNull, err := bd.fn(URNComparison, "is_null", booleanType(), x)
	if err != nil {
		return bval{}, err
	}
	lit := func(b bool) expr.Expression { return expr.NewPrimitiveLiteral(b, true) }
	var onNull, want bool
	neg := false
	switch bt.GetBooltesttype() {
	case pg.BoolTestType_IS_TRUE:
		want = true
	case pg.BoolTestType_IS_NOT_TRUE:
		want, neg, onNull = true, true, true
	case pg.BoolTestType_IS_FALSE:
		want = false
	case pg.BoolTestType_IS_NOT_FALSE:
		want, neg, onNull = false, true, true
	case pg.BoolTestType_IS_UNKNOWN:
		return typed(isNull), nil
	case pg.BoolTestType_IS_NOT_UNKNOWN:
		f, err := bd.fn(URNComparison, "is_not_null", booleanType(), x)
		return typed(f), err
	default:
		return bval{}, unimplemented("this boolean test")
	}
	eq, err := bd.fn(URNComparison, "equal", booleanType(), x, lit(want))
	if err != nil {
		return bval{}, err
	}
	var then expr.Expression = eq
	if neg {
		if then, err = bd.fn(URNBoolean, "not", booleanType(), eq); err != nil {
			return bval{}, err
		}
	}
	e, err := bd.ifThen([]expr.IfThenPair{{If: isNull, Then: lit(onNull)}}, then)
	return typed(e), err
}

func (bd *binder) caseExpr(c *pg.CaseExpr, sc *scope) (bval, error) {
	var subject bval
	if c.GetArg() != nil {
		var err error
		if subject, err = bd.bindExpr(c.GetArg(), sc); err != nil {
			return bval{}, err
		}
	}
	var conds []expr.Expression
	var results []bval
	var wide wideConsts
	for _, w := range c.GetArgs() {
		cw := w.GetCaseWhen()
		var cond expr.Expression
		if c.GetArg() != nil {
			wv, err := bd.bindExpr(cw.GetExpr(), sc)
			if err != nil {
				return bval{}, err
			}
			if cond, err = bd.compare("=", subject, wv); err != nil {
				return bval{}, err
			}
		} else {
			wv, err := bd.bindExpr(cw.GetExpr(), sc)
			if err != nil {
				return bval{}, err
			}
			if cond, err = bd.coerce(wv, booleanType(), "argument of CASE/WHEN"); err != nil {
				return bval{}, err
			}
		}
		r, err := wide.bind(bd, cw.GetResult(), sc, len(results))
		if err != nil {
			return bval{}, err
		}
		conds, results = append(conds, cond), append(results, r)
	}
	els := bval{null: true}
	if c.GetDefresult() != nil {
		var err error
		if els, err = wide.bind(bd, c.GetDefresult(), sc, len(results)); err != nil {
			return bval{}, err
		}
	}
	all := append(results, els)
	if err := wide.resolve(all); err != nil {
		return bval{}, err
	}
	all, err := bd.docUnify(all)
	if err != nil {
		return bval{}, err
	}
	// PostgreSQL resolves a CASE's type with its ELSE first (transformCaseExpr).
	n, err := bpcharCommon(append([]bval{els}, results...))
	if err != nil {
		return bval{}, err
	}
	vals, err := bd.commonType(all, "CASE")
	if err != nil {
		return bval{}, err
	}
	pairs := make([]expr.IfThenPair, len(conds))
	for i := range conds {
		pairs[i] = expr.IfThenPair{If: conds[i], Then: vals[i]}
	}
	e, err := bd.ifThen(pairs, vals[len(vals)-1])
	out := typed(e)
	if familyOf(e.GetType()) == famNumeric && varyingScales(all) {
		out.ds = bd.branchScale(conds, all)
	}
	out.json, out.jsonb = docMarkers(all)
	out.bytea = anyBytea(all)
	out.bpchar = n
	out.typmod = commonTypmod(all)
	return out, err
}

// wideConsts collects the decimal constants of one common-typed list (VALUES column, CASE
// results, COALESCE, GREATEST/LEAST, an IN list with its subject, width_bucket's operand and
// bounds) that are past the 38 digits of flightsrv's numeric (22003
// alone). When the list holds a real or double precision value, PostgreSQL's resolution types
// the list float (double precision is the numeric category's preferred type; beside a real
// the constant is cast to real) and casts the constant by numeric_float8 or numeric_float4,
// so resolve reads each as float8in or float4in reads its text (floatOfDecimalText):
// VALUES (1e200::float8), (1e200) answers double precision, as PostgreSQL's.
type wideConsts struct {
	nodes []*pg.Node
	at    []int
	err   error
}

// bind binds n, the list's i-th value; a decimal constant that fails is kept for resolve (its
// value the zero bval until then).
func (w *wideConsts) bind(bd *binder, n *pg.Node, sc *scope, i int) (bval, error) {
	v, err := bd.bindExpr(n, sc)
	if err != nil && bigDecimal(n) {
		if w.err == nil {
			w.err = err
		}
		w.nodes, w.at = append(w.nodes, n), append(w.at, i)
		return bval{}, nil
	}
	return v, err
}

// resolve reads the kept constants as the float type among vs (the others), or fails with the
// first constant's error when vs holds no real or double precision value.
func (w *wideConsts) resolve(vs []bval) error {
	if len(w.at) == 0 {
		return nil
	}
	var t types.Type
	for i, v := range vs {
		if slices.Contains(w.at, i) || v.untyped() || familyOf(v.typ()) != famFloat {
			continue
		}
		if t == nil {
			t = v.typ()
		} else {
			t = widerNumber(t, v.typ())
		}
	}
	if t == nil {
		return w.err
	}
	for k, i := range w.at {
		e, err := floatOfDecimalText(w.nodes[k].GetAConst().GetFval().GetFval(), t)
		if err != nil {
			return err
		}
		vs[i] = typed(e)
	}
	return nil
}

// commonType gives a list of values one type (CASE, COALESCE, GREATEST): the first typed
// value's type, promoted over the numbers and the datetimes (datetimeCommon); text when all
// are untyped.
func (bd *binder) commonType(vs []bval, what string) ([]expr.Expression, error) {
	var t types.Type
	var first bval // the value that typed t first, named in the error
	for _, v := range vs {
		vt := v.typ()
		if vt == nil {
			continue
		}
		switch {
		case t == nil:
			t, first = vt, v
		case sameType(t, vt):
		case isNumber(familyOf(t)) && isNumber(familyOf(vt)):
			t = widerNumber(t, vt)
		case datetimeCommon(t, vt) != nil:
			t = datetimeCommon(t, vt)
		default:
			tn, vn := typeName(t), modTypeName(vt, v.bpchar, v.varchar, v.typmod)
			if sameType(t, first.typ()) {
				tn = modTypeName(t, first.bpchar, first.varchar, first.typmod)
			}
			return nil, errorf(InvalidArgument, "%s types %s and %s cannot be matched", what, tn, vn)
		}
	}
	if t == nil {
		t = strType()
	}
	if familyOf(t) == famNumeric {
		switch what {
		case "CASE", "COALESCE", "GREATEST", "LEAST", "VALUES", "lag", "lead", "JOIN/USING":
			// Each value keeps its display scale (their callers' ds; VALUES' column vary,
			// dscale.go).
		default:
			if err := sameScales(vs, what); err != nil {
				return nil, err
			}
		}
	}
	t = t.WithNullability(nullableN)
	var bytea bval // a bytea among vs: string constants beside it are byteain's (coerceBeside)
	for _, v := range vs {
		if v.bytea {
			bytea = v
		}
	}
	out := make([]expr.Expression, len(vs))
	for i, v := range vs {
		e, err := bd.coerceBeside(v, bytea, t, what)
		if err != nil {
			return nil, err
		}
		out[i] = nullable(e)
	}
	return out, nil
}

// coalesce is COALESCE(a, b, …): CASE WHEN a IS NOT NULL THEN a WHEN b IS NOT NULL THEN b …
// ELSE last END.
func (bd *binder) coalesce(args []*pg.Node, sc *scope) (bval, error) {
	vs := make([]bval, len(args))
	var wide wideConsts
	for i, a := range args {
		v, err := wide.bind(bd, a, sc, i)
		if err != nil {
			return bval{}, err
		}
		vs[i] = v
	}
	if err := wide.resolve(vs); err != nil {
		return bval{}, err
	}
	vs, err := bd.docUnify(vs)
	if err != nil {
		return bval{}, err
	}
	n, err := bpcharCommon(vs)
	if err != nil {
		return bval{}, err
	}
	es, err := bd.commonType(vs, "COALESCE")
	if err != nil {
		return bval{}, err
	}
	if len(es) == 1 {
		out := typed(es[0])
		out.ds = vs[0].ds // COALESCE(a) is a, at a's display scale
		out.json, out.jsonb = docMarkers(vs)
		out.bytea = anyBytea(vs)
		out.bpchar = n
		out.typmod = commonTypmod(vs)
		return out, nil
	}
	var pairs []expr.IfThenPair
	for _, e := range es[:len(es)-1] {
		nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), e)
		if err != nil {
			return bval{}, err
		}
		pairs = append(pairs, expr.IfThenPair{If: nn, Then: e})
	}
	e, err := bd.ifThen(pairs, es[len(es)-1])
	out := typed(e)
	if familyOf(e.GetType()) == famNumeric && varyingScales(vs) {
		conds := make([]expr.Expression, len(pairs))
		for i, p := range pairs {
			conds[i] = p.If
		}
		out.ds = bd.branchScale(conds, vs)
	}
	out.json, out.jsonb = docMarkers(vs)
	out.bytea = anyBytea(vs)
	out.bpchar = n
	out.typmod = commonTypmod(vs)
	return out, err
}

// anyBytea reports whether a value of a CASE's, COALESCE's or GREATEST/LEAST's list is
// bytea, so that their binary result is bytea too (its text \x…), not a document.
func anyBytea(vs []bval) bool {
	return slices.ContainsFunc(vs, func(v bval) bool { return v.bytea })
}

// commonTypmod is the type modifier of a CASE's or COALESCE's result (PostgreSQL's exprTypmod
// of them): the values' when every one has the same, else none.
func commonTypmod(vs []bval) string {
	for _, v := range vs[1:] {
		if v.typmod != vs[0].typmod {
			return ""
		}
	}
	return vs[0].typmod
}

// greatest is GREATEST/LEAST, ignoring NULLs as PostgreSQL does.
func (bd *binder) greatest(m *pg.MinMaxExpr, sc *scope) (bval, error) {
	vs := make([]bval, len(m.GetArgs()))
	var wide wideConsts
	for i, a := range m.GetArgs() {
		v, err := wide.bind(bd, a, sc, i)
		if err != nil {
			return bval{}, err
		}
		vs[i] = v
	}
	if err := wide.resolve(vs); err != nil {
		return bval{}, err
	}
	vs, err := bd.docUnify(vs)
	if err != nil {
		return bval{}, err
	}
	json, jsonb := docMarkers(vs)
	if json {
		return bval{}, errorf(InvalidArgument, "could not identify a comparison function for type json")
	}
	n, err := bpcharCommon(vs)
	if err != nil {
		return bval{}, err
	}
	what := "GREATEST" // PostgreSQL's transformMinMaxExpr names the function
	if m.GetOp() == pg.MinMaxOp_IS_LEAST {
		what = "LEAST"
	}
	es, err := bd.commonType(vs, what)
	if err != nil {
		return bval{}, err
	}
	op := "gt"
	if m.GetOp() == pg.MinMaxOp_IS_LEAST {
		op = "lt"
	}
	acc := es[0]
	var steps [][2]expr.Expression // each step's conditions, for the display scale (minMaxScale)
	for _, e := range es[1:] {
		// acc := CASE WHEN acc IS NULL OR e > acc THEN e ELSE acc END
		isNull, err := bd.fn(URNComparison, "is_null", booleanType(), acc)
		if err != nil {
			return bval{}, err
		}
		var better expr.Expression
		if isIntervalType(e.GetType()) {
			better, err = bd.compare(map[string]string{"gt": ">", "lt": "<"}[op], typed(e), typed(acc))
		} else if jsonb {
			// jsonb's order: the sort keys' (jsonb_sortkey).
			var ke, ka expr.Expression
			if ke, err = bd.fn(URNPostgres, "jsonb_sortkey", binType(), e); err == nil {
				if ka, err = bd.fn(URNPostgres, "jsonb_sortkey", binType(), acc); err == nil {
					better, err = bd.fn(URNComparison, op, booleanType(), ke, ka)
				}
			}
		} else {
			better, err = bd.fn(URNComparison, op, booleanType(), e, acc)
		}
		if err != nil {
			return bval{}, err
		}
		if acc, err = bd.ifThen([]expr.IfThenPair{{If: isNull, Then: e}, {If: better, Then: e}}, acc); err != nil {
			return bval{}, err
		}
		steps = append(steps, [2]expr.Expression{isNull, better})
	}
	out := typed(acc)
	if familyOf(acc.GetType()) == famNumeric && varyingScales(vs) {
		out.ds = bd.minMaxScale(steps, vs)
	}
	out.jsonb = jsonb
	out.bytea = anyBytea(vs)
	out.bpchar = n
	return out, nil
}

func (bd *binder) aExpr(a *pg.A_Expr, sc *scope) (bval, error) {
	if n, ok, err := bd.rowComparison(a, sc); err != nil || ok {
		if err != nil {
			return bval{}, err
		}
		return bd.bindExpr(n, sc)
	}
	opName := ""
	if names := a.GetName(); len(names) > 0 {
		opName = names[len(names)-1].GetString_().GetSval()
	}
	bindSide := func(n *pg.Node) (bval, error) { return bd.bindExpr(n, sc) }
	// bindSides binds operands left to right.
	bindSides := func(ns ...*pg.Node) ([]bval, error) {
		out := make([]bval, len(ns))
		for i, n := range ns {
			v, err := bindSide(n)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	// negated is e, or NOT e when not is set (NOT IN, NOT LIKE, NOT BETWEEN).
	negated := func(e expr.Expression, not bool) (bval, error) {
		if !not {
			return typed(e), nil
		}
		f, err := bd.fn(URNBoolean, "not", booleanType(), e)
		return typed(f), err
	}
	switch a.GetKind() {
	case pg.A_Expr_Kind_AEXPR_OP:
		if a.GetLexpr() == nil {
			return bd.unary(opName, a.GetRexpr(), sc)
		}
		if opName == "+" || opName == "-" {
			if v, ok, err := bd.scaledIntervalArith(opName, a, sc); ok || err != nil {
				return v, err
			}
		}
		if v, ok, err := bd.jsonbArrayOperator(opName, a, sc); ok {
			return v, err
		}
		if v, ok, err := bd.jsonPathArray(opName, a, sc); ok {
			return v, err
		}
		l, r, err := bd.operands(a.GetLexpr(), a.GetRexpr(), sc)
		if err != nil {
			return bval{}, err
		}
		return bd.binary(opName, l, r)
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		// x <> ALL(list) is NOT (x = ANY(list)) in three-valued logic (De Morgan over the
		// elements: true for an empty list, NULL for a NULL one, as PostgreSQL's scalar array
		// comparison answers).
		all := a.GetKind() == pg.A_Expr_Kind_AEXPR_OP_ALL
		if opName != "=" && opName != "<>" || (opName == "=") == all {
			return bval{}, unimplemented(opName + " ANY/ALL (…) other than = ANY and <> ALL")
		}
		l, err := bindSide(a.GetLexpr())
		if err != nil {
			return bval{}, err
		}
		in, err := bd.anyList(l, a.GetRexpr(), sc)
		if err != nil || !all {
			return in, err
		}
		return negated(in.e, true)
	case pg.A_Expr_Kind_AEXPR_IN:
		l, err := bindSide(a.GetLexpr())
		if err != nil {
			return bval{}, err
		}
		in, err := bd.inList(l, a.GetRexpr().GetList().GetItems(), sc, false)
		if err != nil {
			return bval{}, err
		}
		return negated(in, opName == "<>")
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		lr, err := bindSides(a.GetLexpr(), a.GetRexpr())
		if err != nil {
			return bval{}, err
		}
		l, r := lr[0], lr[1]
		name := "like"
		if a.GetKind() == pg.A_Expr_Kind_AEXPR_ILIKE {
			name = "ilike"
		}
		f, err := bd.like(name, l, r)
		if err != nil {
			return bval{}, err
		}
		return negated(f, strings.HasPrefix(opName, "!"))
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		lr, err := bindSides(a.GetLexpr(), a.GetRexpr())
		if err != nil {
			return bval{}, err
		}
		l, r := lr[0], lr[1]
		return bd.distinctFrom(l, r, a.GetKind() == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT)
	case pg.A_Expr_Kind_AEXPR_NULLIF:
		lr, err := bindSides(a.GetLexpr(), a.GetRexpr())
		if err != nil {
			return bval{}, err
		}
		l, r := lr[0], lr[1]
		if isJSONDoc(l) || isJSONDoc(r) {
			return bd.docNullIf(l, r)
		}
		x, y, err := bd.unify(l, r, "=")
		if err != nil {
			return bval{}, err
		}
		var eq, null expr.Expression = nil, expr.NewNullLiteral(x.GetType().WithNullability(nullableN))
		if !l.untyped() && !r.untyped() && (isReal(l.typ()) && !isReal(r.typ()) || familyOf(l.typ()) == famInt && familyOf(r.typ()) == famInt) {
			// NULLIF answers the first argument of its = operator, of the left operand's type
			// where a cross-type operator takes both: float48eq's real (the comparison in
			// double precision, the value stays real), int24eq's smallint, int48eq's integer
			// (nullif(x::smallint, 70000) is smallint).
			if eq, err = bd.compare("=", l, r); err != nil {
				return bval{}, err
			}
			e, err := bd.ifThen([]expr.IfThenPair{{If: eq, Then: expr.NewNullLiteral(l.typ().WithNullability(nullableN))}}, l.e)
			return typed(e), err
		}
		if isIntervalType(x.GetType()) {
			if eq, err = bd.compare("=", typed(x), typed(y)); err == nil {
				null, err = bd.intervalValue(bval{null: true}, "")
			}
		} else {
			eq, err = bd.fn(URNComparison, "equal", booleanType(), x, y)
		}
		if err != nil {
			return bval{}, err
		}
		e, err := bd.ifThen([]expr.IfThenPair{{If: eq, Then: null}}, x)
		out := typed(e)
		out.ds = nullIfScale(l, x)
		if l.bpchar != 0 && (r.untyped() || r.bpchar != 0) {
			out.bpchar = l.bpchar // bpchareq's first argument: the character(n) value
		}
		out.bytea = l.bytea || r.bytea && l.untyped() // NULLIF answers its first argument
		return out, err
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		items := a.GetRexpr().GetList().GetItems()
		if len(items) != 2 {
			return bval{}, ErrInvalidPlan
		}
		vs, err := bindSides(a.GetLexpr(), items[0], items[1])
		if err != nil {
			return bval{}, err
		}
		x, lo, hi := vs[0], vs[1], vs[2]
		within := func(lo, hi bval) (expr.Expression, error) {
			ge, err := bd.compare(">=", x, lo)
			if err != nil {
				return nil, err
			}
			le, err := bd.compare("<=", x, hi)
			if err != nil {
				return nil, err
			}
			return bd.fn(URNBoolean, "and", booleanType(), ge, le)
		}
		in, err := within(lo, hi)
		if err != nil {
			return bval{}, err
		}
		kind := a.GetKind()
		if kind == pg.A_Expr_Kind_AEXPR_BETWEEN_SYM || kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			// PostgreSQL's transformAExprBetween: x BETWEEN SYMMETRIC lo AND hi is
			// (x >= lo AND x <= hi) OR (x >= hi AND x <= lo); NOT BETWEEN SYMMETRIC its
			// negation (De Morgan's laws hold in SQL's three-valued logic).
			swapped, err := within(hi, lo)
			if err != nil {
				return bval{}, err
			}
			if in, err = bd.fn(URNBoolean, "or", booleanType(), in, swapped); err != nil {
				return bval{}, err
			}
		}
		return negated(in, kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN || kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		return bd.similarTo(a, opName, sc)
	}
	return bval{}, unimplemented("operator " + opName)
}

func (bd *binder) unary(op string, n *pg.Node, sc *scope) (bval, error) {
	// A negative number literal: fold it.
	if c := n.GetAConst(); c != nil && op == "-" {
		v, err := constant(c)
		if err != nil {
			return bval{}, err
		}
		switch l := v.e.(type) {
		case *expr.PrimitiveLiteral[int32]:
			return typed(expr.NewPrimitiveLiteral(-l.Value, false)), nil
		case *expr.PrimitiveLiteral[int64]:
			return typed(expr.NewPrimitiveLiteral(-l.Value, false)), nil
		case *expr.PrimitiveLiteral[float64]:
			return typed(expr.NewPrimitiveLiteral(-l.Value, false)), nil
		}
		if v.e != nil && familyOf(v.typ()) == famNumeric {
			return bd.numericNegate(v.e)
		}
	}
	v, err := bd.bindExpr(n, sc)
	if err != nil {
		return bval{}, err
	}
	switch op {
	case "+":
		if isTimeVal(v) {
			return bval{}, errorf(InvalidArgument, "operator does not exist: + time without time zone")
		}
		return v, nil
	case "-":
		if isIntervalVal(v) || isTimeVal(v) {
			// - time is - of the time as an interval (PostgreSQL's implicit cast).
			return bd.intervalNeg(v)
		}
		if v.untyped() && v.param > 0 {
			// A parameter: of its declared type (the binding's, DeclareParameterTypes), else
			// the 42P18 refusal that lets a prepared statement wait for the binding.
			e, err := bd.defaultType(v)
			if err != nil {
				return bval{}, err
			}
			v = typed(e)
		}
		if v.untyped() {
			// PostgreSQL finds several prefix - operators for an unknown operand.
			return bval{}, refused(InvalidArgument, "42725", "operator is not unique: - unknown")
		}
		f := familyOf(v.typ())
		if f == famNumeric {
			out, err := bd.numericNegate(v.e)
			out.ds = v.ds
			return out, err
		}
		if f != famInt && f != famFloat {
			return bval{}, errorf(InvalidArgument, "operator does not exist: - %s", typeName(v.typ()))
		}
		var zero expr.Expression
		switch v.typ().(type) {
		case *types.Int16Type:
			zero = expr.NewPrimitiveLiteral(int16(0), false)
		case *types.Int32Type:
			zero = expr.NewPrimitiveLiteral(int32(0), false)
		case *types.Int64Type:
			zero = expr.NewPrimitiveLiteral(int64(0), false)
		default:
			// float4um and float8um negate (a real stays real): -1 times the value, whose
			// negative zero (-(0::float8) is -0) 0 - x would lose.
			var minusOne expr.Expression = expr.NewPrimitiveLiteral(-1.0, false)
			if isReal(v.typ()) {
				minusOne = expr.NewPrimitiveLiteral(float32(-1), false)
			} else {
				x, err := bd.coerce(v, fp64Type(), "")
				if err != nil {
					return bval{}, err
				}
				v = typed(x)
			}
			m, err := bd.fn(URNArithmetic, "multiply", v.typ().WithNullability(nullableN), minusOne, v.e)
			return typed(m), err
		}
		s, err := bd.fn(URNArithmetic, "subtract", v.typ().WithNullability(nullableN), zero, v.e)
		return typed(s), err
	}
	return bval{}, unimplemented("prefix operator " + op)
}

func (bd *binder) binary(op string, l, r bval) (bval, error) {
	if v, ok, err := bd.jsonbOperator(op, l, r); ok {
		return v, err
	}
	if op == "||" {
		return bd.concatOperator(l, r)
	}
	if v, ok, err := bd.timeBinary(op, l, r); ok || err != nil {
		return v, err
	}
	if v, ok, err := bd.dateIntervalArith(op, l, r); ok || err != nil {
		return v, err
	}
	if v, ok, err := bd.intervalBinary(op, l, r); ok || err != nil {
		return v, err
	}
	if _, ok := comparisons[op]; ok {
		e, err := bd.compare(op, l, r)
		return typed(e), err
	}
	if _, ok := arithmetic[op]; (ok || op == "%") && l.untyped() && r.untyped() && !isIntervalVal(l) && !isIntervalVal(r) {
		// Two untyped operands (`? + ?`, '1' * '2', NULL + NULL): PostgreSQL finds an operator
		// of each numeric type and cannot choose (its 42725).
		return bval{}, refused(InvalidArgument, "42725", "operator is not unique: unknown %s unknown", op)
	}
	if _, ok := arithmetic[op]; (ok || op == "%") && involvesNumeric(l, r) {
		return bd.numericBinary(op, l, r)
	}
	switch op {
	case "+", "-":
		if v, ok, err := bd.untypedTimestampArith(op, l, r); ok || err != nil {
			return v, err
		}
		if v, ok, err := bd.timestampArith(op, l, r); ok || err != nil {
			return v, err
		}
		if v, ok, err := bd.dateArith(op, l, r); ok || err != nil {
			return v, err
		}
		fallthrough
	case "*", "/":
		// An operand of a type that is not a number beside an untyped one (now() * '1') has
		// no arithmetic operator: PostgreSQL names the untyped operand unknown.
		other := func(v bval) bool { return !v.untyped() && !isNumber(familyOf(v.typ())) }
		if other(l) && r.untyped() || l.untyped() && other(r) {
			return bval{}, errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
		}
		x, y, err := bd.unify(l, r, op)
		if err != nil {
			return bval{}, err
		}
		if f := familyOf(x.GetType()); f != famInt && f != famFloat {
			// The operands' types as written, as PostgreSQL names them (timestamp + date),
			// not the ones unify made them.
			return bval{}, errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
		}
		e, err := bd.fn(URNArithmetic, arithmetic[op], x.GetType(), x, y)
		return typed(e), err
	case "%":
		x, y, err := bd.unify(l, r, op)
		if err != nil {
			return bval{}, err
		}
		if familyOf(x.GetType()) != famInt {
			return bval{}, errorf(InvalidArgument, "operator does not exist: %s %% %s", typeName(x.GetType()), typeName(y.GetType()))
		}
		// functions_arithmetic's modulus: the remainder takes x's sign and x % -1 is 0 for
		// every x, as PostgreSQL's int4mod answers (scan/ops/intarith.go).
		e, err := bd.fn(URNArithmetic, "modulus", x.GetType(), x, y)
		return typed(e), err
	case "^":
		// numeric ^ numeric is power(numeric, numeric) (numericFunc); otherwise double
		// precision ^ double precision, PostgreSQL's dpow (power's kernel).
		if involvesNumeric(l, r) {
			return bd.numericFunc("power", []bval{l, r})
		}
		x, err := bd.coerce(l, fp64Type(), "operator ^")
		if err != nil {
			return bval{}, err
		}
		y, err := bd.coerce(r, fp64Type(), "operator ^")
		if err != nil {
			return bval{}, err
		}
		e, err := bd.fn(URNPostgres, "power", fp64Type(), x, y)
		return typed(e), err
	case "~", "~*", "!~", "!~*":
		return bd.regexOp(op, l, r)
	case "->", "->>":
		return bd.jsonOp(op, l, r)
	case "#>", "#>>":
		return bd.jsonPathOp(op, l, r)
	case "~~", "!~~", "~~*", "!~~*":
		name := "like"
		if strings.Contains(op, "*") {
			name = "ilike"
		}
		f, err := bd.like(name, l, r)
		if err != nil || !strings.HasPrefix(op, "!") {
			return typed(f), err
		}
		nf, err := bd.fn(URNBoolean, "not", booleanType(), f)
		return typed(nf), err
	}
	return bval{}, unimplemented("operator " + op)
}

// asText converts a value to text (concat and || take any type).
// concatOperator binds l || r as PostgreSQL resolves it among text || text, text ||
// anynonarray and anynonarray || text (textcat, textanycat, anytextcat): when one operand is
// text (or an untyped literal, read as text), the other becomes its text as a cast to text
// writes it (1.50, 1 day, true) and the result is their concatenation, NULL when either is
// NULL. Two operands neither of which is text have no such operator (42883, integer ||
// integer); the other || operators PostgreSQL has — bytea || bytea, array concatenation,
// jsonb || jsonb — are refused by name.
func (bd *binder) concatOperator(l, r bval) (bval, error) {
	textual := func(v bval) bool {
		if isIntervalVal(v) {
			return false
		}
		return v.untyped() || familyOf(v.typ()) == famString
	}
	for _, v := range []bval{l, r} {
		switch {
		case v.bytea:
			return bd.byteaConcat(l, r)
		case !v.untyped() && isArray(v.typ()):
			return bval{}, unimplemented("array concatenation (||)")
		}
	}
	if !textual(l) && !textual(r) {
		return bval{}, errorf(InvalidArgument, "operator does not exist: %s || %s", opTypeName(l), opTypeName(r))
	}
	x, err := bd.asText(l)
	if err != nil {
		return bval{}, err
	}
	y, err := bd.asText(r)
	if err != nil {
		return bval{}, err
	}
	e, err := bd.fn(URNPostgres, "concat_strict", strType(), x, y)
	return typed(e), err
}

func (bd *binder) asText(v bval) (expr.Expression, error) {
	if v.untyped() {
		return bd.coerce(v, strType(), "")
	}
	if familyOf(v.typ()) == famString {
		return v.e, nil
	}
	if v.ds != nil {
		c, err := bd.varyingText(v)
		return c.e, err
	}
	c, err := bd.cast(v.e, strType())
	return c.e, err
}

// untypedTimestampArith binds a timestamp and a string literal under + or - as PostgreSQL
// resolves an unknown operand: timestamp - '…' is timestamp - timestamp (the literal read as
// the timestamp's type; the result an interval), timestamp + '…' and '…' + timestamp are
// timestamp + interval (the literal read as an interval). ok is false for other operands.
func (bd *binder) untypedTimestampArith(op string, l, r bval) (bval, bool, error) {
	isTS := func(v bval) bool { return !v.untyped() && familyOf(v.typ()) == famTimestamp && !isIntervalVal(v) }
	isStr := func(v bval) bool { _, iv := v.intervalConst(); return v.str != nil && v.param == 0 && !iv }
	switch {
	case op == "-" && isTS(l) && isStr(r):
		b, err := bd.coerce(r, l.typ(), "the right operand of timestamp - timestamp")
		if err != nil {
			return bval{}, true, err
		}
		f, err := bd.fn(URNPostgres, "timestamp_diff", intervalType(), l.e, b)
		return typed(f), true, err
	case op == "+" && isTS(l) && isStr(r):
		iv := intervalTag + *r.str
		v, _, err := bd.timestampArith(op, l, bval{str: &iv})
		return v, true, err
	case op == "+" && isStr(l) && isTS(r):
		iv := intervalTag + *l.str
		v, _, err := bd.timestampArith(op, r, bval{str: &iv})
		return v, true, err
	}
	return bval{}, false, nil
}

// timestampArith folds constant timestamp ± interval (now() - interval '1 day'). now()'s sum
// is folded as stable as now() (stable_value: the route reads it, the executor does not fold
// it again); one outside the nanosecond range is left to the executor, which raises 22008 only
// where the sum is evaluated, as PostgreSQL evaluates a stable function's sum.
func (bd *binder) timestampArith(op string, l, r bval) (bval, bool, error) {
	iv, ok := r.intervalConst()
	if !ok {
		if _, left := l.intervalConst(); left && op == "+" {
			return bd.timestampArith(op, r, l) // interval + timestamp
		}
		return bval{}, false, nil
	}
	var t time.Time
	wall := false // a timestamp without time zone constant
	x, stable := stableArg(l.e)
	switch {
	case l.e != nil:
		lit, ok := x.(*expr.ProtoLiteral)
		if !ok {
			return bd.columnPlusInterval(op, l, r, iv)
		}
		ns, ok := lit.Value.(int64)
		if !ok {
			return bval{}, true, unimplementedAre("intervals added to this value")
		}
		t = time.Unix(0, ns).UTC()
		_, wall = lit.GetType().(*types.PrecisionTimestampType)
	case l.str != nil:
		var err error
		// The text's instant as it is: one beyond timestamp[ns] is 22008, not clamped
		// ('1500-01-01' + interval '1 day' is 1500-01-02 in PostgreSQL).
		if _, err := TimestampIn(*l.str, false); err != nil {
			return bval{}, true, err
		}
		if t, err = parseClamped(*l.str); err != nil {
			return bval{}, true, err
		}
	default:
		return bval{}, true, unimplementedAre("intervals added to this value")
	}
	us, months, err := readInterval(iv)
	if err != nil {
		return bval{}, true, err
	}
	if !months.IsInt() || !months.Num().IsInt64() {
		return bval{}, true, unimplementedAre("intervals with a fractional number of months")
	}
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	// As PostgreSQL's timestamp ± interval: the months first, on the calendar, the day of
	// month clamped to the target month's last (January 31 + 1 month is February 28), then
	// the days and the time (days are 24 hours in UTC).
	t = calendar.AddMonths(t, sign*months.Num().Int64())
	// The days and the time apart (time.Duration's ±292 years would not hold timestamp
	// '2001-01-01' - interval '110000 days'): only the result must be in range.
	if !us.IsInt() {
		return bval{}, true, unimplementedAre("intervals with a fraction of a microsecond")
	}
	days, rest := new(big.Int).QuoRem(us.Num(), big.NewInt(usPerDay), new(big.Int))
	switch {
	case !days.IsInt64() || days.Int64() > math.MaxInt32 || days.Int64() < math.MinInt32:
		t = maxNanoTime.Add(1)
	default:
		t = t.AddDate(0, 0, int(sign*days.Int64())).Add(time.Duration(sign*rest.Int64()) * time.Microsecond)
	}
	// A result outside the nanosecond range is 22008 "timestamp out of range", never
	// clamped, as the column path's timestamp_add raises it (PostgreSQL answers such a
	// value, which this engine cannot hold; docs/sql.md).
	if checkNanoRange(t) != nil {
		if stable {
			return bd.columnPlusInterval(op, l, r, iv)
		}
		return bval{}, true, &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp out of range"}
	}
	var out expr.Expression = tsLiteral(t)
	if wall {
		// A timestamp without time zone (TIMESTAMP '…', date ± interval) keeps its type.
		out = expr.NewPrecisionTimestampLiteral(t.UnixNano(), types.PrecisionNanoSeconds, nullableN)
	}
	if stable {
		v, err := bd.stable(out)
		return v, true, err
	}
	return typed(out), true, nil
}

// stableFn is URNPostgres' stable_value(x) (scan/ops constfold.go): x, the statement's value of
// a function PostgreSQL marks stable (now(), current_timestamp, current_date), computed once
// per statement here (BindOptions.Now) and read as x by the executor, whose constant folder
// leaves it unfolded as PostgreSQL's planner leaves stable functions: an expression over it
// fails only where it is evaluated. Routes and the binder's own folds read x (literalOf,
// stableArg), so that timestamp > now() - interval '1 day' bounds a read by the same instant
// the executor compares with.
const stableFn = "stable_value"

// stable binds stable_value(lit).
func (bd *binder) stable(lit expr.Expression) (bval, error) {
	f, err := bd.fn(URNPostgres, stableFn, lit.GetType(), lit)
	return typed(f), err
}

// stableArg returns x of stable_value(x) and true, or e and false.
func stableArg(e expr.Expression) (expr.Expression, bool) {
	if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == stableFn && f.ID().URN == URNPostgres && f.NArgs() == 1 {
		if x, ok := f.Arg(0).(expr.Expression); ok {
			return x, true
		}
	}
	return e, false
}

// dateIntervalArith binds date ± interval and interval + date as PostgreSQL does: the date is
// cast to timestamp without time zone (midnight; wallclockType) and the interval added to it,
// so the result is a timestamp without time zone (Metabase and Tableau write CAST(ts AS date) +
// INTERVAL '1 day'). A date constant is folded to the timestamp constant; one outside the
// executor's nanosecond range is ErrTimestampOutOfRange, as its cast to timestamp is. ok is
// false for any other operands.
func (bd *binder) dateIntervalArith(op string, l, r bval) (bval, bool, error) {
	isDate := func(v bval) bool { return v.e != nil && !v.untyped() && familyOf(v.typ()) == famDate }
	unknown := func(v bval) bool {
		_, iv := v.intervalConst()
		return v.untyped() && v.param == 0 && (v.null || v.str != nil && !iv)
	}
	switch {
	case op == "+" && isDate(l) && unknown(r):
		// date + integer, + interval, + time and + time with time zone all take it
		// (PostgreSQL's oper_select_candidate finds no best one).
		return bval{}, true, refused(InvalidArgument, "42725", "operator is not unique: date + unknown")
	case op == "+" && unknown(l) && isDate(r):
		return bval{}, true, refused(InvalidArgument, "42725", "operator is not unique: unknown + date")
	case (op == "+" || op == "-") && isDate(l) && isIntervalVal(r):
		ts, err := bd.dateAsWallclock(l.e)
		if err != nil {
			return bval{}, true, err
		}
		v, err := bd.binary(op, typed(ts), r)
		return v, true, err
	case op == "+" && isIntervalVal(l) && isDate(r):
		ts, err := bd.dateAsWallclock(r.e)
		if err != nil {
			return bval{}, true, err
		}
		v, err := bd.binary(op, l, typed(ts))
		return v, true, err
	}
	return bval{}, false, nil
}

// dateAsWallclock is date e as a timestamp without time zone (midnight), PostgreSQL's
// date → timestamp cast: a constant folded (outside the nanosecond range,
// ErrTimestampOutOfRange), anything else cast by the executor.
func (bd *binder) dateAsWallclock(e expr.Expression) (expr.Expression, error) {
	if d, ok := e.(*expr.PrimitiveLiteral[types.Date]); ok {
		if err := checkNanoRange(time.Unix(int64(d.Value)*86400, 0).UTC()); err != nil {
			return nil, err
		}
	}
	return bd.dateToTimestamp(e, wallclockType()), nil
}

// columnPlusInterval binds timestamp expression ± INTERVAL iv as flightsrv's timestamp_add
// (evaluated per row by scan/ops as PostgreSQL computes it in UTC: the months on the
// calendar, then the days as 24 hours and the time). A fractional number of months is
// refused, as for constants.
func (bd *binder) columnPlusInterval(op string, l, r bval, iv string) (bval, bool, error) {
	if familyOf(l.typ()) != famTimestamp {
		return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s interval", typeName(l.typ()), op)
	}
	us, months, err := readInterval(iv)
	if err != nil {
		return bval{}, true, err
	}
	if !months.IsInt() || !months.Num().IsInt64() {
		return bval{}, true, unimplementedAre("intervals with a fractional number of months")
	}
	nsRat := new(big.Rat).Mul(us, big.NewRat(1000, 1))
	nsf, _ := nsRat.Float64()
	if math.Abs(nsf) >= math.MaxInt64 {
		// Days and time past int64 nanoseconds together (timestamp - interval '110000
		// days', whose result PostgreSQL answers inside the range): the interval's fields
		// added apart by timestamp_add_interval, which checks only the sum.
		b, err := bd.intervalValue(r, "the interval of timestamp "+op+" interval")
		if err != nil {
			return bval{}, true, err
		}
		if op == "-" {
			if b, err = bd.fn(URNPostgres, "interval_neg", intervalType(), b); err != nil {
				return bval{}, true, err
			}
		}
		f, err := bd.fn(URNPostgres, "timestamp_add_interval", l.typ().WithNullability(nullableN), l.e, b)
		return typed(f), true, err
	}
	m, ns := months.Num().Int64(), int64(math.Round(nsf))
	if op == "-" {
		m, ns = -m, -ns
	}
	f, err := bd.fn(URNPostgres, "timestamp_add", l.typ().WithNullability(nullableN), l.e,
		expr.NewPrimitiveLiteral(m, false), expr.NewPrimitiveLiteral(ns, false))
	return typed(f), true, err
}

// scaledIntervalArith binds ts ± INTERVAL 'c' * n and ts ± n * INTERVAL 'c', as Superset's
// sub-hour time grains write them (DATE_TRUNC('hour', ts) + INTERVAL '5 minutes' *
// FLOOR(EXTRACT(MINUTE FROM ts) / 5)): per row, the interval's time (its days as 24 hours in
// UTC, as columnPlusInterval adds them) times the number n, rounded to the microsecond half to
// even as PostgreSQL's interval * double precision rounds it, onto timestamp_add. An interval
// with months or years is refused by name. ok is false for any other shape (a left operand
// that is not a timestamp included), which the caller binds as usual.
func (bd *binder) scaledIntervalArith(op string, a *pg.A_Expr, sc *scope) (bval, bool, error) {
	m := a.GetRexpr().GetAExpr()
	if m == nil || m.GetKind() != pg.A_Expr_Kind_AEXPR_OP || m.GetLexpr() == nil || len(m.GetName()) != 1 ||
		m.GetName()[0].GetString_().GetSval() != "*" {
		return bval{}, false, nil
	}
	var iv string
	var num *pg.Node
	for _, side := range [][2]*pg.Node{{m.GetLexpr(), m.GetRexpr()}, {m.GetRexpr(), m.GetLexpr()}} {
		if s, ok := intervalLiteral(side[0]); ok && side[0].GetTypeCast() != nil {
			iv, num = s, side[1]
			break
		}
	}
	if num == nil {
		return bval{}, false, nil
	}
	l, err := bd.bindExpr(a.GetLexpr(), sc)
	if err != nil {
		return bval{}, true, err
	}
	if l.untyped() || familyOf(l.typ()) != famTimestamp {
		return bval{}, false, nil
	}
	n, err := bd.bindExpr(num, sc)
	if err != nil {
		return bval{}, true, err
	}
	if !n.untyped() {
		if f := familyOf(n.typ()); f != famInt && f != famFloat && f != famNumeric {
			return bval{}, true, errorf(InvalidArgument, "operator does not exist: interval * %s", typeName(n.typ()))
		}
	}
	us, months, err := readInterval(iv)
	if err != nil {
		return bval{}, true, err
	}
	if months.Sign() != 0 {
		return bval{}, true, unimplemented("an interval with months or years times a number")
	}
	x, err := bd.coerce(n, fp64Type(), "the factor of an interval")
	if err != nil {
		return bval{}, true, err
	}
	usf, _ := us.Float64()
	prod, err := bd.fn(URNArithmetic, "multiply", fp64Type(), x, expr.NewPrimitiveLiteral(usf, false))
	if err != nil {
		return bval{}, true, err
	}
	rounded, err := bd.fn(URNPostgres, "round", fp64Type(), prod)
	if err != nil {
		return bval{}, true, err
	}
	micros, err := bd.cast(rounded, i64Type())
	if err != nil {
		return bval{}, true, err
	}
	perMicro := int64(1000)
	if op == "-" {
		perMicro = -1000
	}
	ns, err := bd.fn(URNArithmetic, "multiply", i64Type(), micros.e, expr.NewPrimitiveLiteral(perMicro, false))
	if err != nil {
		return bval{}, true, err
	}
	f, err := bd.fn(URNPostgres, "timestamp_add", l.typ().WithNullability(nullableN), l.e, expr.NewPrimitiveLiteral(int64(0), false), ns)
	return typed(f), true, err
}

// intervalConst reports whether v is an INTERVAL '…' constant, and its text. The binder keeps
// such constants as untyped strings tagged by intervalText.
func (v bval) intervalConst() (string, bool) {
	if v.str != nil && strings.HasPrefix(*v.str, intervalTag) {
		return strings.TrimPrefix(*v.str, intervalTag), true
	}
	return "", false
}

// intervalTag marks an untyped string that came from an INTERVAL literal.
const intervalTag = "\x00interval:"

func (bd *binder) like(name string, l, r bval) (expr.Expression, error) {
	l, err := bd.padded(l) // bpcharlike reads the padding
	if err != nil {
		return nil, err
	}
	x, err := bd.coerce(l, strType(), "the left operand of LIKE")
	if err != nil {
		return nil, err
	}
	y, err := bd.coerce(r, strType(), "a LIKE pattern")
	if err != nil {
		return nil, err
	}
	return bd.fn(URNPostgres, name, booleanType(), x, y)
}

func (bd *binder) distinctFrom(l, r bval, not bool) (bval, error) {
	x, y, err := bd.unify(l, r, "IS DISTINCT FROM")
	if err != nil {
		return bval{}, err
	}
	xn, err := bd.fn(URNComparison, "is_null", booleanType(), x)
	if err != nil {
		return bval{}, err
	}
	yn, err := bd.fn(URNComparison, "is_null", booleanType(), y)
	if err != nil {
		return bval{}, err
	}
	cmp := "not_equal"
	if not {
		cmp = "equal"
	}
	ne, err := bd.fn(URNComparison, cmp, booleanType(), x, y)
	if err != nil {
		return bval{}, err
	}
	// x IS DISTINCT FROM y: CASE WHEN x IS NULL THEN y IS NOT NULL WHEN y IS NULL THEN true
	// ELSE x <> y END (and the negation for IS NOT DISTINCT FROM).
	ynn, err := bd.fn(URNComparison, map[bool]string{false: "is_not_null", true: "is_null"}[not], booleanType(), y)
	if err != nil {
		return bval{}, err
	}
	e, err := bd.ifThen([]expr.IfThenPair{{If: xn, Then: ynn}, {If: yn, Then: expr.NewPrimitiveLiteral(!not, true)}}, ne)
	return typed(e), err
}

// inList is x IN (a, b, …): a SingularOrList when every item is a constant, else an OR of
// equalities.
func (bd *binder) inList(x bval, items []*pg.Node, sc *scope, array bool) (expr.Expression, error) {
	vals := make([]bval, len(items)+1)
	vals[0] = x
	var wide wideConsts // PostgreSQL's x = ANY of the common type of x and the items
	for i, it := range items {
		v, err := wide.bind(bd, it, sc, i+1)
		if err != nil {
			return nil, err
		}
		vals[i+1] = v
	}
	if err := wide.resolve(vals); err != nil {
		return nil, err
	}
	vals = vals[1:]
	for i, v := range vals {
		vals[i] = wholeFloatAsInt(v, x)
	}
	allConst := true
	for _, v := range vals {
		if v.e != nil {
			if _, ok := v.e.(expr.Literal); !ok {
				allConst = false
			}
		} else if v.null {
			allConst = false
		}
	}
	if e, ok, err := bd.realInList(x, vals, array); ok || err != nil {
		return e, err
	}
	xe, err := bd.inSubject(x, vals)
	if err != nil {
		return nil, err
	}
	t := xe.GetType()
	for _, v := range vals {
		if familyOf(t) == famNumeric || (!v.untyped() && familyOf(v.typ()) == famNumeric) {
			allConst = false // numerics of different scales compare by numeric_cmp
		}
	}
	// jsonb compares by value (json has no =): each item through compare, which knows both.
	allConst = allConst && !x.json && !x.jsonb
	// A parameter beside a character(n) value is compared without its trailing spaces
	// (coerceBeside's rtrim, no constant): through compare too.
	allConst = allConst && (x.bpchar == 0 || !slices.ContainsFunc(vals, func(v bval) bool { return v.param > 0 }))
	xv := typed(xe)
	xv.bytea, xv.json, xv.jsonb, xv.bpchar = x.bytea, x.json, x.jsonb, x.bpchar
	if xv.bpchar != 0 && array {
		// ARRAY[…] takes its elements' own common type: character(n) elements make x's
		// = bpchareq, text or untyped ones text's = (x without its padding, the elements
		// as they are), as PostgreSQL resolves = ANY of a text[].
		xv.bpchar = 0
		if i := slices.IndexFunc(vals, func(v bval) bool { return !v.untyped() }); i >= 0 && vals[i].bpchar != 0 {
			xv.bpchar = x.bpchar
		}
	}
	if allConst {
		opts := make([]expr.Expression, len(vals))
		for i, v := range vals {
			bd.noteIntComparison(v, xv)
			e, err := bd.coerceBeside(v, xv, t, "an IN list item")
			if ce, ok := errors.AsType[*Error](err); ok && ce.SQLState == "42804" && !v.untyped() {
				// No common type (select_common_type fails): PostgreSQL's transformAExprIn
				// then looks for x = item per item, text = integer, which does not exist.
				return nil, errorf(InvalidArgument, "operator does not exist: %s = %s", jsonTypeName(xv), jsonTypeName(v))
			}
			if err != nil {
				return nil, err
			}
			if lit, ok := e.(*expr.PrimitiveLiteral[string]); ok && xv.bpchar != 0 && !array && len(vals) > 1 {
				// Two constants or more meet x in their common type, bpchar after x:
				// a text constant is read as bpchar too ('a'::char(3) IN ('a '::text, 'b')).
				e = expr.NewPrimitiveLiteral(strings.TrimRight(lit.Value, " "), false)
			}
			opts[i] = e
		}
		return &expr.SingularOrList{Value: xe, Options: opts}, nil
	}
	args := make([]types.FuncArg, len(vals))
	for i, v := range vals {
		e, err := bd.compare("=", xv, v)
		if err != nil {
			return nil, err
		}
		args[i] = e
	}
	if len(args) == 1 {
		return args[0].(expr.Expression), nil
	}
	return bd.fn(URNBoolean, "or", booleanType(), args...)
}

// realInList binds x IN (vals) (array false) or x = ANY(ARRAY[vals]) (array true) where a real
// is among them, as PostgreSQL types them (ok false otherwise). IN compares its subject and its
// constant items in their common type (select_common_type) when there are two constants or
// more: a real beside integers and numerics is real, so 0.1::real IN (0.1, 0.2) is true;
// other items, and every item of an IN of one constant, are each compared by =, where a real
// beside another number is double precision (0.1::real = 0.1 is false). ANY compares x with
// the array's elements in their own common type: real if one is real, the others integers or
// numerics, else x = element, as =.
func (bd *binder) realInList(x bval, vals []bval, array bool) (expr.Expression, bool, error) {
	isConst := func(v bval) bool {
		if v.untyped() {
			return true
		}
		_, lit := v.e.(expr.Literal)
		return lit
	}
	realish := func(v bval) (real, ok bool) {
		if v.untyped() {
			return false, true
		}
		f := familyOf(v.typ())
		return isReal(v.typ()), isReal(v.typ()) || f == famInt || f == famNumeric
	}
	xReal, _ := realish(x)
	anyReal, common, consts := xReal, true, 0
	for _, v := range vals {
		r, ok := realish(v)
		anyReal = anyReal || r
		if array || isConst(v) {
			consts++
			common = common && ok
		}
	}
	if !anyReal {
		return nil, false, nil
	}
	if array {
		// The elements' common type is real when one is (and the rest are integers or
		// numerics); x is then compared as real only if it is real or an integer or numeric.
		elemsReal := false
		for _, v := range vals {
			r, _ := realish(v)
			elemsReal = elemsReal || r
		}
		_, xok := realish(x)
		common = common && elemsReal && xok
	} else {
		_, xok := realish(x)
		common = common && xok && consts > 1
	}
	var args []types.FuncArg
	var opts []expr.Expression
	var xr expr.Expression
	if common {
		var err error
		if xr, err = bd.coerce(x, fp32Type(), ""); err != nil {
			return nil, true, err
		}
	}
	for _, v := range vals {
		if common && (array || isConst(v)) {
			e, err := bd.coerce(v, fp32Type(), "an IN list item")
			if err != nil {
				return nil, true, err
			}
			opts = append(opts, e)
			continue
		}
		cmpX := x
		if xr != nil {
			cmpX = typed(xr)
		}
		e, err := bd.compare("=", cmpX, v)
		if err != nil {
			return nil, true, err
		}
		args = append(args, e)
	}
	if len(opts) > 0 {
		args = append([]types.FuncArg{&expr.SingularOrList{Value: xr, Options: opts}}, args...)
	}
	if len(args) == 1 {
		return args[0].(expr.Expression), true, nil
	}
	e, err := bd.fn(URNBoolean, "or", booleanType(), args...)
	return e, true, err
}

// inSubject types the left side of IN from the list when it is untyped.
func (bd *binder) inSubject(x bval, vals []bval) (expr.Expression, error) {
	if !x.untyped() {
		if familyOf(x.typ()) == famInt {
			// smallint IN (1, 2): PostgreSQL compares integers of different widths (int2 =
			// int4); the subject is widened to the widest integer item.
			wide := x.typ()
			for _, v := range vals {
				if !v.untyped() && familyOf(v.typ()) == famFloat {
					// integer IN (double precision…): int4 = float8, compared in double
					// precision (an item made whole by wholeFloatAsInt is a bigint).
					return bd.coerce(x, fp64Type(), "")
				}
				if !v.untyped() && familyOf(v.typ()) == famInt && numRank(v.typ()) > numRank(wide) {
					wide = v.typ()
				}
			}
			return bd.coerce(x, wide, "")
		}
		if familyOf(x.typ()) == famDate && !isIntervalVal(x) {
			// date IN (timestamp …): their common type, timestamp (or timestamptz), as
			// select_common_type chooses for IN's items.
			for _, v := range vals {
				if !v.untyped() && !isIntervalVal(v) && familyOf(v.typ()) == famTimestamp {
					return bd.coerce(x, v.typ().WithNullability(x.typ().GetNullability()), "")
				}
			}
		}
		return x.e, nil
	}
	for _, v := range vals {
		if !v.untyped() {
			return bd.coerceBeside(x, v, v.typ(), "")
		}
	}
	return bd.coerce(x, strType(), "")
}

// anyList is x = ANY(ARRAY[…] | '{…}' | $n): the same as IN.
func (bd *binder) anyList(x bval, n *pg.Node, sc *scope) (bval, error) {
	if arr := n.GetAArrayExpr(); arr != nil {
		e, err := bd.inList(x, arr.GetElements(), sc, true)
		return typed(e), err
	}
	if tc := n.GetTypeCast(); tc != nil && len(tc.GetTypeName().GetArrayBounds()) > 0 {
		n = tc.GetArg()
	}
	xe, err := bd.inSubject(x, nil)
	if err != nil {
		return bval{}, err
	}
	t := xe.GetType()
	if c := n.GetAConst(); c != nil && c.GetSval() != nil {
		elems, err := parseArrayLiteral(c.GetSval().GetSval())
		if err != nil {
			return bval{}, err
		}
		opts := make([]expr.Expression, len(elems))
		for i, s := range elems {
			if opts[i], err = literalOfType(s, t); err != nil {
				return bval{}, err
			}
		}
		if len(opts) == 0 {
			return typed(expr.NewPrimitiveLiteral(false, true)), nil
		}
		return typed(&expr.SingularOrList{Value: xe, Options: opts}), nil
	}
	if p := n.GetParamRef(); p != nil {
		num := int(p.GetNumber())
		lt := &types.ListType{Type: t.WithNullability(types.NullabilityRequired), Nullability: nullableN}
		if prev, ok := bd.ps.types[num]; ok && !sameType(prev, lt) {
			return bval{}, errorf(InvalidArgument, "parameter $%d is used both as %s and as %s", num, typeName(prev), typeName(lt))
		}
		bd.ps.types[num] = lt
		if bd.ps.vals == nil {
			lit := expr.NewNullLiteral(t.WithNullability(nullableN))
			bd.ps.placeholders[lit] = num
			return typed(&expr.SingularOrList{Value: xe, Options: []expr.Expression{lit}}), nil
		}
		if bd.boundNull(num) {
			// x = ANY(NULL): NULL, as PostgreSQL's scalar array comparison of a NULL array.
			return typed(expr.NewNullLiteral(&types.BooleanType{Nullability: nullableN})), nil
		}
		list, ok := bd.ps.vals[num-1].([]any)
		if !ok {
			return bval{}, errorf(InvalidArgument, "parameter $%d must be a list of %s", num, typeName(t))
		}
		if len(list) == 0 {
			return typed(expr.NewPrimitiveLiteral(false, true)), nil
		}
		opts := make([]expr.Expression, len(list))
		for i, v := range list {
			e, err := paramLiteral(v, t, num)
			if err != nil {
				return bval{}, err
			}
			opts[i] = e
		}
		return typed(&expr.SingularOrList{Value: xe, Options: opts}), nil
	}
	return bval{}, unimplemented("= ANY of this expression")
}

// parseArrayLiteral reads a one-dimensional PostgreSQL array literal '{a,b,"c d"}'.
func parseArrayLiteral(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, errorf(InvalidArgument, "malformed array literal")
	}
	body := s[1 : len(s)-1]
	var out []string
	var cur strings.Builder
	inQuote, quoted := false, false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(body):
			i++
			cur.WriteByte(body[i])
		case c == '"':
			inQuote, quoted = !inQuote, true
		case c == ',' && !inQuote:
			out = append(out, arrayElem(cur.String(), quoted))
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, errorf(InvalidArgument, "malformed array literal")
	}
	if strings.TrimSpace(body) != "" {
		out = append(out, arrayElem(cur.String(), quoted))
	}
	return out, nil
}

func arrayElem(s string, quoted bool) string {
	if quoted {
		return s
	}
	return strings.TrimSpace(s)
}

// jsonDoc coerces the document side of a JSON operator: binary (the value column) or text.
func (bd *binder) jsonDoc(v bval) (expr.Expression, error) {
	if v.untyped() {
		return bd.coerce(v, strType(), "")
	}
	switch familyOf(v.typ()) {
	case famBinary, famString:
		return v.e, nil
	}
	return nil, errorf(InvalidArgument, "JSON operators need a JSON value, not %s", typeName(v.typ()))
}

// textDoc refuses a JSON operator whose document is typed text: PostgreSQL has no such
// operator (42883); or an untyped literal or NULL, which PostgreSQL could read as json or
// jsonb (42725, "operator is not unique").
func textDoc(op string, l, r bval) error {
	switch {
	case l.untyped():
		return refused(InvalidArgument, "42725", "operator is not unique: unknown %s %s", op, opTypeName(r))
	case familyOf(l.typ()) == famString:
		return errorf(InvalidArgument, "operator does not exist: %s %s %s", opTypeName(l), op, opTypeName(r))
	}
	return nil
}

func (bd *binder) jsonOp(op string, l, r bval) (bval, error) {
	if err := textDoc(op, l, r); err != nil {
		return bval{}, err
	}
	doc, err := bd.jsonDoc(l)
	if err != nil {
		return bval{}, err
	}
	var key expr.Expression
	if r.untyped() {
		key, err = bd.coerce(r, strType(), "")
	} else if f := familyOf(r.typ()); f == famInt || f == famString {
		key = r.e
	} else {
		err = errorf(InvalidArgument, "a JSON key must be text or an integer, not %s", typeName(r.typ()))
	}
	if err != nil {
		return bval{}, err
	}
	if l.jsonb && familyOf(key.GetType()) == famInt {
		// jsonb stores a scalar as a one-element array, which -> n and ->> n read.
		if doc, err = bd.fn(URNPostgres, "jsonb_scalar_array", binType(), doc); err != nil {
			return bval{}, err
		}
	}
	if op == "->>" {
		f, err := bd.fn(URNPostgres, "json_get_text", strType(), doc, key)
		return typed(f), err
	}
	f, err := bd.fn(URNPostgres, "json_get", binType(), doc, key)
	v := typed(f)
	// A member of a jsonb document is jsonb, in its canonical text too; of a json document (or
	// a binary value read as one: the value column of a table not declaring JSON values) json,
	// which has no equality or ordering (errJSONEquality, errJSONOrdering), as in PostgreSQL.
	v.json, v.jsonb = !l.jsonb, l.jsonb
	return v, err
}

func (bd *binder) jsonPathOp(op string, l, r bval) (bval, error) {
	if err := textDoc(op, l, r); err != nil {
		return bval{}, err
	}
	if r.str == nil {
		return bval{}, unimplemented(op + " with a path that is not a constant array")
	}
	keys, err := parseArrayLiteral(*r.str)
	if err != nil {
		return bval{}, err
	}
	return bd.jsonPathKeys(op, l, keys)
}

// jsonPathArray binds doc #> path and doc #>> path whose path is an ARRAY[…] constructor, cast
// to text[] or varchar[] or not (Metabase's `value #>> array['delay']::text[]`), or a '{…}'
// literal cast to one of them: the elements are text constants or parameters, evaluated when
// the statement is bound (a NULL one makes the result NULL, as PostgreSQL's
// jsonb_extract_path); ok is false for any other path, which the operator's usual binding
// takes (an untyped '{…}' literal).
func (bd *binder) jsonPathArray(op string, a *pg.A_Expr, sc *scope) (bval, bool, error) {
	if op != "#>" && op != "#>>" {
		return bval{}, false, nil
	}
	rx := a.GetRexpr()
	arr := rx.GetAArrayExpr()
	var lit *string
	if tc := rx.GetTypeCast(); tc != nil && len(tc.GetTypeName().GetArrayBounds()) == 1 {
		names := tc.GetTypeName().GetNames()
		switch n := names[len(names)-1].GetString_().GetSval(); {
		case n != "text" && n != "varchar" || len(tc.GetTypeName().GetTypmods()) > 0:
			return bval{}, false, nil
		case tc.GetArg().GetAArrayExpr() != nil:
			arr = tc.GetArg().GetAArrayExpr()
		case tc.GetArg().GetAConst().GetSval() != nil:
			v := tc.GetArg().GetAConst().GetSval().GetSval()
			lit = &v
		}
	}
	if arr == nil && lit == nil {
		return bval{}, false, nil
	}
	l, err := bd.bindExpr(a.GetLexpr(), sc)
	if err != nil {
		return bval{}, true, err
	}
	switch {
	case l.untyped():
		return bval{}, true, refused(InvalidArgument, "42725", "operator is not unique: unknown %s text[]", op)
	case familyOf(l.typ()) == famString:
		return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s text[]", opTypeName(l), op)
	}
	if lit != nil {
		keys, err := parseArrayLiteral(*lit)
		if err != nil {
			return bval{}, true, err
		}
		v, err := bd.jsonPathKeys(op, l, keys)
		return v, true, err
	}
	keys := make([]string, 0, len(arr.GetElements()))
	null := false
	for _, el := range arr.GetElements() {
		if el.GetAArrayExpr() != nil {
			return bval{}, true, unimplemented(op + " with a multidimensional path")
		}
		v, err := bd.bindExpr(el, sc)
		if err != nil {
			return bval{}, true, err
		}
		if !v.untyped() && familyOf(v.typ()) != famString {
			return bval{}, true, errorf(InvalidArgument, "operator does not exist: %s %s %s[]", jsonTypeName(l), op, opTypeName(v))
		}
		e, err := bd.coerce(v, strType(), "an element of the path of "+op)
		if err != nil {
			return bval{}, true, err
		}
		k, stand, err := bd.constantTextOr(typed(e), unimplemented(op+" with a path element that is neither a constant nor a parameter"))
		switch {
		case err != nil:
			return bval{}, true, err
		case stand != nil:
			keys = append(keys, "") // prepare time: any key gives the plan's shape
		case k == nil:
			null = true
		default:
			keys = append(keys, *k)
		}
	}
	v, err := bd.jsonPathKeys(op, l, keys)
	if err != nil || !null {
		return v, true, err
	}
	n := typed(expr.NewNullLiteral(v.typ().WithNullability(nullableN)))
	n.json, n.jsonb = v.json, v.jsonb
	return n, true, nil
}

// jsonPathKeys is doc #> keys or doc #>> keys of the document l (json, jsonb, or a binary
// value read as json).
func (bd *binder) jsonPathKeys(op string, l bval, keys []string) (bval, error) {
	doc, err := bd.jsonDoc(l)
	if err != nil {
		return bval{}, err
	}
	args := []types.FuncArg{doc}
	for _, k := range keys {
		args = append(args, expr.NewPrimitiveLiteral(k, true))
	}
	if len(keys) == 0 && op == "#>" {
		v := typed(doc)
		v.json, v.jsonb = !l.jsonb, l.jsonb
		return v, nil
	}
	name, out := "json_path", binType()
	if op == "#>>" {
		name, out = "json_path_text", strType()
	}
	f, err := bd.fn(URNPostgres, name, out, args...)
	v := typed(f)
	v.json, v.jsonb = !l.jsonb && op == "#>", l.jsonb && op == "#>"
	return v, err
}

// anonymousUser is what current_user and session_user answer when the server runs without
// authentication.
const anonymousUser = "flightsrv"

// user is the session's user (BindOptions.User), anonymousUser without authentication.
func (bd *binder) user() string {
	bd.volatile = true
	if bd.opts.User != "" {
		return bd.opts.User
	}
	return anonymousUser
}

// Version is what version() answers: a PostgreSQL-style banner (BI tools and connection pools
// read the first word and the version number).
const Version = "PostgreSQL 15.0 (flightsrv, Arrow Flight SQL over routed tables)"

func sqlValueName(op pg.SQLValueFunctionOp) string {
	switch op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return "current_timestamp"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		return "current_time"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		return "localtime"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER:
		return "current_user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return "session_user"
	case pg.SQLValueFunctionOp_SVFOP_USER:
		return "user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return "current_role"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return "current_catalog"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "current_schema"
	}
	return "?column?"
}

func (bd *binder) sqlValue(f *pg.SQLValueFunction) (bval, error) {
	switch f.GetOp() {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return bd.stable(expr.NewPrecisionTimestampTzLiteral(statementClockAt(bd.clock(), f.GetTypmod()), types.PrecisionNanoSeconds, nullableN))
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		// timestamp without time zone: the statement's instant as a wall clock in the session
		// zone, UTC (PostgreSQL's GetSQLLocalTimestamp).
		return bd.stable(expr.NewPrecisionTimestampLiteral(statementClockAt(bd.clock(), f.GetTypmod()), types.PrecisionNanoSeconds, nullableN))
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return bd.stable(expr.NewPrimitiveLiteral(types.Date(bd.clock().Unix()/86400), true))
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		return bd.localTime(f.GetTypmod())
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		return bval{}, refused(Unimplemented, "0A000", "current_time (time with time zone) is not supported: localtime is the time without time zone")
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_SESSION_USER,
		pg.SQLValueFunctionOp_SVFOP_USER, pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return typed(expr.NewPrimitiveLiteral(bd.user(), true)), nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return typed(expr.NewPrimitiveLiteral(catalogName, true)), nil
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return typed(expr.NewPrimitiveLiteral("public", true)), nil
	}
	return bval{}, unimplemented(sqlValueName(f.GetOp()))
}

// statementClockAt is the statement's clock now (microseconds) as nanoseconds since the epoch,
// rounded to typmod fractional digits of a second when 0 <= typmod < 6, as PostgreSQL's
// CURRENT_TIMESTAMP(p) and LOCALTIMESTAMP(p) round it (AdjustTimestampForTypmod: half a unit
// away from PostgreSQL's epoch 2000-01-01 rounds away from it). A typmod of -1 (no
// precision) or past 6 (PostgreSQL warns and uses 6) keeps every digit.
func statementClockAt(now time.Time, typmod int32) int64 {
	const pgEpoch = 946684800 * 1000000 // 2000-01-01 00:00 UTC in microseconds since 1970
	return (roundMicros(now.UnixMicro()-pgEpoch, int(typmod)) + pgEpoch) * 1000
}

// catalogName is what current_database() and current_catalog answer.
const catalogName = "flightsrv"

// routedColumn reports whether e is a direct reference to base column idx of a read.
func routedColumn(e expr.Expression, idx int) bool {
	fr, ok := e.(*expr.FieldReference)
	if !ok {
		return false
	}
	i, ok := rootFieldIndex(fr)
	return ok && i == idx
}

func rootFieldIndex(fr *expr.FieldReference) (int, bool) {
	sf, ok := fr.Reference.(*expr.StructFieldRef)
	if !ok || fr.Root != expr.RootReference || sf.Child != nil || sf.Field < 0 {
		return 0, false
	}
	return int(sf.Field), true
}

var _ = routing.TimeRange{}

// decimalToInteger casts the decimal literal text (a numeric constant of PostgreSQL, such as
// 2.5 or -1.5e2) to the integer type t as PostgreSQL casts numeric to integer: rounded half
// away from zero (2.5::int = 3, -2.5::int = -3; a float8 rounds half to even, which the
// executor does), refused out of t's range with SQLSTATE 22003. ok is false when t is not an
// integer type or the text is an integer already (the usual path casts those).
func decimalToInteger(text string, t types.Type) (lit expr.Expression, ok bool, err error) {
	if _, _, _, isInt := intRange(t); !isInt || !strings.ContainsAny(text, ".eE") {
		return nil, false, nil
	}
	r, good := new(big.Rat).SetString(text)
	if !good {
		return nil, true, errorf(InvalidArgument, "invalid numeric literal")
	}
	// Half away from zero: floor(|r| + 1/2), signed.
	abs := new(big.Rat).Abs(r)
	abs.Add(abs, big.NewRat(1, 2))
	n := new(big.Int).Quo(abs.Num(), abs.Denom())
	if r.Sign() < 0 {
		n.Neg(n)
	}
	if !n.IsInt64() {
		return nil, true, errIntRange(t)
	}
	lit, err = intLiteral(n.Int64(), t, false)
	return lit, true, err
}

// intRange returns the range of the integer type t (smallint, integer or bigint) and
// PostgreSQL's name of it; ok is false for any other type.
func intRange(t types.Type) (lo, hi int64, name string, ok bool) {
	switch t.(type) {
	case *types.Int16Type:
		return math.MinInt16, math.MaxInt16, "smallint", true
	case *types.Int32Type:
		return math.MinInt32, math.MaxInt32, "integer", true
	case *types.Int64Type:
		return math.MinInt64, math.MaxInt64, "bigint", true
	}
	return 0, 0, "", false
}

// errIntRange is PostgreSQL's refusal of a value outside the range of the integer type t
// (the casts int84, int82, numeric_int4…): "smallint out of range", "integer out of range" or
// "bigint out of range", numeric_value_out_of_range (22003).
func errIntRange(t types.Type) *Error {
	_, _, name, _ := intRange(t)
	return &Error{Code: InvalidArgument, SQLState: "22003", Msg: name + " out of range"}
}

// intLiteral is n as a literal of the integer type t (smallint, integer or bigint; nullable
// or not), refused with errIntRange outside t's range, as PostgreSQL's casts from bigint
// refuse it. Any other t is a bigint literal.
func intLiteral(n int64, t types.Type, nullable bool) (expr.Expression, error) {
	lo, hi, _, ok := intRange(t)
	if !ok {
		return expr.NewPrimitiveLiteral(n, nullable), nil
	}
	if n < lo || n > hi {
		return nil, errIntRange(t)
	}
	switch t.(type) {
	case *types.Int16Type:
		return expr.NewPrimitiveLiteral(int16(n), nullable), nil
	case *types.Int32Type:
		return expr.NewPrimitiveLiteral(int32(n), nullable), nil
	}
	return expr.NewPrimitiveLiteral(n, nullable), nil
}

// maxVarcharLength is PostgreSQL's MaxAttrSize (10 MB) in characters: the longest length
// varchar(n) takes (varchartypmodin's "length for type varchar cannot exceed 10485760").
const maxVarcharLength = 10 * 1024 * 1024

// lengthModifier reads the length of varchar(n) or char(n) (kind "varchar" or "char") from
// its type modifiers as PostgreSQL's varchartypmodin and bpchartypmodin do: one integer
// constant from 1 to 10485760, else their errors (22023 for a length out of range).
func lengthModifier(kind string, mods []*pg.Node) (int64, error) {
	if len(mods) != 1 {
		return 0, errorf(InvalidArgument, "invalid type modifier")
	}
	c := mods[0].GetAConst()
	if c == nil || c.GetIval() == nil {
		return 0, errorf(InvalidArgument, "type modifiers must be simple constants or identifiers")
	}
	n := int64(c.GetIval().GetIval())
	if n < 1 {
		return 0, refused(InvalidArgument, "22023", "length for type %s must be at least 1", kind)
	}
	if n > maxVarcharLength {
		return 0, refused(InvalidArgument, "22023", "length for type %s cannot exceed %d", kind, maxVarcharLength)
	}
	return n, nil
}

// varcharTypeCast binds an explicit cast to varchar(n) (character varying(n)) as PostgreSQL's
// varchar(varchar, integer, boolean) coerces with isExplicit true: the value as text, cut to
// its first n characters (no error, unlike an assignment), NULL staying NULL; Arrow utf8, the
// column named varchar. A length below 1 or above 10485760 is PostgreSQL's 22023. A cast to
// character(n) (char(n), bpchar(n); char alone is char(1) in PostgreSQL's grammar) is
// bpcharValue's, with the same lengths and errors as PostgreSQL's bpchartypmodin. ok is false
// for other targets.
func (bd *binder) varcharTypeCast(tc *pg.TypeCast, sc *scope) (bval, bool, error) {
	tn := tc.GetTypeName()
	kind, ok := typmodCastName(tn)
	if !ok {
		return bval{}, false, nil
	}
	switch kind {
	case "varchar":
	case "bpchar":
		kind = "char"
	case "char":
		return bval{}, true, errorf(InvalidArgument, `type modifier is not allowed for type "char"`)
	default:
		return bval{}, false, nil
	}
	n, err := lengthModifier(kind, tn.GetTypmods())
	if err != nil {
		return bval{}, true, err
	}
	plain := &pg.TypeName{Names: tn.GetNames(), Location: tn.GetLocation()}
	if kind == "char" {
		plain.Names = []*pg.Node{pg.MakeStrNode("text")} // any value's text, as bpchar's I/O cast
	}
	v, err := bd.typeCast(&pg.TypeCast{Arg: tc.GetArg(), TypeName: plain, Location: tc.GetLocation()}, sc)
	if err != nil {
		return bval{}, true, err
	}
	if kind == "char" {
		out, err := bd.bpcharValue(v, int32(n))
		return out, true, err
	}
	typmod := fmt.Sprintf("character varying(%d)", n)
	// varchar's truncation keeps n characters (multibyte-aware, pg_mbcharcliplen): left(s, n),
	// folded for a constant (a partition key's value written 'BOSTON'::varchar(3) routes).
	if lit, ok := v.e.(*expr.PrimitiveLiteral[string]); ok {
		r := []rune(lit.Value)
		out := typed(expr.NewPrimitiveLiteral(string(r[:min(int64(len(r)), n)]), false))
		out.typmod, out.varchar = typmod, true
		return out, true, nil
	}
	f, err := bd.fn(URNPostgres, "left", strType(), v.e, expr.NewPrimitiveLiteral(n, false))
	out := typed(f)
	out.typmod, out.varchar = typmod, true
	return out, true, err
}
