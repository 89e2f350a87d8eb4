package substrait

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/flightsrv/flightsrv/routing"
)

// DataFusion 55 (datafusion.substrait.Producer) declares every function by its own name and no
// extension (NoExtensionReference). The names below mean DataFusion's scalar functions, which
// are not the standard extensions' functions of the same name (or have none): normalizeExtensions
// declares them under urnDataFusion (with dataFusionPrefix), and after decoding, when the arguments' types are known,
// dataFusionRewriter binds each call onto what the SQL binder binds for PostgreSQL's function
// of the same meaning (URNPostgres' kernels, round_calendar, IfThen), or refuses it by name:
// feature_not_supported (0A000) where DataFusion's function means something PostgreSQL's does
// not, undefined_function (42883) for argument types it is not bound for. No call declared
// under urnDataFusion reaches the executor.
//
//   - strpos, btrim, ltrim, rtrim, reverse, translate, replace over strings, repeat, left and right(s, n): PostgreSQL's functions of the
//     same name (DataFusion's characters are Unicode code points, as PostgreSQL's in UTF-8).
//   - coalesce(a, b, …) and nullif(a, b): CASE, as the binder writes them.
//   - date_trunc(unit, ts) of second, minute, hour, day, week, month, quarter, year: the
//     binder's round_calendar in UTC (DataFusion truncates in the column's zone, UTC here; its
//     weeks start on Monday, as PostgreSQL's).
//   - date_part(field, ts) (DataFusion's extract too) of year, quarter, month, week, day, hour,
//     minute, dow, doy: PostgreSQL's date_part, whose value for these fields is a whole number,
//     as the Int32 DataFusion declares. Fields with a fraction (second, millisecond,
//     microsecond, epoch) DataFusion answers differently (an integer, or another
//     precision) and are refused.
//   - floor and ceil: PostgreSQL's over double precision; of an integer, the integer.
//   - round(x) of an integer: the integer; round(x[, digits]) of double precision: DataFusion's
//     arithmetic written out (dataFusionRewriter.round: half away from zero, Rust's f64::round,
//     where PostgreSQL's round(double precision) rounds half to even).
//   - ends_with(s, suffix): right(s, char_length(suffix)) = suffix (PostgreSQL 15 has no
//     ends_with).
//   - regex_match (DataFusion's ~): PostgreSQL's regex_match when the pattern is a literal
//     whose meaning is the same in Rust's regex crate and PostgreSQL's regular expressions
//     (sameRegexMeaning); whether a match exists does not depend on which match each engine
//     prefers. regexp_replace, whose result does (Rust's leftmost-first against PostgreSQL's
//     longest match), is refused, as are ~* and patterns outside that subset.
//
// Standard arithmetic of any producer is rewritten too where the executor needs it
// (rewriteArithmetic): a timestamp ± an interval literal becomes the binder's timestamp_add,
// and integer operands of different widths are widened to the declared result (DataFusion
// writes i32 % i64 and means the cast it leaves implicit).
//
// The calls are declared in URNPostgres under the name dataFusionPrefix + name, which no
// kernel has.
const urnDataFusion = URNPostgres

// dataFusionPrefix prefixes the names of DataFusion's functions declared in urnDataFusion.
const dataFusionPrefix = "datafusion."

// dataFusionScalars are the DataFusion function names declared under urnDataFusion.
var dataFusionScalars = map[string]bool{
	"strpos": true, "btrim": true, "ltrim": true, "rtrim": true, "reverse": true, "translate": true,
	"coalesce": true, "nullif": true, "date_trunc": true, "date_part": true, "round": true, "floor": true,
	"ceil": true, "ends_with": true, "repeat": true, "replace": true, "left": true, "right": true, "regex_match": true, "regex_imatch": true, "regexp_replace": true,
}

// dataFusionStringArities are the DataFusion functions of strings only bound onto
// URNPostgres' function of the same name, with their least and greatest argument counts.
var dataFusionStringArities = map[string][2]int{"strpos": {2, 2}, "btrim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2},
	"reverse": {1, 1}, "translate": {3, 3}, "replace": {3, 3}}

// dataFusionDateParts are the date_part fields whose PostgreSQL value is a whole number, with
// the field name URNPostgres' date_part takes.
var dataFusionDateParts = map[string]string{"year": "YEAR", "quarter": "QUARTER", "month": "MONTH", "week": "WEEK",
	"day": "DAY", "hour": "HOUR", "minute": "MINUTE", "dow": "DOW", "doy": "DOY"}

// dataFusionRewriter rewrites the urnDataFusion calls and the standard arithmetic of a decoded
// client plan (see urnDataFusion); reg is the plan's registry, which declares what it adds.
type dataFusionRewriter struct {
	reg     expr.ExtensionRegistry
	changed bool
	err     error
}

// rewriteDataFusion returns p with its urnDataFusion calls and arithmetic rewritten (p itself
// when nothing changed), re-decoded so that its declarations are the ones it uses.
func rewriteDataFusion(p *plan.Plan) (*plan.Plan, error) {
	rw := &dataFusionRewriter{reg: p.ExtensionRegistry()}
	root := p.GetRoots()[0]
	rel, err := rw.rel(root.Input())
	if err != nil || !rw.changed {
		return p, err
	}
	return withRoot(p, rel, "rewrite DataFusion functions")
}

func (rw *dataFusionRewriter) rel(r plan.Rel) (plan.Rel, error) {
	ins := r.GetInputs()
	newIns := make([]plan.Rel, len(ins))
	for i, in := range ins {
		n, err := rw.rel(in)
		if err != nil {
			return nil, err
		}
		newIns[i] = n
	}
	out, err := r.CopyWithExpressionRewrite(func(e expr.Expression) (expr.Expression, error) {
		x := rw.expr(e)
		return x, rw.err
	}, newIns...)
	if err != nil {
		return nil, err
	}
	return out, rw.err
}

// expr rewrites e bottom-up; the first error is kept in rw.err.
func (rw *dataFusionRewriter) expr(e expr.Expression) expr.Expression {
	if rw.err != nil || e == nil {
		return e
	}
	e = e.Visit(rw.expr)
	if w, ok := e.(*expr.WindowFunction); ok {
		// Visit leaves a window function's partitions and sorts alone.
		cp, changed := *w, false
		cp.Partitions, cp.Sorts = slices.Clone(w.Partitions), slices.Clone(w.Sorts)
		for i, p := range cp.Partitions {
			if n := rw.expr(p); n != p {
				cp.Partitions[i], changed = n, true
			}
		}
		for i, s := range cp.Sorts {
			if n := rw.expr(s.Expr); n != s.Expr {
				cp.Sorts[i].Expr, changed = n, true
			}
		}
		if changed {
			return &cp
		}
		return e
	}
	f, ok := e.(*expr.ScalarFunction)
	if !ok || rw.err != nil {
		return e
	}
	var out expr.Expression
	var err error
	switch id := f.ID(); {
	case id.URN == urnDataFusion && strings.HasPrefix(id.Name, dataFusionPrefix):
		out, err = rw.call(f)
	case id.URN == URNArithmetic || id.URN == URNDatetime:
		out, err = rw.arithmetic(f)
	}
	if err != nil {
		rw.err = err
		return e
	}
	if out == nil {
		return e
	}
	rw.changed = true
	return out
}

// args returns f's arguments as expressions (nil when one is an enum or a type).
func callArgs(f *expr.ScalarFunction) []expr.Expression {
	out := make([]expr.Expression, f.NArgs())
	for i := range out {
		e, ok := f.Arg(i).(expr.Expression)
		if !ok {
			return nil
		}
		out[i] = e
	}
	return out
}

// argTypes names the arguments' types for a refusal.
func argTypes(args []expr.Expression) string {
	ts := make([]string, len(args))
	for i, a := range args {
		ts[i] = a.GetType().WithNullability(types.NullabilityRequired).String()
	}
	return strings.Join(ts, ", ")
}

func (rw *dataFusionRewriter) pg(name string, out types.Type, args ...expr.Expression) (expr.Expression, error) {
	fa := make([]types.FuncArg, len(args))
	for i, a := range args {
		fa[i] = a
	}
	return rw.custom(URNPostgres, name, out, fa...)
}

func (rw *dataFusionRewriter) custom(urn, name string, out types.Type, args ...types.FuncArg) (*expr.ScalarFunction, error) {
	f, err := expr.NewCustomScalarFunc(rw.reg, extensions.NewScalarFuncVariant(extensions.ID{URN: urn, Name: name}), out, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("substrait: bind DataFusion's %s: %w", name, err)
	}
	return f, nil
}

func (rw *dataFusionRewriter) std(urn, name string, args ...types.FuncArg) (*expr.ScalarFunction, error) {
	f, err := expr.NewScalarFunc(rw.reg, extensions.ID{URN: urn, Name: name}, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("substrait: bind %s: %w", name, err)
	}
	return f, nil
}

// castTo is e as type t (e itself when its type is t but for nullability, since the
// executor's values carry no nullability).
func castTo(e expr.Expression, t types.Type) expr.Expression {
	if sameType(e.GetType().WithNullability(nullableN), t.WithNullability(nullableN)) {
		return e
	}
	return &expr.Cast{Type: t.WithNullability(nullableN), Input: e, FailureBehavior: types.BehaviorThrowException}
}

func dfNoSuchFunction(name string, args []expr.Expression) *Error {
	return refused(InvalidArgument, "42883", "DataFusion's function %s(%s) is not supported over these argument types", name, argTypes(args))
}

func dfUnlike(name, why string) *Error {
	return refused(Unimplemented, "0A000", "DataFusion's function %s is not supported: %s", name, why)
}

// stringArg is the value of a string literal argument.
func stringArg(e expr.Expression) (string, bool) {
	if l, ok := e.(expr.Literal); ok {
		return stringLiteral(l)
	}
	return "", false
}

// call binds one urnDataFusion call (see urnDataFusion).
func (rw *dataFusionRewriter) call(f *expr.ScalarFunction) (expr.Expression, error) {
	name := strings.TrimPrefix(f.Name(), dataFusionPrefix)
	args := callArgs(f)
	if args == nil {
		return nil, dfNoSuchFunction(name, nil)
	}
	strs := func(lo, hi int) bool {
		if len(args) < lo || len(args) > hi {
			return false
		}
		for _, a := range args {
			if familyOf(a.GetType()) != famString {
				return false
			}
		}
		return true
	}
	if a, ok := dataFusionStringArities[name]; ok {
		if !strs(a[0], a[1]) {
			return nil, dfNoSuchFunction(name, args)
		}
		out := strType()
		if name == "strpos" {
			out = i32Type()
		}
		return rw.pg(name, out, args...)
	}
	switch name {
	case "repeat", "left", "right":
		if len(args) != 2 || familyOf(args[0].GetType()) != famString || familyOf(args[1].GetType()) != famInt {
			return nil, dfNoSuchFunction(name, args)
		}
		return rw.pg(name, strType(), args[0], castTo(args[1], i64Type()))
	case "ends_with":
		if !strs(2, 2) {
			return nil, dfNoSuchFunction(name, args)
		}
		n, err := rw.pg("char_length", i64Type(), args[1])
		if err != nil {
			return nil, err
		}
		tail, err := rw.pg("right", strType(), args[0], n)
		if err != nil {
			return nil, err
		}
		return rw.std(URNComparison, "equal", tail, args[1])
	case "coalesce", "nullif":
		return rw.conditional(name, f.GetType(), args)
	case "date_trunc":
		return rw.dateTrunc(args)
	case "date_part":
		return rw.datePart(args)
	case "floor", "ceil", "round":
		if name == "round" && len(args) == 2 {
			return rw.round(args)
		}
		if len(args) != 1 {
			return nil, dfNoSuchFunction(name, args)
		}
		switch familyOf(args[0].GetType()) {
		case famInt:
			return castTo(args[0], f.GetType()), nil
		case famFloat:
			if name == "round" {
				return rw.round(args)
			}
			return rw.pg(name, fp64Type(), castTo(args[0], fp64Type()))
		}
		return nil, dfNoSuchFunction(name, args)
	case "regex_match":
		return rw.regexMatch(args)
	case "regex_imatch":
		return nil, dfUnlike("regex_imatch (~*)", "Rust's case-insensitive matching folds case by Unicode's rules, PostgreSQL's by the database's locale")
	case "regexp_replace":
		return nil, dfUnlike(name, "DataFusion's regular expressions are Rust's, which prefer the leftmost-first match where PostgreSQL's prefer the longest, and read replacements and flags differently")
	}
	return nil, dfNoSuchFunction(name, args)
}

// maxRoundDigits bounds the digits of DataFusion's round(x, digits): 10^d is exact in
// double precision up to 10^22, so the scale below is the one DataFusion computes
// (10.0_f64.powi(d), whose negative powers are 1 / 10^|d|).
const maxRoundDigits = 22

// round binds DataFusion's round(x[, digits]) of a double precision x: Rust's
// (x · s).round() / s with s = 10^digits (1 when digits are left out, where x · 1 = x), f64::round
// rounding half away from zero. PostgreSQL has no such function (its round(double precision)
// rounds half to even), so it is written out exactly: with y = x · s and t = trunc(y) (y − t
// is exact), CASE WHEN abs(y − t) >= 0.5 THEN t + sign(y) ELSE t END, divided by s. digits must
// be an integer literal of at most maxRoundDigits in magnitude. A product past double
// precision's range is PostgreSQL's overflow error, where DataFusion answers infinity.
func (rw *dataFusionRewriter) round(args []expr.Expression) (expr.Expression, error) {
	if _, ok := args[0].GetType().(*types.Float64Type); !ok {
		return nil, dfNoSuchFunction("round", args)
	}
	x, scale := args[0], 1.0
	if len(args) == 2 {
		if familyOf(args[1].GetType()) != famInt {
			return nil, dfNoSuchFunction("round", args)
		}
		d, ok := IntLiteral(args[1])
		if !ok || d < -maxRoundDigits || d > maxRoundDigits {
			return nil, dfUnlike("round", fmt.Sprintf("its digits must be an integer literal from %d to %d", -maxRoundDigits, maxRoundDigits))
		}
		if scale = math.Pow10(int(max(d, -d))); d < 0 {
			scale = 1 / scale
		}
	}
	var err error
	lit := func(v float64) expr.Expression { return expr.NewPrimitiveLiteral(v, false) }
	step := func(e expr.Expression, err2 error) expr.Expression {
		if err == nil {
			err = err2
		}
		return e
	}
	if scale != 1 {
		x = step(rw.std(URNArithmetic, "multiply", x, lit(scale)))
	}
	t := step(rw.pg("trunc", fp64Type(), x))
	frac := step(rw.std(URNArithmetic, "abs", step(rw.std(URNArithmetic, "subtract", x, t))))
	half := step(rw.std(URNComparison, "gte", frac, lit(0.5)))
	away := step(rw.std(URNArithmetic, "add", t, step(rw.pg("sign", fp64Type(), x))))
	if err != nil {
		return nil, err
	}
	r, err := expr.NewIfThen(expr.IfThenPair{If: half, Then: nullable(away)}, nullable(t))
	if err != nil {
		return nil, fmt.Errorf("substrait: bind DataFusion's round: %w", err)
	}
	if scale == 1 {
		return r, nil
	}
	return rw.std(URNArithmetic, "divide", r, lit(scale))
}

// conditional binds coalesce and nullif as the binder does: CASE WHEN a IS NOT NULL THEN a …
// ELSE last END, and CASE WHEN a = b THEN NULL ELSE a END, of the declared result type.
func (rw *dataFusionRewriter) conditional(name string, out types.Type, args []expr.Expression) (expr.Expression, error) {
	out = out.WithNullability(nullableN)
	if len(args) == 0 || name == "nullif" && len(args) != 2 {
		return nil, dfNoSuchFunction(name, args)
	}
	for _, a := range args {
		if familyOf(a.GetType()) != familyOf(out) {
			return nil, dfNoSuchFunction(name, args)
		}
	}
	var pairs []expr.IfThenPair
	var els expr.Expression
	if name == "nullif" {
		eq, err := rw.std(URNComparison, "equal", args[0], args[1])
		if err != nil {
			return nil, err
		}
		pairs, els = []expr.IfThenPair{{If: eq, Then: expr.NewNullLiteral(out)}}, nullable(castTo(args[0], out))
	} else {
		if len(args) == 1 {
			return nullable(castTo(args[0], out)), nil
		}
		for _, a := range args[:len(args)-1] {
			nn, err := rw.std(URNComparison, "is_not_null", a)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, expr.IfThenPair{If: nn, Then: nullable(castTo(a, out))})
		}
		els = nullable(castTo(args[len(args)-1], out))
	}
	e, err := expr.NewIfThen(pairs[0], els, pairs[1:]...)
	if err != nil {
		return nil, fmt.Errorf("substrait: bind DataFusion's %s: %w", name, err)
	}
	return e, nil
}

// timeField reads the (unit or field literal, timestamp) arguments of date_trunc and
// date_part.
func timeField(name, what string, args []expr.Expression) (string, error) {
	if len(args) != 2 || familyOf(args[1].GetType()) != famTimestamp {
		return "", dfNoSuchFunction(name, args)
	}
	u, ok := stringArg(args[0])
	if !ok {
		return "", dfUnlike(name, "its "+what+" must be a string literal")
	}
	return u, nil
}

func (rw *dataFusionRewriter) dateTrunc(args []expr.Expression) (expr.Expression, error) {
	u, err := timeField("date_trunc", "unit", args)
	if err != nil {
		return nil, err
	}
	unit, err := parseTruncUnit(u)
	if err != nil {
		return nil, err
	}
	return binExprWith(func(urn, name string, opts []*types.FunctionOption, a ...types.FuncArg) (*expr.ScalarFunction, error) {
		return rw.std(urn, name, a...)
	}, args[1], routing.TruncBinning(unit))
}

func (rw *dataFusionRewriter) datePart(args []expr.Expression) (expr.Expression, error) {
	u, err := timeField("date_part", "field", args)
	if err != nil {
		return nil, err
	}
	field, ok := dataFusionDateParts[strings.ToLower(strings.TrimSpace(u))]
	if !ok {
		return nil, dfUnlike("date_part", fmt.Sprintf("of the field %q (its answer is not PostgreSQL's, or it is not a field of a timestamp)", strings.ToLower(u)))
	}
	f, err := rw.custom(URNPostgres, "date_part", i64Type(), types.Enum(field), args[1])
	if err != nil {
		return nil, err
	}
	return castTo(f, i32Type()), nil
}

func (rw *dataFusionRewriter) regexMatch(args []expr.Expression) (expr.Expression, error) {
	if len(args) != 2 || familyOf(args[0].GetType()) != famString || familyOf(args[1].GetType()) != famString {
		return nil, dfNoSuchFunction("regex_match", args)
	}
	p, ok := stringArg(args[1])
	if !ok {
		return nil, dfUnlike("regex_match (~)", "its pattern must be a string literal")
	}
	if !sameRegexMeaning(p) {
		return nil, dfUnlike("regex_match (~)", "the pattern uses a construct whose meaning differs between Rust's regular expressions and PostgreSQL's (only literal characters, ^, $, bracket expressions of characters and ranges, groups, | and the greedy quantifiers *, +, ?, {m,n} are bound)")
	}
	return rw.custom(URNPostgres, "regex_match", booleanType(), types.Enum(""), args[0], args[1])
}

// sameRegexMeaning reports whether pattern means the same in Rust's regex crate (DataFusion's)
// and PostgreSQL's advanced regular expressions, as far as which strings hold a match: it
// holds only characters other than the specials, ^ and $ (both at the text's ends without
// flags), groups (…), alternation |, bracket expressions of characters and ranges (no classes,
// escapes or collating elements), and the greedy quantifiers *, +, ? and {m}, {m,}, {m,n}.
// The dot (PostgreSQL's matches a newline, Rust's does not), escapes (\d, \b, \w and others
// differ), lazy quantifiers and flags are refused.
func sameRegexMeaning(p string) bool {
	inBracket := false
	prevQuant := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if inBracket {
			switch c {
			case '\\', '[':
				return false
			case ']':
				if p[i-1] != '[' && !(p[i-1] == '^' && p[i-2] == '[') {
					inBracket = false
				}
			}
			continue
		}
		quant := false
		switch c {
		case '\\', '.':
			return false
		case '[':
			inBracket = true
		case '*', '+', '?':
			if prevQuant {
				return false // lazy (*?) or possessive forms
			}
			quant = true
		case '{':
			j := strings.IndexByte(p[i:], '}')
			if j < 0 || prevQuant || !isBound(p[i+1:i+j]) {
				return false
			}
			i += j
			quant = true
		case '(':
			if i+1 < len(p) && p[i+1] == '?' {
				return false // (?flags), (?:…), lookaround
			}
		case '}':
			return false
		}
		if c >= 0x80 || c < 0x20 {
			return false
		}
		prevQuant = quant
	}
	return !inBracket
}

// isBound reports whether s is m, m, or m,n with decimal m ≤ n.
func isBound(s string) bool {
	lo, hi, comma := strings.Cut(s, ",")
	digits := func(x string) bool {
		if x == "" || len(x) > 3 {
			return false
		}
		for _, c := range x {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	if !digits(lo) {
		return false
	}
	if !comma || hi == "" {
		return true
	}
	return digits(hi) && len(hi) >= len(lo) && (len(hi) > len(lo) || hi >= lo)
}

// arithmetic rewrites a standard add or subtract of a timestamp and an interval literal onto
// timestamp_add (the binder's ts ± INTERVAL: months on the calendar, then days as 24 hours and
// time, in UTC), and widens integer operands of different widths to the declared integer
// result. nil: f stays as it is.
func (rw *dataFusionRewriter) arithmetic(f *expr.ScalarFunction) (expr.Expression, error) {
	args := callArgs(f)
	if len(args) != 2 {
		return nil, nil
	}
	name := f.Name()
	if (name == "add" || name == "subtract") && familyOf(args[0].GetType()) == famTimestamp {
		lit, ok := args[1].(expr.Literal)
		if !ok {
			return nil, nil
		}
		months, ns, ok := intervalLiteralValue(lit.ToProtoLiteral())
		if !ok {
			return nil, nil
		}
		if name == "subtract" {
			months, ns = -months, -ns
		}
		return rw.custom(URNPostgres, "timestamp_add", args[0].GetType().WithNullability(nullableN), args[0],
			expr.NewPrimitiveLiteral(months, false), expr.NewPrimitiveLiteral(ns, false))
	}
	out := f.GetType()
	if familyOf(out) != famInt || familyOf(args[0].GetType()) != famInt || familyOf(args[1].GetType()) != famInt ||
		sameType(args[0].GetType().WithNullability(nullableN), args[1].GetType().WithNullability(nullableN)) {
		return nil, nil
	}
	opts := f.GetOptions()
	g, err := expr.NewCustomScalarFunc(rw.reg, extensions.NewScalarFuncVariant(f.ID()), out, opts, castTo(args[0], out), castTo(args[1], out))
	if err != nil {
		return nil, fmt.Errorf("substrait: widen %s: %w", name, err)
	}
	return g, nil
}

// intervalLiteralValue reads an interval literal (day-to-second, year-to-month or compound) as
// months and nanoseconds; ok is false for any other literal, a null one, or one past int64
// nanoseconds.
func intervalLiteralValue(l *substraitpb.Expression_Literal) (months, ns int64, ok bool) {
	var ym *substraitpb.Expression_Literal_IntervalYearToMonth
	var ds *substraitpb.Expression_Literal_IntervalDayToSecond
	switch {
	case l.GetIntervalCompound() != nil:
		ym, ds = l.GetIntervalCompound().GetIntervalYearToMonth(), l.GetIntervalCompound().GetIntervalDayToSecond()
	case l.GetIntervalYearToMonth() != nil:
		ym = l.GetIntervalYearToMonth()
	case l.GetIntervalDayToSecond() != nil:
		ds = l.GetIntervalDayToSecond()
	default:
		return 0, 0, false
	}
	months = int64(ym.GetYears())*12 + int64(ym.GetMonths())
	total := new(big.Int).Mul(big.NewInt(int64(ds.GetDays())), big.NewInt(86400e9))
	total.Add(total, new(big.Int).Mul(big.NewInt(int64(ds.GetSeconds())), big.NewInt(1e9)))
	sub := big.NewInt(ds.GetSubseconds())
	prec := int32(6) // the deprecated microseconds field's precision
	if _, set := ds.GetPrecisionMode().(*substraitpb.Expression_Literal_IntervalDayToSecond_Precision); set {
		prec = ds.GetPrecision()
	} else if ds != nil {
		sub = big.NewInt(int64(ds.GetMicroseconds()))
	}
	if prec < 0 || prec > 9 {
		return 0, 0, false
	}
	sub.Mul(sub, big.NewInt(int64(math.Pow10(int(9-prec)))))
	total.Add(total, sub)
	if !total.IsInt64() {
		return 0, 0, false
	}
	return months, total.Int64(), true
}
