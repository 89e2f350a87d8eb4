package query

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/flightsrv/flightsrv/substrait"
)

// statementCacheEntries bounds the prepared statements kept per engine, and
// statementCacheBytes the bytes of their texts: a prepared statement keeps about 160 bytes of
// heap per byte of its text (a 12 KB select list of 3,000 columns keeps 1.9 MB), and its kept
// binding (stmtEntry.bound) about as much again, so 1,024 entries of any size could hold
// gigabytes, while 512 KiB of text holds some 160 MB at most and a thousand ordinary
// statements. Statements of bigStatement bytes or more are never kept: they are prepared per
// call.
const (
	statementCacheEntries = 1024
	statementCacheBytes   = 512 << 10
)

// stmtCache keeps recently prepared SQL statements by their text, so that the GetFlightInfo
// and the DoGet of one query (and repeated queries) parse the SQL once: parsing with the
// PostgreSQL grammar is a large part of a pushed-down aggregate's cost. Statements are
// immutable and safe to share (substrait.Statement); only successful preparations are kept.
// Safe for concurrent use; least recently used entries are evicted first. An entry also keeps
// the statement compiled for execution once it has run (see compiled), so a repeated
// statement without parameters is neither bound, planned nor lowered again, neither by
// GetFlightInfo (Engine.Fragments) nor by DoGet (Engine.Execute).
type stmtCache struct {
	mu       sync.Mutex
	max      int
	maxBytes int        // bound on the bytes of the keys kept
	bytes    int        // bytes of the keys kept
	order    *list.List // of *stmtEntry, most recent first
	bySQL    map[string]*list.Element
}

type stmtEntry struct {
	key string // the SQL text, prefixed when analytical (see entry)
	st  *substrait.Statement
	// bound is the statement bound without parameters, once a binding read neither the
	// clock nor the user (substrait.Bound.Volatile): set once, then read-only and shared
	// (bind). An analytical statement is never kept compiled (its partitions are discovered
	// per call), so this spares its GetFlightInfo and its DoGet the binding (issue 19: about
	// half a millisecond each for a count over every partition).
	bound atomic.Pointer[substrait.Bound]
	// exec is the statement compiled for execution (nil until its first execution, and
	// always nil for statements that are not cached compiled): set once, then read-only.
	exec atomic.Pointer[compiled]
}

// bind returns the entry's statement bound without parameters under opts: the binding kept
// by an earlier call, else a new one, kept when it reads tables and read neither the clock
// nor the user (opts' other fields are the engine's own, or the entry's key: Analytical).
// The result is shared: read-only. Errors are BindGeneral's.
func (ent *stmtEntry) bind(opts substrait.BindOptions) (*substrait.Bound, error) {
	if b := ent.bound.Load(); b != nil {
		return b, nil
	}
	b, err := ent.st.BindGeneral(opts)
	if err == nil && !b.Volatile && b.Plan != nil {
		// A table-less statement (constants, SHOW) is cheap to bind and its binding does
		// not say whether it read the clock or the user.
		ent.bound.Store(b)
	}
	return b, err
}

// Planning a statement takes memory in proportion to its text — the parse tree of a 200 KB
// select list of 50,000 columns is about 30 MB of Go heap before the binder can refuse it —
// so statements of at least bigStatement bytes are planned under a process-wide weighted
// semaphore of planningBytes, each weighing its length (at most planningBytes): a few large
// statements planned at once cannot take the process past its memory, whatever their number.
// Smaller statements never wait.
const (
	bigStatement  = 16 << 10
	planningBytes = 256 << 10
)

var planning = semaphore.NewWeighted(planningBytes)

// prepareBounded is substrait.PrepareWith, under the planning semaphore for big statements.
func prepareBounded(sql string, cat substrait.Catalog, opts substrait.BindOptions) (*substrait.Statement, error) {
	defer planningWeight(len(sql))()
	return substrait.PrepareWith(sql, cat, opts)
}

// planningWeight takes the planning semaphore's weight of a statement or plan of n bytes
// (nothing under bigStatement bytes) and returns its release. Planning is bounded CPU work (a
// statement or plan is at most a few MiB, gRPC's message bound): waiting for the ones ahead
// needs no cancellation.
func planningWeight(n int) (release func()) {
	if n < bigStatement {
		return func() {}
	}
	w := int64(min(n, planningBytes))
	_ = planning.Acquire(context.Background(), w) // fails only when ctx is done
	return func() { planning.Release(w) }
}

func newStmtCache(max int) *stmtCache {
	return &stmtCache{max: max, maxBytes: statementCacheBytes, order: list.New(), bySQL: map[string]*list.Element{}}
}

// prepare returns the cached statement for sql under opts, preparing and caching it on a miss.
func (c *stmtCache) prepare(sql string, cat substrait.Catalog, opts substrait.BindOptions) (*substrait.Statement, error) {
	ent, err := c.entry(sql, cat, opts)
	if err != nil {
		return nil, err
	}
	return ent.st, nil
}

// entry returns the cache entry of sql under opts, preparing and caching the statement on a
// miss. Statements are kept by their text and analytical mode (the only option that changes
// what a statement may read; the engine's partition bound is fixed, and the clock and the user
// are applied at bind time; only statements whose binding reads neither, and whose reads pin
// their partitions, are kept compiled: see Engine.Execute).
func (c *stmtCache) entry(sql string, cat substrait.Catalog, opts substrait.BindOptions) (*stmtEntry, error) {
	key := sql
	if opts.Analytical {
		key = "analytical\x00" + sql
	}
	c.mu.Lock()
	if el, ok := c.bySQL[key]; ok {
		c.order.MoveToFront(el)
		ent := el.Value.(*stmtEntry)
		c.mu.Unlock()
		return ent, nil
	}
	c.mu.Unlock()
	st, err := prepareBounded(sql, cat, opts)
	if err != nil {
		return nil, err
	}
	ent := &stmtEntry{key: key, st: st}
	if len(sql) >= bigStatement {
		return ent, nil // not kept (statementCacheBytes)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.bySQL[key]; ok {
		return el.Value.(*stmtEntry), nil
	}
	c.bySQL[key] = c.order.PushFront(ent)
	c.bytes += len(key)
	for c.order.Len() > c.max || c.bytes > c.maxBytes {
		last := c.order.Back()
		c.order.Remove(last)
		k := last.Value.(*stmtEntry).key
		delete(c.bySQL, k)
		c.bytes -= len(k)
	}
	return ent, nil
}
