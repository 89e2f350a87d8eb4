package ops

import (
	"errors"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Arrays (lists: array_agg's values, scan/aggregate arrayagg.go) as PostgreSQL's text:
//
//	array_text(list)                  array_out: {a,b,NULL}, an element quoted ("…", with \\ and
//	                                  \" escaped) when it is empty, NULL in any case, or holds
//	                                  a brace, a comma, a quote, a backslash or white space
//	array_to_string(list, sep[, null]) the non-NULL elements' text joined by sep (NULLs as
//	                                  null when given)
//	string_to_array(s, sep[, null])   PostgreSQL's text_to_array: s split at each sep into a
//	                                  list of text ({} for an empty s; each character for a
//	                                  NULL sep; s whole for an empty sep), elements equal to
//	                                  null NULL; NULL for a NULL s (sep and null may be NULL)
//
// The elements are text, integer, bigint, double precision (float8out's text), boolean (t
// and f, as boolout writes them) or interval (FormatInterval: percentile_cont(ARRAY[…]) of
// intervals).

func init() {
	ownFunctions["array_text"] = arrayText
	ownFunctions["array_to_string"] = arrayToString
	ownFunctions["string_to_array"] = stringToArray
}

func stringToArray(n *fnNode) error {
	if err := textArgs(n, 2, 3, 0, 1); err != nil {
		return err
	}
	if len(n.args) == 3 {
		if err := wantText(n, 2); err != nil {
			return err
		}
	}
	n.out = arrow.ListOf(arrow.BinaryTypes.String)
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		sep, _ := asTexts(args[1])
		var null texts
		if len(args) == 3 {
			null, _ = asTexts(args[2])
		}
		b := array.NewListBuilder(mem, arrow.BinaryTypes.String)
		defer b.Release()
		vb := b.ValueBuilder().(*array.StringBuilder)
		for i := range rows {
			if args[0].IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(true)
			str := string(s.ValueBytes(i))
			if str == "" {
				continue
			}
			var parts []string
			switch {
			case args[1].IsNull(i):
				for _, r := range str {
					parts = append(parts, string(r))
				}
			case sep.ValueBytes(i) == nil || len(sep.ValueBytes(i)) == 0:
				parts = []string{str}
			default:
				parts = strings.Split(str, string(sep.ValueBytes(i)))
			}
			for _, p := range parts {
				if null != nil && args[2].IsValid(i) && p == string(null.ValueBytes(i)) {
					vb.AppendNull()
				} else {
					vb.Append(p)
				}
			}
		}
		return b.NewArray(), nil
	}
	return nil
}

// elementText returns a function spelling element i of a list's values as PostgreSQL's
// output function of the element type does.
func elementText(a arrow.Array) (func(i int) string, error) {
	switch v := a.(type) {
	case *array.String:
		return v.Value, nil
	case *array.Int16:
		return func(i int) string { return strconv.FormatInt(int64(v.Value(i)), 10) }, nil
	case *array.Int32:
		return func(i int) string { return strconv.FormatInt(int64(v.Value(i)), 10) }, nil
	case *array.Int64:
		return func(i int) string { return strconv.FormatInt(v.Value(i), 10) }, nil
	case *array.Float64:
		return func(i int) string { return float8Text(v.Value(i)) }, nil
	case *array.Boolean:
		return func(i int) string {
			if v.Value(i) {
				return "t"
			}
			return "f"
		}, nil
	case *array.MonthDayNanoInterval:
		return func(i int) string { return FormatInterval(v.Value(i)) }, nil
	}
	return nil, errors.New("an array of " + a.DataType().String())
}

// listElements returns a list array, its values and the spelling of its values (elementText).
func listElements(a arrow.Array) (*array.List, arrow.Array, func(i int) string, error) {
	l, ok := a.(*array.List)
	if !ok {
		return nil, nil, nil, errors.New("an array argument of " + a.DataType().String())
	}
	spell, err := elementText(l.ListValues())
	return l, l.ListValues(), spell, err
}

// listArg checks that argument 0 of n is a list of an element type elementText spells.
func listArg(n *fnNode) error {
	lt, ok := n.types[0].(*arrow.ListType)
	if !ok {
		return errors.New("argument 1 must be an array")
	}
	switch lt.Elem().ID() {
	case arrow.STRING, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.BOOL, arrow.INTERVAL_MONTH_DAY_NANO:
		return nil
	}
	return errors.New("arrays of " + lt.Elem().String() + " are not supported")
}

// quoteElement is array_out's spelling of one element's text.
func quoteElement(s string) string {
	if s != "" && !strings.EqualFold(s, "NULL") && !strings.ContainsAny(s, "{},\"\\ \t\n\r\v\f") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func arrayText(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if err := listArg(n); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		l, vals, spell, err := listElements(args[0])
		if err != nil {
			return nil, err
		}
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			s, e := l.ValueOffsets(i)
			var b strings.Builder
			b.WriteByte('{')
			for k := s; k < e; k++ {
				if k > s {
					b.WriteByte(',')
				}
				if vals.IsNull(int(k)) {
					b.WriteString("NULL")
				} else {
					b.WriteString(quoteElement(spell(int(k))))
				}
			}
			b.WriteByte('}')
			return b.String(), true, nil
		})
	}
	return nil
}

func arrayToString(n *fnNode) error {
	if err := argCount(n, 2, 3); err != nil {
		return err
	}
	if err := listArg(n); err != nil {
		return err
	}
	idx := []int{1}
	if len(n.args) == 3 {
		idx = append(idx, 2)
	}
	if err := wantText(n, idx...); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		l, vals, spell, err := listElements(args[0])
		if err != nil {
			return nil, err
		}
		sep, _ := asTexts(args[1])
		var null texts
		if len(args) == 3 {
			null, _ = asTexts(args[2])
		}
		// A NULL null string is as none (PostgreSQL skips the NULL elements then): the row
		// is NULL only for a NULL array or separator.
		return mapStrings(mem, rows, args[:2], func(i int) (string, bool, error) {
			s, e := l.ValueOffsets(i)
			var b strings.Builder
			first := true
			for k := s; k < e; k++ {
				var t string
				if vals.IsNull(int(k)) {
					if null == nil || args[2].IsNull(i) {
						continue
					}
					t = string(null.ValueBytes(i))
				} else {
					t = spell(int(k))
				}
				if !first {
					b.Write(sep.ValueBytes(i))
				}
				b.WriteString(t)
				first = false
			}
			return b.String(), true, nil
		})
	}
	return nil
}
