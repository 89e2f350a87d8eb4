package telemetry

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// flushCounter is a span recorder that also counts its ForceFlush calls.
type flushCounter struct {
	*tracetest.SpanRecorder
	mu      sync.Mutex
	flushes int
}

func (f *flushCounter) ForceFlush(ctx context.Context) error {
	f.mu.Lock()
	f.flushes++
	f.mu.Unlock()
	return f.SpanRecorder.ForceFlush(ctx)
}

func (f *flushCounter) flushed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.flushes
}

// TestHandoff: ended spans reach the next processor only a batch at a time; fewer than a
// batch wait at most the delay and are then handed over with a flush; spans not sampled are
// dropped; ForceFlush and Shutdown hand over what is held; spans ended from many goroutines
// all arrive, once each.
func TestHandoff(t *testing.T) {
	next := &flushCounter{SpanRecorder: tracetest.NewSpanRecorder()}
	h := newHandoff(next, 3, 50*time.Millisecond)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h))
	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(h))
	tr := tp.Tracer("test")
	end := func(n int) {
		for range n {
			_, s := tr.Start(context.Background(), "s")
			s.End()
		}
	}
	ended := func() int { return len(next.Ended()) }

	end(2)
	if n := ended(); n != 0 {
		t.Fatalf("%d spans handed over before a batch of 3 filled", n)
	}
	end(1)
	if n := ended(); n != 3 {
		t.Fatalf("%d spans handed over once a batch of 3 filled, want 3", n)
	}
	_, s := never.Tracer("test").Start(context.Background(), "unsampled")
	s.End()
	end(1)
	if n := ended(); n != 3 {
		t.Fatalf("%d spans handed over with one held", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ended() != 4 || next.flushed() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the delay: %d spans handed over (want 4, the unsampled one dropped), %d flushes", ended(), next.flushed())
		}
		time.Sleep(5 * time.Millisecond)
	}

	end(2)
	if err := h.ForceFlush(context.Background()); err != nil || ended() != 6 {
		t.Fatalf("ForceFlush: %v, %d spans handed over, want 6", err, ended())
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { end(100) })
	}
	wg.Wait()
	end(1)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := ended(); n != 6+800+1 {
		t.Fatalf("%d spans handed over by Shutdown, want %d", n, 6+800+1)
	}
	seen := map[string]bool{}
	for _, s := range next.Ended() {
		id := s.SpanContext().SpanID().String()
		if seen[id] {
			t.Fatalf("span %s handed over twice", id)
		}
		seen[id] = true
	}
}
