package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestParameterRefusals: parameters of a prepared statement sent through arrow-go's Flight SQL
// client with the wrong type, or as partition text that is not UTF-8, are refused with
// INVALID_ARGUMENT and PostgreSQL's type names (never Go's), holding none of the value: the
// bound Arrow types declare the parameters' types, so a comparison PostgreSQL has no operator
// for is its 42883 (text = bytea, as PostgreSQL answers a parameter declared bytea); the same
// statement with valid parameters counts the sample's flights.
func TestParameterRefusals(t *testing.T) {
	e, cl, ctx, stmt, from, to := preparedCount(t)
	tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	build := func(first arrow.DataType, set func(array.Builder), second arrow.DataType, setSecond func(array.Builder)) *array.RecordBuilder {
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: first}, {Name: "b", Type: second}, {Name: "c", Type: tsType}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		set(b.Field(0))
		setSecond(b.Field(1))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(to.UnixMicro()))
		return b
	}
	start := func(b array.Builder) { b.(*array.TimestampBuilder).Append(arrow.Timestamp(from.UnixMicro())) }
	ord := func(b array.Builder) { b.(*array.StringBuilder).Append("ORD") }
	for _, c := range []struct {
		name string
		b    *array.RecordBuilder
		msg  string
	}{
		{"binary partition not UTF-8", build(arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte{'O', 0xff, 0xfe}) }, tsType, start),
			"operator does not exist: text = bytea"},
		{"utf8 partition not UTF-8", build(arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).Append("O\xff\xfe") }, tsType, start),
			"parameter $1 must be valid UTF-8"},
		{"integer partition", build(arrow.PrimitiveTypes.Int64, func(b array.Builder) { b.(*array.Int64Builder).Append(41) }, tsType, start),
			"operator does not exist: text = bigint"},
		{"binary start", build(arrow.BinaryTypes.String, ord, arrow.BinaryTypes.Binary, func(b array.Builder) { b.(*array.BinaryBuilder).Append([]byte("2001-03-01")) }),
			"operator does not exist: timestamp with time zone >= bytea"},
		{"boolean start", build(arrow.BinaryTypes.String, ord, arrow.FixedWidthTypes.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }),
			"operator does not exist: timestamp with time zone >= boolean"},
		{"double start", build(arrow.BinaryTypes.String, ord, arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(41.5) }),
			"operator does not exist: timestamp with time zone >= double precision"},
	} {
		params := c.b.NewRecordBatch()
		c.b.Release()
		stmt.SetParameters(params)
		params.Release()
		info, err := stmt.Execute(ctx)
		if err == nil {
			var res *result
			res, err = fetch(ctx, cl, info)
			if err == nil {
				res.release()
			}
		}
		st, _ := status.FromError(err)
		if st.Code() != codes.InvalidArgument || st.Message() != c.msg {
			t.Errorf("%s: %v %q, want InvalidArgument %q", c.name, st.Code(), st.Message(), c.msg)
		}
		for _, leak := range []string{"\xff", "41", "2001", "uint8", "int64", "time.Time", "float64"} {
			if strings.Contains(st.Message(), leak) {
				t.Errorf("%s: the message holds %q: %q", c.name, leak, st.Message())
			}
		}
	}
	res := executeWith(t, ctx, cl, stmt, build(arrow.BinaryTypes.String, ord, tsType, start))
	defer res.release()
	if got, want := scalarCount(t, res), int64(len(expected(e.sample, "ORD", from, to))); got != want || want == 0 {
		t.Fatalf("count %d, want %d", got, want)
	}
}

// preparedCount starts the servers and prepares, on the pushdown server, the count of one
// origin's flights from $2 to $3 (closed with the test); from and to bound a window of the
// sample holding flights.
func preparedCount(t *testing.T) (e *env, cl *flightsql.Client, ctx context.Context, stmt *flightsql.PreparedStatement, from, to time.Time) {
	e = newEnv(t)
	cl = dial(t, e.on)
	ctx = context.Background()
	stmt, err := cl.Prepare(ctx, "SELECT count(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stmt.Close(ctx) })
	return e, cl, ctx, stmt, ts("2001-03-01T00:00:00Z"), ts("2001-05-01T00:00:00Z")
}
