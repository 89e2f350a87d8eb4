package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLimiter: a burst is written, the next lines are left out until the rate refills, and
// the next written line reports how many were left out.
func TestLimiter(t *testing.T) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, nil)), 2, 3)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return at }
	wrote := 0
	for range 10 {
		if l.Warn("refused", "peer", "127.0.0.1:1") {
			wrote++
		}
	}
	if wrote != 3 {
		t.Fatalf("%d lines of a burst of 3", wrote)
	}
	at = at.Add(time.Second) // two more
	if !l.Warn("refused") || !l.Warn("refused") || l.Warn("refused") {
		t.Fatal("the rate did not refill to two lines a second")
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[3], "suppressed=7") || strings.Contains(lines[4], "suppressed") {
		t.Fatalf("lines:\n%s", buf.String())
	}
}
