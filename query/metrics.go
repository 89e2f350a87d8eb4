package query

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// metrics are the aggregate-pushdown instruments of the seed's Observability section:
// a counter of pushed-down aggregates and a duration histogram, both labelled by source
// (hot | archive | mixed) and outcome (success | fallback | error). No label carries a table,
// partition, bucket or object key.
type metrics struct {
	pushed   metric.Int64Counter
	duration metric.Float64Histogram
	tracer   trace.Tracer
}

func newMetrics() (*metrics, error) {
	meter := otel.Meter("flightsrv")
	pushed, err := meter.Int64Counter("flightsrv.aggregate.pushdowns",
		metric.WithDescription("Aggregates answered by pushdown (outcome=success|error) or run on the scan path (outcome=fallback)."))
	if err != nil {
		return nil, err
	}
	duration, err := meter.Float64Histogram("flightsrv.aggregate.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of aggregate execution by source and outcome."),
		metric.WithExplicitBucketBoundaries(querylog.DurationBuckets...))
	if err != nil {
		return nil, err
	}
	return &metrics{pushed: pushed, duration: duration, tracer: otel.Tracer("flightsrv/query")}, nil
}

func (m *metrics) record(ctx context.Context, source, outcome string, d time.Duration) {
	attrs := metric.WithAttributes(attribute.String("source", source), attribute.String("outcome", outcome))
	m.pushed.Add(ctx, 1, attrs)
	m.duration.Record(ctx, d.Seconds(), attrs)
}

// registerMemoryMetrics registers the engine's memory instruments (issue 20), read when the
// metrics are collected:
//
//	flightsrv.memory.ledger.bytes   bytes all queries' ledgers hold now (budget: allocated
//	                                and not freed, and claimed; Options.TotalQueryMemory)
//	flightsrv.memory.ledger.limit   the bytes they may hold together (0: no limit)
//	flightsrv.memory.pool.bytes     bytes of pooled sizes the recycling allocator handed out,
//	                                by source: reused (from its free lists, a hit) or fresh
//	                                (from the Go heap, a miss), since the process started
//	flightsrv.memory.pool.held      bytes its free lists hold now
//
// pool is nil when the engine allocates from another allocator (no pool instruments then).
// The Go heap is the runtime's go.memory.* (internal/telemetry). The callbacks stay
// registered for the process's life (one engine per process); errors are dropped, as the
// other instruments'.
func registerMemoryMetrics(budget *ledger.Budget, pool *ledger.Pool) {
	meter := otel.Meter("flightsrv")
	_, _ = meter.Int64ObservableGauge("flightsrv.memory.ledger.bytes", metric.WithUnit("By"),
		metric.WithDescription("Bytes the queries' ledgers hold now (allocated and claimed)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(budget.Bytes())
			return nil
		}))
	_, _ = meter.Int64ObservableGauge("flightsrv.memory.ledger.limit", metric.WithUnit("By"),
		metric.WithDescription("Bytes the queries' ledgers may hold together (0: no limit)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(max(0, budget.Limit()))
			return nil
		}))
	if pool == nil {
		return
	}
	reused, fresh := metric.WithAttributes(attribute.String("source", "reused")), metric.WithAttributes(attribute.String("source", "fresh"))
	_, _ = meter.Int64ObservableCounter("flightsrv.memory.pool.bytes", metric.WithUnit("By"),
		metric.WithDescription("Bytes of pooled sizes the recycling allocator handed out, by source (reused: from its free lists; fresh: from the Go heap)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			st := pool.Stats()
			o.Observe(st.Reused, reused)
			o.Observe(st.Fresh, fresh)
			return nil
		}))
	_, _ = meter.Int64ObservableGauge("flightsrv.memory.pool.held", metric.WithUnit("By"),
		metric.WithDescription("Bytes the recycling allocator's free lists hold now."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(pool.Stats().Held)
			return nil
		}))
}
