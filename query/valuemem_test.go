package query_test

import (
	"errors"
	"fmt"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// heapAllocated returns the bytes the process has allocated on the Go heap since it started
// (runtime/metrics' /gc/heap/allocs:bytes): what a query allocated whatever the collector
// returned meanwhile.
func heapAllocated() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestValueMemoryClaimedFirst: a value whose size the statement sets with a small input —
// repeat, lpad, rpad, replace and regexp_replace by a long replacement, format's widths, the
// indentation of jsonb_pretty, string_agg's separator between every two values — is claimed from the query's ledger before it is built: under a
// query memory of 64 MiB each query below is refused with RESOURCE_EXHAUSTED naming the limit,
// having allocated on the Go heap, all together and garbage included, less than twice the
// limit and ops.ConstantMemory (the claims that fit; the fold of a constant giving up at
// ops.ConstantMemory before the execution evaluates it again; the output buffers a batch
// outgrew as it doubled them, which the ledger counted while they were held; the statement's
// parse and plan), as a table-less SELECT, over rows (a value under the limit whose batch
// passes it), and as a constant of a WHERE clause (the binder's and the compiler's folds,
// bounded by ops.ConstantMemory, give up and the executor refuses it); over rows twice the
// limit more, the pieces of fewer rows Project evaluates once a piece was refused (ops.Project).
// Before, repeat('x', 900000000) allocated 900 MB and more whatever the limit. A value past
// 1 GiB is PostgreSQL's 54000 "requested length too large" (PostgreSQL 15: repeat('x',
// 2000000000), lpad('x', 2000000000), rpad('x', 300000000, 'é'), repeat('xx', 600000000)), the
// limit notwithstanding; values within the limit are answered.
func TestValueMemoryClaimedFirst(t *testing.T) {
	// Not parallel: the Go heap allocated during each query is measured.
	f := buildEngFixture(t, "mixed", true)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	whole := routing.TimeRange{Start: engDay0.AddDate(0, 0, -3), End: engDay0.AddDate(0, 0, engDays+3)}
	recs := f.engRecords("general", whole)
	where := engWhere("general", whole)
	const limit = 64 << 20
	on, off := f.enginesWith(t, alloc, nil, query.Options{QueryMemory: limit})
	deep := strings.Repeat("[", 6000) + strings.Repeat("]", 6000)
	for _, sql := range []string{
		"SELECT repeat('x', 900000000)",
		"SELECT repeat('xyz', 40000000)", // 120 MB: one value past the limit
		"SELECT lpad('x', 200000000)",
		"SELECT rpad('x', 100000000, 'ab')",
		"SELECT replace(repeat('x', 1000), 'x', repeat('y', 100000))",
		"SELECT regexp_replace(repeat('x', 1000), 'x', repeat('y', 100000), 'g')",
		"SELECT format('%200000000s', 'x')",
		"SELECT format(repeat('%1$s', 1000), repeat('y', 100000))",
		"SELECT jsonb_pretty('" + deep + "')", // 6,000 levels: 144 MB of indentation
		"SELECT repeat(id, 1000000) FROM messages" + where,
		"SELECT id, lpad(id, 30000000) FROM messages" + where,
		"SELECT id FROM messages" + where + " AND length(repeat('x', 900000000)) > 0",
		"SELECT string_agg(id, '" + strings.Repeat("-", 1_000_000) + "') FROM messages" + where,
	} {
		for _, e := range []*query.Engine{on, off} {
			what := fmt.Sprintf("%.80s under %d bytes", sql, limit)
			before := heapAllocated()
			_, err := engRun(t, e, alloc, sql, nil)
			grew := heapAllocated() - before
			engCheckStatus(t, what, err, codes.ResourceExhausted, "general", string(recs[0].SortKey))
			if msg := status.Convert(wire(err)).Message(); !strings.Contains(msg, fmt.Sprintf("memory limit of %d bytes", limit)) {
				t.Fatalf("%s: refusal %q does not name the limit", what, msg)
			}
			t.Logf("%s: refused, %.1f MiB allocated on the Go heap", what, float64(grew)/(1<<20))
			bound := int64(2*limit + ops.ConstantMemory)
			if strings.Contains(sql, " FROM ") {
				// Over rows, Project evaluates a refused piece of several rows again in halves
				// down to one row (ops.Project): the pieces that fit are built and sent until
				// one is refused, each holding at most the limit, garbage once sent.
				bound += 2 * limit
			}
			if grew > bound {
				t.Errorf("%s: %.1f MiB allocated on the Go heap, more than %.1f MiB", what, float64(grew)/(1<<20), float64(bound)/(1<<20))
			}
		}
	}
	for _, sql := range []string{
		"SELECT repeat('x', 2000000000)",
		"SELECT lpad('x', 2000000000)",
		"SELECT rpad('x', 300000000, 'é')",
		"SELECT repeat('xx', 600000000)",
	} {
		_, err := engRun(t, on, alloc, sql, nil)
		if de := (*ops.DataError)(nil); !errors.As(err, &de) || de.Code != "54000" {
			t.Errorf("%s: %v, want PostgreSQL's 54000", sql, err)
		}
	}
	for _, c := range []struct{ sql, want string }{
		{"SELECT repeat('xy', 3)", "xyxyxy"},
		{"SELECT lpad('hi', 5, 'xy')", "xyxhi"},
		{"SELECT rpad('hi', 5, 'xy')", "hixyx"},
		{"SELECT lpad('héllo', 3)", "hél"},
		{"SELECT rpad('é', 4, 'ñö')", "éñöñ"},
		{"SELECT replace('abcabc', 'b', 'XYZ')", "aXYZcaXYZc"},
		{"SELECT regexp_replace('abcabc', 'b', '<\\&>', 'g')", "a<b>ca<b>c"},
		{"SELECT format('[%5s|%-5s]', 'ab', 'cd')", "[   ab|cd   ]"},
		{"SELECT length(repeat('x', 10000000))::text", "10000000"},
	} {
		res, err := engRun(t, on, alloc, c.sql, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if len(res.rows) != 1 || res.rows[0][0] != c.want {
			t.Errorf("%s = %v, want %q", c.sql, res.rows, c.want)
		}
	}
}
