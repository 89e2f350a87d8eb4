package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestFloatAggregatesAsPostgres (issue 18): sum, avg and the variance family of double
// precision and real over values at the edges of the type — infinities, NaN, -0, the
// largest and smallest magnitudes — are PostgreSQL's: its text, and its error where it raises
// one, ungrouped, grouped, DISTINCT, filtered, in one bucket and across buckets (ORD's March
// and April: two fragments whose partial states the coordinator combines), pushdown on and off.
// avg of floats is float8_accum's Sx / N (float4_accum for real), so it raises "value out of
// range: overflow" (22003) wherever PostgreSQL's N, Sx, Sxx state overflows from finite values
// — also where the sum itself does not (1e200 and -1e200: Sxx does) — and where
// float8_combine's does across buckets; sum raises where float8pl overflows. Infinite and NaN
// inputs answer Infinity or NaN; the sum of -0 alone is -0 (float8pl's first value), its avg 0.
func TestFloatAggregatesAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 6, 0, 0, 0, 0, time.UTC))
	const (
		// one bucket (ORD's March) and two (March and April)
		march = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-01'"
		both  = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-06'"
		d     = "(value->>'delay')::float8"
		all   = "sum(X)::text, avg(X)::text, stddev(X)::text, variance(X)::text, stddev_pop(X)::text, var_pop(X)::text"
	)
	aggs := func(x string) string { return strings.ReplaceAll(all, "X", x) }
	refused := []string{
		// Sxx overflows, Sx does not.
		"SELECT avg(x) FROM (VALUES (1e200::float8), (-1e200::float8)) v(x)",
		"SELECT avg(x) FROM (VALUES (1e154::float8), (-1e154::float8)) v(x)",
		"SELECT avg(x) FROM (VALUES (1e308::float8), (-1e308::float8)) v(x)",
		"SELECT stddev(x) FROM (VALUES (1e200::float8), (-1e200::float8)) v(x)",
		"SELECT var_pop(x) FROM (VALUES (1e200::float8), (-1e200::float8)) v(x)",
		"SELECT k, avg(x) FROM (VALUES (1, 1e200::float8), (2, 1::float8), (1, -1e200::float8)) v(k, x) GROUP BY k",
		"SELECT avg(DISTINCT x) FROM (VALUES (1e200::float8), (-1e200::float8), (1e200::float8)) v(x)",
		"SELECT avg(x) FILTER (WHERE x <> 0) FROM (VALUES (1e200::float8), (0::float8), (-1e200::float8)) v(x)",
		// Sx overflows.
		"SELECT avg(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)",
		"SELECT sum(x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)",
		// Over rows: in one bucket, and across two whose states only overflow combined.
		"SELECT avg(" + d + " * 1e160)" + march,
		"SELECT avg(" + d + " * 0 + CASE WHEN timestamp < '2001-04-01' THEN 1e200::float8 ELSE -1e200::float8 END)" + both,
		"SELECT stddev_pop(" + d + " * 0 + CASE WHEN timestamp < '2001-04-01' THEN 1e200::float8 ELSE -1e200::float8 END)" + both,
		"SELECT value->>'destination', avg(" + d + " * 0 + CASE WHEN timestamp < '2001-04-01' THEN 1e200::float8 ELSE -1e200::float8 END)" + both + " GROUP BY 1",
		// Over windows: float8_accum and float8pl per frame.
		"SELECT avg(x) OVER () FROM (VALUES (1e200::float8), (-1e200::float8)) v(x)",
		"SELECT sum(x) OVER (ORDER BY x) FROM (VALUES (1e308::float8), (1e308::float8)) v(x)",
		"SELECT k, avg(x) OVER (ORDER BY k ROWS 1 PRECEDING) FROM (VALUES (1, 1e308::float8), (2, -1e308::float8), (3, 1e308::float8)) v(k, x)",
		"SELECT avg(" + d + " * 1e160) OVER (ORDER BY timestamp, id ROWS 2 PRECEDING)" + march,
	}
	for name, cl := range clients {
		for _, q := range refused {
			t.Run(name, func(t *testing.T) { refusedAsPostgres(t, ctx, cl, pg, q, "22003") })
		}
	}
	var qs []string
	for _, vals := range []string{
		"('Infinity'::float8)", "('-Infinity'::float8)", "('Infinity'::float8), ('-Infinity'::float8)", "('NaN'::float8)",
		"('NaN'::float8), ('Infinity'::float8)", "(1::float8), ('Infinity'::float8)", "('Infinity'::float8), (1e308::float8), (1e308::float8)",
		"('-0'::float8)", "('-0'::float8), ('-0'::float8)", "(0::float8), ('-0'::float8)", "('-0'::float8), (NULL)",
		"(1e153::float8), (-1e153::float8)", "(1.7e308::float8)",
		"(5e-324::float8), (-5e-324::float8), (5e-324::float8)", "(1e-300::float8), (3e-300::float8)", "(2.2250738585072014e-308::float8), (1e-310::float8)",
		"(0.1::float8), (0.2::float8), (0.3::float8)", "(NULL::float8)",
	} {
		qs = append(qs, "SELECT "+aggs("x")+" FROM (VALUES "+vals+") v(x)")
	}
	qs = append(qs,
		"SELECT k, "+aggs("x")+" FROM (VALUES (1, 1e200::float8), (2, 'Infinity'), (1, 1e200::float8), (3, '-0'), (2, 1), (3, NULL), (4, 'NaN')) v(k, x) GROUP BY k ORDER BY k",
		"SELECT avg(DISTINCT x)::text, sum(DISTINCT x)::text, (avg(x) FILTER (WHERE x < 1e151))::text, sum(DISTINCT x * 0)::text FROM (VALUES (1e150::float8), (1e150::float8), ('-0'::float8), (1e152::float8), (1::float8)) v(x)",
		// NaN before the values whose Sxx would overflow: Sx and Sxx are NaN, nothing raises.
		"SELECT avg(x)::text, stddev(x)::text FROM (VALUES (1e200::float8), ('NaN'::float8), (-1e200::float8)) v(x)",
		// The sum passes back under the largest double; avg's Sxx overflows (refused above).
		"SELECT sum(x)::text FROM (VALUES (1e308::float8), (-1e308::float8), (1e308::float8)) v(x)",
		// avg of real: float4_accum widens to double precision (sum of real is refused by name).
		"SELECT avg(x)::text FROM (VALUES ('-0'::real), ('-0'::real)) v(x)",
		"SELECT avg(x)::text FROM (VALUES (3e38::real), (3e38::real), ('Infinity'::real)) v(x)",
		"SELECT avg(x)::text FROM (VALUES (3e38::real), (3e38::real)) v(x)",
		"SELECT avg(x)::text FROM (VALUES (1e20::real), (-1e20::real)) v(x)",
		// Over windows: -0, infinities and NaN per frame; a moving frame restarts its sum.
		"SELECT k, sum(x) OVER (ORDER BY k)::text, avg(x) OVER (ORDER BY k ROWS 1 PRECEDING)::text, sum(x) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING)::text "+
			"FROM (VALUES (1, '-0'::float8), (2, '-0'), (3, 'Infinity'), (4, 1e100::float8), (5, 1), (6, 'NaN'), (7, NULL), (8, 2)) v(k, x) ORDER BY k",
		"SELECT k, sum(x) OVER (ORDER BY k ROWS 1 PRECEDING)::text, avg((k * 1.5)::real) OVER (PARTITION BY k % 2)::text FROM (VALUES (1, 1e308::float8), (2, -1e308::float8), (3, 1e308::float8), (4, 3e38::float8)) v(k, x) ORDER BY k",
		"SELECT id, sum("+d+") OVER (ORDER BY timestamp, id ROWS 3 PRECEDING)::text, avg("+d+" / 7) OVER (ORDER BY timestamp, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)::text"+march+" ORDER BY timestamp, id",
		// Over rows of one bucket: the fragment's one pass is PostgreSQL's.
		"SELECT count(*), "+aggs(d+" * 1e140")+march,
		"SELECT count(*), "+aggs(d+" * 1e-310")+march,
		"SELECT count(*), "+aggs(d+" * 0 - 0.0::float8 * 1")+march,
		"SELECT value->>'destination' AS dest, "+aggs(d+" / 7")+march+" GROUP BY 1 ORDER BY 1",
		"SELECT sum("+d+" * 0 + 'Infinity')::text, avg("+d+" * 0 + 'Infinity')::text, avg(CASE WHEN "+d+" > 10 THEN 'NaN' ELSE "+d+" END)::text"+march,
		// Across buckets: integer-valued doubles, whose sums are exact in any order.
		"SELECT count(*), sum("+d+")::text, avg("+d+")::text, avg(("+d+")::real)::text"+both,
		// float8 casts of integers: the hot store's sums and counts (pushdown on), Sxx 0.
		"SELECT avg((value->>'delay')::int::float8)::text, avg((value->>'delay')::int::float8 + 0.5::float8)::text"+both,
		"SELECT value->>'destination' AS dest, sum("+d+")::text, avg("+d+")::text, avg(DISTINCT "+d+")::text"+both+" GROUP BY 1 ORDER BY 1",
		// 2^996 (6.696928794914171e299): its multiples are exact, in any order.
		"SELECT sum("+d+" * 0 + CASE WHEN timestamp < '2001-04-01' THEN 6.696928794914171e299::float8 ELSE -6.696928794914171e299::float8 END)::text, "+
			"avg("+d+" * 0 + CASE WHEN timestamp < '2001-04-01' THEN 'Infinity'::float8 ELSE 6.696928794914171e299::float8 END)::text"+both,
	)
	rows := comparePG(t, ctx, pg, clients, sameSQL(pgText, qs...)...)
	if rows < 40 {
		t.Errorf("only %d rows compared", rows)
	}
}
