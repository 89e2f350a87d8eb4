package substrait

import (
	"strconv"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/pgregex"
)

// SIMILAR TO and regexp_match (docs/sql.md, "Regular expressions").
//
// s [NOT] SIMILAR TO pattern [ESCAPE e] is PostgreSQL's: the SQL pattern, a constant, is
// translated into a regular expression as PostgreSQL's similar_to_escape does (regexp.c's
// similar_escape_internal: % is .*, _ is ., ( a non-capturing group, \ . ^ $ are escaped,
// bracket expressions are copied, the escape character (default \) makes the next character
// literal and escape-" separates the parts of a substring pattern), anchored to the whole
// string, and matched as s ~ that expression (internal/pgregex refuses what it cannot match
// as PostgreSQL does).
//
// regexp_match(s, pattern[, flags]) returns text[], which the executor does not carry: an
// element of it, (regexp_match(s, pattern))[k] with a constant k, is bound onto URNPostgres'
// regexp_match_elem (scan/ops regex.go); the bare array is refused by name. Flags i and c
// are taken; g is PostgreSQL's 22023 error. A pattern with subexpressions and alternatives is
// refused, as for regexp_replace's references (the subexpressions' extents may differ between
// PostgreSQL's engine and RE2's).

// errSimilarEscape is PostgreSQL's refusal of an escape string longer than one character (of
// SIMILAR TO and of LIKE's like_escape).
var errSimilarEscape = &Error{Code: InvalidArgument, SQLState: "22025", Msg: "invalid escape string"}

// errSimilarQuotes is PostgreSQL's refusal of a third escape-double-quote separator.
var errSimilarQuotes = &Error{Code: InvalidArgument, SQLState: "2201B", Msg: "SQL regular expression may not contain more than two escape-double-quote separators"}

// similarEscape translates the SQL pattern p with escape character esc ("" for none) into
// PostgreSQL's regular expression for it (regexp.c's similar_escape_internal).
func similarEscape(p, esc string) (string, error) {
	if utf8.RuneCountInString(esc) > 1 {
		return "", errSimilarEscape
	}
	e, _ := utf8.DecodeRuneInString(esc)
	if esc == "" {
		e = -1
	}
	var b strings.Builder
	b.WriteString("^(?:")
	afterEscape, inClass := false, false
	classStart, quotes := 0, 0
	for _, c := range p {
		switch {
		case afterEscape:
			if c == '"' && !inClass {
				switch quotes {
				case 0:
					b.WriteString("){1,1}?(")
				case 1:
					b.WriteString("){1,1}(?:")
				default:
					return "", errSimilarQuotes
				}
				quotes++
			} else {
				b.WriteByte('\\')
				b.WriteRune(c)
			}
			afterEscape = false
		case c == e:
			afterEscape = true
		case inClass:
			if c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(c)
			// A ] right at the start of a class (after [ or [^) is literal.
			switch {
			case c == ']' && classStart > 2:
				inClass = false
			case c == '^':
				classStart++
			default:
				classStart = 3
			}
		case c == '[':
			b.WriteRune(c)
			inClass, classStart = true, 1
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteByte('.')
		case c == '(':
			b.WriteString("(?:")
		case c == '\\', c == '.', c == '^', c == '$':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}

// constText returns a constant text value (an untyped literal or a text literal), ok false
// for anything else.
func constText(v bval) (string, bool) {
	if v.str != nil && v.param == 0 {
		return *v.str, true
	}
	if lit, ok := v.e.(*expr.PrimitiveLiteral[string]); ok {
		return lit.Value, true
	}
	return "", false
}

// similarTo binds s [NOT] SIMILAR TO pattern [ESCAPE e] (a is the parser's AEXPR_SIMILAR: the
// operator ~ or !~ and similar_to_escape(pattern[, escape]) on the right).
func (bd *binder) similarTo(a *pg.A_Expr, op string, sc *scope) (bval, error) {
	fc := a.GetRexpr().GetFuncCall()
	if fc == nil || funcName(fc) != "similar_to_escape" || len(fc.GetArgs()) < 1 || len(fc.GetArgs()) > 2 {
		return bval{}, unimplemented("this SIMILAR TO form")
	}
	l, err := bd.bindExpr(a.GetLexpr(), sc)
	if err == nil {
		l, err = bd.padded(l) // a character(n) value is matched with its padding
	}
	if err != nil {
		return bval{}, err
	}
	var parts [2]string
	for i, n := range fc.GetArgs() {
		v, err := bd.bindExpr(n, sc)
		if err != nil {
			return bval{}, err
		}
		if v.null {
			return typed(expr.NewNullLiteral(booleanType())), nil
		}
		t, ok := constText(v)
		if !ok {
			return bval{}, unimplemented("SIMILAR TO with a pattern or escape that is not a constant")
		}
		parts[i] = t
	}
	esc := `\`
	if len(fc.GetArgs()) == 2 {
		esc = parts[1]
	}
	re, err := similarEscape(parts[0], esc)
	if err != nil {
		return bval{}, err
	}
	return bd.regexOp(op, l, bval{str: &re})
}

// errRegexpMatchArray refuses regexp_match's array result outside an element of it.
var errRegexpMatchArray = &Error{Code: Unimplemented, SQLState: "0A000",
	Msg: "regexp_match's text[] result is not supported: take one element, (regexp_match(…))[1]"}

// errRegexpMatchGlobal is PostgreSQL's error for regexp_match's flag g (textregexsubstr's
// check in regexp_match).
var errRegexpMatchGlobal = &Error{Code: InvalidArgument, SQLState: "22023", Msg: "regexp_match() does not support the \"global\" option"}

// regexpMatchArray is the error for a bare regexp_match(s, pattern[, flags]): PostgreSQL's
// errors for its constant flags first (an unknown letter, g: 22023), as PostgreSQL raises
// them whatever the result is used for, else errRegexpMatchArray.
func regexpMatchArray(args []bval) error {
	if len(args) == 3 {
		if _, ok := constText(args[2]); ok {
			var global bool
			if _, err := regexFlagsArg(args[2], "regexp_match", &global); err != nil {
				return err
			}
			if global {
				return errRegexpMatchGlobal
			}
		}
	}
	return errRegexpMatchArray
}

// notSubscriptable is PostgreSQL's 42804 "cannot subscript type t because it does not support
// subscripting" (transformContainerSubscripts) of a subscripted n of a type without
// subscripting — json (jsonb has it), numbers, text, boolean; nil for any other (an array,
// jsonb, an expression the binder does not bind: refused by name by the caller).
func (bd *binder) notSubscriptable(n *pg.Node, sc *scope) error {
	v, err := bd.bindExpr(n, sc)
	switch {
	case err != nil, v.jsonb || v.untyped() || isIntervalVal(v):
		return nil
	case v.json:
	default:
		switch familyOf(v.typ()) {
		case famInt, famFloat, famNumeric, famString, famBool:
		default:
			return nil
		}
	}
	return refused(InvalidArgument, "42804", "cannot subscript type %s because it does not support subscripting", jsonTypeName(v))
}

// indirection binds n[k] where n is regexp_match(…) and k an integer constant; other array
// subscripts are refused by name.
func (bd *binder) indirection(ind *pg.A_Indirection, sc *scope) (bval, error) {
	fc := ind.GetArg().GetFuncCall()
	if len(ind.GetIndirection()) > 0 && (ind.GetIndirection()[0].GetString_() != nil || ind.GetIndirection()[0].GetAStar() != nil) {
		// (f(…)).field, (row).field, (row).*: a field of a composite value.
		return bval{}, unimplemented("field selection from a composite value ((expression).field)")
	}
	if fc == nil || funcName(fc) != "regexp_match" || len(ind.GetIndirection()) != 1 {
		if err := bd.notSubscriptable(ind.GetArg(), sc); err != nil {
			return bval{}, err
		}
		return bval{}, unimplemented("array subscripts")
	}
	ix := ind.GetIndirection()[0].GetAIndices()
	if ix == nil || ix.GetIsSlice() {
		return bval{}, unimplemented("array slices")
	}
	c := ix.GetUidx().GetAConst()
	if c == nil || c.GetIval() == nil {
		return bval{}, unimplementedAre("regexp_match subscripts other than integer constants")
	}
	return bd.regexpMatchElem(fc, int(c.GetIval().GetIval()), sc)
}

// regexpMatchElem binds (regexp_match(s, pattern[, flags]))[k].
func (bd *binder) regexpMatchElem(fc *pg.FuncCall, k int, sc *scope) (bval, error) {
	raw := fc.GetArgs()
	if len(raw) < 2 || len(raw) > 3 || fc.GetAggStar() || fc.GetAggDistinct() || fc.GetOver() != nil || fc.GetAggFilter() != nil {
		return bval{}, errorf(InvalidArgument, "function regexp_match with %d arguments does not exist", len(raw))
	}
	args := make([]bval, len(raw))
	for i, n := range raw {
		v, err := bd.bindExpr(n, sc)
		if err != nil {
			return bval{}, err
		}
		args[i] = v
	}
	var opts pgregex.Options
	if len(args) == 3 {
		var global bool
		var err error
		if opts, err = regexFlagsArg(args[2], "regexp_match", &global); err != nil {
			return bval{}, err
		}
		if global {
			return bval{}, errRegexpMatchGlobal
		}
	}
	opts.Extent = true
	s, err := bd.coerce(args[0], strType(), "argument 1 of regexp_match")
	if err != nil {
		return bval{}, err
	}
	p, err := bd.regexPattern(args[1], "regexp_match", opts)
	if err != nil {
		return bval{}, err
	}
	if pat := p.(*expr.PrimitiveLiteral[string]).Value; pgregex.HasAlternation(pat) && strings.Contains(pat, "(") {
		return bval{}, unimplemented("regexp_match of a pattern with alternatives (|) and subexpressions")
	}
	f, err := bd.fn(URNPostgres, "regexp_match_elem", strType(), types.Enum(opts.Flags()), types.Enum(strconv.Itoa(k)), s, p)
	return typed(f), err
}
