package e2e

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestCharCastAsPostgres: character(n) (CAST(… AS char(n)), ::character(n), bpchar(n), char
// alone as char(1)) over the flights' fields and constants answers PostgreSQL's values: blank-
// padded to n characters (multibyte characters counted as one), cut to n on the explicit cast;
// = and < ignoring the padding, against an untyped constant too, but not against text; length
// and the text functions without it, octet_length, LIKE, regular expressions, concat and
// format with it; GROUP BY, DISTINCT, ORDER BY, UNION and joins treating 'a' and 'a  ' as one;
// NULLs; casts to and from other types; min and max; CTEs and subqueries. Lengths out of
// range are PostgreSQL's 22023; bpchar without a length, "char", and character(n) values of
// different lengths in one CASE or set operation are refused by name.
func TestCharCastAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT 'ab'::char(5), octet_length('ab'::char(5)), length('ab'::char(5)), 'abcdef'::char(3), 'ab  '::char(3)::text || '|', CAST('x' AS char), " +
			"CAST('xyz' AS character), 'ü'::char(3), octet_length('ü'::char(3)), 'üxyz'::char(2), 1::char(3), true::char(5), '2020-01-01'::date::char(12), " +
			"CAST(NULL AS char(2)), 2.50::character(6), 'x'::pg_catalog.bpchar(3), 'é'::bpchar(2) || '|'",
		"SELECT 'ab'::bpchar, 'ab'::bpchar = 'ab  ', 1::bpchar, octet_length(2.5::bpchar), 'ab'::bpchar || '|', true::bpchar = 'true ', NULL::bpchar, " +
			"'ab'::bpchar = 'ab '::text, '2001-01-02'::date::bpchar, CAST('a'::char(3) AS bpchar) || '|', octet_length('a'::char(3)::bpchar)",
		"SELECT 'a'::char(3) = 'a  ', 'a'::char(3) = 'a  '::text, 'a'::char(3) = 'a'::text, 'a '::char(3) < 'a'::char(3), 'a'::char(3) = 'a'::char(5), " +
			"'a'::char(3) IN ('a ', 'b'), 'a'::char(3) IS DISTINCT FROM 'a  ', 'a'::char(3) <> 'a ', 'b'::char(2) > 'a  ', NULL::char(2) = 'a'",
		"SELECT 'a'::char(3) LIKE 'a', 'a'::char(3) LIKE 'a%', 'a'::char(3) LIKE 'a  ', 'a'::char(3) ~ 'a $', 'a'::char(3) ~ '^a$', 'a'::char(3) NOT LIKE 'a', " +
			"'a'::char(3) ILIKE 'A  ', 'abc'::char(3) SIMILAR TO 'abc', 'a'::char(3) SIMILAR TO 'a', 'a'::char(3) ~* 'A  $'",
		"SELECT concat('a'::char(3), 'b'), format('%s|', 'a'::char(3)), 'a'::char(3) || 'b', upper('a'::char(3)) || '|', 'a'::char(3)::varchar || '|', " +
			"lpad('a'::char(3), 4, '*'), left('a'::char(3), 3) || '|', strpos('a b'::char(5), ' '), position(' ' in 'a'::char(3)), replace('a'::char(3), 'a', 'x') || '|', " +
			"concat_ws(',', 'a'::char(2), 'b'), char_length('a'::char(3)), trim('a'::char(3)), md5('a'::char(3)), reverse('ab'::char(4)) || '|'",
		"SELECT '12'::char(4)::int + 1, '2001-02-03'::char(12)::date::text, ' 1.5'::char(6)::numeric::text, 'ab'::char(4)::char(2) || '|', 'ab'::char(2)::char(5), " +
			"('a'::char(3))::varchar(5) || '|', 'ab'::char(4)::bytea::text, '{}'::char(4)::json::text, 'ab'::char(4)::varchar(3) || '|'",
		"SELECT id, CAST(origin AS char(5)), (value->>'destination')::char(2), octet_length(CAST(value->>'destination' AS char(6))), CAST(value->>'nosuch' AS char(3)), " +
			"CAST(id AS character(4)) || '|', length(CAST(origin AS char(8))), CAST(origin AS char(5)) = origin, CAST(origin AS char(5)) = 'BOS  '" + fn18Where + " ORDER BY 1",
		"SELECT CAST(value->>'destination' AS char(1)) AS d, count(*), min(CAST(id AS char(30))), max(CAST(value->>'destination' AS char(5))), " +
			"octet_length(max(CAST(value->>'destination' AS char(5))))" + fn18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT x, count(*), octet_length(x) FROM (VALUES ('a'::char(3)), ('a  '::char(3)), ('b'::char(3)), (NULL::char(3))) t(x) GROUP BY x ORDER BY x",
		"SELECT DISTINCT x FROM (VALUES ('a '::char(2)), ('a'::char(2)), ('b'::char(2))) t(x) ORDER BY x",
		"SELECT x, octet_length(x) FROM (VALUES ('a'::char(3)), (E'a\\t'::char(3)), ('a b'::char(3)), ('a'::char(3))) t(x) ORDER BY x DESC",
		"SELECT a.x, b.y, a.n FROM (VALUES ('a'::char(3), 1), ('b'::char(3), 2)) a(x, n) JOIN (VALUES ('a '::char(5)), ('b'::char(5)), ('c'::char(5))) b(y) ON a.x = b.y ORDER BY 3",
		"SELECT k, n, m, k || '|' FROM (VALUES ('a'::char(3), 1)) a(k, n) JOIN (VALUES ('a'::char(3), 2)) b(k, m) USING (k)",
		"SELECT a.x, b.y FROM (VALUES ('a'::char(3))) a(x) JOIN (VALUES ('a '::text), ('a')) b(y) ON a.x = b.y",
		"SELECT f.id, c.k FROM flights f JOIN (VALUES ('BOS'::char(4))) c(k) ON f.origin = c.k WHERE f.origin = 'BOS' AND f.timestamp >= '2001-03-31' AND f.timestamp < '2001-04-01' ORDER BY 1",
		"WITH c AS (SELECT CAST(value->>'destination' AS char(6)) AS o, id" + fn18Where + ") SELECT o, o || '|', octet_length(o), count(*) FROM c GROUP BY o ORDER BY o",
		"SELECT o, octet_length(o) FROM (SELECT CAST(origin AS char(4)) AS o" + fn18Where + " LIMIT 1) s",
		"SELECT 'a'::char(3) UNION SELECT 'a  '::char(3) UNION SELECT 'b'::char(3) ORDER BY 1",
		"SELECT x, x || '|' FROM (SELECT 'xy '::text AS x UNION ALL SELECT 'a'::char(3)) s ORDER BY 1",
		"SELECT CASE WHEN n > 1 THEN x ELSE 'b '::text END, CASE WHEN n > 1 THEN x ELSE 'b '::text END || '|', COALESCE(NULL::text, x) FROM (VALUES ('a'::char(3), 1), ('c'::char(3), 3)) t(x, n) ORDER BY n",
		"SELECT CASE WHEN n > 1 THEN x END, COALESCE(x, 'z'::char(3)), NULLIF(x, 'a  '), GREATEST(x, 'b'::char(3)), LEAST(x, 'b'::char(3)) || '|' " +
			"FROM (VALUES ('a'::char(3), 1), (NULL, 2), ('c'::char(3), 3)) t(x, n) ORDER BY n",
		"SELECT string_agg(x, ',' ORDER BY x), array_agg(x ORDER BY x)::text FROM (VALUES ('a'::char(2)), ('b'::char(2))) t(x)",
		"SELECT (SELECT 'a'::char(3)), octet_length((SELECT 'a'::char(3))), (SELECT 'a'::char(3)) = 'a  ', (VALUES ('a'::char(3))), 'a'::char(3) = ANY (SELECT 'a  '::text)",
		"SELECT to_jsonb('a'::char(3))::text, to_json('a'::char(3))::text, json_build_object('k', 'a'::char(3))::text, jsonb_build_array('a'::char(3))::text, json_build_object('a'::char(3), 1)::text",
		"WITH RECURSIVE r(x, n) AS (SELECT 'a'::char(3), 1 UNION ALL SELECT x, n + 1 FROM r WHERE n < 3) SELECT x, octet_length(x), n FROM r ORDER BY n",
		"SELECT x, count(*) FROM (VALUES ('a'::char(3)), ('a  '::char(3)), ('b'::char(3))) t(x) GROUP BY ROLLUP (x) ORDER BY 1",
		"SELECT CASE x WHEN 'a  ' THEN 1 ELSE 2 END, x BETWEEN 'a  ' AND 'a', x = ANY (ARRAY['a  ']), count(x) OVER () FROM (VALUES ('a'::char(3))) t(x)",
		"SELECT x FROM (VALUES ('a'::char(3)), ('b'::char(3))) t(x) INTERSECT SELECT 'a '::char(3)",
		"SELECT x FROM (VALUES ('a'::char(3)), ('a'::char(3)), ('b'::char(3))) t(x) EXCEPT ALL SELECT 'a '::char(3) ORDER BY 1",
		"SELECT 'a'::char(3) IN ('a '::text, 'b'::text), 'a'::char(3) IN ('a '::text), 'a'::char(3) = ANY (ARRAY['a '::text]), 'a'::char(3) = ANY (ARRAY['a ']), " +
			"'a'::char(3) = ANY (ARRAY['a '::char(2)]), 'a'::char(3) IN ('a ', 'b'::text)",
		"SELECT 'a '::varchar = 'a'::char(3), 'a'::char(3) = 'a '::varchar(5), CAST('a ' AS character varying) < 'a'::char(3), 'a'::char(3) IN ('a '::varchar)",
		"SELECT x IN (y, 'b '), x = ANY (ARRAY[y, 'b ']), x IN (y, z) FROM (VALUES ('a'::char(3), 'a '::text, 'a '::char(2))) t(x, y, z)",
		"SELECT ''::char(2), octet_length(''::char(2)), ''::char(2) = '', '  '::char(2) = '', 'a'::char(3) || 1, 1 || 'a'::char(3)",
		"SELECT count(*) FROM (VALUES ('a '::text), ('b')) t(y) WHERE y IN (SELECT 'a'::char(3))",
		"SELECT count(*) FROM (VALUES ('a '::text), ('b')) t(y) WHERE 'a  ' IN (SELECT 'a'::char(3)) AND EXISTS (SELECT 1 FROM (VALUES ('b'::char(2))) u(z) WHERE z = y)",
		"SELECT x, row_number() OVER (PARTITION BY x ORDER BY n), count(*) OVER (PARTITION BY x) FROM (VALUES ('a'::char(3), 1), ('a  '::char(3), 2), ('b'::char(3), 3)) t(x, n) ORDER BY n",
		"SELECT DISTINCT ON (x) x, n FROM (VALUES ('a'::char(3), 1), ('a  '::char(3), 2), ('b'::char(3), 3)) t(x, n) ORDER BY x, n",
		"SELECT x, count(*) FROM (SELECT CAST(value->>'destination' AS char(4)) AS x" + fn18Where + ") s WHERE x LIKE '% ' OR x = 'LAX ' GROUP BY x HAVING count(*) > 0 ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		sameColumnNames(t, ctx, cl.c, pg, "SELECT CAST(origin AS char(2)), CAST('a' AS character(3)), 'x'::bpchar(2), CAST(1 AS char)"+fn18Where+" LIMIT 1")
		for _, q := range []string{"SELECT 'abc'::char(0)", "SELECT CAST(id AS char(10485761))" + fn18Where, "SELECT 'a'::bpchar(0)"} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22023")
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT 'ab '::bpchar":                                                      "casts to bpchar without a length",
			"SELECT CAST(origin AS bpchar)" + fn18Where:                                 "casts to bpchar without a length",
			"SELECT 'abc'::\"char\"":                                                    `casts to "char"`,
			"SELECT CASE WHEN true THEN 'a'::char(3) ELSE 'bb'::char(4) END":            "character(n) values of different lengths",
			"SELECT COALESCE(NULL, 'a'::char(3), 'b')":                                  "character(n) values of different lengths",
			"SELECT 'a'::char(3) UNION SELECT 'b'":                                      "character(n) values of different lengths",
			"SELECT 'a'::char(3) UNION ALL SELECT 'b '::text":                           "character(n) values of different lengths",
			"SELECT CASE WHEN true THEN 'b '::text ELSE 'a'::char(3) END":               "character(n) values of different lengths",
			"SELECT x FROM (VALUES ('a'::char(3)), ('b')) t(x)":                         "character(n) values of different lengths",
			"SELECT lag(CAST(origin AS char(4))) OVER (ORDER BY id)" + fn18Where:        "the window function lag of character(n) values",
			"SELECT max(CAST(origin AS char(4))) OVER ()" + fn18Where:                   "the window function max of character(n) values",
			"SELECT x FROM unnest(ARRAY['a'::char(3)]) x":                               "unnest arguments of character(n) values",
			"SELECT mode() WITHIN GROUP (ORDER BY x) FROM (VALUES ('a'::char(3))) t(x)": "mode of character(n) values",
		})
	}
}

// TestCharParametersAsPostgres: a parameter bound beside a character(n) value is bpchar, its
// trailing spaces insignificant, and a parameter cast to char(n) is padded or cut to n, as
// PostgreSQL answers the same statement with $1 bound to the same text.
func TestCharParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const vals = "(VALUES ('a'::char(3)), ('b'::char(3)), ('ü'::char(3)))"
	for _, c := range []struct {
		sql  string
		vals []string
	}{
		{"SELECT count(*) AS v FROM " + vals + " t(x) WHERE x = ?", []string{"a", "a  ", "a ", "ü ", "c", ""}},
		{"SELECT count(*) AS v FROM " + vals + " t(x) WHERE x > ?", []string{"a", "a  ", "b"}},
		{"SELECT count(*) AS v FROM " + vals + " t(x) WHERE x IN (?, 'c')", []string{"a  ", "b"}},
		{"SELECT count(*) AS v FROM " + vals + " t(x) WHERE x IN (?)", []string{"ü  "}},
		{"SELECT concat(?::char(4), '|') AS v", []string{"ab", "abcdef", "ü", ""}},
		{"SELECT octet_length(CAST(? AS character(3))) AS v", []string{"ab", "üüüü"}},
	} {
		for _, v := range c.vals {
			pgSQL := "SELECT v::text FROM (" + strings.Replace(c.sql, "?", "$1", 1) + ") q"
			compareBound(ctx, t, pg, clients, c.sql, pgSQL, v)
		}
	}
}

// TestCharRecursiveTypmodAsPostgres: a recursive query's character(n) column keeps its
// modifier only when the recursive term's column has the same (the column itself, a cast to
// char(n)), else PostgreSQL's 42804 naming it bpchar overall, as for varchar(n)
// (TestRecursiveTypmodAsPostgres); a bpchar column without that modifier (max of char(n),
// bpchar without a length) beside a recursive term of another kind is refused by name.
func TestCharRecursiveTypmodAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const head = "WITH RECURSIVE r(x, n) AS (SELECT 'a'::char(3), 1 UNION ALL SELECT "
	const tail = ", n + 1 FROM r WHERE n < 3) SELECT x, octet_length(x), n FROM r ORDER BY n"
	qs := []string{
		head + "x" + tail,
		head + "x::char(3)" + tail,
		head + "CASE WHEN n > 1 THEN x ELSE 'b'::char(3) END" + tail,
		"WITH RECURSIVE r(x, n) AS (SELECT max('a'::char(3)), 1 UNION ALL SELECT x, n + 1 FROM r WHERE n < 3) SELECT x, octet_length(x), n FROM r ORDER BY n",
		"WITH RECURSIVE r(x, n) AS (SELECT 'a'::text, 1 UNION ALL SELECT 'b'::char(3), n + 1 FROM r WHERE n < 3) SELECT x, octet_length(x), n FROM r ORDER BY n",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		allRefusedWithState(t, ctx, cl.c, pg, "42804",
			head+"x || 'b'"+tail,
			head+"'b'"+tail,
			head+"NULL"+tail,
			head+"'b'::varchar(3)"+tail,
			head+"'b'::char(2)"+tail,
			head+"CASE WHEN n > 1 THEN x END"+tail,
			"WITH RECURSIVE r(x, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT 'b'::char(3), n + 1 FROM r WHERE n < 3) SELECT x, n FROM r",
		)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"WITH RECURSIVE r(x, n) AS (SELECT max('a'::char(3)), 1 UNION ALL SELECT x || 'b', n + 1 FROM r WHERE n < 3) SELECT x, n FROM r": "character(n) values of different lengths",
			"WITH RECURSIVE r(x, n) AS (SELECT 'a'::bpchar, 1 UNION ALL SELECT 'b'::char(3), n + 1 FROM r WHERE n < 3) SELECT x, n FROM r":   "character(n) values of different lengths",
			"WITH RECURSIVE r(x, n) AS (SELECT 'a'::bpchar, 1 UNION ALL SELECT x || 'b', n + 1 FROM r WHERE n < 3) SELECT x, n FROM r":       "character(n) values of different lengths",
		})
	}
}
