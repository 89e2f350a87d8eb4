package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestArrayAggAsPostgres: array_agg of text, integers, bigints, doubles and booleans — NULL
// elements kept, ORDER BY the value ascending (NULLs last) and descending (NULLs first),
// FILTER, grouped and not, over hot and archived buckets with pushdown on and off (the
// fragments' lists merged) — answers PostgreSQL's arrays: their text (::text, with array_out's
// quoting) and array_to_string's, and an Arrow list of the element type holding the values;
// what it does not run is refused by name.
func TestArrayAggAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, []string{"ORD", "BOS"}, time.Date(2001, 3, 25, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC))
	on, off := dial(t, e.on), dial(t, e.off)
	const (
		d  = "(value->>'delay')::int"
		nd = "NULLIF((value->>'delay')::int, 0)"
		w  = " FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	)
	rows := comparePG(t, ctx, pg, map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}, sameSQL(pgText,
		"SELECT value->>'destination' AS dest, array_agg("+d+" ORDER BY "+d+")::text, array_to_string(array_agg(id ORDER BY id), ',')"+w+" GROUP BY 1 ORDER BY 1",
		"SELECT value->>'destination' AS dest, array_agg("+nd+" ORDER BY "+nd+" DESC)::text, array_agg("+nd+" ORDER BY "+nd+")::text, array_to_string(array_agg("+nd+" ORDER BY "+nd+"), '-', '*')"+w+" GROUP BY 1 ORDER BY 1",
		"SELECT array_agg((value->>'distance')::bigint ORDER BY (value->>'distance')::bigint DESC) FILTER (WHERE "+d+" > 30)::text, array_agg(("+d+")::float8 / 8 ORDER BY ("+d+")::float8 / 8)::text, array_agg("+d+" > 15 ORDER BY "+d+" > 15)::text"+w,
		"SELECT array_agg(g ORDER BY g DESC)::text, array_to_string(array_agg(g), '') FROM generate_series(1, 12) g",
		"SELECT array_agg(x)::text, array_to_string(array_agg(x), '|'), array_to_string(array_agg(x), '|', 'null') FROM (VALUES ('a b'), (''), ('NULL'), ('x\"y'), (NULL), ('back\\slash'), ('{}'), ('c,d'), ('plain')) v(x)",
		"SELECT array_agg(g)::text FROM generate_series(1, 3) g WHERE g > 5",
		"SELECT g % 3 AS k, array_agg(g::float8 / 3 ORDER BY g::float8 / 3 DESC)::text, array_agg(g % 2 = 0 ORDER BY g % 2 = 0 DESC)::text FROM generate_series(1, 10) g GROUP BY 1 ORDER BY 1",
	)...)
	if rows < 20 {
		t.Errorf("only %d rows compared", rows)
	}

	// The column is an Arrow list of the element type.
	res := mustRun(t, on, "SELECT array_agg(g ORDER BY g) FROM generate_series(1, 4) g")
	l, ok := res.recs[0].Column(0).(*array.List)
	if !ok || !arrow.TypeEqual(l.DataType().(*arrow.ListType).Elem(), arrow.PrimitiveTypes.Int32) {
		t.Fatalf("array_agg of integers is %s, want a list of int32", res.recs[0].Column(0).DataType())
	}
	want := pgTextRows(t, ctx, pg, "SELECT x::text FROM unnest((SELECT array_agg(g ORDER BY g) FROM generate_series(1, 4) g)) x")
	var got []string
	for i := range l.ListValues().Len() {
		got = append(got, l.ListValues().ValueStr(i))
	}
	if len(got) != len(want) || strings.Join(got, ",") != strings.Join(func() []string {
		var s []string
		for _, r := range want {
			s = append(s, r[0])
		}
		return s
	}(), ",") {
		t.Errorf("array_agg's list %v, PostgreSQL's elements %v", got, want)
	}

	for q, msg := range map[string]string{
		"SELECT array_agg(timestamp)" + w: "array_agg of timestamp with time zone is not supported",
	} {
		if _, err := run(ctx, on, q); status.Code(err) != codes.Unimplemented || !strings.Contains(status.Convert(err).Message(), msg) {
			t.Errorf("%s: %v, want UNIMPLEMENTED %q", q, err, msg)
		}
	}
}
