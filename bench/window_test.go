package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// windowQuery is one window query of BenchmarkWindow over ORD's half year, in flightsrv's SQL
// and in DuckDB's over the source file (columns origin, "date", delay; the loader's ids are the
// zero-padded source row numbers, which DuckDB reads as file_row_number): each answers one
// row whose first column is a count the benchmark checks (want).
type windowQuery struct {
	name, sql, duck string
	want            func(s *suite) int64
}

func windowQueries() []windowQuery {
	const (
		ours = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'"
		duck = ` FROM read_parquet(%s, file_row_number = true) WHERE origin = 'ORD' AND "date" >= TIMESTAMP '2001-01-01' AND "date" < TIMESTAMP '2001-07-01'`
	)
	days := func(*suite) int64 { return 181 }
	return []windowQuery{
		{
			// A running sum per day over every flight: the window over all of ORD's rows.
			name: "running-sum-per-day",
			sql:  "SELECT count(*), sum(s) FROM (SELECT sum((value->>'delay')::int) OVER (PARTITION BY date_trunc('day', timestamp) ORDER BY timestamp, id) AS s" + ours + ") t",
			duck: `SELECT count(*), sum(s) FROM (SELECT sum(delay) OVER (PARTITION BY date_trunc('day', "date") ORDER BY "date", file_row_number) AS s` + duck + ") t",
			want: func(s *suite) int64 { return s.total },
		},
		{
			// A running sum over ORD's flights in time order: the order the routed read
			// delivers one partition in (the window sorts nothing).
			name: "running-sum",
			sql:  "SELECT count(*), sum(s) FROM (SELECT sum((value->>'delay')::int) OVER (ORDER BY timestamp, id) AS s" + ours + ") t",
			duck: `SELECT count(*), sum(s) FROM (SELECT sum(delay) OVER (ORDER BY "date", file_row_number) AS s` + duck + ") t",
			want: func(s *suite) int64 { return s.total },
		},
		{
			// The top three delays of every day: row_number over a partition per day.
			name: "top3-per-day",
			sql:  "SELECT count(*) FROM (SELECT row_number() OVER (PARTITION BY date_trunc('day', timestamp) ORDER BY (value->>'delay')::int DESC, id) AS rn" + ours + ") t WHERE rn <= 3",
			duck: `SELECT count(*) FROM (SELECT row_number() OVER (PARTITION BY date_trunc('day', "date") ORDER BY delay DESC, file_row_number) AS rn` + duck + ") t WHERE rn <= 3",
			want: func(*suite) int64 { return 3 * 181 },
		},
		{
			// Days ranked by their flights, and each day's share of the total: windows over a
			// grouped result, as BI tools send them.
			name: "rank-of-days",
			sql:  "SELECT count(*), max(share) FROM (SELECT date_trunc('day', timestamp) AS d, rank() OVER (ORDER BY count(*) DESC) AS rk, count(*)::float8 / sum(count(*)) OVER () AS share" + ours + " GROUP BY 1) t",
			duck: `SELECT count(*), max(share) FROM (SELECT date_trunc('day', "date") AS d, rank() OVER (ORDER BY count(*) DESC) AS rk, count(*) / sum(count(*)) OVER () AS share` + duck + " GROUP BY 1) t",
			want: days,
		},
	}
}

// BenchmarkWindow measures window queries over ORD's half year (166,341 flights of the flights
// file, loaded as BenchmarkCountORD loads them) through Flight SQL, with every bucket hot in
// PostgreSQL and then every bucket archived, side by side with DuckDB running the same
// windows over the source file (when .venv has duckdb). Each answer's count is checked in
// every iteration (all of ORD's rows, three per day, one per day), and DuckDB's must agree.
func BenchmarkWindow(b *testing.B) {
	s := newSuite(b)
	qs := windowQueries()
	if s.duck != nil {
		for _, q := range qs {
			src := sqlString(s.source)
			b.Run("via="+viaDuck+"/"+q.name, func(b *testing.B) {
				sql := strings.ReplaceAll(q.duck, "%s", src)
				if a, err := s.duck.Query(sql); err != nil || a.Count != q.want(s) {
					b.Fatalf("DuckDB %s: %d (%v), want %d", q.name, a.Count, err, q.want(s))
				}
				var lat []time.Duration
				for b.Loop() {
					a, err := s.duck.Query(sql)
					if err != nil || a.Count != q.want(s) {
						b.Fatalf("DuckDB %s: %d (%v), want %d", q.name, a.Count, err, q.want(s))
					}
					lat = append(lat, time.Duration(a.NS))
				}
				b.ReportMetric(float64(median(lat).Nanoseconds()), "duckdb-p50-ns/op")
				fmt.Fprintf(os.Stdout, "window %-20s %-16s p50 %8.1f ms\n", q.name, "duckdb (file)", float64(median(lat).Microseconds())/1e3)
			})
		}
	}
	for _, tier := range []string{tierHot, tierArchive} {
		if tier == tierArchive {
			s.archiveAll(b)
		}
		d := s.deploy(b)
		for _, q := range qs {
			b.Run("tier="+tier+"/"+q.name, func(b *testing.B) {
				run := flightQuery(d.flight[true], q.sql)
				want := q.want(s)
				if n, _, err := run(s.ctx); err != nil || n != want {
					b.Fatalf("%s: %d (%v), want %d", q.name, n, err, want)
				}
				var lat []time.Duration
				for b.Loop() {
					t0 := time.Now()
					n, _, err := run(s.ctx)
					lat = append(lat, time.Since(t0))
					if err != nil || n != want {
						b.Fatalf("%s: %d (%v), want %d", q.name, n, err, want)
					}
				}
				b.ReportMetric(float64(median(lat).Nanoseconds()), "p50-ns/op")
				fmt.Fprintf(os.Stdout, "window %-20s %-16s p50 %8.1f ms  %5.2fM rows/s\n", q.name, "flightsrv "+tier,
					float64(median(lat).Microseconds())/1e3, float64(s.total)/median(lat).Seconds()/1e6)
			})
		}
	}
}
