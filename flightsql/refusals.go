package flightsql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// This file is where the server's refusals get their gRPC codes and their words. The layers
// below return typed errors that carry their facts (a limit, a count, a table name) and no
// gRPC code; Status maps each to the code a client can act on and to a message that names the
// server setting the bound comes from, by its serve flag, and never a partition value, a key,
// a path or a database's own error text (docs/architecture.md, "Errors").

// The serve flags that set the bounds a refusal names. cmd/flightsrv defines them.
const (
	flagQueryMemory      = "--query-memory"
	flagTotalQueryMemory = "--total-query-memory"
	flagQueryCPU         = "--query-cpu"
	flagQueryMaxRows     = "--query-max-rows"
	flagQueryConnections = "--query-connections"
	flagMaxBuckets       = "--max-buckets"
	flagMaxPartitions    = "--max-partitions"
	flagAnalyticalParts  = "--analytical-max-partitions"
	flagMaxQueries       = "--max-queries"
	flagMaxQueued        = "--max-queued"
	flagQueueWait        = "--queue-wait"
	flagQueryTimeout     = "--query-timeout"
)

// QueueFullError is the admission refusal of a query that finds Slots queries running and
// Queued waiting, the most allowed (UNAVAILABLE: retry later).
type QueueFullError struct{ Slots, Queued int }

func (e *QueueFullError) Error() string {
	return fmt.Sprintf("admission: %d running and %d waiting", e.Slots, e.Queued)
}

// QueueWaitError is the admission refusal of a query that waited Wait for one of Slots query
// slots (UNAVAILABLE: retry later).
type QueueWaitError struct {
	Wait  time.Duration
	Slots int
}

func (e *QueueWaitError) Error() string {
	return fmt.Sprintf("admission: waited %s for one of %d query slots", e.Wait, e.Slots)
}

// ErrShuttingDown is the admission refusal of new work while the server drains (UNAVAILABLE:
// retry on another replica).
var ErrShuttingDown = errors.New("admission: the server is shutting down")

// QueryTimeoutError is the error of a query whose stream ran longer than Limit
// (DEADLINE_EXCEEDED).
type QueryTimeoutError struct{ Limit time.Duration }

func (e *QueryTimeoutError) Error() string {
	return fmt.Sprintf("query ran longer than its limit of %s", e.Limit)
}

// Status converts an error to the gRPC status error a client receives: status errors pass
// through, cancellations keep their code, every typed refusal of the layers below gets its
// code and message here, and anything else becomes INTERNAL with a fixed message (a
// *querylog.InternalError, whose cause the call's log line classifies). log receives, at debug
// level, the store errors hidden from the client (nil: slog.Default()). Nil for nil.
func Status(err error, log *slog.Logger) error {
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	if s := refusal(err, log); s != nil {
		return s
	}
	// The call's log line (internal/querylog) names the cause's class; its text is logged at
	// debug level only.
	return &querylog.InternalError{Status: status.New(codes.Internal, "query could not be executed"), Cause: err}
}

// exhausted is a RESOURCE_EXHAUSTED refusal of one of the server's limits with PostgreSQL's
// SQLSTATE for the condition (sqlstate) in its details. The message is the server's own words:
// it names limits and flags, never the client's text.
func exhausted(sqlstate, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return querylog.Refusal(codes.ResourceExhausted, msg, "", sqlstate)
}

// refusal returns the status of a typed refusal, or nil when err is none.
func refusal(err error, log *slog.Logger) error {
	var (
		se    *substrait.Error
		de    *ops.DataError
		mem   *ledger.LimitExceededError
		cpu   *ledger.CPULimitExceededError
		rows  *ledger.RowLimitExceededError
		busy  *routing.ConnectionsBusyError
		bkts  *query.BucketLimitError
		parts *substrait.PartitionListError
		anl   *query.AnalyticalPartitionsError
		unsup *query.UnsupportedPlanError
		full  *QueueFullError
		wait  *QueueWaitError
		tmo   *QueryTimeoutError
	)
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "query was cancelled")
	case errors.As(err, &tmo):
		return status.Errorf(codes.DeadlineExceeded, "the query ran longer than its limit of %s (%s)", tmo.Limit, flagQueryTimeout)
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "query deadline exceeded")
	case errors.As(err, &se):
		// The client's message may quote its own text (an unknown identifier); the log line
		// holds the value-free form.
		code := codes.Internal
		switch se.Code {
		case substrait.InvalidArgument:
			code = codes.InvalidArgument
		case substrait.Unimplemented:
			code = codes.Unimplemented
		case substrait.NotFound:
			code = codes.NotFound
		}
		return querylog.Refusal(code, se.Msg, se.LogMsg, se.SQLState)
	case errors.Is(err, aggregate.ErrSumOverflow):
		// SQL's sum(bigint) is numeric and answers any total (scan/aggregate Measure.Numeric);
		// a client Substrait plan declaring an i64 sum gets bigint, whose range it passed.
		return querylog.Refusal(codes.Unimplemented, "a sum of bigint values past bigint's range is not supported (PostgreSQL answers it as numeric)", "", "0A000")
	case errors.As(err, &de):
		// A data exception of the query's expressions (division by zero, an overflow, text
		// that is no number): the query's fault, refused in PostgreSQL's words with its
		// SQLSTATE. feature_not_supported (0A000) found only at run time (a regular
		// expression over text whose meaning depends on the locale) is refused by name, as at
		// planning.
		code := codes.InvalidArgument
		if de.Code == "0A000" {
			code = codes.Unimplemented
		}
		return querylog.Refusal(code, de.Msg, de.LogMsg, de.Code)
	case errors.As(err, &mem):
		// A query past its memory ledger is PostgreSQL's out_of_memory (53200), as its own
		// refusal of memory it cannot have.
		if mem.Total {
			return exhausted("53200", "the server's queries need more than their memory limit of %d bytes (%s) together; retry later, or raise %s", mem.Limit, bytesText(mem.Limit), flagTotalQueryMemory)
		}
		return exhausted("53200", "the query needs more than its memory limit of %d bytes (%s); narrow it or raise %s", mem.Limit, bytesText(mem.Limit), flagQueryMemory)
	case errors.Is(err, ledger.ErrMemoryLimit):
		return exhausted("53200", "the query needs more than its memory limit; narrow it or raise %s", flagQueryMemory)
	case errors.As(err, &cpu):
		// PostgreSQL's query_canceled (57014), its statement_timeout's condition.
		return exhausted("57014", "the query used more than its CPU time limit of %s; narrow it or raise %s", cpu.Limit, flagQueryCPU)
	case errors.As(err, &rows):
		// The server's own limits on what one query reads: program_limit_exceeded (54000).
		return exhausted("54000", "the query reads more than its limit of %d rows; narrow it or raise %s", rows.Limit, flagQueryMaxRows)
	case errors.As(err, &bkts):
		return exhausted("54000", "the query reads %d buckets (partitions × buckets), more than this server's limit of %d (%s): narrow the time range or the partitions", bkts.Buckets, bkts.Limit, flagMaxBuckets)
	case errors.As(err, &parts):
		return status.Errorf(codes.InvalidArgument, "%s lists %d partitions, more than this server's limit of %d (%s): list fewer or split the query", parts.Table, parts.Listed, parts.Limit, flagMaxPartitions)
	case errors.As(err, &anl):
		return exhausted("54000", "the analytical read of %s finds more than %d partitions in its range, this server's limit (%s): narrow the range or pin the partitions", anl.Table, anl.Limit, flagAnalyticalParts)
	case errors.As(err, &unsup):
		// feature_not_supported (0A000), as the binder's refusals of what it does not run.
		return querylog.Refusal(codes.Unimplemented, "the Substrait plan uses a relation, expression or function the executor does not run: "+unsup.Reason, "", "0A000")
	case errors.Is(err, query.ErrEmptyQuery):
		return status.Error(codes.InvalidArgument, "empty query")
	case errors.Is(err, query.ErrBadFragment):
		return status.Error(codes.InvalidArgument, "the ticket's fragment does not fit its query; run the query again")
	case errors.Is(err, query.ErrTableNotFound):
		return status.Error(codes.NotFound, "table not found")
	case errors.Is(err, routing.ErrValueNotJSON):
		// As PostgreSQL refuses such a value of a json column (22P02).
		return querylog.Refusal(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "routing: ")+"; nothing was stored", "", "22P02")
	case errors.Is(err, errPutIdle):
		return errPutIdle
	case errors.Is(err, query.ErrWriteStream):
		// The sentinel's words only: the reader's error it wraps is the IPC decoder's.
		return status.Error(codes.InvalidArgument, query.ErrWriteStream.Error()+"; nothing was stored")
	case errors.Is(err, routing.ErrInvalidRecord), errors.Is(err, routing.ErrOutsideWriteWindow):
		// A write refused by the fence's record rules (docs/pulpitum-v4.md §3.1): the message
		// names the rule and the row's position in the request, never a value.
		return status.Error(codes.InvalidArgument, strings.TrimPrefix(err.Error(), "routing: ")+"; nothing was stored")
	case errors.Is(err, routing.ErrDuplicateRecord):
		var dup *routing.DuplicateRecordError
		if errors.As(err, &dup) {
			return status.Errorf(codes.AlreadyExists, "row %d of the request (counted from 0) has the partition, timestamp and id of a row already stored or of an earlier row of the request; nothing was stored", dup.Record)
		}
		return status.Error(codes.AlreadyExists, "a row with the same partition, timestamp and id is already stored, or repeated in the request; nothing was stored")
	case errors.Is(err, routing.ErrBucketReadOnly):
		return status.Error(codes.FailedPrecondition, "a bucket the rows fall into is being archived or archived, and takes no more rows; nothing was stored")
	case errors.Is(err, routing.ErrStrategyMismatch):
		return status.Error(codes.FailedPrecondition, strings.TrimPrefix(routing.ErrStrategyMismatch.Error(), "routing: ")+"; nothing was stored")
	case errors.Is(err, routing.ErrCommitOutcome):
		return status.Error(codes.Unknown, "the store did not confirm the commit: the rows may or may not be stored; count them before sending them again")
	case errors.Is(err, routing.ErrBinOutOfRange):
		return status.Error(codes.InvalidArgument, "a time bucket starts outside the timestamp range (1677-09-21 to 2262-04-11)")
	case errors.Is(err, routing.ErrPinMismatch):
		return status.Error(codes.FailedPrecondition, "an archived bucket this ticket was planned against has been replaced since; run the query again")
	case errors.Is(err, routing.ErrInvalidTimeRange):
		return status.Error(codes.InvalidArgument, "invalid time range")
	case errors.Is(err, routing.ErrArchiveDamaged):
		// The server log names the route (routing.RouteID) and the failed check.
		return status.Error(codes.DataLoss, "archived data this query reads is missing or damaged; the server log names the route")
	case errors.As(err, &busy):
		return status.Errorf(codes.Unavailable, "all %d hot-store connections queries may use stayed busy for %s (%s); retry later", busy.Limit, busy.Wait, flagQueryConnections)
	case errors.Is(err, routing.ErrUnavailable):
		// The call's log line (internal/querylog) reports the refusal; the store's error may
		// hold values, so it is logged at debug level only.
		if log == nil {
			log = slog.Default()
		}
		log.Debug("store unavailable", "err", err)
		return status.Error(codes.Unavailable, "store unavailable, retry later")
	case errors.As(err, &full):
		return status.Errorf(codes.Unavailable, "too many queries: %d running and %d waiting (%s, %s); retry later", full.Slots, full.Queued, flagMaxQueries, flagMaxQueued)
	case errors.As(err, &wait):
		return status.Errorf(codes.Unavailable, "waited %s for one of %d query slots (%s, %s); retry later", wait.Wait, wait.Slots, flagQueueWait, flagMaxQueries)
	case errors.Is(err, ErrShuttingDown):
		return status.Error(codes.Unavailable, "the server is shutting down; retry on another replica")
	case errors.Is(err, errForeignKey):
		return status.Error(codes.InvalidArgument, errForeignKey.Error())
	case errors.Is(err, errBadHandle):
		return status.Error(codes.InvalidArgument, errBadHandle.Error())
	}
	return nil
}

// bytesText writes n bytes in binary units as a person reads them (2 KiB, 256 MiB, 1 GiB).
func bytesText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
