package query

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
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
		metric.WithDescription("Duration of aggregate execution by source and outcome."))
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
