package e2e

import "testing"

// TestVariadicCallsNotConfusedAsPostgres: calls of one function with more or fewer arguments
// are different expressions everywhere the planner and the executor match expressions: a
// JSON call computed once and shared, window functions grouped by their window, ORDER BY
// and DISTINCT ON keys matched against the select list, an aggregate's ORDER BY against its
// argument, IN lists grouped by their left side (GROUP BY keys: TestQueryShapesRefusedAsPostgres).
// substrait-go's ScalarFunction.Equals compares the first call's arguments only (concat(a, b)
// "equals" concat(a, b, c), and the other way round indexes past the arguments).
func TestVariadicCallsNotConfusedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const v = "(VALUES (1, 'a', 'x', 'p'), (2, 'a', 'x', 'q'), (3, 'b', 'y', 'p'), (4, 'a', 'y', 'q')) t(id, a, b, c)"
	const j = `(VALUES (1, '{"a":{"b":"1","c":"2"},"d":"3"}'::json), (2, '{"a":{"b":"4"},"d":"5"}'::json)) t(id, j)`
	const ord = "FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01 06:00' AND timestamp < '2001-04-01 07:00'"
	qs := []string{
		"SELECT id, json_extract_path_text(j, 'a'), json_extract_path_text(j, 'a', 'b') FROM " + j + " ORDER BY id",
		"SELECT id, json_extract_path_text(j, 'a', 'b'), json_extract_path_text(j, 'a') FROM " + j + " ORDER BY id",
		"SELECT id, j #>> '{a}', j #>> '{a,b}', j #>> '{a,c}' FROM " + j + " ORDER BY id",
		"SELECT id, json_extract_path_text(value, 'delay'), json_extract_path_text(value, 'delay', 'x') " + ord + " ORDER BY id LIMIT 5",
		"SELECT id, concat(a, b), concat(a, b, c) FROM " + v + " ORDER BY id",
		"SELECT id, concat(a, b, c), concat(a, b) FROM " + v + " ORDER BY id",
		"SELECT id, count(*) OVER (PARTITION BY concat(a, b)), count(*) OVER (PARTITION BY concat(a, b, c)) FROM " + v + " ORDER BY id",
		"SELECT id, count(*) OVER (PARTITION BY concat(a, b, c)), count(*) OVER (PARTITION BY concat(a, b)) FROM " + v + " ORDER BY id",
		"SELECT id, row_number() OVER (ORDER BY concat(a, b), id), row_number() OVER (ORDER BY concat(a, b, c), id) FROM " + v + " ORDER BY id",
		"SELECT concat(a, b) AS k FROM " + v + " ORDER BY concat(a, b, c), id",
		"SELECT concat(a, b, c) AS k FROM " + v + " ORDER BY concat(a, b), id",
		"SELECT DISTINCT ON (concat(a, b)) id, concat(a, b, c) FROM " + v + " ORDER BY concat(a, b), id",
		"SELECT DISTINCT concat(a, b) FROM " + v + " ORDER BY 1",
		"SELECT id, coalesce(NULL, a), coalesce(NULL, NULL, b), greatest(a, b), greatest(a, b, c), least(c, b), least(c, b, a) FROM " + v + " ORDER BY id",
		"SELECT id FROM " + v + " WHERE concat(a, b) IN ('ax', 'by') AND concat(a, b, c) IN ('axq', 'byp') ORDER BY id",
		"SELECT id FROM " + v + " WHERE concat(a, b) IN ('ax', 'by') OR concat(a, b, c) IN ('ayq') ORDER BY id",
		"SELECT concat(a, b), count(*) FROM " + v + " GROUP BY concat(a, b) ORDER BY 1",
		"SELECT concat(a, b, c), count(*) FROM " + v + " GROUP BY ROLLUP (concat(a, b, c), concat(a, b)) ORDER BY 1, 2",
		"SELECT array_agg(concat(a, b, c) ORDER BY concat(a, b) DESC, id)::text, string_agg(concat(a, b), ',' ORDER BY concat(a, b, c) DESC, id) FROM " + v,
		"SELECT array_agg(concat(a, b) ORDER BY concat(a, b, c) DESC)::text, array_agg(concat(a, b, c) ORDER BY concat(a, b))::text FROM " + v + " WHERE id < 4",
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY concat(a, b)), percentile_disc(0.5) WITHIN GROUP (ORDER BY concat(a, b, c)) FROM " + v,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}
