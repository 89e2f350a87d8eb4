package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestNumericSeriesAsPostgres: generate_series(start, stop[, step]) in FROM with a numeric
// argument (the others integers or untyped literals) answers PostgreSQL's numeric values and
// text (each value's display scale: start's, and the larger of start's and step's after it),
// counting up and down, none when start is past stop or an argument is NULL, joined, grouped
// and filtered like any FROM item; a zero step is 22023, a double precision end 42883; a step
// with more digits than its start, and arguments that are not constants, are refused by name.
func TestNumericSeriesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT g::text, (g * 2)::text, scale(g) FROM generate_series(0.0, 1.0, 0.1) g ORDER BY g",
		"SELECT g::text FROM generate_series(1, 2.5) g",
		"SELECT g::text FROM generate_series(1.00, 0, -0.25) AS g",
		"SELECT s.x::text FROM generate_series(-1.5, 1.5, 0.5) AS s(x) WHERE s.x <> 0",
		"SELECT count(*) FROM generate_series(1.5, 1, 1) g",
		"SELECT count(*) FROM generate_series(1.5, NULL) g",
		"SELECT g::text FROM generate_series(1.5, '3.25', '0.5') g",
		"SELECT g::text FROM generate_series(5::numeric, 7) g",
		"SELECT g::text FROM generate_series(0.5, 2.4, 0.7) g",
		"SELECT sum(g)::text, avg(g)::text, max(g)::text FROM generate_series(0.25, 100, 0.25) g",
		"SELECT g::text, count(f.id) FROM generate_series(0.0, 30.0, 10.0) g LEFT JOIN flights f ON origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' " +
			"AND (f.value->>'delay')::numeric >= g AND (f.value->>'delay')::numeric < g + 10 GROUP BY g ORDER BY g",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT * FROM generate_series(1.5, 3, 0)":        "22023",
			"SELECT * FROM generate_series(1.5, 3.0::float8)": "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT * FROM generate_series(1, 2, 0.5)":      "generate_series of numerics whose step has more digits after the point than its start",
			"SELECT * FROM generate_series(1.5, 2.5 + 1) g": "generate_series of numerics that are not constants",
		})
	}
}
