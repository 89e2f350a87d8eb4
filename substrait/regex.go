package substrait

import (
	"errors"
	"regexp/syntax"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/pgregex"
)

// regexPattern checks a constant pattern of a regular expression (internal/pgregex), returning
// its literal: a pattern that is not a constant, or that pgregex refuses, is refused here by
// name, before the query runs.
//
// A parameter ($n, or $n::text) is a constant of each execution, as PostgreSQL types it: text,
// the pattern's type (`s ~ $1`, `substring(s FROM $1)` prepare with a text parameter). Every
// execution binds the statement again with its values, so the bound text is checked and
// compiled there (its refusals and 2201B come from the execution); at prepare time, with no
// value yet, a stand-in pattern answers (patternStandIn), on which nothing of the statement's
// schema depends.
func (bd *binder) regexPattern(v bval, what string, o pgregex.Options) (expr.Expression, error) {
	if v.param > 0 && v.untyped() {
		e, err := bd.coerce(v, strType(), "the pattern of "+what)
		if err != nil {
			return nil, err
		}
		v = typed(e)
	}
	if _, ph := bd.ps.placeholders[v.e]; ph && v.e != nil && bd.ps.vals == nil {
		return expr.NewPrimitiveLiteral(patternStandIn, false), nil
	}
	var p string
	switch {
	case v.str != nil:
		p = *v.str
	case v.e != nil:
		lit, ok := v.e.(*expr.PrimitiveLiteral[string])
		if !ok {
			return nil, unimplemented(what + " with a pattern that is not a constant")
		}
		p = lit.Value
	default:
		return nil, unimplemented(what + " with a pattern that is not a constant")
	}
	if _, err := pgregex.Compile(p, o); err != nil {
		var ue *pgregex.UnsupportedError
		if errors.As(err, &ue) {
			return nil, &Error{Code: Unimplemented, SQLState: "0A000", Msg: ue.Error()}
		}
		return nil, &Error{Code: InvalidArgument, SQLState: "2201B", Msg: "invalid regular expression"}
	}
	return expr.NewPrimitiveLiteral(p, false), nil
}

// patternStandIn is the pattern a parameter stands for at prepare time (regexPattern): one
// every pattern check accepts (no alternatives, no empty match).
const patternStandIn = "x"

// regexOp binds s ~ p, s ~* p, s !~ p and s !~* p onto URNPostgres' regex_match.
func (bd *binder) regexOp(op string, l, r bval) (bval, error) {
	l, err := bd.padded(l) // bpcharregexeq reads the padding
	if err != nil {
		return bval{}, err
	}
	s, err := bd.coerce(l, strType(), "the left operand of "+op)
	if err != nil {
		return bval{}, err
	}
	icase := strings.Contains(op, "*")
	p, err := bd.regexPattern(r, "operator "+op, pgregex.Options{IgnoreCase: icase})
	if err != nil {
		return bval{}, err
	}
	flags := ""
	if icase {
		flags = "i"
	}
	f, err := bd.fn(URNPostgres, "regex_match", booleanType(), types.Enum(flags), s, p)
	if err != nil || !strings.HasPrefix(op, "!") {
		return typed(f), err
	}
	nf, err := bd.fn(URNBoolean, "not", booleanType(), f)
	return typed(nf), err
}

// regexpReplace binds regexp_replace(source, pattern, replacement[, flags]) with constant
// flags (g and PostgreSQL's option letters, regexFlagsArg) as PostgreSQL reads them; references
// \1 … \9 in the replacement of a pattern with alternatives are refused (the subexpressions'
// extents may differ between PostgreSQL's engine and RE2's).
func (bd *binder) regexpReplace(args []bval) (bval, error) {
	if len(args) != 3 && len(args) != 4 {
		return bval{}, unimplemented("regexp_replace with other than three or four arguments")
	}
	var (
		opts   pgregex.Options
		global bool
	)
	if len(args) == 4 {
		flags, null, err := bd.flagsParam(args[3], "regexp_replace")
		switch {
		case err != nil:
			return bval{}, err
		case null:
			return typed(expr.NewNullLiteral(strType().WithNullability(nullableN))), nil // strict
		}
		if opts, err = regexFlagsArg(flags, "regexp_replace", &global); err != nil {
			return bval{}, err
		}
	}
	opts.Extent = true
	flags := opts.Flags()
	if global {
		flags = "g" + flags
	}
	s, err := bd.coerce(args[0], strType(), "argument 1 of regexp_replace")
	if err != nil {
		return bval{}, err
	}
	p, err := bd.regexPattern(args[1], "regexp_replace", opts)
	if err != nil {
		return bval{}, err
	}
	repl, err := bd.coerce(args[2], strType(), "argument 3 of regexp_replace")
	if err != nil {
		return bval{}, err
	}
	if pgregex.HasAlternation(p.(*expr.PrimitiveLiteral[string]).Value) {
		rl, ok := repl.(*expr.PrimitiveLiteral[string])
		if !ok || hasGroupReference(rl.Value) {
			return bval{}, unimplemented("regexp_replace of a pattern with alternatives (|) and a replacement referring to its subexpressions")
		}
	}
	if global {
		// Global replacement of a pattern looking behind a position searches the whole subject
		// (scan/ops' replaceAllInContext), whose search skips an empty match right after a
		// match where PostgreSQL's takes it: such a pattern that can match both the empty
		// string and some text is refused (one matching only empty strings never follows a
		// match of text).
		re, err := pgregex.Compile(p.(*expr.PrimitiveLiteral[string]).Value, opts)
		if err != nil {
			return bval{}, err // regexPattern compiled it already
		}
		gp := re.Regexp.String() // the pattern as Go's syntax reads it
		if tree, err := syntax.Parse(gp, syntax.Perl); err != nil || re.LooksBehind && matchesEmpty(tree) && consumes(tree) {
			return bval{}, unimplemented("regexp_replace with flag g of a pattern that can match the empty string beside an anchor or a word boundary")
		}
	}
	f, err := bd.fn(URNPostgres, "regexp_replace", strType(), types.Enum(flags), s, p, repl)
	return typed(f), err
}

// regexFlagsArg reads the constant flags argument of the regular-expression function fn as
// PostgreSQL's parse_re_flags does (pgregex.ParseFlags; g only where global is not nil): an
// unknown letter is its 22023 "invalid regular expression option", b and e (basic and
// extended REs) are refused by name.
func regexFlagsArg(v bval, fn string, global *bool) (pgregex.Options, error) {
	f, ok := constText(v)
	if !ok {
		return pgregex.Options{}, unimplemented(fn + " with flags that are not a constant")
	}
	o, err := pgregex.ParseFlags(f, global)
	var fe *pgregex.FlagError
	var ue *pgregex.UnsupportedError
	switch {
	case errors.As(err, &fe):
		return o, &Error{Code: InvalidArgument, SQLState: "22023", Msg: fe.Error()}
	case errors.As(err, &ue):
		return o, &Error{Code: Unimplemented, SQLState: "0A000", Msg: ue.Error()}
	}
	return o, nil
}

// flagsParam reads the flags argument v of the regular-expression function fn when it is a
// parameter ($n, $n::text), text as PostgreSQL types it: a constant of each execution, read when the statement
// is bound (regexFlagsArg checks it then; null reports a NULL, which makes the strict function
// NULL, as does a NULL constant); at prepare time no flags stand in (the plan is bound again
// with the values). Any other v is returned as it is.
func (bd *binder) flagsParam(v bval, fn string) (bval, bool, error) {
	e := v.e
	if v.param > 0 && v.untyped() {
		var err error
		if e, err = bd.coerce(v, strType(), "the flags of "+fn); err != nil {
			return bval{}, false, err
		}
	}
	if _, ph := bd.ps.placeholders[e]; ph && bd.ps.vals == nil {
		none := ""
		return bval{str: &none}, false, nil
	}
	if _, null := e.(*expr.NullLiteral); null {
		return v, true, nil
	}
	if v.param == 0 {
		return v, false, nil
	}
	return typed(e), false, nil
}

// hasGroupReference reports whether a replacement refers to a subexpression (\1 … \9).
func hasGroupReference(r string) bool {
	for i := 0; i+1 < len(r); i++ {
		if r[i] == '\\' {
			if r[i+1] >= '1' && r[i+1] <= '9' {
				return true
			}
			i++
		}
	}
	return false
}

// regexpSearch binds PostgreSQL 15's regexp_count(source, pattern) and
// regexp_substr(source, pattern) (scan/ops' kernels): the number of non-overlapping matches
// (integer) and the first match's text (NULL without one), with a constant pattern. Their
// start, N, flags and subexpression arguments are refused by name, and so is regexp_count of
// a pattern that can match the empty string: PostgreSQL counts an empty match right after a
// previous match, which RE2's search skips. Name substring_regex binds substring(source FROM
// pattern) alike (the first parenthesised subexpression's text, else the whole match).
func (bd *binder) regexpSearch(name string, args []bval) (bval, error) {
	what := name
	if name == "substring_regex" {
		what = "substring(… FROM pattern)"
	}
	if len(args) != 2 {
		return bval{}, unimplemented(what + " with a start position, flags or other arguments after the pattern")
	}
	s, err := bd.coerce(args[0], strType(), "argument 1 of "+what)
	if err != nil {
		return bval{}, err
	}
	p, err := bd.regexPattern(args[1], what, pgregex.Options{Extent: true})
	if err != nil {
		return bval{}, err
	}
	if pat := p.(*expr.PrimitiveLiteral[string]).Value; name == "substring_regex" && pgregex.HasAlternation(pat) && strings.Contains(pat, "(") {
		// The subexpressions' extents may differ between PostgreSQL's engine and RE2's.
		return bval{}, unimplemented("substring(… FROM pattern) of a pattern with alternatives (|) and subexpressions")
	}
	out := strType()
	if name == "regexp_count" {
		out = i32Type()
		re, err := pgregex.Compile(p.(*expr.PrimitiveLiteral[string]).Value, pgregex.Options{Extent: true})
		if err != nil {
			return bval{}, err // regexPattern compiled it already
		}
		tree, err := syntax.Parse(re.Regexp.String(), syntax.Perl)
		if err != nil || matchesEmpty(tree) {
			return bval{}, unimplemented("regexp_count of a pattern that can match the empty string")
		}
	}
	f, err := bd.fn(URNPostgres, name, out, types.Enum(""), s, p)
	return typed(f), err
}

// consumes reports whether a parsed pattern can match some text (a character somewhere in it
// that a match may read), as opposed to only empty strings (anchors, word boundaries).
func consumes(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) > 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	case syntax.OpRepeat:
		if re.Max == 0 {
			return false
		}
	}
	for _, sub := range re.Sub {
		if consumes(sub) {
			return true
		}
	}
	return false
}

// matchesEmpty reports whether a parsed pattern can match the empty string (somewhere: an
// anchor or a word boundary matches empty).
func matchesEmpty(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 0
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return matchesEmpty(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min == 0 || matchesEmpty(re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !matchesEmpty(sub) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if matchesEmpty(sub) {
				return true
			}
		}
		return false
	}
	// OpEmptyMatch, the anchors and word boundaries, OpStar, OpQuest.
	return true
}
