package e2e

import (
	"strconv"
	"strings"
	"testing"
)

// The rows of issue 18's frames18b tests (TestWindowGroupsAndExclusionAsPostgres,
// TestFetchWithTiesAsPostgres, TestRowValuesAsPostgres): ORD's and BOS's flights over thirty
// hours across the archived March and the hot April; their delay (many ties) and the delay
// NULL for the flights on time.
const (
	tiesFrom  = " FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"
	tiesDelay = "(value->>'delay')::int"
	tiesNull  = "NULLIF((value->>'delay')::int, 0)"
)

// TestWindowGroupsAndExclusionAsPostgres: GROUPS frames (n PRECEDING and FOLLOWING, CURRENT
// ROW, UNBOUNDED) and the frame exclusion (EXCLUDE CURRENT ROW, GROUP, TIES, NO OTHERS) in
// ROWS, RANGE and GROUPS modes, for the window aggregates and first_value, last_value and
// nth_value, answer what PostgreSQL answers over the same rows, routed, pushdown on and off:
// order keys with many ties and with NULLs, frames past the partition's ends (empty frames),
// partitions of one row, a named window, several frames of one call in one query. Each query
// reads only values determined by the order key's value (its peers' share it) and orders every
// column of its answer, so that the rows compare whatever order PostgreSQL gives peers. The
// offsets may be parameters (bigint, as PostgreSQL declares them), with PostgreSQL's 22004 and
// 22013 for NULL and negative ones; its 42P20 refusals (GROUPS without ORDER BY, a frame
// starting after its end, a window copied with its frame) are its words.
func TestWindowGroupsAndExclusionAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	routed := byName(clients)
	const (
		w, d, nd = tiesFrom, tiesDelay, tiesNull
		k        = "PARTITION BY origin ORDER BY " + d
	)
	// sel is the answer of the window calls of fs (each "f OVER (…)"): the origin, the delay and
	// each call's value, every column ordered.
	sel := func(fs ...string) string {
		order := make([]string, len(fs)+2)
		for i := range order {
			order[i] = strconv.Itoa(i+1) + " NULLS FIRST"
		}
		return "SELECT origin, " + d + " AS d, " + strings.Join(fs, ", ") + w + " ORDER BY " + strings.Join(order, ", ")
	}
	queries := []string{
		// GROUPS frames.
		sel("count(*) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING)", "sum("+d+") OVER ("+k+" GROUPS 2 PRECEDING)",
			"count("+nd+") OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING)", "min("+d+") OVER ("+k+" GROUPS BETWEEN 1 FOLLOWING AND 3 FOLLOWING)",
			"max("+nd+") OVER ("+k+" GROUPS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)", "first_value("+d+") OVER ("+k+" GROUPS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING)",
			"last_value("+nd+") OVER ("+k+" GROUPS BETWEEN 5 FOLLOWING AND 9 FOLLOWING)", "nth_value("+d+", 3) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING)"),
		sel("avg("+d+") OVER ("+k+" GROUPS BETWEEN 2 PRECEDING AND 1 PRECEDING)", "avg("+d+"::float8) OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND CURRENT ROW)",
			"sum("+d+"::bigint) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 9223372036854775807 FOLLOWING)", "sum(("+d+")::numeric(10,2) / 4) OVER ("+k+" GROUPS 1 PRECEDING)",
			"var_samp("+d+") OVER ("+k+" GROUPS BETWEEN 2 PRECEDING AND CURRENT ROW)", "stddev_pop("+d+"::float8) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
			"bool_and("+d+" > 0) OVER ("+k+" GROUPS BETWEEN 1 FOLLOWING AND 2 FOLLOWING)", "bool_or("+d+" > 20) OVER ("+k+" GROUPS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"),
		// Exclusions in GROUPS mode.
		sel("sum("+d+") OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP)", "count(*) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES)",
			"count(*) OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE CURRENT ROW)", "avg("+d+") OVER ("+k+" GROUPS BETWEEN 2 PRECEDING AND CURRENT ROW EXCLUDE TIES)",
			"avg("+d+"::float8) OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING EXCLUDE CURRENT ROW)", "min("+nd+") OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE GROUP)",
			"max("+d+") OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE GROUP)", "first_value("+d+") OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE GROUP)",
			"last_value("+nd+") OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)", "nth_value("+d+", 2) OVER ("+k+" GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE CURRENT ROW)",
			"count(*) OVER ("+k+" GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE NO OTHERS)"),
		// Exclusions in ROWS mode over tied keys (a row's frame is positions; the values at
		// each position are the key's).
		sel("sum("+d+") OVER ("+k+" ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE TIES)", "count("+nd+") OVER ("+k+" ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP)",
			"sum("+d+"::float8) OVER ("+k+" ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE CURRENT ROW)", "min("+d+") OVER ("+k+" ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING EXCLUDE GROUP)",
			"max("+nd+") OVER ("+k+" ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING EXCLUDE TIES)", "first_value("+d+") OVER ("+k+" ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE GROUP)",
			"last_value("+d+") OVER ("+k+" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW)", "nth_value("+nd+", 2) OVER ("+k+" ROWS BETWEEN 4 PRECEDING AND 4 FOLLOWING EXCLUDE TIES)",
			"var_pop("+d+") OVER ("+k+" ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING EXCLUDE TIES)", "stddev_samp("+d+"::float8) OVER ("+k+" ROWS BETWEEN 3 PRECEDING AND 3 FOLLOWING EXCLUDE GROUP)"),
		// Exclusions in RANGE mode: offsets, the whole partition, the default frame's bounds.
		sel("sum("+d+") OVER ("+k+" RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING EXCLUDE CURRENT ROW)", "count(*) OVER ("+k+" RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE TIES)",
			"avg("+d+") OVER ("+k+" RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE GROUP)", "sum(("+d+")::numeric(10,2) / 4) OVER ("+k+" RANGE BETWEEN 10 PRECEDING AND CURRENT ROW EXCLUDE TIES)",
			"bool_and("+d+" <> 3) OVER ("+k+" RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING EXCLUDE GROUP)", "first_value("+nd+") OVER ("+k+" RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW)",
			"last_value("+d+") OVER ("+k+" RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE GROUP)"),
		// NULL order keys (one peer group), descending, nulls first; several order keys.
		"SELECT origin, " + nd + " AS k, count(*) OVER (PARTITION BY origin ORDER BY " + nd + " GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE GROUP), sum(" + nd + ") OVER (PARTITION BY origin ORDER BY " + nd + " DESC NULLS FIRST GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING EXCLUDE TIES), max(" + nd + ") OVER (PARTITION BY origin ORDER BY " + nd + " GROUPS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)" + w + " ORDER BY 1, 2 NULLS FIRST, 3, 4 NULLS FIRST, 5 NULLS FIRST",
		"SELECT origin, " + d + " AS d, count(*) OVER (ORDER BY origin, " + d + " GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE TIES), sum(" + d + ") OVER (ORDER BY origin DESC, " + d + " GROUPS 3 PRECEDING)" + w + " ORDER BY 1, 2, 3, 4",
		// Partitions of one row: a frame excluding the row is empty.
		"SELECT id, count(*) OVER (PARTITION BY id ORDER BY timestamp GROUPS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW) c, sum(" + d + ") OVER (PARTITION BY id ORDER BY timestamp ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE GROUP) s, first_value(id) OVER (PARTITION BY id ORDER BY timestamp RANGE BETWEEN CURRENT ROW AND CURRENT ROW EXCLUDE TIES) f" + w + " ORDER BY id",
		// A named window; the same call over several frames (each its own column); ranking
		// functions and lag ignore the frame.
		"SELECT origin, " + d + " AS d, sum(" + d + ") OVER w, count(*) OVER w, sum(" + d + ") OVER (" + k + " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), sum(" + d + ") OVER (" + k + " RANGE BETWEEN 1 PRECEDING AND CURRENT ROW), sum(" + d + ") OVER (" + k + " GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW), sum(" + d + ") OVER (" + k + " ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES), rank() OVER (" + k + " GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE GROUP)" + w + " WINDOW w AS (" + k + " GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES) ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9",
		// Over a grouped result.
		"SELECT origin, " + d + " AS d, count(*), sum(count(*)) OVER (PARTITION BY origin ORDER BY " + d + " GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW)" + w + " GROUP BY 1, 2 ORDER BY 1, 2",
	}
	compared := comparePG(t, ctx, pg, routed, nonEmptyTyped(queries...)...)
	compared += comparePG(t, ctx, pg, routed, sameSQL(pgTypes, "SELECT count(*) OVER (ORDER BY timestamp GROUPS 1 PRECEDING EXCLUDE TIES)"+w+" AND false")...)
	t.Logf("%d queries, %d rows equal to PostgreSQL's", len(queries)+1, compared)

	// Offsets as parameters: each row's value weighted by its place, a checksum that a value at
	// the wrong row changes.
	wrap := func(over string) string {
		return "SELECT sum(s * rn)::text || ',' || count(s)::text AS v FROM (SELECT row_number() OVER (ORDER BY timestamp, id) AS rn, sum(" + d + ") OVER (" + over + ") AS s" + w + ") q"
	}
	for _, over := range []string{
		k + " GROUPS ? PRECEDING",
		k + " GROUPS BETWEEN $1 PRECEDING AND $1 FOLLOWING EXCLUDE TIES",
		k + " GROUPS BETWEEN ? PRECEDING AND 1 FOLLOWING EXCLUDE GROUP",
	} {
		q := wrap(over)
		for _, v := range []any{int64(0), int64(2), int64(1 << 40), nil, int64(-1)} {
			compareBound(ctx, t, pg, clients, q, strings.ReplaceAll(strings.Replace(q, "?", "$1", 1), "$1", "$1::bigint"), v)
		}
	}

	// PostgreSQL's refusals.
	for _, c := range clients {
		for q, state := range map[string]string{
			"SELECT count(*) OVER (GROUPS 1 PRECEDING)" + w:                                                                  "42P20",
			"SELECT count(*) OVER (PARTITION BY origin GROUPS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE TIES)" + w: "42P20",
			"SELECT count(*) OVER (ORDER BY " + d + " GROUPS BETWEEN 1 FOLLOWING AND CURRENT ROW)" + w:                       "42P20",
			"SELECT count(*) OVER (ORDER BY " + d + " GROUPS -1 PRECEDING)" + w:                                              "22013",
			"SELECT count(*) OVER (ORDER BY " + d + " GROUPS BETWEEN CURRENT ROW AND NULL FOLLOWING)" + w:                    "22004",
			"SELECT count(*) OVER (v ROWS 1 PRECEDING EXCLUDE TIES)" + w + " WINDOW v AS (ORDER BY id GROUPS 1 PRECEDING)":   "42P20",
		} {
			refusedAsPostgres(t, ctx, c.c, pg, q, state)
		}
	}
}
