package e2e

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/server"
)

// Issue 18's set-returning functions over rows (srf18): json[b]_each[_text],
// json[b]_array_elements[_text], json[b]_object_keys, generate_series and unnest over the
// rows of other FROM items (LATERAL, implicit or written), WITH ORDINALITY, ROWS FROM, and in
// the select list, against PostgreSQL over the same rows and constants.

// srf18Docs are crafted documents: escapes, unicode, duplicate keys, empty containers,
// nulls, nested values with inner whitespace, numbers jsonb rewrites.
const srf18Docs = `(VALUES (1, '{"b": [1,  2], "a":1, "a": "x\u00e9\"y", "n": null, "\u00e9k\\n": {"z" : 1.50}}'),
 (2, '{}'), (3, '{"k": "v"}'), (4, '{"a": {"b": [ ]}, "c": true, "d": false, "e": 1e2, "f": -0.0}'), (5, NULL),
 (6, '{"x": "\ud83d\ude00", "y": "tab\there"}'), (7, '{"dup": 1, "dup": 2, "dup": 3}'))`

// srf18Arrays are crafted arrays.
const srf18Arrays = `(VALUES (1, '[1, "a", null, [ 2 , 3 ], {"k" : "v"}, true, 1.50, "\u00e9\n"]'), (2, '[]'), (3, NULL),
 (4, '[[]]'), (5, '[{}, {}, 1e3]'), (6, '["\"quoted\"", "back\\\\slash"]'))`

// TestSetReturningFunctionsAsPostgres: the JSON set-returning functions, generate_series and
// unnest over other FROM items' rows answer PostgreSQL's rows and types.
func TestSetReturningFunctionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		// Crafted documents, json and jsonb, in FROM after the documents (implicit LATERAL).
		"SELECT i, e.key, e.value::text FROM " + srf18Docs + " v(i, d), json_each(d::json) AS e ORDER BY i, 2, 3",
		"SELECT i, e.key, e.value::text, ordinality FROM " + srf18Docs + " v(i, d), json_each(d::json) WITH ORDINALITY AS e ORDER BY i, ordinality",
		"SELECT i, key, value FROM " + srf18Docs + " v(i, d), json_each_text(d::json) ORDER BY i, 2, 3",
		"SELECT i, e.key, e.value::text, n FROM " + srf18Docs + " v(i, d), jsonb_each(d::jsonb) WITH ORDINALITY AS e(key, value, n) ORDER BY i, n",
		"SELECT i, k, v FROM " + srf18Docs + " v(i, d) CROSS JOIN LATERAL jsonb_each_text(d::jsonb) AS e(k, v) ORDER BY i, k",
		"SELECT i, k, n FROM " + srf18Docs + " v(i, d), json_object_keys(d::json) WITH ORDINALITY AS k(k, n) ORDER BY i, n",
		"SELECT i, k FROM " + srf18Docs + " v(i, d), jsonb_object_keys(d::jsonb) AS k ORDER BY i, k",
		"SELECT i, x.value::text, ordinality FROM " + srf18Arrays + " v(i, d), json_array_elements(d::json) WITH ORDINALITY AS x ORDER BY i, ordinality",
		"SELECT i, x.value::text FROM " + srf18Arrays + " v(i, d), jsonb_array_elements(d::jsonb) AS x ORDER BY i, 2",
		"SELECT i, value, value IS NULL FROM " + srf18Arrays + " v(i, d), json_array_elements_text(d::json) ORDER BY i, 2",
		"SELECT i, x, n FROM " + srf18Arrays + " v(i, d), jsonb_array_elements_text(d::jsonb) WITH ORDINALITY AS t(x, n) ORDER BY i, n",
		// LEFT JOIN LATERAL … ON true keeps the rows without elements.
		"SELECT i, x.value::text, ordinality FROM " + srf18Arrays + " v(i, d) LEFT JOIN LATERAL json_array_elements(d::json) WITH ORDINALITY AS x ON true ORDER BY i, ordinality",
		"SELECT i, e.key, e.value FROM " + srf18Docs + " v(i, d) LEFT JOIN jsonb_each_text(d::jsonb) AS e ON true ORDER BY i, 2",
		// JOIN LATERAL … ON a condition.
		"SELECT i, e.key FROM " + srf18Docs + " v(i, d) JOIN LATERAL jsonb_each(d::jsonb) AS e ON e.key <> 'a' AND i > 1 ORDER BY i, 2",
		// Subqueries correlated with a function's columns (decorrelated over them).
		"SELECT i, e.key FROM " + srf18Docs + " v(i, d), jsonb_each(d::jsonb) e WHERE EXISTS (SELECT 1 FROM (VALUES ('a'), ('k'), ('dup')) w(k) WHERE w.k = e.key) ORDER BY i, 2",
		"SELECT i, e.key, (SELECT count(*) FROM (VALUES ('a'), ('a'), ('b')) w(k) WHERE w.k <= e.key) FROM " + srf18Docs + " v(i, d), json_each_text(d::json) e ORDER BY i, 2",
		// Subqueries correlated with the function's argument (corr18: decorrelated over it).
		"SELECT i, (SELECT count(*) FROM json_array_elements(d::json)) FROM (VALUES (1, '[1,2]')) v(i, d)",
		"SELECT i FROM (VALUES (1, '[1,2]')) v(i, d) WHERE EXISTS (SELECT 1 FROM json_array_elements_text(d::json) x WHERE x = '2')",
		// Alone in FROM, of constants.
		`SELECT key, value::text FROM jsonb_each('{"b":1, "a":[1, 2.50]}') ORDER BY 1`,
		`SELECT key, value::text FROM json_each('{"b":1, "a" : [1,  2.50], "b": null}')`,
		`SELECT * FROM json_array_elements_text('[1, "x", null]') WITH ORDINALITY`,
		`SELECT t FROM json_object_keys('{"a":1,"b":2}') AS t`,
		`SELECT t.value::text FROM jsonb_array_elements('[{"b":1,"a":2}]') AS t`,
		// generate_series and unnest over the rows before them, with ORDINALITY and ROWS FROM.
		"SELECT a, g FROM (VALUES (1), (3), (0), (NULL)) x(a), generate_series(1, a) g ORDER BY a, g",
		"SELECT a, g, n FROM (VALUES (1), (3), (0), (NULL)) x(a) LEFT JOIN LATERAL generate_series(a, 1, -1) WITH ORDINALITY AS s(g, n) ON true ORDER BY a, g",
		"SELECT a, g FROM (VALUES (1::bigint), (4)) x(a), generate_series(a, 10, a + 1) g ORDER BY a, g",
		"SELECT a, b, u, n FROM (VALUES (1, 2), (3, NULL)) x(a, b), unnest(ARRAY[a, b, a + b]) WITH ORDINALITY AS u(u, n) ORDER BY a, n",
		"SELECT * FROM generate_series(1, 3) WITH ORDINALITY",
		"SELECT * FROM generate_series(1, 3) a, generate_series(a, 3) b ORDER BY 1, 2",
		"SELECT * FROM generate_series(2147483645, 2147483647) a, generate_series(a, 2147483647, 2) b ORDER BY 1, 2",
		"SELECT a, b FROM generate_series(-9223372036854775807, -9223372036854775806) a, generate_series(a, -9223372036854775808, -1) b ORDER BY 1, 2",
		"SELECT a, s.* FROM (VALUES (2), (4)) x(a), ROWS FROM (generate_series(1, a), json_array_elements_text('[\"p\", \"q\", \"r\"]')) AS s ORDER BY a, 2",
		// The flights' documents.
		"SELECT id, key, e.value::text FROM flights f, json_each(f.value) e WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00' ORDER BY timestamp, id, key",
		"SELECT id, key, e.value FROM flights f CROSS JOIN LATERAL jsonb_each_text(f.value::jsonb) AS e WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00' ORDER BY timestamp, id, key",
		"SELECT k, count(*) FROM flights f, jsonb_object_keys(f.value::jsonb) k WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY k ORDER BY k",
		// Select-list set-returning functions (PostgreSQL 10's ProjectSet: zipped to the longest).
		"SELECT jsonb_object_keys(value::jsonb), count(*)" + json18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT json_object_keys(value) AS k, count(*)" + json18Where + " GROUP BY k ORDER BY k",
		"SELECT jsonb_object_keys(value::jsonb), count(*)" + json18Where + " GROUP BY jsonb_object_keys(value::jsonb) ORDER BY 2, 1",
		"SELECT id, json_object_keys(value)" + json18Where + " ORDER BY timestamp, id, 2",
		"SELECT generate_series(1, 3), generate_series(1, 2)",
		"SELECT a, generate_series(1, a), json_array_elements_text('[\"x\", \"y\"]') FROM (VALUES (1), (3)) x(a) ORDER BY 1, 2",
		"SELECT i, jsonb_array_elements(d::jsonb)::text AS e FROM " + srf18Arrays + " v(i, d) ORDER BY i, e",
		"SELECT DISTINCT json_object_keys(d::json) k FROM " + srf18Docs + " v(i, d) ORDER BY k",
		"SELECT a, unnest(ARRAY[a, a * 10]) FROM (VALUES (1), (2)) x(a) ORDER BY 1, 2",
		"SELECT * FROM (SELECT generate_series(1, 3) g) s WHERE g > 1 ORDER BY g",
		"SELECT *, generate_series(1, a) FROM (VALUES (1, 'x'), (2, 'y')) x(a, b) ORDER BY 1, 3",
		"SELECT x.*, generate_series(1, 2) AS g, jsonb_array_elements_text('[\"p\"]') FROM (VALUES (1)) x(a) ORDER BY g",
		"SELECT generate_series(1, 2) UNION ALL SELECT 5 ORDER BY 1",
		"SELECT count(*) FROM (VALUES (1), (2)) x(a), LATERAL generate_series(1, a)",
		`SELECT x.value::text FROM (VALUES ('{"a": {"b": [1, {"c": 2}]}}'::jsonb)) v(d), jsonb_array_elements(d->'a'->'b') x ORDER BY 1`,
		`SELECT key FROM (VALUES ('{"a": 1, "b": 1.0, "c": "1"}'::jsonb)) v(d), jsonb_each(d) WHERE value = '1' ORDER BY 1`,
		`SELECT jsonb_array_elements_text(d) FROM (VALUES ('[1, "x"]'::jsonb), (NULL)) v(d) ORDER BY 1`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes,
			`SELECT e.key, e.value, t.value AS tv FROM json_each('{"a":{"b":1}}') e, jsonb_each_text('{"x": "y"}') t`,
			`SELECT x.value, y.value AS yv FROM json_array_elements('[1]') x, jsonb_array_elements_text('[2]') y`,
		)...)
		for q, state := range map[string]string{
			`SELECT * FROM json_each('[1]')`:                                "22023",
			`SELECT * FROM json_each('1')`:                                  "22023",
			`SELECT * FROM jsonb_each('null')`:                              "22023",
			`SELECT * FROM jsonb_each_text('[]')`:                           "22023",
			`SELECT * FROM json_array_elements('{}')`:                       "22023",
			`SELECT * FROM json_array_elements_text('3')`:                   "22023",
			`SELECT * FROM jsonb_array_elements('{}')`:                      "22023",
			`SELECT * FROM jsonb_array_elements_text('3')`:                  "22023",
			`SELECT * FROM json_object_keys('[]')`:                          "22023",
			`SELECT * FROM jsonb_object_keys('3')`:                          "22023",
			`SELECT * FROM json_array_elements('[1, 2')`:                    "22P02",
			`SELECT * FROM json_each_text('{"a":"x\u0000"}')`:               "22P05",
			`SELECT * FROM json_object_keys('{"a":1}') AS t(x, y)`:          "42P10",
			"SELECT * FROM (VALUES (1)) x(a), generate_series(1, 3, a - 1)": "22023",
			"SELECT * FROM (VALUES (1)) x(a), jsonb_each(a)":                "42883",
			"SELECT e.value::text FROM flights f, jsonb_array_elements(f.value::jsonb) e WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'": "22023",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT * FROM (VALUES (1)) x(a), regexp_split_to_table('a b', ' ')": "regexp_split_to_table",
			"SELECT json_each('{\"a\":1}')":                                      "json_each",
			"SELECT CASE WHEN true THEN generate_series(1, 2) END":               "CASE",
		})
	}
}

// TestSetReturningMemoryLimit: what a set-returning function produces counts against
// --query-memory: a 3 MB document's element, repeated beside the document it came from, is
// RESOURCE_EXHAUSTED naming an 8 MiB limit, and answers PostgreSQL's values without it.
func TestSetReturningMemoryLimit(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	e := newEnv(t)
	small := dial(t, serverWith(t, e, func(c *server.Config) { c.QueryMemory = 8 << 20 }))
	q := `SELECT length(x.value), length(d) FROM (SELECT '["' || repeat('x', 3000000) || '", 1]' AS d) v, json_array_elements_text(d::json) x ORDER BY 1`
	if _, err := run(ctx, small, q); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("%.60s: %v, want RESOURCE_EXHAUSTED naming the limit", q, err)
	}
	// The document alone, and its elements without it, fit.
	for _, ok := range []string{
		`SELECT length(d) FROM (SELECT '["' || repeat('x', 3000000) || '", 1]' AS d) v`,
		`SELECT length(x.value) FROM json_array_elements_text(('["' || repeat('x', 3000000) || '", 1]')::json) x`,
	} {
		res, err := run(ctx, small, ok)
		if err != nil {
			t.Fatalf("%.60s under 8 MiB: %v", ok, err)
		}
		res.release()
	}
	comparePG(t, ctx, pg, one(clients[0].c), sameSQL(pgText, q)...)
}

// TestTimestampSeriesAsPostgres (issue 18, trial26): generate_series of timestamps over other
// FROM items' rows, with ORDINALITY and in a select list (the executor's ProjectSet), and a
// constant series past MaxSeriesRows (a week of minutes, 10,080 rows, LEFT JOINed to the
// flights' counts per minute as Grafana fills gaps; a long integer series) answer
// PostgreSQL's rows and types; a zero step (a month less 30 days included) is 22023.
func TestTimestampSeriesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		// Calendar months added to the previous value: January 31, February 28, March 28, ….
		"SELECT t::text, g::text FROM (VALUES (timestamp '2001-01-31'), (timestamp '2000-01-31 10:30'), (NULL)) x(t), generate_series(t, t + interval '5 months', interval '1 month') g ORDER BY 1, 2",
		"SELECT t::text, g::text FROM (VALUES (timestamptz '2001-03-02 00:00'), (timestamptz '2001-03-01 01:00')) x(t), generate_series(t, timestamptz '2001-03-01', '-7 hours') g ORDER BY 1, 2",
		"SELECT s::text, g::text FROM (VALUES (interval '1 day'), (interval '-1 day'), (interval '1 mon 1 day 01:00'), (NULL)) x(s), generate_series(timestamp '2001-01-31', timestamp '2001-04-02', s) g ORDER BY 1, 2",
		"SELECT d::text, g::text FROM (VALUES (date '2001-02-27'), (date '2001-03-01')) x(d), generate_series(d, d + 2, interval '12 hours') g ORDER BY 1, 2",
		"SELECT a, g::text FROM (VALUES (1)) x(a), generate_series(date '2001-01-01' + a, timestamp '2001-01-09', interval '1 day') g ORDER BY 2",
		"SELECT g::text, n FROM generate_series(timestamp '2001-01-31', '2001-05-01', '1 mon') WITH ORDINALITY AS s(g, n)",
		"SELECT generate_series(timestamptz '2001-01-31', '2001-05-01', '1 mon')::text",
		"SELECT a, g::text FROM (VALUES (1), (2)) x(a) LEFT JOIN LATERAL generate_series(timestamp '2001-01-01', timestamp '2001-01-02', CASE WHEN a = 1 THEN interval '-1 day' ELSE interval '1 day' END) g ON true ORDER BY 1, 2",
		// Past MaxSeriesRows: a week of minutes, and integers.
		"SELECT count(*), min(g)::text, max(g)::text FROM generate_series(timestamp '2001-01-01', timestamp '2001-01-07 23:59', interval '1 minute') g",
		"SELECT m::text, COALESCE(c, 0) FROM generate_series('2001-03-26 00:00'::timestamptz, '2001-04-01 23:59'::timestamptz, '1 minute') m " +
			"LEFT JOIN (SELECT date_trunc('minute', timestamp) AS t, count(*) AS c FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-26' AND timestamp < '2001-04-02' GROUP BY 1) f ON f.t = m ORDER BY m",
		"SELECT count(*), sum(g) FROM generate_series(1, 100000) g",
		"SELECT g FROM generate_series(-5::bigint, -250000, -7) g WHERE g % 10007 = 0 ORDER BY g",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes,
			"SELECT g FROM (VALUES (timestamp '2001-01-01')) x(t), generate_series(t, t, interval '1 day') g",
			"SELECT g FROM (VALUES (date '2001-01-01')) x(t), generate_series(t, t, interval '1 day') g",
			"SELECT count(*), max(g) FROM generate_series(timestamp '2001-01-01', timestamp '2001-01-07 23:59', interval '1 minute') g",
		)...)
		for q, state := range map[string]string{
			"SELECT * FROM (VALUES (interval '1 mon -30 days')) x(s), generate_series(timestamp '2001-01-01', '2001-02-01', s)": "22023",
			"SELECT * FROM (VALUES (interval '0')) x(s), generate_series(timestamptz '2001-01-01', '2001-02-01', s)":            "22023",
			"SELECT * FROM generate_series(timestamp '2001-01-01', '2001-02-01', '1 mon -30 days')":                             "22023",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestLongSeriesMemoryLimit: a constant generate_series past MaxSeriesRows streams under
// --query-memory (five million rows counted under 8 MiB), and what holds its rows is bounded
// by it (sorting them is RESOURCE_EXHAUSTED naming the limit).
func TestLongSeriesMemoryLimit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	small := dial(t, serverWith(t, e, func(c *server.Config) { c.QueryMemory = 8 << 20 }))
	for q, want := range map[string]string{
		"SELECT count(*)::text, max(g)::text FROM generate_series(1, 5000000) g":                                                                       "5000000 5000000",
		"SELECT count(*)::text, max(g)::text FROM generate_series(timestamptz '2001-01-01', timestamptz '2001-01-31 23:59:59', interval '1 second') g": "2678400 2001-01-31 23:59:59+00",
	} {
		res, err := run(ctx, small, q)
		if err != nil {
			t.Fatalf("%s under 8 MiB: %v", q, err)
		}
		rows := flightStrings(t, res)
		res.release()
		if len(rows) != 1 || strings.Join(rows[0], " ") != want {
			t.Errorf("%s: %v, want %s", q, rows, want)
		}
	}
	q := "SELECT g FROM generate_series(1, 5000000) g ORDER BY g DESC"
	if _, err := run(ctx, small, q); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--query-memory") {
		t.Errorf("%s: %v, want RESOURCE_EXHAUSTED naming the limit", q, err)
	}
}
