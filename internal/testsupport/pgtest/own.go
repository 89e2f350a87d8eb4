package pgtest

import (
	"testing"
)

// StartOwn starts a PostgreSQL server of tb's own, never the shared one (and never the
// external server of EnvURL): a test may stop and restart it ([Server.Halt], [Server.Resume])
// without harming other tests. It is stopped and its directory removed at tb's cleanup; it
// fails tb when no server binaries are found.
func StartOwn(tb testing.TB) *Server {
	tb.Helper()
	bin, err := findBinDir()
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	var s *Server
	for attempt := 0; ; attempt++ { // a free port can be taken between probe and bind
		if s, err = launch(bin); err == nil {
			break
		}
		if attempt == 2 {
			tb.Fatalf("pgtest: %v", err)
		}
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("pgtest: stop own server: %v", err)
		}
	})
	return s
}

// Halt stops the server by its postmaster's pid (a fast shutdown: every connection is ended)
// and keeps its data, so that [Server.Resume] starts it again on the same port. It fails tb
// for the shared or an external server, which other tests use.
func (s *Server) Halt(tb testing.TB) {
	tb.Helper()
	if s.external || s == shared {
		tb.Fatal("pgtest: Halt needs a server of the test's own (StartOwn)")
	}
	if err := s.halt(); err != nil {
		tb.Fatalf("pgtest: halt: %v", err)
	}
}

// Resume starts a server stopped by [Server.Halt] again, on the same port and data, and returns
// once it accepts connections.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	select {
	case <-s.done:
	default:
		tb.Fatal("pgtest: Resume of a server that is running")
	}
	if err := s.run(); err != nil {
		tb.Fatalf("pgtest: resume: %v", err)
	}
}
