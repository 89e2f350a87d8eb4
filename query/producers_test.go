package query_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/query"
)

// TestOutsideProducerPlans runs the plans DataFusion, isthmus and ibis-substrait wrote for the
// queries of testdata/producers/queries.tsv (see its README) unmodified, and compares each
// answer with the answer of the SQL it came from, on hot and mixed (archived) fixtures. Also
// the plan of issue 16 that took the server down (DataFusion 55's COUNT(*) with its URNs
// completed): it answers as its SQL does.
func TestOutsideProducerPlans(t *testing.T) {
	t.Parallel()
	queries, err := os.ReadFile("testdata/producers/queries.tsv")
	if err != nil {
		t.Fatal(err)
	}
	server := func(tmpl string) string {
		r := strings.NewReplacer("{ts}", "timestamp", "{t:", "'", "}", "'")
		return r.Replace(tmpl)
	}
	sqlOf := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(queries)), "\n") {
		name, tmpl, _ := strings.Cut(line, "\t")
		sqlOf[name] = server(tmpl)
	}
	files, err := filepath.Glob("testdata/producers/*.b64")
	if err != nil || len(files) < 15 {
		t.Fatalf("plans: %v %v", files, err)
	}
	for _, mixed := range []bool{false, true} {
		f := buildEngFixture(t, fmt.Sprint("mixed=", mixed), mixed)
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		on, off := f.engines(t, alloc, nil)
		nonEmpty := 0
		for _, file := range files {
			base := strings.TrimSuffix(filepath.Base(file), ".b64")
			_, name, _ := strings.Cut(base, "-")
			sql := sqlOf[name]
			if sql == "" {
				t.Fatalf("%s: no query %q", file, name)
			}
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(text)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := engRun(t, on, alloc, sql, nil)
			if err != nil {
				t.Fatalf("%s: SQL %s: %v", base, sql, err)
			}
			for _, e := range []struct {
				name string
				eng  *query.Engine
			}{{"pushdown on", on}, {"pushdown off", off}} {
				got, err := engRunPlan(t, e.eng, alloc, "", plan, nil)
				if err != nil {
					t.Fatalf("%s (%s, mixed=%v): %v", base, e.name, mixed, err)
				}
				engSameRows(t, fmt.Sprintf("%s (%s, mixed=%v)", base, e.name, mixed), got.rows, want.rows)
			}
			if len(want.rows) > 0 && fmt.Sprint(want.rows) != "[[0]]" {
				nonEmpty++
			}
		}
		if nonEmpty < len(files)-1 {
			t.Fatalf("only %d of %d answers are not empty: the fixture no longer fits the queries", nonEmpty, len(files))
		}
		repro, err := os.ReadFile("../testdata/substrait/datafusion-count-urns.b64")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(repro)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := engRunPlan(t, on, alloc, "", plan, nil)
		if err != nil {
			t.Fatalf("issue 16's DataFusion plan: %v", err)
		}
		want, err := engRun(t, on, alloc, "SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-05-01'", nil)
		if err != nil {
			t.Fatal(err)
		}
		engSameRows(t, "issue 16's DataFusion plan", got.rows, want.rows)
		alloc.AssertSize(t, 0)
	}
}
