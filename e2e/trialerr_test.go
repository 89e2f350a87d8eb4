package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTrialErrorsAsPostgres: what issue 18's user trial found answered with a misleading
// error is answered as PostgreSQL answers it, over the same rows (power of a real and a
// numeric, timestamp - date, a numeric constant past 38 digits cast to double precision,
// UNION, CASE and COALESCE of timestamps with and without time zone, ALL (SELECT …) whose
// select list holds a subquery), refused with PostgreSQL's SQLSTATE and message where
// PostgreSQL refuses too, or refused by name (UNIMPLEMENTED) where PostgreSQL answers and
// flightsrv does not implement it (outer references two levels out); a read without a time
// bound in a statement reading its table twice is named by its alias.
func TestTrialErrorsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	from, to := time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC)
	pgFlights(t, ctx, pg, e.sample, []string{"ORD", "BOS"}, from, to)
	on, off := dial(t, e.on), dial(t, e.off)
	both := map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}
	const (
		ord = " FROM flights o WHERE o.origin = 'ORD' AND o.timestamp >= '2001-03-31' AND o.timestamp < '2001-04-02'"
		bos = " FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-02'"
	)
	n := comparePG(t, ctx, pg, both, nonEmptyTyped(
		"SELECT power(1.5::real, 2.0::numeric) AS a, power(2.0, 1.5::real) AS b, pow(2::real, 0.5) AS c, power(2::float8, 3::numeric) AS d",
		"SELECT o.id, power((o.value->>'delay')::real, 2.0) AS p, power(2.0, (o.value->>'delay')::real / 100) AS q"+ord+" ORDER BY o.id",
		"SELECT '2001-01-02 03:00'::timestamp - '2001-01-01'::date AS a, '2001-01-01'::date - '2001-01-02 03:00'::timestamptz AS b, "+
			"'2001-01-02 03:00'::timestamptz - '2001-01-01'::date AS c, '2001-01-02'::timestamp - '2001-01-01 12:00' AS d, '2001-01-02'::timestamp + '1' AS e",
		"SELECT o.id, o.timestamp - '2001-03-01'::date AS a, o.timestamp::timestamp - '2001-03-01'::date AS b, '2001-04-01'::date - o.timestamp AS c"+ord+" ORDER BY o.id",
		"SELECT 1e40::float8 AS a, CAST(1e40 AS double precision) AS b, 12345678901234567890123456789012345678901234567890.5::float8 AS c, "+
			"1e-320::float8 AS d, 1e38::real AS e, 1e308::float8 AS f, -1e300::float8 AS g, (-0.0)::float8::text AS h, (-0.0::float8)::text AS i, (-0.0)::real::text AS j",
		"SELECT x FROM (SELECT '2001-01-01 05:00'::timestamp AS x UNION ALL SELECT '2001-01-01 03:00+02'::timestamptz UNION ALL SELECT '2001-01-02'::date) s ORDER BY x",
		"SELECT t FROM (SELECT o.timestamp::timestamp AS t"+ord+" UNION ALL SELECT b.timestamp"+bos+") s ORDER BY t",
		"SELECT COALESCE(NULL::date, '2001-01-01 05:00'::timestamp) AS a, CASE WHEN true THEN '2001-01-01'::timestamp ELSE '2001-01-01 00:00+00'::timestamptz END AS b, "+
			"COALESCE(NULL::timestamptz, '2001-01-01 05:00'::timestamp) AS c",
		"SELECT o.id"+ord+" AND (o.value->>'delay')::int > ALL (SELECT (b.value->>'delay')::int - (SELECT 200)"+bos+") ORDER BY o.id",
		"SELECT o.id"+ord+" AND (o.value->>'delay')::int < ANY (SELECT (b.value->>'delay')::int + (SELECT min((c.value->>'delay')::int) FROM flights c WHERE c.origin = 'BOS' AND c.timestamp >= '2001-03-31' AND c.timestamp < '2001-04-02')"+bos+") ORDER BY o.id",
	)...)
	t.Logf("%d rows equal to PostgreSQL's", n)

	// Refused as PostgreSQL refuses, with its SQLSTATE and message.
	for q, state := range map[string]string{
		"SELECT log(2::real, 8::numeric)":                "42883",
		"SELECT log(2::float8, 8::float8)":               "42883",
		"SELECT mod(5::real, 2::numeric)":                "42883",
		"SELECT now() * '1'":                             "42883",
		"SELECT now()::timestamp + '2001-01-01'::date":   "42883",
		"SELECT '2001-01-01'::date + '2001-01-01'::date": "42883",
	} {
		refusedAsPostgres(t, ctx, on, pg, q, state)
	}
	// Past the type's range: 22003 (PostgreSQL quotes the digits, flightsrv never does).
	for q, typ := range map[string]string{"SELECT 1e40::real": "real", "SELECT 1e400::float8": "double precision", "SELECT CAST(1e-400 AS double precision)": "double precision"} {
		if _, err := pg.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "22003") {
			t.Errorf("PostgreSQL: %s: %v, want 22003", q, err)
		}
		refusedAs(t, ctx, on, codes.InvalidArgument, map[string]string{q: "value out of range for type " + typ})
	}

	// PostgreSQL answers these; flightsrv refuses them by name.
	for q, msg := range map[string]string{
		"SELECT o.id" + ord + " AND EXISTS (SELECT 1" + bos + " AND EXISTS (SELECT 1 FROM flights c WHERE c.origin = 'BOS' AND c.timestamp >= '2001-03-31' AND c.timestamp < '2001-04-02' AND c.id = b.id AND c.value->>'destination' = o.value->>'destination')) ORDER BY o.id": `correlated references to a query 2 levels out (column "o.value", read from a subquery or derived table inside a subquery) are not supported`,
		"SELECT o.id" + ord + " AND EXISTS (SELECT 1 FROM (SELECT b.id FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-02' AND b.value->>'destination' = o.value->>'destination') d) ORDER BY o.id":                             `correlated references to a query 2 levels out (column "o.value", read from a subquery or derived table inside a subquery) are not supported`,
		"SELECT o.id" + ord + " AND (o.value->>'delay')::int > ALL (SELECT (b.value->>'delay')::int - (SELECT 200)" + bos + " AND b.value->>'destination' = o.value->>'destination') ORDER BY o.id":                                                                              "correlated ALL (SELECT …) subqueries whose select list holds a subquery are not supported",
	} {
		if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
			t.Errorf("PostgreSQL: %s: %v", q, err)
		}
		refusedAs(t, ctx, on, codes.Unimplemented, map[string]string{q: msg})
	}

	// Superset's virtual dataset joined to itself, the time filter on one side only: the read
	// without a bound is named by its alias, no partition value in the message.
	q := "SELECT o.id FROM (SELECT * FROM flights WHERE origin = 'ORD') AS o JOIN (SELECT * FROM flights WHERE origin = 'ORD') AS i ON i.timestamp < o.timestamp " +
		"WHERE o.timestamp >= '2001-03-31' AND o.timestamp < '2001-04-02'"
	_, err := run(ctx, on, q)
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || st.Message() != "flights read in i needs timestamp >= <start> AND timestamp < <end>" {
		t.Errorf("%s: %v", q, err)
	}
}
