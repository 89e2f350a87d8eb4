package e2e

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"google.golang.org/grpc/codes"
)

// TestRegexOptionsAsPostgres: the directors ***: and ***=, embedded options at the start of a
// pattern ((?i), (?x), (?n), (?q)…), comments (?#…), the word boundaries [[:<:]], [[:>:]],
// \m, \M, \y and \Y, and regexp_replace's and regexp_match's flag letters (n, p, w, s, x, q,
// t, c, i, g, m) over the flights' fields and constants answer PostgreSQL's values; unknown
// flag letters are its 22023, bad embedded options and misplaced ones its 2201B; the options
// b and e (basic and extended syntax) and word boundaries RE2 cannot express are refused by
// name.
func TestRegexOptionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT 'ABC' ~ '(?i)abc', 'a b' ~ '(?x)a b', 'ab' ~ '(?x)a b', 'ab' ~ '***:ab', 'a.b' ~ '***=a.b', 'axb' ~ '***=a.b', 'A.B' ~* '***=a.b', 'aab' ~ '(?x)a +b', " +
			"'ab' ~ E'(?x)a#comment\\nb', 'a b' ~ '(?x)a\\ b', 'a b' ~ '(?x)a[ ]b', 'ab' ~ '(?x)a{ 1}b', 'ab' ~ '***:(?i)AB', 'ab' ~ '(?q)a.b', 'a.b' ~ '(?iq)A.B', " +
			"'ab' ~ '(?xq)a b', 'a b' ~ '(?qx)a b', 'ab' ~ 'a(?#comment)b', 'AB' ~* '(?c)ab', 'ab' ~ '(?t)ab', 'a' ~ '***:', 'a' ~ '***='",
		"SELECT E'a\\nb' ~ '(?n)a.b', E'a\\nb' ~ '(?n)a[^x]b', E'a\\nb' ~ '(?n)^b', E'a\\nb' ~ '(?p)^b', E'a\\nb' ~ '(?p)a.b', E'a\\nb' ~ '(?w)^b', " +
			"E'a\\nb' ~ '(?w)a.b', E'a\\nb' ~ '(?m)^b', E'a\\nb' ~ '(?s)^b', E'a\\nb' ~ '(?n)a$', E'a\\nb' ~ '(?n)a\\Z', E'a\\nb' ~ '(?n)a\\Db', E'a\\nb' ~ '(?n)a\\Wb', " +
			"E'a\\nb' ~ '(?n)a[^[:alpha:]]b', 'a]b' ~ '(?n)a[^]x]b', 'ayb' ~ '(?n)a[^]x]b', 'ab' ~ '\\Aa', 'ab' ~ 'b\\Z'",
		"SELECT 'foo bar' ~ '[[:<:]]bar', 'foobar' ~ '[[:<:]]bar', 'foo bar' ~ 'foo[[:>:]]', 'foobar' ~ 'foo[[:>:]]', 'foo bar' ~ '\\mbar\\M', 'foo_bar' ~ '\\mbar', " +
			"'foobar' ~ '\\ybar', 'foobar' ~ 'o\\Yb', 'a b' ~ 'a\\Y ', 'Ab' ~* '[[:<:]]ab', '-- xy --' ~ '\\m[a-z]+\\M', 'a 123' ~ '\\m\\d{2}\\M', 'x1_y' ~ '\\m[[:alnum:]_]+\\M'",
		"SELECT regexp_replace('Abc abc', 'a', 'x', 'gi'), regexp_replace('abc', 'B', 'x', 'ic'), regexp_replace('abc', 'B', 'x', 'ci'), regexp_replace(E'a\\nb', '^b', 'x', 'n'), " +
			"regexp_replace('a b', 'a b', 'x', 'x'), regexp_replace('a.b', 'a.b', 'x', 'q'), regexp_replace('abc', 'b', 'x', 'gg'), regexp_replace('abc', 'b', 'x', ''), " +
			"regexp_replace(E'x\\ny\\nz', '^.', '-', 'gn'), regexp_replace(E'x\\ny', '.$', '-', 'gw'), regexp_replace(E'x\\ny', 'x.', '-', 'p'), regexp_replace('foo bar', '\\y', '|', 'g'), " +
			"regexp_replace('foo bar baz', '[[:<:]]ba', 'BA', 'g'), regexp_replace('foo bar', 'o[[:>:]]', '0', 'g'), regexp_replace('a+b', '(?q)+', ' plus ', 'g'), regexp_replace('AbC', '(?i)b', 'x', 'c')",
		"SELECT (regexp_match('Foo Bar', '(?i)b(a)r'))[1], (regexp_match('Foo Bar', 'B(A)R', 'i'))[1], (regexp_match(E'a\\nb', 'a(.)b', 'n'))[1], (regexp_match('a b c', '(?x) (b) \\s c'))[1]",
		"SELECT id, value->>'destination' ~ '(?i)^[a-m]', regexp_replace(value->>'destination', '(?x) [AEIOU] # vowels', '*', 'g'), id ~ '\\m[0-9]+\\M', regexp_replace(id, '\\y', '|', 'g'), " +
			"regexp_replace(value->>'destination', 'a', '_', 'gi')" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT regexp_replace('abc', 'b', 'x', 'z')":  "22023",
			"SELECT regexp_replace('abc', 'b', 'x', 'G')":  "22023",
			"SELECT regexp_replace('abc', 'b', 'x', 'bz')": "22023",
			"SELECT (regexp_match('abc', 'b', 'g'))[1]":    "22023",
			"SELECT (regexp_match('abc', 'b', 'y'))[1]":    "22023",
			"SELECT 'a' ~ '(?z)a'":                         "2201B",
			"SELECT 'a' ~ '(?i'":                           "2201B",
			"SELECT 'abc' ~ 'a(?i)bc'":                     "2201B",
			"SELECT 'a' ~ '(?)a'":                          "2201B",
			"SELECT 'ab' ~ '(?x)( ?:a)b'":                  "2201B",
			"SELECT 'ab' ~ '***:***:ab'":                   "2201B",
			"SELECT 'ab' ~ 'a[[:<:]b]'":                    "2201B",
			"SELECT 'a b' ~ 'a\\y*b'":                      "2201B",
			"SELECT 'x' ~ '(?P<n>x)'":                      "2201B",
			"SELECT id ~ '(?x)a(?i)'" + fn18Where:          "2201B",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT 'a' ~ '(?b)a'":                        "the options b and e (basic and extended syntax)",
			"SELECT regexp_replace('abc', 'b', 'x', 'e')": "the options b and e (basic and extended syntax)",
			"SELECT 'ab' ~ '\\M'":                         "an end of word (\\M, [[:>:]]) after other than a word character",
			"SELECT 'a b' ~ 'a [[:<:]]'":                  "a start of word (\\m, [[:<:]]) before other than a word character",
			"SELECT id ~ '.\\M'" + fn18Where:              "an end of word (\\M, [[:>:]]) after other than a word character",
			"SELECT regexp_replace('ab', 'b', 'x', flags)" + " FROM (VALUES ('g')) v(flags)": "regexp_replace with flags that are not a constant",
		})
	}
}

// TestOrderedAggregatesAsPostgres: string_agg(x, s ORDER BY …) and array_agg(x ORDER BY …) by
// other expressions (several keys, ASC/DESC, NULLS FIRST/LAST; text, integer, date,
// timestamp, numeric and boolean keys), FILTER, and array_agg(DISTINCT …) over the flights'
// fields (across archived and hot buckets: partial states merged) and constants answer
// PostgreSQL's values; DISTINCT with an ORDER BY of another expression is its 42P10.
func TestOrderedAggregatesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	span := " FROM flights WHERE origin IN ('BOS', 'ORD') AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	qs := []string{
		"SELECT value->>'destination' AS d, string_agg(id, ',' ORDER BY (value->>'delay')::int DESC, id), array_agg((value->>'delay')::int ORDER BY id DESC)::text, " +
			"string_agg(value->>'destination', '|' ORDER BY timestamp, id), array_agg(id ORDER BY (value->>'distance')::int NULLS FIRST, id)::text, " +
			"array_agg(value->>'nosuch' ORDER BY id)::text" + fn18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT origin, value->>'destination' AS d, string_agg(id, ',' ORDER BY timestamp DESC, id) FILTER (WHERE (value->>'delay')::int > 0), " +
			"array_agg((value->>'delay')::int ORDER BY timestamp, id)::text, array_agg(DISTINCT (value->>'delay')::int / 10 ORDER BY (value->>'delay')::int / 10 DESC)::text" +
			span + " GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT origin, array_agg(DISTINCT value->>'destination')::text, string_agg(DISTINCT value->>'destination', ' ' ORDER BY value->>'destination' DESC), count(*)" + span + " GROUP BY 1 ORDER BY 1",
		"SELECT string_agg(x, ',' ORDER BY y), string_agg(x, ',' ORDER BY y DESC), array_agg(x ORDER BY y DESC NULLS LAST)::text, array_agg(x ORDER BY y NULLS FIRST)::text, " +
			"array_agg(y ORDER BY x DESC)::text, array_agg(y ORDER BY x NULLS FIRST)::text, string_agg(x, ',' ORDER BY x NULLS FIRST) FROM (VALUES ('a', 3), ('b', NULL), ('c', 2), (NULL, 1)) v(x, y)",
		"SELECT array_agg(DISTINCT x)::text, array_agg(DISTINCT x ORDER BY x DESC)::text, string_agg(DISTINCT x, ',' ORDER BY x DESC), array_agg(DISTINCT y)::text, " +
			"array_agg(DISTINCT x ORDER BY x, x DESC)::text FROM (VALUES ('a', 3), ('b', NULL), ('a', 2), (NULL, 1), (NULL, 3)) v(x, y)",
		"SELECT string_agg(x, ',' ORDER BY d), string_agg(x, ',' ORDER BY ts DESC), string_agg(x, ',' ORDER BY n), string_agg(x, ',' ORDER BY b, x DESC), " +
			"array_agg(x ORDER BY d DESC)::text, string_agg(x, ',' ORDER BY s) FROM (VALUES ('a', date '2001-01-03', timestamp '2001-01-01 10:00', 1.5, true, 3::smallint), " +
			"('b', date '2001-01-01', timestamp '2001-01-01 09:00', -2.25, false, 1::smallint), ('c', date '2001-01-02', timestamp '2001-01-01 11:00', 10, true, 2::smallint)) v(x, d, ts, n, b, s)",
		"SELECT g % 3 AS k, string_agg(g::text, '-' ORDER BY g % 4, g DESC), array_agg(g ORDER BY -g)::text FROM generate_series(1, 20) g GROUP BY 1 ORDER BY 1",
		"SELECT string_agg(x, ',' ORDER BY y), array_agg(x ORDER BY y)::text FROM (VALUES ('a', 1)) v(x, y) WHERE false",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT string_agg(DISTINCT x, ',' ORDER BY y) FROM (VALUES ('a', 1)) v(x, y)": "42P10",
			"SELECT array_agg(DISTINCT x ORDER BY y)::text FROM (VALUES ('a', 1)) v(x, y)": "42P10",
			"SELECT array_agg(DISTINCT id ORDER BY timestamp)::text" + fn18Where:           "42P10",
			"SELECT string_agg(DISTINCT id, ',' ORDER BY id, timestamp)" + fn18Where:       "42P10",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT array_agg(DISTINCT x ORDER BY x NULLS FIRST)::text FROM (VALUES ('a')) v(x)": "array_agg(DISTINCT …) with NULLS FIRST or LAST other than the default",
			"SELECT string_agg(x, ',' ORDER BY y) FROM (VALUES ('a', interval '1 day')) v(x, y)": "string_agg ordered by interval",
			"SELECT string_agg(x, ',' ORDER BY y USING <) FROM (VALUES ('a', 1)) v(x, y)":        "string_agg with ORDER BY … USING",
		})
	}
}

// TestModeAsPostgres: mode() WITHIN GROUP (ORDER BY x [DESC]) of text, date, timestamp,
// boolean and numeric over the flights' fields (across archived and hot buckets) and
// constants answers PostgreSQL's value, its pick among equally frequent values included (the
// first in the ordering); numerics of varying display scale are refused by name.
func TestModeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	span := " FROM flights WHERE origin IN ('BOS', 'ORD') AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	qs := []string{
		"SELECT origin, mode() WITHIN GROUP (ORDER BY value->>'destination'), mode() WITHIN GROUP (ORDER BY value->>'destination' DESC), " +
			"mode() WITHIN GROUP (ORDER BY date_trunc('day', timestamp))::text, mode() WITHIN GROUP (ORDER BY timestamp::date DESC)::text, " +
			"mode() WITHIN GROUP (ORDER BY (value->>'delay')::int > 0)::text, mode() WITHIN GROUP (ORDER BY (value->>'delay')::int * 0.5)::text, " +
			"mode() WITHIN GROUP (ORDER BY value->>'nosuch') FILTER (WHERE (value->>'delay')::int > 10)" + span + " GROUP BY 1 ORDER BY 1",
		"SELECT value->>'destination' AS d, mode() WITHIN GROUP (ORDER BY id), mode() WITHIN GROUP (ORDER BY timestamp DESC)::text" + fn18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT mode() WITHIN GROUP (ORDER BY x), mode() WITHIN GROUP (ORDER BY x DESC) FROM (VALUES ('b'), ('a'), ('b'), ('a'), ('c'), (NULL), (NULL), (NULL)) v(x)",
		"SELECT mode() WITHIN GROUP (ORDER BY x)::text, mode() WITHIN GROUP (ORDER BY x DESC)::text FROM (VALUES (1.5), (2.5), (2.5), (1.5), (NULL)) v(x)",
		"SELECT mode() WITHIN GROUP (ORDER BY d)::text, mode() WITHIN GROUP (ORDER BY ts DESC)::text, mode() WITHIN GROUP (ORDER BY b)::text FROM (VALUES (date '2001-01-02', " +
			"timestamp '2001-01-01 10:00', true), (date '2001-01-01', timestamp '2001-01-01 09:00', false)) v(d, ts, b)",
		"SELECT mode() WITHIN GROUP (ORDER BY x) FROM (VALUES ('a')) v(x) WHERE false",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT mode() WITHIN GROUP (ORDER BY x::numeric) FROM (VALUES ('1.5'), ('2.50')) v(x)": "mode of numeric values of varying display scale",
		})
	}
}

// TestPercentileArraysAsPostgres: percentile_cont(ARRAY[…]) and percentile_disc(ARRAY[…])
// WITHIN GROUP (ORDER BY x [DESC]) over the flights' fields (across archived and hot buckets)
// and constants answer PostgreSQL's arrays (double precision for percentile_cont, x's type
// for percentile_disc; NULL fractions, an empty array, a group without values) and their
// text; a fraction outside [0, 1] is PostgreSQL's 22003, a multidimensional array is refused
// by name.
func TestPercentileArraysAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	span := " FROM flights WHERE origin IN ('BOS', 'ORD') AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	qs := []string{
		"SELECT origin, percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY (value->>'delay')::int)::text, " +
			"percentile_disc(ARRAY[0.1, NULL, 0.9, 1, 0]) WITHIN GROUP (ORDER BY (value->>'delay')::int DESC)::text, " +
			"percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY (value->>'distance')::bigint)::text, " +
			"percentile_cont(ARRAY[0.33]) WITHIN GROUP (ORDER BY (value->>'delay')::float8 / 7)::text, " +
			"percentile_disc(ARRAY[0.2, 0.8]) WITHIN GROUP (ORDER BY (value->>'delay')::float8 / 4)::text, " +
			"percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY (value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 1000)::text" + span + " GROUP BY 1 ORDER BY 1",
		"SELECT percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY x)::text, percentile_disc(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP (ORDER BY x)::text, " +
			"percentile_disc(ARRAY[]::float8[]) WITHIN GROUP (ORDER BY x)::text, percentile_cont(ARRAY[NULL, 0.1]) WITHIN GROUP (ORDER BY x DESC)::text, " +
			"percentile_disc(ARRAY[0.5, 0.5]) WITHIN GROUP (ORDER BY x::smallint)::text FROM generate_series(1, 10) x",
		"SELECT percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY x)::text, percentile_disc(ARRAY[2]) WITHIN GROUP (ORDER BY x)::text FROM generate_series(1, 3) x WHERE false",
		"SELECT percentile_cont(ARRAY[0.5, 1.5]) WITHIN GROUP (ORDER BY x)::text FROM generate_series(1, 3) x WHERE false",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		// The answers' types: double precision[] and x's own type's array (PostgreSQL's
		// float8[], integer[], bigint[], float8[] here).
		res := mustRun(t, cl.c, "SELECT percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY x), percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY x), "+
			"percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY x::bigint), percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY x::float8) FROM generate_series(1, 10) x")
		var got []string
		for _, f := range res.recs[0].Schema().Fields() {
			got = append(got, f.Type.(*arrow.ListType).Elem().String())
		}
		res.release()
		if want := []string{"float64", "int32", "int64", "float64"}; !slices.Equal(got, want) {
			t.Errorf("%s: elements %v, want %v", cl.name, got, want)
		}
		for _, q := range []string{
			"SELECT percentile_cont(ARRAY[0.5, 1.5]) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 3) x",
			"SELECT percentile_disc(ARRAY[-0.5]) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 3) x",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22003")
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT percentile_cont(ARRAY[[0.25], [0.5]]) WITHIN GROUP (ORDER BY x) FROM generate_series(1, 3) x": "of a multidimensional array of fractions",
			"SELECT percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY id)" + fn18Where:                           "percentile_disc of text",
		})
	}
}
