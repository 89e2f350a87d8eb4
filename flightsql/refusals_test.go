package flightsql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/substrait"
)

// TestStatusOfTypedRefusals checks the boundary's words for every typed refusal of the layers
// below: the code, the message naming the bound and its serve flag, wrapped or not.
func TestStatusOfTypedRefusals(t *testing.T) {
	cases := []struct {
		err   error
		code  codes.Code
		msg   string
		state string // PostgreSQL's SQLSTATE the status's details carry ("": not checked)
	}{
		{&ledger.LimitExceededError{Limit: 2048}, codes.ResourceExhausted, "the query needs more than its memory limit of 2048 bytes (2 KiB); narrow it or raise --query-memory", "53200"},
		{&ledger.LimitExceededError{Limit: 150, Total: true}, codes.ResourceExhausted, "the server's queries need more than their memory limit of 150 bytes (150 B) together; retry later, or raise --total-query-memory", "53200"},
		{&ledger.CPULimitExceededError{Limit: time.Second}, codes.ResourceExhausted, "the query used more than its CPU time limit of 1s; narrow it or raise --query-cpu", "57014"},
		{&ledger.RowLimitExceededError{Limit: 100}, codes.ResourceExhausted, "the query reads more than its limit of 100 rows; narrow it or raise --query-max-rows", "54000"},
		{&routing.ConnectionsBusyError{Limit: 2, Wait: time.Second}, codes.Unavailable, "all 2 hot-store connections queries may use stayed busy for 1s (--query-connections); retry later", ""},
		{&query.BucketLimitError{Buckets: 101, Limit: 100}, codes.ResourceExhausted, "the query reads 101 buckets (partitions × buckets), more than this server's limit of 100 (--max-buckets): narrow the time range or the partitions", "54000"},
		{&substrait.PartitionListError{Table: "flights", Listed: 65, Limit: 64}, codes.InvalidArgument, "flights lists 65 partitions, more than this server's limit of 64 (--max-partitions): list fewer or split the query", ""},
		{&query.AnalyticalPartitionsError{Table: "flights", Limit: 1}, codes.ResourceExhausted, "the analytical read of flights finds more than 1 partitions in its range, this server's limit (--analytical-max-partitions): narrow the range or pin the partitions", "54000"},
		{&QueueFullError{Slots: 4, Queued: 8}, codes.Unavailable, "too many queries: 4 running and 8 waiting (--max-queries, --max-queued); retry later", ""},
		{&QueueWaitError{Wait: time.Second, Slots: 4}, codes.Unavailable, "waited 1s for one of 4 query slots (--queue-wait, --max-queries); retry later", ""},
		{&QueryTimeoutError{Limit: time.Minute}, codes.DeadlineExceeded, "the query ran longer than its limit of 1m0s (--query-timeout)", ""},
		{ErrShuttingDown, codes.Unavailable, "the server is shutting down; retry on another replica", ""},
		{query.ErrEmptyQuery, codes.InvalidArgument, "empty query", ""},
		{query.ErrTableNotFound, codes.NotFound, "table not found", ""},
		{routing.ErrPinMismatch, codes.FailedPrecondition, "an archived bucket this ticket was planned against has been replaced since; run the query again", ""},
		{fmt.Errorf("read: %w", routing.ErrUnavailable), codes.Unavailable, "store unavailable, retry later", ""},
		{context.Canceled, codes.Canceled, "query was cancelled", ""},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			st := status.Convert(Status(err, nil))
			if st.Code() != c.code || st.Message() != c.msg {
				t.Errorf("%v: %s %q, want %s %q", err, st.Code(), st.Message(), c.code, c.msg)
			}
			if got := refusalSQLState(st); c.state != "" && got != c.state {
				t.Errorf("%v: SQLSTATE %q, want %q", err, got, c.state)
			}
		}
	}
	// An error of no known class is INTERNAL with a fixed message: its text may hold values.
	err := Status(errors.New("pq: relation sekrit_table does not exist"), nil)
	var ie *querylog.InternalError
	if !errors.As(err, &ie) || status.Code(err) != codes.Internal || strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("unknown error: %v", err)
	}
}

// refusalSQLState is the SQLSTATE a refusal's status carries (its ErrorInfo's metadata), ""
// when none.
func refusalSQLState(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()["sqlstate"]
		}
	}
	return ""
}
