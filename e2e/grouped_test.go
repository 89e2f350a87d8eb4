package e2e

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestPartitionGroupedPushdown: count(*), min(timestamp) and max(timestamp) grouped by the
// partition column (and by the partition column and a time bin) are answered by the stores —
// one key-only statement per hot bucket, manifests and footers per archived one — with the
// answers of the scan path over hot, archiving and archived (JSON and Parquet) buckets across
// bucket boundaries, and the counts of the sample file itself; a partition without records in
// the range has no group. EXPLAIN shows the rewrite.
func TestPartitionGroupedPushdown(t *testing.T) {
	e := newEnv(t)
	on, off := dial(t, e.on), dial(t, e.off)
	rng := rand.New(rand.NewPCG(3, 4))
	in := "origin IN ('ORD', 'SFO', 'BOS', 'NOPE')"
	queries := 0
	for ri, r := range harnessRanges(rng) {
		if ri%2 == 1 {
			continue // half of the ranges keep the test quick
		}
		where := fmt.Sprintf("%s AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
			in, r[0].Format(time.RFC3339Nano), r[1].Format(time.RFC3339Nano))
		// The reference: the sample's counts per origin, as "origin|count" in origin order.
		var want []string
		for _, o := range []string{"BOS", "ORD", "SFO"} {
			if n := len(expected(e.sample, o, r[0], r[1])); n > 0 {
				want = append(want, fmt.Sprintf("%s|%d", o, n))
			}
		}
		for _, q := range []string{
			"SELECT origin, COUNT(*) FROM flights WHERE " + where + " GROUP BY origin ORDER BY origin",
			"SELECT origin, COUNT(*), MIN(timestamp), MAX(timestamp) FROM flights WHERE " + where + " GROUP BY 1 ORDER BY 1",
			"SELECT COUNT(*) AS n, origin FROM flights WHERE " + where + " GROUP BY origin ORDER BY n DESC, origin",
			"SELECT origin, MAX(timestamp) FROM flights WHERE " + where + " GROUP BY 1 ORDER BY 1",
			"SELECT origin, date_trunc('month', timestamp) AS m, COUNT(*) FROM flights WHERE " + where + " GROUP BY 1, 2 ORDER BY 1, 2",
			"SELECT date_trunc('day', timestamp) AS d, origin, COUNT(*), MIN(timestamp) FROM flights WHERE " + where + " GROUP BY d, origin ORDER BY origin, d",
		} {
			a, b := render(mustRun(t, on, q)), render(mustRun(t, off, q))
			queries++
			if !slices.Equal(a, b) {
				t.Fatalf("%s:\npushdown %v\nscan     %v", q, a, b)
			}
			if strings.HasPrefix(q, "SELECT origin, COUNT(*) FROM") && !slices.Equal(a, want) {
				t.Fatalf("%s: %v, the sample has %v", q, a, want)
			}
			if strings.HasPrefix(q, "SELECT origin, COUNT(*), MIN") {
				var counts []string
				for _, row := range a {
					f := strings.Split(row, "|")
					counts = append(counts, f[0]+"|"+f[1])
				}
				sort.Strings(counts)
				if !slices.Equal(counts, want) {
					t.Fatalf("%s: %v, the sample has %v", q, counts, want)
				}
			}
		}
	}
	explain := render(mustRun(t, on, "EXPLAIN SELECT origin, COUNT(*) FROM flights WHERE "+in+
		" AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin"))
	if !strings.Contains(strings.Join(explain, "\n"), "StoreAggregate [count(*)] grouped by the partition column") {
		t.Errorf("EXPLAIN does not show the rewrite:\n%s", strings.Join(explain, "\n"))
	}
	t.Logf("%d queries compared", queries)
}
