package substrait

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestCastParameterTypes: the declared types of cast parameters, as PostgreSQL declares them
// (text; timestamp without time zone), a text parameter cast to timestamptz as a routed bound
// at prepare time, and a parameter used both as timestamp and timestamptz refused, as
// PostgreSQL refuses inconsistent parameter types.
func TestCastParameterTypes(t *testing.T) {
	t.Parallel()
	wall := &arrow.TimestampType{Unit: arrow.Millisecond}
	for _, c := range []struct {
		sql  string
		want []arrow.DataType
	}{
		{"SELECT CAST(? AS text)::timestamptz", []arrow.DataType{arrow.BinaryTypes.String}},
		{"SELECT CAST($1 AS timestamp), $1::timestamp", []arrow.DataType{wall}},
		{"SELECT id FROM messages WHERE channel_id = $1 AND timestamp >= CAST($2 AS text)::timestamptz AND timestamp < $3::timestamp ORDER BY id",
			[]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, wall}},
	} {
		checkParamTypes(t, c.sql, testCatalog(t), c.want)
	}
	_, err := Prepare("SELECT CAST($1 AS timestamp), $1::timestamptz", testCatalog(t))
	if code, _ := CodeOf(err); code != InvalidArgument || err.Error() != "substrait: parameter $1 is used both as timestamp without time zone and as timestamp with time zone" {
		t.Errorf("inconsistent types: %v", err)
	}
}

// TestNarrowCastParameters: a parameter cast to smallint, integer or real is declared at the
// widest type of its family (int64, float64), so that no client narrows the value it binds,
// and the server casts it as PostgreSQL casts a bigint or double precision parameter
// ($1::smallint with $1 declared int8): in range, the value of the cast's type; out of it,
// 22003 with PostgreSQL's message (int82 "smallint out of range", int84 "integer out of
// range", float84 "value out of range: overflow" or "underflow").
func TestNarrowCastParameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, c := range []struct {
		sql  string
		decl arrow.DataType
		val  any
		want string // the constant bound, or the refusal
	}{
		{"SELECT ?::smallint", arrow.PrimitiveTypes.Int64, int64(123), "i16?(123)"},
		{"SELECT ?::smallint", arrow.PrimitiveTypes.Int64, int64(32767), "i16?(32767)"},
		{"SELECT ?::smallint", arrow.PrimitiveTypes.Int64, int64(-32768), "i16?(-32768)"},
		{"SELECT ?::smallint", arrow.PrimitiveTypes.Int64, int64(40000), "22003 smallint out of range"},
		{"SELECT ?::smallint", arrow.PrimitiveTypes.Int64, int64(-32769), "22003 smallint out of range"},
		{"SELECT CAST(? AS int2)", arrow.PrimitiveTypes.Int64, int64(70000), "22003 smallint out of range"},
		{"SELECT ?::smallint + 1", arrow.PrimitiveTypes.Int64, int64(40000), "22003 smallint out of range"},
		{"SELECT ?::int", arrow.PrimitiveTypes.Int64, int64(-2147483648), "i32?(-2147483648)"},
		{"SELECT ?::int", arrow.PrimitiveTypes.Int64, int64(3000000000), "22003 integer out of range"},
		{"SELECT CAST(? AS integer)", arrow.PrimitiveTypes.Int64, int64(-2147483649), "22003 integer out of range"},
		{"SELECT ?::bigint", arrow.PrimitiveTypes.Int64, int64(math.MaxInt64), "i64?(9223372036854775807)"},
		{"SELECT ?::real", arrow.PrimitiveTypes.Float64, 0.5, "fp32?(0.5)"},
		{"SELECT ?::real", arrow.PrimitiveTypes.Float64, 1e39, "22003 value out of range: overflow"},
		{"SELECT ?::float4", arrow.PrimitiveTypes.Float64, 1e-50, "22003 value out of range: underflow"},
	} {
		st, err := Prepare(c.sql, cat)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if ps := st.ParameterSchema(); ps.NumFields() != 1 || !arrow.TypeEqual(ps.Field(0).Type, c.decl) {
			t.Errorf("%s: parameters %s, want one %s", c.sql, ps, c.decl)
		}
		b, err := st.BindGeneral(BindOptions{}, c.val)
		got := ""
		var e *Error
		switch {
		case errors.As(err, &e):
			got = e.SQLState + " " + e.Msg
		case err != nil:
			got = err.Error()
		case strings.Contains(c.sql, "+"):
			got = "bound"
		default:
			got = b.Constants[0].String()
		}
		if got != c.want {
			t.Errorf("%s with %v: %s, want %s", c.sql, c.val, got, c.want)
		}
	}
}
