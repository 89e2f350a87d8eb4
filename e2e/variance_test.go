package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestVarianceDigitsAsPostgres: stddev, variance, stddev_pop and var_pop of doubles over one
// bucket (one fragment: ORD's January, archived as JSON; March, archived as Parquet; April,
// left archiving and read hot; June, hot), grouped and not, are PostgreSQL's to the last digit
// (the text of the same double): the fragment accumulates its rows in the order it reads them
// as float8_accum does (Youngs-Cramer: N, Sx, Sxx), and PostgreSQL, reading the same rows in
// the same order from a table, computes the same double. (A user trial saw
// 35.69388886708659 against PostgreSQL's 35.693888867086606 over several buckets: partial
// states combined by float8_combine in another grouping than one pass over the rows differ in
// the last bits, as PostgreSQL's own parallel aggregates do: over ORD's March and April by
// destination, 229 of 440 values' texts differed from PostgreSQL's one pass, each by a unit or
// two in the last place; TestStatisticalAggregatesAsPostgres compares those to 1e-12.)
func TestVarianceDigitsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	const aggs = "count(*), stddev(X)::text, variance(X)::text, stddev_pop(X)::text, var_pop(X)::text, stddev(X * 1.1::float8)::text"
	rows := 0
	for i, month := range []string{"2001-01", "2001-03", "2001-04", "2001-06"} {
		from := fmt.Sprintf(" FROM flights WHERE origin = 'ORD' AND timestamp >= '%s-01' AND timestamp < '%s-01'::date + INTERVAL '1 month'", month, month)
		table := fmt.Sprintf("var_rows%d", i)
		pgTableOf(t, ctx, cl, pg, 1000, table, "SELECT value->>'destination', value->>'delay'"+from, "dest text", "delay float8")
		ours := strings.ReplaceAll(aggs, "X", "(value->>'delay')::float8")
		theirs := strings.ReplaceAll(aggs, "X", "delay")
		rows += comparePG(t, ctx, pg, one(cl), pairCases(pgText, [][2]string{
			{"SELECT " + ours + from, "SELECT " + theirs + " FROM " + table},
			{"SELECT value->>'destination' AS d, " + ours + from + " GROUP BY 1 ORDER BY 1", "SELECT dest AS d, " + theirs + " FROM " + table + " GROUP BY 1 ORDER BY 1"},
		})...)
	}
	if rows < 100 {
		t.Errorf("only %d rows compared", rows)
	}
}
