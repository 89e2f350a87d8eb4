package scan_test

import (
	"context"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// BenchmarkFragmentLatency measures how the fan-out hides store latency: a hot store that adds
// a fixed latency L (50 ms) to every bucket read: a 12-bucket ordered scan at fan-out 4
// (serial: 12 L; the target: within 3.5 L; the fan-out's floor is 3 L), and a LIMIT 10
// over 12 buckets whose first holds the page (target: one bucket started). It reports the
// elapsed time in multiples of L ("L/op") and the bucket reads per query ("buckets/op").
func BenchmarkFragmentLatency(b *testing.B) {
	const latency = 50 * time.Millisecond
	for _, c := range []struct {
		name  string
		f     *fixture
		part  string
		r     routing.TimeRange
		limit int64
	}{
		{"scan/buckets=12/fanout=4", fixtures(b)[0], pGeneral, span(0, days(12)), -1},
		{"limit=10/buckets=12/fanout=4", capFixtures(b)[0], pMany, span(days(4), days(16)), 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, r := c.f, c.r
			p := &probe{HotStore: f.store, delay: latency}
			tbl := f.table(b, p, 4, false)
			var elapsed time.Duration
			n := 0
			for b.Loop() {
				start := time.Now()
				if _, _, err := runScan(b, context.Background(), makeSpec(tbl, c.part, r, []string{"timestamp", "id"}, false, c.limit)); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				n++
			}
			b.ReportMetric(float64(elapsed)/float64(n)/float64(latency), "L/op")
			b.ReportMetric(float64(p.calls.Load())/float64(n), "buckets/op")
		})
	}
}
