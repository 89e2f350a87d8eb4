package query

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/substrait"
)

// WriteError turns an error of a write request (routing.DurableTable.Ingest: Flight SQL bulk
// ingest, INSERT) into the client's gRPC status: which rule of the write fence refused the
// request (docs/pulpitum-v4.md §3.1), always saying that nothing was stored, never a value.
// Status errors pass unchanged; ctx's cancellation is CANCELLED (or its cause when that is a
// status); an error it does not know is returned as it is (INTERNAL at the protocol layer).
func WriteError(ctx context.Context, err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	trim := func(e error) string { return strings.TrimPrefix(e.Error(), "routing: ") }
	switch {
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, routing.ErrOperationFailed)):
		if cause := context.Cause(ctx); cause != nil {
			if _, ok := status.FromError(cause); ok {
				return cause
			}
		}
		return status.Error(codes.Canceled, "the write was cancelled; nothing was stored")
	case errors.Is(err, routing.ErrInvalidRecord), errors.Is(err, routing.ErrOutsideWriteWindow):
		return status.Error(codes.InvalidArgument, trim(err)+"; nothing was stored")
	case errors.Is(err, routing.ErrDuplicateRecord):
		return status.Error(codes.AlreadyExists, "a row with the same partition, timestamp and id is already stored, or repeated in the request; nothing was stored")
	case errors.Is(err, routing.ErrBucketReadOnly):
		return status.Error(codes.FailedPrecondition, "a bucket the rows fall into is being archived or archived, and takes no more rows; nothing was stored")
	case errors.Is(err, routing.ErrStrategyMismatch):
		return status.Error(codes.FailedPrecondition, trim(routing.ErrStrategyMismatch)+"; nothing was stored")
	case errors.Is(err, routing.ErrCommitOutcome):
		return status.Error(codes.Unknown, "the store did not confirm the commit: the rows may or may not be stored; count them before sending them again")
	case errors.Is(err, routing.ErrUnavailable):
		return status.Error(codes.Unavailable, "store unavailable, retry later; nothing was stored")
	}
	return err
}

// WriteMemoryError is the refusal of a write request whose batch needs more than limit bytes
// (--query-memory).
func WriteMemoryError(limit int64) error {
	return status.Errorf(codes.ResourceExhausted,
		"a batch of the write needs more than the memory limit of %d bytes (--query-memory); send smaller batches; nothing was stored", limit)
}

// IsUpdate reports whether sql is a statement the engine executes as an update
// (ExecuteUpdate): an INSERT (substrait.PrepareInsert's forms).
func (e *Engine) IsUpdate(sql string) bool { return substrait.IsInsert(sql) }

// prepareInsert is Prepare of an INSERT: an empty dataset schema and the statement's
// parameters.
func (e *Engine) prepareInsert(sql string) (*substrait.Insert, error) {
	ins, err := substrait.PrepareInsert(sql, e.cat)
	if err != nil {
		return nil, e.planError(err)
	}
	return ins, nil
}

// ExecuteUpdate executes an INSERT at once, all or nothing: every VALUES row once per row of
// params (nil, or a reader without rows, for a statement without parameters: once), written
// through routing.DurableTable.Ingest (the write fence, one transaction). params is the
// client's DoPut stream of parameter batches; ExecuteUpdate reads it to its end, holding one
// chunk of records at a time (bounded by --query-memory), and does not release it. It returns
// the rows stored. Errors are gRPC statuses (planError, WriteError): a statement with
// parameters and no parameter rows is INVALID_ARGUMENT.
func (e *Engine) ExecuteUpdate(ctx context.Context, sql string, params array.RecordReader) (int64, error) {
	ins, err := e.prepareInsert(sql)
	if err != nil {
		return 0, err
	}
	t := e.tables[strings.ToLower(ins.Table().Name)]
	if t == nil {
		return 0, status.Error(codes.NotFound, "the table is not served")
	}
	src := &insertSource{ins: ins, params: params, ledger: ledger.New(nil, e.opts.QueryMemory), limit: e.opts.QueryMemory}
	defer src.release()
	n, err := t.Ingest(ctx, src)
	if err != nil {
		return 0, WriteError(ctx, err)
	}
	if n == 0 && src.bound == 0 && ins.ParameterSchema().NumFields() > 0 {
		return 0, status.Errorf(codes.InvalidArgument, "the statement has %d parameters and no parameter rows were bound", ins.ParameterSchema().NumFields())
	}
	return n, nil
}

// insertChunk bounds the records one Next of an insertSource returns (before the last row's
// VALUES rows).
const insertChunk = 8192

// insertSource yields the records of an INSERT's executions: once without parameters, else
// once per parameter row of the client's stream.
type insertSource struct {
	ins     *substrait.Insert
	params  array.RecordReader
	ledger  *ledger.Ledger
	limit   int64
	claimed int64
	cur     arrow.RecordBatch // retained batch of parameters, nil between batches
	row     int
	bound   int64 // parameter rows bound so far
	done    bool
	recs    []routing.Record
}

func (s *insertSource) Next(ctx context.Context) (recs []routing.Record, err error) {
	defer panics.Recover("insert source", &err)
	s.ledger.Unclaim(s.claimed)
	s.claimed = 0
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
	for len(s.recs) < insertChunk {
		if s.cur == nil || s.row >= int(s.cur.NumRows()) {
			if s.cur != nil {
				s.cur.Release()
				s.cur = nil
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if s.params == nil || !s.params.Next() {
				if s.params != nil {
					if err := s.params.Err(); err != nil && !errors.Is(err, io.EOF) {
						if ctx.Err() != nil {
							return nil, ctx.Err()
						}
						return nil, status.Error(codes.InvalidArgument, "the parameter stream could not be read; nothing was stored")
					}
				}
				if len(s.recs) == 0 {
					return nil, io.EOF
				}
				break
			}
			s.cur, s.row = s.params.RecordBatch(), 0
			s.cur.Retain()
			continue
		}
		if s.recs, err = s.ins.Records(s.recs, s.cur, s.row); err != nil {
			return nil, e2s(err)
		}
		s.row++
		s.bound++
	}
	var need int64
	for i := range s.recs {
		r := &s.recs[i]
		need += int64(len(r.PartitionKey)+len(r.SortKey)+len(r.Value)) + 96
	}
	if err := s.ledger.Claim(need); err != nil {
		return nil, WriteMemoryError(s.limit)
	}
	s.claimed = need
	return s.recs, nil
}

// e2s maps a binding error (a *substrait.Error) to its status, saying nothing was stored.
func e2s(err error) error {
	var pe *substrait.Error
	if errors.As(err, &pe) {
		return status.Error(codes.InvalidArgument, pe.Msg+"; nothing was stored")
	}
	return err
}

func (s *insertSource) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
	s.ledger.Unclaim(s.claimed)
	s.claimed = 0
}
