package archive

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/flightsrv/flightsrv/routing"
)

// Row types of foreign files that carry the envelope's column names with other shapes: other
// units, string logical types, dictionary encoding, optional columns, declared sort order.
type (
	namedMsRow struct {
		PartitionKey string `parquet:"partition_key,dict"`
		EventTime    int64  `parquet:"event_time,timestamp(millisecond)"`
		SortKey      string `parquet:"sort_key,dict"`
		Value        []byte `parquet:"value"`
	}
	namedOptionalRow struct {
		Value        []byte `parquet:"value,optional"`
		SortKey      []byte `parquet:"sort_key,optional"`
		EventTime    *int64 `parquet:"event_time,timestamp(microsecond),optional"`
		PartitionKey []byte `parquet:"partition_key,optional"`
	}
	namedInt96Row struct {
		PartitionKey []byte           `parquet:"partition_key"`
		EventTime    deprecated.Int96 `parquet:"event_time"`
		SortKey      []byte           `parquet:"sort_key"`
		Value        []byte           `parquet:"value"`
	}
	namedUsRow struct {
		PartitionKey []byte `parquet:"partition_key"`
		EventTime    int64  `parquet:"event_time,timestamp(microsecond)"`
		SortKey      []byte `parquet:"sort_key"`
		Value        []byte `parquet:"value"`
	}
)

// refRow is a row decoded by arrow-go's Parquet reader: the record and which of its fields are
// null or absent from the file.
type refRow struct {
	rec                    routing.Record
	tnull, keyNull, valNil bool
}

// referenceRows decodes a Parquet file with arrow-go (pqarrow), independently of parquet-go,
// and returns its rows in file order with event times converted to UTC instants; hasKey and
// hasValue say whether the file has sort_key and value columns.
func referenceRows(t *testing.T, data []byte) (rows []refRow, hasKey, hasValue bool) {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("pqarrow: %v", err)
	}
	defer tbl.Release()
	rows = make([]refRow, tbl.NumRows())
	col := func(name string) *arrow.Chunked {
		for i := 0; i < int(tbl.NumCols()); i++ {
			if tbl.Schema().Field(i).Name == name {
				return tbl.Column(i).Data()
			}
		}
		return nil
	}
	eachValue := func(c *arrow.Chunked, fn func(i int, a arrow.Array, j int)) {
		i := 0
		for _, a := range c.Chunks() {
			for j := 0; j < a.Len(); j++ {
				fn(i, a, j)
				i++
			}
		}
	}
	bytesOf := func(a arrow.Array, j int) []byte {
		switch a := a.(type) {
		case *array.Binary:
			return bytes.Clone(a.Value(j))
		case *array.String:
			return []byte(a.Value(j))
		}
		t.Fatalf("pqarrow: unexpected type %s", a.DataType())
		return nil
	}
	eachValue(col("event_time"), func(i int, a arrow.Array, j int) {
		if a.IsNull(j) {
			rows[i].tnull = true
			return
		}
		unit := a.DataType().(*arrow.TimestampType).Unit
		rows[i].rec.EventTime = a.(*array.Timestamp).Value(j).ToTime(unit).UTC()
	})
	if c := col("sort_key"); c != nil {
		hasKey = true
		eachValue(c, func(i int, a arrow.Array, j int) {
			rows[i].keyNull = a.IsNull(j)
			if !a.IsNull(j) {
				rows[i].rec.SortKey = bytesOf(a, j)
			}
		})
	}
	if c := col("value"); c != nil {
		hasValue = true
		eachValue(c, func(i int, a arrow.Array, j int) {
			rows[i].valNil = a.IsNull(j)
			if !a.IsNull(j) {
				rows[i].rec.Value = bytesOf(a, j)
			}
		})
	}
	return rows, hasKey, hasValue
}

// expectedRows applies a batch request to reference rows: rows with an event time in the
// range, in file order (reverse file order for a descending request), cut to the limit, the
// partition column being the bucket's key.
func expectedRows(rows []refRow, b routing.BucketID, req routing.BatchRequest) []routing.Record {
	rng := req.Range.Intersect(b.Range())
	var out []routing.Record
	for _, r := range rows {
		if !r.tnull && rng.Contains(r.rec.EventTime) {
			rec := r.rec
			rec.PartitionKey = b.PartitionKey
			out = append(out, rec)
		}
	}
	if req.Desc {
		slices.Reverse(out)
	}
	if req.Limit >= 0 && int64(len(out)) > req.Limit {
		out = out[:req.Limit]
	}
	return project(out, req.Columns)
}

// writeArrowEnvelope writes recs with arrow-go's Parquet writer as the envelope schema
// (dictionary pages, data page v1, the ARROW:schema key), with or without a page index.
func writeArrowEnvelope(t *testing.T, recs []routing.Record, pageIndex bool, tsType arrow.DataType, nullable bool) []byte {
	t.Helper()
	keyType := arrow.DataType(arrow.BinaryTypes.Binary)
	if nullable {
		keyType = arrow.BinaryTypes.String
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "partition_key", Type: arrow.BinaryTypes.Binary, Nullable: nullable},
		{Name: "event_time", Type: tsType, Nullable: nullable},
		{Name: "sort_key", Type: keyType, Nullable: nullable},
		{Name: "value", Type: arrow.BinaryTypes.Binary, Nullable: nullable},
	}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	unit := tsType.(*arrow.TimestampType).Unit
	for _, r := range recs {
		bld.Field(0).(*array.BinaryBuilder).Append(r.PartitionKey)
		ts, err := arrow.TimestampFromTime(r.EventTime, unit)
		if err != nil {
			t.Fatal(err)
		}
		bld.Field(1).(*array.TimestampBuilder).Append(ts)
		switch kb := bld.Field(2).(type) {
		case *array.BinaryBuilder:
			kb.Append(r.SortKey)
		case *array.StringBuilder:
			kb.Append(string(r.SortKey))
		}
		bld.Field(3).(*array.BinaryBuilder).Append(r.Value)
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	tbl := array.NewTableFromRecords(schema, []arrow.RecordBatch{rec})
	defer tbl.Release()
	var buf bytes.Buffer
	props := apq.NewWriterProperties(apq.WithMaxRowGroupLength(300), apq.WithDataPageSize(512), apq.WithDictionaryDefault(true),
		apq.WithStats(true), apq.WithPageIndexEnabled(pageIndex), apq.WithAllocator(memory.DefaultAllocator))
	if err := pqarrow.WriteTable(tbl, &buf, 300, props, pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// batchVariant is a foreign payload for ReadBatches: ordered says whether its reader must
// report Ordered (the file is claimed sorted and is sorted).
type batchVariant struct {
	foreignVariant
	ordered bool
}

// batchVariants returns every payload of TestCountForeignParquet plus files carrying the
// envelope's column names in other shapes, written by parquet-go and by arrow-go.
func batchVariants(t *testing.T, b routing.BucketID, n int) []batchVariant {
	rng := newRand(2024)
	var out []batchVariant
	for _, v := range foreignVariants(t, b, rng, n) {
		out = append(out, batchVariant{v, v.envelope})
	}
	add := func(name string, data []byte, rows int, ordered bool) {
		out = append(out, batchVariant{foreignVariant{name: name, data: data, rows: rows, ref: data}, ordered})
	}
	small := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(200), parquet.PageBufferSize(512)}
	sorting := parquet.SortingWriterConfig(parquet.SortingColumns(parquet.Ascending("event_time"), parquet.Ascending("sort_key")))

	recs := genRecords(rng, b, n) // sorted, with duplicate times
	{
		ts := foreignTimes(rng, b, n, time.Millisecond, false)
		rows := make([]namedMsRow, n)
		for i, tt := range ts {
			rows[i] = namedMsRow{PartitionKey: string(b.PartitionKey), EventTime: tt.UnixMilli(), SortKey: fmt.Sprintf("k%05d", i%300), Value: recs[i].Value}
		}
		add("named-ms-dictionary-unsorted", writeRows(t, rows, small...), n, false)
	}
	{
		rows := make([]namedOptionalRow, n)
		for i, r := range recs {
			rows[i] = namedOptionalRow{Value: append([]byte{}, r.Value...), SortKey: r.SortKey, PartitionKey: b.PartitionKey}
			if i%11 != 5 {
				v := r.EventTime.UnixMicro()
				rows[i].EventTime = &v
			}
		}
		add("named-optional-null-times", writeRows(t, rows, small...), n, false)
	}
	{
		rows := make([]namedInt96Row, n)
		for i, r := range recs {
			rows[i] = namedInt96Row{PartitionKey: b.PartitionKey, EventTime: toInt96(r.EventTime), SortKey: r.SortKey, Value: r.Value}
		}
		add("named-int96-one-group-sorting-columns", writeRows(t, rows, parquet.PageBufferSize(512), sorting), n, true)
		add("named-int96-groups-sorting-columns", writeRows(t, rows, append(small, sorting)...), n, false)
	}
	{
		rows := make([]namedUsRow, n)
		for i, r := range recs {
			rows[i] = namedUsRow{PartitionKey: b.PartitionKey, EventTime: b.Start.Add(time.Duration(i) * time.Minute).UnixMicro(), SortKey: r.SortKey, Value: r.Value}
		}
		add("named-us-groups-sorting-columns", writeRows(t, rows, append(small, sorting)...), n, true)
		add("named-us-groups-no-sorting-columns", writeRows(t, rows, small...), n, false)
	}
	add("arrow-go-envelope", writeArrowEnvelope(t, recs, false, routing.TimestampType, false), n, true)
	add("arrow-go-envelope-page-index", writeArrowEnvelope(t, recs, true, routing.TimestampType, false), n, true)
	add("arrow-go-us-nullable-strings", writeArrowEnvelope(t, recs, true, &arrow.TimestampType{Unit: arrow.Microsecond}, true), n, false)
	return out
}

// TestReadBatchesForeignParquet reads every foreign payload the aggregates accept with many
// requests and compares the rows with arrow-go's own decoding of the file (file order, as
// ReadBatches streams files it cannot claim sorted), and the number of rows of requests
// without columns with Count.
func TestReadBatchesForeignParquet(t *testing.T) {
	t.Parallel()
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2023, 7, 4, 0, 0, 0, 0, time.UTC))
	const n = 1500
	for i, v := range batchVariants(t, b, n) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			bkt := openTestBucket(t)
			key := publishRaw(t, bkt, b, FormatParquet, v.data, v.rows, nil)
			ref, hasKey, hasValue := referenceRows(t, v.ref)
			if len(ref) != v.rows {
				t.Fatalf("reference decoded %d rows, want %d", len(ref), v.rows)
			}
			var times []time.Time
			for _, r := range ref {
				if !r.tnull {
					times = append(times, r.rec.EventTime)
				}
			}
			if v.ordered {
				recs := make([]routing.Record, len(ref))
				for i := range ref {
					recs[i] = ref[i].rec
				}
				requireSorted(t, "reference rows", recs, false)
			}
			spanRows := 0
			if i%2 == 0 {
				spanRows = 70
			}
			r, err := NewReader(bkt, ReaderOptions{TailBytes: 2048, BatchSpanRows: spanRows})
			if err != nil {
				t.Fatal(err)
			}
			rng := newRand(uint64(500 + i))
			for k := 0; k < 80; k++ {
				req := routing.BatchRequest{Range: randomRange(rng, b, times), Desc: rng.IntN(2) == 0, Limit: randomLimit(rng, v.rows, 200, 64), Columns: randomColumns(rng)}
				if k%4 == 0 {
					req.Range = b.Range()
				}
				missing := (!hasKey && slices.Contains(req.Columns, routing.ColumnID)) || (!hasValue && slices.Contains(req.Columns, routing.ColumnValue))
				what := fmt.Sprintf("request %d %+v", k, req)
				got := readBatches(t, ctx, r, key, b, req)
				if req.Limit == 0 || req.Range.Intersect(b.Range()).Empty() {
					// Nothing to read: an empty ordered reader, the payload untouched.
					if got.err != nil || len(got.recs) != 0 || !got.ordered {
						t.Fatalf("%s: empty request: %d rows, ordered %v, %v", what, len(got.recs), got.ordered, got.err)
					}
					continue
				}
				if missing {
					if got.err != ErrPayloadSchema {
						t.Fatalf("%s: a column the file lacks: error %v, want ErrPayloadSchema", what, got.err)
					}
					continue
				}
				if got.err != nil {
					t.Fatalf("%s: %v", what, got.err)
				}
				if got.ordered != v.ordered {
					t.Fatalf("%s: Ordered() = %v, want %v", what, got.ordered, v.ordered)
				}
				sameProjected(t, what, got.recs, expectedRows(ref, b, req))
				if len(req.Columns) == 0 && req.Limit < 0 {
					c, err := countRecords(ctx, r, key, b, req.Range)
					if err != nil || (c != uint64(len(got.recs)) && !req.Range.Covers(b.Range())) {
						t.Fatalf("%s: %d rows, Count = %d, %v", what, len(got.recs), c, err)
					}
				}
			}
		})
	}
}

// TestReadBatchesForeignFailures: a file that declares sorting_columns but is not sorted fails
// with ErrRecordsUnsorted; a null in a decoded key or value column is ErrPayloadSchema, while
// reads that do not decode that column succeed.
func TestReadBatchesForeignFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2023, 7, 4, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(8), b, 600)
	bkt := openTestBucket(t)
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	sorting := parquet.SortingWriterConfig(parquet.SortingColumns(parquet.Ascending("event_time"), parquet.Ascending("sort_key")))

	lying := make([]namedUsRow, len(recs))
	for i, rec := range recs {
		lying[i] = namedUsRow{PartitionKey: b.PartitionKey, EventTime: rec.EventTime.UnixMicro(), SortKey: rec.SortKey, Value: rec.Value}
	}
	lying[100], lying[400] = lying[400], lying[100]
	key := publishRaw(t, bkt, b, FormatParquet, writeRows(t, lying, parquet.PageBufferSize(512), sorting), len(recs), nil)
	for _, desc := range []bool{false, true} {
		got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Desc: desc, Limit: -1})
		requireOnly(t, "declared sorted, unsorted", got.err, ErrRecordsUnsorted, b)
	}

	withNulls := make([]namedOptionalRow, len(recs))
	for i, rec := range recs {
		v := rec.EventTime.UnixMicro()
		withNulls[i] = namedOptionalRow{Value: append([]byte{}, rec.Value...), SortKey: rec.SortKey, EventTime: &v, PartitionKey: b.PartitionKey}
	}
	withNulls[300].Value = nil
	withNulls[301].SortKey = nil
	withNulls[302].PartitionKey = nil
	key = publishRaw(t, bkt, b, FormatParquet, writeRows(t, withNulls, parquet.PageBufferSize(512)), len(recs), nil)
	for _, c := range []routing.Column{routing.ColumnValue, routing.ColumnID, routing.ColumnPartition} {
		got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{c}, Limit: -1})
		requireOnly(t, "null "+c.String(), got.err, ErrPayloadSchema, b)
	}
	got := readBatches(t, ctx, r, key, b, routing.BatchRequest{Range: b.Range(), Columns: []routing.Column{routing.ColumnTimestamp}, Limit: -1})
	if got.err != nil || len(got.recs) != len(recs) {
		t.Fatalf("timestamps of a file with null values: %d rows, %v", len(got.recs), got.err)
	}
}
