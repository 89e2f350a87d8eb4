package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestDistinctOnSetReturningAsPostgres (review rev18): PostgreSQL's planner evaluates a select
// list's set-returning functions after ORDER BY's sort when no ORDER BY or DISTINCT ON key
// calls one (make_sort_input_target postpones them), so that SELECT DISTINCT ON (a) a,
// generate_series(1, 3) … ORDER BY a keeps one input row of each a and then expands it (six
// rows over two values of a), where evaluating the series first keeps one row of each a (two
// rows). That shape is refused by name; DISTINCT ON without ORDER BY, or with a key that calls
// the function, answers PostgreSQL's rows.
func TestDistinctOnSetReturningAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	cl := dial(t, e.on)
	const v = " FROM (VALUES (1, 'x'), (2, 'y'), (1, 'z')) v(a, b)"
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT count(*) FROM (SELECT DISTINCT ON (a) a, generate_series(1, 3)"+v+") s",
		"SELECT DISTINCT ON (a) a, generate_series(1, 3) AS g"+v+" ORDER BY a, g DESC",
		"SELECT DISTINCT ON (a) a, generate_series(1, 3)"+v+" ORDER BY a, 2",
		"SELECT DISTINCT ON (a, g) a, generate_series(1, 2) AS g"+v+" ORDER BY a, g",
		"SELECT DISTINCT a, generate_series(1, 2) AS g"+v+" ORDER BY a, g",
		"SELECT DISTINCT ON (a) a, generate_series(1, 3) AS b"+v+" ORDER BY a, b DESC",
		"SELECT DISTINCT ON (a) a, generate_series(2, 3)"+v+" ORDER BY a, generate_series",
		"SELECT DISTINCT ON (a) a, generate_series(1, 3) + 1"+v+" ORDER BY a, generate_series(1, 3) + 1 DESC",
	)...)
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT DISTINCT ON (a) a, generate_series(1, 3)" + v + " ORDER BY a":                    "DISTINCT ON",
		"SELECT DISTINCT ON (a) a, b, json_array_elements_text('[1, 2]')" + v + " ORDER BY a, b": "DISTINCT ON",
	})
}
