package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18's correlated subqueries over a set-returning function of the outer row (corr18):
// EXISTS, NOT EXISTS, IN and scalar subqueries whose FROM calls json[b]_each,
// json[b]_array_elements or unnest on the outer row's values, against PostgreSQL over the
// same rows.

// corr18Docs are crafted rows: arrays of objects, an empty array, a NULL, an object.
const corr18Docs = `(VALUES (1, '[{"x": "y"}, {"x": "z"}]'), (2, '[]'), (3, NULL), (4, '[{"x": "y"}, {"x": "y"}, {"w": 1}]'),
 (5, '[{"x": null}]'), (6, '[{"x": "q"}]'), (7, '[{"x": "y"}]'))`

// TestCorrelatedSetReturningAsPostgres: correlated subqueries over set-returning functions
// of the outer row answer PostgreSQL's rows.
func TestCorrelatedSetReturningAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT i FROM " + corr18Docs + " v(i, d) WHERE EXISTS (SELECT 1 FROM json_array_elements(d::json) e WHERE e->>'x' = 'y') ORDER BY i",
		"SELECT i FROM " + corr18Docs + " v(i, d) WHERE NOT EXISTS (SELECT 1 FROM json_array_elements(d::json) e WHERE e->>'x' = 'y') ORDER BY i",
		"SELECT i, EXISTS (SELECT 1 FROM jsonb_array_elements(d::jsonb) e WHERE e->>'x' IS NULL) FROM " + corr18Docs + " v(i, d) ORDER BY i",
		"SELECT i, (SELECT count(*) FROM json_array_elements(d::json) e WHERE e->>'x' = 'y') FROM " + corr18Docs + " v(i, d) ORDER BY i",
		"SELECT i, (SELECT count(*) FROM json_array_elements(d::json)), (SELECT max(e->>'x') FROM json_array_elements(d::json) e) FROM " + corr18Docs + " v(i, d) ORDER BY i",
		"SELECT i FROM " + corr18Docs + " v(i, d) WHERE 'z' IN (SELECT e->>'x' FROM json_array_elements(d::json) e) ORDER BY i",
		"SELECT i FROM " + corr18Docs + " v(i, d) WHERE 'z' NOT IN (SELECT e->>'x' FROM json_array_elements(d::json) e) ORDER BY i",
		"SELECT i, (SELECT string_agg(x, ',' ORDER BY x) FROM json_array_elements_text(d::json) x) FROM " + corr18Docs + " v(i, d) ORDER BY i",
		"SELECT a, b, (SELECT max(x) FROM unnest(ARRAY[a, b, a + b]) x), (SELECT count(x) FROM unnest(ARRAY[a, b]) x WHERE x > 1) FROM (VALUES (1, 2), (3, NULL), (NULL, NULL)) v(a, b) ORDER BY 1, 2",
		"SELECT a, (SELECT sum(g) FROM generate_series(1, a) g) FROM (VALUES (1), (3), (0), (NULL)) v(a) ORDER BY 1",
		"SELECT a FROM (VALUES (1), (3), (0), (NULL)) v(a) WHERE EXISTS (SELECT 1 FROM generate_series(1, a) g WHERE g = 2) ORDER BY 1",
		"SELECT a, (SELECT g FROM generate_series(1, a) g ORDER BY g DESC LIMIT 1) FROM (VALUES (1), (3), (0), (NULL)) v(a) ORDER BY 1",
		// The flights' documents.
		"SELECT count(*) FROM flights t WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' AND EXISTS (SELECT 1 FROM json_each_text(t.value) e WHERE e.key = 'destination' AND e.value = 'BOS')",
		"SELECT id, (SELECT count(*) FROM jsonb_each(t.value::jsonb) e WHERE e.value::text LIKE '%1%') FROM flights t WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00' ORDER BY timestamp, id",
		"SELECT id, (SELECT string_agg(key, ',' ORDER BY key) FROM json_object_keys(t.value) key) FROM flights t WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00' ORDER BY timestamp, id",
		// An outer column beside the function's, the correlation in WHERE and the select list.
		"SELECT i, k FROM " + corr18Docs + " v(i, d), (VALUES ('y'), ('q')) w(k) WHERE EXISTS (SELECT 1 FROM json_array_elements(d::json) e WHERE e->>'x' = k) ORDER BY i, k",
		"SELECT i, (SELECT count(*) FILTER (WHERE e->>'x' = 'y') + i FROM json_array_elements(d::json) e HAVING count(*) > 0) FROM " + corr18Docs + " v(i, d) ORDER BY i",
		"SELECT i, (SELECT e.v->>'x' || i FROM json_array_elements(d::json) WITH ORDINALITY e(v, n), (VALUES (1)) o(k) WHERE n = k) FROM " + corr18Docs + " v(i, d) ORDER BY i",
		// Errors only from the rows that pair: the failing row is filtered out.
		"SELECT i, (SELECT sum(x::int) FROM json_array_elements_text(d::json) x) FROM (VALUES (1, '[1, 2]'), (2, '[\"a\"]'), (3, NULL)) v(i, d) WHERE i <> 2 ORDER BY i",
		"SELECT i FROM (VALUES (1, '[1, 2]'), (2, '{}')) v(i, d) WHERE i = 1 AND EXISTS (SELECT 1 FROM json_array_elements(d::json) x WHERE x::text = '2') ORDER BY i",
		// Whole-row references to a function of one column, uncorrelated.
		`SELECT e->>'x' FROM json_array_elements('[{"x": 1}, {"x": "b"}]') e ORDER BY 1`,
		`SELECT x FROM json_array_elements_text('[1, "a", null]') x ORDER BY 1`,
		"SELECT i, x FROM (VALUES (1, '[\"p\", \"q\"]')) v(i, d), jsonb_array_elements_text(d::jsonb) x ORDER BY 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT i, (SELECT sum(x::int) FROM json_array_elements_text(d::json) x) FROM (VALUES (1, '[1, 2]'), (2, '[\"a\"]')) v(i, d)":             "22P02",
			"SELECT i FROM (VALUES (1, '[1, 2]'), (2, '{}')) v(i, d) WHERE EXISTS (SELECT 1 FROM json_array_elements(d::json) x WHERE x::text = '2')": "22023",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT i, (SELECT count(*) FROM json_array_elements(d::json) e, (VALUES (1)) w(k)) FROM " + corr18Docs + " v(i, d)":                  "beside other FROM items",
			"SELECT i FROM " + corr18Docs + " v(i, d) WHERE EXISTS (SELECT 1 FROM (VALUES (1)) w(k) JOIN json_array_elements(d::json) e ON true)": "under a join",
		})
	}
}
