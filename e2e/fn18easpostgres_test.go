package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestSubstringRegexAsPostgres: substring(s FROM pattern) and substring(s, pattern) with a
// POSIX regular expression (Metabase's regexextract) over the flights' fields and constants
// answer PostgreSQL's text: the first parenthesised subexpression's text, else the whole match,
// NULL without a match, of NULL or when that subexpression took no part. The SIMILAR form
// (… FOR escape), patterns with alternatives and subexpressions and patterns that are not
// constants are refused by name; an invalid pattern is PostgreSQL's 2201B.
func TestSubstringRegexAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, substring(id FROM '[0-9]+'), substring(id, '-([0-9])'), substring(value->>'destination' FROM '^(.)'), substring(value->>'destination' FROM '[AEIOU](.)?'), " +
			"substring(value::text FROM '\"destination\": \"([A-Z]+)\"'), substring(value->>'nosuch' FROM 'a'), substring(origin FROM 'x')" + fn18Where + " ORDER BY 1",
		"SELECT substring('foobar' FROM 'o(b)'), substring('foobar' FROM 'o.b'), substring('foobar' FROM 'x'), substring('foobar' FROM '(x)?b'), substring('foobar' FROM '(?:o)b'), " +
			"substring('foobar', 'o+'), substring('hello' FROM '2'), substring(NULL::text FROM 'l'), substring('héllo' FROM 'é.'), substring('hello' FROM '(l)(o)'), " +
			"substring('hello' FROM '2' FOR 2), substring('a1b22c333' FROM '[0-9]{2,}'), substring('abc' FROM '')",
		"SELECT count(*), substring(value->>'destination' FROM '^[A-Z]')" + fn18Where + " GROUP BY 2 ORDER BY 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT substring('foobar' FROM '%o#\"b_#\"%' FOR '#')":       "substring(… FROM pattern FOR escape) (a SIMILAR pattern)",
			"SELECT substring('foobar' SIMILAR '%o#\"b_#\"%' ESCAPE '#')": "substring(… FROM pattern FOR escape) (a SIMILAR pattern)",
			"SELECT substring('hello' FROM '(x)|l')":                      "substring(… FROM pattern) of a pattern with alternatives (|) and subexpressions",
			"SELECT substring(id FROM id)" + fn18Where:                    "substring(… FROM pattern) with a pattern that is not a constant",
		})
		for _, q := range []string{"SELECT substring('hello' FROM '(')", "SELECT substring(id, '[')" + fn18Where} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "2201B")
		}
	}
}

// TestDivToHexAsPostgres: div(a, b) of integers (the quotient truncated toward zero, numeric)
// and to_hex of integers and bigints (two's complement of negatives) over the flights' fields
// and constants answer PostgreSQL's values and text; a zero divisor is 22012, to_hex of a
// smallint or an unknown is 42725, of a numeric and div of a float 42883; div of numeric values
// is the exact quotient truncated too (of an average or a quotient, PostgreSQL's value).
func TestDivToHexAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, div((value->>'delay')::int, 7)::text, div((value->>'distance')::bigint, -(value->>'delay')::int2)::text, to_hex((value->>'delay')::int), to_hex((value->>'distance')::bigint * -1000), " +
			"div((value->>'nosuch')::int, 2)::text, to_hex((value->>'nosuch')::int)" + fn18Where + " AND (value->>'delay')::int <> 0 ORDER BY 1",
		"SELECT div(7, 2)::text, div(-7, 2)::text, div(7, -2)::text, div(-7, -2)::text, div(-9223372036854775808, -1)::text, div(-7::int2, 2::int8)::text, div(NULL::int, 1)::text, div(NULL, 3)::text, div(0, 5)::text, " +
			"to_hex(255), to_hex(-1), to_hex(-1::bigint), to_hex(-2147483648), to_hex(0), to_hex(NULL::int), to_hex(9223372036854775807), to_hex(-9223372036854775808), to_hex(2147483648)",
		"SELECT div(sum((value->>'delay')::int), count(*))::text, to_hex(count(*))" + fn18Where,
		// div of numerics (issue 18): the quotient truncated toward zero, exactly, scale 0.
		"SELECT div(7, 2.5)::text, div(7.5, 2)::text, div(-7.5, 2)::text, div(-0.5, 1)::text, div(0.9999999999999999999999999, 1)::text, div(1e30, 0.001)::text, " +
			"div('17', '5')::text, div(10.5::numeric(5,2), 0.25)::text, div(-12345678901234567890.123, 0.0000001)::text, div(NULL::numeric, 2)::text, div(2.5, NULL)::text",
		"SELECT id, div((value->>'delay')::numeric, 2.5)::text, div((value->>'distance')::numeric / 7, -0.3)::text, div(round((value->>'delay')::numeric, 1), 4)::text" + fn18Where + " ORDER BY 1",
		"SELECT div(avg((value->>'delay')::int), 0.001)::text, div(sum((value->>'delay')::numeric) / 3, 1)::text, div(avg((value->>'distance')::numeric), -7)::text" + fn18Where,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT div(1, 0)": "22012",
			"SELECT div((value->>'delay')::int, 0)" + fn18Where: "22012",
			"SELECT div(0, 0)":           "22012",
			"SELECT to_hex(1::int2)":     "42725",
			"SELECT to_hex('255')":       "42725",
			"SELECT to_hex(1.5::float8)": "42883",
			"SELECT div(1.5::float8, 2)": "42883",
			"SELECT to_hex(1::int, 2)":   "42883",
			"SELECT div(7.5, 0)":         "22012",
			"SELECT div(1, '0.0')":       "22012",
			"SELECT div('7'::text, 2)":   "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestShaDigestsAsPostgres: sha224, sha256, sha384 and sha512 of bytea (constants read by
// byteain, the flights' fields converted to bytes, NULL) answer PostgreSQL's digests; of text
// they are PostgreSQL's 42883.
func TestShaDigestsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		// bytea compares as md5's text of it (hex digits) and its length.
		"SELECT id, md5(sha256(id::bytea)), md5(sha224((value->>'destination')::bytea)), md5(sha512((value->>'nosuch')::bytea)), length(sha384(id::bytea))" + fn18Where + " ORDER BY 1",
		"SELECT md5(sha256('abc')), md5(sha224('\\x00')), md5(sha384('')), md5(sha512('abc')), md5(sha256(NULL)), md5(sha256('\\x0102'::bytea)), length(sha512('x')), length(sha224('')), " +
			"md5(sha256('a\\\\b')), sha256('abc') = sha256('\\x616263'), sha224('abc')::text, sha256(id::bytea)::text" + fn18Where + " ORDER BY 1 LIMIT 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{"SELECT sha256('abc'::text)", "SELECT sha256(id)" + fn18Where, "SELECT sha512(1)", "SELECT sha256('a', 'b')"} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42883")
		}
	}
}

// TestEncodeAsPostgres: encode(bytea, 'hex' | 'base64' | 'escape') of constants and the
// flights' fields answers PostgreSQL's text (base64's newline after every 76 characters of full
// groups, escape's octal bytes); an unknown format is PostgreSQL's 22023, encode of text 42883,
// a format that is not a constant refused by name.
func TestEncodeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, encode(id::bytea, 'hex'), encode(id::bytea, 'base64'), encode((value->>'destination')::bytea, 'escape'), encode(repeat(id, 9)::bytea, 'base64'), " +
			"encode((value->>'nosuch')::bytea, 'hex'), encode(sha256(id::bytea), 'Base64')" + fn18Where + " ORDER BY 1",
		"SELECT encode('\\x00010aff5c7e7f80'::bytea, 'escape'), encode('\\x00ff'::bytea, 'hex'), encode(''::bytea, 'base64'), encode(repeat('a', 57)::bytea, 'base64'), " +
			"encode(repeat('a', 58)::bytea, 'base64'), encode(repeat('a', 56)::bytea, 'base64'), encode(repeat('a', 114)::bytea, 'base64'), encode(repeat('a', 200)::bytea, 'base64'), " +
			"encode('a\\\\b'::bytea, 'ESCAPE'), encode('abc', 'Hex'), encode('\\x41', 'base64'), encode(NULL::bytea, 'hex'), encode('\\x01'::bytea, NULL), encode(sha224('abc'), 'hex')",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT encode('abc'::bytea, 'foo')":             "22023",
			"SELECT encode(id::bytea, 'base32')" + fn18Where: "22023",
			"SELECT encode('abc'::text, 'hex')":              "42883",
			"SELECT encode(id, 'hex')" + fn18Where:           "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT encode(id::bytea, id)" + fn18Where: "encode with a format that is not a constant",
		})
	}
}
