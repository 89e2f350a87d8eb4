// Package query is the engine behind the Flight SQL layer: it turns SQL text or a client
// Substrait plan into one Substrait plan (package substrait), lets package pushdown bind its
// routed read, and executes it with package scan over the routed tables (package routing),
// whose pushdown rewrite asks the stores' partial-aggregate ports where they can answer. It
// implements flightsql.Engine.
//
// Errors leave this package as gRPC status errors when they are the client's to see
// (planning errors keep their codes and value-free messages; an invalid time range is
// INVALID_ARGUMENT; an unavailable store is UNAVAILABLE); any other error is returned as it
// is, for the Flight SQL layer to log and hide.
package query
