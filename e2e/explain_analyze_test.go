package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// planText returns an EXPLAIN result's lines.
func planText(t *testing.T, res *result) []string {
	t.Helper()
	return column(t, res, "QUERY PLAN")
}

// TestExplainAnalyze (issue 20): EXPLAIN ANALYZE runs the query and prints its plan with what
// each operator did. For a scan of ORD's March (archived) and April (hot) flights with a
// residual filter, the rows returned, the top operator's rows and the rows the same query
// returns when run are all the sample's count of those flights (computed from the Parquet
// file); the bucket read reports one hot and one archived bucket; FORMAT JSON gives the same
// totals in one document; a day of the archived month prunes row groups by their statistics.
// A pushed-down COUNT(*) reports its two fragments answered by the
// stores and one row. No line holds the partition value.
func TestExplainAnalyze(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	from, to := ts("2001-03-01T00:00:00Z"), ts("2001-05-01T00:00:00Z")
	q := "SELECT timestamp, id FROM flights WHERE origin = 'ORD' AND timestamp >= TIMESTAMPTZ '2001-03-01T00:00:00Z'" +
		" AND timestamp < TIMESTAMPTZ '2001-05-01T00:00:00Z' AND id <> 'none'"
	want := len(expected(e.sample, "ORD", from, to))
	run := len(column(t, mustRun(t, cl, q), "id"))
	if run != want {
		t.Fatalf("the query returns %d rows, the sample has %d", run, want)
	}

	lines := planText(t, mustRun(t, cl, "EXPLAIN ANALYZE "+q))
	text := strings.Join(lines, "\n")
	t.Log(text)
	m := regexp.MustCompile(`rows returned: (\d+) in \d+ batch\(es\) \(the top operator's rows: (\d+)\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no execution totals in:\n%s", text)
	}
	if m[1] != strconv.Itoa(want) || m[2] != strconv.Itoa(want) {
		t.Errorf("EXPLAIN ANALYZE: %s rows returned, top operator %s; the query returns %d", m[1], m[2], want)
	}
	for _, l := range []string{"ScanBucket", "Filter 1 residual conjuncts"} {
		found := false
		for _, line := range lines {
			if strings.Contains(line, l) && strings.Contains(line, "actual rows=") {
				found = true
				if l == "ScanBucket" && !strings.Contains(line, "buckets hot=1 archived=1") {
					t.Errorf("bucket read: %s", line)
				}
			}
		}
		if !found {
			t.Errorf("no measured %q line in:\n%s", l, text)
		}
	}
	if partitionWord.MatchString(text) {
		t.Errorf("EXPLAIN ANALYZE shows the partition value:\n%s", text)
	}

	doc := planText(t, mustRun(t, cl, "EXPLAIN (ANALYZE, FORMAT JSON) "+q))
	var parsed struct {
		Executor  []string
		Execution map[string]float64
	}
	if len(doc) != 1 || json.Unmarshal([]byte(doc[0]), &parsed) != nil {
		t.Fatalf("FORMAT JSON: %v", doc)
	}
	if x := parsed.Execution; x["Rows"] != float64(want) || x["Top Operator Rows"] != float64(want) || x["Hot Buckets"] != 1 || x["Archived Buckets"] != 1 || x["Hot Statements"] < 1 || x["Archive Rows Decoded"] < 1 || x["Row Groups Read"] < 1 {
		t.Errorf("FORMAT JSON execution: %v (want %d rows)", x, want)
	}

	// A day of March (archived Parquet): the row groups whose trusted statistics put them
	// outside the day are pruned; read and pruned add up to the month's row groups, and the
	// rows are the sample's.
	day := planText(t, mustRun(t, cl, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT timestamp, id FROM flights WHERE origin = 'ORD'"+
		" AND timestamp >= TIMESTAMPTZ '2001-03-10T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-03-11T00:00:00Z'"))
	var dayDoc struct{ Execution map[string]float64 }
	if len(day) != 1 || json.Unmarshal([]byte(day[0]), &dayDoc) != nil {
		t.Fatalf("FORMAT JSON: %v", day)
	}
	month := planText(t, mustRun(t, cl, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT timestamp, id FROM flights WHERE origin = 'ORD'"+
		" AND timestamp >= TIMESTAMPTZ '2001-03-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-04-01T00:00:00Z'"))
	var monthDoc struct{ Execution map[string]float64 }
	if len(month) != 1 || json.Unmarshal([]byte(month[0]), &monthDoc) != nil {
		t.Fatalf("FORMAT JSON: %v", month)
	}
	d, mo := dayDoc.Execution, monthDoc.Execution
	if want := float64(len(expected(e.sample, "ORD", ts("2001-03-10T00:00:00Z"), ts("2001-03-11T00:00:00Z")))); d["Rows"] != want {
		t.Errorf("a day of March: %v rows, the sample has %v", d["Rows"], want)
	}
	if mo["Row Groups Pruned"] != 0 || d["Row Groups Pruned"] < 1 || d["Row Groups Read"]+d["Row Groups Pruned"] != mo["Row Groups Read"] || d["Archive Rows Decoded"] >= mo["Archive Rows Decoded"] {
		t.Errorf("pruning: a day of March %v, the month %v", d, mo)
	}

	count := planText(t, mustRun(t, cl, "EXPLAIN ANALYZE "+countSQL("ORD", from, to)))
	text = strings.Join(count, "\n")
	if !strings.Contains(text, "rows returned: 1 in 1 batch(es) (the top operator's rows: 1)") || !strings.Contains(text, "answered by a store 2") ||
		!regexp.MustCompile(`StoreAggregate .*\(actual rows=2 batches=2 .*fragments=2 buckets hot=1 archived=1\)`).MatchString(text) {
		t.Errorf("pushed-down count:\n%s", text)
	}
	if plain := planText(t, mustRun(t, cl, "EXPLAIN (FORMAT JSON) "+q)); len(plain) != 1 || strings.Contains(plain[0], "Execution") || !strings.HasPrefix(plain[0], "{") {
		t.Errorf("EXPLAIN (FORMAT JSON): %v", plain)
	}
}
