package server

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
)

// ingestChunk is how many rows of a client's batch are converted at once: a huge batch is
// split, so that the records held at a time stay small whatever the client sends.
const ingestChunk = 8192

// ingester carries out Flight SQL bulk ingest (flightsql.Ingester) over the served tables:
// the rows are mapped to records by the conversion `flightsrv load` uses (internal/load) and
// written with routing.DurableTable.Ingest, all or nothing, behind the write fence
// (docs/pulpitum-v4.md §3.1). Safe for concurrent use.
type ingester struct {
	tables map[string]*routing.DurableTable // by lower-case name
	memory int64                            // --query-memory: the bytes one request may hold (<= 0: no bound)
}

func newIngester(tables []*routing.DurableTable, memory int64) *ingester {
	g := &ingester{tables: map[string]*routing.DurableTable{}, memory: memory}
	for _, t := range tables {
		g.tables[strings.ToLower(t.Def().Name)] = t
	}
	return g
}

// Ingest writes rows into the table named table. Rows come in one of two shapes
// (docs/flightsql-clients.md, bulk ingest): narrow — exactly the table's partition column,
// timestamp, id and value (text or binary, stored as it is) — or wide — the partition column,
// timestamp and id, every other column encoded into the JSON value as `flightsrv load` does.
// Column names match case-insensitively. Errors are gRPC statuses naming the rule that
// refused the request and the row (counted from 0), never a value; nothing is stored then.
func (g *ingester) Ingest(ctx context.Context, table string, rows array.RecordReader) (n int64, err error) {
	t := g.tables[strings.ToLower(table)]
	if t == nil {
		return 0, status.Error(codes.NotFound, "the table is not served (routed tables are defined by the server's --table option)")
	}
	schema := rows.Schema()
	if schema == nil {
		return 0, status.Error(codes.InvalidArgument, "the ingest stream has no schema; nothing was stored")
	}
	m, err := ingestMapping(t.Def(), schema)
	if err != nil {
		return 0, err
	}
	conv, err := load.NewConverter(schema, m)
	if err != nil {
		return 0, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "load: ")+"; nothing was stored")
	}
	stream := query.NewWriteStream(rows, g.memory, query.ErrWriteStream)
	defer stream.Close()
	src := &ingestSource{rows: stream, conv: conv}
	n, err = t.Ingest(ctx, src)
	if err != nil {
		return 0, err // typed: flightsql words the fence's refusals (refusals.go)
	}
	return n, nil
}

// ingestMapping maps the columns of schema onto def's table (Ingest's two shapes). The
// table's columns (partition, timestamp, id, value) match whatever their case; two columns
// matching one of them are ambiguous and refused, naming it (trial 32 m5: the first was
// used). The other columns, encoded into the JSON value, keep their names as they are.
func ingestMapping(def routing.TableDef, schema *arrow.Schema) (load.Mapping, error) {
	for _, name := range []string{def.PartitionColumn, "timestamp", "id", "value"} {
		n := 0
		for _, f := range schema.Fields() {
			if strings.EqualFold(f.Name, name) {
				n++
			}
		}
		if n > 1 {
			return load.Mapping{}, status.Errorf(codes.InvalidArgument, "the rows have %d columns named %s but for case; nothing was stored", n, name)
		}
	}
	find := func(name string) string {
		for _, f := range schema.Fields() {
			if strings.EqualFold(f.Name, name) {
				return f.Name
			}
		}
		return ""
	}
	m := load.Mapping{Partition: find(def.PartitionColumn), Time: find("timestamp"), ID: find("id")}
	if m.Partition == "" || m.Time == "" || m.ID == "" {
		return m, status.Errorf(codes.InvalidArgument,
			"the rows need the columns %s, timestamp and id, and either value or the columns to encode into it; nothing was stored", def.PartitionColumn)
	}
	if v := find("value"); v != "" && schema.NumFields() == 4 {
		m.Payload = v
	}
	return m, nil
}

// ingestSource converts the client's batches, ingestChunk rows at a time, into records for
// the write fence, the bytes of one chunk claimed against --query-memory (query.WriteStream).
type ingestSource struct {
	rows *query.WriteStream
	conv *load.Converter
	row  int64 // the request's rows converted so far
	recs []routing.Record
}

// ValuesAreJSON implements routing.JSONSource: wide rows' values are encoded as JSON.
func (s *ingestSource) ValuesAreJSON() bool { return s.conv.EncodesValues() }

// Next returns the next chunk's records. It may run on a store's goroutine (pgx's COPY), so
// it recovers its own panics (a batch arrow-go decoded but cannot read is the client's fault).
func (s *ingestSource) Next(ctx context.Context) (recs []routing.Record, err error) {
	defer panics.Recover("ingest source", &err)
	rec, lo, hi, err := s.rows.Span(ctx, ingestChunk)
	if err != nil {
		return nil, err
	}
	if err := s.rows.Claim(chunkBytes(rec, lo, hi)); err != nil {
		return nil, err
	}
	if s.recs, err = s.conv.Append(s.recs[:0], rec, lo, hi, s.row); err != nil {
		return nil, status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "load: ")+"; nothing was stored")
	}
	s.row += int64(hi - lo)
	return s.recs, nil
}

// chunkBytes estimates the bytes rows [lo, hi) of rec take as records: their share of the
// batch's buffers plus a fixed cost per record.
func chunkBytes(rec arrow.RecordBatch, lo, hi int) int64 {
	var total int64
	for _, col := range rec.Columns() {
		for _, b := range col.Data().Buffers() {
			if b != nil {
				total += int64(b.Len())
			}
		}
	}
	rows := int64(rec.NumRows())
	if rows == 0 {
		return 0
	}
	return total*int64(hi-lo)/rows + int64(hi-lo)*128
}

// ingestMemory is the bytes one ingest request may hold: Config.QueryMemory's rule (0: the
// query default, negative: no bound).
func ingestMemory(queryMemory int64) int64 {
	if queryMemory == 0 {
		return query.DefaultQueryMemory
	}
	return queryMemory
}
