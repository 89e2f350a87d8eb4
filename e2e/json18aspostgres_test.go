package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// Issue 18's JSON functions (json18): jsonb's functions, operators and ordering, and json's
// missing equality and ordering, against PostgreSQL over the same rows and constants.

// json18Where reads ORD's flights over a day and a half (archived March, hot April).
const json18Where = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"

// json18Docs are documents whose jsonb order exercises every rule of jsonb's btree order:
// kinds (null < string < number < boolean < array < object), top-level scalars below arrays
// of one element, the empty top-level array first, lengths before elements, keys in jsonb's
// order, strings bytewise, numbers by value.
const json18Docs = `(VALUES (1, '[]'), (2, 'null'), (3, '"b"'), (4, '"aa"'), (5, '""'), (6, '-1.5'), (7, '2'), (8, '10'), (9, '-0.001'),
 (10, 'true'), (11, 'false'), (12, '[1]'), (13, '[0,0]'), (14, '["x"]'), (15, '[null]'), (16, '{}'), (17, '{"a":1}'), (18, '{"b":0}'), (19, '{"aa":0}'),
 (20, '{"a":1,"b":2}'), (21, '[[1]]'), (22, '[{}]'), (23, '{"a":[1]}'), (24, '{"a":{"b":1}}'), (25, '1e3'), (26, '999.99'), (27, '-1e3'), (28, '"é"'),
 (29, '[true]'), (30, '[1,"a"]'), (31, '[1,1]'), (32, '{"a":null}'), (33, '{"a":"z"}'), (34, '0'), (35, '-0.5'), (36, '123456789012345678901234567890'))`

// TestJSONBFunctionsAsPostgres: jsonb's and json's functions — array length, strip_nulls,
// pretty, extract_path, to_json[b], build_object/array — and jsonb's @>, <@, ?, ?|, ?&, ||
// and - answer PostgreSQL's values over constants and the flights' documents; their errors
// are PostgreSQL's.
func TestJSONBFunctionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT json_array_length('[1,[2],3]'), jsonb_array_length('[]'), json_array_length('  [ 1 , 2 ] '), jsonb_array_length('[1, {"a":[2]}]'::jsonb), json_array_length(NULL)`,
		`SELECT jsonb_strip_nulls('{"a":null,"b":[null,{"c":null,"d":1}],"e":{"f":null}}')::text, json_strip_nulls('{"a":null, "b" : [null,{"c":null}] ,"x":1.50, "x": 2}')::text, jsonb_strip_nulls('null')::text`,
		`SELECT jsonb_pretty('{"a":1,"b":[1,2,{"c":[]}],"d":{}, "e": "x\"y"}'), jsonb_pretty('[]'), jsonb_pretty('5'), jsonb_pretty('{"a":[[]]}'::jsonb)`,
		`SELECT '{"a":1,"b":[1,2]}'::jsonb @> '{"b":[2]}', '[1,2,[3]]'::jsonb @> '[3]', '[1,2,[3]]'::jsonb @> '[[3]]', '"a"'::jsonb @> '"a"', '["a"]'::jsonb @> '"a"', '"a"'::jsonb @> '["a"]', '{"a":1}'::jsonb <@ '{"a":1,"b":2}', '[1.0]'::jsonb @> '1', '{"a":{"b":[1,{"c":2}]}}'::jsonb @> '{"a":{"b":[{}]}}', '{}'::jsonb @> '[]', '[[1,2]]'::jsonb @> '[[2,1,1]]', NULL::jsonb @> '1'`,
		`SELECT '{"a":1}'::jsonb ? 'a', '["a","b"]'::jsonb ? 'a', '"a"'::jsonb ? 'a', '[1]'::jsonb ? '1', '{"a":1}'::jsonb ?| array['x','a'], '{"a":1}'::jsonb ?& array['x','a'], '{"a":1}'::jsonb ?& array[]::text[], '{"a":1}'::jsonb ?| array[]::text[], '["a",null]'::jsonb ?| array[null,'a'], '{"a":1,"b":2}'::jsonb ?& '{a,b}'::text[], '{"a":{"b":1}}'::jsonb ? 'b'`,
		`SELECT ('{"a":1}'::jsonb || '{"a":2,"b":1}')::text, ('[1]'::jsonb || '[2]')::text, ('1'::jsonb || '2')::text, ('{"a":1}'::jsonb || '[1]')::text, ('[1]'::jsonb || '{"a":1}')::text, ('{"a":1}'::jsonb || '2')::text, ('"x"'::jsonb || '{"a":1.0}'::jsonb)::text, '{"a":1}'::jsonb || 'x'::text, '{"a":1}'::jsonb || '{"a":1.0}' = '{"a":1}'`,
		`SELECT ('{"a":1,"b":2}'::jsonb - 'a')::text, ('["a","b","a"]'::jsonb - 'a')::text, ('[1,2,3]'::jsonb - 1)::text, ('[1,2,3]'::jsonb - -1)::text, ('[1,2,3]'::jsonb - 5)::text, ('[1,2,3]'::jsonb - -5)::text, ('{"a":1,"b":2}'::jsonb - array['a','b'])::text, ('[]'::jsonb - 0)::text, ('{"a":1,"b":2}'::jsonb - '{b}'::text[])::text`,
		`SELECT json_build_object('a',1,'b','x','c',null,'d',1.50,'e',true,'f','{"x":1}'::json,'g','{"y": 1.0}'::jsonb, 1, 2.5::float8, 'n', 'NaN'::float8, 'i', 'Infinity'::float8, 'z', 1e20::float8, 'q', 'a"b\c')::text`,
		`SELECT jsonb_build_object('b',1,'a','x','c',null,'a',2)::text, json_build_array(1,'a',null,true,'[1, 2]'::json)::text, jsonb_build_array()::text, json_build_object()::text, json_build_array()::text, jsonb_build_array(1.50, 'x', false, '{"b":1,"a":2}'::jsonb)::text`,
		`SELECT to_json('a"b'::text)::text, to_json(1)::text, to_json(1.50)::text, to_jsonb(1.50)::text, to_json(null::text)::text, to_jsonb('x'::text)::text, to_json(true)::text, to_json('{"a" : 1}'::json)::text, to_jsonb('{"b":1,"a":2}'::json)::text, to_json('{"b":1,"a":2}'::jsonb)::text, to_json(0.1::float8)::text, to_json(1e100::float8)::text, to_json(1::smallint)::text`,
		`SELECT jsonb_extract_path('{"a":{"c":1.0, "b":1}}', 'a')::text, json_extract_path('{"a":{"c":1.0, "b":1}}', 'a')::text, jsonb_extract_path_text('{"a":{"c":1.0, "b":1}}', 'a', 'c'), jsonb_extract_path('{"a":[1]}'::jsonb, 'a') = '[1.0]'`,
		"SELECT id, json_array_length(json_build_array(value->'delay', value->'destination')), jsonb_build_object('d', value->'destination', 'k', (value->>'delay')::int)::text, value::jsonb @> '{\"destination\": \"DTW\"}', value::jsonb ? 'delay', " +
			"(value::jsonb - 'distance')::text, (value::jsonb || jsonb_build_object('id', id))::text, to_jsonb(value->>'destination')::text, jsonb_pretty(value::jsonb), json_strip_nulls(value)::text, to_json(value)::text" + json18Where + " ORDER BY timestamp, id",
		"SELECT count(*), count(*) FILTER (WHERE value::jsonb @> '{\"destination\": \"DTW\"}'), count(*) FILTER (WHERE value::jsonb ?| array['nosuch', 'delay'])" + json18Where,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			`SELECT json_array_length('{"a":1}')`:                   "22023",
			`SELECT jsonb_array_length('5')`:                        "22023",
			`SELECT jsonb_array_length('{"a":1}'::jsonb)`:           "22023",
			`SELECT '"x"'::jsonb - 'x'`:                             "22023",
			`SELECT '5'::jsonb - 0`:                                 "22023",
			`SELECT '{"a":1}'::jsonb - 0`:                           "22023",
			`SELECT json_build_object('a')`:                         "22023",
			`SELECT json_build_object(null, 1)`:                     "22023",
			`SELECT to_json('a')`:                                   "42804",
			`SELECT jsonb_extract_path('{"a":1}'::json, 'a')`:       "42883",
			`SELECT jsonb_array_length('[1]'::json)`:                "42883",
			`SELECT json_array_length('[1]'::jsonb)`:                "42883",
			`SELECT '[1]'::jsonb || 2`:                              "42883",
			`SELECT '{"a":1}'::json @> '{}'`:                        "42883",
			`SELECT jsonb_build_object('{"a":1}'::jsonb, 1)`:        "22023",
			`SELECT '{"a": }'::jsonb @> '{}'`:                       "22P02",
			"SELECT json_array_length(value)" + json18Where:         "22023",
			"SELECT jsonb_array_length(value::jsonb)" + json18Where: "22023",
			"SELECT value::jsonb - 1" + json18Where:                 "22023",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT to_json(timestamp '2001-01-01')":          "to_json of timestamp",
			`SELECT jsonb_set('{"a":1}', '{a}', '2')`:         "jsonb_set",
			`SELECT row_to_json(v) FROM (VALUES (1)) v(x)`:    "row_to_json",
			`SELECT '{"a":1}'::jsonb #- '{a}'`:                "#-",
			`SELECT '1'::jsonb INTERSECT SELECT '1.0'::jsonb`: "INTERSECT",
		})
	}
}

// TestJSONBOrderAsPostgres: ORDER BY, window ORDER BY and PARTITION BY and count(DISTINCT) of
// jsonb values follow jsonb's btree order and equality as PostgreSQL's do; ORDER BY, GROUP
// BY, DISTINCT, UNION, INTERSECT, EXCEPT, PARTITION BY and count(DISTINCT) of json are
// PostgreSQL's 42883.
func TestJSONBOrderAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT i, d::jsonb::text FROM " + json18Docs + " v(i, d) ORDER BY d::jsonb, i",
		"SELECT i, j::text AS t FROM (SELECT i, d::jsonb AS j FROM " + json18Docs + " v(i, d)) s ORDER BY j DESC, i",
		"SELECT i, greatest(d::jsonb, '[1]')::text, least(d::jsonb, '1', NULL)::text FROM " + json18Docs + " v(i, d) ORDER BY i",
		"SELECT i, row_number() OVER (ORDER BY d::jsonb DESC, i) FROM " + json18Docs + " v(i, d) ORDER BY 1",
		"SELECT count(DISTINCT j), count(j) FROM (VALUES ('1.0'::jsonb), ('1'::jsonb), ('[1.00]'), ('[1]'), ('{\"a\":2}'), ('{\"a\":2.0}'), (NULL)) v(j)",
		"SELECT i, count(*) OVER (PARTITION BY j) FROM (VALUES (1, '1.0'::jsonb), (2, '1'::jsonb), (3, '[1.00]'), (4, '[1]'), (5, '{\"a\":2}'), (6, '\"1\"')) v(i, j) ORDER BY i",
		"SELECT id, (value::jsonb->'destination')::text" + json18Where + " ORDER BY value::jsonb->'delay', value::jsonb, id",
		"SELECT count(DISTINCT value::jsonb->'destination'), count(DISTINCT value::jsonb)" + json18Where,
	}
	// jsonb stays jsonb (its text, equality by value) through NULLIF, COALESCE, CASE, VALUES
	// and CTEs beside untyped literals.
	qs = append(qs,
		`SELECT nullif('1.0'::jsonb, '1')::text, nullif('1.0'::jsonb, '2')::text, coalesce(NULL::jsonb, '{"b":1, "a":2}')::text, coalesce(NULL, '1.0'::jsonb) = '1', (CASE WHEN true THEN '{"b":1, "a":2}' ELSE '1'::jsonb END)::text`,
		`SELECT j::text, j = '1' FROM (VALUES ('1.0'::jsonb), ('{"b":1,"a":[1.0]}'), (NULL)) v(j) ORDER BY j`,
		`WITH c AS (SELECT '1.0'::jsonb AS j UNION ALL SELECT '[2]'::jsonb) SELECT j::text, j = '1', j @> '2' FROM c ORDER BY j`,
	)
	// Scalar subqueries keep jsonb too.
	qs = append(qs,
		`SELECT (SELECT '{"b":1.0,"a":2}'::jsonb)::text, (SELECT '1.0'::jsonb) = '1', (SELECT '[1,2]'::jsonb) @> '[2]', (SELECT j FROM (VALUES ('1.0'::jsonb)) v(j)) = '1'`,
		"SELECT id, (SELECT '{\"b\":1.0,\"a\":2}'::jsonb)::text, (SELECT '1.0'::jsonb) = '1'"+json18Where+" ORDER BY timestamp, id LIMIT 2",
		"SELECT id, (SELECT '{\"d\": \"DTW\"}'::jsonb) @> jsonb_build_object('d', value->'destination')"+json18Where+" ORDER BY timestamp, id",
	)
	// GROUP BY, DISTINCT and UNION group jsonb by value ('1.0' with '1': counted, as which
	// member a group shows is PostgreSQL's first met).
	qs = append(qs,
		"SELECT j::text, count(*) FROM (VALUES ('[1, 2]'::jsonb), ('{\"b\":1,\"a\":2}'), ('[1,2]'), ('{\"a\":2,\"b\":1}'), (NULL), ('\"x\"')) v(j) GROUP BY j ORDER BY j",
		"SELECT count(*), sum(c)::text FROM (SELECT j, count(*) c FROM (VALUES ('1.0'::jsonb), ('1'), ('1.00'), ('[1.0]'), ('[1]'), ('-0')) v(j) GROUP BY j) s",
		"SELECT j::text FROM (VALUES ('[1]'::jsonb), ('[1]'), ('{}')) v(j) GROUP BY j HAVING count(*) > 1",
		"SELECT j::text, count(*) FROM (VALUES ('[1]'::jsonb), ('[1]'), ('{}')) v(j) GROUP BY ROLLUP(j) ORDER BY j NULLS LAST",
		"SELECT (value::jsonb->'destination')::text d, count(*), jsonb_typeof(value::jsonb->'destination')"+json18Where+" GROUP BY value::jsonb->'destination' ORDER BY 2 DESC, 1",
		"SELECT d::text FROM (SELECT DISTINCT value::jsonb->'destination' d"+json18Where+") s ORDER BY d",
		"SELECT j::text, k FROM (SELECT DISTINCT d::jsonb j, i % 2 k FROM "+json18Docs+" v(i, d)) s ORDER BY j, k",
		"SELECT j::text FROM (SELECT '1'::jsonb j UNION SELECT '[1]'::jsonb UNION SELECT '1'::jsonb UNION SELECT '\"1\"') s ORDER BY j",
		"SELECT j::text FROM (SELECT '{\"b\":1}'::jsonb j UNION ALL SELECT '[1]'::jsonb) s ORDER BY j DESC",
		"SELECT '{\"b\":1}'::jsonb::text j UNION ALL SELECT '[1]'::jsonb::text ORDER BY j DESC",
		"SELECT i FROM "+json18Docs+" v(i, d) WHERE d::jsonb < '[1]' AND d::jsonb >= 'false' ORDER BY i",
	)
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			`SELECT greatest('1'::json, '2'::json)`:                  "42883",
			`SELECT nullif('1'::json, '1')`:                          "42883",
			`SELECT '1'::json ORDER BY 1`:                            "42883",
			`SELECT DISTINCT '1'::json`:                              "42883",
			`SELECT '1'::json GROUP BY 1`:                            "42883",
			`SELECT '1'::json UNION SELECT '2'::json`:                "42883",
			`SELECT '1'::json INTERSECT SELECT '1'::json`:            "42883",
			`SELECT '1'::json EXCEPT SELECT '1'::json`:               "42883",
			`SELECT count(DISTINCT '1'::json)`:                       "42883",
			`SELECT row_number() OVER (ORDER BY '1'::json)`:          "42883",
			`SELECT count(*) OVER (PARTITION BY '1'::json)`:          "42883",
			`SELECT '1'::json UNION ALL SELECT '2'::json ORDER BY 1`: "42883",
			`SELECT x FROM (VALUES ('1'::json)) v(x) ORDER BY x`:     "42883",
			// value is json in PostgreSQL's table; a member -> reads is json here too.
			"SELECT id" + json18Where + " ORDER BY value->'delay'":                    "42883",
			"SELECT value->'destination', count(*)" + json18Where + " GROUP BY 1":     "42883",
			"SELECT DISTINCT value #> '{destination}'" + json18Where:                  "42883",
			"SELECT count(*)" + json18Where + " AND value->'destination' = '\"DTW\"'": "42883",
			"SELECT max(value->'delay')" + json18Where:                                "42883",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
	}
}
