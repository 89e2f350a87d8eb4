package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
)

// Row types of Parquet files written "by other tools": other units, UTC flags, nullability,
// column positions and physical types than the envelope.
type (
	msRow struct {
		Channel   string `parquet:"channel"`
		EventTime int64  `parquet:"event_time,timestamp(millisecond)"`
		Body      []byte `parquet:"body"`
	}
	usRow struct {
		EventTime int64 `parquet:"event_time,timestamp(microsecond)"`
		ID        int64 `parquet:"id"`
	}
	localNsRow struct {
		ID        int64 `parquet:"id"`
		EventTime int64 `parquet:"event_time,timestamp(nanosecond:local)"`
	}
	optionalUsRow struct {
		EventTime *int64 `parquet:"event_time,timestamp(microsecond),optional"`
		V         string `parquet:"v"`
	}
	int96Row struct {
		EventTime deprecated.Int96 `parquet:"event_time"`
		V         int32            `parquet:"v"`
	}
)

func writeRows[T any](t *testing.T, rows []T, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rewriteFooter re-encodes a file's footer after edit, keeping its data pages and page index.
func rewriteFooter(t *testing.T, data []byte, edit func(md *format.FileMetaData)) []byte {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)), parquet.SkipPageIndex(true))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	edit(md)
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), md)
	if err != nil {
		t.Fatal(err)
	}
	start := len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	out := append(append([]byte(nil), data[:start]...), footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func eventTimeLeaf(md *format.FileMetaData) int {
	leaf := 0
	for _, s := range md.Schema[1:] {
		if s.Name == "event_time" {
			return leaf
		}
		if !s.NumChildren.Valid || s.NumChildren.V == 0 {
			leaf++
		}
	}
	panic("no event_time column")
}

// Footer edits.
func reverseStats(md *format.FileMetaData) {
	leaf := eventTimeLeaf(md)
	for i := range md.RowGroups {
		st := &md.RowGroups[i].Columns[leaf].MetaData.Statistics
		st.MinValue, st.MaxValue = st.MaxValue, st.MinValue
	}
}

func truncateStats(md *format.FileMetaData) {
	leaf := eventTimeLeaf(md)
	for i := range md.RowGroups {
		st := &md.RowGroups[i].Columns[leaf].MetaData.Statistics
		st.MinValue, st.MaxValue = st.MinValue[:4], st.MaxValue[:4]
	}
}

func deprecatedStatsOnly(md *format.FileMetaData) {
	leaf := eventTimeLeaf(md)
	for i := range md.RowGroups {
		st := &md.RowGroups[i].Columns[leaf].MetaData.Statistics
		st.Min, st.Max, st.MinValue, st.MaxValue = st.MinValue, st.MaxValue, nil, nil
	}
}

func dropPageIndex(md *format.FileMetaData) {
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			c := &md.RowGroups[i].Columns[j]
			c.ColumnIndexOffset, c.ColumnIndexLength, c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0, 0, 0
		}
	}
}

func dropColumnOrders(md *format.FileMetaData) { md.ColumnOrders = nil }

// convertedTypeOnly replaces event_time's TIMESTAMP(MILLIS) logical type by the legacy
// TIMESTAMP_MILLIS converted type.
func convertedTypeOnly(md *format.FileMetaData) {
	for i := range md.Schema {
		if md.Schema[i].Name == "event_time" {
			md.Schema[i].LogicalType = format.LogicalType{}
			md.Schema[i].ConvertedType = deprecatedConverted(deprecated.TimestampMillis)
		}
	}
}

func deprecatedConverted(c deprecated.ConvertedType) (n thrift.Null[deprecated.ConvertedType]) {
	n.V, n.Valid = c, true
	return n
}

// insertEmptyRowGroups adds row groups without rows at the front, the middle and the end.
func insertEmptyRowGroups(md *format.FileMetaData) {
	empty := md.RowGroups[0]
	empty.NumRows, empty.TotalByteSize, empty.TotalCompressedSize = 0, 0, 0
	empty.Columns = append(thrift.Slice[format.ColumnChunk](nil), md.RowGroups[0].Columns...)
	for j := range empty.Columns {
		c := &empty.Columns[j]
		c.MetaData.NumValues, c.MetaData.TotalCompressedSize, c.MetaData.TotalUncompressedSize = 0, 0, 0
		c.MetaData.Statistics = format.Statistics{}
		c.ColumnIndexOffset, c.ColumnIndexLength, c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0, 0, 0
	}
	mid := len(md.RowGroups) / 2
	groups := append(thrift.Slice[format.RowGroup]{empty}, md.RowGroups[:mid]...)
	groups = append(groups, empty)
	groups = append(groups, md.RowGroups[mid:]...)
	groups = append(groups, empty)
	for i := range groups {
		groups[i].Ordinal = int16(i)
	}
	md.RowGroups = groups
}

// foreignTimes returns n instants of bucket b at the given unit, shuffled or sorted, with
// clusters of duplicates.
func foreignTimes(rng *rand.Rand, b routing.BucketID, n int, unit time.Duration, sorted bool) []time.Time {
	out := make([]time.Time, n)
	span := int64(b.End.Sub(b.Start))
	for i := range out {
		if i > 0 && rng.IntN(5) == 0 {
			out[i] = out[rng.IntN(i)]
			continue
		}
		out[i] = b.Start.Add(time.Duration(rng.Int64N(span))).Truncate(unit)
	}
	out[0] = b.Start
	if sorted {
		sortTimes(out)
	} else {
		rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

func sortTimes(ts []time.Time) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

func toInt96(t time.Time) deprecated.Int96 {
	days := t.Unix()/86400 + 2440588
	nanos := t.Sub(time.Unix(t.Unix()/86400*86400, 0).UTC())
	return deprecated.Int96{uint32(nanos), uint32(uint64(nanos) >> 32), uint32(days)}
}

// foreignVariant is a Parquet payload written "by another tool" (or our envelope with a
// damaged footer): its bytes, the non-null event times of its rows, its row count (nulls
// included) and whether it is exactly the envelope. ref is a file with the same rows whose
// footer was not edited, for reference decoders that may reject edited footers.
type foreignVariant struct {
	name     string
	data     []byte
	times    []time.Time
	rows     int
	envelope bool
	ref      []byte
}

// foreignVariants returns the payloads of TestCountForeignParquet, each holding n rows of b.
func foreignVariants(t *testing.T, b routing.BucketID, rng *rand.Rand, n int) []foreignVariant {
	small := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(200), parquet.PageBufferSize(512)}
	var variants []foreignVariant
	add := func(name string, data []byte, times []time.Time, rows int, envelope bool, ref []byte) {
		if ref == nil {
			ref = data
		}
		variants = append(variants, foreignVariant{name, data, times, rows, envelope, ref})
	}

	{ // milliseconds, UTC, several row groups, unsorted, other columns around event_time
		ts := foreignTimes(rng, b, n, time.Millisecond, false)
		rows := make([]msRow, n)
		for i, tt := range ts {
			rows[i] = msRow{Channel: "general", EventTime: tt.UnixMilli(), Body: []byte{byte(i)}}
		}
		data := writeRows(t, rows, small...)
		add("ms-unsorted-multi-group", data, ts, n, false, nil)
		add("ms-reversed-stats", rewriteFooter(t, data, reverseStats), ts, n, false, data)
		add("ms-truncated-stats", rewriteFooter(t, data, truncateStats), ts, n, false, data)
		add("ms-deprecated-stats-only", rewriteFooter(t, data, deprecatedStatsOnly), ts, n, false, data)
		add("ms-no-column-orders", rewriteFooter(t, data, dropColumnOrders), ts, n, false, data)
		add("ms-converted-type-only", rewriteFooter(t, data, convertedTypeOnly), ts, n, false, data)
	}
	{ // microseconds, sorted, one row group
		ts := foreignTimes(rng, b, n, time.Microsecond, true)
		rows := make([]usRow, n)
		for i, tt := range ts {
			rows[i] = usRow{EventTime: tt.UnixMicro(), ID: int64(i)}
		}
		add("us-one-group", writeRows(t, rows, parquet.PageBufferSize(1024)), ts, n, false, nil)
		data := writeRows(t, rows, small...)
		add("us-sorted-multi-group", data, ts, n, false, nil)
		add("us-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n, false, data)
		add("us-no-page-index-reversed", rewriteFooter(t, data, func(md *format.FileMetaData) { dropPageIndex(md); reverseStats(md) }), ts, n, false, data)
		noStats := writeRows(t, rows, append(small, parquet.SkipPageBounds("event_time"), parquet.DataPageStatistics(false))...)
		add("us-no-statistics", noStats, ts, n, false, nil)
	}
	{ // nanoseconds, isAdjustedToUTC=false
		ts := foreignTimes(rng, b, n, time.Nanosecond, true)
		rows := make([]localNsRow, n)
		for i, tt := range ts {
			rows[i] = localNsRow{ID: int64(i), EventTime: tt.UnixNano()}
		}
		add("ns-local-time", writeRows(t, rows, small...), ts, n, false, nil)
	}
	{ // optional microseconds with nulls
		all := foreignTimes(rng, b, n, time.Microsecond, true)
		rows := make([]optionalUsRow, n)
		var ts []time.Time
		for i, tt := range all {
			rows[i].V = "x"
			if i%9 == 4 {
				continue
			}
			v := tt.UnixMicro()
			rows[i].EventTime = &v
			ts = append(ts, tt)
		}
		add("us-optional-with-nulls", writeRows(t, rows, small...), ts, n, false, nil)
	}
	{ // legacy INT96
		ts := foreignTimes(rng, b, n, time.Nanosecond, false)
		rows := make([]int96Row, n)
		for i, tt := range ts {
			rows[i] = int96Row{EventTime: toInt96(tt), V: int32(i)}
		}
		add("int96", writeRows(t, rows, small...), ts, n, false, nil)
	}
	{ // our envelope with damaged statistics and extra empty groups
		recs := genRecords(rng, b, n)
		data, err := encodeParquetPayload(recs, 150, 256)
		if err != nil {
			t.Fatal(err)
		}
		ts := eventTimes(recs)
		add("envelope-reversed-stats", rewriteFooter(t, data, reverseStats), ts, n, true, data)
		add("envelope-empty-row-groups", rewriteFooter(t, data, insertEmptyRowGroups), ts, n, true, data)
	}
	return variants
}

// TestCountForeignParquet counts archives whose Parquet payload was written with other
// settings than ours and compares every answer with a brute-force count. Reading records from
// them is refused with ErrPayloadSchema (they are not the envelope).
func TestCountForeignParquet(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2023, 7, 4, 0, 0, 0, 0, time.UTC))
	rng := newRand(99)
	const n = 1500
	variants := foreignVariants(t, b, rng, n)

	for i, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			bkt := openTestBucket(t)
			key := publishRaw(t, bkt, b, FormatParquet, v.data, v.rows, nil)
			r, err := NewReader(bkt, ReaderOptions{TailBytes: 2048})
			if err != nil {
				t.Fatal(err)
			}
			vr := newRand(uint64(1000 + i))
			for k := 0; k < 150; k++ {
				rg := randomRange(vr, b, v.times)
				want := bruteCount(v.times, rg.Intersect(b.Range()))
				if rg.Intersect(b.Range()) == b.Range() {
					want = uint64(v.rows) // the manifest answers for the whole bucket
				}
				got, err := countRecords(ctx, r, key, b, rg)
				if err != nil {
					t.Fatalf("Count([%v, %v)): %v", rg.Start, rg.End, err)
				}
				if got != want {
					t.Fatalf("Count([%v, %v)) = %d, want %d", rg.Start, rg.End, got, want)
				}
			}
			req := routing.ReadRequest{Range: routing.TimeRange{Start: b.Start, End: b.Start.Add(48 * time.Hour)}, Limit: 10}
			_, err = readRecords(r, ctx, key, b, req)
			if v.envelope {
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
			} else if err != ErrPayloadSchema {
				t.Fatalf("Read of a foreign payload: error = %v, want ErrPayloadSchema", err)
			}
		})
	}
}
