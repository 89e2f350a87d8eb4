package telemetry

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// handoff is the span processor in front of the SDK's batch span processor when traces are
// exported: it gathers ended spans and passes them on a batch at a time — as soon as it holds
// an export batch (exportBatchSpans), or, once the first span it holds has waited the
// schedule delay (OTEL_BSP_SCHEDULE_DELAY, 5 s by default, as the SDK reads it), all it
// holds followed by a flush of the batch processor, so that a span still leaves within the
// schedule delay of its end.
//
// Why: the SDK's batch span processor sends every ended span over a channel to its export
// goroutine, which sleeps between spans, so each of a query's 14 spans woke it (and the Go
// runtime, finding an idle processor, a thread to run it, which spins for more work before it
// sleeps again); handed over a batch at a time, it wakes once a batch. What that saves is
// within the noise of a shared 2-core machine: bench/doc.go, BenchmarkOTLPExport.
//
// Safe for concurrent use; OnEnd takes a mutex and appends, and hands over outside it.
type handoff struct {
	next  sdktrace.SpanProcessor
	size  int
	delay time.Duration

	mu      sync.Mutex
	spans   []sdktrace.ReadOnlySpan
	timer   *time.Timer // calls expire; pending while armed
	armed   bool
	stopped bool
}

// newHandoff returns a handoff to next of batches of size spans, held at most delay.
func newHandoff(next sdktrace.SpanProcessor, size int, delay time.Duration) *handoff {
	h := &handoff{next: next, size: max(1, size), delay: delay}
	h.timer = time.AfterFunc(time.Hour, h.expire)
	h.timer.Stop()
	return h
}

// OnStart passes s to the batch processor (which does nothing with it).
func (h *handoff) OnStart(parent context.Context, s sdktrace.ReadWriteSpan) {
	h.next.OnStart(parent, s)
}

// OnEnd holds s, and hands the spans held over when they fill an export batch; once the
// processor is shut down, it passes s on at once (the batch processor then drops it). Spans
// that are not sampled are dropped, as the batch processor would.
func (h *handoff) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		h.next.OnEnd(s)
		return
	}
	h.spans = append(h.spans, s)
	var full []sdktrace.ReadOnlySpan
	if len(h.spans) >= h.size {
		full = h.take()
	} else if !h.armed {
		h.armed = true
		h.timer.Reset(h.delay)
	}
	h.mu.Unlock()
	h.pass(full)
}

// take returns the spans held, leaving none and the timer stopped; h.mu is held.
func (h *handoff) take() []sdktrace.ReadOnlySpan {
	spans := h.spans
	h.spans = make([]sdktrace.ReadOnlySpan, 0, h.size)
	if h.armed {
		h.timer.Stop()
		h.armed = false
	}
	return spans
}

// pass hands spans to the batch processor.
func (h *handoff) pass(spans []sdktrace.ReadOnlySpan) {
	for _, s := range spans {
		h.next.OnEnd(s)
	}
}

// expire hands over what the schedule delay has held and flushes the batch processor (the
// timer's goroutine runs it; export errors go to the OpenTelemetry error handler, which
// Setup makes a rate-limited log line).
func (h *handoff) expire() {
	h.mu.Lock()
	spans := h.take()
	h.mu.Unlock()
	if len(spans) == 0 {
		return
	}
	h.pass(spans)
	if err := h.next.ForceFlush(context.Background()); err != nil {
		otel.Handle(err)
	}
}

// ForceFlush hands over every span held and flushes the batch processor.
func (h *handoff) ForceFlush(ctx context.Context) error {
	h.mu.Lock()
	spans := h.take()
	h.mu.Unlock()
	h.pass(spans)
	return h.next.ForceFlush(ctx)
}

// Shutdown hands over every span held and shuts the batch processor down (exporting them).
func (h *handoff) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	spans := h.take()
	h.stopped = true
	h.mu.Unlock()
	h.pass(spans)
	return h.next.Shutdown(ctx)
}

// scheduleDelay is OTEL_BSP_SCHEDULE_DELAY (milliseconds), or the SDK's default of 5 s when
// it is unset or not a number of milliseconds at least 0.
func scheduleDelay() time.Duration {
	if ms, err := strconv.Atoi(strings.TrimSpace(os.Getenv("OTEL_BSP_SCHEDULE_DELAY"))); err == nil && ms >= 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return sdktrace.DefaultScheduleDelay * time.Millisecond
}

// exportBatchSpans is the batch span processor's export batch size: OTEL_BSP_MAX_EXPORT_BATCH_SIZE
// when it is a positive number, else DefaultExportBatchSpans (batchOptions), in either case at
// most a positive OTEL_BSP_MAX_QUEUE_SIZE (or the SDK's default queue of 2048): a batch handed
// over fits in the processor's queue when that is empty.
func exportBatchSpans() int {
	n := DefaultExportBatchSpans
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"))); err == nil && v > 0 {
		n = v
	}
	q := sdktrace.DefaultMaxQueueSize
	if v, err := strconv.Atoi(strings.TrimSpace(os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE"))); err == nil && v > 0 {
		q = v
	}
	return min(n, q)
}
