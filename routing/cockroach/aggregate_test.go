package cockroach_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestAggregate runs the partial-aggregate port's conformance suite (AggregateRange, and
// routing.DurableTable.AggregateBucket over this store and real archives) against PostgreSQL.
func TestAggregate(t *testing.T) {
	t.Parallel()
	storetest.RunAggregate(t, func(t *testing.T) storetest.Store { return migrated(t, cockroach.Config{MaxConns: 8}) })
}

// argRecorder is a pgx.QueryTracer that keeps the text and arguments of every statement.
type argRecorder struct {
	mu   sync.Mutex
	sql  []string
	args [][]any
}

func (r *argRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sql = append(r.sql, d.SQL)
	r.args = append(r.args, d.Args)
	return ctx
}

func (r *argRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *argRecorder) take() ([]string, [][]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sql, args := r.sql, r.args
	r.sql, r.args = nil, nil
	return sql, args
}

// TestMinMaxStatementPlan: PostgreSQL plans the MIN/MAX-only partial aggregate (no count
// asked) as two primary-key probes
// (a Limit over an index scan of pulpitum_v4_records, forward and backward) and never as an
// aggregate, a sort or a sequential scan over the bucket's range, on a table large enough
// (and analysed) for the planner to prefer a scan if it had to visit the range.
func TestMinMaxStatementPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &argRecorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var target routing.BucketID
	for _, pk := range []string{"p", "q", "r"} {
		b := routing.BucketFor("t", []byte(pk), routing.CalendarMonthUTC, start)
		if pk == "p" {
			target = b
		}
		for batch := 0; batch < 4; batch++ {
			recs := make([]routing.Record, 500)
			for i := range recs {
				n := batch*len(recs) + i
				recs[i] = routing.Record{PartitionKey: []byte(pk), EventTime: start.Add(time.Duration(n) * time.Minute),
					SortKey: []byte(fmt.Sprintf("k%05d", n)), Value: []byte("value-not-read")}
			}
			if err := s.Append(ctx, b, recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Pool().Exec(ctx, "ANALYZE pulpitum_v4_records"); err != nil {
		t.Fatal(err)
	}
	rec.take()
	r := routing.TimeRange{Start: start.Add(time.Hour), End: start.Add(20 * time.Hour)}
	route, rd, err := s.AggregateRange(ctx, target, routing.AggregateRequest{Range: r, Measures: []routing.Measure{routing.MinTime, routing.MaxTime}})
	if err != nil || route.State != routing.StateHot || !rd.Next() {
		t.Fatalf("AggregateRange = %+v %v", route, err)
	}
	b := rd.RecordBatch()
	lo, hi := b.Column(0).(*array.Timestamp), b.Column(1).(*array.Timestamp)
	if b.NumRows() != 1 || b.NumCols() != 2 || time.Unix(0, int64(lo.Value(0))).UTC() != r.Start || time.Unix(0, int64(hi.Value(0))).UTC() != r.End.Add(-time.Minute) {
		t.Fatalf("AggregateRange answered %v", b)
	}
	rd.Release()
	sqls, args := rec.take()
	if len(sqls) != 1 {
		t.Fatalf("AggregateRange sent %d statements, want 1: %q", len(sqls), sqls)
	}
	rows, err := s.Pool().Query(ctx, "EXPLAIN (COSTS OFF) "+sqls[0], args[0]...)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(lines, "\n")
	var limits, forward, backward int
	for _, l := range lines {
		switch {
		case strings.Contains(l, "Aggregate"), strings.Contains(l, "Sort"),
			strings.Contains(l, "Seq Scan"), strings.Contains(l, "Bitmap"):
			t.Fatalf("plan visits the range (%s):\n%s", strings.TrimSpace(l), plan)
		case strings.Contains(l, "Limit"):
			limits++
		case strings.Contains(l, "Index") && strings.Contains(l, "Scan Backward") && strings.Contains(l, "on pulpitum_v4_records "):
			backward++
		case strings.Contains(l, "Index") && strings.Contains(l, "Scan") && strings.Contains(l, "on pulpitum_v4_records "):
			forward++
		}
	}
	if limits != 2 || forward != 1 || backward != 1 {
		t.Fatalf("plan has %d limits, %d forward and %d backward index scans of the records, want 2, 1, 1:\n%s", limits, forward, backward, plan)
	}
}

// TestSummedCountStatements checks which statement answers a Summed count(*) request: asked
// for every route row of the table in the range (as partition discovery finds them), one
// statement without keys; asked for fewer, or for a bucket without a route row beside them,
// that statement and then the keyed one, which counts the asked buckets alone. Every answer
// is checked against the records appended.
func TestSummedCountStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &argRecorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var routed []routing.BucketID
	want := map[string]int64{}
	for pi, pk := range []string{"p", "q", "r"} {
		for m := range 3 {
			b := routing.BucketFor("t", []byte(pk), routing.CalendarMonthUTC, start.AddDate(0, m, 0))
			recs := make([]routing.Record, 10*(pi+1)+m)
			for i := range recs {
				recs[i] = routing.Record{PartitionKey: []byte(pk), EventTime: b.Start.Add(time.Duration(i) * time.Hour),
					SortKey: []byte(fmt.Sprintf("k%05d", i)), Value: []byte("{}")}
			}
			if err := s.Append(ctx, b, recs); err != nil {
				t.Fatal(err)
			}
			routed = append(routed, b)
			want[pk+b.Key] = int64(len(recs))
		}
	}
	never := routing.BucketFor("t", []byte("s"), routing.CalendarMonthUTC, start)
	q := routing.RowAggregate{Range: routing.TimeRange{Start: start, End: start.AddDate(0, 3, 0)}, Summed: true,
		Measures: []routing.RowMeasure{{Func: routing.RowCountStar}},
		Schema:   arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)}
	for _, c := range []struct {
		name  string
		bs    []routing.BucketID
		keyed bool
	}{
		{"every route row", routed, false},
		{"all but one", routed[1:], true},
		{"a bucket without a route row beside every route row", append([]routing.BucketID{never}, routed...), true},
	} {
		rec.take()
		as, err := s.AggregateRows(ctx, c.bs, q)
		if err != nil || len(as) != len(c.bs) {
			t.Fatalf("%s: %+v %v", c.name, as, err)
		}
		var got, w int64
		for i, a := range as {
			w += want[string(c.bs[i].PartitionKey)+c.bs[i].Key]
			if a.Reader == nil {
				continue
			}
			for a.Reader.Next() {
				got += a.Reader.RecordBatch().Column(0).(*array.Int64).Value(0)
			}
			a.Reader.Release()
		}
		if got != w {
			t.Fatalf("%s: %d records, want %d", c.name, got, w)
		}
		sqls, _ := rec.take()
		var keyed, keyless int
		for _, sql := range sqls {
			switch {
			case strings.Contains(sql, "unnest("):
				keyed++
			case strings.HasPrefix(sql, "WITH route AS"):
				keyless++
			}
		}
		if keyless != 1 || keyed != map[bool]int{false: 0, true: 1}[c.keyed] {
			t.Fatalf("%s: %d statements without keys and %d with, want 1 and keyed=%t: %q", c.name, keyless, keyed, c.keyed, sqls)
		}
	}
}
