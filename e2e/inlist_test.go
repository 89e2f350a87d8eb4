package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
)

// TestLongInListsAsPostgres: IN lists and OR chains of equalities of thousands of constants
// (the binder folds a chain into one IN list, the executor looks a list up in one set) answer
// PostgreSQL's values over the same rows, ORD's archived March and its archiving and hot
// April, pushdown on and off: text and integer lists, a list holding a NULL (NULL where
// nothing matches), NOT IN, a chain beside another disjunct and one holding `= NULL`, their
// values in the select list (NULL for the rows without a destination), and a list of 60,000
// constants.
func TestLongInListsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	clients := map[string]*flightsql.Client{"pushdown on": dial(t, e.on), "pushdown off": dial(t, e.off)}
	const from = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'"
	pgTableOf(t, ctx, clients["pushdown on"], pg, 1000, "in_rows", "SELECT id, value->>'destination', (value->>'delay')::int"+from, "id text", "dest text", "delay int")
	var dests []string
	for i, r := range pgTextRows(t, ctx, pg, "SELECT DISTINCT dest FROM in_rows WHERE dest IS NOT NULL ORDER BY 1") {
		if i%2 == 0 {
			dests = append(dests, r[0])
		}
	}
	if len(dests) < 10 {
		t.Fatalf("%d destinations", len(dests))
	}
	text := func(n int, extra ...string) []string {
		out := append([]string{}, extra...)
		for _, d := range dests {
			out = append(out, "'"+d+"'")
		}
		for i := 0; len(out) < n; i++ {
			out = append(out, fmt.Sprintf("'Z%05d'", i))
		}
		return out
	}
	ints := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint(i*3 - 60)
		}
		return out
	}
	in := func(x string, items []string) string { return x + " IN (" + strings.Join(items, ", ") + ")" }
	or := func(x string, items []string) string {
		terms := make([]string, len(items))
		for i, it := range items {
			terms[i] = x + " = " + it
		}
		return "(" + strings.Join(terms, " OR ") + ")"
	}
	const dest, delay = "value->>'destination'", "(value->>'delay')::int"
	var pairs [][2]string
	add := func(sel, oursWhere, theirsWhere, tail string) {
		pairs = append(pairs, [2]string{"SELECT " + sel + from + " AND " + oursWhere + tail,
			"SELECT " + sel + " FROM in_rows WHERE " + theirsWhere + tail})
	}
	for _, n := range []int{1000, 10_000} {
		items := text(n)
		add("count(*)", in(dest, items), in("dest", items), "")
		add("count(*)", or(dest, items), or("dest", items), "")
		add("count(*)", "NOT "+in(dest, items), "NOT "+in("dest", items), "")
		add("count(*)", "("+or(dest, items)+" OR "+delay+" > 60)", "("+or("dest", items)+" OR delay > 60)", "")
		add("count(*)", in(delay, ints(n)), in("delay", ints(n)), "")
		add("count(*)", or(delay, ints(n)), or("delay", ints(n)), "")
	}
	items := text(5000)
	nullItems := text(5000, "NULL")
	pairs = append(pairs,
		[2]string{"SELECT (" + in(dest, items) + ")::text AS m, count(*)" + from + " GROUP BY 1 ORDER BY 1 NULLS FIRST",
			"SELECT (" + in("dest", items) + ")::text AS m, count(*) FROM in_rows GROUP BY 1 ORDER BY 1 NULLS FIRST"},
		[2]string{"SELECT (" + or(dest, items) + ")::text AS m, count(*)" + from + " GROUP BY 1 ORDER BY 1 NULLS FIRST",
			"SELECT (" + or("dest", items) + ")::text AS m, count(*) FROM in_rows GROUP BY 1 ORDER BY 1 NULLS FIRST"},
		[2]string{"SELECT (" + in(dest, nullItems) + ")::text AS m, count(*)" + from + " GROUP BY 1 ORDER BY 1 NULLS FIRST",
			"SELECT (" + in("dest", nullItems) + ")::text AS m, count(*) FROM in_rows GROUP BY 1 ORDER BY 1 NULLS FIRST"},
		[2]string{"SELECT (" + or(dest, nullItems) + ")::text AS m, count(*)" + from + " GROUP BY 1 ORDER BY 1 NULLS FIRST",
			"SELECT (" + or("dest", nullItems) + ")::text AS m, count(*) FROM in_rows GROUP BY 1 ORDER BY 1 NULLS FIRST"},
		[2]string{"SELECT count(*)" + from + " AND " + in(dest, text(60_000)),
			"SELECT count(*) FROM in_rows WHERE " + in("dest", text(60_000))},
	)
	comparePG(t, ctx, pg, clients, pairCases(pgText, pairs)...)
}
