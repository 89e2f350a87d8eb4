package query

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// The engine's own refusals. Like every error below the protocol boundary they are typed and
// carry no gRPC code: package flightsql maps them to codes and words them for the client
// (naming the server setting a bound comes from). Errors of the layers below (*substrait.Error,
// *ops.DataError, the ledger's limits, routing's unavailability, damage and pin mismatch)
// pass through the engine unchanged for the same mapping.
var (
	// ErrEmptyQuery is the error of a statement with neither SQL text nor a Substrait plan.
	ErrEmptyQuery = errors.New("query: empty query")
	// ErrBadFragment is the error of a fragment spec this engine cannot have made (tickets are
	// signed, so only a server of another version could have).
	ErrBadFragment = errors.New("query: the ticket's fragment does not fit its query")
	// ErrTableNotFound is the error of a read of a table the engine does not serve.
	ErrTableNotFound = errors.New("query: table not found")
)

// BucketLimitError is the refusal of a query reading more buckets (partitions × buckets)
// than Options.MaxBuckets, before anything is read.
type BucketLimitError struct {
	Buckets, Limit int
}

func (e *BucketLimitError) Error() string {
	return fmt.Sprintf("query: %d buckets, more than the limit of %d", e.Buckets, e.Limit)
}

// AnalyticalPartitionsError is the refusal of an analytical read (no partition pin) of Table
// that finds more than Limit partitions in its range (Options.AnalyticalMaxPartitions). It
// names the table, never a partition value.
type AnalyticalPartitionsError struct {
	Table string
	Limit int
}

func (e *AnalyticalPartitionsError) Error() string {
	return fmt.Sprintf("query: the analytical read of %s finds more than %d partitions", e.Table, e.Limit)
}

// UnsupportedPlanError is the refusal of a plan the executor cannot run: a client plan's
// relation, expression or function outside what it evaluates (scan.ErrUnsupported), an
// expression it cannot compile (ops.ErrUnsupported), or an aggregate of a type it does not
// aggregate (aggregate.ErrUnsupported). Reason is the executor's, which names
// relation kinds, functions, argument positions and types, never values.
type UnsupportedPlanError struct {
	Reason string
	Err    error // the executor's error
}

func (e *UnsupportedPlanError) Error() string { return "query: unsupported plan: " + e.Reason }
func (e *UnsupportedPlanError) Unwrap() error { return e.Err }

// unsupportedPlan wraps the executor's refusal of a plan it cannot run in an
// *UnsupportedPlanError; other errors pass unchanged.
func unsupportedPlan(err error) error {
	if errors.Is(err, scan.ErrUnsupported) || errors.Is(err, ops.ErrUnsupported) || errors.Is(err, aggregate.ErrUnsupported) {
		reason := err.Error()
		for _, p := range []string{scan.ErrUnsupported.Error() + ": ", ops.ErrUnsupported.Error() + ": ", "ops: compile: ", "aggregate: " + aggregate.ErrUnsupported.Error() + ": "} {
			if i := strings.LastIndex(reason, p); i >= 0 {
				reason = reason[i+len(p):]
			}
		}
		return &UnsupportedPlanError{Reason: reason, Err: err}
	}
	return err
}
