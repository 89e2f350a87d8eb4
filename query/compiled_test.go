package query

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/substrait"
)

// dayMessages returns a messages table of day buckets over a new SQLite store (closed at the
// test's end), its clock two days after the day it returns (2025-03-01, UTC).
func dayMessages(t *testing.T) (*routing.DurableTable, time.Time) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	def := routing.TableDef{Name: "messages", TableID: "m", PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 1000}
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return day.AddDate(0, 0, 2) }})
	if err != nil {
		t.Fatal(err)
	}
	return tbl, day
}

// TestCompiledStatementsStayCurrent: a statement without parameters is compiled once and its
// compiled form kept in the statement cache, yet every execution reads the stores as they are
// then (rows appended between executions are counted and returned); statements with bound
// parameters and statements over more than compiledMaxBuckets buckets are compiled per call.
func TestCompiledStatementsStayCurrent(t *testing.T) {
	ctx := context.Background()
	tbl, day := dayMessages(t)
	k := 0
	add := func(n int) {
		t.Helper()
		recs := make([]routing.Record, n)
		for i := range recs {
			k++
			recs[i] = routing.Record{PartitionKey: []byte("c"), EventTime: day.Add(time.Duration(k) * 2 * time.Hour), SortKey: fmt.Appendf(nil, "%04d", k), Value: []byte("v")}
		}
		if _, err := tbl.Append(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, pushdown := range []bool{true, false} {
		e, err := New([]*routing.DurableTable{tbl}, Options{Pushdown: pushdown, Alloc: mem})
		if err != nil {
			t.Fatal(err)
		}
		where := "channel_id = 'c' AND timestamp >= '2025-03-01T00:00:00Z' AND timestamp < '2025-03-03T00:00:00Z'"
		count := "SELECT count(*) FROM messages WHERE " + where
		ids := "SELECT id FROM messages WHERE " + where + " ORDER BY timestamp, id"
		// run executes sql and returns its first column as strings.
		run := func(sql string, params arrow.RecordBatch) []string {
			t.Helper()
			r, err := e.Execute(ctx, sql, nil, params)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			var out []string
			for r.Next() {
				c := r.RecordBatch().Column(0)
				for i := range c.Len() {
					out = append(out, c.ValueStr(i))
				}
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		compiledOf := func(sql string) *compiled {
			ent, err := e.stmts.entry(sql, e.cat, substrait.BindOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return ent.exec.Load()
		}
		want := k + 3
		add(3)
		if got := run(count, nil); len(got) != 1 || got[0] != fmt.Sprint(want) {
			t.Fatalf("pushdown=%v: count %v, want %d", pushdown, got, want)
		}
		if got := run(ids, nil); len(got) != want {
			t.Fatalf("pushdown=%v: %d ids, want %d", pushdown, len(got), want)
		}
		c1, i1 := compiledOf(count), compiledOf(ids)
		if c1 == nil || i1 == nil {
			t.Fatalf("pushdown=%v: statements without parameters were not kept compiled", pushdown)
		}
		add(2)
		want += 2
		if got := run(count, nil); len(got) != 1 || got[0] != fmt.Sprint(want) {
			t.Fatalf("pushdown=%v: count after appending %v, want %d", pushdown, got, want)
		}
		if got := run(ids, nil); len(got) != want || got[want-1] != fmt.Sprintf("%04d", k) {
			t.Fatalf("pushdown=%v: ids after appending %v, want %d ending with %04d", pushdown, got, want, k)
		}
		if compiledOf(count) != c1 || compiledOf(ids) != i1 {
			t.Fatalf("pushdown=%v: compiled again", pushdown)
		}

		// Bound parameters: compiled per call.
		param := "SELECT count(*) FROM messages WHERE channel_id = $1 AND timestamp >= '2025-03-01T00:00:00Z' AND timestamp < '2025-03-03T00:00:00Z'"
		b := array.NewStringBuilder(mem)
		b.Append("c")
		col := b.NewArray()
		b.Release()
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}}, nil), []arrow.Array{col}, 1)
		col.Release()
		if got := run(param, rec); len(got) != 1 || got[0] != fmt.Sprint(want) {
			t.Fatalf("pushdown=%v: bound count %v, want %d", pushdown, got, want)
		}
		rec.Release()
		if compiledOf(param) != nil {
			t.Fatalf("pushdown=%v: a statement with bound parameters was kept compiled", pushdown)
		}
		// Wider than compiledMaxBuckets: compiled per call.
		wide := fmt.Sprintf("SELECT count(*) FROM messages WHERE channel_id = 'c' AND timestamp >= '2025-03-01T00:00:00Z' AND timestamp < '%s'",
			day.AddDate(0, 0, compiledMaxBuckets+1).Format(time.RFC3339))
		if got := run(wide, nil); len(got) != 1 || got[0] != fmt.Sprint(want) {
			t.Fatalf("pushdown=%v: wide count %v, want %d", pushdown, got, want)
		}
		if compiledOf(wide) != nil {
			t.Fatalf("pushdown=%v: a statement over %d buckets was kept compiled", pushdown, compiledMaxBuckets+1)
		}
	}
}

// TestBoundStatementsShared: an analytical statement without parameters is bound once and its
// binding kept in the statement cache (stmtEntry.bind), yet every execution discovers the
// partitions as they are then (a partition appended between executions is counted), and the
// kept binding is shared by concurrent executions and plannings (run with -race); a statement
// whose binding reads the clock is bound per call.
func TestBoundStatementsShared(t *testing.T) {
	ctx := context.Background()
	tbl, day := dayMessages(t)
	k := 0
	add := func(channel string, n int) {
		t.Helper()
		recs := make([]routing.Record, n)
		for i := range recs {
			k++
			recs[i] = routing.Record{PartitionKey: []byte(channel), EventTime: day.Add(time.Duration(k) * time.Hour), SortKey: fmt.Appendf(nil, "%04d", k), Value: []byte("v")}
		}
		if _, err := tbl.Append(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	add("a", 5)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e, err := New([]*routing.DurableTable{tbl}, Options{Pushdown: true, Alloc: mem})
	if err != nil {
		t.Fatal(err)
	}
	actx := session.With(ctx, session.Settings{Analytical: true})
	count := "SELECT count(*) FROM messages WHERE timestamp >= '2025-03-01T00:00:00Z' AND timestamp < '2025-03-03T00:00:00Z'"
	run := func(sql string) (string, error) {
		if _, err := e.Fragments(actx, sql, nil, nil, true); err != nil {
			return "", err
		}
		r, err := e.Execute(actx, sql, nil, nil)
		if err != nil {
			return "", err
		}
		defer r.Release()
		var out string
		for r.Next() {
			out += r.RecordBatch().Column(0).ValueStr(0)
		}
		return out, r.Err()
	}
	if got, err := run(count); err != nil || got != "5" {
		t.Fatalf("count = %q, %v; want 5", got, err)
	}
	ent, err := e.stmts.entry(count, e.cat, e.bindOptions(actx))
	if err != nil {
		t.Fatal(err)
	}
	if ent.bound.Load() == nil {
		t.Fatal("the analytical statement's binding was not kept")
	}
	add("b", 3) // a partition the first execution did not discover
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if got, err := run(count); err != nil || got != "8" {
					errs <- fmt.Errorf("count = %q, %v; want 8", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	clock := "SELECT count(*) FROM messages WHERE timestamp >= '2025-03-01T00:00:00Z' AND timestamp < now()"
	if _, err := run(clock); err != nil {
		t.Fatal(err)
	}
	if ent, err := e.stmts.entry(clock, e.cat, e.bindOptions(actx)); err != nil || ent.bound.Load() != nil {
		t.Fatalf("a statement reading the clock kept its binding (%v)", err)
	}
}
