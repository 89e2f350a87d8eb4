package e2e

import "testing"

// TestGroupingSetsOrderByAsPostgres: ORDER BY an aggregate or another expression over the
// grouped rows of ROLLUP, CUBE and GROUPING SETS answers PostgreSQL's rows (trial24's D3: it
// was 42803 or 42P10); an output alias inside an ORDER BY expression is PostgreSQL's 42703.
func TestGroupingSetsOrderByAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT origin, count(*)" + trial23Where + " GROUP BY ROLLUP (origin) ORDER BY count(*) DESC, origin",
		// Not CUBE (origin, …) ORDER BY origin here: PostgreSQL 15 drops a sort key its WHERE
		// pins (origin = 'ORD') though grouping sets make it NULL in some rows.
		"SELECT value->>'destination' d, (value->>'delay')::int > 0 late, count(*) n" + trial23Where + " GROUP BY CUBE (value->>'destination', (value->>'delay')::int > 0) ORDER BY sum((value->>'delay')::int) DESC NULLS LAST, 1, 2 LIMIT 12",
		"SELECT value->>'destination' d, (value->>'delay')::int > 0 late, avg((value->>'delay')::int)::text" + trial23Where + " GROUP BY GROUPING SETS ((value->>'destination'), ((value->>'delay')::int > 0), ()) ORDER BY avg((value->>'delay')::int), 1, 2",
		"SELECT origin, count(*)" + trial23Where + " GROUP BY ROLLUP (origin) ORDER BY origin || 'x' NULLS FIRST",
		"SELECT value->>'destination' d, count(*) c" + trial23Where + " GROUP BY ROLLUP (value->>'destination') ORDER BY max(id), c",
		"SELECT value->>'destination' d, count(*) c" + trial23Where + " GROUP BY ROLLUP (value->>'destination') ORDER BY c DESC, d LIMIT 5",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedWithState(t, ctx, cl.c, pg, "SELECT origin, count(*) c"+trial23Where+" GROUP BY ROLLUP (origin) ORDER BY c * 2", "42703")
	}
}
