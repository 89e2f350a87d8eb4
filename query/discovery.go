package query

import (
	"context"
	"sync"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// discoveryTTL is how long a logical query's discovered partitions are kept for its DoGets, and
// discoveryEntries how many logical queries' discoveries are kept at most (the oldest out first).
// A DoGet later than the TTL, or on a replica that did not plan the query, discovers again.
const (
	discoveryTTL     = time.Minute
	discoveryEntries = 64
)

// discoveryKey identifies one analytical read's discovery: the statement's planning instant
// (withClock: the GetFlightInfo's instant, which every ticket of the logical query carries),
// the table, the read's range (µs, UTC) and the partition bound asked for.
type discoveryKey struct {
	now        int64 // ns since the epoch
	table      string
	start, end int64
	limit      int
}

type discoveryEntry struct {
	parts []routing.Partition // read-only once kept
	at    time.Time
}

// discoveries keeps the partitions (and their buckets with a route row) that the analytical
// reads of recent logical queries discovered, so that a query's DoGet on the replica that
// planned it reuses what its GetFlightInfo found instead of asking the hot store again: one
// discovery statement per logical query (in bench's BenchmarkGroupedCount profile each one was
// about a sixth of the grouped pushdown's CPU over 229 partitions). Only statements bound under
// a planning instant (withClock) take part, so a discovery is never shared by two logical
// queries planned at different instants: what a query reads is what existed when it was
// planned, as its pins fix its archived generations. Safe for concurrent use.
type discoveries struct {
	mu      sync.Mutex
	entries map[discoveryKey]discoveryEntry
	order   []discoveryKey // insertion order, oldest first
}

// get returns the partitions kept for k, if any younger than discoveryTTL.
func (d *discoveries) get(k discoveryKey, now time.Time) ([]routing.Partition, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.entries[k]
	if !ok || now.Sub(e.at) > discoveryTTL {
		return nil, false
	}
	return e.parts, true
}

// put keeps parts for k, dropping the oldest entries beyond discoveryEntries. parts must not be
// modified afterwards.
func (d *discoveries) put(k discoveryKey, parts []routing.Partition, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = make(map[discoveryKey]discoveryEntry, discoveryEntries)
	}
	if _, ok := d.entries[k]; !ok {
		d.order = append(d.order, k)
	}
	d.entries[k] = discoveryEntry{parts: parts, at: now}
	for len(d.order) > discoveryEntries {
		delete(d.entries, d.order[0])
		d.order = d.order[1:]
	}
}

// partitions discovers the partitions of t in r, at most limit (<= 0: no bound; see
// routing.DurableTable.Partitions), or returns those the same logical query discovered before
// (ctx's planning instant, withClock). The result is read-only.
func (e *Engine) partitions(ctx context.Context, t *routing.DurableTable, r routing.TimeRange, limit int) ([]routing.Partition, error) {
	planned, ok := ctx.Value(clockKey{}).(time.Time)
	if !ok || planned.IsZero() {
		return t.Partitions(ctx, r, limit)
	}
	k := discoveryKey{now: planned.UnixNano(), table: t.Def().Name, start: r.Start.UnixMicro(), end: r.End.UnixMicro(), limit: limit}
	now := time.Now()
	if parts, ok := e.found.get(k, now); ok {
		return parts, nil
	}
	parts, err := t.Partitions(ctx, r, limit)
	if err != nil {
		return nil, err
	}
	e.found.put(k, parts, now)
	return parts, nil
}
