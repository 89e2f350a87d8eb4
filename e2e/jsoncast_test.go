package e2e

import "testing"

// TestJSONCastValidatesAsPostgres: a cast to json validates its text as PostgreSQL's json_in
// does (trial27's W1: 'ab'::json, CAST(id AS json) and (origin || '}')::json answered the
// text as a json value). A constant is refused whatever rows the query reads; a value computed
// per row, only in the rows the query evaluates; json keeps the text as written (whitespace,
// duplicate keys, \u0000 and unpaired surrogates, which only -> and ->> refuse).
func TestJSONCastValidatesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT ' [1, 2 ] '::json::text, '{"a":1, "a":2}'::json::text, '"\ud800"'::json::text, '"\u0000"'::json::text, 'null'::json IS NULL, json_typeof('1e5'::json)`,
		`SELECT COALESCE(NULL::json, '{"b" : 2}')::text, json_build_object('a', '[1,2]'::json)::text, (NULL::text)::json IS NULL`,
		`SELECT x::json::text FROM (VALUES ('ab'), ('[1]'), (' {"k": "v"} ')) t(x) WHERE x <> 'ab' ORDER BY 1`,
		"SELECT ('\"' || (value->>'destination') || '\"')::json::text, ('\"' || origin || '\"')::json::text, CAST('[\"' || id || '\"]' AS json)::text" + json18Where + " ORDER BY timestamp, id LIMIT 5",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{
			`SELECT 'ab'::json`,
			`SELECT '{"a":1'::json`,
			`SELECT ''::json`,
			`SELECT 'NaN'::json`,
			`SELECT '01'::json`,
			`SELECT '"\u00zz"'::json`,
			`SELECT 'nul'::json IS NULL`,
			`SELECT json_build_object('a', 'x'::json)`,
			`SELECT COALESCE(NULL::json, 'bad')`,
			`SELECT ('ab'::char(4))::json`,
			`SELECT 'tru'::json UNION ALL SELECT '1'::json`,
			`SELECT x::json FROM (VALUES ('[1]'), ('ab')) t(x)`,
			"SELECT 'ab'::json" + json18Where + " AND false",
			"SELECT count(*)" + json18Where + " AND (value->>'destination')::json IS NOT NULL",
			"SELECT CAST(id AS json)" + json18Where,
			"SELECT (origin || '}')::json" + json18Where,
			"SELECT json_build_array(origin::json)" + json18Where,
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "22P02")
		}
	}
}
