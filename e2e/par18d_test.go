package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
)

// dollarParams writes the `?` placeholders of q as PostgreSQL's $1, $2… left to right (q holds
// no `?` other than placeholders).
func dollarParams(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// par18dWhere restricts flights to a few hundred rows of one origin and month.
const par18dWhere = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"

// TestNullParametersAsPostgres: a parameter bound NULL (an ADBC/arrow-go batch with a null slot
// of the declared type, or of Arrow's null type) whose type the statement fixes — by a cast, the
// other operand, the column, the function's signature — is bound as PostgreSQL binds it, a NULL
// of that type, instead of trial29's 0A000 "parameter $n must not be NULL": the optional filter
// of ORMs (`? IS NULL OR col = ?`), coalesce, IN with a NULL member, `col = ?`, = ANY of a list
// with a NULL element, numeric and interval parameters. Each answer is PostgreSQL's for the same
// statement and values (pgx binding the NULL).
func TestNullParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	str := arrow.BinaryTypes.String
	i64 := arrow.PrimitiveTypes.Int64
	cases := []struct {
		q    string
		decl []arrow.DataType // nil: the test binds Arrow's null type for a NULL
		vs   []any
	}{
		{"SELECT count(*)::text AS v" + par18dWhere + " AND (?::text IS NULL OR id = ?)", []arrow.DataType{str, str}, []any{nil, nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND (?::text IS NULL OR origin = ?)", []arrow.DataType{str, str}, []any{"ORD", "ORD"}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND (?::text IS NULL OR origin = ?)", []arrow.DataType{str, str}, []any{"ANC", "ANC"}},
		{"SELECT coalesce(?::int, 5)::text AS v", nil, []any{nil}},
		{"SELECT coalesce(?::int, 5)::text AS v", nil, []any{int64(7)}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND id IN (?, ?)", nil, []any{"x", nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND id = ?", nil, []any{nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND id <> ?", []arrow.DataType{str}, []any{nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND (value->>'delay')::int > ?", nil, []any{nil}},
		{"SELECT coalesce((? || 'x'), 'NULL') AS v", []arrow.DataType{str}, []any{nil}},
		{"SELECT coalesce((? + 1)::text, 'NULL') AS v", []arrow.DataType{i64}, []any{nil}},
		{"SELECT coalesce((?::numeric + 1.5)::text, 'NULL') AS v", nil, []any{nil}},
		{"SELECT coalesce(round(1.25, ?)::text, 'NULL') AS v", nil, []any{nil}},
		{"SELECT coalesce((timestamptz '2001-01-01' + ?::interval)::text, 'NULL') AS v", nil, []any{nil}},
		{"SELECT (CASE WHEN ? THEN 'a' ELSE 'b' END) AS v", nil, []any{nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND id LIKE ?", nil, []any{nil}},
		{"SELECT count(*)::text AS v" + par18dWhere + " AND NOT (id = ?) IS NULL", nil, []any{nil}},
		{"SELECT coalesce(max(id) FILTER (WHERE id > ?), 'NULL') AS v" + par18dWhere, nil, []any{nil}},
	}
	for _, c := range cases {
		compareBoundN(ctx, t, pg, clients, c.q, "SELECT v FROM ("+dollarParams(c.q)+") q", c.decl, c.vs...)
	}
}

// TestNullBoundsAsPostgres: a partition value or time bound bound NULL (`origin = ?`,
// `timestamp >= ?`, BETWEEN ? AND ?) passes no row, as in PostgreSQL — the read is an empty
// route, not trial29's refusal — and a NULL LIMIT is no limit. `? IS NULL` (a parameter only
// that predicate types, text) answers true for a NULL bound as utf8 or as Arrow's null type.
func TestNullBoundsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	str := arrow.BinaryTypes.String
	tsz := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}
	cases := []struct {
		q    string
		decl []arrow.DataType
		vs   []any
	}{
		{"SELECT count(*)::text AS v FROM flights WHERE origin = ? AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'", []arrow.DataType{str}, []any{nil}},
		{"SELECT count(*)::text AS v FROM flights WHERE origin IN ('ORD', ?) AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'", []arrow.DataType{str}, []any{nil}},
		{"SELECT count(*)::text AS v FROM flights WHERE origin = 'ORD' AND timestamp >= ? AND timestamp < '2001-04-01 18:00'", []arrow.DataType{tsz}, []any{nil}},
		{"SELECT count(*)::text AS v FROM flights WHERE origin = 'ORD' AND timestamp BETWEEN ? AND '2001-04-01 18:00'", []arrow.DataType{tsz}, []any{nil}},
		{"SELECT count(*)::text AS v FROM (SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00' LIMIT ?) q", nil, []any{nil}},
	}
	for _, c := range cases {
		compareBoundN(ctx, t, pg, clients, c.q, "SELECT v FROM ("+dollarParams(c.q)+") q", c.decl, c.vs...)
	}
	for _, decl := range [][]arrow.DataType{{str}, nil} {
		for _, cl := range clients {
			got, err := boundAnswerN(ctx, cl.c, "SELECT (? IS NULL)::text AS v", decl, nil)
			if err != nil || got != "true" {
				t.Errorf("%s: ? IS NULL bound NULL (%v): %q %v, want true", cl.name, decl, got, err)
			}
		}
	}
}

// TestAnyListWithNullElementAsPostgres: = ANY(?) of a list<utf8> parameter holding a NULL
// element is NULL where no element matches, as PostgreSQL's scalar array comparison (trial29:
// 0A000 "parameter $1 must not be NULL" although only an element was); a NULL list is NULL.
func TestAnyListWithNullElementAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	var id string
	if err := pg.QueryRow(ctx, "SELECT min(id)"+par18dWhere).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT count(*)::text AS v" + par18dWhere + " AND id = ANY(?)",
		"SELECT count(*)::text AS v" + par18dWhere + " AND NOT (id = ANY(?))",
		"SELECT count(*)::text AS v" + par18dWhere + " AND (id = ANY(?)) IS NULL",
	} {
		compareListParam(ctx, t, pg, clients, q, [][]*string{{&id, nil}, {nil}, nil})
	}
}

// compareListParam compares q, whose one parameter is a list of text (`= ANY(?)`, `<> ALL(?)`),
// bound to each of lists (a nil element NULL, a nil list NULL) through every client, with
// PostgreSQL's answer to q with the same list (pgx binding a text[]): the first column of the
// one row, text.
func compareListParam(ctx context.Context, t *testing.T, pg *pgx.Conn, clients []namedClient, q string, lists [][]*string) {
	t.Helper()
	for _, list := range lists {
		var want string
		if err := pg.QueryRow(ctx, dollarParams(q), list).Scan(&want); err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		for _, cl := range clients {
			stmt, err := cl.c.Prepare(ctx, q)
			if err != nil {
				t.Fatalf("%s: prepare %s: %v", cl.name, q, err)
			}
			b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true}}, nil))
			lb := b.Field(0).(*array.ListBuilder)
			if list == nil {
				lb.AppendNull()
			} else {
				lb.Append(true)
				for _, s := range list {
					if s == nil {
						lb.ValueBuilder().AppendNull()
					} else {
						lb.ValueBuilder().(*array.StringBuilder).Append(*s)
					}
				}
			}
			res := executeWith(t, ctx, cl.c, stmt, b)
			got := res.recs[0].Column(0).(*array.String).Value(0)
			res.release()
			stmt.Close(ctx)
			if got != want {
				t.Errorf("%s: %s with %v: %s, want PostgreSQL's %s", cl.name, q, list, got, want)
			}
		}
	}
}

// TestRoundParameterPlacesAsPostgres: round and trunc of a numeric to a parameter's number of
// digits (`round(avg(x), ?::integer)`, SQLAlchemy's rendering of round(x, 2); trial29: 0A000
// "n other than an integer constant") answer PostgreSQL's values and text, each value at
// scale max(n, 0); one prepared statement executed with different values answers each its own
// (the statement is bound again for each execution).
func TestRoundParameterPlacesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	i64 := arrow.PrimitiveTypes.Int64
	for _, q := range []string{
		"SELECT coalesce(round(avg((value->>'delay')::int), ?::INTEGER)::text, 'NULL') AS v" + par18dWhere,
		"SELECT coalesce(trunc(avg((value->>'delay')::int), ?::integer)::text, 'NULL') AS v" + par18dWhere,
		"SELECT coalesce(round(((value->>'delay')::int / 7.0)::numeric, ?::int)::text, 'NULL') AS v" + par18dWhere + " ORDER BY id LIMIT 1",
		"SELECT coalesce((round(12345.678::numeric, ?::int4) * 2)::text, 'NULL') AS v",
		"SELECT coalesce(round(1.25, ?::int)::text, 'NULL') AS v",
		"SELECT coalesce(round(-1.25, ?::int)::text || '|' || round(1.5, 0)::text, 'NULL') AS v",
	} {
		for _, v := range []any{int64(2), int64(0), int64(-2), int64(5), int64(16), nil} {
			compareBoundN(ctx, t, pg, clients, q, "SELECT v FROM ("+dollarParams(q)+") q", nil, v)
		}
	}
	// An untyped parameter is integer when the value bound declares no type (Arrow's null
	// type), bigint when an int64 declares it: PostgreSQL has no round(numeric, bigint), 42883.
	const untyped = "SELECT coalesce(round(avg((value->>'delay')::int), ?)::text, 'NULL') AS v" + par18dWhere
	compareBoundN(ctx, t, pg, clients, untyped, "SELECT v FROM ("+dollarParams(untyped)+") q", nil, nil)
	compareBoundN(ctx, t, pg, clients, untyped, "SELECT v FROM ("+strings.Replace(untyped, "?", "$1::bigint", 1)+") q", nil, int64(2))
	// One prepared statement, several executions.
	const q = "SELECT round(avg((value->>'delay')::int), ?::INTEGER)::text AS v" + par18dWhere
	for _, cl := range clients {
		stmt, err := cl.c.Prepare(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int64{1, 3, 0, 1} {
			var want string
			if err := pg.QueryRow(ctx, dollarParams(q), n).Scan(&want); err != nil {
				t.Fatal(err)
			}
			b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "n", Type: i64}}, nil))
			b.Field(0).(*array.Int64Builder).Append(n)
			res := executeWith(t, ctx, cl.c, stmt, b)
			got := res.recs[0].Column(0).(*array.String).Value(0)
			res.release()
			if got != want {
				t.Errorf("%s: %s executed again with %d: %s, want PostgreSQL's %s", cl.name, q, n, got, want)
			}
		}
		stmt.Close(ctx)
	}
}

// TestLikeEscapeConcatenatedAsPostgres: LIKE with ESCAPE of a concatenated pattern, as
// SQLAlchemy's contains(…, autoescape=True) writes it (`LIKE '%' || ? || '%' ESCAPE '/'`, and
// its literal form; trial29: refused "LIKE … ESCAPE"), answers PostgreSQL's rows, an escaped
// wildcard matching itself.
func TestLikeEscapeConcatenatedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const q = "SELECT count(*)::text AS v" + par18dWhere + " AND (id || '%_x') LIKE '%' || ? || '%' ESCAPE '/'"
	for _, v := range []any{"1", "/%/_", "%", "_", "//", nil} {
		compareBoundN(ctx, t, pg, clients, q, "SELECT v FROM ("+dollarParams(q)+") q", []arrow.DataType{arrow.BinaryTypes.String}, v)
	}
	compareAll := func(sql string) {
		t.Helper()
		want, pgErr := pgAnswerN(ctx, pg, sql)
		for _, cl := range clients {
			got, err := boundAnswerN(ctx, cl.c, sql, nil)
			if pgErr != nil || err != nil || got != want {
				t.Errorf("%s: %s: %q %v, want PostgreSQL's %q %v", cl.name, sql, got, err, want, pgErr)
			}
		}
	}
	compareAll("SELECT count(*)::text AS v" + par18dWhere + " AND (id || '%_x') LIKE '%' || '/%/_' || '%' ESCAPE '/'")
	compareAll("SELECT count(*)::text AS v" + par18dWhere + " AND id NOT LIKE '%' || '1' || '%' ESCAPE '/'")
}

// TestRegexpReplaceFlagsParameterAsPostgres: regexp_replace(x, ?, ?, ?) with the flags a
// parameter (trial29: refused "flags that are not a constant"), bound text as PostgreSQL types
// it, answers PostgreSQL's value for each execution of one statement (g or not, i, NULL flags
// making the strict function NULL; an unknown flag is its 22023).
func TestRegexpReplaceFlagsParameterAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	str := arrow.BinaryTypes.String
	decl := []arrow.DataType{str, str, str}
	for _, q := range []string{
		"SELECT coalesce(string_agg(regexp_replace(origin || id, ?, ?, ?), ',' ORDER BY id), 'NULL') AS v" + par18dWhere,
		"SELECT coalesce(regexp_replace('Abcabc', ?, ?, ?::text), 'NULL') AS v",
	} {
		for _, vs := range [][]any{{"[a-c0-3]", "z", "g"}, {"A", "z", "gi"}, {"a", "z", ""}, {"a", "z", nil}, {"a", "z", "q"}, {"a", "z", "Z"}} {
			compareBoundN(ctx, t, pg, clients, q, "SELECT v FROM ("+dollarParams(q)+") q", decl, vs...)
		}
	}
}

// TestFrameOffsetParametersAsPostgres: window frame offsets given as parameters cast to
// integer (`ROWS BETWEEN ?::INTEGER PRECEDING AND CURRENT ROW`, SQLAlchemy's rendering of
// rows=(-n, 0); trial29: "frame offsets other than (integer) constants") and RANGE offsets as
// parameters answer PostgreSQL's sums for each value; NULL is its 22004, a negative its 22013.
func TestFrameOffsetParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const agg = "SELECT string_agg(s::text, ',' ORDER BY id) AS v FROM (SELECT id, sum((value->>'delay')::int) OVER (ORDER BY id "
	const from = ") AS s" + par18dWhere + ") q"
	for _, frame := range []string{
		"ROWS BETWEEN ?::INTEGER PRECEDING AND CURRENT ROW",
		"ROWS BETWEEN CAST(? AS integer) PRECEDING AND ?::int FOLLOWING",
	} {
		for _, n := range []any{int64(0), int64(2), int64(-1), nil} {
			q := agg + frame + from
			vs := []any{n}
			if strings.Count(frame, "?") == 2 {
				vs = append(vs, int64(1))
			}
			compareBoundN(ctx, t, pg, clients, q, dollarParams(q), nil, vs...)
		}
	}
	const rangeQ = "SELECT string_agg(s::text, ',' ORDER BY d, id) AS v FROM (SELECT id, (value->>'delay')::int AS d, count(*) OVER (ORDER BY (value->>'delay')::int RANGE BETWEEN ?::int PRECEDING AND ? FOLLOWING) AS s" + par18dWhere + ") q"
	for _, vs := range [][]any{{int64(1), int64(1)}, {int64(10), int64(0)}, {nil, int64(1)}} {
		compareBoundN(ctx, t, pg, clients, rangeQ, dollarParams(rangeQ), nil, vs...)
	}
}

// TestPercentileFractionParameterAsPostgres: percentile_cont(?) and percentile_disc(?) WITHIN
// GROUP (ORDER BY …) with the fraction a parameter (trial29: "a fraction that is not a numeric
// constant"), double precision as PostgreSQL types it, answer PostgreSQL's value for each
// fraction, NULL for NULL, its 22003 outside [0, 1].
func TestPercentileFractionParameterAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, q := range []string{
		"SELECT coalesce(percentile_cont(?) WITHIN GROUP (ORDER BY (value->>'delay')::int)::text, 'NULL') AS v" + par18dWhere,
		"SELECT coalesce(percentile_disc(?::float8) WITHIN GROUP (ORDER BY (value->>'delay')::int DESC)::text, 'NULL') AS v" + par18dWhere,
	} {
		for _, f := range []any{0.5, 0.0, 1.0, 0.37, 1.5, nil} {
			compareBoundN(ctx, t, pg, clients, q, "SELECT v FROM ("+dollarParams(q)+") q", nil, f)
		}
	}
}

// TestManyParametersAsPostgres: a statement of 6,000 parameters bound through a one-row batch
// of 6,000 columns (ADBC's binding; trial29: INVALID_ARGUMENT "malformed Arrow IPC message"
// past 4,096 columns) answers PostgreSQL's count over the same ids; past 65,535 columns, more
// parameters than PostgreSQL takes, the refusal is program_limit_exceeded (54000).
func TestManyParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	ids := pgIDs(ctx, t, pg, 50)
	const n = 6000
	vs := make([]any, n)
	decl := make([]arrow.DataType, n)
	for i := range vs {
		vs[i] = "no such id " + strconv.Itoa(i)
		if i%100 == 0 && i/100 < len(ids) {
			vs[i] = ids[i/100]
		}
		decl[i] = arrow.BinaryTypes.String
	}
	q := "SELECT count(*)::text AS v" + par18dWhere + " AND id IN (?" + strings.Repeat(", ?", n-1) + ")"
	compareBoundN(ctx, t, pg, clients, q, "SELECT v FROM ("+dollarParams(q)+") q", decl, vs...)
}

// pgIDs are the first n ids (in their order) of PostgreSQL's flights of par18dWhere.
func pgIDs(ctx context.Context, t *testing.T, pg *pgx.Conn, n int) []string {
	t.Helper()
	rows, err := pg.Query(ctx, "SELECT id"+par18dWhere+" ORDER BY id LIMIT "+strconv.Itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}
