package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
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

// TestDateTimeEdgeErrorsAsPostgres: date_bin, to_timestamp and casts to timestamp at the edges
// of the ranges raise PostgreSQL 15's SQLSTATEs; a value PostgreSQL holds and flightsrv's
// nanosecond timestamps cannot is 22008 naming the range, a stride they cannot hold refused by
// name.
func TestDateTimeEdgeErrorsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for q, state := range map[string]string{
			"SELECT to_timestamp(1e300)":  "22008",
			"SELECT to_timestamp(-1e300)": "22008",
			"SELECT to_timestamp(1e20)":   "22008",
			"SELECT date_bin('-1 hour', timestamp '2001-01-01', timestamp '2000-01-01')":       "22008",
			"SELECT date_bin('0 seconds', timestamptz '2001-01-01', timestamptz '2000-01-01')": "22008",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		// PostgreSQL answers these but the first (its 0A000 too); flightsrv's timestamps end
		// in 2262.
		for q, want := range map[string]codes.Code{
			"SELECT date '2300-01-01'::timestamp":                                            codes.InvalidArgument,
			"SELECT date '2300-01-01'::timestamptz":                                          codes.InvalidArgument,
			"SELECT x::timestamp FROM (VALUES (date '2300-01-01'), (NULL)) v(x)":             codes.InvalidArgument,
			"SELECT date_bin('300 years', timestamp '2001-01-01', timestamp '2000-01-01')":   codes.Unimplemented,
			"SELECT date_bin('110000 days', timestamp '2001-01-01', timestamp '2000-01-01')": codes.Unimplemented,
		} {
			_, err := run(ctx, cl.c, q)
			wantState := map[codes.Code]string{codes.InvalidArgument: "22008", codes.Unimplemented: "0A000"}[want]
			if status.Code(err) != want || sqlstateOf(err) != wantState {
				t.Errorf("%s: %v (SQLSTATE %q), want %v %s", q, err, sqlstateOf(err), want, wantState)
			}
		}
	}
}

// corr18Mods are two relations of columns with type modifiers: varchar(5), numeric(6,2),
// char(4).
const (
	corr18ModsA = "(SELECT 'x'::varchar(5) AS k, 1.5::numeric(6,2) AS n, 'ab'::char(4) AS c UNION ALL SELECT 'y'::varchar(5), 2::numeric(6,2), 'cd '::char(4)) a"
	corr18ModsB = "(SELECT 'x'::varchar(5) AS k, 1.5::numeric(6,2) AS n, 'ab'::char(4) AS c UNION ALL SELECT 'z'::varchar(5), 3.125::numeric(6,2), NULL::char(4)) b"
)

// TestTypeModifiersCarriedAsPostgres: type modifiers survive JOIN … USING's merged columns,
// DISTINCT ON and GREATEST/LEAST/COALESCE as PostgreSQL carries them: numeric(p,s)'s scale in
// its text, char(n)'s padding semantics.
func TestTypeModifiersCarriedAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT k, n::text, c::text, c || '|', length(c), octet_length(c) FROM " + corr18ModsA + " JOIN " + corr18ModsB + " USING (k, n, c) ORDER BY 1",
		"SELECT k, a.n::text, b.c || '|' FROM " + corr18ModsA + " FULL JOIN " + corr18ModsB + " USING (k) ORDER BY 1",
		"SELECT k, n::text, c || '|' FROM " + corr18ModsA + " NATURAL LEFT JOIN " + corr18ModsB + " ORDER BY 1",
		"SELECT DISTINCT ON (k) k, n::text, c || '|', octet_length(c) FROM " + corr18ModsA + " ORDER BY k, n",
		"SELECT GREATEST(a.n, b.n)::text, LEAST(a.n, b.n)::text, COALESCE(a.c, b.c) || '|', GREATEST(a.c, b.c) || '|', octet_length(COALESCE(b.c, a.c)), COALESCE(b.n, a.n)::text FROM " + corr18ModsA + ", " + corr18ModsB + " ORDER BY 1, 2, 3, 4",
		"SELECT LEAST(a.k, 'x')::text, GREATEST(a.n, 1.50)::text FROM " + corr18ModsA + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		// Types without a common one are named as PostgreSQL names them: character(n) is
		// character, varchar(n) character varying.
		for _, q := range []string{
			"SELECT COALESCE('a'::char(4), 1)",
			"SELECT GREATEST(1, 'a'::varchar(3))",
			"SELECT LEAST(1, 'a'::varchar(3))",
			"SELECT 'a'::char(4) UNION SELECT 1",
			"SELECT 1 UNION SELECT 'a'::varchar(2)",
			"SELECT k FROM (SELECT 'a'::char(2) k) a JOIN (SELECT 1 k) b USING (k)",
			"SELECT k FROM (SELECT 'a'::text k) a NATURAL JOIN (SELECT 1 k) b",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "42804")
		}
	}
}
