package routing

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"golang.org/x/sync/semaphore"
)

// ConnectionsBusyError is the error of a query read that waited longer than its bound for one
// of the hot-store connections queries may use (CappedHotStore). It matches ErrUnavailable
// with errors.Is: the query may be retried. It carries the limit and the wait, nothing of the
// data; the protocol boundary (package flightsql) words it for the client.
type ConnectionsBusyError struct {
	Limit int           // connections queries may use together
	Wait  time.Duration // how long the read waited
}

func (e *ConnectionsBusyError) Error() string {
	return fmt.Sprintf("%s: all %d query connections stayed busy for %s", ErrUnavailable.Error(), e.Limit, e.Wait)
}

// Is reports whether target is ErrUnavailable.
func (e *ConnectionsBusyError) Is(target error) bool { return target == ErrUnavailable }

// CappedHotStore is a hot store as the query path sees it: its reads (ScanRange,
// AggregateRange, Route, Partitions) share at most Limit of the store's pooled
// connections, so that the rest of the pool stays free for appends and the archiver (the
// seed's fan-out section: bucket reads get the pool's capacity minus the writers' reserve).
// A read takes one permit before its statement and gives it back when the statement is done —
// for ScanRange, whose reader streams rows from an open statement, when the reader ends or is
// released. A read waits at most the wait bound for a permit (FIFO), then fails with a
// *ConnectionsBusyError (UNAVAILABLE to the client); a cancelled caller stops waiting with
// its context's error. Append passes through uncapped. Safe for concurrent use.
type CappedHotStore struct {
	HotStore
	limit int
	wait  time.Duration
	sem   *semaphore.Weighted
	inUse atomic.Int64
}

// NewCappedHotStore caps the query reads of hot at limit (≥ 1) connections, each waiting at
// most wait (> 0) for one.
func NewCappedHotStore(hot HotStore, limit int, wait time.Duration) *CappedHotStore {
	return &CappedHotStore{HotStore: hot, limit: limit, wait: wait, sem: semaphore.NewWeighted(int64(limit))}
}

// InUse returns the permits held now: query reads holding (or about to take) a connection.
func (c *CappedHotStore) InUse() int { return int(c.inUse.Load()) }

// Limit returns the cap.
func (c *CappedHotStore) Limit() int { return c.limit }

// acquire takes one permit and returns its release (call it once; later calls do nothing).
func (c *CappedHotStore) acquire(ctx context.Context) (func(), error) {
	wctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	if err := c.sem.Acquire(wctx, 1); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: wait for a hot-store connection: %w", ErrOperationFailed, ctx.Err())
		}
		return nil, &ConnectionsBusyError{Limit: c.limit, Wait: c.wait}
	}
	c.inUse.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.inUse.Add(-1)
			c.sem.Release(1)
		})
	}, nil
}

// AggregateRange is the hot store's, under one permit (its answer is read before it returns).
func (c *CappedHotStore) AggregateRange(ctx context.Context, b BucketID, req AggregateRequest) (Route, array.RecordReader, error) {
	release, err := c.acquire(ctx)
	if err != nil {
		return Route{}, nil, err
	}
	defer release()
	return c.HotStore.AggregateRange(ctx, b, req)
}

// Route is the hot store's, under one permit.
func (c *CappedHotStore) Route(ctx context.Context, b BucketID) (Route, error) {
	release, err := c.acquire(ctx)
	if err != nil {
		return Route{}, err
	}
	defer release()
	return c.HotStore.Route(ctx, b)
}

// Partitions is the hot store's, under one permit.
func (c *CappedHotStore) Partitions(ctx context.Context, tableID string, strategy Strategy, r TimeRange, limit int) ([]Partition, error) {
	release, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.HotStore.Partitions(ctx, tableID, strategy, r, limit)
}

// ScanRange is the hot store's, under one permit held until the reader ends or is released
// (or at once when there is no reader: an archived route).
func (c *CappedHotStore) ScanRange(ctx context.Context, b BucketID, req BatchRequest) (Route, BatchReader, error) {
	release, err := c.acquire(ctx)
	if err != nil {
		return Route{}, nil, err
	}
	route, rdr, err := c.HotStore.ScanRange(ctx, b, req)
	if err != nil || rdr == nil {
		release()
		return route, rdr, err
	}
	return route, &permitReader{BatchReader: rdr, release: release}, nil
}

// permitReader gives its read's permit back when it ends or is released.
type permitReader struct {
	BatchReader
	release func()
}

func (r *permitReader) Next() bool {
	if r.BatchReader.Next() {
		return true
	}
	r.release()
	return false
}

func (r *permitReader) Release() {
	r.BatchReader.Release()
	r.release()
}

var _ HotStore = (*CappedHotStore)(nil)

// AggregateRows is the hot store's row-aggregate port (RowAggregator) under one permit (its
// answers are read before it returns); ErrNoAggregate when the store has none.
func (c *CappedHotStore) AggregateRows(ctx context.Context, bs []BucketID, q RowAggregate) ([]RowAnswer, error) {
	ra, ok := c.HotStore.(RowAggregator)
	if !ok {
		return nil, ErrNoAggregate
	}
	release, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return ra.AggregateRows(ctx, bs, q)
}

// SumsCounts is the hot store's SummedCounter capability (false without one).
func (c *CappedHotStore) SumsCounts() bool {
	sc, ok := c.HotStore.(SummedCounter)
	return ok && sc.SumsCounts()
}
