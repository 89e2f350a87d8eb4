package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// decParam is a numeric parameter bound as Arrow decimal128(prec, scale), as ADBC binds a
// Python Decimal and the JDBC driver a BigDecimal: text is its value, with scale digits after
// the point.
type decParam struct {
	text        string
	prec, scale int32
}

// paramDecl is the declaration PostgreSQL gets for a binding of v, as flightsrv declares the
// statement's parameter from the bound Arrow type (DeclareParameterTypes): bigint, double
// precision, numeric; text declares nothing (an untyped literal).
func paramDecl(n int, v any) string {
	p := "$" + strconv.Itoa(n)
	switch v.(type) {
	case int64:
		return p + "::bigint"
	case float64:
		return p + "::double precision"
	case decParam:
		return p + "::numeric"
	}
	return p
}

// numericDecl is the parameter schema flightsrv declares for a numeric parameter without a
// scale (decimal128(38, 16)).
var numericDecl = &arrow.Decimal128Type{Precision: 38, Scale: 16}

// TestNumericParametersAsPostgres: a parameter PostgreSQL types numeric — cast to numeric or
// numeric(p,s), rounded, beside a numeric in a comparison or a product (trial24's D5: refused
// at Prepare) — is declared decimal128 (decimal128(38, 16), or the cast's (p, s)) and, bound as
// ADBC binds a Decimal (decimal128 of the value's own scale), an int64, a float64 or text,
// answers what PostgreSQL answers for the same statement with the parameter declared numeric,
// bigint, double precision or left untyped: the same text (a decimal or text keeps its display
// scale, '1.50' is 1.50; a double is float8_numeric's 15 significant digits), or PostgreSQL's
// error (numeric field overflow 22003). Over the routed table too, where the comparison filters
// the flights PostgreSQL holds.
func TestNumericParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"
	d := func(text string, prec, scale int32) decParam { return decParam{text, prec, scale} }
	vals := []any{d("1.50", 3, 2), d("-2.345", 10, 3), "1.50", " -0.125 ", "7", int64(3), int64(-40), 0.1, 2.675, 1e15}
	// 36 digits: past what a bare quotient or a product holds in flightsrv's 38 (refused by name).
	big := d("12345678901234567890.0000000000000001", 38, 16)
	exact := vals[:7] // a double beside a numeric is double precision, summed in PostgreSQL's row order
	dec102 := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	for _, c := range []struct {
		sql  string
		decl arrow.DataType
		vals []any
	}{
		{"SELECT (?::numeric)::text AS v", numericDecl, append(vals, big)},
		{"SELECT scale(?::numeric)::text AS v", numericDecl, append(vals, big)},
		{"SELECT (?::numeric(10,2))::text AS v", dec102, append(vals[:2:2], "1.255", "-1.255", 1.005, "99999999.995", d("99999999.995", 11, 3), int64(123456789))},
		{"SELECT round(?::numeric, 2)::text AS v", numericDecl, append(vals, big)},
		{"SELECT round(?, 1)::text AS v", numericDecl, vals},
		{"SELECT (?::numeric / 3)::text AS v", numericDecl, vals},
		{"SELECT round(?::numeric / 7, 3)::text AS v", numericDecl, vals},
		{"SELECT (? * 1.5)::text AS v", numericDecl, vals},
		// NULLIF, one-argument COALESCE and a scalar subquery keep the value's display scale (issue 18, trial28 W4).
		{"SELECT NULLIF(?::numeric, 0)::text AS v", numericDecl, vals},
		{"SELECT COALESCE(?::numeric)::text AS v", numericDecl, vals},
		{"SELECT (SELECT ?::numeric)::text AS v", numericDecl, vals},
		{"SELECT (1.25 - ?)::text AS v", numericDecl, vals},
		{"SELECT sum((value->>'delay')::numeric(10,2) * ?)::text AS v" + w, numericDecl, exact},
		{"SELECT round(avg((value->>'delay')::int) * ?, 2)::text AS v" + w, numericDecl, vals},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::numeric > ?", numericDecl, append(vals, big)},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::numeric(10,2) <= ?", numericDecl, vals},
	} {
		for _, v := range c.vals {
			pgSQL := strings.Replace(c.sql, "?", paramDecl(1, v), 1)
			compareBoundN(ctx, t, pg, clients, c.sql, pgSQL, []arrow.DataType{c.decl}, v)
		}
	}
	// Text that is no number is PostgreSQL's 22P02 (whose message quotes the text; flightsrv's
	// names the parameter instead); NaN and infinities, which decimal128 cannot hold, and a value
	// needing more than 16 digits after the point without a scale to round it to are refused by
	// name.
	for v, want := range map[any]string{
		"abc":                            "InvalidArgument 22P02 parameter $1: invalid input syntax for type numeric",
		"NaN":                            "Unimplemented 0A000 parameter $1: numeric NaN is not supported",
		"1e400":                          "InvalidArgument 22003 parameter $1: numeric value out of range: flightsrv's numeric holds 38 digits",
		d("0.12345678901234567", 17, 17): "Unimplemented 0A000 parameter $1: a numeric parameter that needs more than 16 digits after the point or 22 before it is not supported: cast it to numeric(p,s)",
	} {
		if _, err := pgAnswerN(ctx, pg, "SELECT ($1::numeric)::text", pgArg(v)); v == "abc" && (err == nil || err.Code != "22P02") {
			t.Errorf("PostgreSQL: 'abc'::numeric: %v, want 22P02", err)
		}
		for _, cl := range clients {
			_, err := boundAnswerN(ctx, cl.c, "SELECT (?::numeric)::text AS v", []arrow.DataType{numericDecl}, v)
			st := status.Convert(err)
			if got := fmt.Sprintf("%s %s %s", st.Code(), sqlstateOf(err), st.Message()); got != want {
				t.Errorf("%s: ?::numeric with %v: %s, want %s", cl.name, v, got, want)
			}
		}
	}
}

// TestIntegerComparedParametersAsPostgres: a parameter compared with an integer or smallint
// expression (`(value->>'delay')::int >= ?`, BETWEEN, IN) is declared float64 (trial24's D2:
// declared int64, the JDBC driver truncated setDouble(12.5) to 12 and the count was 10 rows
// where PostgreSQL's is 9), and bound as a float64 compares as PostgreSQL compares an integer
// with a double precision value, as an int64 as with a bigint; a parameter compared with a
// bigint, or whose type flows into a result (`? + 1`, LIMIT), stays int64.
func TestIntegerComparedParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"
	f64, i64 := arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Int64
	floats := [][]any{{12.5}, {12.0}, {-2.9}, {-3.0}, {int64(12)}, {int64(3000000000)}, {1e300}, {-0.5}}
	pairs := [][]any{{-2.5, 12.5}, {-3.0, 12.0}, {int64(-3), int64(12)}, {int64(-3), 12.25}, {12.5, -3.0}, {-1e10, 1e10}}
	for _, c := range []struct {
		sql  string
		decl []arrow.DataType
		vals [][]any
	}{
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int >= ?", []arrow.DataType{f64}, floats},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int = ?", []arrow.DataType{f64}, floats},
		{"SELECT count(*)::text AS v" + w + " AND ? < (value->>'delay')::smallint", []arrow.DataType{f64}, floats},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int BETWEEN ? AND ?", []arrow.DataType{f64, f64}, pairs},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int NOT BETWEEN ? AND ?", []arrow.DataType{f64, f64}, pairs},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int IN (?, ?)", []arrow.DataType{f64, f64}, append(pairs, []any{-2.0, 0.0}, []any{5.5, int64(0)})},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::bigint >= ?", []arrow.DataType{i64}, [][]any{{int64(12)}, {12.5}}},
		{"SELECT count(*)::text AS v" + w + " AND (value->>'delay')::int >= ? + 1", []arrow.DataType{i64}, [][]any{{int64(11)}}},
		{"SELECT (? + 1)::text AS v", []arrow.DataType{i64}, [][]any{{int64(11)}, {2.5}}},
		{"SELECT string_agg(id, ',' ORDER BY id)::text AS v FROM (SELECT id" + w + " AND (value->>'delay')::int > ? ORDER BY id LIMIT ?) s", []arrow.DataType{f64, i64}, [][]any{{10.5, int64(3)}, {int64(10), int64(2)}}},
	} {
		for _, vs := range c.vals {
			pgSQL := c.sql
			for i, v := range vs {
				pgSQL = strings.Replace(pgSQL, "?", paramDecl(i+1, v), 1)
			}
			compareBoundN(ctx, t, pg, clients, c.sql, pgSQL, c.decl, vs...)
		}
	}
}

// compareBoundN is compareBound of a statement with parameters vs, each bound in the Arrow type
// of its Go value (boundAnswerN), whose declared parameter schema must be decl; pgSQL is the
// statement PostgreSQL runs with vs (pgArg).
func compareBoundN(ctx context.Context, t *testing.T, pg *pgx.Conn, clients []namedClient, q, pgSQL string, decl []arrow.DataType, vs ...any) {
	t.Helper()
	args := make([]any, len(vs))
	for i, v := range vs {
		args[i] = pgArg(v)
	}
	want, pgErr := pgAnswerN(ctx, pg, pgSQL, args...)
	for _, cl := range clients {
		name := fmt.Sprintf("%s: %s with %v", cl.name, q, vs)
		got, err := boundAnswerN(ctx, cl.c, q, decl, vs...)
		switch {
		case pgErr != nil:
			st := status.Convert(err)
			if err == nil || st.Code() != codes.InvalidArgument || sqlstateOf(err) != pgErr.Code || st.Message() != pgErr.Message {
				t.Errorf("%s: %v %v, want INVALID_ARGUMENT %s %q as PostgreSQL", name, got, err, pgErr.Code, pgErr.Message)
			}
		case err != nil:
			t.Errorf("%s: %v, want %v as PostgreSQL", name, err, want)
		case got != want:
			t.Errorf("%s: %q, want PostgreSQL's %q", name, got, want)
		}
	}
}

// pgArg is v as pgx sends it: a decimal as its text (numeric_in reads it with its scale).
func pgArg(v any) any {
	if d, ok := v.(decParam); ok {
		return d.text
	}
	return v
}

// pgAnswerN is pgAnswer with the arguments args.
func pgAnswerN(ctx context.Context, pg *pgx.Conn, q string, args ...any) (string, *pgconn.PgError) {
	var s string
	err := pg.QueryRow(ctx, q, args...).Scan(&s)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return "", pgErr
	}
	if err != nil {
		return "", &pgconn.PgError{Code: "?", Message: err.Error()}
	}
	return s, nil
}

// boundAnswerN prepares q through cl, checks its declared parameter schema against decl (nil:
// not checked), binds vs in one row, each in the Arrow type of its Go value (int64, float64,
// int8, float32, utf8 for a string, binary for []byte, decimal128(prec, scale) for a decParam;
// nil is NULL of the declared type), and returns the one
// value of the answer's first column as text (arrow's ValueStr), after checking that every batch
// has the schema the FlightInfo declared.
func boundAnswerN(ctx context.Context, cl *flightsql.Client, q string, decl []arrow.DataType, vs ...any) (string, error) {
	stmt, err := cl.Prepare(ctx, q)
	if err != nil {
		return "", err
	}
	defer stmt.Close(ctx)
	ps := stmt.ParameterSchema()
	if decl != nil && (ps.NumFields() != len(decl) || len(vs) != len(decl)) {
		return "", fmt.Errorf("parameter schema %s, want %v", ps, decl)
	}
	for i, dt := range decl {
		if !arrow.TypeEqual(ps.Field(i).Type, dt) {
			return "", fmt.Errorf("parameter schema %s, want %v", ps, decl)
		}
	}
	fields := make([]arrow.Field, len(vs))
	for i, v := range vs {
		var typ arrow.DataType = arrow.Null
		if decl != nil {
			typ = decl[i]
		}
		switch x := v.(type) {
		case int64:
			typ = arrow.PrimitiveTypes.Int64
		case float64:
			typ = arrow.PrimitiveTypes.Float64
		case int8:
			typ = arrow.PrimitiveTypes.Int8
		case int32:
			typ = arrow.PrimitiveTypes.Int32
		case float32:
			typ = arrow.PrimitiveTypes.Float32
		case []byte:
			typ = arrow.BinaryTypes.Binary
		case string:
			typ = arrow.BinaryTypes.String
		case decParam:
			typ = &arrow.Decimal128Type{Precision: x.prec, Scale: x.scale}
		}
		fields[i] = arrow.Field{Name: "p" + strconv.Itoa(i), Type: typ}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, v := range vs {
		switch x := v.(type) {
		case nil:
			b.Field(i).AppendNull()
		case int64:
			b.Field(i).(*array.Int64Builder).Append(x)
		case float64:
			b.Field(i).(*array.Float64Builder).Append(x)
		case int8:
			b.Field(i).(*array.Int8Builder).Append(x)
		case int32:
			b.Field(i).(*array.Int32Builder).Append(x)
		case float32:
			b.Field(i).(*array.Float32Builder).Append(x)
		case []byte:
			b.Field(i).(*array.BinaryBuilder).Append(x)
		case string:
			b.Field(i).(*array.StringBuilder).Append(x)
		case decParam:
			n, ok := new(big.Int).SetString(strings.Replace(x.text, ".", "", 1), 10)
			if !ok {
				return "", fmt.Errorf("decimal %q", x.text)
			}
			b.Field(i).(*array.Decimal128Builder).Append(decimal128.FromBigInt(n))
		}
	}
	params := b.NewRecordBatch()
	defer params.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	if err != nil {
		return "", err
	}
	res, err := fetch(ctx, cl, info)
	if res != nil {
		defer res.release()
	}
	if err != nil {
		return "", err
	}
	if len(res.recs) != 1 || res.recs[0].NumRows() != 1 {
		return "", fmt.Errorf("%d batches, want one row", len(res.recs))
	}
	rec := res.recs[0]
	if !rec.Schema().Equal(res.infoSchema) {
		return "", fmt.Errorf("batch schema %s, FlightInfo %s", rec.Schema(), res.infoSchema)
	}
	if s, ok := rec.Column(0).(*array.String); ok {
		return s.Value(0), nil
	}
	return rec.Column(0).ValueStr(0), nil
}
