package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// fn18Where reads BOS's flights of two days.
const fn18Where = " FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02'"

// TestVarcharCastAsPostgres: an explicit cast to varchar(n) or character varying(n) cuts the
// text to its first n characters, as PostgreSQL does (no error), of columns, numbers, NULL and
// multibyte text, named varchar; lengths out of PostgreSQL's range are its 22023 (character(n):
// TestCharCastAsPostgres).
func TestVarcharCastAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, CAST(id AS varchar(4)), (value->>'destination')::character varying(2), CAST((value->>'delay')::int AS varchar(1)), " +
			"CAST(value->>'nosuch' AS varchar(3)), length(CAST(value->>'destination' AS varchar(10))), CAST(origin AS VARCHAR(10)) || '|'" + fn18Where + " ORDER BY 1",
		"SELECT CAST('abcdef' AS varchar(3)), 'ab'::varchar(3), CAST(12345 AS varchar(2)), 'héllo'::varchar(2), CAST(NULL AS varchar(3)), 'a  '::varchar(2) || '|', " +
			"CAST(2.50 AS varchar(3)), CAST(true AS varchar(1)), 'x'::pg_catalog.varchar(10485760)",
		"SELECT count(*), min(CAST(value->>'destination' AS varchar(1)))" + fn18Where + " GROUP BY CAST(value->>'destination' AS varchar(1)) ORDER BY 2",
		// A constant partition key cut by the cast routes the read.
		"SELECT count(*) FROM flights WHERE origin = 'BOSTON'::varchar(3) AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02'",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		sameColumnNames(t, ctx, cl.c, pg, "SELECT CAST(origin AS varchar(2)), CAST('a' AS character varying(3)), CAST(1 AS varchar(3))"+fn18Where+" LIMIT 1")
		for _, q := range []string{"SELECT 'abc'::varchar(0)", "SELECT CAST(id AS varchar(10485761))" + fn18Where} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22023")
		}
	}
}

// TestChrQuoteOverlayAsPostgres: chr, quote_ident, quote_literal, quote_nullable and
// overlay(… PLACING … FROM … [FOR …]) over the flights' fields and constants answer
// PostgreSQL's text, NULL and edge inputs included; chr's and overlay's bad arguments are
// PostgreSQL's errors.
func TestChrQuoteOverlayAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, chr(abs((value->>'delay')::int) % 90 + 33), quote_ident(value->>'destination'), quote_ident(lower(value->>'destination')), quote_literal(id), " +
			"quote_nullable(value->>'nosuch'), quote_nullable((value->>'delay')::int), overlay(id placing value->>'destination' from 3), " +
			"overlay(id placing origin from abs((value->>'delay')::int) % 12 + 1 for 2), overlay(value->>'destination' placing 'é' from 2 for -1)" + fn18Where + " ORDER BY 1",
		"SELECT chr(65), chr(233), chr(1114111), chr(NULL), quote_literal('a''b\\c'), quote_literal(''), quote_literal(NULL::text), quote_nullable(NULL::text), " +
			"quote_nullable('x'), quote_literal(42), quote_nullable(NULL), quote_ident('abc'), quote_ident('Abc'), quote_ident('select'), quote_ident('a\"b'), quote_ident(''), " +
			"quote_ident('name'), quote_ident('int'), quote_ident('_x1'), quote_ident('1x'), quote_ident('é'), quote_ident('overlay'), quote_ident(NULL)",
		"SELECT overlay('Txxxxas' placing 'hom' from 2 for 4), overlay('abcdef' placing 'XY' from 3), overlay('abc' placing 'XY' from 10), " +
			"overlay('abc' placing 'XY' from 2 for 0), overlay('abc' placing 'XY' from 2 for -1), overlay('abc' placing NULL from 1), overlay('héllo' placing 'E' from 2 for 1), " +
			"overlay('abc' placing 'X' from 2 for -5), overlay('abc' placing 'X' from NULL)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT chr(0)":       "54000",
			"SELECT chr(-1)":      "22023",
			"SELECT chr(1114112)": "54000",
			"SELECT chr(55296)":   "54000",
			"SELECT chr((value->>'delay')::int - 1000)" + fn18Where:   "22023",
			"SELECT overlay('abc' placing 'X' from 0)":                "22011",
			"SELECT overlay(id placing 'X' from 0)" + fn18Where:       "22011",
			"SELECT overlay('abc' placing 'X' from 2147483647 for 1)": "22003",
			"SELECT overlay('abc' placing 'X' from 1 for 2147483647)": "22003",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestBetweenSymmetricAsPostgres: [NOT] BETWEEN SYMMETRIC of the flights' fields and of
// constants, NULL bounds included, answers PostgreSQL's rows and values.
func TestBetweenSymmetricAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, (value->>'delay')::int BETWEEN SYMMETRIC 20 AND -5, (value->>'delay')::int NOT BETWEEN SYMMETRIC 20 AND -5, " +
			"(value->>'delay')::int BETWEEN SYMMETRIC NULL AND 10, (value->>'delay')::int NOT BETWEEN SYMMETRIC 10 AND NULL, value->>'destination' BETWEEN SYMMETRIC 'M' AND 'B'" +
			fn18Where + " AND (value->>'distance')::int BETWEEN SYMMETRIC 2000 AND 100 ORDER BY 1",
		"SELECT 2 BETWEEN SYMMETRIC 3 AND 1, 2 BETWEEN 3 AND 1, 2 NOT BETWEEN SYMMETRIC 3 AND 1, NULL::int BETWEEN SYMMETRIC 1 AND 2, 5 BETWEEN SYMMETRIC NULL AND 1, 0 BETWEEN SYMMETRIC NULL AND 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestRegexpCountSubstrAsPostgres: regexp_count(s, pattern) and regexp_substr(s, pattern) of
// the flights' fields and constants answer PostgreSQL's values (NULL without a match or of
// NULL); their further arguments and regexp_count of a pattern that can match the empty
// string are refused by name, an invalid pattern is PostgreSQL's 2201B.
func TestRegexpCountSubstrAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, regexp_count(id, '[0-4]'), regexp_count(value->>'destination', 'A|E|[OU]'), regexp_substr(id, '[5-9]+'), regexp_substr(value->>'destination', '[AEIOU].'), " +
			"regexp_count(value::text, '\"[a-z]+\"'), regexp_substr(value->>'nosuch', 'a')" + fn18Where + " ORDER BY 1",
		"SELECT regexp_count('ababab', 'ab'), regexp_count('aaaa', 'aa'), regexp_count('', 'a'), regexp_count(NULL, 'a'), regexp_count('héllo wörld', '[éö]'), " +
			"regexp_substr('abc123def456', '[0-9]+'), regexp_substr('abc', 'x'), regexp_substr('abc', '^a|bc'), regexp_substr(NULL, 'a'), regexp_count('a.b.c', '\\.')",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT regexp_count('abc', 'b', 2)":      "regexp_count with a start position",
			"SELECT regexp_substr('abc', 'b', 1, 1)":  "regexp_substr with a start position",
			"SELECT regexp_count('abc', 'x*')":        "regexp_count of a pattern that can match the empty string",
			"SELECT regexp_count('abc', '^')":         "regexp_count of a pattern that can match the empty string",
			"SELECT regexp_count(id, id)" + fn18Where: "regexp_count with a pattern that is not a constant",
		})
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT regexp_count('abc', '(')", "2201B")
	}
}

// TestFormatAsPostgres: format(fmt, …) with %s, %I, %L, %%, positions and widths over the
// flights' fields and constants answers PostgreSQL's text (NULL arguments and format string
// included); its bad specifiers and missing arguments are PostgreSQL's errors.
func TestFormatAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, format('%s->%s (%s min) %L %I', origin, value->>'destination', (value->>'delay')::int, id, value->>'destination'), " +
			"format('%-6s|%6s|%2$s|%1$L', value->>'destination', (value->>'distance')::int), format('%s %L', value->>'nosuch', value->>'nosuch')" + fn18Where + " ORDER BY 1",
		"SELECT format('Hello %s', 'World'), format('%s%%', 50), format('%1$s %1$s %s', 'a', 'b'), format('|%10s|%-10s|', 'abc', 'é'), format('%L', 'O''Reilly\\x'), " +
			"format('%I', 'Foo bar'), format('%s', NULL), format('%L', NULL), format(NULL, 'a'), format('no args'), format('%3$s %s', 1, 2, 3, 4), format('%s', true), format('%2s', 'abc')",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT format('%s %s', 'a')":            "22023",
			"SELECT format('%x', 'a')":               "22023",
			"SELECT format('abc %', 'a')":            "22023",
			"SELECT format('%0$s', 'a')":             "22023",
			"SELECT format('%I', NULL)":              "22004",
			"SELECT format('%s %s', id)" + fn18Where: "22023",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}
