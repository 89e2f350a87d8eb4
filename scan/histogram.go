package scan

import (
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
)

// CountPerBin is the generic grouped COUNT(*) over a time bin: it drains rdr and counts the
// rows of each bin of the timestamp[ns] column col (nulls are not counted), returning the
// non-empty bins in ascending order. It is the scan path of histogram queries, which pushdown
// answers are measured against. rdr is drained but not released; its error is returned.
func CountPerBin(rdr array.RecordReader, col int, bin routing.Binning) ([]routing.Bin, error) {
	if err := bin.Validate(); err != nil {
		return nil, err
	}
	counts := map[int64]uint64{} // by bin start, µs
	var start, end int64         // the last bin [start, end), µs: sorted input hits it
	for rdr.Next() {
		rec := rdr.RecordBatch()
		ts, ok := rec.Column(col).(*array.Timestamp)
		if !ok || ts.DataType().(*arrow.TimestampType).Unit != arrow.Nanosecond {
			return nil, fmt.Errorf("scan: column %d is %s, not timestamp[ns]", col, rec.Column(col).DataType())
		}
		for i := range ts.Len() {
			if ts.IsNull(i) {
				continue
			}
			ns := int64(ts.Value(i))
			us := ns / 1000
			if ns%1000 < 0 {
				us--
			}
			if us < start || us >= end || start == end {
				s := bin.Floor(time.UnixMicro(us))
				start, end = s.UnixMicro(), bin.Next(s).UnixMicro()
			}
			counts[start]++
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, err
	}
	out := make([]routing.Bin, 0, len(counts))
	for s, n := range counts {
		out = append(out, routing.Bin{Start: time.UnixMicro(s).UTC(), Count: n})
	}
	slices.SortFunc(out, func(x, y routing.Bin) int { return x.Start.Compare(y.Start) })
	return out, nil
}
