package substrait

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// likeEscapeCall binds like_escape(pattern, esc) of two constants or parameters, or text
// expressions of them (`'%' || ? || '%'`, SQLAlchemy's contains(…, autoescape=True); NULL if
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
			v, stand, err := bd.constantText(a)
			if err != nil {
				return bval{}, err
			}
			switch {
			case stand != nil:
				standIn = stand
			case v == nil:
				return typed(expr.NewNullLiteral(strType().WithNullability(nullableN))), nil
			default:
				vals[i] = *v
			}
			continue
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

// constantText evaluates a, a text expression of constants and parameters (`'%' || ? || '%'`),
// as its value (nil for NULL); at prepare time, when it holds a parameter not bound yet, it
// returns instead a stand-in of type text standing for that parameter. An expression that
// reads a column, or is not text, is refused by name as like_escape's argument.
func (bd *binder) constantText(a bval) (v *string, standIn expr.Expression, err error) {
	return bd.constantTextOr(a, unimplemented("LIKE … ESCAPE (like_escape) with a pattern or escape character that is neither a constant nor a parameter"))
}

// constantTextOr is constantText refusing any other expression with refuse.
func (bd *binder) constantTextOr(a bval, refuse error) (v *string, standIn expr.Expression, err error) {
	if a.untyped() || familyOf(a.typ()) != famString || !isConstant(a.e) || holdsDeferred(a.e) {
		return nil, nil, refuse
	}
	if bd.ps.vals == nil {
		for e, num := range bd.ps.placeholders {
			if bd.holdsExpr(a.e, e) {
				stand := expr.NewNullLiteral(strType().WithNullability(nullableN))
				bd.ps.placeholders[stand] = num
				return nil, stand, nil
			}
		}
	}
	x, null, ok, err := oneValue[string, *array.String](bd, a.e)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok:
		return nil, nil, refuse
	case null:
		return nil, nil, nil
	}
	return &x, nil, nil
}

// oneValue evaluates e, an expression of constants and bound parameters, to its one value, of
// Go type T as an Arrow array of type A holds it: null for NULL; ok false when e is not such a
// constant (it reads a column, or evaluates to another type). Its data exceptions are err.
func oneValue[T expr.PrimitiveLiteralValue, A interface {
	arrow.Array
	Value(int) T
}](bd *binder, e expr.Expression) (v T, null, ok bool, err error) {
	switch l := e.(type) {
	case *expr.PrimitiveLiteral[T]:
		return l.Value, false, true, nil
	case *expr.NullLiteral:
		return v, true, true, nil
	}
	arr, isConst, err := bd.evalConstantErr(e)
	if err != nil || !isConst {
		return v, false, false, err
	}
	defer arr.Release()
	a, isA := arr.(A)
	switch {
	case !isA || a.Len() != 1:
		return v, false, false, nil
	case a.IsNull(0):
		return v, true, true, nil
	}
	return a.Value(0), false, true, nil
}

// holdsExpr reports whether x occurs in e (by identity).
func (bd *binder) holdsExpr(e, x expr.Expression) bool {
	found := false
	var visit expr.VisitFunc
	visit = func(y expr.Expression) expr.Expression {
		if y == x {
			found = true
			return y
		}
		return y.Visit(visit)
	}
	visit(e)
	return found
}
