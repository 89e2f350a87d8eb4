package cockroach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/routing"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	for attempt, limit := range []time.Duration{25, 50, 100, 200, 400, 800, 800, 800} {
		limit *= time.Millisecond
		for i := 0; i < 200; i++ {
			if d := retryDelay(attempt); d < limit/2 || d > limit {
				t.Fatalf("retryDelay(%d) = %v, want within [%v, %v]", attempt, d, limit/2, limit)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	s := &Store{}
	secret := &pgconn.PgError{Code: "23514", Message: `new row violates check constraint with value "secret"`}
	for _, tc := range []struct {
		err    error
		target error
		code   string
	}{
		{fmt.Errorf("exec: %w", secret), routing.ErrOperationFailed, "23514"},
		{&pgconn.PgError{Code: "40001"}, routing.ErrOperationFailed, "40001"},
		{&pgconn.ConnectError{}, routing.ErrUnavailable, ""},
		{io.ErrUnexpectedEOF, routing.ErrUnavailable, ""},
		{context.Canceled, context.Canceled, ""},
		{fmt.Errorf("timeout: %w", context.DeadlineExceeded), context.DeadlineExceeded, ""},
		{keep(routing.ErrDuplicateRecord), routing.ErrDuplicateRecord, ""},
		{errors.New("can't scan into dest[0]"), routing.ErrOperationFailed, ""},
	} {
		got := s.classify("op", tc.err)
		if !errors.Is(got, tc.target) {
			t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.target)
		}
		var se *SQLStateError
		if tc.code != "" && (!errors.As(got, &se) || se.SQLState() != tc.code) {
			t.Errorf("classify(%v) = %v, want SQLSTATE %s", tc.err, got, tc.code)
		}
		if strings.Contains(got.Error(), "secret") {
			t.Errorf("classify leaks the server message: %v", got)
		}
	}
	if s.classify("op", nil) != nil {
		t.Error("classify(nil) is not nil")
	}
}

func TestParseRoute(t *testing.T) {
	for text, want := range map[string]routing.Route{
		"hot/0/f/-":                   {State: routing.StateHot},
		"archiving/3/f/-":             {State: routing.StateArchiving, Generation: 3},
		"archived/2/t/+m/a/b.json":    {State: routing.StateArchived, Generation: 2, HotDeleted: true, ManifestKey: "m/a/b.json"},
		"archived/12/f/+key with / ü": {State: routing.StateArchived, Generation: 12, ManifestKey: "key with / ü"},
	} {
		got, err := parseRoute(text)
		if err != nil || got != want {
			t.Errorf("parseRoute(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
	for _, text := range []string{"", "hot", "hot/0/f", "hot/x/f/-", "hot/0/x/-", "hot/0/f/", "hot/0/f/key",
		"frozen/0/f/-", "archived/1/f/-", "archived/1/f/+", "hot/0/f/+m"} {
		if _, err := parseRoute(text); !errors.Is(err, routing.ErrOperationFailed) {
			t.Errorf("parseRoute(%q) = %v, want ErrOperationFailed", text, err)
		}
	}
}

// TestProductOf: the store names the server from its version(): CockroachDB's answer (as
// CockroachDB 23.1 and 24.2 print it) and PostgreSQL's.
func TestProductOf(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]string{
		"CockroachDB CCL v23.1.11 (x86_64-pc-linux-gnu, built 2023/09/27 01:53:43, go1.19.10)":                              "CockroachDB",
		"CockroachDB CCL v24.2.4 (aarch64-unknown-linux-gnu, built 2024/10/10 19:56:56, go1.22.5 X:nocoverageredesign)":     "CockroachDB",
		"PostgreSQL 15.8 (Debian 15.8-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit": "PostgreSQL",
	} {
		if got := productOf(version); got != want {
			t.Errorf("productOf(%q) = %s, want %s", version, got, want)
		}
	}
}
