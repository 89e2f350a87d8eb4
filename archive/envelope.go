package archive

import (
	"bytes"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/flightsrv/flightsrv/routing"
)

// Parquet record envelope v2 (docs/pulpitum-v4.md §1.5): four required columns in this
// order — partition_key BYTE_ARRAY, event_time INT64 TIMESTAMP(NANOS, isAdjustedToUTC=true),
// sort_key BYTE_ARRAY, value BYTE_ARRAY — with no logical or converted type on the byte arrays
// (the reference's Arrow reader maps them to Binary and rejects anything else).
type envelopeRow struct {
	PartitionKey []byte `parquet:"partition_key"`
	EventTime    int64  `parquet:"event_time,timestamp(nanosecond)"`
	SortKey      []byte `parquet:"sort_key"`
	Value        []byte `parquet:"value"`
}

// Default envelope layout.
const (
	// DefaultRowGroupRows is the reference's row-group bound (16,384 rows).
	DefaultRowGroupRows = 16 * 1024
	// DefaultPageBufferBytes bounds the uncompressed size of a data page (parquet-go's page
	// buffer). Every page is a zstd frame of its own, whose entropy tables the reader builds
	// again: 256 KiB pages cost about a tenth less CPU to read whole than 64 KiB ones
	// (BenchmarkArchiveScan's bucket of 100,000 flight-like rows), while a full row group
	// still has about ten value pages (rows of ~150 bytes) for the page index to prune; its
	// event_time column is one page (16,384 rows × 8 bytes). arrow-rs, the reference's
	// Parquet library, defaults to pages of up to 1 MiB.
	DefaultPageBufferBytes = 256 * 1024
)

// zstdCodec is shared by all writers: it pools its encoders. SpeedDefault is zstd level 3, the
// reference's level.
var zstdCodec = &zstd.Codec{Level: zstd.SpeedDefault}

// encodeParquetPayload writes recs (already validated and sorted) as the envelope: ZSTD,
// statistics and page index on (parquet-go's defaults: chunk statistics with exact
// min_value/max_value, column index and offset index for every column), at most rowGroupRows
// rows per row group.
func encodeParquetPayload(recs []routing.Record, rowGroupRows, pageBytes int) ([]byte, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[envelopeRow](&buf,
		parquet.Compression(zstdCodec),
		parquet.MaxRowsPerRowGroup(int64(rowGroupRows)),
		parquet.PageBufferSize(pageBytes),
	)
	batch := make([]envelopeRow, 0, min(len(recs), 1024))
	flush := func() error {
		_, err := w.Write(batch)
		clear(batch)
		batch = batch[:0]
		return err
	}
	for i := range recs {
		r := &recs[i]
		if r.EventTime.Before(minNanoTime) || r.EventTime.After(maxNanoTime) {
			return nil, errTimeNotNanos
		}
		batch = append(batch, envelopeRow{
			PartitionKey: r.PartitionKey,
			EventTime:    r.EventTime.UnixNano(),
			SortKey:      r.SortKey,
			Value:        r.Value,
		})
		if len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return nil, fmt.Errorf("archive: encode parquet payload: %w", err)
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return nil, fmt.Errorf("archive: encode parquet payload: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("archive: encode parquet payload: %w", err)
	}
	return buf.Bytes(), nil
}

// Leaf column positions of the envelope.
const (
	colPartitionKey = 0
	colEventTime    = 1
	colSortKey      = 2
	colValue        = 3
)

// checkEnvelope returns nil when f's schema is exactly the envelope, ErrPayloadSchema otherwise.
// Files written by the reference (arrow-rs, with an ARROW:schema key and dictionary pages) pass.
func checkEnvelope(f *parquet.File) error {
	cols := f.Root().Columns()
	if len(cols) != 4 {
		return ErrPayloadSchema
	}
	for i, name := range []string{"partition_key", "event_time", "sort_key", "value"} {
		c := cols[i]
		if c.Name() != name || !c.Leaf() || !c.Required() || c.Index() != i {
			return ErrPayloadSchema
		}
		t := c.Type()
		if i == colEventTime {
			if t.Kind() != parquet.Int64 {
				return ErrPayloadSchema
			}
			lt := t.LogicalType()
			if lt == nil {
				return ErrPayloadSchema
			}
			ts, ok := lt.Value.(*format.TimestampType)
			if !ok || !ts.IsAdjustedToUTC {
				return ErrPayloadSchema
			}
			if _, ns := ts.Unit.Value.(*format.NanoSeconds); !ns {
				return ErrPayloadSchema
			}
			continue
		}
		if t.Kind() != parquet.ByteArray || t.LogicalType() != nil || t.ConvertedType() != nil {
			return ErrPayloadSchema
		}
	}
	return nil
}

// tsColumn describes the event_time column of a Parquet payload, envelope or not, for counting.
type tsColumn struct {
	leaf     int   // leaf column index
	unit     int64 // nanoseconds per stored unit: 1, 1_000 or 1_000_000; 1 for INT96
	int96    bool  // legacy INT96 timestamps: decoded, statistics never trusted
	logical  bool  // unit and UTC flag come from a TIMESTAMP logical type (statistics may answer)
	utc      bool  // isAdjustedToUTC; false values are read as UTC wall-clock instants
	required bool  // no nulls possible
}

// eventTimeColumn locates a top-level, non-repeated event_time leaf whose unit is known:
// INT64 with a TIMESTAMP logical type (any unit, either UTC flag), INT64 with the legacy
// TIMESTAMP_MILLIS/TIMESTAMP_MICROS converted type (UTC by definition), or INT96.
func eventTimeColumn(f *parquet.File) (*tsColumn, error) {
	c := f.Root().Column("event_time")
	if c == nil || !c.Leaf() || c.Repeated() || c.Index() < 0 {
		return nil, ErrPayloadSchema
	}
	ts := &tsColumn{leaf: c.Index(), required: c.Required()}
	t := c.Type()
	switch t.Kind() {
	case parquet.Int96:
		ts.int96, ts.unit, ts.utc = true, 1, true
		return ts, nil
	case parquet.Int64:
	default:
		return nil, ErrPayloadSchema
	}
	if lt := t.LogicalType(); lt != nil {
		tt, ok := lt.Value.(*format.TimestampType)
		if !ok {
			return nil, ErrPayloadSchema
		}
		switch tt.Unit.Value.(type) {
		case *format.NanoSeconds:
			ts.unit = 1
		case *format.MicroSeconds:
			ts.unit = 1_000
		case *format.MilliSeconds:
			ts.unit = 1_000_000
		default:
			return nil, ErrPayloadSchema
		}
		ts.logical, ts.utc = true, tt.IsAdjustedToUTC
		return ts, nil
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.TimestampMillis:
			ts.unit, ts.utc = 1_000_000, true
			return ts, nil
		case deprecated.TimestampMicros:
			ts.unit, ts.utc = 1_000, true
			return ts, nil
		}
	}
	return nil, ErrPayloadSchema
}
