package scan_test

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// processCPU is the process's user and system CPU time so far (getrusage), in nanoseconds: a
// figure the other processes of a shared machine disturb less than the elapsed time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkWindowVariance measures the variance family of integers over a window (PostgreSQL
// computes it over numeric: a count and the exact sums of the values and their squares per
// frame, then numeric_div and numeric_sqrt) through the binder and the executor: 12,500 rows
// of one partition in the read's order (the first 6,250 timestamps of the "many" partition,
// two rows each), the integer substr(id, 5)::int (0 to 999), under ROWS frames of 10, 1000
// and 3000 preceding rows and the running frame. The plain sum of the same integers over the
// same frames is the floor. Besides the elapsed time it reports the process's CPU time per
// query (cpu-ns/op). On a shared 2-core machine (issue 18, least of three runs of five
// queries), stddev_samp took 160–171 ms of CPU a query with apd's square root and 53–55 ms
// with the integer root (var_samp 44–48 → 39–41 ms, sum 16 ms), whatever the frame: the
// frames' sums are prefix sums, the cost is the per-row numeric formula.
func BenchmarkWindowVariance(b *testing.B) {
	f := capFixtures(b)[0]
	tbl := f.table(b, f.store, 4, false)
	spec := makeSpec(tbl, pMany, span(days(4), days(4)+6250*5*time.Second), []string{"timestamp", "id"}, false, -1)
	const arg = "substr(id, 5)::int"
	for _, fn := range []string{"stddev_samp", "var_samp", "sum"} {
		for _, frame := range []string{"ROWS 10 PRECEDING", "ROWS 1000 PRECEDING", "ROWS 3000 PRECEDING", "ROWS UNBOUNDED PRECEDING"} {
			sql := "SELECT count(s) FROM (SELECT " + fn + "(" + arg + ") OVER (ORDER BY timestamp, id " + frame + ") AS s" +
				routedWhere + ") t"
			b.Run(fn+"/"+frame, func(b *testing.B) {
				cpu0, n := processCPU(), 0
				for b.Loop() {
					n++
					res, err := execute(context.Background(), spec, sql, testPool)
					if err != nil {
						b.Fatal(err)
					}
					rows, _, err := drain(b, res)
					res.Release()
					if err != nil || len(rows) != 1 {
						b.Fatalf("%v %v", rows, err)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(n), "cpu-ns/op")
			})
		}
	}
}
