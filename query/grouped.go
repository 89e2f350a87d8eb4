package query

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
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
