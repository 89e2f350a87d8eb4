// Package scan holds the physical operators of flightsrv over Arrow record batches: the routed
// scan (bounded parallel bucket fan-out with an ordered merge), the pushed-down aggregate
// operators, and the generic operators applied to what is not pushed down.
//
// Buckets of one partition never overlap in time, so the ordered merge of bucket streams in
// (timestamp, id) order is their concatenation in bound order (reversed for descending
// scans); the fan-out reads up to Fanout buckets ahead of the consumer and holds at most that
// many bucket results in memory.
//
// This package must not import Flight, gRPC or any store driver; it reaches stores only
// through routing.DurableTable.
package scan
