package querylog

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

// The W3C trace context of calls (issue 20). A call's span is parented by the client's
// traceparent metadata (what otelgrpc clients and the ADBC Go driver send), so a client's
// span holds ours; a DoGet's span by the GetFlightInfo span its ticket names (TicketInfo), so
// one query is one trace across its calls and replicas. W3C trace context is the contract
// here, whatever propagator the process installed globally (internal/telemetry installs the
// same).
var w3c = propagation.TraceContext{}

// mdCarrier reads a call's incoming gRPC metadata as a propagation carrier (keys are
// lower-case in gRPC metadata, as in W3C's header names).
type mdCarrier metadata.MD

func (c mdCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c mdCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }

func (c mdCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// parseTraceParent returns the span context of a W3C traceparent value (invalid when the
// value is not one).
func parseTraceParent(v string) trace.SpanContext {
	if v == "" {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(w3c.Extract(context.Background(), propagation.MapCarrier{"traceparent": v}))
}

// traceParent chooses the parent of a call's span and its links: the ticket's trace context
// (ticketTrace, a DoGet's) when the client sent none of the same trace, linked to the
// client's; the client's (its traceparent metadata) when the ticket has none or belongs to the
// same trace, linked to the ticket's. An invalid span context is no parent (a new trace).
func traceParent(ctx context.Context, ticketTrace string) (trace.SpanContext, []trace.Link) {
	var client trace.SpanContext
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		client = trace.SpanContextFromContext(w3c.Extract(context.Background(), mdCarrier(md)))
	}
	ticket := parseTraceParent(ticketTrace)
	switch {
	case !ticket.IsValid():
		return client, nil
	case !client.IsValid():
		return ticket, nil
	case client.TraceID() == ticket.TraceID():
		return client, []trace.Link{{SpanContext: ticket}}
	}
	return ticket, []trace.Link{{SpanContext: client}}
}

// TraceParent returns the W3C traceparent value of the call's span ("" outside a call, or
// when the span has no valid context): sealed into a query's tickets so that its DoGets join
// its trace (TicketInfo).
func (r *Record) TraceParent() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	span := r.span
	r.mu.Unlock()
	if span == nil || !span.SpanContext().IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(trace.ContextWithSpan(context.Background(), span), c)
	return c["traceparent"]
}
