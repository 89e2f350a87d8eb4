// Package panics keeps a panic inside the request, goroutine or cycle it happened in (issue
// 16, "a panic never leaves the request it happened in"): a recovered panic becomes an
// *Error, which answers gRPC as INTERNAL, leaves one log line at error level with the stack,
// and counts in the flightsrv.panics.recovered metric; the process and every other session
// go on, and the caller's deferred releases run as for any other error.
//
// The log line holds where the panic happened (a fixed word chosen by the caller, such as an
// RPC's name or "fragment"), the panic value's Go type, the message of a runtime error (an
// index out of range, a nil dereference: value-free by construction) and the goroutine's
// stack. It never holds another panic value's text, which may quote a plan's bytes, SQL, a
// partition value or a literal (docs/pulpitum-v4.md §5.4, "Error privacy": planning
// details stay out of the logs).
//
// Typical use, in a function returning an error:
//
//	defer panics.Recover("fragment", &err)
//
// and, in a goroutine whose error goes elsewhere:
//
//	defer panics.Handle("poll", func(err error) { p.fail(err) })
package panics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error is a recovered panic. Its message and gRPC status (INTERNAL) name only Where; the
// panic value and the stack went to the log when it was recovered.
type Error struct {
	// Where is the caller's fixed word for the place: an RPC's name, "fragment", "poll"…
	Where string
	// Value is the recovered panic value. It may hold values of the request: never put it
	// in a message or a log line (Recover logs its type and, for a runtime error, its text).
	Value any
}

// Error returns a value-free message naming Where.
func (e *Error) Error() string {
	return fmt.Sprintf("internal error: the server recovered from a fault in %s", e.Where)
}

// GRPCStatus answers INTERNAL with the value-free message: the request failed, the server
// goes on.
func (e *Error) GRPCStatus() *status.Status {
	return status.New(codes.Internal, e.Error()+"; the request was abandoned, the server goes on")
}

// Is reports whether target is ErrRecovered, so that callers can test errors.Is(err,
// ErrRecovered) through wrapping.
func (e *Error) Is(target error) bool { return target == ErrRecovered }

// ErrRecovered matches (errors.Is) every *Error.
var ErrRecovered = errors.New("panics: recovered panic")

// counter is flightsrv.panics.recovered, labelled by where (the caller's fixed word), made
// once from the global meter provider (which delegates to the provider the process sets, even
// when that happens later). Nil if the instrument could not be made.
var counter = sync.OnceValue(func() metric.Int64Counter {
	c, err := otel.Meter("flightsrv").Int64Counter("flightsrv.panics.recovered",
		metric.WithDescription("Panics recovered inside a request, goroutine or cycle, by where they happened (the request failed with INTERNAL; the process went on)."))
	if err != nil {
		return nil
	}
	return c
})

// FromValue turns a recovered panic value p (non-nil) into an *Error after logging it at
// error level with the current goroutine's stack and counting it. Call it from the deferred
// function that called recover(), so that the stack is the panicking goroutine's.
func FromValue(where string, p any) *Error {
	attrs := []any{"where", where, "panic_type", fmt.Sprintf("%T", p)}
	if re, ok := p.(runtime.Error); ok {
		attrs = append(attrs, "panic", re.Error())
	}
	attrs = append(attrs, "stack", string(debug.Stack()))
	slog.Default().Error("recovered a panic; the request failed with INTERNAL and the server goes on", attrs...)
	// The value itself may quote a row's values: at debug only, as the raw errors behind
	// INTERNAL refusals are (querylog's "query error detail").
	slog.Default().Debug("recovered panic value", "where", where, "panic", fmt.Sprint(p))
	if c := counter(); c != nil {
		c.Add(context.Background(), 1, metric.WithAttributes(attribute.String("where", where)))
	}
	return &Error{Where: where, Value: p}
}

// Recover, deferred directly, recovers a panic of the deferring function and stores it as an
// *Error in *errp (replacing any error there). It does nothing when there was no panic.
func Recover(where string, errp *error) {
	if p := recover(); p != nil {
		*errp = FromValue(where, p)
	}
}

// Handle, deferred directly, recovers a panic of the deferring function and hands it, as an
// *Error, to fail. It does nothing when there was no panic.
func Handle(where string, fail func(error)) {
	if p := recover(); p != nil {
		fail(FromValue(where, p))
	}
}
