package e2e

import (
	"testing"
)

// TestRowValuesAsPostgres: row-value comparisons answer PostgreSQL's values over the same
// flights, routed, pushdown on and off: (a, b) = (x, y), <>, the orderings <, <=, >, >=
// (left to right, NULL at the first NULL pair), IS [NOT] DISTINCT FROM, [NOT] IN lists of
// rows, with NULLs on either side, in the select list and in WHERE; (a, b) [NOT] IN (SELECT
// x, y …) as a WHERE condition (NOT IN false or NULL where a subquery row's pair is NULL);
// PostgreSQL's errors for rows of unequal lengths (42601), a subquery of too many or too few
// columns (42601) and a pair without an operator (42883).
func TestRowValuesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	routed := byName(clients)
	const (
		w, d, nd = tiesFrom, tiesDelay, tiesNull
		order    = " ORDER BY timestamp, id"
	)
	queries := []string{
		"SELECT id, (origin, " + d + ") = ('ORD', 5), (origin, " + nd + ") <> ('BOS', 0), (" + d + ", " + nd + ") < (3, 1), (" + d + ", id) <= (0, 'x'), (" + nd + ", " + d + ") > (" + nd + ", 2), ROW(" + d + ", " + nd + ") >= ROW(1, NULL), (" + nd + ", origin, " + d + ") < (5, 'ORD', " + nd + ")" + w + order,
		"SELECT id, (origin, " + d + ") IS DISTINCT FROM ('ORD', " + nd + "), (" + d + ", " + nd + ") IS NOT DISTINCT FROM (0, NULL), (" + d + ", " + nd + ") IN ((0, NULL), (5, 5), (-3, -3)), (origin, " + nd + ") NOT IN (('ORD', 1), ('BOS', NULL))" + w + order,
		"SELECT id, origin" + w + " AND (origin, " + d + ") IN (('ORD', 0), ('BOS', 5))" + order,
		"SELECT id, origin" + w + " AND (origin, " + nd + ") NOT IN (('ORD', 1), ('BOS', NULL))" + order,
		"SELECT id" + w + " AND (" + d + ", id) >= (40, 'M')" + order,
		// IN (SELECT …) of rows.
		"SELECT id, origin" + w + " AND (origin, " + d + ") IN (SELECT origin, max(" + d + ")" + w + " GROUP BY origin)" + order,
		"SELECT count(*), min(id)" + w + " AND (origin, " + nd + ") NOT IN (SELECT origin, " + nd + w + " AND " + d + " > 20)",
		"SELECT id, origin" + w + " AND (origin, " + nd + ") NOT IN (SELECT 'ORD', NULL::int)" + order,
		"SELECT id, origin" + w + " AND NOT (origin, " + d + ") IN (SELECT origin, " + d + w + " AND " + d + " <> 0)" + order,
	}
	compared := comparePG(t, ctx, pg, routed, nonEmptyTyped(queries...)...)
	t.Logf("%d queries, %d rows equal to PostgreSQL's", len(queries), compared)

	for _, c := range clients {
		for q, state := range map[string]string{
			"SELECT (origin, 1) = (origin, 1, 2)" + w:                                "42601",
			"SELECT id" + w + " AND (origin, 1) IN ((origin, 1, 2))":                 "42601",
			"SELECT id" + w + " AND (origin, id) IN (SELECT origin, id, 1" + w + ")": "42601",
			"SELECT id" + w + " AND (origin, id, 1) IN (SELECT origin, id" + w + ")": "42601",
			"SELECT (" + d + ", origin) = (1, 2)" + w:                                "42883",
		} {
			refusedAsPostgres(t, ctx, c.c, pg, q, state)
		}
	}
}
