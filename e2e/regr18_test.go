package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// regrAggs are corr, the covariances and the regr_ family of Y and X (spelled per side),
// plain and with FILTER, as text.
const regrAggs = "count(*), corr(Y, X)::text, covar_pop(Y, X)::text, covar_samp(Y, X)::text, regr_slope(Y, X)::text, regr_intercept(Y, X)::text, " +
	"regr_r2(Y, X)::text, regr_count(Y, X), regr_avgx(Y, X)::text, regr_avgy(Y, X)::text, regr_sxx(Y, X)::text, regr_syy(Y, X)::text, regr_sxy(Y, X)::text, " +
	"corr(Y, X) FILTER (WHERE Y > 0)::text, regr_slope(X, Y) FILTER (WHERE X > 1000)::text, regr_count(Y, X) FILTER (WHERE Y IS NULL), covar_samp(Y, Y * 2)::text"

// TestRegressionAggregatesDigitsAsPostgres: corr, covar_pop, covar_samp and the regr_
// aggregates of the flights' delay (Y, NULL where a flight has none) and distance (X) over one
// bucket (one fragment: ORD's January, archived as JSON; March, archived as Parquet; April,
// left archiving and read hot; June, hot), grouped and not, with FILTER, are PostgreSQL's to
// the last digit (the text of the same double): the fragment accumulates its pairs in the
// order it reads them as float8_regr_accum does, and PostgreSQL, reading the same rows in the
// same order from a table, computes the same double.
func TestRegressionAggregatesDigitsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	rows := 0
	for i, month := range []string{"2001-01", "2001-03", "2001-04", "2001-06"} {
		from := fmt.Sprintf(" FROM flights WHERE origin = 'ORD' AND timestamp >= '%s-01' AND timestamp < '%s-01'::date + INTERVAL '1 month'", month, month)
		table := fmt.Sprintf("regr_rows%d", i)
		pgTableOf(t, ctx, cl, pg, 1000, table, "SELECT value->>'destination', value->>'delay', value->>'distance'"+from, "dest text", "delay float8", "distance float8")
		ours := strings.NewReplacer("Y", "(value->>'delay')::float8", "X", "(value->>'distance')::float8").Replace(regrAggs)
		theirs := strings.NewReplacer("Y", "delay", "X", "distance").Replace(regrAggs)
		rows += comparePG(t, ctx, pg, one(cl), pairCases(pgText, [][2]string{
			{"SELECT " + ours + from, "SELECT " + theirs + " FROM " + table},
			{"SELECT value->>'destination' AS d, " + ours + from + " GROUP BY 1 ORDER BY 1", "SELECT dest AS d, " + theirs + " FROM " + table + " GROUP BY 1 ORDER BY 1"},
		})...)
	}
	if rows < 100 {
		t.Errorf("only %d rows compared", rows)
	}
}

// TestRegressionAggregatesAsPostgres: the binary aggregates over several buckets (partial
// states of each fragment combined as float8_regr_combine does: PostgreSQL's one pass over the
// rows differs in the last bits, compared to 1e-12), of integer, real and numeric arguments
// (cast to double precision as PostgreSQL does), over constants (no row, one row, a vertical
// and a horizontal line, NULL pairs, infinities and NaN), with both pushdown settings; a
// finite overflow is 22003, arguments of other types 42883, DISTINCT refused by name (over
// windows: TestWindowAggregatesAsPostgres).
func TestRegressionAggregatesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	where := " FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-01' AND timestamp < '2001-06-01'"
	ours := strings.NewReplacer("Y", "(value->>'delay')::float8", "X", "(value->>'distance')::float8").Replace(regrAggs)
	pairs := "SELECT " + strings.NewReplacer("Y", "y", "X", "x").Replace(regrAggs)
	consts := []string{
		pairs + " FROM (VALUES (1.0::float8, 2.0::float8), (2, 3.5), (NULL, 1), (4, NULL), (3.3, 7.1)) t(y, x)",
		pairs + " FROM (VALUES (1.0::float8, 2.0::float8)) t(y, x)",
		pairs + " FROM (VALUES (1.0::float8, 2.0::float8)) t(y, x) WHERE false",
		pairs + " FROM (VALUES (1.0::float8, 2.0::float8), (3, 2), (5, 2)) t(y, x)",
		pairs + " FROM (VALUES (7.0::float8, 2.0::float8), (7, 3), (7, 5)) t(y, x)",
		pairs + " FROM (VALUES ('Infinity'::float8, 2.0::float8), (7, 3), (8, 5)) t(y, x)",
		pairs + " FROM (VALUES (1::float8, 'NaN'::float8), (7, 3), (8, 5)) t(y, x)",
		pairs + " FROM (VALUES (1::float8, 2::float8), (7, '-Infinity'), (8, 5)) t(y, x)",
		"SELECT corr(g, g * g)::text, regr_slope(g::int2, g::numeric / 3)::text, covar_pop(g::real, 1.5)::text, regr_count(NULL, g), regr_sxx('2', g)::text, regr_avgx(g, NULL)::text FROM generate_series(1, 10) g",
		"SELECT corr(1, 2), regr_count(1, 2), regr_r2(3, 4), covar_pop(1.5, 2.5), regr_avgy(5, 1)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgNumbers,
			"SELECT "+ours+where,
			"SELECT value->>'destination' AS d, "+ours+where+" GROUP BY 1 ORDER BY 1",
			"SELECT date_trunc('month', timestamp)::text AS m, regr_slope((value->>'delay')::int, (value->>'distance')::int), corr((value->>'distance')::real, (value->>'delay')::numeric)"+where+" GROUP BY 1 ORDER BY 1")...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, consts...)...)
		for q, state := range map[string]string{
			"SELECT regr_sxx(y, x) FROM (VALUES (1e300::float8, 1e300::float8), (-1e300, -1e300)) t(y, x)": "22003",
			"SELECT covar_pop(y, x) FROM (VALUES (1e308::float8, 1::float8), (1e308, 2)) t(y, x)":          "22003",
			"SELECT corr(id, 1)" + where: "42883",
			"SELECT corr(1, 'a')":        "22P02",
			"SELECT regr_count(true, 1)": "42883",
			"SELECT corr(1)":             "42883",
			"SELECT corr(1, 2, 3)":       "42883",
			"SELECT corr(corr(1, 2), 1)": "42803",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT corr(DISTINCT (value->>'delay')::float8, 1)" + where: "corr(DISTINCT …)",
		})
	}
}
