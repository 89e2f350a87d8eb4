package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
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
		oids  []uint32 // PostgreSQL's: date 1082, bigint 20, text 25, timestamptz 1184
		arrow []arrow.DataType
		vals  []any
	}{
		{"SELECT ?", []uint32{1082}, []arrow.DataType{arrow.FixedWidthTypes.Date32}, []any{arrow.Date32FromTime(day)}},
		{"SELECT ?, ? AS b", []uint32{20, 25}, []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}, []any{int64(41), "x"}},
		{"SELECT ? || 'y' AS s", []uint32{25}, []arrow.DataType{arrow.BinaryTypes.String}, []any{"x"}},
		{"SELECT ? AS t", []uint32{1184}, []arrow.DataType{&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}, []any{arrow.Timestamp(day.UnixMicro())}},
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
				args[i] = []byte("41")
			case string:
				b.Field(i).(*array.StringBuilder).Append(x)
				args[i] = []byte(x)
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
		return a.Value(0).ToTime(a.DataType().(*arrow.TimestampType).Unit).UTC().Format("2006-01-02 15:04:05-07")
	}
	return col.ValueStr(0)
}
