package substrait

import (
	"strings"
	"unicode/utf8"

	"github.com/substrait-io/substrait-go/v8/expr"
)

// likeEscape is PostgreSQL's like_escape(pattern, esc) (like_match.c's do_like_escape), which
// the grammar calls for s [I]LIKE pattern ESCAPE esc: pattern rewritten for the escape
// character \ that LIKE reads. An empty esc means no escape character (each \ doubled); \
// leaves the pattern as it is; any other single character becomes \ where it escapes, and a \
// it does not escape is doubled. An esc of more than one character is 22025 "invalid escape
// string".
func likeEscape(pattern, esc string) (string, error) {
	switch {
	case esc == "":
		return strings.ReplaceAll(pattern, `\`, `\\`), nil
	case utf8.RuneCountInString(esc) > 1:
		return "", errSimilarEscape
	case esc == `\`:
		return pattern, nil
	}
	e, _ := utf8.DecodeRuneInString(esc)
	var b strings.Builder
	after := false
	for _, r := range pattern {
		switch {
		case r == e && !after:
			b.WriteByte('\\')
			after = true
			continue
		case r == '\\':
			b.WriteByte('\\')
			if !after {
				b.WriteByte('\\')
			}
		default:
			b.WriteRune(r)
		}
		after = false
	}
	return b.String(), nil
}

// likeEscapeCall binds like_escape(pattern, esc) of two constants or parameters (NULL if
// either is NULL, as the function is strict) as the text constant likeEscape makes of their
// values: a parameter's value is known when the statement is bound for an execution (at
// prepare time a stand-in of type text answers); a pattern or escape that is neither is
// refused by name.
func (bd *binder) likeEscapeCall(args []bval) (bval, error) {
	if len(args) != 2 {
		return bval{}, errorf(InvalidArgument, "like_escape takes 2 argument(s)")
	}
	var vals [2]string
	var standIn expr.Expression
	for i, a := range args {
		switch {
		case a.null:
			return typed(expr.NewNullLiteral(strType().WithNullability(nullableN))), nil
		case a.str != nil:
			vals[i] = *a.str
			continue
		case a.param == 0:
			return bval{}, unimplemented("LIKE … ESCAPE (like_escape) with a pattern or escape character that is neither a constant nor a parameter")
		}
		e, err := bd.coerce(a, strType(), "argument of like_escape")
		if err != nil {
			return bval{}, err
		}
		if _, ph := bd.ps.placeholders[e]; ph && bd.ps.vals == nil {
			standIn = e // prepare time: any value
			continue
		}
		switch lit := e.(type) {
		case *expr.PrimitiveLiteral[string]:
			vals[i] = lit.Value
		case *expr.NullLiteral:
			return typed(expr.NewNullLiteral(strType().WithNullability(nullableN))), nil
		default:
			return bval{}, unimplemented("LIKE … ESCAPE (like_escape) with a pattern or escape character that is neither a constant nor a parameter")
		}
	}
	if standIn != nil {
		return typed(standIn), nil
	}
	p, err := likeEscape(vals[0], vals[1])
	if err != nil {
		return bval{}, err
	}
	return typed(expr.NewPrimitiveLiteral(p, false)), nil
}
