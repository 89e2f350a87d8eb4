package e2e

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// Issue 18's set-returning function and LATERAL shapes that trial27 found refused (lat18):
// LEFT JOIN LATERAL f(…) ON a condition, select-list set-returning functions beside
// aggregates and window functions or in ORDER BY alone, unnest of typed, empty,
// multidimensional and several arrays, against PostgreSQL over the same rows; the shapes
// still refused are refused by name.

// TestLeftJoinLateralOnConditionAsPostgres: LEFT JOIN LATERAL f(…) ON cond keeps the
// function's rows meeting cond and, for a row of the left side none of whose rows does (or
// without rows), the row NULL-extended — also when one row's function rows span batches.
func TestLeftJoinLateralOnConditionAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT a, g FROM (VALUES (1), (3), (0), (NULL)) x(a) LEFT JOIN LATERAL generate_series(1, a) g ON g > 1 ORDER BY 1, 2",
		"SELECT a, g, n FROM (VALUES (1), (3), (4), (0), (NULL)) x(a) LEFT JOIN LATERAL generate_series(1, a) WITH ORDINALITY g(g, n) ON g > a - 2 AND n < 4 ORDER BY 1, 2",
		"SELECT a, g FROM (VALUES (1), (3)) x(a) LEFT JOIN LATERAL generate_series(1, a) g ON false ORDER BY 1, 2",
		"SELECT a, g FROM (VALUES (1), (3)) x(a) LEFT JOIN LATERAL generate_series(1, a) g ON NULL ORDER BY 1, 2",
		"SELECT a, g FROM (VALUES (1), (3)) x(a) LEFT JOIN generate_series(1, 3) g ON g = a ORDER BY 1, 2",
		"SELECT a, s.* FROM (VALUES (2), (4)) x(a) LEFT JOIN LATERAL ROWS FROM (generate_series(1, a), json_array_elements_text('[\"p\", \"q\", \"r\"]')) AS s(g, t) ON s.t IS NULL OR s.t = 'q' ORDER BY a, 2",
		`SELECT i, e::text FROM (VALUES (1, '[{"k":"v"},{"k":"w"},{"k":"v","n":1}]'), (2, '[]'), (3, NULL), (4, '[{"k":"w"}]')) v(i, d) LEFT JOIN LATERAL json_array_elements(d::json) e ON e->>'k' = 'v' ORDER BY 1, 2`,
		"SELECT i, e.key, e.value FROM " + srf18Docs + " v(i, d) LEFT JOIN LATERAL jsonb_each_text(d::jsonb) AS e ON e.key <> 'a' AND i > 1 ORDER BY i, 2",
		"SELECT i FROM " + srf18Docs + " v(i, d) LEFT JOIN LATERAL json_object_keys(d::json) AS k ON k = 'dup' WHERE k IS NULL ORDER BY i",
		// One left row's function rows past a batch: the rows kept, and the left rows none of
		// whose rows is.
		"SELECT a, count(g), count(*), sum(g) FROM (VALUES (1), (2), (3)) x(a) LEFT JOIN LATERAL generate_series(1, a * 10000) g ON g % 9000 = a GROUP BY a ORDER BY a",
		"SELECT a, count(g), count(*) FROM (VALUES (1), (2)) x(a) LEFT JOIN LATERAL generate_series(1, 20000) g ON g < 0 GROUP BY a ORDER BY a",
		// A LATERAL subquery ON a condition.
		"SELECT a, s.n FROM (VALUES (1), (3)) x(a) LEFT JOIN LATERAL (SELECT g AS n FROM generate_series(1, a) g) s ON s.n > 1 ORDER BY 1, 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT a FROM (VALUES (1)) x(a) LEFT JOIN LATERAL generate_series(1, a) g ON g IN (SELECT 1)": "subqueries in the ON condition",
		})
	}
	// The flights' documents, the value column declared json and not.
	const where = " WHERE f.origin = 'ORD' AND f.timestamp >= '2001-03-31 12:00' AND f.timestamp < '2001-04-01 18:00'"
	for _, cl := range jsonDeclaredClients(t, ctx, newEnv(t)) {
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
			"SELECT f.id, e.key, e.value::text FROM flights f LEFT JOIN LATERAL json_each(f.value) e ON e.key IN ('delay', 'distance') AND f.value->>'destination' LIKE 'D%'"+where+" ORDER BY f.timestamp, f.id",
			"SELECT f.id, k FROM flights f LEFT JOIN LATERAL jsonb_object_keys(f.value::jsonb) k ON k LIKE 'd%' AND f.value->>'destination' = 'DTW'"+where+" ORDER BY f.timestamp, f.id, k",
		)...)
	}
}

// jsonDeclaredClients are clients of two servers over e's stores: the flights table as
// `flightsrv serve` declares it by default (value=json), and without JSON values.
func jsonDeclaredClients(t *testing.T, ctx context.Context, e *env) []*flightsql.Client {
	t.Helper()
	var cls []*flightsql.Client
	for _, declared := range []bool{true, false} {
		def := flightsTable
		def.JSONValues = declared
		srv, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{def}, Hot: e.store, Archive: e.reader, Pushdown: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		cls = append(cls, dial(t, srv))
	}
	return cls
}

// TestPostponedSetFunctionsAsPostgres: select-list set-returning functions beside aggregates
// (outside GROUP BY) and window functions run after them, and one in ORDER BY alone adds its
// rows, as PostgreSQL's ProjectSet.
func TestPostponedSetFunctionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT generate_series(1, 3), count(*) FROM (VALUES (1), (2)) x(a)",
		"SELECT generate_series(1, count(*)::int) g, count(*) FROM (VALUES (1), (2)) x(a)",
		"SELECT generate_series(1, 3) g, count(*) FROM (VALUES (1), (2)) x(a) ORDER BY g DESC LIMIT 2",
		"SELECT generate_series(1, 3) g, count(*) FROM (VALUES (1), (2)) x(a) HAVING count(*) > 5",
		"SELECT a, generate_series(1, 2) g, count(*) c FROM (VALUES (1), (2), (2)) x(a) GROUP BY a ORDER BY c DESC, g",
		"SELECT a, generate_series(1, a) g, count(*) c FROM (VALUES (1), (2), (2)) x(a) GROUP BY a ORDER BY count(*) DESC, g",
		"SELECT a, generate_series(1, a) FROM (VALUES (1), (2)) x(a) GROUP BY a ORDER BY 1, 2",
		"SELECT generate_series(1, a), a FROM (VALUES (1), (2)) x(a) GROUP BY a ORDER BY a, 1",
		"SELECT DISTINCT generate_series(1, 2) % 2 AS m, count(*) FROM (VALUES (1), (2)) x(a) ORDER BY m",
		"SELECT generate_series('2001-01-01'::timestamp, '2001-01-01 02:00', '1 hour')::text t, count(*) FROM (VALUES (1), (2)) x(a) ORDER BY t",
		`SELECT json_object_keys(max(d)::json) k, count(*) FROM (VALUES ('{"a":1,"b":2}'), ('{"c":3}')) x(d) ORDER BY k`,
		"SELECT a, generate_series(1, 2), row_number() OVER () FROM (VALUES (1), (2)) x(a) ORDER BY 1, 2",
		"SELECT a, generate_series(1, 2), row_number() OVER (ORDER BY a DESC) FROM (VALUES (1), (2)) x(a) ORDER BY 1, 2",
		"SELECT a, generate_series(1, a) g, sum(a) OVER () FROM (VALUES (1), (2)) x(a) ORDER BY 1, 2",
		"SELECT a, generate_series(1, a) + a g, sum(a) OVER (), a * 2 FROM (VALUES (1), (2)) x(a) ORDER BY 1, 2",
		"SELECT row_number() OVER (), generate_series(1, 2)",
		"SELECT a FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, 2), a",
		"SELECT a FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, a), a",
		"SELECT count(*) FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, 2)",
		"SELECT a, count(*) FROM (VALUES (1), (2), (2)) x(a) GROUP BY a ORDER BY generate_series(1, a), a",
		"SELECT a, count(*) FROM (VALUES (1), (2), (2)) x(a) GROUP BY a ORDER BY generate_series(1, count(*)::int) DESC, a",
		`SELECT count(*) FROM (VALUES ('{"a":1}'), ('{"a":2,"b":3}')) x(d) GROUP BY json_object_keys(d::json) ORDER BY json_object_keys(d::json)`,
		"SELECT a, row_number() OVER () FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, 2), a",
		"SELECT generate_series(1, 3), count(*), max(timestamp)::text" + json18Where,
		"SELECT jsonb_object_keys(value::jsonb) k, generate_series(1, 2) g, count(*)" + json18Where + " GROUP BY 1 ORDER BY 1, 2",
		"SELECT id, generate_series(1, 2) g, row_number() OVER (ORDER BY timestamp, id)" + json18Where + " ORDER BY 3, 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedWithState(t, ctx, cl.c, pg, "SELECT DISTINCT a FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, 2)", "42P10")
		refusedWithState(t, ctx, cl.c, pg, "SELECT DISTINCT count(*) FROM (VALUES (1), (2)) x(a) ORDER BY generate_series(1, 2)", "42P10")
		// An OVER on a set-returning function (FuzzSQL: it postponed the call for ever).
		refusedWithState(t, ctx, cl.c, pg, "SELECT generate_series(1, 3) OVER ()", "42809")
		refusedWithState(t, ctx, cl.c, pg, "SELECT a, unnest(ARRAY[a]) OVER (ORDER BY a) FROM (VALUES (1), (2)) x(a)", "42809")
	}
}

// TestUnnestArraysAsPostgres: unnest of typed, empty typed, multidimensional and several
// arrays, alone in FROM, beside other FROM items and in the select list.
func TestUnnestArraysAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT * FROM unnest(ARRAY[1, 2]::bigint[])",
		"SELECT * FROM unnest(ARRAY['a', 'b']::text[]) u",
		"SELECT unnest(ARRAY['a', 'b']::text[])",
		"SELECT * FROM unnest(ARRAY[1.5, 2]::int[])",
		"SELECT * FROM unnest(ARRAY['ab', 'b']::varchar(1)[])",
		"SELECT * FROM unnest(ARRAY[1, NULL]::bigint[]) WITH ORDINALITY",
		"SELECT * FROM unnest(ARRAY[]::int[]) u",
		"SELECT count(*) FROM unnest(ARRAY[]::text[]) u",
		"SELECT * FROM unnest(ARRAY[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]) u",
		"SELECT a, u FROM (VALUES (1), (2)) x(a), unnest(ARRAY[[a, 2], [3, a * 10]]::bigint[]) u ORDER BY 1, 2",
		"SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a', 'b', 'c'])",
		"SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a', 'b', 'c']) WITH ORDINALITY AS t(x, y)",
		"SELECT a, t.* FROM (VALUES (1), (2)) x(a), unnest(ARRAY[a], ARRAY[a * 2, a * 3]::bigint[]) t ORDER BY 1, 2, 3",
		"SELECT unnest(ARRAY[]::int[]), generate_series(1, 2)",
		"SELECT count(*) FROM (SELECT unnest(ARRAY[]::text[])) s",
		"SELECT a, u FROM (VALUES (1), (2)) x(a) LEFT JOIN LATERAL unnest(ARRAY[]::bigint[]) u ON true ORDER BY 1",
		"SELECT * FROM unnest(ARRAY[]::int[]) WITH ORDINALITY",
		"SELECT * FROM unnest(ARRAY[]::int[], ARRAY[1, 2]::bigint[]) AS t(x, y)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes,
			"SELECT * FROM unnest(ARRAY[1, 2], ARRAY['a', 'b', 'c'])",
			"SELECT * FROM unnest(ARRAY[1, 2]::bigint[]) u",
			"SELECT * FROM unnest(ARRAY[]::int[], ARRAY[1, 2]::bigint[]) AS t(x, y)",
		)...)
		for q, state := range map[string]string{
			"SELECT * FROM unnest(ARRAY[[1, 2], [3]])":                     "2202E",
			"SELECT * FROM unnest(ARRAY[])":                                "42P18",
			"SELECT unnest(ARRAY[1, 2], ARRAY[3])":                         "42883",
			"SELECT unnest(ARRAY['a'], ARRAY[]::bigint[], ARRAY[true]), 1": "42883",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT * FROM unnest('{1,2}'::int[])": "unnest arguments",
		})
	}
}

// TestWholeRowReferencesRefused: a whole-row reference (a composite value, which PostgreSQL
// prints as (key,value)) and json[b]_each's record in a select list are refused by name, never
// an undefined column.
func TestWholeRowReferencesRefused(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	refusedAs(t, context.Background(), cl, codes.Unimplemented, map[string]string{
		`SELECT e FROM json_each('{"a":1}') e`: "whole-row references",
		// PostgreSQL: 22023 of row 2's document; the reference is refused first.
		`SELECT v.i, e FROM (VALUES (1, '{"x":1}'::jsonb), (2, '[1]')) v(i, d), jsonb_each(v.d) e`:                "whole-row references",
		`SELECT t FROM unnest(ARRAY[1, 2], ARRAY['a', 'b']) t`:                                                    "whole-row references",
		"SELECT f FROM flights f WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01'": "whole-row references",
		`SELECT json_each('{"a":1}')`:                                        "json_each(...) in a select list returns a record, which is not supported",
		`SELECT jsonb_each_text('{"a":1}'), count(*) FROM (VALUES (1)) x(a)`: "jsonb_each_text(...) in a select list returns a record, which is not supported",
	})
}
