package querylog

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestTraceParentChoice: a call's span is parented by the client's traceparent, a DoGet's by
// its ticket's trace context unless the client's is of the same trace (then the ticket's is a
// link), and the other one is linked; a malformed traceparent is none.
func TestTraceParentChoice(t *testing.T) {
	const (
		client  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		sameTr  = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
		otherTr = "00-0af7651916cd43dd8448eb211c80319c-2222222222222222-01"
	)
	withClient := metadata.NewIncomingContext(context.Background(), metadata.Pairs("traceparent", client))
	for _, c := range []struct {
		name         string
		ctx          context.Context
		ticket       string
		parent, link string // span ids
	}{
		{"client only", withClient, "", "00f067aa0ba902b7", ""},
		{"ticket only", context.Background(), otherTr, "2222222222222222", ""},
		{"same trace", withClient, sameTr, "00f067aa0ba902b7", "1111111111111111"},
		{"other trace", withClient, otherTr, "2222222222222222", "00f067aa0ba902b7"},
		{"malformed", metadata.NewIncomingContext(context.Background(), metadata.Pairs("traceparent", "00-zz-yy-01")), "garbage", "", ""},
	} {
		parent, links := traceParent(c.ctx, c.ticket)
		got := ""
		if parent.IsValid() {
			got = parent.SpanID().String()
		}
		link := ""
		if len(links) == 1 {
			link = links[0].SpanContext.SpanID().String()
		}
		if got != c.parent || link != c.link || len(links) > 1 {
			t.Errorf("%s: parent %q link %q (%d links), want %q %q", c.name, got, link, len(links), c.parent, c.link)
		}
	}
}

// panicTickets panics on every ticket.
type panicTickets struct{}

func (panicTickets) TicketQuery([]byte) (TicketInfo, bool) { panic("ticket reader bug") }

// TestTicketReadAheadRecovers: a DoGet's ticket is read before the server's recovering
// interceptors run; a panic while reading it is that call's INTERNAL error, not the process's.
func TestTicketReadAheadRecovers(t *testing.T) {
	l := &callLogger{tickets: panicTickets{}}
	err := l.observeAhead(context.Background(), newRecord(), &flight.Ticket{Ticket: []byte("x")})
	if status.Code(err) != codes.Internal {
		t.Fatalf("read-ahead panic: %v, want INTERNAL", err)
	}
}
