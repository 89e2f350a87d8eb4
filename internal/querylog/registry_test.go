package querylog

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestRegistryListsAndCancels: running query calls are listed oldest first, then the ended
// ones newest first, at most RecentQueries of them; calls without a statement kind are not
// queries and are not listed; Cancel cancels every running call of one query id, with the
// CANCELLED cause, and nothing else.
func TestRegistryListsAndCancels(t *testing.T) {
	g := NewRegistry()
	start := func(id, stmt string) (*Record, context.Context) {
		r := newRecord()
		r.adoptID(id)
		r.SetStatement(stmt)
		ctx, cancel := context.WithCancelCause(context.Background())
		g.start(r, "DoGet", cancel)
		return r, ctx
	}
	a1, ctxA1 := start("a", "SELECT")
	a2, ctxA2 := start("a", "SELECT")
	_, ctxB := start("b", "SELECT")
	meta, _ := start("m", "")
	if n := len(g.Queries()); n != 3 {
		t.Fatalf("%d calls listed, want the 3 query calls", n)
	}
	if n := g.Cancel("a"); n != 2 {
		t.Fatalf("Cancel(a) cancelled %d calls, want 2", n)
	}
	for _, ctx := range []context.Context{ctxA1, ctxA2} {
		if !errors.Is(context.Cause(ctx), errCancelQuery) {
			t.Fatalf("cause %v", context.Cause(ctx))
		}
	}
	if ctxB.Err() != nil {
		t.Fatal("Cancel(a) cancelled b")
	}
	g.end(a1, codes.Canceled, time.Now())
	g.end(a2, codes.OK, time.Now())
	g.end(meta, codes.OK, time.Now())
	qs := g.Queries()
	if len(qs) != 3 || qs[0].ID != "b" || qs[0].State != StateRunning || qs[1].State != StateFinished || qs[2].State != StateFailed || qs[2].Code != "Canceled" {
		t.Fatalf("listing %+v", qs)
	}
	for i := 0; i < RecentQueries+5; i++ {
		r, _ := start(fmt.Sprint(i), "SELECT")
		g.end(r, codes.OK, time.Now())
	}
	qs = g.Queries()
	if len(qs) != 1+RecentQueries || qs[1].ID != fmt.Sprint(RecentQueries+4) || qs[len(qs)-1].ID != "5" {
		t.Fatalf("%d listed, newest %s, oldest %s", len(qs), qs[1].ID, qs[len(qs)-1].ID)
	}
}
