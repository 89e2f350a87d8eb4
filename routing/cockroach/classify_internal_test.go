package cockroach

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/routing"
)

// TestConnectionLostIsUnavailable: the server ending the session (PostgreSQL's
// admin_shutdown 57P01 when it restarts or terminates the backend, crash_shutdown,
// cannot_connect_now, any connection exception of class 08) is the retriable
// routing.ErrUnavailable, which clients get as UNAVAILABLE; another SQLSTATE stays
// ErrOperationFailed; neither keeps the server's message.
func TestConnectionLostIsUnavailable(t *testing.T) {
	s := &Store{}
	for code, want := range map[string]error{
		"57P01": routing.ErrUnavailable, "57P02": routing.ErrUnavailable, "57P03": routing.ErrUnavailable,
		"08006": routing.ErrUnavailable, "08003": routing.ErrUnavailable,
		"42P01": routing.ErrOperationFailed, "57014": routing.ErrOperationFailed,
	} {
		err := s.classify("read", &pgconn.PgError{Code: code, Message: "terminating connection due to administrator command: secret"})
		var st *SQLStateError
		if !errors.Is(err, want) || !errors.As(err, &st) || st.Code != code {
			t.Errorf("SQLSTATE %s: %v, want %v with the code", code, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("SQLSTATE %s: the server's message leaked: %v", code, err)
		}
	}
}
