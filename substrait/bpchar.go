package substrait

import (
	"fmt"
	"slices"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
)

// character(n) (PostgreSQL's bpchar with a length; char alone is char(1)): PostgreSQL keeps the
// value blank-padded to n characters, and its bpchar operators ignore the padding: = and <
// (bpchareq, bpcharcmp) compare the values without their trailing spaces, GROUP BY, DISTINCT
// and joins treat 'a' and 'a  ' as one, length counts the characters before the padding, and
// the cast to text or varchar (rtrim1), hence ||, the text functions and a text operand of
// a comparison, drops it. What sees the padding is the value's output (its text, the column
// sent), octet_length (bpcharoctetlen), LIKE, ILIKE, SIMILAR TO and the regular expression
// operators (bpcharlike, bpcharregexeq: 'a'::char(3) LIKE 'a' is false), the functions that
// take any type through its output function (concat, concat_ws, format), and a cast to a
// type other than text through the value's text (I/O conversion; bytea reads the spaces).
//
// flightsrv holds such a value as text without its trailing spaces (bval.bpchar and
// col.bpchar carry n), so that every comparison, grouping, sort and text function answers
// as PostgreSQL's does, and pads it to n characters (rpad) where the padding is read and in
// the result's columns (padResult). An untyped constant beside a character(n) value is
// PostgreSQL's unknown literal typed bpchar: its trailing spaces are dropped too
// ('a'::char(3) = 'a  ' holds); a text value beside one is text (bpchar's cast to text), so
// 'a'::char(3) = 'a '::text is false, as in PostgreSQL. Values of one kind with different
// lengths, or of a length and an untyped constant, in one CASE, COALESCE or set operation are
// PostgreSQL's bpchar without a length, whose values keep their own padding; they are refused
// by name (bpcharCommon).

// bpcharNoLength checks v for a cast to bpchar without a length, whose value is v's text with
// its trailing spaces kept (and insignificant): flightsrv holds it as text marked bpchar
// (bval.bpchar -1), which is PostgreSQL's value only when the text has none. That holds of a
// quoted constant without trailing spaces and of the text of a number, boolean, date, time,
// interval, bytea or jsonb; a text or json value, a parameter or a constant ending in a space
// are refused by name. A character(n) value stays itself (its padding is its own).
func bpcharNoLength(v bval) error {
	switch {
	case v.bpchar != 0, v.null && v.untyped():
		return nil
	case v.str != nil && !strings.HasSuffix(*v.str, " "):
		return nil
	case v.untyped(), v.json, !v.bytea && !v.jsonb && (familyOf(v.typ()) == famString || familyOf(v.typ()) == famBinary):
		return errBpcharNoLength
	}
	return nil
}

var errBpcharNoLength = unimplementedAre("casts to bpchar without a length of text, json, parameters or constants ending in a space (their values keep their own trailing spaces)")

// bpcharValue is v, text, cast to character(n) explicitly (PostgreSQL's bpchar(bpchar,
// integer, boolean) with isExplicit true): its first n characters (multibyte-aware, as
// bpchar counts them), without trailing spaces; NULL stays NULL. A constant folds. The value
// carries its type modifier "character(n)" (bval.typmod, as format_type names it).
func (bd *binder) bpcharValue(v bval, n int32) (bval, error) {
	typmod := fmt.Sprintf("character(%d)", n)
	if lit, ok := v.e.(*expr.PrimitiveLiteral[string]); ok {
		r := []rune(lit.Value)
		s := strings.TrimRight(string(r[:min(len(r), int(n))]), " ")
		return bval{e: expr.NewPrimitiveLiteral(s, false), bpchar: n, typmod: typmod}, nil
	}
	e, err := bd.defaultType(v)
	if err != nil {
		return bval{}, err
	}
	l, err := bd.fn(URNPostgres, "left", strType(), e, expr.NewPrimitiveLiteral(int64(n), false))
	if err != nil {
		return bval{}, err
	}
	f, err := bd.fn(URNPostgres, "rtrim", strType(), l, expr.NewPrimitiveLiteral(" ", false))
	return bval{e: f, bpchar: n, typmod: typmod}, err
}

// padded is v's value as PostgreSQL holds a character(n) value, blank-padded to n characters
// (rpad), untagged; any other value is v itself.
func (bd *binder) padded(v bval) (bval, error) {
	if v.bpchar <= 0 || v.e == nil {
		return v, nil
	}
	if lit, ok := v.e.(*expr.PrimitiveLiteral[string]); ok {
		if pad := int(v.bpchar) - len([]rune(lit.Value)); pad > 0 {
			return typed(expr.NewPrimitiveLiteral(lit.Value+strings.Repeat(" ", pad), false)), nil
		}
		return typed(lit), nil
	}
	f, err := bd.fn(URNPostgres, "rpad", strType(), v.e, expr.NewPrimitiveLiteral(int64(v.bpchar), false))
	return typed(f), err
}

// bpcharBeside is an untyped string constant v met by a character(n) value: PostgreSQL's
// unknown literal read as bpchar, without its trailing spaces. ok is false otherwise.
func bpcharBeside(v, other bval) (expr.Expression, bool) {
	if other.bpchar == 0 || v.str == nil {
		return nil, false
	}
	return expr.NewPrimitiveLiteral(strings.TrimRight(*v.str, " "), false), true
}

// bpcharCommon is the character(n) length of the common type of vs (a CASE's results,
// COALESCE's, GREATEST's and LEAST's arguments, a VALUES column, a set operation's columns),
// 0 when it is not character(n). PostgreSQL's select_common_type keeps the first typed value's
// type unless a later one is preferred and cannot be coerced to it: text can be coerced to
// bpchar, so the type is bpchar when a character(n) value comes first, text (the values
// without their padding) when text does. A bpchar result is character(n) when its values are
// all of one length n (NULLs aside); with values of another length, text values or untyped
// constants it is PostgreSQL's bpchar without a length, whose values keep their own padding
// or trailing spaces: refused by name.
func bpcharCommon(vs []bval) (int32, error) {
	var n int32
	unknown := false
	for _, v := range vs {
		switch {
		case v.untyped():
			unknown = unknown || !v.null
		case n == 0 && (v.bpchar == 0 || familyOf(v.typ()) != famString):
			return 0, nil // the first typed value's type is not bpchar
		case n == 0:
			n = v.bpchar
		case familyOf(v.typ()) != famString:
			// No common type: the caller's commonType refuses it as PostgreSQL does (42804).
		case v.bpchar != n:
			return 0, errBpcharMixed
		}
	}
	if n != 0 && unknown {
		return 0, errBpcharMixed
	}
	return n, nil
}

var errBpcharMixed = refused(Unimplemented, "0A000", "character(n) values of different lengths, or beside text or an untyped constant, in one CASE, COALESCE, GREATEST, LEAST, VALUES column, set operation or join column (PostgreSQL's bpchar without a length, whose values keep their own padding) are not supported; cast them to one char(n) or to text")

// errBpcharWindow refuses a window function answering one of its argument's character(n)
// values (lag, first_value, min over a window…), whose length the window's output does not
// carry.
func errBpcharWindow(name string) error {
	return refused(Unimplemented, "0A000", "the window function %s of character(n) values is not supported; cast the argument to text", name)
}

// padResult is br with its character(n) columns blank-padded to their lengths (rpad), as
// PostgreSQL sends them: the statement's result, whose values leave the binder's stripped
// form here. br itself when it has none.
func (bd *binder) padResult(br *boundRel) (*boundRel, error) {
	if !slices.ContainsFunc(br.sc.cols, func(c col) bool { return c.bpchar > 0 }) {
		return br, nil
	}
	es := make([]expr.Expression, len(br.sc.cols))
	for i, c := range br.sc.cols {
		v, err := bd.padded(bval{e: br.sc.ref(i), bpchar: c.bpchar})
		if err != nil {
			return nil, err
		}
		es[i] = v.e
	}
	out, err := bd.project(br, es, br.names)
	if err != nil {
		return nil, err
	}
	for i, c := range br.sc.cols {
		out.sc.cols[i].hidden = c.hidden
	}
	return out, nil
}
