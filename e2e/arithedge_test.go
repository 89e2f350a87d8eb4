package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
)

// TestArithmeticEdgesAsPostgres (issue 18's user trial): integer division and remainder at
// the smallest value, float sum and avg overflow, and timestamps beyond the nanosecond range,
// over constants, VALUES and ORD's rows (the same rows in a PostgreSQL table), pushdown on and
// off. The smallest bigint, integer and smallint divided by -1 are PostgreSQL's 22003 "…
// out of range" (they answered themselves); their remainder by -1 (% and mod) is 0 (it was
// out of range); a zero divisor is 22012. A sum or avg of double precision that passes the
// largest value from finite values is 22003 "value out of range: overflow" (it answered
// Infinity), in one fragment or across fragments' partial sums; avg of reals answers. A
// timestamptz constant ± interval and a date_trunc/date_bin bin beyond 1677-09-21 ..
// 2262-04-11 are 22008 "timestamp out of range" as the column path's (PostgreSQL answers
// them; it was a clamped value and INTERNAL).
func TestArithmeticEdgesAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 3, 30, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 2, 0, 0, 0, 0, time.UTC))
	const (
		w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02'"
		d = "(value->>'delay')::int"
	)
	refused := map[string]string{
		"SELECT (-9223372036854775807 - 1)::bigint / -1":                                               "22003",
		"SELECT (-2147483647 - 1)::int / -1":                                                           "22003",
		"SELECT (-32767 - 1)::int2 / (-1)::int2":                                                       "22003",
		"SELECT x / -1 FROM (VALUES ((-2147483647 - 1)::int)) v(x)":                                    "22003",
		"SELECT x / y FROM (VALUES ((-9223372036854775807 - 1)::bigint, -1::bigint)) v(x, y)":          "22003",
		"SELECT x / y FROM (VALUES ((-32767 - 1)::int2, (-1)::int2)) v(x, y)":                          "22003",
		"SELECT (" + d + " * 0 - 2147483647 - 1) / -1" + w:                                             "22003",
		"SELECT (" + d + "::bigint * 0 - 9223372036854775807 - 1) / -1" + w:                            "22003",
		"SELECT (" + d + " * 0 - 32768)::int2 / (-1)::int2" + w:                                        "22003",
		"SELECT x / y FROM (VALUES (1, 0)) v(x, y)":                                                    "22012",
		"SELECT x % y FROM (VALUES (1::int2, 0::int2)) v(x, y)":                                        "22012",
		"SELECT " + d + " % (" + d + " * 0)" + w:                                                       "22012",
		"SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)":                            "22003",
		"SELECT avg(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)":                            "22003",
		"SELECT sum(x) FROM (VALUES (-1e308::float8), (5::float8), (-1e308::float8)) v(x)":             "22003",
		"SELECT sum(" + d + "::float8 * 0 + 1e308::float8)" + w:                                        "22003",
		"SELECT avg(" + d + "::float8 * 0 + 1e308::float8)" + w:                                        "22003",
		"SELECT value->>'destination', sum(" + d + "::float8 * 0 + 1e308::float8)" + w + " GROUP BY 1": "22003",
	}
	for name, cl := range clients {
		for q, code := range refused {
			t.Run(name, func(t *testing.T) { refusedAsPostgres(t, ctx, cl, pg, q, code) })
		}
	}
	rows := comparePG(t, ctx, pg, clients, sameSQL(pgText,
		"SELECT (-9223372036854775807 - 1)::bigint % -1, (-2147483647 - 1)::int % -1, (-32767 - 1)::int2 % (-1)::int2, "+
			"mod((-9223372036854775807 - 1)::bigint, -1), mod((-2147483647 - 1)::int, -1), mod((-32767 - 1)::int2, (-1)::int2)",
		"SELECT x % -1, mod(x, -1), x / 1, x % 1 FROM (VALUES ((-2147483647 - 1)::int)) v(x)",
		"SELECT x % -1, mod(x, -1), x / 2 FROM (VALUES ((-9223372036854775807 - 1)::bigint)) v(x)",
		"SELECT x % y, mod(x, y) FROM (VALUES ((-32767 - 1)::int2, (-1)::int2), (7::int2, (-2)::int2), ((-7)::int2, 2::int2), (0::int2, (-3)::int2)) v(x, y)",
		"SELECT x % y, mod(x, y), x / y FROM (VALUES (-7, 2), (7, -2), (-7, -2), (0, -3), (2147483647, -1)) v(x, y)",
		"SELECT count(*), sum(("+d+" * 0 - 2147483647 - 1) % -1)::text, sum(mod("+d+"::bigint * 0 - 9223372036854775807 - 1, -1))::text, "+
			"sum(("+d+" * 0 - 32768)::int2 % (-1)::int2)::text, sum("+d+" % -7)::text, sum("+d+" / -1)::text"+w,
		"SELECT sum(x)::text, avg(x)::text FROM (VALUES ('Infinity'::float8), (1e308::float8)) v(x)",
		"SELECT sum(x)::text FROM (VALUES (1e308::float8), (-1e308::float8), (1e308::float8)) v(x)",
		"SELECT avg(x)::text FROM (VALUES (3e38::real), (3e38::real)) v(x)",
		"SELECT date_trunc('day', timestamptz '1677-09-22 00:00+00')::text, date_trunc('hour', timestamptz '1677-09-21 01:30+00')::text, "+
			"date_trunc('minute', timestamptz '1677-09-21 00:13:30+00')::text, date_trunc('day', timestamp '1677-09-22 10:00')::text",
		"SELECT (timestamptz '2001-01-01 00:00+00' - interval '300 years')::text",
	)...)
	if rows < 12 {
		t.Errorf("only %d rows compared", rows)
	}
	for _, cl := range clients {
		// PostgreSQL answers these (its range reaches 294276 AD); flightsrv's timestamps are
		// nanoseconds, and 22008 by name as for the column path (docs/sql.md).
		for _, q := range []string{
			"SELECT (timestamptz '2001-01-01 00:00+00' - interval '400 years')::text",
			"SELECT now() + interval '1000 years'",
			"SELECT date_trunc('day', timestamptz '1677-09-21 00:12:44+00')",
			"SELECT date_trunc('year', timestamptz '1677-09-21 00:12:44+00')",
			"SELECT date_trunc('month', timestamptz '1677-09-21 00:12:44+00')",
			"SELECT date_trunc('week', timestamptz '1677-09-21 00:12:44+00')",
			"SELECT date_bin('1 day', timestamptz '1677-09-21 00:12:44+00', timestamptz '2001-01-01 00:00+00')",
			"SELECT date_trunc('year', now() - interval '349 years')",
		} {
			if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
				t.Errorf("PostgreSQL %s: %v", q, err)
			}
			refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{q: "timestamp out of range"})
		}
	}
	// A sum of reals that overflows is float4pl's 22003 (TestRealSumAsPostgres).
	refusedAs(t, ctx, clients["pushdown on"], codes.InvalidArgument, map[string]string{
		"SELECT sum(x) FROM (VALUES (3e38::real), (3e38::real)) v(x)": "value out of range: overflow"})
}

// ordEnv starts the servers with ORD's flights from from to to also in PostgreSQL's table and
// returns the connection to PostgreSQL and a client of each server (pushdown on and off).
func ordEnv(t *testing.T, from, to time.Time) (context.Context, *pgx.Conn, map[string]*flightsql.Client) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, []string{"ORD"}, from, to)
	return ctx, pg, map[string]*flightsql.Client{"pushdown on": dial(t, e.on), "pushdown off": dial(t, e.off)}
}
