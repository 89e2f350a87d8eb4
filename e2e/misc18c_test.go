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
