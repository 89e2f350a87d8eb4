package e2e

import (
	"context"
	"errors"
	"regexp"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDecodeAsPostgres: decode(text, 'hex' | 'base64' | 'escape') of constants and of the
// flights' fields (their encode, then decoded back; the destination read as hex and base64)
// answers PostgreSQL's bytea (compared as byteaout's text), white space and padding as its
// decoder reads them; a bad format is 22023, bad input 22023 or 22P02 (the base64 symbol
// PostgreSQL quotes left out of ours), decode of bytea or integers 42883, a format that is
// not a constant refused by name.
func TestDecodeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, decode(encode(id::bytea, 'base64'), 'base64')::text, decode(encode(id::bytea, 'hex'), 'HEX')::text, decode(encode((value->>'destination')::bytea, 'escape'), 'escape')::text, " +
			"decode((value->>'destination') || 'A', 'base64')::text, decode(repeat(id, 7), 'escape')::text, decode(encode(repeat(id, 9)::bytea, 'base64'), 'base64') = repeat(id, 9)::bytea, " +
			"decode(value->>'nosuch', 'hex')::text, length(decode(md5(id), 'hex'))" + fn18Where + " ORDER BY 1",
		"SELECT decode('616263', 'hex')::text, decode(E'61 62\\n63\\t', 'hex')::text, decode('YWJj', 'base64')::text, decode(E'YW Jj\\n\\r', 'base64')::text, decode('YQ==', 'base64')::text, " +
			"decode('YQ==YQ==', 'base64')::text, decode('YWJjZA==', 'Base64')::text, decode(E'a\\\\000b\\\\\\\\c\\\\377', 'escape')::text, decode('', 'hex')::text, decode('', 'base64')::text, " +
			"decode(NULL, 'hex')::text, decode('61', NULL)::text, decode('+/+/', 'base64')::text, length(decode('AAAA', 'base64')), decode('é', 'escape')::text",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT decode('abc', 'foo')":                             "22023",
			"SELECT decode(id, 'base32')" + fn18Where:                 "22023",
			"SELECT decode('616', 'hex')":                             "22023",
			"SELECT decode('zz', 'hex')":                              "22023",
			"SELECT decode('6 1', 'hex')":                             "22023",
			"SELECT decode('YQ=', 'base64')":                          "22023",
			"SELECT decode('Y===', 'base64')":                         "22023",
			"SELECT decode(E'a\\\\', 'escape')":                       "22P02",
			"SELECT decode(E'\\\\x41', 'escape')":                     "22P02",
			"SELECT decode(id || '\\', 'escape')" + fn18Where:         "22P02",
			"SELECT decode(value->>'destination', 'hex')" + fn18Where: "22023",
			"SELECT decode('abc'::bytea, 'hex')":                      "42883",
			"SELECT decode(1, 'hex')":                                 "42883",
			"SELECT decode('abc')":                                    "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		for _, q := range []string{"SELECT decode('YWJ%', 'base64')", "SELECT decode(id || '-', 'base64')" + fn18Where} {
			refusedAsPostgresUnquoted(t, ctx, cl.c, pg, q, "22023")
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT decode('61', id)" + fn18Where: "decode with a format that is not a constant",
		})
	}
}

// refusedAsPostgresUnquoted is refusedAsPostgres for PostgreSQL's messages that quote a
// piece of the input (`invalid symbol "%" found …`), which flightsrv's leave out: ours is
// PostgreSQL's without the quoted piece.
func refusedAsPostgresUnquoted(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q, sqlstate string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != sqlstate {
		t.Fatalf("PostgreSQL %s: %v, want SQLSTATE %s", q, err, sqlstate)
	}
	want := quotedPiece.ReplaceAllString(pgErr.Message, "")
	if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != want {
		t.Errorf("%s: %v, want INVALID_ARGUMENT with %q (PostgreSQL's %q)", q, err, want, pgErr.Message)
	}
}

var quotedPiece = regexp.MustCompile(` "[^"]*"`)

// TestConvertToByteaConcatAsPostgres: convert_to(text, 'UTF8') (any spelling of UTF8) is the
// text's bytes as bytea; bytea || bytea (an untyped constant read as bytea) is byteacat's
// bytea, bytea || text text of byteaout's hex, over constants and the flights' fields, as
// PostgreSQL answers; convert_to of bytea or integers and bytea || integer are 42883, another
// encoding refused by name.
func TestConvertToByteaConcatAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, convert_to(id, 'UTF8')::text, convert_to(value->>'destination', 'utf-8')::text, md5(convert_to(id, 'UTF8')), convert_to(value->>'nosuch', 'UTF8')::text, " +
			"(id::bytea || convert_to(id, 'UTF8'))::text, (sha224(id::bytea) || '\\x00ff')::text, id::bytea || id, (value->>'destination') || id::bytea, (id::bytea || NULL)::text, " +
			"length(id::bytea || id::bytea), convert_from(convert_to(id, 'UTF8') || convert_to('é', 'UTF8'), 'UTF8')" + fn18Where + " ORDER BY 1",
		"SELECT convert_to('héllo', 'UTF8')::text, convert_to('', 'Utf_8')::text, convert_to(NULL, 'UTF8')::text, convert_to('a', NULL)::text, convert_to('x', 'unicode')::text, " +
			"('\\x01'::bytea || '\\x02'::bytea)::text, ('\\x01'::bytea || '\\x0203')::text, ('\\x01'::bytea || 'ab'::text), ('ab'::text || '\\x01'::bytea), ('\\x'::bytea || '\\x'::bytea)::text, " +
			"('a\\\\b' || '\\x63'::bytea)::text",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT convert_to(1, 'UTF8')":               "42883",
			"SELECT convert_to('abc'::bytea, 'UTF8')":    "42883",
			"SELECT convert_to('abc')":                   "42883",
			"SELECT '\\x01'::bytea || 1::int":            "42883",
			"SELECT id::bytea || length(id)" + fn18Where: "42883",
			"SELECT '\\x01'::bytea || E'a\\\\'":          "22P02",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT convert_to('abc', 'LATIN1')":    "convert_to to an encoding other than UTF8",
			"SELECT convert_to(id, id)" + fn18Where: "convert_to to an encoding other than UTF8",
		})
	}
}

// TestCbrtAsPostgres: cbrt of doubles, integers, numerics, reals and untyped constants — the
// flights' delays and distances, their quotients, and edge values (zeros, infinities, NaN,
// the largest and smallest doubles, exact cubes, which the C library does not always return
// exactly: cbrt(27) is 3.0000000000000004) — is PostgreSQL's double to the last digit; of
// text 42883, of a constant that is no number 22P02.
func TestCbrtAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, cbrt((value->>'delay')::float8)::text, cbrt((value->>'distance')::int)::text, cbrt((value->>'distance')::float8 / 7)::text, cbrt((value->>'delay')::numeric * 1.5)::text, " +
			"cbrt(-(value->>'distance')::real)::text, cbrt((value->>'nosuch')::float8)::text" + fn18Where + " ORDER BY 1",
		"SELECT cbrt(27)::text, cbrt(-8::int2)::text, cbrt(27.0)::text, cbrt('64')::text, cbrt(NULL)::text, cbrt('Infinity'::float8)::text, cbrt('-Infinity'::float8)::text, cbrt('NaN'::float8)::text, " +
			"cbrt('-0'::float8)::text, cbrt(0)::text, cbrt(1e308::float8)::text, cbrt(5e-324::float8)::text, cbrt(2.2250738585072014e-308::float8)::text, cbrt(1e-300::float8)::text, " +
			"cbrt(123456789012345)::text, cbrt(0.001)::text, cbrt(1e300::float8)::text, cbrt(1000000000)::text, cbrt(-1998)::text, cbrt(1.7976931348623157e308::float8)::text",
		"SELECT string_agg(cbrt(g * 0.37::float8)::text, ',' ORDER BY g), string_agg(cbrt(-g)::text, ',' ORDER BY g), string_agg(cbrt(g * 1e-7::float8)::text, ',' ORDER BY g) FROM generate_series(1, 3000) g",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT cbrt('x'::text)":      "42883",
			"SELECT cbrt(id)" + fn18Where: "42883",
			"SELECT cbrt(1, 2)":           "42883",
			"SELECT cbrt('abc')":          "22P02",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestStringToArrayAsPostgres: string_to_array(text, delimiter[, null_string]) of constants and
// of the flights' fields answers PostgreSQL's text[] (compared as array_out's text, and through
// array_to_string): empty elements, an empty text ({}), a NULL delimiter (each character), an
// empty one (the text whole), a null string; of integers 42883; unnest of it and subscripts
// refused by name.
func TestStringToArrayAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT string_to_array('a,b,,c', ',')::text, string_to_array('', ',')::text, string_to_array('abc', NULL)::text, string_to_array('abc', '')::text, string_to_array('', '')::text, " +
			"string_to_array(NULL, ',')::text, string_to_array('a,x,b', ',', 'x')::text, string_to_array('a,x,b', ',', NULL)::text, string_to_array('a::b::', '::')::text, " +
			"string_to_array('héllo', NULL)::text, string_to_array('a b', ' ')::text, array_to_string(string_to_array('1,2,3', ','), '-'), string_to_array('a,b', ',', '')::text, " +
			"string_to_array(',', ',')::text, string_to_array('a,\"b c\",{}', ',')::text, array_to_string(string_to_array('a,x,b', ',', 'x'), '|', '*')",
		"SELECT id, string_to_array(id, '0')::text, string_to_array(value->>'destination', NULL)::text, array_to_string(string_to_array(value::text, ','), ';'), " +
			"string_to_array(value->>'nosuch', ',')::text, string_to_array(id || ',' || (value->>'destination'), ',', value->>'destination')::text" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT string_to_array(1, ',')":          "42883",
			"SELECT string_to_array('a')":             "42883",
			"SELECT string_to_array('a'::bytea, ',')": "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT unnest(string_to_array('a,b', ','))": "unnest arguments other than ARRAY[…]",
			"SELECT (string_to_array('a,b', ','))[1]":    "array subscripts",
		})
	}
}

// TestGetByteAsPostgres: get_byte(bytea, integer) of constants and of the flights' fields is
// PostgreSQL's integer; an offset outside the value is 2202E with PostgreSQL's message, text,
// bigint and numeric arguments 42883.
func TestGetByteAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT get_byte('\\x0102ff'::bytea, 0), get_byte('\\x0102ff'::bytea, 2), get_byte('abc'::bytea, 1), get_byte(NULL, 1), get_byte('\\x01'::bytea, NULL), get_byte('\\x01', 0), " +
			"get_byte('\\x0102'::bytea, 1::int2), get_byte('\\x0102'::bytea, '1')",
		"SELECT id, get_byte(id::bytea, 0), get_byte(sha256(id::bytea), length(id) - 1), get_byte((value->>'destination')::bytea, 2), get_byte((value->>'nosuch')::bytea, 0)" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT get_byte('\\x0102'::bytea, 2)":               "2202E",
			"SELECT get_byte('\\x0102'::bytea, -1)":              "2202E",
			"SELECT get_byte(''::bytea, 0)":                      "2202E",
			"SELECT get_byte(id::bytea, length(id))" + fn18Where: "2202E",
			"SELECT get_byte('abc'::text, 0)":                    "42883",
			"SELECT get_byte('\\x01'::bytea, 1.5)":               "42883",
			"SELECT get_byte('\\x0102'::bytea, 5000000000)":      "42883",
			"SELECT get_byte(id, 0)" + fn18Where:                 "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}
