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

// avgQueries are avg of integers (PostgreSQL's numeric) over table-less series and over the
// flights' JSON fields, with hot, archived and mixed buckets, grouped, DISTINCT, filtered and
// inside expressions; each is run by PostgreSQL and by flightsrv.
var avgQueries = []string{
	"SELECT avg(g) FROM generate_series(1, 3) g",
	"SELECT avg(g) FROM generate_series(-7, 1) g",
	"SELECT g % 7 AS k, avg(g), avg(g * g), avg(-g) FROM generate_series(1, 1000) g GROUP BY 1 ORDER BY 1",
	"SELECT avg(CASE WHEN g % 3 = 0 THEN 1 ELSE 0 END), avg(g::smallint), avg(g::bigint * 1000000007) FROM generate_series(1, 9999) g",
	"SELECT avg(a % 2 + b), avg(b % 3) FROM generate_series(1, 200) a, generate_series(1, 150) b",
	"SELECT avg(x) FROM (VALUES (1), (2), (NULL)) v(x)",
	"SELECT avg(x) FROM (VALUES (NULL::int)) v(x)",
	"SELECT avg(DISTINCT g % 5), avg(g % 5) FILTER (WHERE g > 3) FROM generate_series(1, 10) g",
	"SELECT avg(g) * 2, avg(g) > 2.5, -avg(g), abs(avg(-g)) FROM generate_series(1, 4) g",
	"SELECT avg(999999999999999999 - g), avg(-999999999999999999 + g) FROM generate_series(1, 3) g",
	"SELECT avg((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'",
	"SELECT value->>'destination' AS d, count(*), avg((value->>'delay')::int), avg((value->>'distance')::bigint) FROM flights " +
		"WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1 ORDER BY 1",
	"SELECT date_part('month', timestamp)::int AS m, avg((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 0), avg(DISTINCT (value->>'delay')::int) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1",
	"SELECT origin, avg((value->>'distance')::int) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 ORDER BY 1",
	// Over windows: the frame's exact sum over its count, as the aggregate.
	"SELECT g, avg(g) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING), avg(g % 3) OVER (PARTITION BY g % 2), avg(-g) OVER (ORDER BY g RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM generate_series(1, 12) g ORDER BY g",
	"SELECT id, avg((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW), avg((value->>'distance')::bigint) OVER (ORDER BY timestamp RANGE BETWEEN '1 hour' PRECEDING AND CURRENT ROW) " +
		"FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY timestamp, id",
}

// avgRounded are avg of integers inside expressions that fix the scale: compared with
// PostgreSQL's text as it is.
var avgRounded = []string{
	"SELECT round(avg(g), 2), trunc(avg(g), 3), avg(g)::numeric(10,4), ceil(avg(g)), avg(g)::int FROM generate_series(1, 6) g",
	"SELECT round(avg((value->>'delay')::int), 3) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'",
}

// TestAvgOfIntegersAsPostgres: avg of integers is numeric, as in PostgreSQL (Arrow
// decimal128(38, 20)), as an aggregate and over a window: every value is PostgreSQL's exactly — its text, with zeros up to the 20
// digits after the point one column shows — with pushdown on and off (the stores' partial sums
// and counts merged across buckets); an average PostgreSQL shows with more digits than 20,
// not all zeros, is refused by name (0A000) rather than rounded.
func TestAvgOfIntegersAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	compared := 0
	for _, cl := range []struct {
		name string
		c    *flightsql.Client
	}{{"pushdown on", dial(t, e.on)}, {"pushdown off", dial(t, e.off)}} {
		c := cl.c
		for _, q := range avgQueries {
			want, kinds := pgTexts(t, ctx, pg, q)
			for col, k := range kinds {
				if k == "numeric" {
					for r := range want {
						want[r][col] = padScale(want[r][col], 20)
					}
				}
			}
			n := compareNumericRows(t, ctx, c, q, want, kinds)
			if n == 0 && !strings.Contains(q, "NULL::int") {
				t.Errorf("%s (%s): no rows", q, cl.name)
			}
			compared += n
		}
		for _, q := range avgRounded {
			want, kinds := pgTexts(t, ctx, pg, q)
			compared += compareNumericRows(t, ctx, c, q, want, kinds)
		}
		// 1/30000: PostgreSQL shows 24 digits after the point, not all zeros past the 20th;
		// 9223372036854775806: 19 integer digits.
		for q, pgText := range map[string]string{
			"SELECT avg(CASE WHEN a = 1 AND b = 1 THEN 1 ELSE 0 END) FROM generate_series(1, 200) a, generate_series(1, 150) b": "0.000033333333333333333333",
			"SELECT avg(9223372036854775807 - g) FROM generate_series(1, 3) g":                                                  "9223372036854775805",
		} {
			if want, _ := pgTexts(t, ctx, pg, q); want[0][0] != pgText {
				t.Fatalf("PostgreSQL's %s is %s, not %s", q, want[0][0], pgText)
			}
			_, err := run(ctx, c, q)
			if st := status.Convert(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), "avg of integers") {
				t.Errorf("%s (%s): %v, want UNIMPLEMENTED naming avg of integers", q, cl.name, err)
			}
		}
	}
	t.Logf("%d rows of averages compared with PostgreSQL's", compared)
}

// padScale writes PostgreSQL's text of a numeric with zeros up to scale digits after the point
// (NULL and values with more digits unchanged).
func padScale(text string, scale int) string {
	if text == "NULL" {
		return text
	}
	dot := strings.IndexByte(text, '.')
	if dot < 0 {
		return text + "." + strings.Repeat("0", scale)
	}
	if have := len(text) - dot - 1; have < scale {
		return text + strings.Repeat("0", scale-have)
	}
	return text
}
