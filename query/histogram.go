package query

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
)

// groupAttr marks histogram aggregates on spans and metrics (pulpitum.group=time_bin), next to
// pulpitum.aggregate=count; the ungrouped COUNT(*) carries no group attribute.
var groupAttr = attribute.String("pulpitum.group", "time_bin")

// recordGrouped records one histogram aggregate in the seed's pushdown counter and duration
// histogram, labelled by source, outcome and pulpitum.group.
func (m *metrics) recordGrouped(ctx context.Context, source, outcome string, d time.Duration) {
	attrs := metric.WithAttributes(attribute.String("source", source), attribute.String("outcome", outcome), groupAttr)
	m.pushed.Add(ctx, 1, attrs)
	m.duration.Record(ctx, d.Seconds(), attrs)
}

// histogramPushdown runs KindHistogram through routing.DurableTable.CountByBin under the
// seed's "COUNT <table>" span (pulpitum.aggregate=count, pulpitum.group=time_bin).
func (e *Engine) histogramPushdown(ctx context.Context, t *routing.DurableTable, ph *pushdown.Physical) (array.RecordReader, error) {
	if ph.Limit == 0 {
		return scan.EmptyReader(ph.Schema), nil
	}
	ctx, span := e.metrics.tracer.Start(ctx, "COUNT "+ph.Table.Name, trace.WithAttributes(
		attribute.String("db.system.name", "flightsrv"),
		attribute.String("db.operation.name", "COUNT"),
		attribute.String("db.collection.name", ph.Table.Name),
		attribute.String("pulpitum.sql.mode", "routed_aggregate"),
		attribute.String("pulpitum.aggregate", "count"),
		groupAttr,
		attribute.String("pulpitum.group.bin", pushdown.BinShape(ph.Group.Binning)),
		attribute.Int("pulpitum.query.buckets_scanned", ph.Buckets),
	))
	defer span.End()
	start := time.Now()
	bins, res, err := t.CountByBin(ctx, ph.Partition, ph.Range, ph.Group.Binning)
	d := time.Since(start)
	if err != nil {
		span.SetStatus(codes.Error, "count by bin failed")
		e.metrics.recordGrouped(ctx, res.Source(), "error", d)
		return nil, e.histogramError(err)
	}
	span.SetAttributes(attribute.Int("pulpitum.query.hot_buckets", res.HotBuckets),
		attribute.Int("pulpitum.query.archive_buckets", res.ArchiveBuckets), attribute.Int("pulpitum.group.bins", len(bins)))
	e.metrics.recordGrouped(ctx, res.Source(), "success", d)
	return e.histogramResult(ph, bins)
}

// histogramError classifies execution errors; a bin start outside timestamp[ns] is the
// client's (its range and binning), everything else as execError.
func (e *Engine) histogramError(err error) error {
	if errors.Is(err, routing.ErrBinOutOfRange) {
		return status.Error(grpccodes.InvalidArgument, "a time bucket starts outside the timestamp range (1677-09-21 to 2262-04-11)")
	}
	return e.execError(err)
}

var (
	minNanoTime = time.Unix(0, -1<<63).UTC()
	maxNanoTime = time.Unix(0, 1<<63-1).UTC()
)

// histogramResult builds the result of a histogram from its ascending non-empty bins: in
// descending order when asked, at most Limit bins, the bin column at Group.Index and each
// COUNT(*) elsewhere, in batches of at most routing.MaxBatchRows rows (no batch when empty).
func (e *Engine) histogramResult(ph *pushdown.Physical, bins []routing.Bin) (array.RecordReader, error) {
	if ph.Desc {
		bins = slices.Clone(bins)
		slices.Reverse(bins)
	}
	if ph.Limit >= 0 && int64(len(bins)) > ph.Limit {
		bins = bins[:ph.Limit]
	}
	for _, b := range bins {
		if b.Start.Before(minNanoTime) || b.Start.After(maxNanoTime) {
			return nil, e.histogramError(routing.ErrBinOutOfRange)
		}
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for len(bins) > 0 {
		n := min(len(bins), routing.MaxBatchRows)
		b := array.NewRecordBuilder(e.opts.Alloc, ph.Schema)
		for i := range ph.Schema.NumFields() {
			switch fb := b.Field(i).(type) {
			case *array.TimestampBuilder:
				fb.Reserve(n)
				for _, x := range bins[:n] {
					fb.UnsafeAppend(arrow.Timestamp(x.Start.UnixNano()))
				}
			case *array.Int64Builder:
				fb.Reserve(n)
				for _, x := range bins[:n] {
					fb.UnsafeAppend(int64(x.Count))
				}
			}
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
		bins = bins[n:]
	}
	return array.NewRecordReader(ph.Schema, recs)
}
