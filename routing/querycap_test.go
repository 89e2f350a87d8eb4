package routing

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// openStore is a HotStore fake whose ScanRange readers stay open (one batch-less stream)
// until released, counting the connections they hold; Append counts its calls.
type openStore struct {
	HotStore
	open    atomic.Int64
	appends atomic.Int64
}

type openReader struct {
	array.RecordReader
	s    *openStore
	done bool
}

func (r *openReader) Ordered() bool { return true }
func (r *openReader) Next() bool {
	r.end()
	return false
}
func (r *openReader) Release() { r.end() }
func (r *openReader) end() {
	if !r.done {
		r.done = true
		r.s.open.Add(-1)
	}
}

func (s *openStore) ScanRange(context.Context, BucketID, BatchRequest) (Route, BatchReader, error) {
	s.open.Add(1)
	rdr, _ := array.NewRecordReader(arrow.NewSchema(nil, nil), nil)
	return Route{State: StateHot}, &openReader{RecordReader: rdr, s: s}, nil
}

func (s *openStore) Route(context.Context, BucketID) (Route, error) {
	return Route{State: StateHot}, nil
}

func (s *openStore) Append(context.Context, BucketID, []Record) error {
	s.appends.Add(1)
	return nil
}

// TestCappedHotStore: query reads share at most the cap; a read beyond it waits its bound and
// fails with a ConnectionsBusyError (ErrUnavailable, naming the flag), or with its caller's
// context error when cancelled; appends pass while the cap is saturated; a reader gives its
// permit back when it ends or is released, once.
func TestCappedHotStore(t *testing.T) {
	fake := &openStore{}
	c := NewCappedHotStore(fake, 2, 50*time.Millisecond)
	ctx := context.Background()
	var held []BatchReader
	for range 2 {
		_, r, err := c.ScanRange(ctx, BucketID{}, BatchRequest{})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, r)
	}
	if c.InUse() != 2 || fake.open.Load() != 2 {
		t.Fatalf("in use %d, open %d", c.InUse(), fake.open.Load())
	}
	_, _, err := c.ScanRange(ctx, BucketID{}, BatchRequest{})
	var busy *ConnectionsBusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrUnavailable) || busy.Limit != 2 || busy.Wait <= 0 {
		t.Fatalf("read beyond the cap: %v", err)
	}
	if _, err := c.Route(ctx, BucketID{}); !errors.As(err, &busy) {
		t.Fatalf("route beyond the cap: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Route(cctx, BucketID{}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("cancelled caller: %v", err)
	}
	if err := c.Append(ctx, BucketID{}, nil); err != nil || fake.appends.Load() != 1 {
		t.Fatalf("append while saturated: %v", err)
	}
	// The first reader ends (Next false) and is released after: one permit back.
	if held[0].Next() {
		t.Fatal("a batch")
	}
	held[0].Release()
	if c.InUse() != 1 {
		t.Fatalf("in use %d after one reader ended", c.InUse())
	}
	if _, err := c.Route(ctx, BucketID{}); err != nil || c.InUse() != 1 {
		t.Fatalf("route with a free permit: %v (in use %d)", err, c.InUse())
	}
	held[1].Release()
	if c.InUse() != 0 || fake.open.Load() != 0 {
		t.Fatalf("in use %d, open %d after releasing every reader", c.InUse(), fake.open.Load())
	}
}
