package query

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// minMaxExtremes returns which extremes the measures of a KindMinMax plan ask for, and the
// operation name of its span and aggregate attribute: MIN, MAX or MINMAX. The planner produces
// KindMinMax only when every measure is MIN(timestamp) or MAX(timestamp).
func minMaxExtremes(agg *pushdown.Aggregate) (routing.Extremes, string, error) {
	var want routing.Extremes
	for _, m := range agg.Measures {
		switch m.Func {
		case substrait.Min:
			want |= routing.WantMin
		case substrait.Max:
			want |= routing.WantMax
		default:
			return 0, "", fmt.Errorf("query: aggregate %s has no MIN/MAX pushdown executor", m)
		}
	}
	switch want {
	case routing.WantMin:
		return want, "MIN", nil
	case routing.WantMax:
		return want, "MAX", nil
	case routing.WantMinMax:
		return want, "MINMAX", nil
	}
	return 0, "", fmt.Errorf("query: MIN/MAX plan without measures")
}

// minMaxPushdown runs a pushed-down MIN/MAX(timestamp) through the durable-table MIN/MAX port
// (routing.DurableTable.MinMax: buckets walked in time order, stopping at the first that
// answers) under a "MIN <table>", "MAX <table>" or "MINMAX <table>" span, and builds the same
// one-row result as the scan path (nullable timestamp[ns, UTC], NULL when no row; no row for
// LIMIT 0, which touches no bucket).
func (e *Engine) minMaxPushdown(ctx context.Context, t *routing.DurableTable, ph *pushdown.Physical) (array.RecordReader, error) {
	want, op, err := minMaxExtremes(ph.Aggregate)
	if err != nil {
		return nil, err
	}
	if ph.Limit == 0 {
		return scan.EmptyReader(ph.Schema), nil
	}
	ctx, span := e.metrics.tracer.Start(ctx, op+" "+ph.Table.Name, trace.WithAttributes(
		attribute.String("db.system.name", "flightsrv"),
		attribute.String("db.operation.name", op),
		attribute.String("db.collection.name", ph.Table.Name),
		attribute.String("pulpitum.sql.mode", "routed_aggregate"),
		attribute.String("pulpitum.aggregate", strings.ToLower(op)),
		attribute.Int("pulpitum.query.buckets_scanned", ph.Buckets),
	))
	defer span.End()
	start := time.Now()
	res, err := t.MinMax(ctx, ph.Partition, ph.Range, want)
	d := time.Since(start)
	if err != nil {
		span.SetStatus(codes.Error, "min/max failed")
		e.metrics.record(ctx, res.Source(), "error", d)
		return nil, e.execError(err)
	}
	span.SetAttributes(
		attribute.Int("pulpitum.query.buckets_probed", res.Probed),
		attribute.Int("pulpitum.query.hot_buckets", res.HotBuckets),
		attribute.Int("pulpitum.query.archive_buckets", res.ArchiveBuckets),
		attribute.Bool("pulpitum.aggregate.found", res.Found),
	)
	e.metrics.record(ctx, res.Source(), "success", d)
	// A summary whose Rows only marks presence: a KindMinMax plan has no COUNT measure
	// (checked by minMaxExtremes), so Rows is never shown.
	sum := summary{Min: res.Min, Max: res.Max}
	if res.Found {
		sum.Rows = 1
	}
	return e.aggregateResult(ph, sum)
}
