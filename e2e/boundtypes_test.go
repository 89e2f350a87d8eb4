package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestParameterTypesFromBindingAsPostgres: a prepared statement whose parameters nothing in
// the statement types (SELECT ?, SELECT ?, ? || 'x') is prepared, and typed at binding by the
// Arrow types of the parameters the client binds, as PostgreSQL types them from the parameter
// types declared at Parse (pgconn's Prepare with parameter OIDs here): the same column names
// (?column?), types and values. Executed without a binding it is PostgreSQL's 42P18.
func TestParameterTypesFromBindingAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	day := time.Date(2001, 2, 3, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		sql   string
		oids  []uint32 // PostgreSQL's: date 1082, bigint 20, text 25, timestamptz 1184, boolean 16, unknown 0
		arrow []arrow.DataType
		vals  []any
	}{
		{"SELECT ?", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ?, ? AS b", []uint32{20, 25}, []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}, []any{int64(41), "x"}},
		{"SELECT ? || 'y' AS s", []uint32{25}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"x"}},
		{"SELECT ? AS t", []uint32{1184}, []arrow.DataType{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}, []any{arrow.Timestamp(day.UnixMicro())}},
		// A declared type is the parameter's, whatever the statement would infer.
		{"SELECT ? - 1", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ? + 1", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ? || 'x'", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ? = timestamp '2001-02-03'", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ? - 1", []uint32{20}, []arrow.DataType{arrow.PrimitiveTypes.Int64}, []any{int64(-9223372036854775807)}},
		{"SELECT coalesce(?, 7)", []uint32{20}, []arrow.DataType{arrow.PrimitiveTypes.Int64}, []any{int64(5000000000)}},
		{"SELECT CASE WHEN ? THEN 1 ELSE 2 END", []uint32{16}, []arrow.DataType{arrow.FixedWidthTypes.Boolean}, []any{false}},
		// A bound string is an untyped literal (psycopg's str): the statement types it.
		{"SELECT ? > 5", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"7"}},
		{"SELECT ? - 1", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"7"}},
		// date_trunc's unit as a parameter (trial24's D5), read once per execution.
		{"SELECT date_trunc(?, timestamptz '2001-02-03 04:05:06+00') AS t", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"month"}},
		{"SELECT date_trunc(?, timestamp '2001-02-03 04:05:06') AS t", []uint32{25}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"Decade"}},
		// Interval parameters (trial24's D5): text read by interval_in, or month_day_nano.
		{"SELECT (? + interval '3 hours')::text AS t", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"1 day 2 hours"}},
		{"SELECT (?::interval)::text AS t", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"-1 mon 2 days 00:00:03.5"}},
		{"SELECT timestamptz '2001-02-03 04:05:06+00' + ?::interval AS t", []uint32{1186}, []arrow.DataType{arrow.FixedWidthTypes.MonthDayNanoInterval},
			[]any{arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3_000_000_000}}},
		{"SELECT (? - interval '1 day')::text AS t", []uint32{1186}, []arrow.DataType{arrow.FixedWidthTypes.MonthDayNanoInterval},
			[]any{arrow.MonthDayNanoInterval{Months: -1, Days: 40, Nanoseconds: 1_500_000}}},
		{"SELECT date_bin(?::interval, timestamp '2001-02-03 04:05:06', timestamp '2001-01-01') AS t", []uint32{0}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"15 minutes"}},
		{"SELECT date_bin(?, timestamptz '2001-02-03 04:05:06+00', timestamptz '2001-01-01 00:00+00') AS t", []uint32{1186}, []arrow.DataType{arrow.FixedWidthTypes.MonthDayNanoInterval},
			[]any{arrow.MonthDayNanoInterval{Days: 1, Nanoseconds: 7_200_000_000_000}}},
	} {
		pgSQL := tc.sql
		for i := range tc.oids {
			pgSQL = strings.Replace(pgSQL, "?", fmt.Sprintf("$%d", i+1), 1)
		}
		desc, err := pg.PgConn().Prepare(ctx, "", pgSQL, tc.oids)
		if err != nil {
			t.Fatalf("PostgreSQL %s: %v", pgSQL, err)
		}
		args := make([][]byte, len(tc.vals))
		fields := make([]arrow.Field, len(tc.arrow))
		for i, typ := range tc.arrow {
			fields[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: typ, Nullable: true}
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
		for i, v := range tc.vals {
			switch x := v.(type) {
			case arrow.Date32:
				b.Field(i).(*array.Date32Builder).Append(x)
				args[i] = []byte(day.Format("2006-01-02"))
			case int64:
				b.Field(i).(*array.Int64Builder).Append(x)
				args[i] = []byte(fmt.Sprint(x))
			case bool:
				b.Field(i).(*array.BooleanBuilder).Append(x)
				args[i] = []byte(fmt.Sprint(x))
			case string:
				b.Field(i).(*array.StringBuilder).Append(x)
				args[i] = []byte(x)
			case arrow.MonthDayNanoInterval:
				b.Field(i).(*array.MonthDayNanoIntervalBuilder).Append(x)
				args[i] = []byte(fmt.Sprintf("%d months %d days %d microseconds", x.Months, x.Days, x.Nanoseconds/1000))
			case arrow.Timestamp:
				b.Field(i).(*array.TimestampBuilder).Append(x)
				args[i] = []byte(day.Format(time.RFC3339))
			}
		}
		rec := b.NewRecordBatch()
		b.Release()
		res := pg.PgConn().ExecPrepared(ctx, "", args, nil, nil).Read()
		if res.Err != nil || len(res.Rows) != 1 {
			t.Fatalf("PostgreSQL %s: %v", pgSQL, res.Err)
		}

		stmt, err := cl.Prepare(ctx, tc.sql)
		if err != nil {
			t.Fatalf("%s: prepare: %v", tc.sql, err)
		}
		stmt.SetParameters(rec)
		info, err := stmt.Execute(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		got, err := fetch(ctx, cl, info)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if len(got.recs) != 1 || got.recs[0].NumRows() != 1 || len(desc.Fields) != int(got.recs[0].NumCols()) {
			t.Fatalf("%s: %d batches, want one row of %d columns", tc.sql, len(got.recs), len(desc.Fields))
		}
		for i, f := range desc.Fields {
			if name := got.infoSchema.Field(i).Name; name != f.Name {
				t.Errorf("%s: column %d named %q, PostgreSQL %q", tc.sql, i, name, f.Name)
			}
			if f.DataTypeOID != pgTypeOID(got.recs[0].Column(i).DataType()) {
				t.Errorf("%s: column %d is %s, PostgreSQL's type oid %d", tc.sql, i, got.recs[0].Column(i).DataType(), f.DataTypeOID)
			}
			if v, want := boundText(got.recs[0].Column(i)), string(res.Rows[0][i]); v != want {
				t.Errorf("%s: column %d = %q (%s), PostgreSQL %q (type oid %d)", tc.sql, i, v, got.recs[0].Column(i).DataType(), want, f.DataTypeOID)
			}
		}
		// The updated handle fetched by DoGet without GetFlightInfo answers the same.
		cmd, err := anypb.New(&pb.CommandPreparedStatementQuery{PreparedStatementHandle: stmt.Handle()})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := proto.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if direct, err := fetch(ctx, cl, &flight.FlightInfo{Schema: info.Schema, Endpoint: []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: raw}}}}); err != nil ||
			len(direct.recs) != 1 || boundText(direct.recs[0].Column(0)) != string(res.Rows[0][0]) {
			t.Errorf("%s: DoGet of the prepared handle: %v", tc.sql, err)
		} else {
			direct.release()
		}
		got.release()
		rec.Release()
		stmt.Close(ctx)
	}
	// A declared type PostgreSQL has no operator or rule for is its refusal, at binding.
	for _, tc := range []struct {
		sql   string
		oid   uint32
		typ   arrow.DataType
		state string
	}{
		{"SELECT ? > 5", 16, arrow.FixedWidthTypes.Boolean, "42883"},
		{"SELECT ? - 1", 1184, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, "42883"},
		{"SELECT ? - 1", 1114, &arrow.TimestampType{Unit: arrow.Microsecond}, "42883"},
		{"SELECT CASE WHEN ? THEN 1 END", 20, arrow.PrimitiveTypes.Int64, "42804"},
		{"SELECT 1 WHERE ?", 1082, arrow.FixedWidthTypes.Date32, "42804"},
	} {
		pgSQL := strings.Replace(tc.sql, "?", "$1", 1)
		_, err := pg.PgConn().Prepare(ctx, "", pgSQL, []uint32{tc.oid})
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != tc.state {
			t.Fatalf("PostgreSQL %s (oid %d): %v, want %s", pgSQL, tc.oid, err, tc.state)
		}
		stmt, err := cl.Prepare(ctx, tc.sql)
		if err != nil {
			t.Fatalf("%s: prepare: %v", tc.sql, err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "$1", Type: tc.typ, Nullable: true}}, nil))
		b.Field(0).AppendNull()
		rec := b.NewRecordBatch()
		b.Release()
		stmt.SetParameters(rec)
		rec.Release()
		_, err = stmt.Execute(ctx)
		if status.Code(err) != codes.InvalidArgument || statusSQLState(err) != tc.state {
			t.Errorf("%s bound as %s: %v (SQLSTATE %q), PostgreSQL %s %q", tc.sql, tc.typ, err, statusSQLState(err), pgErr.Code, pgErr.Message)
		}
		stmt.Close(ctx)
	}
	// Nothing bound: PostgreSQL's 42P18.
	stmt, err := cl.Prepare(ctx, "SELECT ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	if _, err := stmt.Execute(ctx); status.Code(err) != codes.InvalidArgument || statusSQLState(err) != "42P18" {
		t.Errorf("SELECT ? unbound: %v (SQLSTATE %q), want 42P18", err, statusSQLState(err))
	}
}

// pgTypeOID is the PostgreSQL type oid of the answers of TestParameterTypesFromBindingAsPostgres
// of Arrow type t (0 for another type).
func pgTypeOID(t arrow.DataType) uint32 {
	switch t.ID() {
	case arrow.DATE32:
		return 1082
	case arrow.INT64:
		return 20
	case arrow.INT32:
		return 23
	case arrow.STRING:
		return 25
	case arrow.BOOL:
		return 16
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone == "" {
			return 1114
		}
		return 1184
	}
	return 0
}

// boundText writes row 0 of col as PostgreSQL's text output of its type writes it (date,
// bigint, text, timestamp with time zone in UTC).
func boundText(col arrow.Array) string {
	switch a := col.(type) {
	case *array.Date32:
		return a.Value(0).ToTime().Format("2006-01-02")
	case *array.Int64:
		return fmt.Sprint(a.Value(0))
	case *array.String:
		return a.Value(0)
	case *array.Timestamp:
		if a.DataType().(*arrow.TimestampType).TimeZone == "" {
			return a.Value(0).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC().Format("2006-01-02 15:04:05")
		}
		return a.Value(0).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC().Format("2006-01-02 15:04:05-07")
	case *array.Int32:
		return fmt.Sprint(a.Value(0))
	case *array.Boolean:
		return map[bool]string{true: "t", false: "f"}[a.Value(0)]
	}
	return col.ValueStr(0)
}

// TestTimeBoundsTypedByBinding: routed time bounds bound as a date, a timestamp without time
// zone, a timestamp with time zone or ISO text (an untyped literal) select the rows PostgreSQL
// selects for `timestamp >= $2 AND timestamp < $3` with those declared types: timestamptz
// compared with a date or a timestamp at UTC midnight/wall time (the session zone is UTC).
func TestTimeBoundsTypedByBinding(t *testing.T) {
	e, cl, ctx, stmt, from, to := preparedCount(t)
	want := int64(len(expected(e.sample, "ORD", from, to)))
	if want == 0 {
		t.Fatal("the sample has no flights in the window")
	}
	for _, typ := range []arrow.DataType{arrow.FixedWidthTypes.Date32, &arrow.TimestampType{Unit: arrow.Microsecond},
		&arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, arrow.BinaryTypes.String} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: typ}, {Name: "c", Type: typ}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.StringBuilder).Append("ORD")
		for i, v := range []time.Time{from, to} {
			switch fb := b.Field(i + 1).(type) {
			case *array.Date32Builder:
				fb.Append(arrow.Date32FromTime(v))
			case *array.TimestampBuilder:
				x, _ := arrow.TimestampFromTime(v, typ.(*arrow.TimestampType).Unit)
				fb.Append(x)
			case *array.StringBuilder:
				fb.Append(v.Format("2006-01-02"))
			}
		}
		res := executeWith(t, ctx, cl, stmt, b)
		if got := scalarCount(t, res); got != want {
			t.Errorf("bounds bound as %s: count %d, want %d", typ, got, want)
		}
		res.release()
	}
}
