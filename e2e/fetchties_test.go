package e2e

import (
	"strings"
	"testing"
)

// TestFetchWithTiesAsPostgres: FETCH FIRST n ROWS WITH TIES answers PostgreSQL's rows over the
// same flights, routed, pushdown on and off: the first n rows in the ORDER BY's order and every
// peer of the last (rows equal on every key, NULLs equal), after OFFSET, over order keys with
// many ties and NULLs, in subqueries (FROM, IN, a CTE, a scalar subquery that then returns
// more than one row: PostgreSQL's 21000), over grouped rows, a UNION and DISTINCT; the count
// and offset as parameters; PostgreSQL's errors for a missing ORDER BY (42601), a NULL constant count
// and a negative one (2201W). A query whose rows tie in its order is read through an outer
// ORDER BY of every column, as PostgreSQL orders peers as it likes.
func TestFetchWithTiesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	routed := byName(clients)
	const w, d, nd = tiesFrom, tiesDelay, tiesNull
	queries := []string{
		"SELECT " + d + " AS d" + w + " ORDER BY 1 FETCH FIRST 5 ROWS WITH TIES",
		"SELECT " + d + " AS d" + w + " ORDER BY 1 DESC FETCH FIRST 3 ROWS WITH TIES",
		"SELECT origin, " + d + " AS d" + w + " ORDER BY 1, 2 FETCH FIRST 4 ROW WITH TIES",
		"SELECT " + d + " AS d" + w + " ORDER BY 1 OFFSET 4 FETCH NEXT 2 ROWS WITH TIES",
		"SELECT " + d + " AS d" + w + " ORDER BY 1 OFFSET 3 ROWS FETCH FIRST ROW WITH TIES",
		"SELECT " + nd + " AS k" + w + " ORDER BY 1 NULLS FIRST FETCH FIRST 1 ROW WITH TIES",
		"SELECT " + nd + " AS k" + w + " ORDER BY 1 DESC OFFSET 1 FETCH FIRST 2 ROWS WITH TIES",
		// Keys outside the select list; the rows read through an outer order.
		"SELECT * FROM (SELECT id, timestamp" + w + " ORDER BY " + d + " DESC, origin FETCH FIRST 3 ROWS WITH TIES) s ORDER BY 1, 2",
		"SELECT * FROM (SELECT id, " + d + " AS d" + w + " ORDER BY " + nd + " NULLS FIRST OFFSET 2 FETCH FIRST 2 ROWS WITH TIES) s ORDER BY 2, 1",
		// Grouped, DISTINCT, a UNION, a CTE, IN.
		"SELECT * FROM (SELECT " + d + " AS d, count(*) AS n" + w + " GROUP BY 1 ORDER BY 2 DESC FETCH FIRST 2 ROWS WITH TIES) s ORDER BY 2 DESC, 1",
		"SELECT DISTINCT " + d + " AS d" + w + " ORDER BY 1 FETCH FIRST 3 ROWS WITH TIES",
		"SELECT " + d + " AS d" + w + " UNION ALL SELECT " + d + w + " ORDER BY 1 FETCH FIRST 3 ROWS WITH TIES",
		"WITH top AS (SELECT origin, " + d + " AS d" + w + " ORDER BY d DESC FETCH FIRST 5 ROWS WITH TIES) SELECT origin, count(*), sum(d) FROM top GROUP BY 1 ORDER BY 1",
		"SELECT count(*), min(id) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' AND id IN (SELECT id" + w + " ORDER BY " + d + " FETCH FIRST 2 ROWS WITH TIES)",
		// A scalar subquery whose first row has no peer.
		"SELECT (SELECT id" + w + " ORDER BY timestamp, id FETCH FIRST 1 ROW WITH TIES)",
	}
	compared := comparePG(t, ctx, pg, routed, nonEmptyTyped(queries...)...)
	compared += comparePG(t, ctx, pg, routed, sameSQL(pgTypes,
		"SELECT "+d+" AS d"+w+" ORDER BY 1 FETCH FIRST 0 ROWS WITH TIES",
		"SELECT "+d+" AS d"+w+" ORDER BY 1 OFFSET 100000 FETCH FIRST 3 ROWS WITH TIES")...)
	t.Logf("%d queries, %d rows equal to PostgreSQL's", len(queries)+2, compared)

	// The count and the offset as parameters.
	sum := func(fetch string) string {
		return "SELECT count(*)::text || ',' || coalesce(sum(d), 0)::text AS v FROM (SELECT " + d + " AS d" + w + " ORDER BY 1 " + fetch + ") s"
	}
	for _, fetch := range []string{"FETCH FIRST ? ROWS WITH TIES", "OFFSET 2 FETCH FIRST $1 ROWS WITH TIES", "OFFSET ? FETCH FIRST 2 ROWS WITH TIES"} {
		q := sum(fetch)
		// A NULL parameter: no offset, and PostgreSQL's 2201W for a NULL count with ties.
		for _, v := range []any{int64(0), int64(3), int64(1 << 40), int64(-1), nil} {
			compareBound(ctx, t, pg, clients, q, strings.ReplaceAll(strings.Replace(q, "?", "$1", 1), "$1", "($1::bigint)"), v)
		}
	}

	// PostgreSQL's refusals.
	for _, c := range clients {
		for q, state := range map[string]string{
			"SELECT id" + w + " FETCH FIRST 2 ROWS WITH TIES":                         "42601",
			"SELECT id" + w + " ORDER BY id FETCH FIRST NULL ROWS WITH TIES":          "2201W",
			"SELECT id" + w + " ORDER BY id FETCH FIRST -1 ROWS WITH TIES":            "2201W",
			"SELECT (SELECT id" + w + " ORDER BY origin FETCH FIRST 1 ROW WITH TIES)": "21000",
			"SELECT id FROM (SELECT id" + w + " FETCH FIRST 2 ROWS WITH TIES) s":      "42601",
		} {
			refusedAsPostgres(t, ctx, c.c, pg, q, state)
		}
	}
}
