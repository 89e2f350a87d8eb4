package query_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
)

// TestAnalyticalMode: a read without a partition pin is refused outside the analytical mode
// (naming how to enable it), and inside it reads every partition of its range that the
// stores' route rows list (hot and archived buckets), with the brute-force answer, pushdown on
// and off; EXPLAIN shows the mode and the partitions discovered; the per-query limits bound it.
func TestAnalyticalMode(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "mixed", true)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	on, off := f.engines(t, alloc, nil)
	analytical := session.With(context.Background(), session.Settings{Analytical: true})
	r := routing.TimeRange{Start: engDay0.AddDate(0, 0, 3), End: engDay0.AddDate(0, 0, 33)}
	where := fmt.Sprintf(" WHERE timestamp >= %s AND timestamp < %s", engLit(r.Start), engLit(r.End))

	// The brute force: per channel of the messages table, its count and first record.
	perChannel := map[string]int64{}
	var inRange []routing.Record
	for _, rec := range f.recs {
		pk := string(rec.PartitionKey)
		if pk == "ORD" || rec.EventTime.Before(r.Start) || !rec.EventTime.Before(r.End) {
			continue // flights, or outside the range
		}
		perChannel[pk]++
		inRange = append(inRange, rec)
	}
	if len(perChannel) != 2 {
		t.Fatalf("fixture: channels %v, want general and random", perChannel)
	}
	slices.SortFunc(inRange, func(a, b routing.Record) int {
		return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey)
	})

	for name, e := range map[string]*query.Engine{"pushdown on": on, "pushdown off": off} {
		sql := "SELECT channel_id, count(*) FROM messages" + where + " GROUP BY 1 ORDER BY 1"
		_, err := engRun(t, e, alloc, sql, nil)
		if st, _ := status.FromError(wire(err)); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "session option analytical = on") {
			t.Fatalf("%s: outside the analytical mode: %v", name, err)
		}
		if _, _, err := e.Prepare(context.Background(), sql, nil); status.Code(wire(err)) != codes.InvalidArgument {
			t.Fatalf("%s: Prepare outside the analytical mode: %v", name, err)
		}
		if _, _, err := e.Prepare(analytical, sql, nil); err != nil {
			t.Fatalf("%s: Prepare in the analytical mode: %v", name, err)
		}
		got, err := engRunCtx(analytical, t, e, alloc, sql, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, name+": per channel", got.rows, [][]any{{"general", perChannel["general"]}, {"random", perChannel["random"]}})

		got, err = engRunCtx(analytical, t, e, alloc, "SELECT count(*) FROM messages"+where, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, name+": count", got.rows, [][]any{{int64(len(inRange))}})

		// The ordered merge of two partitions by (timestamp, id).
		got, err = engRunCtx(analytical, t, e, alloc, "SELECT channel_id, timestamp, id FROM messages"+where+" ORDER BY timestamp, id LIMIT 25", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, name+": ordered", got.rows, engProject(inRange[:25], "channel_id", "timestamp", "id"))

		// A range no route row intersects: no partition, no fragment, the empty answers.
		empty := " WHERE timestamp >= '2030-01-01T00:00:00Z' AND timestamp < '2030-02-01T00:00:00Z'"
		got, err = engRunCtx(analytical, t, e, alloc, "SELECT count(*), max(timestamp) FROM messages"+empty, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, name+": nothing discovered", got.rows, [][]any{{int64(0), nil}})
		got, err = engRunCtx(analytical, t, e, alloc, "SELECT id FROM messages"+empty, nil, nil)
		if err != nil || len(got.rows) != 0 {
			t.Fatalf("%s: rows of an empty range: %v %v", name, got.rows, err)
		}

		got, err = engRunCtx(analytical, t, e, alloc, "EXPLAIN SELECT count(*) FROM messages"+where, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, row := range got.rows {
			lines = append(lines, row[0].(string))
		}
		text := strings.Join(lines, "\n")
		for _, want := range []string{
			"analytical mode: no partition pinned, 2 partition(s) of the range discovered from the stores' route rows",
			"fan-out: 60 fragment(s)",
		} {
			if !strings.Contains(text, want) {
				t.Fatalf("%s: EXPLAIN lacks %q:\n%s", name, want, text)
			}
		}
		if strings.Contains(text, "general") || strings.Contains(text, "random") {
			t.Fatalf("%s: EXPLAIN shows a partition value:\n%s", name, text)
		}
	}

	// The limits: partitions discovered, and partitions × buckets.
	few, _ := f.enginesWith(t, alloc, nil, query.Options{AnalyticalMaxPartitions: 1})
	_, err := engRunCtx(analytical, t, few, alloc, "SELECT count(*) FROM messages"+where, nil, nil)
	if st, _ := status.FromError(wire(err)); st.Code() != codes.ResourceExhausted || st.Message() != "the analytical read of messages finds more than 1 partitions in its range, this server's limit (--analytical-max-partitions): narrow the range or pin the partitions" {
		t.Fatalf("over the analytical partition limit: %v", err)
	}
	small, _ := f.enginesWith(t, alloc, nil, query.Options{MaxBuckets: 59})
	_, err = engRunCtx(analytical, t, small, alloc, "SELECT count(*) FROM messages"+where, nil, nil)
	if st, _ := status.FromError(wire(err)); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "60 buckets") {
		t.Fatalf("over the bucket limit: %v", err)
	}
	alloc.AssertSize(t, 0)
}

// TestCurrentUser: current_user, session_user, user and current_role answer the session's
// authenticated user, and "flightsrv" without authentication.
func TestCurrentUser(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "hot", false)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	on, _ := f.engines(t, alloc, nil)
	const sql = "SELECT current_user, session_user, user, current_role"
	for _, c := range []struct {
		user, want string
	}{{"", "flightsrv"}, {"alice", "alice"}, {"bob", "bob"}} {
		ctx := session.With(context.Background(), session.Settings{User: c.user})
		got, err := engRunCtx(ctx, t, on, alloc, sql, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, "user "+c.user, got.rows, [][]any{{c.want, c.want, c.want, c.want}})
	}
}

// TestMaxPartitionsOption: Options.MaxPartitions bounds the partitions a read lists, at
// prepare and at execution, both below and above the default of 64.
func TestMaxPartitionsOption(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "hot", false)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	in := func(n int) string {
		vals := []string{"'general'", "'random'"}
		for i := len(vals); i < n; i++ {
			vals = append(vals, fmt.Sprintf("'c%03d'", i))
		}
		return fmt.Sprintf("SELECT count(*) FROM messages WHERE channel_id IN (%s) AND timestamp >= '2025-03-01T00:00:00Z' AND timestamp < '2025-03-03T00:00:00Z'", strings.Join(vals, ", "))
	}
	var want int64
	for _, rec := range f.recs {
		if string(rec.PartitionKey) != "ORD" && rec.EventTime.Before(engDay0.AddDate(0, 0, 2)) {
			want++
		}
	}
	for _, c := range []struct {
		limit, n int
		ok       bool
	}{{3, 3, true}, {3, 4, false}, {100, 80, true}, {100, 101, false}, {0, 64, true}, {0, 65, false}} {
		e, _ := f.enginesWith(t, alloc, nil, query.Options{MaxPartitions: c.limit})
		if _, _, err := e.Prepare(context.Background(), in(c.n), nil); (err == nil) != c.ok {
			t.Fatalf("limit %d, %d partitions: Prepare %v", c.limit, c.n, err)
		}
		got, err := engRun(t, e, alloc, in(c.n), nil)
		if !c.ok {
			limit := c.limit
			if limit == 0 {
				limit = 64
			}
			if st, _ := status.FromError(wire(err)); st.Code() != codes.InvalidArgument || st.Message() != fmt.Sprintf("messages lists %d partitions, more than this server's limit of %d (--max-partitions): list fewer or split the query", c.n, limit) {
				t.Fatalf("limit %d, %d partitions: %v", c.limit, c.n, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, fmt.Sprintf("limit %d, %d partitions", c.limit, c.n), got.rows, [][]any{{want}})
	}
}

// discoveryCounter counts the hot store's partition discoveries.
type discoveryCounter struct {
	routing.HotStore
	n atomic.Int64
}

func (d *discoveryCounter) Partitions(ctx context.Context, tableID string, s routing.Strategy, r routing.TimeRange, limit int) ([]routing.Partition, error) {
	d.n.Add(1)
	return d.HotStore.Partitions(ctx, tableID, s, r, limit)
}

// TestOneDiscoveryPerQuery: an analytical query's GetFlightInfo (Fragments) discovers its
// partitions once and its DoGet (ExecuteFragment of the ticket's spec) reuses them, with the
// answer of a whole execution; the next logical query (another planning instant) discovers
// again, so a partition written since is found; a statement run without a planning instant
// (Execute) discovers per call.
func TestOneDiscoveryPerQuery(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "mixed", true)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	hot := &discoveryCounter{HotStore: f.store}
	on, _ := f.engines(t, alloc, hot)
	ctx := session.With(context.Background(), session.Settings{Analytical: true})
	r := routing.TimeRange{Start: engDay0.AddDate(0, 0, 3), End: engDay0.AddDate(0, 0, 33)}
	sql := fmt.Sprintf("SELECT channel_id, count(*) FROM messages WHERE timestamp >= %s AND timestamp < %s GROUP BY 1 ORDER BY 1", engLit(r.Start), engLit(r.End))

	want, err := engRunCtx(ctx, t, on, alloc, sql, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := hot.n.Load(); n != 1 {
		t.Fatalf("Execute discovered %d times, want 1", n)
	}
	for q := range 2 {
		hot.n.Store(0)
		frags, err := on.Fragments(ctx, sql, nil, nil, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frags {
			got, err := engRunFragment(ctx, t, on, alloc, sql, nil, fr.Spec)
			if err != nil {
				t.Fatal(err)
			}
			engSameRows(t, "the fragment's answer", got.rows, want.rows)
		}
		if n := hot.n.Load(); n != 1 {
			t.Fatalf("logical query %d: %d discoveries for its GetFlightInfo and %d DoGet(s), want 1", q, n, len(frags))
		}
	}
	alloc.AssertSize(t, 0)
}
