package e2e

import (
	"testing"
	"time"
)

// TestModAsPostgres (issue 18): mod(a, b) of integers is the operator a % b, as PostgreSQL's
// int2mod, int4mod and int8mod are the operator's functions: the arguments' common integer
// type (mod(smallint, smallint) is smallint, so its product with a smallint overflows as
// smallint), the remainder with the dividend's sign, 0 for any x and -1 (the smallest value
// too), 22012 for a zero divisor; numerics are numeric_mod; a type without mod is 42883 and
// two untyped arguments 42725, PostgreSQL's errors. Over constants, VALUES and ORD's rows,
// pushdown on and off.
func TestModAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 3, 30, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 2, 0, 0, 0, 0, time.UTC))
	const (
		w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02'"
		d = "(value->>'delay')::int"
	)
	for q, code := range map[string]string{
		"SELECT mod(7, 0)":             "22012",
		"SELECT mod(7::int2, 0::int2)": "22012",
		"SELECT mod(7::int8, 0)":       "22012",
		"SELECT mod(x, y) FROM (VALUES (1::int2, 0::int2)) v(x, y)": "22012",
		"SELECT mod(" + d + ", " + d + " * 0)" + w:                  "22012",
		"SELECT mod(7.5, 0)":                                        "22012",
		"SELECT mod(7::int2, 5::int2) * 30000::int2":                "22003",
		"SELECT mod(7::float8, 2)":                                  "42883",
		"SELECT mod(7, 2::real)":                                    "42883",
		"SELECT mod(true, 2)":                                       "42883",
		"SELECT mod('7', '2')":                                      "42725",
	} {
		for name, cl := range clients {
			t.Run(name, func(t *testing.T) { refusedAsPostgres(t, ctx, cl, pg, q, code) })
		}
	}
	rows := comparePG(t, ctx, pg, clients, sameSQL(pgTypes,
		"SELECT mod(7::int2, 2::int2), mod(7::int2, 2), mod(7::int2, 2::int8), mod(7, 2::int8), mod(7, 2), mod(7::int8, 2::int8), mod('7', 2), mod(7::int2, '2'), mod(NULL, 2)",
		"SELECT mod((-32767 - 1)::int2, (-1)::int2), mod((-2147483647 - 1)::int, -1), mod((-9223372036854775807 - 1)::bigint, -1), mod((-32767 - 1)::int2, 7::int2), mod(32767::int2, (-32767 - 1)::int2)",
		"SELECT mod(7::int2, 3::int2) * 30000::int2, mod(7::int2, 5::int2) * 30000, mod(9223372036854775807, 10), mod(-9223372036854775807, 10)",
		"SELECT x, y, mod(x, y), x % y, mod(x, y::int8), mod(x::int, y) FROM (VALUES ((-32767 - 1)::int2, (-1)::int2), (7::int2, (-2)::int2), ((-7)::int2, 2::int2), (0::int2, (-3)::int2), (32767::int2, 32767::int2), (5::int2, NULL)) v(x, y) ORDER BY 1, 2",
		"SELECT x, y, mod(x, y), x % y FROM (VALUES (-7, 2), (7, -2), (-7, -2), (0, -3), (2147483647, -1), (-2147483647 - 1, 2147483647), (2147483647, -2147483647 - 1)) v(x, y) ORDER BY 1, 2",
		"SELECT count(*), sum(mod("+d+", 7)), sum(mod("+d+"::int2, (-3)::int2)), sum(mod("+d+"::bigint * 1000000007, -13)), min(mod(-"+d+", 4)), max(mod("+d+", "+d+" + 1000))"+w,
		"SELECT "+d+" AS x, mod("+d+", 5) AS m, count(*)"+w+" GROUP BY 1, 2 ORDER BY 1, 2",
	)...)
	rows += comparePG(t, ctx, pg, clients, sameSQL(pgText,
		"SELECT mod(-7.5, 2)::text, mod(7.5, -2)::text, mod(-7, 2.5)::text, mod(7::numeric, -1)::text, mod(0.0, 3)::text, mod(10::numeric(5,2), 3)::text, mod(7, 2.50)::text",
	)...)
	if rows < 20 {
		t.Errorf("only %d rows compared", rows)
	}
}
