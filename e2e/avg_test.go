package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// avgQueries are avg of integers (PostgreSQL's numeric) over table-less series and over the
// flights' JSON fields, with hot, archived and mixed buckets, grouped, DISTINCT, filtered and
// inside expressions; each is run by PostgreSQL and by flightsrv.
var avgQueries = []string{
	"SELECT avg(g) FROM generate_series(1, 3) g",
	"SELECT avg(g) FROM generate_series(-7, 1) g",
	"SELECT g % 7 AS k, avg(g), avg(g * g), avg(-g) FROM generate_series(1, 1000) g GROUP BY 1 ORDER BY 1",
	"SELECT avg(CASE WHEN g % 3 = 0 THEN 1 ELSE 0 END), avg(g::smallint), avg(g::bigint * 1000000007) FROM generate_series(1, 9999) g",
	"SELECT avg(a % 2 + b), avg(b % 3) FROM generate_series(1, 200) a, generate_series(1, 150) b",
	"SELECT avg(x) FROM (VALUES (1), (2), (NULL)) v(x)",
	"SELECT avg(x) FROM (VALUES (NULL::int)) v(x)",
	"SELECT avg(DISTINCT g % 5), avg(g % 5) FILTER (WHERE g > 3) FROM generate_series(1, 10) g",
	"SELECT avg(g) * 2, avg(g) > 2.5, -avg(g), abs(avg(-g)) FROM generate_series(1, 4) g",
	"SELECT avg(999999999999999999 - g), avg(-999999999999999999 + g) FROM generate_series(1, 3) g",
	"SELECT avg((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'",
	"SELECT value->>'destination' AS d, count(*), avg((value->>'delay')::int), avg((value->>'distance')::bigint) FROM flights " +
		"WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1 ORDER BY 1",
	"SELECT date_part('month', timestamp)::int AS m, avg((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 0), avg(DISTINCT (value->>'delay')::int) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1",
	"SELECT origin, avg((value->>'distance')::int) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
	// Over windows: the frame's exact sum over its count, as the aggregate.
	"SELECT g, avg(g) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), avg(g % 3) OVER (PARTITION BY g % 2), avg(-g) OVER (ORDER BY g RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM generate_series(1, 12) g ORDER BY g",
	"SELECT id, avg((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW), avg((value->>'distance')::bigint) OVER (ORDER BY timestamp RANGE BETWEEN '1 hour' PRECEDING AND CURRENT ROW) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY timestamp, id",
}

// avgRounded are avg of integers inside expressions that fix the scale: compared with
// PostgreSQL's text as it is.
var avgRounded = []string{
	"SELECT round(avg(g), 2), trunc(avg(g), 3), avg(g)::numeric(10,4), ceil(avg(g)), avg(g)::int FROM generate_series(1, 6) g",
	"SELECT round(avg((value->>'delay')::int), 3) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'",
}

// TestAvgOfIntegersAsPostgres: avg of integers is numeric, as in PostgreSQL (Arrow
// decimal128(38, 20)), as an aggregate and over a window: every value is PostgreSQL's exactly — its text, with zeros up to the 20
// digits after the point one column shows — with pushdown on and off (the stores' partial sums
// and counts merged across buckets); an average PostgreSQL shows with more digits than 20,
// not all zeros, is refused by name (0A000) rather than rounded.
func TestAvgOfIntegersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		c := cl.c
		for _, q := range avgQueries {
			want, kinds := pgTexts(t, ctx, pg, q)
			for col, k := range kinds {
				if k == "numeric" {
					for r := range want {
						want[r][col] = padScale(want[r][col], 20)
					}
				}
			}
			n := compareNumericRows(t, ctx, c, q, want, kinds)
			if n == 0 && !strings.Contains(q, "NULL::int") {
				t.Errorf("%s (%s): no rows", q, cl.name)
			}
			compared += n
		}
		for _, q := range avgRounded {
			want, kinds := pgTexts(t, ctx, pg, q)
			compared += compareNumericRows(t, ctx, c, q, want, kinds)
		}
		// 1/30000: PostgreSQL shows 24 digits after the point, not all zeros past the 20th;
		// 9223372036854775806: 19 integer digits.
		for q, pgText := range map[string]string{
			"SELECT avg(CASE WHEN a = 1 AND b = 1 THEN 1 ELSE 0 END) FROM generate_series(1, 200) a, generate_series(1, 150) b": "0.000033333333333333333333",
			"SELECT avg(9223372036854775807 - g) FROM generate_series(1, 3) g":                                                  "9223372036854775805",
		} {
			if want, _ := pgTexts(t, ctx, pg, q); want[0][0] != pgText {
				t.Fatalf("PostgreSQL's %s is %s, not %s", q, want[0][0], pgText)
			}
			_, err := run(ctx, c, q)
			if st := status.Convert(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "avg of integers") {
				t.Errorf("%s (%s): %v, want UNIMPLEMENTED naming avg of integers", q, cl.name, err)
			}
		}
	}
	t.Logf("%d rows of averages compared with PostgreSQL's", compared)
}

// namedClient is a Flight SQL client and the name of its server's pushdown setting.
type namedClient struct {
	name string
	c    *flightsql.Client
}

// byName is clients as comparePG takes them.
func byName(clients []namedClient) map[string]*flightsql.Client {
	m := map[string]*flightsql.Client{}
	for _, c := range clients {
		m[c.name] = c.c
	}
	return m
}

// avgEnv starts the servers with every loaded airport's flights of 2001 also in PostgreSQL's
// table and returns the connection to PostgreSQL and a client of each server (pushdown on,
// then off).
func avgEnv(t *testing.T) (context.Context, *pgx.Conn, []namedClient) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	return ctx, pg, []namedClient{{"pushdown on", dial(t, e.on)}, {"pushdown off", dial(t, e.off)}}
}

// padScale writes PostgreSQL's text of a numeric with zeros up to scale digits after the point
// (NULL and values with more digits unchanged).
func padScale(text string, scale int) string {
	if text == "NULL" {
		return text
	}
	dot := strings.IndexByte(text, '.')
	if dot < 0 {
		return text + "." + strings.Repeat("0", scale)
	}
	if have := len(text) - dot - 1; have < scale {
		return text + strings.Repeat("0", scale-have)
	}
	return text
}

// avgTexts write averages of integers and numerics of varying display scale as text (::text,
// ||, concat): each value is compared with PostgreSQL's text exactly, its own display scale
// (select_div_scale's for an average, the chosen branch's for CASE and COALESCE, the larger
// for + and -, the sum for *).
var avgTexts = []string{
	"SELECT avg(g)::text, (avg(g) * 100)::text, (avg(g) + 1.5)::text, (avg(g) - 1)::text, (-avg(g))::text, abs(avg(-g))::text, (avg(g) * 0.25)::text FROM generate_series(1, 4) g",
	"SELECT avg(x)::text FROM (VALUES (15000)) v(x)",
	"SELECT avg(x)::text FROM (VALUES (15000), (15000)) v(x)",
	"SELECT avg(x)::text, (avg(x) + avg(x))::text FROM (VALUES (1), (2), (NULL)) v(x)",
	"SELECT g % 7 AS k, avg(g)::text, avg(g * g)::text, avg(DISTINCT g % 5)::text, (avg(g % 5) FILTER (WHERE g > 3))::text, avg(g::bigint * 1000000007)::text FROM generate_series(1, 1000) g GROUP BY 1 ORDER BY 1",
	"SELECT COALESCE(avg(x), 0)::text, (CASE WHEN count(x) > 0 THEN avg(x) ELSE 0 END)::text, COALESCE(avg(x), 2.5)::text FROM (VALUES (NULL::int)) v(x)",
	"SELECT COALESCE(avg(x), 0)::text, (CASE WHEN count(x) > 0 THEN avg(x) ELSE 0 END)::text, (CASE WHEN avg(x) > 1 THEN 1 ELSE avg(x) END)::text FROM (VALUES (1), (2)) v(x)",
	"SELECT GREATEST(avg(g), 1)::text FROM generate_series(1, 3) g",
	"WITH s AS (SELECT avg(g) AS a FROM generate_series(1, 3) g) SELECT 'x' || a FROM s",
	"SELECT 'avg ' || avg(g), concat(avg(g), '/', count(*)), avg(g)::text || '!' FROM generate_series(1, 3) g",
	"SELECT g, (CASE WHEN g > 1 THEN 1.5 ELSE 2 END)::text, COALESCE(NULLIF(g, 2) * 1.25, 7)::text, (CASE g WHEN 1 THEN 0.5 WHEN 2 THEN 0.25 END)::text FROM generate_series(1, 3) g ORDER BY g",
	"SELECT avg(a % 2 + b)::text, avg(b % 3)::text, avg(CASE WHEN a < 3 THEN 1 ELSE 0 END)::text FROM generate_series(1, 200) a, generate_series(1, 150) b",
	"SELECT value->>'destination' AS d, avg((value->>'delay')::int)::text, COALESCE(avg((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 30), 0)::text, " +
		"(avg((value->>'distance')::bigint) * 2)::text FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1 ORDER BY 1",
	"SELECT origin, avg((value->>'delay')::int)::text FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' " +
		"GROUP BY 1 HAVING avg((value->>'delay')::int) > -100 ORDER BY 1",
	// Over windows: the frame's exact sum and count give each value's scale.
	"SELECT g, (avg(g) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING))::text, (avg(g % 3) OVER (PARTITION BY g % 2))::text, " +
		"(avg(-g) OVER (ORDER BY g RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) * 2)::text, (avg(g * 5000) FILTER (WHERE g > 2) OVER (ORDER BY g))::text FROM generate_series(1, 12) g ORDER BY g",
	"SELECT id, (avg((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW))::text, 'd=' || avg((value->>'distance')::bigint) OVER (ORDER BY timestamp RANGE BETWEEN '1 hour' PRECEDING AND CURRENT ROW) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY timestamp, id",
	// Quotients of numerics: PostgreSQL's select_div_scale per row.
	"SELECT (1.5 / 2)::text, (10 / 4.0)::text, (1 / 3.0)::text, (7.0 / 7)::text, (123456.789 / 0.5)::text, (-2 / 0.0625)::text, (1e10 / 7)::text",
	"SELECT g % 3 AS k, (sum(g)::numeric / count(*))::text, (count(*) * 100.0 / sum(count(*)) OVER ())::text, ((g % 3) / 8.0 + 1)::text FROM generate_series(1, 10) g GROUP BY 1 ORDER BY 1",
	// Quotients of numerics whose display scale varies (averages, CASE): select_div_scale of
	// each row's display scales.
	"SELECT g % 3 AS k, (avg(g) / 2)::text, (avg(g) / 3)::text, (10 / avg(g))::text, (avg(g) / avg(g * 7))::text, (avg(g::numeric(6,2)) / 7)::text, " +
		"(CASE WHEN g % 3 = 0 THEN 1.5 ELSE 2 END / 4)::text FROM generate_series(1, 10) g GROUP BY 1, g ORDER BY 1, g",
	"SELECT g, (avg(g) OVER (ORDER BY g) / 4)::text, (1 / (avg(g) OVER (ORDER BY g ROWS 1 PRECEDING) + 0.5))::text FROM generate_series(1, 12) g ORDER BY g",
	"SELECT value->>'destination' AS d, (avg((value->>'delay')::int) / 3)::text, (avg((value->>'distance')::int) / count(*))::text FROM flights " +
		"WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING avg((value->>'delay')::int) <> 0 ORDER BY 1",
	// sum and avg of text and double precision cast to numeric without a scale: the largest
	// display scale of the group's values, numeric_div of the sum by the count.
	"SELECT k, avg(x::numeric)::text, sum(x::numeric)::text, (sum(x::numeric) * 2)::text, avg(x::float8::numeric)::text FROM (VALUES (1, '1.5'), (1, '2.25'), (1, '3'), (1, NULL), (2, '-0.125'), (2, '10'), (3, NULL)) v(k, x) GROUP BY k ORDER BY k",
	// sum(bigint) over a window is numeric (exact past bigint's range), sum(int) bigint.
	"SELECT g, sum(4611686018427387904::bigint + g) OVER (ORDER BY g), sum(g) OVER (ORDER BY g), sum(g::smallint) OVER (), sum(-g::bigint) OVER (ORDER BY g ROWS 1 PRECEDING) FROM generate_series(1, 5) g ORDER BY g",
	"SELECT id, sum((value->>'distance')::bigint) OVER (ORDER BY timestamp, id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), sum((value->>'delay')::int) OVER (ORDER BY timestamp, id) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id",
	// Aggregates of numerics over windows: sum, min and max at the argument's scale, avg as
	// numeric_avg's exact sum over the count (select_div_scale's display scale per row), every
	// frame form, FILTER, NULLs, and Superset's percentage of a total.
	"SELECT g, sum(g * 0.25) OVER (ORDER BY g), (avg(g * 1.5) OVER (ORDER BY g ROWS BETWEEN 2 PRECEDING AND CURRENT ROW))::text, min(g::numeric(6,2) - 3) OVER (ORDER BY g ROWS 1 PRECEDING), " +
		"max(-g * 0.125) OVER (PARTITION BY g % 3 ORDER BY g), count(g * 0.5) OVER (), (avg(NULLIF(g % 4, 0) * 0.1) OVER (PARTITION BY g % 2))::text, " +
		"sum(g * 0.01) FILTER (WHERE g > 4) OVER (ORDER BY g RANGE BETWEEN 2 PRECEDING AND CURRENT ROW), (avg(g * 0.01) FILTER (WHERE g > 4) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING))::text " +
		"FROM generate_series(1, 12) g ORDER BY g",
	"SELECT g % 3 AS k, sum(g * 1.5), (sum(g * 1.5) / sum(sum(g * 1.5)) OVER ())::text, (100 * sum(g * 1.5) / sum(sum(g * 1.5)) OVER ())::text, (avg(sum(g * 0.5)) OVER ())::text " +
		"FROM generate_series(1, 10) g GROUP BY 1 ORDER BY 1",
	"SELECT id, sum((value->>'distance')::numeric(10,2) * 1.5) OVER (ORDER BY timestamp, id ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING), " +
		"(avg((value->>'delay')::numeric(8,2)) OVER (ORDER BY timestamp RANGE BETWEEN '1 hour' PRECEDING AND CURRENT ROW))::text, " +
		"max((value->>'delay')::int * 0.5) OVER (ORDER BY timestamp, id), min((value->>'distance')::int * 0.001) OVER () " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' ORDER BY timestamp, id",
	// DISTINCT aggregates of numerics, grouped, over every tier (partial states merged).
	"SELECT value->>'destination' AS d, count(DISTINCT (value->>'delay')::int * 0.5), sum(DISTINCT (value->>'distance')::numeric(10,1)), (avg(DISTINCT (value->>'delay')::numeric(8,2)))::text " +
		"FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 ORDER BY 1",
	// The variance family of integers and numerics: numeric_stddev_internal's exact sums,
	// select_div_scale's scale, sqrt_var's rounding; NULL for too few values, 0 for equal ones.
	"SELECT stddev(g)::text, variance(g)::text, stddev_pop(g)::text, var_pop(g)::text, var_samp(g * 0.5)::text, stddev_samp(g::numeric(6,2))::text, stddev(g) FILTER (WHERE g > 7)::text FROM generate_series(1, 10) g",
	"SELECT k, stddev(x)::text, var_samp(x)::text, stddev_pop(x)::text, var_pop(x)::text FROM (VALUES (1, 5), (1, 5), (2, 7), (3, NULL), (4, 1), (4, 2), (4, 4), (5, -3), (5, 3)) v(k, x) GROUP BY k ORDER BY k",
	"SELECT value->>'destination' AS d, stddev((value->>'delay')::int)::text, variance((value->>'distance')::int)::text, stddev_pop((value->>'delay')::numeric(8,2) * 1.5)::text, " +
		"var_pop((value->>'delay')::bigint)::text FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 ORDER BY 1",
	"SELECT variance(g * 0.01)::text, var_pop(g * 0.1)::text, stddev_pop(g * 1000000)::text, stddev(g * 0.05)::text FROM generate_series(1, 10) g",
	// ... and over windows: each frame's count and exact sums.
	"SELECT g, (stddev(g) OVER (ORDER BY g))::text, (var_pop(g * 0.5) OVER (ORDER BY g ROWS BETWEEN 2 PRECEDING AND CURRENT ROW))::text, (variance(g % 4) OVER (PARTITION BY g % 2))::text, " +
		"(stddev_pop(g::numeric(6,2)) FILTER (WHERE g > 3) OVER (ORDER BY g ROWS 3 PRECEDING))::text FROM generate_series(1, 12) g ORDER BY g",
	"SELECT origin, date_trunc('day', timestamp)::text AS day, (stddev(count(*)) OVER (PARTITION BY origin ORDER BY min(timestamp) ROWS 3 PRECEDING))::text, " +
		"(var_samp(sum((value->>'delay')::int)) OVER (PARTITION BY origin))::text FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1, 2 ORDER BY 1, 2",
	// Moving frames of up to 3,000 of ORD's flights (issue 18's slow trial, stddev of integers
	// over ROWS 1000 PRECEDING): each frame's root at its own display scale.
	"SELECT id, (stddev_samp((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS 1000 PRECEDING))::text, (stddev((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS BETWEEN 10 PRECEDING AND CURRENT ROW))::text, " +
		"(stddev_pop((value->>'distance')::int) OVER (ORDER BY timestamp, id))::text, (var_samp((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS 3000 PRECEDING))::text " +
		"FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-06' ORDER BY timestamp, id",
	// sqrt, exp, ln, log and sign of averages and variances: each row's display scales read.
	"SELECT g % 4 AS k, sqrt(avg(g))::text, ln(avg(g))::text, sqrt(variance(g))::text, log(2, avg(g))::text, sign(avg(g) - 20)::text, exp(avg(g) / 100)::text, round(sqrt(var_pop(g * 0.5)), 3) " +
		"FROM generate_series(1, 50) g GROUP BY 1 ORDER BY 1",
	"SELECT g, sqrt(avg(g) OVER (ORDER BY g ROWS 2 PRECEDING))::text, ln(CASE WHEN g > 3 THEN 1.5 ELSE 2 END)::text FROM generate_series(1, 6) g ORDER BY g",
	// The value window functions of numerics: one of the argument's values, at its scale.
	"SELECT g, lag(g * 0.5) OVER (ORDER BY g), (lead(g::numeric(5,2), 2) OVER (ORDER BY g))::text, (lag(g * 0.5, 1, 0.25) OVER (ORDER BY g))::text, (lead(g * 0.5, g % 3, 7) OVER (ORDER BY g))::text, first_value(-g * 1.25) OVER (PARTITION BY g % 3 ORDER BY g), " +
		"last_value(g * 0.1) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING), nth_value(g * 0.001, 3) OVER (ORDER BY g) FROM generate_series(1, 9) g ORDER BY g",
}

// avgMixed are averages of integers beside other types as BI tools write them (COALESCE, CASE
// … ELSE 0, arithmetic, comparisons in HAVING, double precision operands): numerics compared
// by value (one column's scale holds PostgreSQL's varying display scales), others exactly.
var avgMixed = []string{
	"SELECT COALESCE(avg(x), 0), CASE WHEN count(*) > 1 THEN avg(x) ELSE 0 END, avg(x) * 100, round(avg(x), 2), avg(x) > 1, avg(x) * 1.5::float8, avg(x) + 0.5::float8 FROM (VALUES (1), (2), (4)) v(x)",
	"SELECT COALESCE(avg(x), 0), CASE WHEN avg(x) IS NULL THEN 0 ELSE avg(x) END FROM (VALUES (NULL::int)) v(x)",
	"SELECT g % 3 AS k, count(*) * 100.0 / sum(count(*)) OVER () AS pct, sum(g)::numeric / count(*) AS mean, 1.5 / 2 FROM generate_series(1, 10) g GROUP BY 1 ORDER BY 1",
	"SELECT origin, COALESCE(avg((value->>'delay')::int), 0), round(avg((value->>'delay')::int) * 100, 1), avg((value->>'delay')::int) < 10.5 FROM flights " +
		"WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 HAVING avg((value->>'delay')::int) > 0 ORDER BY 1",
}

// sameNumericValue compares texts: numerics (kind numeric) by value, others exactly.
func sameNumericValue(got, want, kind string) bool {
	if got == want || kind != "numeric" || got == "NULL" || want == "NULL" {
		return got == want
	}
	g, _, err1 := apd.NewFromString(got)
	w, _, err2 := apd.NewFromString(want)
	return err1 == nil && err2 == nil && g.Cmp(w) == 0
}

// TestNumericDisplayScaleAsPostgres: averages of integers and numerics of varying display
// scale written as text are PostgreSQL's text exactly; beside other types (COALESCE, CASE,
// arithmetic, HAVING, double precision) they answer PostgreSQL's values; where the binder
// cannot follow the display scale (a CTE's average under a join, a window's max of averages) the text is
// refused by name, never written at the column's scale.
func TestNumericDisplayScaleAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	compared := 0
	for _, cl := range clients {
		compared += compareTextsAsPostgres(t, ctx, pg, cl, avgTexts)
		for _, q := range avgMixed {
			want, kinds := pgTexts(t, ctx, pg, q)
			res, err := run(ctx, cl.c, q)
			if err != nil {
				t.Errorf("%s (%s): %v", q, cl.name, err)
				continue
			}
			row := 0
			for _, rec := range res.recs {
				for i := range int(rec.NumRows()) {
					for c := range int(rec.NumCols()) {
						got, kind := numericText(t, rec.Column(c), i)
						if row >= len(want) || kind != kinds[c] || !sameNumericValue(got, want[row][c], kind) {
							t.Errorf("%.80s (%s), row %d column %d: %s (%s), PostgreSQL %v %v", q, cl.name, row, c, got, kind, want[min(row, len(want)-1)], kinds)
						}
					}
					row++
				}
			}
			res.release()
			if row != len(want) || row == 0 {
				t.Errorf("%.80s (%s): %d rows, PostgreSQL %d", q, cl.name, row, len(want))
			}
			compared += row
		}
		for _, q := range []string{
			"WITH s AS (SELECT avg(g) AS a FROM generate_series(1, 3) g) SELECT 'x' || s.a FROM s JOIN s t ON true",
			// Over windows: a varying display scale's sum (lag's default: typ18bLagTexts).
			"SELECT (sum(CASE WHEN g > 1 THEN 1.5 ELSE 2 END) OVER (ORDER BY g))::text FROM generate_series(1, 3) g",
			"SELECT (max(avg(g)) OVER ())::text FROM generate_series(1, 3) g",
		} {
			refusedNamingDisplayScale(t, ctx, pg, cl, q)
		}
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}

// compareTextsAsPostgres compares each query's rows through cl with PostgreSQL's, every
// value's text exactly (compareNumericRows), and returns the number of rows compared; a query
// without rows is an error.
func compareTextsAsPostgres(t *testing.T, ctx context.Context, pg *pgx.Conn, cl namedClient, qs []string) int {
	t.Helper()
	compared := 0
	for _, q := range qs {
		want, kinds := pgTexts(t, ctx, pg, q)
		if n := compareNumericRows(t, ctx, cl.c, q, want, kinds); n == 0 {
			t.Errorf("%s (%s): no rows", q, cl.name)
		} else {
			compared += n
		}
	}
	return compared
}

// refusedNamingDisplayScale checks that q, which PostgreSQL answers, is refused through cl as
// UNIMPLEMENTED naming the display scale (a numeric's text flightsrv cannot follow).
func refusedNamingDisplayScale(t *testing.T, ctx context.Context, pg *pgx.Conn, cl namedClient, q string) {
	t.Helper()
	if _, err := pg.Exec(ctx, q); err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	_, err := run(ctx, cl.c, q)
	if st := status.Convert(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "display scale") {
		t.Errorf("%s (%s): %v, want UNIMPLEMENTED naming the display scale", q, cl.name, err)
	}
}

// toCharTemplates are number templates of to_char, each run over toCharValues and the
// integers, bigints and doubles of TestToCharNumberAsPostgres: the digit patterns, and every
// other pattern (signs at both ends, PR, L, TH, V, EEEE, RN, B, quoted text, escapes) with
// and without FM (internal/pgnumfmt's TestToCharAsPostgres runs the full grid).
var toCharTemplates = []string{"999.99", "FM999.99", "990.99", "FM990.00", "9,999.99", "FM9,999,999", "0000", "99G999D99", "999",
	"FM9.9", "$999.99", "999.99%", "FM0.000", "9.9", "00.0", "9,990.0", "FM9,990.09", "0,000.9", ".99", "FM.999", "0", "FM0", "9G999G999", "00,000", "FM00.9990", "9 9.9 9",
	"S999.99", "FM999.99S", "999MI", "FMMI999", "PL999.9", "SG999", "FMSG999", "999PR", "FM999.9PR", "L999.99", "999TH", "FMth999th", "99V99", "9.99EEEE",
	"RN", "FMrn", `"n="999`, `\"999`, "B999", "FMS990.00", "99999999999999999999.99", "FM9.99999999999999999999", "9."}

// toCharValues are numerics of every shape for toCharTemplates: zero, fractions that round
// up, away from zero and to zero, values that overflow the templates.
const toCharValues = "(VALUES (0::numeric(12,3)), (0.5::numeric(12,3)), (-0.5::numeric(12,3)), (1.5::numeric(12,3)), (-1.005::numeric(12,3)), " +
	"(12.345::numeric(12,3)), (1234.5::numeric(12,3)), (-1234.567::numeric(12,3)), (99999.999::numeric(12,3)), (0.004::numeric(12,3)), " +
	"(-0.004::numeric(12,3)), (100::numeric(12,3)), (7::numeric(12,3)), (0.05::numeric(12,3)), (9.95::numeric(12,3))) t(v)"

// toCharOtherValues are integers, bigints and doubles for toCharTemplates (k orders them):
// signs, ordinals, Roman numerals' range, types' extremes, ties (a double's EEEE rounds
// them to even), values PostgreSQL cuts at 15 significant digits.
var toCharOtherValues = []string{
	"(VALUES (1, 0), (2, 1), (3, -1), (4, 12), (5, -23), (6, 111), (7, 3999), (8, 4000), (9, 25), (10, 2147483647), (11, -2147483647 - 1)) t(k, v)",
	"(VALUES (1, 0::bigint), (2, 13::bigint), (3, -22::bigint), (4, 3999::bigint), (5, 1000000000000::bigint), (6, 9223372036854775807::bigint), (7, '-9223372036854775808'::bigint)) t(k, v)",
	"(VALUES (1, 0::float8), (2, 0.5::float8), (3, -0.4::float8), (4, 2.5::float8), (5, 1234.5678::float8), (6, 1e20::float8), (7, -0.004::float8), (8, 0.1::float8), (9, 3999.5::float8)) t(k, v)",
}

// TestToCharNumberAsPostgres: to_char of numerics, integers, bigints and doubles
// (PostgreSQL's numeric_to_char, int4/int8_to_char, float8_to_char: every pattern) is
// PostgreSQL's text over a grid of values and templates, with constant templates and
// templates read from rows, and over averages of the flights; templates PostgreSQL rejects
// and values it cannot write are its errors (SQLSTATE, gRPC INVALID_ARGUMENT), and what the
// engine leaves out (V of more than 9 digits for an integer, which PostgreSQL leaves to the C
// compiler) is refused by name.
func TestToCharNumberAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	cl := clients[0].c
	var qs []string
	for _, f := range toCharTemplates {
		qs = append(qs, "SELECT v, to_char(v, '"+f+"') FROM "+toCharValues+" ORDER BY v")
		for _, vals := range toCharOtherValues {
			if strings.Contains(f, "V") || strings.Contains(strings.ToUpper(f), "RN") {
				// V multiplies a bigint in bigint, RN reads it as integer: the bigints past
				// those are PostgreSQL's error (below).
				vals = strings.ReplaceAll(vals, ", (5, 1000000000000::bigint), (6, 9223372036854775807::bigint), (7, '-9223372036854775808'::bigint)", "")
			}
			qs = append(qs, "SELECT to_char(v, '"+f+"') FROM "+vals+" ORDER BY k")
		}
	}
	qs = append(qs,
		"SELECT g, to_char(g, '9,999'), to_char(g::bigint * 1000003, 'FM999,999,999,999'), to_char(g::smallint, '00000'), to_char(g, 'FM9999.00') FROM generate_series(-1500, 1500, 250) g ORDER BY g",
		"SELECT value->>'destination' AS d, to_char(avg((value->>'delay')::int), '999.99'), to_char(avg((value->>'distance')::int), 'FM9,999.0'), to_char(sum((value->>'distance')::bigint), '9,999,999'), "+
			"to_char(avg((value->>'delay')::float8), '9.999EEEE'), to_char(count(*), 'FMRN'), to_char(avg((value->>'distance')::float8), 'FM9,999.99PR') "+
			"FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1 ORDER BY 1",
		"SELECT to_char(v, f) FROM (VALUES (1, -12.5, '999.9S'), (2, 7, 'FMRN'), (3, 1234.5, '9G999D9'), (4, 0.0001, '9.9EEEE')) t(k, v, f) ORDER BY k",
	)
	compared := 0
	for _, q := range qs {
		want, kinds := pgTexts(t, ctx, pg, q)
		compared += compareNumericRows(t, ctx, cl, q, want, kinds)
	}
	for _, c := range []struct {
		q, state, msg string
		code          codes.Code
	}{
		{"SELECT to_char(1.5, '9.9.9')", "42601", "multiple decimal points", codes.InvalidArgument},
		{"SELECT to_char(1.5, 'FM9.9EEEE')", "42601", `"EEEE" is incompatible with other formats`, codes.InvalidArgument},
		{"SELECT to_char(1.5, '9PR9')", "42601", `"9" must be ahead of "PR"`, codes.InvalidArgument},
		{"SELECT to_char(v, 'RN') FROM (VALUES (3000000000.5)) t(v)", "22003", "integer out of range", codes.InvalidArgument},
		{"SELECT to_char(5, 'TH')", "22P02", `"." is not a number`, codes.InvalidArgument},
		{"SELECT to_char(v, 'RN') FROM (VALUES (3000000000)) t(v)", "22003", "integer out of range", codes.InvalidArgument},
		{"SELECT to_char(v, '9V99') FROM (VALUES (9223372036854775807)) t(v)", "22003", "bigint out of range", codes.InvalidArgument},
		{"SELECT to_char(v, 'V9999999999') FROM (VALUES (12)) t(v)", "", `"V" of more than 9 digits`, codes.Unimplemented},
	} {
		if c.state != "" {
			var s string
			err := pg.QueryRow(ctx, c.q).Scan(&s)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != c.state || pe.Message != c.msg {
				t.Fatalf("PostgreSQL %s: %v, want %s %q", c.q, err, c.state, c.msg)
			}
		}
		_, err := run(ctx, cl, c.q)
		if st := status.Convert(err); st.Code() != c.code || !strings.Contains(st.Message(), c.msg) || !strings.Contains(st.Message(), "to_char") {
			t.Errorf("%s: %v, want %v naming to_char with %q", c.q, err, c.code, c.msg)
		}
	}
	t.Logf("%d rows of to_char compared with PostgreSQL's", compared)
}
