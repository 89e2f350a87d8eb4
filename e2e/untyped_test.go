package e2e

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestUntypedLiteralsAsPostgres: a quoted constant (PostgreSQL's unknown-type literal) and a
// decimal constant typed by what they meet, as PostgreSQL types them (issue 18). A set
// operation's arm that is a string constant or NULL takes the other arm's type (SELECT
// 'NaN'::float8 UNION SELECT 'Infinity' was 42804, text against double precision); a numeric
// constant past flightsrv's 38 digits beside a double precision is read as a double, as
// PostgreSQL casts it to float8 there (x > 1e300 was 22003), and stays 22003 where PostgreSQL
// reads it as float8 out of range.
func TestUntypedLiteralsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		`SELECT x::text FROM (SELECT 'NaN'::float8 AS x UNION SELECT 'Infinity') t ORDER BY x`,
		`SELECT x::text FROM (SELECT 'Infinity' AS x UNION ALL SELECT 1.5::float8 UNION ALL SELECT NULL) t ORDER BY x`,
		`SELECT x::text, y FROM (SELECT '-0'::real AS x, 'a' AS y UNION SELECT '2.5', 'b') t ORDER BY x`,
		`SELECT x::text FROM (SELECT 1 AS x UNION SELECT '2' UNION SELECT '3') t ORDER BY x`,
		`SELECT x::text FROM (SELECT 'NaN'::float8 AS x INTERSECT SELECT 'NaN') t`,
		`SELECT x::text FROM (SELECT 'NaN'::float8 AS x EXCEPT SELECT 'Infinity') t`,
		`SELECT x FROM (SELECT 'a' AS x UNION SELECT 'b') t ORDER BY x`,
		`SELECT x::text FROM (VALUES ('NaN'::float8), ('Infinity'), ('-0'), (NULL)) v(x) ORDER BY x`,
		`SELECT (CASE WHEN n = 1 THEN 'NaN'::float8 WHEN n = 2 THEN '-Infinity' ELSE 'Infinity' END)::text, coalesce(NULL, 'NaN', 1.5::float8)::text FROM (VALUES (1), (2), (3)) v(n) ORDER BY n`,
		// A numeric constant past 38 digits beside a double precision is a double.
		`SELECT x > 1e300, x < 1e300, 1e300 <= x, x <> 1e308, (x * 1e300)::text, (x + 1e300)::text, (1e300 / x)::text FROM (VALUES (1.0::float8), ('Infinity'), (-1.5)) v(x) ORDER BY x`,
		`SELECT (x * 1e300)::text, x > 1e300 FROM (VALUES (1.5::real)) v(x)`,
	)...)
	for q, code := range map[string]string{
		`SELECT x * 1e300 FROM (VALUES (1e300::float8)) v(x)`: "22003",
		`SELECT 1 UNION SELECT 'a'`:                           "22P02",
		`SELECT 1.5::float8 UNION SELECT 'x'`:                 "22P02",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, code)
	}
	// numeric_float8 of 1e-400 underflows, and of 1e400 overflows: PostgreSQL's 22003 (which
	// quotes the constant's digits; flightsrv does not).
	for _, q := range []string{`SELECT x = 1e-400 FROM (VALUES (1.0::float8)) v(x)`, `SELECT 1e400 > x FROM (VALUES (1.0::float8)) v(x)`} {
		if _, err := pg.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "22003") {
			t.Errorf("PostgreSQL: %s: %v, want 22003", q, err)
		}
		refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{q: "value out of range for type double precision"})
	}
	// GROUP BY 1 over CASE x WHEN … of a JSON field, over ORD's rows (the same rows in a
	// PostgreSQL table).
	from := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "untyped_rows", "SELECT id, value->>'destination', value->>'delay'"+from, "id text", "dest text", "delay int")
	ours := strings.NewReplacer("{DEST}", "(value->>'destination')", "{DELAY}", "(value->>'delay')::int", "{FROM}", from)
	theirs := strings.NewReplacer("{DEST}", "dest", "{DELAY}", "delay", "{FROM}", " FROM untyped_rows WHERE true")
	var rows []pgCase
	for _, q := range []string{
		`SELECT CASE {DEST} WHEN 'LAX' THEN 'west' WHEN 'JFK' THEN 'east' ELSE 'other' END AS side, count(*) {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT CASE {DELAY} WHEN 0 THEN 'on time' ELSE 'late' END, count(*), min({DEST}) {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT CASE WHEN {DELAY} > 15 THEN 'late' ELSE 'ok' END, count(*) {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT CASE {DELAY}::float8 * 'Infinity'::float8 WHEN 'NaN' THEN 'nan' WHEN 'Infinity' THEN 'inf' ELSE 'other' END, count(*) {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT CASE {DELAY}::float8 WHEN 0 THEN 'zero' WHEN 1.5 THEN 'x' ELSE 'other' END, count(*) {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT CASE {DEST}::bytea WHEN '\x4c4158' THEN 'lax' ELSE 'other' END, count(*) {FROM} GROUP BY 1 ORDER BY 1`,
	} {
		rows = append(rows, pgCase{ours: ours.Replace(q), theirs: theirs.Replace(q)})
	}
	if n := comparePG(t, ctx, pg, one(cl), rows...); n < 4 {
		t.Errorf("only %d rows compared", n)
	}
}
