package query

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/substrait"
)

// ErrWriteStream is the refusal of a write request whose client stream (bulk-ingest rows,
// INSERT parameter rows) does not decode as Arrow batches of its schema.
var ErrWriteStream = errors.New("the client's stream could not be read as Arrow batches of its schema")

// IsUpdate reports whether sql is a statement the engine executes as an update
// (ExecuteUpdate): an INSERT (substrait.PrepareInsert's forms), or a SET or RESET
// (substrait.CheckSet), which changes nothing and answers 0 rows.
func (e *Engine) IsUpdate(sql string) bool { return substrait.IsInsert(sql) || substrait.IsSet(sql) }

// prepareInsert is Prepare of an INSERT: an empty dataset schema and the statement's
// parameters.
func (e *Engine) prepareInsert(sql string) (*substrait.Insert, error) {
	defer planningWeight(len(sql))()
	return substrait.PrepareInsert(sql, e.cat)
}

// ExecuteUpdate executes an INSERT at once, all or nothing: every VALUES row once per row of
// params (nil, or a reader without rows, for a statement without parameters: once), written
// through routing.DurableTable.Ingest (the write fence, one transaction). params is the
// client's DoPut stream of parameter batches; ExecuteUpdate reads it to its end, holding one
// chunk of records at a time (bounded by --query-memory: a *ledger.LimitExceededError), and
// does not release it. It returns the rows stored. Errors are typed, for the protocol layer to
// word: a *substrait.Error (planning; a statement with parameters and no parameter rows), the
// routing sentinels of the fence (a bad bound value is routing.ErrInvalidRecord),
// ErrWriteStream, ErrTableNotFound, the context's error.
func (e *Engine) ExecuteUpdate(ctx context.Context, sql string, params array.RecordReader) (int64, error) {
	if substrait.IsSet(sql) {
		// A SET or RESET that keeps every statement's semantics changes nothing (CheckSet).
		return 0, substrait.CheckSet(sql)
	}
	ins, err := e.prepareInsert(sql)
	if err != nil {
		return 0, err
	}
	t := e.tables[strings.ToLower(ins.Table().Name)]
	if t == nil {
		return 0, ErrTableNotFound
	}
	rows := NewWriteStream(params, e.opts.QueryMemory, ErrWriteStream)
	defer rows.Close()
	src := &insertSource{ins: ins, rows: rows}
	n, err := t.Ingest(ctx, src)
	if err != nil {
		return 0, err
	}
	if n == 0 && src.bound == 0 && ins.ParameterSchema().NumFields() > 0 {
		return 0, &substrait.Error{Code: substrait.InvalidArgument, Msg: fmt.Sprintf("the statement has %d parameters and no parameter rows were bound", ins.ParameterSchema().NumFields())}
	}
	return n, nil
}

// WriteStream reads the client's stream of a write request (bulk-ingest rows, INSERT
// parameter rows) in spans of rows, holding the batch being read and claiming, in a ledger
// bounded by --query-memory, the bytes of the records being built from one span. Not safe for
// concurrent use; Close releases what it holds.
type WriteStream struct {
	rdr     array.RecordReader // nil: a stream without rows
	ledger  *ledger.Ledger
	claimed int64
	cur     arrow.RecordBatch // the batch being read (retained), nil between batches
	off     int               // its next row
	unread  error             // the refusal of a stream that does not decode
}

// NewWriteStream reads rdr (nil: no rows) under a memory limit of limit bytes (<= 0: none);
// unread is the error returned for a stream whose batches do not decode.
func NewWriteStream(rdr array.RecordReader, limit int64, unread error) *WriteStream {
	return &WriteStream{rdr: rdr, ledger: ledger.New(nil, limit), unread: unread}
}

// Span gives back the previous span's claim and returns the next at most max rows [lo, hi) of
// the stream's current batch, moving to the next batch when one is used up (batches without
// rows are skipped). It returns io.EOF at the stream's end, ctx's error once ctx is done, and
// the unread error when the client's stream fails otherwise.
func (w *WriteStream) Span(ctx context.Context, max int) (rec arrow.RecordBatch, lo, hi int, err error) {
	w.ledger.Unclaim(w.claimed)
	w.claimed = 0
	for w.cur == nil || w.off >= int(w.cur.NumRows()) {
		if w.cur != nil {
			w.cur.Release()
			w.cur = nil
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, err
		}
		if w.rdr == nil || !w.rdr.Next() {
			if w.rdr != nil {
				if err := w.rdr.Err(); err != nil && !errors.Is(err, io.EOF) {
					if ctx.Err() != nil {
						return nil, 0, 0, ctx.Err()
					}
					// The reader's error stays in the chain: the transport's own refusal
					// (a client quiet too long: flightsql's --put-idle-timeout) is reported
					// as itself.
					return nil, 0, 0, fmt.Errorf("%w: %w", w.unread, err)
				}
			}
			return nil, 0, 0, io.EOF
		}
		w.cur, w.off = w.rdr.RecordBatch(), 0
		w.cur.Retain()
	}
	lo, hi = w.off, min(int(w.cur.NumRows()), w.off+max)
	w.off = hi
	return w.cur, lo, hi, nil
}

// Claim claims n more bytes for the span being converted (given back by the next Span or
// Close); past the limit it claims nothing and returns the ledger's *LimitExceededError.
func (w *WriteStream) Claim(n int64) error {
	if err := w.ledger.Claim(n); err != nil {
		return err
	}
	w.claimed += n
	return nil
}

// Close releases the batch held and gives back the claim.
func (w *WriteStream) Close() {
	if w.cur != nil {
		w.cur.Release()
		w.cur = nil
	}
	w.ledger.Unclaim(w.claimed)
	w.claimed = 0
}

// insertChunk bounds the parameter rows one Next of an insertSource binds.
const insertChunk = 8192

// insertSource yields the records of an INSERT's executions: once without parameters, else
// once per parameter row of the client's stream.
type insertSource struct {
	ins   *substrait.Insert
	rows  *WriteStream
	bound int64 // parameter rows bound so far
	done  bool
	recs  []routing.Record
}

func (s *insertSource) Next(ctx context.Context) (recs []routing.Record, err error) {
	defer panics.Recover("insert source", &err)
	s.recs = s.recs[:0]
	if s.ins.ParameterSchema().NumFields() == 0 {
		if s.done {
			return nil, io.EOF
		}
		s.done = true
		if s.recs, err = s.ins.Records(s.recs, nil, 0); err != nil {
			return nil, e2s(err)
		}
		return s.recs, nil
	}
	rec, lo, hi, err := s.rows.Span(ctx, insertChunk)
	if err != nil {
		return nil, err
	}
	for row := lo; row < hi; row++ {
		if s.recs, err = s.ins.Records(s.recs, rec, row); err != nil {
			return nil, e2s(err)
		}
	}
	s.bound += int64(hi - lo)
	var need int64
	for i := range s.recs {
		r := &s.recs[i]
		need += int64(len(r.PartitionKey)+len(r.SortKey)+len(r.Value)) + 96
	}
	if err := s.rows.Claim(need); err != nil {
		return nil, err
	}
	return s.recs, nil
}

// e2s makes a binding error (a *substrait.Error naming the parameter) a refusal of the
// fence's record rules (routing.ErrInvalidRecord), as a bad row of bulk ingest is.
func e2s(err error) error {
	var pe *substrait.Error
	if errors.As(err, &pe) {
		return fmt.Errorf("%w: %s", routing.ErrInvalidRecord, pe.Msg)
	}
	return err
}
