package e2e

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestSchemaProbesAsPostgres: the statements BI tools and drivers send to learn a table's
// columns — Metabase's `SELECT true AS "_" FROM "public"."flights" WHERE 1 <> 1 LIMIT 0`,
// `SELECT * FROM t LIMIT 0`, `WHERE false` — answer PostgreSQL's columns and no rows without
// a partition pin or a time range (trial26: they were refused as reads without a route);
// an aggregate over no row is PostgreSQL's one row, and a constant true still needs the route.
func TestSchemaProbesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT true AS "_" FROM "public"."flights" WHERE 1 <> 1 LIMIT 0`,
		`SELECT * FROM flights LIMIT 0`,
		`SELECT * FROM flights WHERE false`,
		`SELECT origin, timestamp, id, value->>'delay' AS d FROM flights WHERE NULL`,
		`SELECT count(*), min(timestamp), sum((value->>'delay')::int) FROM flights WHERE 1 = 0`,
		`SELECT origin, count(*) FROM flights WHERE false GROUP BY 1`,
		`SELECT count(*) FROM flights LIMIT 0`,
		`SELECT * FROM (SELECT * FROM flights LIMIT 0) t`,
		`SELECT id FROM flights UNION SELECT origin FROM flights LIMIT 0`,
		`SELECT * FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' FETCH FIRST 0 ROWS ONLY`,
	}
	for _, cl := range clients {
		cases := sameSQL(pgTypes, qs...)
		cases[0].theirs = strings.Replace(qs[0], `"public".`, "", 1) // the oracle's table is in another schema
		comparePG(t, ctx, pg, one(cl.c), cases...)
		if _, err := run(ctx, cl.c, `SELECT * FROM flights WHERE 1 = 1`); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "flights needs origin") {
			t.Errorf("WHERE 1 = 1: %v, want the missing route named", err)
		}
	}
}

// TestOrOfPinnedRangesAsPostgres: an OR whose every disjunct pins the origin (and bounds the
// time, or leaves it to a bound outside the OR) reads the union of its pins and ranges and
// answers PostgreSQL's rows — two series compared side by side (trial26: refused as a read
// without a pin).
func TestOrOfPinnedRangesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT origin, count(*), min(id), max(timestamp)::text FROM flights WHERE (origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02') OR (origin = 'SFO' AND timestamp >= '2001-04-03' AND timestamp < '2001-04-04') GROUP BY 1 ORDER BY 1",
		"SELECT count(*) FROM flights WHERE timestamp >= '2001-04-01' AND timestamp < '2001-04-08' AND ((origin = 'ORD' AND (value->>'delay')::int > 30) OR (origin IN ('SFO', 'ORD') AND (value->>'delay')::int < 0))",
		"SELECT date_trunc('day', timestamp)::text, origin, count(*) FROM flights WHERE (origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-03') OR (origin = 'ORD' AND timestamp >= '2001-04-05' AND timestamp < '2001-04-06') OR (origin = 'ATL' AND origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-09') GROUP BY 1, 2 ORDER BY 1, 2",
	}
	for _, cl := range clients {
		for _, q := range qs {
			if n := comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, q)...); n == 0 {
				t.Errorf("PostgreSQL answers no row to %s", q)
			}
		}
	}
}
