package scan_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/substrait"
)

// BenchmarkRecursiveCTE measures a recursive query of one row an iteration through the
// executor: WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < N)
// SELECT count(*), sum(n) FROM t, and its UNION form, for N of 1,000 and 10,000 (the plan
// bound once; each query executes it and reads the result). The cost is the recursion's
// per-iteration overhead: the recursive term run over a working table of one row, N times,
// under the server's default limits. Besides the elapsed time it reports the process's CPU
// time per query (cpu-ns/op). On a shared 2-core machine (issue 18, load 12–15, -count 5),
// the 10,000 iterations of UNION ALL took 129–143 ms of CPU and 1,340,487 allocations a
// query with the term opened per iteration and every iteration's row a batch for the
// operators above, and 49–55 ms and 541,500 with the term opened once and the rows coalesced
// (UNION: 134–149 → 51–59 ms).
func BenchmarkRecursiveCTE(b *testing.B) {
	cat, err := substrait.NewCatalog(tableDef)
	if err != nil {
		b.Fatal(err)
	}
	noTable := func(*plan.NamedTableReadRel) (scan.Source, error) { return scan.Source{}, errors.New("no table") }
	// The server's defaults (query.Default*): a query memory limit, a shared budget, a CPU
	// bound (measured per batch) and a row bound.
	limits := scan.Options{Alloc: testPool, Bind: noTable, QueryMemory: 256 << 20, Budget: ledger.NewBudget(1 << 30),
		QueryCPU: time.Hour, QueryMaxRows: 100_000_000}
	for _, op := range []string{"UNION ALL", "UNION"} {
		for _, n := range []int{1000, 10000} {
			sql := fmt.Sprintf("WITH RECURSIVE t(n) AS (SELECT 1 %s SELECT n + 1 FROM t WHERE n < %d) SELECT count(*), sum(n) FROM t", op, n)
			st, err := substrait.PrepareWith(sql, cat, substrait.BindOptions{})
			if err != nil {
				b.Fatal(err)
			}
			bd, err := st.BindGeneral(substrait.BindOptions{})
			if err != nil || bd.Plan == nil {
				b.Fatal(bd, err)
			}
			want := fmt.Sprintf("[%d %d]", n, n*(n+1)/2)
			b.Run(fmt.Sprintf("%s/%d", op, n), func(b *testing.B) {
				opts := limits
				cpu0, k := processCPU(), 0
				for b.Loop() {
					k++
					res, err := scan.Execute(context.Background(), bd.Plan, opts)
					if err != nil {
						b.Fatal(err)
					}
					rows, _, err := drain(b, res)
					res.Release()
					if err != nil || len(rows) != 1 || fmt.Sprint(rows[0]) != want {
						b.Fatalf("%v %v, want %s", rows, err, want)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(k), "cpu-ns/op")
			})
		}
	}
}
