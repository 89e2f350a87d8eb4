package querylog

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

// TestLogicalQueryEndsWithItsLastEndpoint: a query of three endpoints is one logical query,
// recorded when the third endpoint's DoGet ends (a re-fetched endpoint counts once), with the
// latency from its planning to the latest end, the earliest first batch and its first code
// other than OK; a query whose other endpoints went elsewhere comes out, as it stands, once
// it has waited logicalIdle; a call that is a whole query comes out at once.
func TestLogicalQueryEndsWithItsLastEndpoint(t *testing.T) {
	var g logicalQueries
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if out := g.endCall("q", "SELECT", t0, 1, 3, codes.OK, 30*time.Millisecond, true, t0.Add(time.Second)); len(out) != 0 {
		t.Fatalf("first endpoint: %v", out)
	}
	if out := g.endCall("q", "SELECT", t0, 1, 3, codes.OK, 0, false, t0.Add(2*time.Second)); len(out) != 0 {
		t.Fatalf("endpoint fetched again: %v", out)
	}
	if out := g.endCall("q", "SELECT", t0, 0, 3, codes.Canceled, 20*time.Millisecond, true, t0.Add(3*time.Second)); len(out) != 0 {
		t.Fatalf("second endpoint: %v", out)
	}
	out := g.endCall("q", "SELECT", t0, 2, 3, codes.OK, 0, false, t0.Add(2500*time.Millisecond))
	want := LogicalQuery{Statement: "SELECT", Code: codes.Canceled, Latency: 2500 * time.Millisecond, First: 20 * time.Millisecond, HasFirst: true}
	if len(out) != 1 || out[0] != want {
		t.Fatalf("last endpoint: %+v, want %+v", out, want)
	}
	if len(g.byID) != 0 {
		t.Fatalf("%d queries kept", len(g.byID))
	}

	if out := g.endCall("r", "SELECT", t0, 0, 2, codes.OK, time.Millisecond, true, t0.Add(time.Second)); len(out) != 0 {
		t.Fatalf("r's first endpoint: %v", out)
	}
	later := t0.Add(time.Second + logicalIdle + time.Minute)
	out = g.endCall("s", "SELECT", later, 0, 1, codes.OK, 0, false, later.Add(time.Second))
	if len(out) != 2 || out[0].Latency != time.Second || out[1].Latency != time.Second || out[1].First != time.Millisecond {
		t.Fatalf("whole query and r's flush: %+v", out)
	}
}
