package substrait

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestDeclareParameterTypes: the parameters are declared as the bound Arrow types' PostgreSQL
// types, whatever the statement would infer (`? + 1` with a bound bigint is bigint + integer);
// a bound string is an untyped literal, declared text only where the statement leaves it
// untyped; a bare `$n` in the select list keeps PostgreSQL's name ?column?; a binding that
// cannot type a parameter leaves the 42P18 refusal.
func TestDeclareParameterTypes(t *testing.T) {
	cat := testCatalog(t)
	schema := func(ts ...arrow.DataType) *arrow.Schema {
		fs := make([]arrow.Field, len(ts))
		for i, typ := range ts {
			fs[i] = arrow.Field{Name: "$", Type: typ, Nullable: true}
		}
		return arrow.NewSchema(fs, nil)
	}
	utc := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	for _, tc := range []struct {
		sql   string
		bound *arrow.Schema
		want  string
	}{
		{"SELECT ?", schema(arrow.FixedWidthTypes.Date32), `SELECT $1::date AS "?column?"`},
		{"SELECT $1 AS d, $2", schema(arrow.BinaryTypes.String, utc), `SELECT $1::text AS d, $2::timestamp with time zone AS "?column?"`},
		{"SELECT ? + 1", schema(arrow.PrimitiveTypes.Int64), "SELECT $1::bigint + 1"},
		{"SELECT $1::int + $2", schema(arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64), "SELECT $1::bigint::int + $2::bigint"},
		{"SELECT ? - 1", schema(arrow.FixedWidthTypes.Date32), "SELECT $1::date - 1"},
		{"SELECT ? > 5, ?", schema(arrow.BinaryTypes.String, arrow.BinaryTypes.String), `SELECT $1 > 5, $2::text AS "?column?"`},
		{"SELECT ? + 1", schema(arrow.BinaryTypes.String), "SELECT ? + 1"},
		{"SELECT ? + 1", schema(arrow.Null), "SELECT ? + 1"},
		{"SELECT ?", schema(arrow.Null), `SELECT $1::text AS "?column?"`},
		{"SELECT '?', $1, '$1'", schema(arrow.PrimitiveTypes.Float64), `SELECT '?', $1::double precision AS "?column?", '$1'`},
	} {
		got, err := DeclareParameterTypes(tc.sql, cat, BindOptions{}, tc.bound)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.sql, got, err, tc.want)
			continue
		}
		if _, err := Prepare(got, cat); err != nil {
			t.Errorf("%s: the declared statement does not prepare: %v", got, err)
		}
	}
	for _, bound := range []*arrow.Schema{nil, schema(arrow.ListOf(arrow.PrimitiveTypes.Int64))} {
		var e *Error
		if _, err := DeclareParameterTypes("SELECT ?", cat, BindOptions{}, bound); !errors.As(err, &e) || e.SQLState != "42P18" {
			t.Errorf("SELECT ? bound as %v: %v, want 42P18", bound, err)
		}
	}
}
