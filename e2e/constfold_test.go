package e2e

import (
	"testing"
	"time"
)

// TestConstantFoldingErrorsAsPostgres: PostgreSQL folds the constant subexpressions of a query
// while planning it (eval_const_expressions), so a constant that fails is its error whether or
// not a row reaches it — over rows that never take its CASE arm, over no rows at all — except
// where the folding drops it first: a CASE arm whose condition folds to false, the arms after
// one whose condition folds to true, the COALESCE arguments after a non-null constant, the
// AND/OR operands after a constant false/true. Pushdown on and off.
func TestConstantFoldingErrorsAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 3, 30, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 2, 0, 0, 0, 0, time.UTC))
	const (
		w     = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02'"
		empty = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-03-30'"
		d     = "(value->>'delay')::int"
	)
	refused := map[string]string{
		"SELECT CASE WHEN " + d + " > 1000000 THEN 1/0 ELSE 1 END" + w:              "22012",
		"SELECT CASE WHEN " + d + " > 0 THEN 1/0 ELSE 1 END" + empty:                "22012",
		"SELECT CASE " + d + " WHEN -99999 THEN 1 % 0 END" + w:                      "22012",
		"SELECT coalesce(" + d + ", 1/0)" + w:                                       "22012",
		"SELECT nullif(" + d + ", 1/0)" + empty:                                     "22012",
		"SELECT count(*)" + w + " AND " + d + " > 1000000 AND 1/0 = 1":              "22012",
		"SELECT count(*)" + empty + " AND (" + d + " > 0 OR 1/0 = 1)":               "22012",
		"SELECT CASE WHEN " + d + " > 1000000 THEN 2147483647 + 1 END" + w:          "22003",
		"SELECT CASE WHEN " + d + " > 1000000 THEN sqrt(-1) END" + w:                "2201F",
		"SELECT CASE WHEN " + d + " > 1000000 THEN 'x'::int END" + w:                "22P02",
		"SELECT CASE WHEN false THEN 1 ELSE 1/0 END" + empty:                        "22012",
		"SELECT count(*)" + empty + " AND 1/0 = 1 AND false":                        "22012",
		"SELECT CASE WHEN " + d + " > 1000000 THEN 9223372036854775807 * 2 END" + w: "22003",
	}
	for name, cl := range clients {
		for q, code := range refused {
			t.Run(name, func(t *testing.T) { refusedAsPostgres(t, ctx, cl, pg, q, code) })
		}
	}
	rows := comparePG(t, ctx, pg, clients, sameSQL(pgText,
		"SELECT CASE WHEN false THEN 1/0 END, CASE WHEN true THEN 1 ELSE 1/0 END"+w,
		"SELECT CASE WHEN "+d+" > 1000000 THEN 1 WHEN true THEN 2 ELSE 1/0 END"+w,
		"SELECT coalesce(1, 1/0), coalesce(NULL, 2, 1/0)"+w,
		"SELECT count(*)"+w+" AND false AND 1/0 = 1",
		"SELECT count(*)"+w+" AND (true OR 1/0 = 1)",
		"SELECT CASE WHEN 1 > 2 THEN 1/0 ELSE 3 END"+w,
		"SELECT count(*)"+w+" AND (1 > 2 AND 1/0 = 1) IS NOT TRUE",
		"SELECT (1 < 2 OR 1/0 = 1), ("+d+" > 0 OR 2 > 1 OR 1/0 = 1), CASE WHEN 1 < 2 OR 1/0 = 1 THEN 'y' END"+w,
	)...)
	if rows < 8 {
		t.Errorf("only %d rows compared", rows)
	}
}
