package pushdown

import (
	"fmt"
	"strings"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// planHistogram decides how COUNT(*) grouped by a time bin runs: KindHistogram through
// routing.DurableTable.CountByBin when pushdown is on, else the scan path, which reads the
// records' timestamps and counts per bin. Both emit the non-empty bins only (SQL GROUP BY
// semantics), ascending unless ORDER BY the bin DESC, at most Limit of them.
func planHistogram(q *substrait.Query, ph *Physical, opts Options) *Physical {
	g := *q.Group
	ph.Group = &g
	ph.Aggregate = &substrait.Aggregate{Measures: append([]substrait.Measure(nil), q.Aggregate.Measures...)}
	ph.Ordered, ph.Desc = q.Order != substrait.OrderNone, q.Order == substrait.OrderDesc
	shape := BinShape(g.Binning)
	if opts.Pushdown {
		ph.Kind = KindHistogram
		ph.decide("COUNT(*) grouped by " + shape + " over one routed scan with only the routed predicate: pushed down to the durable-table per-bin count (no record value is read)")
		if routing.StrategyInsideBins(q.Table.Strategy, g.Binning) {
			ph.decide(fmt.Sprintf("every %s bucket lies inside one bin: each bucket is answered by CountBucket (hot count, manifest record count or archive statistics)", q.Table.Strategy))
		} else {
			ph.decide("a bucket whose part of the range lies inside one bin is answered by CountBucket (hot count, manifest record count or archive statistics); other buckets are counted per bin: one GROUP BY statement per hot bucket, trusted row-group and page statistics per archived bucket, decoding only event_time where a group or page spans bins")
		}
	} else {
		ph.Columns = []string{substrait.TimestampColumn}
		ph.decide("COUNT(*) grouped by " + shape + " is a pushdown candidate but pushdown is disabled: counted per bin on the scan path")
		ph.decide("scan path: read columns [timestamp], then count per bin")
	}
	var b strings.Builder
	switch {
	case ph.Desc:
		b.WriteString("bins in descending order")
	case ph.Ordered:
		b.WriteString("bins in ascending order")
	default:
		b.WriteString("bins in ascending order (no ORDER BY)")
	}
	b.WriteString(", empty bins omitted")
	if ph.Limit >= 0 {
		fmt.Fprintf(&b, ", limit %d", ph.Limit)
	}
	ph.decide(b.String())
	return ph
}

// BinShape describes a binning for decisions and logs without its literal values beyond the
// unit or stride: date_trunc('hour', timestamp), date_bin('15 minutes', timestamp, origin).
func BinShape(bin routing.Binning) string { return bin.Shape() }
