package e2e

import (
	"strings"
	"testing"
)

// TestWindowFrameOffsetParametersAsPostgres: a window frame's offset may be a parameter, `?` or
// `$1` (`ROWS ? PRECEDING`, `RANGE BETWEEN $1 PRECEDING AND $1 FOLLOWING`), declared bigint
// to the client; bound, it answers what PostgreSQL answers for the statement with $1 declared
// bigint, over the routed table, pushdown on and off. A NULL offset is PostgreSQL's 22004
// "frame starting offset must not be null", a negative ROWS/GROUPS offset its 22013 "frame
// starting offset must not be negative" and a negative RANGE offset its 22013 "invalid
// preceding or following size in window function" (in_range_int4_int8).
func TestWindowFrameOffsetParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"
	const d = "(value->>'delay')::int"
	wrap := func(over string) string {
		// Each row's window value weighted by its place (timestamp, id): a checksum of the
		// column that a value at the wrong row changes.
		return "SELECT sum(s * rn)::text || ',' || count(s)::text AS v FROM (SELECT row_number() OVER (ORDER BY timestamp, id) AS rn, sum(" + d + ") OVER (" + over + ") AS s" + w + ") q"
	}
	for _, over := range []string{
		"ORDER BY timestamp, id ROWS ? PRECEDING",
		"ORDER BY timestamp, id ROWS $1 PRECEDING",
		"ORDER BY timestamp, id ROWS BETWEEN ? PRECEDING AND 1 FOLLOWING",
		"ORDER BY timestamp, id ROWS BETWEEN 1 PRECEDING AND ? FOLLOWING",
		"ORDER BY timestamp, id ROWS BETWEEN $1 PRECEDING AND $1 FOLLOWING",
		"ORDER BY " + d + " RANGE BETWEEN $1 PRECEDING AND $1 FOLLOWING",
		"ORDER BY " + d + " RANGE ? PRECEDING",
	} {
		q := wrap(over)
		for _, v := range []any{int64(0), int64(2), int64(1 << 40), nil, int64(-1)} {
			compareBound(ctx, t, pg, clients, q, strings.ReplaceAll(strings.Replace(q, "?", "$1", 1), "$1", "$1::bigint"), v)
		}
	}
}
