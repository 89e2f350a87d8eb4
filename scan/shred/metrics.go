package shred

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// RegisterMetrics publishes c's Stats through the global OpenTelemetry meter "flightsrv"
// (exported by --metrics-listen and OTLP like the process's other metrics):
// flightsrv.shred_cache.lookups{result=hit|miss} (one per bucket asked, whatever its fields),
// flightsrv.shred_cache.writes (bucket files), flightsrv.shred_cache.damaged (files found
// damaged and removed), flightsrv.shred_cache.evictions, flightsrv.shred_cache.write_errors (counters),
// and the gauges flightsrv.shred_cache.entries (bucket files) and flightsrv.shred_cache.bytes. No label
// carries a key. Call it once per process; the meter's errors are ignored (metrics are best
// effort).
func RegisterMetrics(c *Cache) {
	m := otel.Meter("flightsrv")
	type series struct {
		name, unit, desc string
		gauge            bool
		value            func(Stats) int64
		attrs            metric.ObserveOption
	}
	hit, miss := metric.WithAttributes(attribute.String("result", "hit")), metric.WithAttributes(attribute.String("result", "miss"))
	all := []series{
		{"lookups", "{lookup}", "Shredded-column cache lookups (one per archived bucket) by result (hit|miss; damaged files are misses).", false, func(s Stats) int64 { return s.Hits }, hit},
		{"lookups", "{lookup}", "", false, func(s Stats) int64 { return s.Misses }, miss},
		{"writes", "{entry}", "Shredded-column cache bucket files written.", false, func(s Stats) int64 { return s.Writes }, nil},
		{"damaged", "{entry}", "Shredded-column cache bucket files found damaged (checksum, keys, lengths, earlier layouts) and removed.", false, func(s Stats) int64 { return s.Damaged }, nil},
		{"evictions", "{entry}", "Shredded-column cache bucket files removed, least recently used first, to stay under --shred-cache-size.", false, func(s Stats) int64 { return s.Evicted }, nil},
		{"write_errors", "{entry}", "Shredded-column cache bucket files that could not be written (the query is unaffected).", false, func(s Stats) int64 { return s.WriteErrors }, nil},
		{"entries", "{entry}", "Shredded-column cache bucket files held.", true, func(s Stats) int64 { return s.Entries }, nil},
		{"bytes", "By", "Bytes of the shredded-column cache's bucket files.", true, func(s Stats) int64 { return s.Bytes }, nil},
	}
	insts := make([]metric.Int64Observable, len(all))
	var observed []metric.Observable
	for i, s := range all {
		if i > 0 && all[i-1].name == s.name {
			insts[i] = insts[i-1]
			continue
		}
		name := "flightsrv.shred_cache." + s.name
		var err error
		if s.gauge {
			insts[i], err = m.Int64ObservableGauge(name, metric.WithUnit(s.unit), metric.WithDescription(s.desc))
		} else {
			insts[i], err = m.Int64ObservableCounter(name, metric.WithUnit(s.unit), metric.WithDescription(s.desc))
		}
		if err != nil {
			return
		}
		observed = append(observed, insts[i])
	}
	_, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.Stats()
		for i, s := range all {
			if s.attrs != nil {
				o.ObserveInt64(insts[i], s.value(st), s.attrs)
			} else {
				o.ObserveInt64(insts[i], s.value(st))
			}
		}
		return nil
	}, observed...)
}
