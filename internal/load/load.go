// Package load appends records from Parquet or CSV files to a routed table through the
// durable append path (routing.DurableTable.Append, write fence included), with a column
// mapping from source columns to the table's partition column, timestamp, id and value.
//
// Resumable loads one file of a load over many unless it is already loaded, and refuses one
// that is partly loaded (resume.go, with the rule).
//
// Time interpretation: a source timestamp without a zone (Parquet isAdjustedToUTC=false, or a
// CSV value without an offset) is a wall-clock value and is interpreted as UTC. Event times
// are truncated to microseconds, the precision both tiers store.
//
// Value encoding: the value of each record is a compact JSON object of the value columns in
// source order, e.g. {"delay":-3,"distance":599,"destination":"SFO"}; timestamps are RFC 3339
// in UTC, nulls are JSON null. CSV columns are text, so their values are JSON strings. Nested
// values are nested JSON, as PostgreSQL's to_jsonb writes a row and an array: a struct is an
// object of its fields, a list an array of its elements, a map an object of its entries (keys
// as text, in the map's order). JSON has no NaN or infinities: a float NaN, Infinity or
// -Infinity is the string "NaN", "Infinity" or "-Infinity", as to_jsonb writes a float8 one.
package load

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/flightsrv/flightsrv/routing"
)

// Mapping maps source columns onto a routed table.
type Mapping struct {
	// Partition is the source column holding the partition value (any type; rendered as text).
	Partition string
	// Time is the source column holding the event time: a Parquet/Arrow timestamp or date, or
	// text in RFC 3339 or "2006-01-02 15:04:05[.fffffffff]" form (zone-less means UTC).
	Time string
	// ID is the source column holding the stable per-row id. Empty means the zero-based row
	// number in the source file, zero-padded to IDWidth digits so text order equals row order.
	ID string
	// IDWidth is the zero-padding width of generated ids (default 10).
	IDWidth int
	// Value lists the source columns to encode into value, in order. Empty means every column
	// not used as partition, time or id.
	Value []string
	// Payload, when set, names a text or binary column holding each record's value as it is
	// stored (the narrow shape partition, timestamp, id, value of a routed table); Value is
	// then ignored.
	Payload string
	// Progress, when set, is called after each batch File writes (for an Ingester: hands on;
	// its Appended stays 0 until the whole file commits), with the running totals (not during
	// the checking pass). It runs on the goroutine reading the file (for an Ingester it may be
	// the store's) and must not block long.
	Progress func(Stats)
}

// Appender is the write port the loader uses; *routing.DurableTable implements it.
type Appender interface {
	Append(ctx context.Context, recs []routing.Record) (int, error)
}

// Checker is implemented by appenders that can check records without writing them
// (*routing.DurableTable). When the appender is a Checker, File reads the source twice: a first
// pass converts and checks every record, so that a bad row or a record outside the writable
// window stops the load before anything is written.
type Checker interface {
	CheckAppend(recs []routing.Record) error
}

// Ingester is implemented by appenders that write a whole request in one all-or-nothing
// transaction behind the write fence (*routing.DurableTable, the path of Flight SQL bulk
// ingest). When the appender is an Ingester, File reads the source once and writes the whole
// file through it: a bad row, a record outside the writable window, a bucket that is no
// longer hot or a duplicate anywhere in the file stores nothing of it.
type Ingester interface {
	Ingest(ctx context.Context, src routing.RecordSource) (int64, error)
}

// Stats reports a load: records read from the source and appended.
type Stats struct {
	Read     int64
	Appended int64
}

// BatchSize is how many records the loader hands to one Append call.
const BatchSize = 20000

// File loads path (".parquet" or ".csv", by extension) into t with mapping m. When t is an
// Ingester (*routing.DurableTable), the whole file is one all-or-nothing request through it,
// read once (see Ingester). Otherwise records go in batches of BatchSize to Append; when t is
// a Checker, every record is converted and checked before the first one is written (see
// Checker), and a failure while writing (a store error, a bucket that is no longer hot, a
// duplicate record) stops the load with the records of earlier batches appended (each Append
// is atomic per bucket) and Stats saying how many.
func File(ctx context.Context, t Appender, path string, m Mapping) (Stats, error) {
	if m.Partition == "" || m.Time == "" {
		return Stats{}, errors.New("load: the mapping needs a partition column and a time column")
	}
	if m.IDWidth <= 0 {
		m.IDWidth = 10
	}
	if err := checkExt(path); err != nil {
		return Stats{}, err
	}
	open := func() (recordSource, error) { return openSource(ctx, path) }
	pass := func(sink func([]routing.Record) (int, error)) (Stats, error) {
		src, err := open()
		if err != nil {
			return Stats{}, err
		}
		defer src.Close()
		return run(src, m, sink)
	}
	if ing, ok := t.(Ingester); ok {
		src, err := open()
		if err != nil {
			return Stats{}, err
		}
		defer src.Close()
		return ingestFile(ctx, ing, src, m)
	}
	if c, ok := t.(Checker); ok {
		if _, err := pass(func(recs []routing.Record) (int, error) { return 0, c.CheckAppend(recs) }); err != nil {
			return Stats{}, fmt.Errorf("%w (nothing was written)", err)
		}
	}
	var total Stats
	return pass(func(recs []routing.Record) (int, error) {
		n, err := t.Append(ctx, recs)
		total.Read += int64(len(recs))
		total.Appended += int64(n)
		if m.Progress != nil && err == nil {
			m.Progress(total)
		}
		return n, err
	})
}

// checkExt refuses a path whose extension is neither .parquet nor .csv.
func checkExt(path string) error {
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".parquet" && ext != ".csv" {
		return fmt.Errorf("load: unsupported file type %q (want .parquet or .csv)", filepath.Ext(path))
	}
	return nil
}

// openSource opens path as a Parquet or CSV source, by its extension.
func openSource(ctx context.Context, path string) (recordSource, error) {
	if err := checkExt(path); err != nil {
		return nil, err
	}
	if strings.ToLower(filepath.Ext(path)) == ".parquet" {
		return openParquet(ctx, path)
	}
	return openCSV(path)
}

// ingestFile writes every record of src through ing in one request (Ingester). Stats.Read
// counts the rows converted, Stats.Appended the records stored (all or none); m.Progress sees
// the rows handed on so far (Appended stays 0 until the end: nothing is stored before the
// whole file commits).
func ingestFile(ctx context.Context, ing Ingester, src recordSource, m Mapping) (Stats, error) {
	conv, err := NewConverter(src.Schema(), m)
	if err != nil {
		return Stats{}, err
	}
	fs := &fileSource{src: src, conv: conv, progress: m.Progress}
	n, err := ing.Ingest(ctx, fs)
	st := Stats{Read: fs.row, Appended: n}
	if err != nil {
		return st, fmt.Errorf("load: %w (records count from 0; nothing was written)", err)
	}
	return st, nil
}

// fileSource is a routing.RecordSource over the rows of a source file, BatchSize records at a
// time.
type fileSource struct {
	src      recordSource
	conv     *Converter
	progress func(Stats)
	cur      arrow.RecordBatch // the batch being converted (owned by src)
	off      int
	row      int64
	recs     []routing.Record
}

// ValuesAreJSON implements routing.JSONSource: wide rows' values are encoded as JSON.
func (f *fileSource) ValuesAreJSON() bool { return f.conv.EncodesValues() }

func (f *fileSource) Next(context.Context) ([]routing.Record, error) {
	f.recs = f.recs[:0]
	for len(f.recs) < BatchSize {
		if f.cur == nil || f.off >= int(f.cur.NumRows()) {
			rec, err := f.src.Next()
			if err == io.EOF {
				if len(f.recs) == 0 {
					return nil, io.EOF
				}
				break
			}
			if err != nil {
				return nil, err
			}
			f.cur, f.off = rec, 0
			continue
		}
		hi := min(int(f.cur.NumRows()), f.off+BatchSize-len(f.recs))
		var err error
		if f.recs, err = f.conv.Append(f.recs, f.cur, f.off, hi, f.row); err != nil {
			return nil, err
		}
		f.row += int64(hi - f.off)
		f.off = hi
	}
	if f.progress != nil {
		f.progress(Stats{Read: f.row})
	}
	return f.recs, nil
}

// recordSource yields Arrow batches of a source file.
type recordSource interface {
	Schema() *arrow.Schema
	Next() (arrow.RecordBatch, error) // io.EOF at the end; the batch is released by the source
	Close() error
}

type columns struct {
	part, ts, id int
	value        []int
}

func resolve(schema *arrow.Schema, m Mapping) (columns, error) {
	find := func(name string) (int, error) {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return -1, fmt.Errorf("load: source has no single column %q", name)
		}
		return idx[0], nil
	}
	var c columns
	var err error
	if c.part, err = find(m.Partition); err != nil {
		return c, err
	}
	if c.ts, err = find(m.Time); err != nil {
		return c, err
	}
	c.id = -1
	if m.ID != "" {
		if c.id, err = find(m.ID); err != nil {
			return c, err
		}
	}
	if len(m.Value) > 0 {
		for _, v := range m.Value {
			i, err := find(v)
			if err != nil {
				return c, err
			}
			c.value = append(c.value, i)
		}
	} else {
		for i := range schema.NumFields() {
			if i != c.part && i != c.ts && i != c.id {
				c.value = append(c.value, i)
			}
		}
	}
	return c, nil
}

// run converts the records of src and hands them to sink in batches of BatchSize; sink returns
// how many it wrote. Errors name the source row (zero-based), never values.
func run(src recordSource, m Mapping, sink func([]routing.Record) (int, error)) (Stats, error) {
	conv, err := NewConverter(src.Schema(), m)
	if err != nil {
		return Stats{}, err
	}
	var st Stats
	batch := make([]routing.Record, 0, BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		first := st.Read - int64(len(batch))
		n, err := sink(batch)
		st.Appended += int64(n)
		batch = batch[:0]
		if err != nil {
			return fmt.Errorf("load: rows %d to %d: %w", first, st.Read-1, err)
		}
		return nil
	}
	for {
		rec, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, err
		}
		for lo := 0; lo < int(rec.NumRows()); {
			hi := min(int(rec.NumRows()), lo+BatchSize-len(batch))
			if batch, err = conv.Append(batch, rec, lo, hi, st.Read); err != nil {
				return st, err
			}
			st.Read += int64(hi - lo)
			lo = hi
			if len(batch) == BatchSize {
				if err := flush(); err != nil {
					return st, err
				}
			}
		}
	}
	return st, flush()
}

// Converter turns the rows of Arrow batches of one schema into routed records with a Mapping:
// the conversion `flightsrv load` and Flight SQL ingest share (server/ingest.go). It is
// immutable after NewConverter and safe for concurrent use.
type Converter struct {
	m       Mapping
	cols    columns
	keys    [][]byte // the JSON-quoted names of the value columns
	payload int      // the Payload column, -1 when the value is encoded from columns
}

// EncodesValues reports whether the converter encodes each record's value as a JSON object
// of the value columns (always valid JSON), rather than taking it as it is from the Payload
// column.
func (c *Converter) EncodesValues() bool { return c.payload < 0 }

// NewConverter resolves m against schema: the partition and time columns must exist once each,
// and so must the id column when m.ID is set, the Payload column when m.Payload is set (a
// string or binary column) and every column of m.Value. Errors name the column, not values.
func NewConverter(schema *arrow.Schema, m Mapping) (*Converter, error) {
	if m.Partition == "" || m.Time == "" {
		return nil, errors.New("load: the mapping needs a partition column and a time column")
	}
	if m.IDWidth <= 0 {
		m.IDWidth = 10
	}
	c := &Converter{m: m, payload: -1}
	var err error
	if c.cols, err = resolve(schema, m); err != nil {
		return nil, err
	}
	if m.Payload != "" {
		idx := schema.FieldIndices(m.Payload)
		if len(idx) != 1 {
			return nil, fmt.Errorf("load: source has no single column %q", m.Payload)
		}
		switch schema.Field(idx[0]).Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		default:
			return nil, fmt.Errorf("load: value column %q must be text or binary, not %s", m.Payload, schema.Field(idx[0]).Type)
		}
		c.payload, c.cols.value = idx[0], nil
	}
	c.keys = make([][]byte, len(c.cols.value))
	for i, ci := range c.cols.value {
		c.keys[i], _ = json.Marshal(schema.Field(ci).Name)
	}
	return c, nil
}

// Append appends to dst the records of rows [lo, hi) of rec, whose schema must be the
// converter's; first is the source row number of rec's row lo (generated ids and error
// messages count from it). A null partition, time, id or payload, a time that does not parse
// and a binary key that is not UTF-8 are errors naming the row and column, never the value;
// dst is then returned as it was. The records own their bytes (copies of rec's).
func (c *Converter) Append(dst []routing.Record, rec arrow.RecordBatch, lo, hi int, first int64) ([]routing.Record, error) {
	m, cols := &c.m, &c.cols
	n0 := len(dst)
	for r := lo; r < hi; r++ {
		row := first + int64(r-lo)
		if rec.Column(cols.part).IsNull(r) || rec.Column(cols.ts).IsNull(r) {
			return dst[:n0], fmt.Errorf("load: row %d has a null partition or time", row)
		}
		ts, err := timeAt(rec.Column(cols.ts), r)
		if err != nil {
			return dst[:n0], fmt.Errorf("load: row %d: %w", row, err)
		}
		part, err := keyAt(rec.Column(cols.part), r)
		if err != nil {
			return dst[:n0], fmt.Errorf("load: row %d: partition column %q: %w", row, m.Partition, err)
		}
		var id []byte
		if cols.id >= 0 {
			if rec.Column(cols.id).IsNull(r) {
				return dst[:n0], fmt.Errorf("load: row %d has a null id", row)
			}
			if id, err = keyAt(rec.Column(cols.id), r); err != nil {
				return dst[:n0], fmt.Errorf("load: row %d: id column %q: %w", row, m.ID, err)
			}
		} else {
			id = fmt.Appendf(nil, "%0*d", m.IDWidth, row)
		}
		var val []byte
		if c.payload >= 0 {
			col := rec.Column(c.payload)
			if col.IsNull(r) {
				return dst[:n0], fmt.Errorf("load: row %d has a null value", row)
			}
			val = bytesAt(col, r)
		} else {
			val = make([]byte, 0, 64)
			val = append(val, '{')
			for i, ci := range cols.value {
				if i > 0 {
					val = append(val, ',')
				}
				val = append(val, c.keys[i]...)
				val = append(val, ':')
				val = appendJSON(val, rec.Column(ci), r)
			}
			val = append(val, '}')
		}
		dst = append(dst, routing.Record{PartitionKey: part, EventTime: ts, SortKey: id, Value: val})
	}
	return dst, nil
}

// bytesAt returns a copy of the bytes of a string or binary value.
func bytesAt(col arrow.Array, i int) []byte {
	switch a := col.(type) {
	case *array.Binary:
		return bytes.Clone(a.Value(i))
	case *array.LargeBinary:
		return bytes.Clone(a.Value(i))
	case *array.BinaryView:
		return bytes.Clone(a.Value(i))
	}
	return []byte(textAt(col, i))
}

// timeAt reads an event time; zone-less timestamps are taken as UTC wall-clock values.
func timeAt(col arrow.Array, i int) (time.Time, error) {
	switch a := col.(type) {
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	case *array.Date32:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Date64:
		return a.Value(i).ToTime().UTC(), nil
	case *array.String, *array.LargeString, *array.StringView:
		return parseTime(textAt(col, i))
	}
	return time.Time{}, fmt.Errorf("time column has unsupported type %s", col.DataType())
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", "2006-01-02"}

func parseTime(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("time value is not RFC 3339 or YYYY-MM-DD[ HH:MM:SS]")
}

// ErrInvalidUTF8 is returned for a binary partition or id value that is not valid UTF-8: the
// SQL surface maps both to text columns (docs/pulpitum-v4.md §5.1), so such a value could
// never be queried.
var ErrInvalidUTF8 = errors.New("load: binary value is not valid UTF-8")

// keyAt returns the bytes of a partition or id value: the UTF-8 bytes of a string, the raw
// bytes of a binary value (a Parquet BYTE_ARRAY without a UTF8 annotation reads as binary)
// when they are valid UTF-8 (ErrInvalidUTF8 otherwise), and the text rendering of any other
// type (numbers, dates).
func keyAt(col arrow.Array, i int) ([]byte, error) {
	var raw []byte
	switch a := col.(type) {
	case *array.Binary:
		raw = a.Value(i)
	case *array.LargeBinary:
		raw = a.Value(i)
	case *array.BinaryView:
		raw = a.Value(i)
	case *array.FixedSizeBinary:
		raw = a.Value(i)
	default:
		return []byte(textAt(col, i)), nil
	}
	if !utf8.Valid(raw) {
		return nil, ErrInvalidUTF8
	}
	return bytes.Clone(raw), nil
}

// textAt renders a value as text (the partition and id columns).
func textAt(col arrow.Array, i int) string {
	switch a := col.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.StringView:
		return a.Value(i)
	}
	return col.ValueStr(i)
}

// appendJSON appends the JSON form of col[i].
func appendJSON(dst []byte, col arrow.Array, i int) []byte {
	if col.IsNull(i) {
		return append(dst, "null"...)
	}
	switch a := col.(type) {
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10)
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10)
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10)
	case *array.Float32:
		return appendFloatJSON(dst, float64(a.Value(i)), 32)
	case *array.Float64:
		return appendFloatJSON(dst, a.Value(i), 64)
	case *array.Boolean:
		return strconv.AppendBool(dst, a.Value(i))
	case *array.Timestamp:
		t, _ := timeAt(a, i)
		b, _ := json.Marshal(t.Format(time.RFC3339Nano))
		return append(dst, b...)
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		dst = append(dst, '{')
		for k := range st.NumFields() {
			if k > 0 {
				dst = append(dst, ',')
			}
			key, _ := json.Marshal(st.Field(k).Name)
			dst = append(append(dst, key...), ':')
			dst = appendJSON(dst, a.Field(k), i)
		}
		return append(dst, '}')
	case *array.Map:
		// The entries are the rows [start, end) of the map's struct child (key, value).
		start, end := a.ValueOffsets(i)
		entries := a.ListValues().(*array.Struct)
		keys, items := entries.Field(0), entries.Field(1)
		dst = append(dst, '{')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			key, _ := json.Marshal(textAt(keys, int(j)))
			dst = append(append(dst, key...), ':')
			dst = appendJSON(dst, items, int(j))
		}
		return append(dst, '}')
	case array.ListLike: // list, large list, list view, fixed-size list
		start, end := a.ValueOffsets(i)
		values := a.ListValues()
		dst = append(dst, '[')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, values, int(j))
		}
		return append(dst, ']')
	}
	b, _ := json.Marshal(textAt(col, i))
	return append(dst, b...)
}

// appendFloatJSON appends a float of bits (32 or 64) bits: the shortest decimal that reads
// back as the value, or, for NaN and the infinities, which JSON cannot hold, the strings
// "NaN", "Infinity" and "-Infinity" (PostgreSQL's to_jsonb of a float8).
func appendFloatJSON(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

type parquetSource struct {
	f   *file.Reader
	rr  pqarrow.RecordReader
	cur arrow.RecordBatch
}

func openParquet(ctx context.Context, path string) (*parquetSource, error) {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("load: open parquet: %w", err)
	}
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 8192}, memory.DefaultAllocator)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load: read parquet schema: %w", err)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load: read parquet: %w", err)
	}
	return &parquetSource{f: f, rr: rr}, nil
}

func (p *parquetSource) Schema() *arrow.Schema { return p.rr.Schema() }

func (p *parquetSource) Next() (arrow.RecordBatch, error) {
	if p.rr.Next() {
		return p.rr.RecordBatch(), nil
	}
	if err := p.rr.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("load: read parquet: %w", err)
	}
	return nil, io.EOF
}

func (p *parquetSource) Close() error {
	p.rr.Release()
	return p.f.Close()
}

// csvSource reads a CSV file with a header row; every column is text.
type csvSource struct {
	f      *os.File
	r      *csv.Reader
	schema *arrow.Schema
	cur    arrow.RecordBatch
}

func openCSV(path string) (*csvSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load: open csv: %w", err)
	}
	r := csv.NewReader(f)
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("load: read csv header: %w", err)
	}
	fields := make([]arrow.Field, len(header))
	for i, h := range header {
		fields[i] = arrow.Field{Name: strings.TrimSpace(h), Type: arrow.BinaryTypes.String, Nullable: true}
	}
	return &csvSource{f: f, r: r, schema: arrow.NewSchema(fields, nil)}, nil
}

func (c *csvSource) Schema() *arrow.Schema { return c.schema }

func (c *csvSource) Next() (arrow.RecordBatch, error) {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, c.schema)
	defer b.Release()
	n := 0
	for n < 8192 {
		row, err := c.r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("load: read csv: %w", err)
		}
		for i := range row {
			b.Field(i).(*array.StringBuilder).Append(row[i])
		}
		n++
	}
	if n == 0 {
		return nil, io.EOF
	}
	c.cur = b.NewRecordBatch()
	return c.cur, nil
}

func (c *csvSource) Close() error {
	if c.cur != nil {
		c.cur.Release()
	}
	return c.f.Close()
}
