package e2e

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18's record-returning set-returning functions in a select list (srf18c): a field of
// json[b]_each[_text]'s record, (json_each(value)).key, .value and .*, beside other columns
// and other set-returning functions (PostgreSQL 10's ProjectSet, zipped to the longest), under
// aggregates, GROUP BY, ORDER BY, DISTINCT, windows and an outer query's WHERE, against
// PostgreSQL over the same rows; the record as a whole is refused by name.

// TestRecordSetFunctionFieldsAsPostgres: (json_each(…)).key/.value/.* in a select list answer
// PostgreSQL's rows, types and column names.
func TestRecordSetFunctionFieldsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const where = " WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"
	qs := []string{
		// The crafted documents (duplicate keys, escapes, empty and NULL documents).
		"SELECT i, (json_each(d::json)).key, (json_each(d::json)).value::text FROM " + srf18Docs + " v(i, d) ORDER BY i, 2, 3",
		"SELECT i, (jsonb_each(d::jsonb)).key, (jsonb_each(d::jsonb)).value::text FROM " + srf18Docs + " v(i, d) ORDER BY i, 2, 3",
		"SELECT i, (json_each_text(d::json)).* FROM " + srf18Docs + " v(i, d) ORDER BY i, 2, 3",
		"SELECT (jsonb_each_text(d::jsonb)).*, i FROM " + srf18Docs + " v(i, d) ORDER BY 3, 1, 2",
		"SELECT i, (jsonb_each_text(d::jsonb)).value AS v, length((jsonb_each_text(d::jsonb)).key) FROM " + srf18Docs + " v(i, d) ORDER BY i, 2, 3",
		// Lockstep with other set-returning functions: the shorter padded with NULLs.
		"SELECT i, (json_each_text(d::json)).key, generate_series(1, 4) FROM " + srf18Docs + " v(i, d) ORDER BY i, 3",
		"SELECT i, (json_each_text(d::json)).value, json_object_keys(d::json), (jsonb_each('{\"p\": 1, \"q\": 2, \"r\": 3}')).key AS k FROM " + srf18Docs + " v(i, d) ORDER BY i, 4",
		// The field in an expression.
		"SELECT i, (jsonb_each(d::jsonb)).value->>'z', (json_each_text(d::json)).key || '!' FROM " + srf18Docs + " v(i, d) WHERE i = 1 ORDER BY 3, 2",
		// GROUP BY, ORDER BY and DISTINCT on the field; an aggregate and a WHERE over a
		// subquery selecting it.
		"SELECT (json_each(d::json)).key AS k, count(*) FROM " + srf18Docs + " v(i, d) GROUP BY 1 ORDER BY 1",
		"SELECT (jsonb_each_text(d::jsonb)).key, count(*) FROM " + srf18Docs + " v(i, d) GROUP BY (jsonb_each_text(d::jsonb)).key ORDER BY (jsonb_each_text(d::jsonb)).key DESC",
		"SELECT DISTINCT (json_each_text(d::json)).key FROM " + srf18Docs + " v(i, d) ORDER BY 1",
		"SELECT count(*), count(DISTINCT k), max(v) FROM (SELECT (json_each_text(d::json)).key AS k, (json_each_text(d::json)).value AS v FROM " + srf18Docs + " v(i, d)) s",
		"SELECT i, key, value FROM (SELECT i, (jsonb_each_text(d::jsonb)).* FROM " + srf18Docs + " v(i, d)) s WHERE key IN ('a', 'dup') ORDER BY 1, 2, 3",
		// Beside a window function (run over FROM's rows first) and an aggregate outside GROUP BY.
		"SELECT i, (json_each_text(d::json)).key, count(*) OVER () FROM " + srf18Docs + " v(i, d) WHERE i < 4 ORDER BY 1, 2",
		`SELECT count(*), (json_each_text('{"a": 1, "b": 2}')).* FROM ` + srf18Docs + " v(i, d) ORDER BY 2",
		// GROUP BY the key alone: the value's call runs after the grouping, on each group.
		`SELECT (json_each_text('{"a": 1, "b": 2}')).*, count(*) FROM ` + srf18Docs + " v(i, d) GROUP BY 1 ORDER BY 1, 2",
		"SELECT (json_each_text(d::json)).key, count(*) OVER (), (json_each_text(d::json)).value FROM " + srf18Docs + " v(i, d) WHERE i IN (3, 7) ORDER BY 1, 3",
		"SELECT DISTINCT ON ((jsonb_each_text(d::jsonb)).key) (jsonb_each_text(d::jsonb)).key, (jsonb_each_text(d::jsonb)).value FROM " + srf18Docs + " v(i, d) ORDER BY (jsonb_each_text(d::jsonb)).key, 2 DESC",
		"SELECT DISTINCT ON (json_object_keys(d::json)) json_object_keys(d::json), i FROM " + srf18Docs + " v(i, d) ORDER BY json_object_keys(d::json), 2 DESC",
		// In a WITH query, a UNION's branch, a scalar and a LATERAL subquery.
		"WITH e AS (SELECT i, (json_each_text(d::json)).* FROM " + srf18Docs + " v(i, d)) SELECT key, count(*), min(i) FROM e GROUP BY key ORDER BY key",
		"SELECT (jsonb_each_text(d::jsonb)).key FROM " + srf18Docs + " v(i, d) WHERE i = 4 UNION ALL SELECT (json_each_text('{\"z\": 0}')).value ORDER BY 1",
		"SELECT i, (SELECT (json_each_text(d::json)).value LIMIT 1) FROM " + srf18Docs + " v(i, d) WHERE i IN (3, 5) ORDER BY 1",
		"SELECT i, s.k, s.n FROM " + srf18Docs + " v(i, d), LATERAL (SELECT (jsonb_each(d::jsonb)).key AS k, generate_series(1, 2) AS n) s WHERE i IN (3, 7) ORDER BY 1, 3, 2",
		// Constants alone.
		`SELECT (json_each('{"b": 1, "a": [1,  2.50]}')).key, (json_each('{"b": 1, "a": [1,  2.50]}')).value::text`,
		// The flights' documents.
		"SELECT id, (json_each(value)).key, (json_each(value)).value::text FROM flights" + where + " ORDER BY timestamp, id, 2",
		"SELECT (jsonb_each_text(value::jsonb)).key, count(*), count(DISTINCT id) FROM flights" + where + " GROUP BY 1 ORDER BY 1",
		"SELECT id, value FROM (SELECT id, timestamp, (json_each_text(value)).* FROM flights" + where + ") s WHERE key = 'destination' ORDER BY timestamp, id",
	}
	typed := []string{
		`SELECT (json_each('{"a": {"b": 1}}')).*, (jsonb_each_text('{"x": "y"}')).value AS tv`,
		`SELECT (json_each_text('{"a": 1}')).key, generate_series(1, 2)`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes, typed...)...)
		// Column names as PostgreSQL names them.
		for _, q := range append(slices.Clone(typed), qs[2], qs[3], qs[4]) {
			sameColumnNames(t, ctx, cl.c, pg, q)
		}
		for q, state := range map[string]string{
			`SELECT (json_each('{"a": 1}')).foo`:    "42703",
			`SELECT (jsonb_each('{"a": 1}'))."KEY"`: "42703",
			`SELECT (json_each('{"a": 1}'))[1]`:     "42804",
			`SELECT (json_each('[1]')).key`:         "22023",
			`SELECT (jsonb_each_text('3')).value`:   "22023",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		// The value's call, run after the grouping, reads an ungrouped column (PostgreSQL's
		// 42803 names it v.d).
		refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{
			"SELECT (json_each_text(d::json)).*, count(*) FROM (VALUES ('{\"a\": 1}')) v(d) GROUP BY 1": "must appear in the GROUP BY clause",
		})
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			`SELECT json_each('{"a": 1}')`:                                  "json_each(...) in a select list returns a record, which is not supported: select (json_each(...)).key/.value or call it in FROM",
			"SELECT id, jsonb_each_text(value::jsonb) FROM flights" + where: "jsonb_each_text(...) in a select list returns a record",
			`SELECT (json_each('{"a": 1}')).key, json_each('{"a": 1}')`:     "json_each(...) in a select list returns a record",
			`SELECT json_each_text('{"a": 1}') IS NULL`:                     "json_each_text(...) in a select list returns a record",
			`SELECT ((json_each('{"a": 1}')).*).key`:                        `row expansion via "*" is not supported here`,
			`SELECT (json_each((json_each('{"a": {"b": 1}}')).value)).key`:  "set-returning functions in the arguments of a set-returning function",
			`SELECT e FROM json_each('{"a": 1}') e`:                         "whole-row references to a table or a function of several columns (e) are not supported: select its columns by name",
			`SELECT row(1, 2)`:                                              "row values",
		})
	}
	// The flights' documents, the value column declared json and not.
	for _, cl := range jsonDeclaredClients(t, ctx, newEnv(t)) {
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
			"SELECT id, (json_each(value)).key, (json_each(value)).value::text, generate_series(1, 7) FROM flights"+where+" ORDER BY timestamp, id, 4",
			"SELECT id, (json_each_text(value)).* FROM flights"+where+" ORDER BY timestamp, id, 2",
			"SELECT (json_each(value)).key, count(*) FROM flights"+where+" GROUP BY (json_each(value)).key ORDER BY 1",
		)...)
	}
}
