package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Trial 31's smaller defects, each answered (or refused) as PostgreSQL 15 does.

// TestCharCastFromDerivedAsPostgres: the cast to text or varchar of a character(n) column read
// from a derived table, a CTE or VALUES drops the blank padding (PostgreSQL's rtrim1) when the
// select list passes the column through under its own name, as it does under another name
// (trial 31 D11: the padding was kept).
func TestCharCastFromDerivedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const ord = "FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01 06:00' AND timestamp < '2001-04-01 09:00'"
	const atl = "FROM flights WHERE origin = 'ATL' AND timestamp >= '2001-04-01 06:00' AND timestamp < '2001-04-01 09:00'"
	const b = "(VALUES (1, 'a', 'xy'::char(4), 10), (2, 'b', 'z'::char(4), -7), (3, 'a', NULL::char(4), 0)) b(id, k, n, i)"
	qs := []string{
		"SELECT x::text FROM (SELECT 'ab'::char(5) AS x) s",
		"SELECT CAST(x AS text), '|' FROM (SELECT 'ab'::char(5) AS x) s",
		"SELECT x::varchar FROM (SELECT 'ab'::char(5) AS x) s",
		"SELECT s.x::text AS x FROM (SELECT 'ab'::char(5) AS x) s",
		"SELECT x, x::char(5), x::bpchar FROM (SELECT 'ab'::char(5) AS x) s",
		"WITH c AS (SELECT 'ab'::char(5) AS x) SELECT x::text FROM c",
		"SELECT x::text FROM (VALUES ('ab'::char(5)), ('c'::char(5)), (NULL)) v(x) ORDER BY x",
		"SELECT x::text FROM (VALUES ('ab'::char(5)), ('c'::char(5))) v(x) GROUP BY x ORDER BY 1",
		"SELECT y, y || '|' FROM (SELECT x::text AS y FROM (VALUES ('ab'::char(5)), ('c'::char(5))) v(x)) s ORDER BY 1",
		"SELECT x::text FROM (SELECT x FROM (VALUES ('ab'::char(5))) v(x) UNION ALL SELECT 'cd'::char(5)) s ORDER BY 1",
		"SELECT x::text FROM (SELECT (value->>'destination')::char(5) AS x " + ord + ") s ORDER BY 1",
		"SELECT k, x::text FROM (SELECT DISTINCT ON (value->>'destination') value->>'destination' AS k, (value->>'destination')::char(5) AS x " + ord + " ORDER BY value->>'destination', timestamp, id) s ORDER BY 1",
		"SELECT id, x::text FROM (SELECT id, (value->>'destination')::char(5) AS x " + ord + " UNION ALL SELECT id, (value->>'destination')::char(5) " + atl + ") s ORDER BY 1, 2",
		"SELECT x::text FROM (SELECT (value->>'destination')::char(5) AS x " + ord + " INTERSECT SELECT (value->>'destination')::char(5) " + ord + ") s ORDER BY 1",
		"SELECT x::text FROM (SELECT (value->>'destination')::char(5) AS x " + ord + " EXCEPT SELECT (value->>'destination')::char(5) " + atl + ") s ORDER BY 1",
		"SELECT id, x::text FROM (SELECT id, COALESCE(n, 'q'::char(4)) AS x FROM " + b + " ORDER BY x DESC NULLS LAST OFFSET 1) s ORDER BY id",
		"SELECT id, x::text FROM (SELECT id, k::char(3) AS x FROM " + b + " ORDER BY x DESC NULLS LAST OFFSET 1) s ORDER BY id",
		"SELECT k, x::text FROM (SELECT DISTINCT ON (k) k, x FROM (SELECT id, k, CASE WHEN i > 0 THEN n END AS x FROM " + b + ") s0 ORDER BY k, id) s ORDER BY k",
		"SELECT k, x::text FROM (SELECT DISTINCT ON (k) k, x FROM (SELECT id, k, NULLIF(n, 'z') AS x FROM " + b + ") s0 ORDER BY k, id) s ORDER BY k",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestFalseConjunctFoldsFirstAsPostgres: a constant conjunct folding to false decides a WHERE
// before the conjuncts after it are folded (PostgreSQL's simplify_and_arguments), in a routed
// read whose conjuncts the fragments evaluate one by one, in a join's residual and over a
// generator; one before the false that raises is still the error, a NULL decides nothing, and
// a nested OR holding a constant true decides the OR around it (trial 31 D1).
func TestFalseConjunctFoldsFirstAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01 02:00'"
	const d = "(value->>'delay')::int"
	qs := []string{
		"SELECT count(*)" + w + " AND 1 = 2 AND 1/0 = 1",
		"SELECT count(*)" + w + " AND (1 = 2 AND 1/0 = 1)",
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND 1 = 2 AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01 02:00' AND 1/0 = 1",
		"SELECT count(*)" + w + " AND " + d + " > 0 AND 1 = 2 AND 1/0 = 1",
		"SELECT count(*)" + w + " AND 1 = 2 AND " + d + " > 1/0",
		"SELECT count(*)" + w + " AND (COALESCE(0, 7) <> 0 AND 100 / sign(0) > 1)",
		"SELECT count(*)" + w + " AND ((" + d + " > 0 OR (" + d + " > 5 OR 1 = 1)) OR 1/0 = 1)",
		"SELECT id" + w + " AND 1 = 2 AND 1/0 = 1",
		"SELECT value->>'destination', count(*)" + w + " AND 1 = 2 AND 1/0 = 1 GROUP BY 1",
		"SELECT count(*) FROM (SELECT *" + w + ") s WHERE 1 = 2 AND 1/0 = 1",
		"SELECT count(*) FROM flights f JOIN (VALUES ('ORD')) v(o) ON f.origin = v.o WHERE f.timestamp >= '2001-04-01' AND f.timestamp < '2001-04-01 02:00' AND f.origin = 'ORD' AND 1 = 2 AND 1/0 = 1",
		"SELECT count(*) FROM generate_series(1, 3) a JOIN generate_series(1, 3) b ON a = b WHERE 1 = 2 AND 1/0 = 1",
		"SELECT count(*) FROM generate_series(1, 3) a LEFT JOIN generate_series(1, 3) b ON a = b AND 1 = 2 AND 1/0 = 1",
		"SELECT count(*) FROM generate_series(1, 10) g WHERE (g > 0 AND 1 = 2) AND 1/0 = 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{
			"SELECT count(*)" + w + " AND 1/0 = 1 AND 1 = 2",
			"SELECT count(*)" + w + " AND " + d + " > 1/0 AND 1 = 2",
			"SELECT count(*)" + w + " AND NULL AND 1/0 = 1",
			"SELECT count(*) FROM generate_series(1, 3) a LEFT JOIN generate_series(1, 3) b ON a = b AND 1/0 = 1 AND 1 = 2",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "22012")
		}
	}
}

// TestQueryShapesRefusedAsPostgres: statements PostgreSQL refuses while it analyses them are
// refused with its SQLSTATE (trial 31 D4, D5, D8, D10), and their nearest valid spellings
// answer as PostgreSQL does.
func TestQueryShapesRefusedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const t0 = "(SELECT value->>'destination' AS dest FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02') t"
	const v = "(VALUES (1, 2), (1, 1), (2, 5)) v(x, y)"
	refusals := []struct{ q, state string }{
		// D4: a DISTINCT ON expression missing from an ORDER BY that has another key.
		{"SELECT DISTINCT ON (x) y FROM " + v + " ORDER BY y", "42P10"},
		{"SELECT DISTINCT ON (1) x, y FROM " + v + " ORDER BY 2", "42P10"},
		{"SELECT DISTINCT ON (x, y) x, y FROM " + v + " ORDER BY x, 1 + y", "42P10"},
		{"SELECT DISTINCT ON (dest) dest FROM " + t0 + " ORDER BY upper(dest)", "42P10"},
		// D5: an unqualified * without a FROM item, however nested.
		{"SELECT *", "42601"},
		{"SELECT 1 WHERE EXISTS (SELECT * WHERE 1 = 1)", "42601"},
		{"SELECT x FROM " + v + " WHERE EXISTS (SELECT * WHERE x = 1)", "42601"},
		{"SELECT (SELECT * LIMIT 1)", "42601"},
		{"SELECT x FROM " + v + " UNION ALL SELECT *", "42601"},
		{"WITH c AS (SELECT *) SELECT 1", "42601"},
		// D8: one WITH list naming a query twice.
		{"WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x", "42712"},
		{"WITH x AS (SELECT 1), y AS (SELECT 3), x AS (SELECT 2) SELECT * FROM y", "42712"},
		{"SELECT 1 WHERE EXISTS (WITH x AS (SELECT 1), x AS (SELECT 2) SELECT * FROM x)", "42712"},
		// D10: GROUP BY x COLLATE "C" groups the collated expression, not x.
		{`SELECT dest, count(*) FROM ` + t0 + ` GROUP BY dest COLLATE "C" ORDER BY dest COLLATE "C" DESC`, "42803"},
		{`SELECT upper(dest), count(*) FROM ` + t0 + ` GROUP BY dest COLLATE "C"`, "42803"},
		{`SELECT dest COLLATE "POSIX", count(*) FROM ` + t0 + ` GROUP BY dest COLLATE "C"`, "42803"},
		// A variadic call is a GROUP BY key's only with all of the key's arguments
		// (substrait/exprindex.go: expr's Equals reads the first call's arguments alone, so a
		// key of fewer arguments matched, and one of more panicked).
		{`SELECT concat(dest, 'x', 'y') FROM ` + t0 + ` GROUP BY concat(dest, 'x')`, "42803"},
		{`SELECT concat(dest, 'x') FROM ` + t0 + ` GROUP BY concat(dest, 'x', 'y')`, "42803"},
	}
	answers := []string{
		"SELECT DISTINCT ON (x) x, y FROM " + v + " ORDER BY x, y",
		"SELECT DISTINCT ON (x, y) x, y FROM " + v + " ORDER BY x",
		"SELECT DISTINCT ON (x, y) x, y FROM " + v + " ORDER BY y, x DESC",
		"SELECT DISTINCT ON (x) x, y FROM " + v + " ORDER BY x, y DESC",
		"SELECT x FROM " + v + " WHERE EXISTS (SELECT * FROM (VALUES (2)) w(z) WHERE z > x) ORDER BY 1",
		"SELECT 1 WHERE EXISTS (SELECT 1 WHERE 1 = 1)",
		"WITH x AS (SELECT 1 AS a) SELECT * FROM (WITH x AS (SELECT 2 AS a) SELECT a FROM x) s",
		`WITH "X" AS (SELECT 1 AS a), x AS (SELECT 2 AS a) SELECT a FROM x`,
		`SELECT dest COLLATE "C", count(*) FROM ` + t0 + ` GROUP BY dest COLLATE "C" ORDER BY dest COLLATE "C" DESC`,
		`SELECT dest COLLATE "C" AS d, count(*) FROM ` + t0 + ` GROUP BY 1 ORDER BY 1`,
		`SELECT dest COLLATE "C" AS d, count(*) FROM ` + t0 + ` GROUP BY d ORDER BY 1`,
		`SELECT dest COLLATE "C", count(*) FROM ` + t0 + ` GROUP BY dest ORDER BY 1`,
		`SELECT dest, dest COLLATE "C", count(*) FROM ` + t0 + ` GROUP BY dest COLLATE "C", dest ORDER BY 1`,
		`SELECT dest COLLATE pg_catalog."C", count(*) FROM ` + t0 + ` GROUP BY (dest COLLATE "C") HAVING dest COLLATE "C" > 'M' ORDER BY 1`,
		`SELECT concat(dest, 'x', 'y'), count(*) FROM ` + t0 + ` GROUP BY concat(dest, 'x', 'y') ORDER BY 1`,
	}
	for _, cl := range clients {
		for _, r := range refusals {
			refusedWithStateOnly(t, ctx, cl.c, pg, r.q, r.state)
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, answers...)...)
	}
}

// refusedWithStateOnly checks that PostgreSQL refuses q with SQLSTATE state and flightsrv
// with INVALID_ARGUMENT and the same SQLSTATE (its message may name a column without
// PostgreSQL's table qualifier).
func refusedWithStateOnly(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q, state string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != state {
		t.Fatalf("PostgreSQL %s: %v, want SQLSTATE %s", q, err, state)
	}
	if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != state {
		t.Errorf("%s: %v (SQLSTATE %q), want INVALID_ARGUMENT %s (PostgreSQL's %q)", q, err, sqlstateOf(err), state, pgErr.Message)
	}
}

// TestIntegerArgumentParametersAsPostgres: a parameter written alone where PostgreSQL's
// function takes an integer (left, right, repeat, lpad, substr, chr, overlay, make_date,
// round(numeric, integer)) is PostgreSQL's integer parameter: declared int32, so that the JDBC
// driver's setInt binds a value the statement takes, answering as PostgreSQL with $1 integer;
// an int64 binding (ADBC's) declares bigint and is PostgreSQL's 42883 for $1 bigint, as before
// (trial 31 D6).
func TestIntegerArgumentParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	int32Decl := []arrow.DataType{arrow.PrimitiveTypes.Int32}
	for _, c := range []struct {
		q string
		v int32
	}{
		{"SELECT left('abcdef', ?) AS v", 2},
		{"SELECT left('abcdef', ?) AS v", -2},
		{"SELECT right('abcdef', ?) AS v", 4},
		{"SELECT repeat('ab', ?) AS v", 3},
		{"SELECT lpad('x', ?, '*') AS v", 4},
		{"SELECT rpad('x', ?) || '|' AS v", 3},
		{"SELECT substr('abcdef', ?, 2) AS v", 2},
		{"SELECT substring('abcdef' FROM 2 FOR ?) AS v", 3},
		{"SELECT split_part('a,b,c', ',', ?) AS v", 2},
		{"SELECT chr(?) AS v", 65},
		{"SELECT overlay('abcdef' PLACING 'xy' FROM ?) AS v", 3},
		{"SELECT make_date(2001, ?, 1)::text AS v", 2},
		{"SELECT round(1.2345, ?)::text AS v", 2},
		{"SELECT substr('\\x0102030405'::bytea, ?, 2)::text AS v", 2},
	} {
		compareBoundN(ctx, t, pg, clients, c.q, "SELECT v::text FROM ("+strings.Replace(c.q, "?", "$1::integer", 1)+") q", int32Decl, c.v)
		compareBoundN(ctx, t, pg, clients, c.q, "SELECT v::text FROM ("+strings.Replace(c.q, "?", "$1::bigint", 1)+") q", int32Decl, int64(c.v))
	}
}

// TestFractionalLimitAsPostgres: a numeric or double precision LIMIT, OFFSET or FETCH count is
// cast to bigint, as PostgreSQL casts it (numeric rounds half away from zero, double precision
// to even), over a generator and the routed table (trial 31 E2).
func TestFractionalLimitAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const g = "SELECT g FROM generate_series(1, 10) g ORDER BY g"
	qs := []string{
		g + " LIMIT 2.5",
		g + " LIMIT 2.5::float8",
		g + " LIMIT 3.5::float8 OFFSET 1.49",
		g + " OFFSET 7.5",
		g + " LIMIT 10 / 4.0",
		g + " FETCH FIRST 1.5 ROWS ONLY",
		g + " FETCH FIRST 2.5 ROWS WITH TIES",
		g + " LIMIT -0.4",
		g + " LIMIT 1.5::real",
		"SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' ORDER BY timestamp, id LIMIT 2.5 OFFSET 0.5",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedWithState(t, ctx, cl.c, pg, g+" LIMIT -0.5", "2201W")
		refusedWithState(t, ctx, cl.c, pg, g+" OFFSET -1.5::float8", "2201X")
		refusedWithState(t, ctx, cl.c, pg, g+" LIMIT 1e30", "22003")
	}
}
