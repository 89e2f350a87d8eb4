package e2e

import (
	"testing"
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
