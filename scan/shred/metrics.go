package shred

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// RegisterMetrics publishes c's Stats through the global OpenTelemetry meter "flightsrv"
// (exported by --metrics-listen and OTLP like the process's other metrics):
// flightsrv.shred_cache.lookups{result=hit|miss} (one per field and bucket asked),
// flightsrv.shred_cache.writes, flightsrv.shred_cache.damaged (entries found damaged and
// removed), flightsrv.shred_cache.evictions, flightsrv.shred_cache.write_errors, and the
// gauges flightsrv.shred_cache.entries and flightsrv.shred_cache.bytes. No label carries a
// key. Call it once per process; errors of the meter are ignored (metrics are best effort).
func RegisterMetrics(c *Cache) {
	m := otel.Meter("flightsrv")
	lookups, _ := m.Int64ObservableCounter("flightsrv.shred_cache.lookups", metric.WithUnit("{lookup}"),
		metric.WithDescription("Shredded-column cache lookups (one per field and archived bucket) by result (hit|miss; damaged entries are misses)."))
	writes, _ := m.Int64ObservableCounter("flightsrv.shred_cache.writes", metric.WithUnit("{entry}"),
		metric.WithDescription("Shredded-column cache entries written."))
	damaged, _ := m.Int64ObservableCounter("flightsrv.shred_cache.damaged", metric.WithUnit("{entry}"),
		metric.WithDescription("Shredded-column cache entries found damaged (checksum, keys, lengths) and removed."))
	evicted, _ := m.Int64ObservableCounter("flightsrv.shred_cache.evictions", metric.WithUnit("{entry}"),
		metric.WithDescription("Shredded-column cache entries removed, least recently used first, to stay under --shred-cache-size."))
	writeErrors, _ := m.Int64ObservableCounter("flightsrv.shred_cache.write_errors", metric.WithUnit("{entry}"),
		metric.WithDescription("Shredded-column cache entries that could not be written (the query is unaffected)."))
	entries, _ := m.Int64ObservableGauge("flightsrv.shred_cache.entries", metric.WithUnit("{entry}"),
		metric.WithDescription("Shredded-column cache entries held."))
	size, _ := m.Int64ObservableGauge("flightsrv.shred_cache.bytes", metric.WithUnit("By"),
		metric.WithDescription("Bytes of the shredded-column cache's entries."))
	hit, miss := metric.WithAttributes(attribute.String("result", "hit")), metric.WithAttributes(attribute.String("result", "miss"))
	_, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := c.Stats()
		o.ObserveInt64(lookups, s.Hits, hit)
		o.ObserveInt64(lookups, s.Misses, miss)
		o.ObserveInt64(writes, s.Writes)
		o.ObserveInt64(damaged, s.Damaged)
		o.ObserveInt64(evicted, s.Evicted)
		o.ObserveInt64(writeErrors, s.WriteErrors)
		o.ObserveInt64(entries, s.Entries)
		o.ObserveInt64(size, s.Bytes)
		return nil
	}, lookups, writes, damaged, evicted, writeErrors, entries, size)
}
