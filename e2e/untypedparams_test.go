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
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// TestUntypedParametersAsPostgres (trial27): parameters bound as ADBC binds a Python str
// (Arrow utf8, PostgreSQL's unknown) or int (int64, psycopg's int8) answer what PostgreSQL
// answers for the same statement with those parameter types declared at Parse: an untyped
// parameter in substring's FROM is the pattern (substring(text, unknown) is substring(text,
// text)), and a regular expression's or a json cast's parameter is text; to_hex, div and
// generate_series, which PostgreSQL cannot prepare with unknown parameters (42725, or numeric
// for div), resolve with a bound bigint. The client announces itself as ADBC's driver, whose
// refusals at prepare come with the binding (docs/flightsql-clients.md), so a statement
// PostgreSQL prepares only with types is prepared once the binding declares them.
func TestUntypedParametersAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl, err := flightsql.NewClient(e.on.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("ADBC Flight SQL Driver v1.13.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pg := pgUTC(t, ctx, e.url)
	for _, tc := range []struct {
		sql  string
		vals []any // string: Arrow utf8, PostgreSQL unknown (oid 0); int64: bigint (oid 20)
	}{
		{"SELECT substring('abc123' from ?)", []any{"[0-9]+"}},
		{"SELECT substring('abc123', ?)", []any{"b(c)"}},
		{"SELECT substring('abc123' from ?::text)", []any{"c.$"}},
		{"SELECT substring(? from ?)", []any{"flight 1234", "[0-9]{2}"}},
		{"SELECT substring('abc123' from ?)", []any{"x"}},
		{"SELECT substring('abc123' from 2 for ?)", []any{"3"}},
		{"SELECT substring('abc123' from ? for 2)", []any{"3"}},
		{"SELECT 'abc' ~ ?", []any{"^a.c$"}},
		{"SELECT 'abc' !~* ?", []any{"B"}},
		{"SELECT regexp_replace('a1b22c', ?, '#', 'g')", []any{"[0-9]+"}},
		{"SELECT (regexp_match('key=value', ?))[2]", []any{"(\\w+)=(\\w+)"}},
		{"SELECT regexp_count('banana', ?)", []any{"an"}},
		{"SELECT overlay('abcdef' placing ? from 2)", []any{"XY"}},
		{"SELECT position(? in 'abcdef')", []any{"cd"}},
		{"SELECT (?::json)::text", []any{`{"a": [1, 2]}`}},
		{"SELECT CAST(? AS json) ->> 'a'", []any{`{"a": "x"}`}},
		{"SELECT json_build_object('k', ?::json)::text", []any{`[1,2]`}},
		{"SELECT to_hex(?)", []any{int64(255)}},
		{"SELECT to_hex(?)", []any{int64(-1)}},
		{"SELECT div(?, 3)", []any{int64(-7)}},
		{"SELECT div(?, ?)", []any{int64(17), int64(5)}},
		{"SELECT div(?, 2)", []any{"-7.5"}},
		{"SELECT div(?, ?)", []any{"12345678901234567.89", "0.003"}},
		{"SELECT * FROM generate_series(?, ?, ?)", []any{int64(10), int64(1), int64(-4)}},
		{"SELECT generate_series(?, ?)", []any{int64(1), int64(3)}},
		// A Python timedelta: ADBC binds duration[us], psycopg sends interval (trial28).
		{"SELECT ?::text", []any{90 * time.Minute}},
		{"SELECT ?::text", []any{-time.Hour}},
		{"SELECT ?::text", []any{26*time.Hour + 1500*time.Microsecond}},
		{"SELECT (timestamp '2001-04-01 00:00' + ?)::text", []any{26 * time.Hour}},
		{"SELECT (timestamptz '2001-04-01 00:00+00' - ?)::text", []any{36*time.Hour + time.Second}},
		{"SELECT (interval '1 mon' + ?)::text", []any{-(49 * time.Hour)}},
		{"SELECT extract(epoch from ?)::text", []any{-(49*time.Hour + 250*time.Millisecond)}},
	} {
		pgSQL, oids, args, schema := boundArgs(tc.sql, tc.vals)
		if _, err := pg.PgConn().Prepare(ctx, "", pgSQL, oids); err != nil {
			t.Fatalf("PostgreSQL %s: %v", pgSQL, err)
		}
		res := pg.PgConn().ExecPrepared(ctx, "", args, nil, nil).Read()
		if res.Err != nil {
			t.Fatalf("PostgreSQL %s: %v", pgSQL, res.Err)
		}
		var want []string
		for _, row := range res.Rows {
			want = append(want, string(row[0]))
		}
		got, err := executeBound(ctx, cl, tc.sql, schema, tc.vals)
		if err != nil {
			t.Errorf("%s %v: %v, PostgreSQL %q", tc.sql, tc.vals, err, want)
			continue
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s %v: %q, PostgreSQL %q", tc.sql, tc.vals, got, want)
		}
	}
	// The same errors as PostgreSQL's, or a refusal by name where it answers what flightsrv
	// does not implement.
	for _, tc := range []struct {
		sql   string
		vals  []any
		state string // flightsrv's; PostgreSQL's is the same unless pgState says otherwise
		// pgState is PostgreSQL's SQLSTATE, "" for an answer.
		pgState string
	}{
		{"SELECT (?::json)::text", []any{`{bad`}, "22P02", "22P02"},
		{"SELECT substring('abc123' from ?)", []any{"(("}, "2201B", "2201B"},
		{"SELECT ?::bytea::json", []any{`\x41`}, "42846", "42846"},
		// substring(text, unknown, unknown) is the SIMILAR form, refused by name.
		{"SELECT substring('abc123' from ? for ?)", []any{"%#\"[0-9]#\"%", "#"}, "0A000", ""},
		// PostgreSQL's regular expressions flightsrv's engine does not read, refused by name
		// at execution as a constant pattern is at prepare.
		{"SELECT 'abc' ~ ?", []any{`(a)\1`}, "0A000", ""},
	} {
		pgSQL, oids, args, schema := boundArgs(tc.sql, tc.vals)
		var pgErr *pgconn.PgError
		_, err := pg.PgConn().Prepare(ctx, "", pgSQL, oids)
		if err == nil {
			err = pg.PgConn().ExecPrepared(ctx, "", args, nil, nil).Read().Err
		}
		switch {
		case tc.pgState == "" && err != nil:
			t.Fatalf("PostgreSQL %s: %v, want an answer", pgSQL, err)
		case tc.pgState != "" && (!errors.As(err, &pgErr) || pgErr.Code != tc.pgState):
			t.Fatalf("PostgreSQL %s: %v, want %s", pgSQL, err, tc.pgState)
		}
		_, err = executeBound(ctx, cl, tc.sql, schema, tc.vals)
		if statusSQLState(err) != tc.state || status.Code(err) == codes.Internal {
			t.Errorf("%s %v: %v (SQLSTATE %q), want %s", tc.sql, tc.vals, err, statusSQLState(err), tc.state)
		}
	}
}

// boundArgs is sql with its `?` numbered for PostgreSQL and vals (string, int64 or
// time.Duration) as PostgreSQL's parameter types (unknown, bigint, interval), text arguments
// (a duration's as psycopg sends a timedelta: whole days, then the day's seconds) and Arrow
// schema (utf8, int64, duration[us]: ADBC's binding of a timedelta).
func boundArgs(sql string, vals []any) (pgSQL string, oids []uint32, args [][]byte, schema *arrow.Schema) {
	pgSQL = sql
	oids = make([]uint32, len(vals))
	args = make([][]byte, len(vals))
	fields := make([]arrow.Field, len(vals))
	for i, v := range vals {
		pgSQL = strings.Replace(pgSQL, "?", fmt.Sprintf("$%d", i+1), 1)
		args[i] = []byte(fmt.Sprint(v))
		fields[i] = arrow.Field{Name: fmt.Sprintf("$%d", i+1), Type: arrow.BinaryTypes.String, Nullable: true}
		switch x := v.(type) {
		case int64:
			oids[i], fields[i].Type = 20, arrow.PrimitiveTypes.Int64
		case time.Duration:
			oids[i], fields[i].Type = 1186, arrow.FixedWidthTypes.Duration_us
			us := x.Microseconds()
			days := us / 86_400_000_000
			if us%86_400_000_000 < 0 {
				days--
			}
			rest := us - days*86_400_000_000
			args[i] = []byte(fmt.Sprintf("%d days %d.%06d seconds", days, rest/1_000_000, rest%1_000_000))
		}
	}
	return pgSQL, oids, args, arrow.NewSchema(fields, nil)
}

// executeBound prepares sql, binds one row of vals (string or int64, schema's types) and
// returns the text of the first column of every row of its result (boundText's, a decimal's
// as numeric_out writes it).
func executeBound(ctx context.Context, cl *flightsql.Client, sql string, schema *arrow.Schema, vals []any) ([]string, error) {
	stmt, err := cl.Prepare(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer stmt.Close(ctx)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, v := range vals {
		switch x := v.(type) {
		case string:
			b.Field(i).(*array.StringBuilder).Append(x)
		case int64:
			b.Field(i).(*array.Int64Builder).Append(x)
		case time.Duration:
			b.Field(i).(*array.DurationBuilder).Append(arrow.Duration(x.Microseconds()))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	stmt.SetParameters(rec)
	info, err := stmt.Execute(ctx)
	if err != nil {
		return nil, err
	}
	res, err := fetch(ctx, cl, info)
	if err != nil {
		return nil, err
	}
	defer res.release()
	var out []string
	for _, r := range res.recs {
		for i := range int(r.NumRows()) {
			one := r.NewSlice(int64(i), int64(i)+1)
			col := one.Column(0)
			switch {
			case col.IsNull(0):
				out = append(out, "")
			case col.DataType().ID() == arrow.DECIMAL128:
				out = append(out, col.(*array.Decimal128).Value(0).ToString(col.DataType().(*arrow.Decimal128Type).Scale))
			case col.DataType().ID() == arrow.BINARY:
				out = append(out, string(col.(*array.Binary).Value(0)))
			default:
				out = append(out, boundText(col))
			}
			one.Release()
		}
	}
	return out, nil
}
