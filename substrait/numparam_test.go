package substrait

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// TestParameterDeclarations: the declared Arrow types of parameters PostgreSQL types numeric
// (decimal128(38, 16); a cast to numeric(p,s) decimal128(p, s)) and of parameters compared with
// a smallint or integer (float64, so that a client converting its value into the declared type
// keeps a fraction), while a parameter compared with a bigint or whose integer type flows into a
// result stays int64.
func TestParameterDeclarations(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const w = " FROM messages" + routedWhere
	num, i64, f64 := &arrow.Decimal128Type{Precision: 38, Scale: 16}, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	for _, c := range []struct {
		sql  string
		want []arrow.DataType
	}{
		{"SELECT ?::numeric", []arrow.DataType{num}},
		{"SELECT ?::numeric(10,2)", []arrow.DataType{&arrow.Decimal128Type{Precision: 10, Scale: 2}}},
		{"SELECT round(?::numeric, 2), round(?, 1)", []arrow.DataType{num, num}},
		{"SELECT count(*)" + w + " AND (value->>'n')::numeric > ?", []arrow.DataType{num}},
		{"SELECT round(avg((value->>'n')::int) * ?, 2)" + w, []arrow.DataType{num}},
		{"SELECT sum((value->>'n')::numeric(10,2) * ?)" + w, []arrow.DataType{num}},
		{"SELECT round(?::numeric / 3, 2), ?::numeric / 3", []arrow.DataType{num, num}},
		{"SELECT count(*)" + w + " AND (value->>'n')::int >= ?", []arrow.DataType{f64}},
		{"SELECT count(*)" + w + " AND (value->>'n')::smallint BETWEEN ? AND ?", []arrow.DataType{f64, f64}},
		{"SELECT count(*)" + w + " AND (value->>'n')::int IN (?, ?)", []arrow.DataType{f64, f64}},
		{"SELECT count(*)" + w + " AND (value->>'n')::bigint = ?", []arrow.DataType{i64}},
		{"SELECT count(*)" + w + " AND (value->>'n')::int = ? + 1", []arrow.DataType{i64}},
		{"SELECT count(*)" + w + " AND (value->>'n')::int > $1 AND (value->>'m')::int < $1 + 1", []arrow.DataType{i64}},
		{"SELECT ? + 1", []arrow.DataType{i64}},
	} {
		checkParamTypes(t, c.sql, cat, c.want)
	}
	// A numeric parameter among a CASE's or COALESCE's values is refused by name: its display
	// scale would be lost to the column's.
	_, err := Prepare("SELECT coalesce(?, 1.5)", cat)
	var e *Error
	if !errors.As(err, &e) || e.SQLState != "0A000" || e.Msg != "a numeric parameter here is not supported: cast it ($1::numeric)" {
		t.Errorf("coalesce(?, 1.5): %v", err)
	}
}

// TestNumericParameterValues: a numeric parameter's value is read as numeric_in reads it, from
// text, a decimal (at its scale), an integer or a double (float8_numeric's 15 significant
// digits); what numeric_in refuses is refused with the parameter named.
func TestNumericParameterValues(t *testing.T) {
	t.Parallel()
	dec := func(s string) *apd.Decimal {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{"1.50", "1.50"}, {" -7 ", "-7"}, {"1e3", "1000"}, {dec("2.500"), "2.500"}, {int64(-3), "-3"},
		{0.1, "0.1"}, {2.675, "2.675"}, {1.0 / 3, "0.333333333333333"}, {1e20, "100000000000000000000"},
		{"abc", "22P02 parameter $1: invalid input syntax for type numeric"},
		{"NaN", "0A000 parameter $1: numeric NaN is not supported"},
		{true, "parameter $1 must be numeric, got boolean"},
		{apd.New(1, -2000000000), "22003 parameter $1: a decimal of scale 2000000000 is out of numeric's range"},
	} {
		bd := newBinder(testCatalog(t), &paramState{types: map[int]types.Type{}, vals: []any{c.v}, placeholders: map[expr.Expression]int{}}, BindOptions{})
		d, _, err := bd.numericParamValue(1, 0, 0, false)
		got := ""
		var e *Error
		switch {
		case errors.As(err, &e) && e.SQLState != "":
			got = e.SQLState + " " + e.Msg
		case err != nil:
			got = e.Msg
		default:
			got = d.Text('f')
		}
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.v, got, c.want)
		}
	}
}

// checkParamTypes checks that sql prepares over cat with the declared parameter types want.
func checkParamTypes(t *testing.T, sql string, cat Catalog, want []arrow.DataType) {
	t.Helper()
	st, err := Prepare(sql, cat)
	if err != nil {
		t.Errorf("%s: %v", sql, err)
		return
	}
	ps := st.ParameterSchema()
	if ps.NumFields() != len(want) {
		t.Errorf("%s: parameters %s", sql, ps)
		return
	}
	for i, w := range want {
		if !arrow.TypeEqual(ps.Field(i).Type, w) {
			t.Errorf("%s: $%d is %s, want %s", sql, i+1, ps.Field(i).Type, w)
		}
	}
}
