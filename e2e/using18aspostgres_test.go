package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18's merged columns of JOIN … USING and NATURAL JOIN (using18): their type is the two
// sides' common type and each value keeps its own numeric display scale, as PostgreSQL's
// buildMergedJoinVar builds them; compared with PostgreSQL over the same rows.

// using18Ord is ORD's flights of a day and a half, with their delays as integers.
const using18Ord = "(SELECT origin, (value->>'delay')::int d FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00') f"

// using18Delays names every delay of using18Ord (and more), a numeric of scale 1.
const using18Delays = "(SELECT g + 0.0 AS d, 'delay ' || g AS c FROM generate_series(-100, 400) g) w"

// using18Days counts ORD's flights by day over five days, the day a timestamp with time zone.
const using18Days = "(SELECT date_trunc('day', timestamp) d, count(*) n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-04' GROUP BY 1) a"

// TestUsingMergedColumnsAsPostgres: the merged column of an inner, left, right and full join
// USING one or several columns, and of a NATURAL JOIN, answers PostgreSQL's values, text and
// types; the sides' own columns (v.b, w.b) keep theirs.
func TestUsingMergedColumnsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	texts := []string{
		// integer USING numeric: numeric, each value at its side's scale.
		"SELECT b::text, c FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 2",
		"SELECT b::text, c FROM (VALUES (1), (2), (3)) v(b) LEFT JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 1",
		"SELECT b::text, c FROM (VALUES (1), (2)) v(b) RIGHT JOIN (VALUES (1.00, 'x'), (3.00, 'y')) w(b, c) USING (b) ORDER BY 2",
		"SELECT b::text, c FROM (VALUES (1), (2), (4)) v(b) FULL JOIN (VALUES (1.0, 'x'), (3.0, 'y')) w(b, c) USING (b) ORDER BY 2, 1",
		"SELECT b::text, c FROM (VALUES (1.5), (2.5)) v(b) FULL JOIN (VALUES (1.50, 'x'), (3.25, 'y')) w(b, c) USING (b) ORDER BY 2, 1",
		"SELECT (b * 2)::text, (b + 0)::text, v.b, w.b::text FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 1",
		"SELECT x::text, c FROM generate_series(1, 3) x LEFT JOIN (VALUES (1.5, 'a'), (2.0, 'b')) w(x, c) USING (x) ORDER BY 1",
		"SELECT x::text, c FROM generate_series(1, 3) g(x) RIGHT JOIN (VALUES (1.5, 'a'), (2.0, 'b')) w(x, c) USING (x) ORDER BY 2",
		"SELECT x::text, count(*) FROM generate_series(1, 3) x LEFT JOIN (VALUES (1.5, 'a'), (2.0, 'b')) w(x, c) USING (x) GROUP BY x ORDER BY 1",
		// SELECT *: the merged columns first, in USING's order, then each side's others.
		"SELECT b::text, a, c, v.b::text, w.b::text FROM (VALUES (1, 'p'), (2, 'q')) v(b, a) JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 2",
		"SELECT b, a::text, p, q FROM (VALUES (1, 10, 'p'), (2, 20, 'q')) v(a, b, p) FULL JOIN (VALUES (1.0, 10::bigint, 'x'), (3.0, 30, 'y')) w(a, b, q) USING (b, a) ORDER BY 1",
		"SELECT a::text, b, p, q FROM (VALUES (1, 10, 'p'), (2, 20, 'q')) v(a, b, p) NATURAL FULL JOIN (VALUES (1.0, 10::bigint, 'x'), (3.0, 30, 'y')) w(a, b, q) ORDER BY 3, 4",
		// numeric's type modifier: an inner join's value is the side that needs no coercion to
		// the common (unconstrained) numeric, the right one when the left is numeric(p,s).
		"SELECT b::text, c FROM (SELECT 1.00 b) v JOIN (SELECT 1::numeric(5,3) b, 'x' c) w USING (b) ORDER BY c",
		"SELECT b::text, c FROM (SELECT 1::numeric(5,2) b) v JOIN (SELECT 1.0 b, 'x' c) w USING (b) ORDER BY c",
		// Merged columns of merged columns, and two of them in one NATURAL JOIN.
		"SELECT x::text FROM (VALUES (1, 2.5)) a(x, y) JOIN (VALUES (1.0, 2)) b(x, y) USING (x) JOIN (VALUES (1.00)) c(x) USING (x)",
		"SELECT x::text, y::text FROM (VALUES (1, 2.5)) a(x, y) NATURAL FULL JOIN (VALUES (1.0, 2)) b(x, y) ORDER BY 1",
		"SELECT x::text, c FROM (VALUES (1), (2)) a(x) FULL JOIN (VALUES (1.0), (3.0)) b(x) USING (x) JOIN (VALUES (1.00, 'p'), (2.00, 'q'), (3.00, 'r')) c(x, c) USING (x) ORDER BY 2",
		"SELECT x::text, c FROM (VALUES (1.00, 'p'), (2.00, 'q'), (4.00, 's')) c(x, c) RIGHT JOIN ((VALUES (1), (2)) a(x) FULL JOIN (VALUES (1.0), (3.0)) b(x) USING (x)) USING (x) ORDER BY 1",
		// Other common types: bigint, double precision, timestamp, timestamp with time zone.
		"SELECT b, c FROM (VALUES (1::smallint), (2::smallint)) v(b) JOIN (VALUES (1::bigint, 'x'), (2, 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b, c FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0::float8, 'x'), (2.5, 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b::text, c FROM (VALUES (date '2001-01-01'), (date '2001-01-02')) v(b) JOIN (VALUES (timestamp '2001-01-01', 'x'), (timestamp '2001-01-02 00:00:01', 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b::text, c FROM (VALUES (date '2001-01-01')) v(b) FULL JOIN (VALUES (timestamptz '2001-01-01 00:00+00', 'x'), ('2001-01-03', 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b::text, v.b::text, w.b::text FROM (VALUES (timestamp '2001-01-01')) v(b) LEFT JOIN (VALUES (timestamptz '2001-01-01 00:00+00')) w(b) USING (b)",
		// A table's integer joined to a lookup list, by USING and NATURAL JOIN.
		"SELECT d::text, c FROM " + using18Ord + " JOIN " + using18Delays + " USING (d) ORDER BY 2, 1",
		"SELECT d::text, c FROM " + using18Ord + " NATURAL JOIN " + using18Delays + " ORDER BY 2",
		"SELECT d::text, c, origin FROM " + using18Ord + " NATURAL LEFT JOIN " + using18Delays + " ORDER BY 2, 1",
		// The BI date spine: timestamps (and dates) against date_trunc's timestamptz.
		"SELECT d::text, coalesce(n, 0) FROM generate_series(timestamp '2001-03-30', timestamp '2001-04-03', interval '1 day') AS s(d) LEFT JOIN " + using18Days + " USING (d) ORDER BY 1",
		"SELECT d::text, n FROM " + using18Days + " RIGHT JOIN generate_series(timestamp '2001-03-30', timestamp '2001-04-03', interval '1 day') AS s(d) USING (d) ORDER BY 1",
		"SELECT d::text, n FROM (SELECT (date '2001-03-30' + g) AS d FROM generate_series(0, 4) g) s LEFT JOIN " + using18Days + " USING (d) ORDER BY 1",
		"SELECT d::text, n FROM (SELECT (date '2001-03-30' + g) AS d FROM generate_series(0, 4) g) s JOIN " + using18Days + " USING (d) ORDER BY 1",
		"SELECT d::text, n, s.d::text FROM (SELECT (date '2001-03-30' + g) AS d FROM generate_series(0, 4) g) s FULL JOIN " + using18Days + " USING (d) ORDER BY 1",
	}
	types := []string{
		"SELECT * FROM (VALUES (1, 'p'), (2, 'q')) v(b, a) JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 2",
		"SELECT * FROM (VALUES (1, 10, 'p'), (2, 20, 'q')) v(a, b, p) FULL JOIN (VALUES (1.0, 10::bigint, 'x'), (3.0, 30, 'y')) w(a, b, q) USING (b, a) ORDER BY 1, 2",
		"SELECT * FROM (VALUES (1, 10, 'p'), (2, 20, 'q')) v(a, b, p) NATURAL RIGHT JOIN (VALUES (1.0, 10::bigint, 'x'), (3.0, 30, 'y')) w(a, b, q) ORDER BY 1, 2",
		"SELECT b, c FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0, 'x'), (2.0, 'y')) w(b, c) USING (b) ORDER BY 2",
		"SELECT b, c FROM (VALUES (1::smallint), (2::smallint)) v(b) JOIN (VALUES (1::bigint, 'x'), (2, 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b, c FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0::float8, 'x'), (2.5, 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT b, c FROM (VALUES (date '2001-01-01'), (date '2001-01-02')) v(b) JOIN (VALUES (timestamp '2001-01-01', 'x'), (timestamp '2001-01-02 00:00:01', 'y')) w(b, c) USING (b) ORDER BY c",
		"SELECT x, c FROM generate_series(1, 3) x LEFT JOIN (VALUES (1.5, 'a'), (2.0, 'b')) w(x, c) USING (x) ORDER BY 1",
		"SELECT d, n FROM generate_series(timestamp '2001-03-30', timestamp '2001-04-03', interval '1 day') AS s(d) LEFT JOIN " + using18Days + " USING (d) ORDER BY 1",
		"SELECT d, c FROM " + using18Ord + " NATURAL JOIN " + using18Delays + " ORDER BY 2",
		"SELECT b, v.b, w.b FROM (VALUES (1::smallint)) v(b) FULL JOIN (VALUES (1::bigint), (2)) w(b) USING (b) ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, texts...)...)
		comparePG(t, ctx, pg, one(cl.c), nonEmptyTyped(types...)...)
		// A side whose display scale varies by row where the binder cannot follow it (a
		// VALUES list's numerics of several scales): PostgreSQL answers each value at its own
		// scale; the merged column's text is refused by name, as the side's own is.
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT b::text FROM (VALUES (1.5), (2.25)) v(b) JOIN (VALUES (1.50), (2.250)) w(b) USING (b)":                    "display scale",
			"SELECT b::text, c FROM (VALUES (1), (2), (4)) v(b) FULL JOIN (VALUES (1.0, 'x'), (3.00, 'y')) w(b, c) USING (b)": "display scale",
			"SELECT (b + 0)::text FROM (VALUES (1), (2)) v(b) JOIN (VALUES (1.0, 'x'), (2.00, 'y')) w(b, c) USING (b)":        "display scale",
			"SELECT b::text, c FROM (VALUES (1), (2)) v(b) RIGHT JOIN (VALUES (1.0, 'x'), (2.00, 'y')) w(b, c) USING (b)":     "display scale",
			"SELECT k::text FROM (SELECT avg(g) k FROM generate_series(1, 2) g) v FULL JOIN (SELECT 1 k) w USING (k)":         "display scale",
		})
	}
}
