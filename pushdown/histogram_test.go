package pushdown

import (
	"reflect"
	"testing"

	"github.com/flightsrv/flightsrv/substrait"
)

func TestPlanHistogramQueryMatchesPlan(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	st, err := substrait.Prepare(`SELECT date_trunc('day', timestamp) d, count(*) FROM messages WHERE channel_id = ? AND timestamp >= ? AND timestamp < ? GROUP BY 1 ORDER BY 1 DESC LIMIT 3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	args := []any{"general", "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z"}
	q, err := st.Query(args...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Bind(args...)
	if err != nil {
		t.Fatal(err)
	}
	a := PlanQuery(q, on)
	b, err := Plan(p, cat, on)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Schema.Equal(b.Schema) || !a.Schema.Equal(st.DatasetSchema()) {
		t.Errorf("schemas differ: %v vs %v", a.Schema, b.Schema)
	}
	a.Schema, b.Schema = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("PlanQuery %+v\nPlan %+v", a, b)
	}
}

// TestGoldenHistogram prints histogram queries as TestGolden does and compares them with
// testdata/histogram.golden (go test ./pushdown -run TestGolden -update rewrites it).
func TestGoldenHistogram(t *testing.T) {
	t.Parallel()
	golden(t, "histogram.golden", []string{
		`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1 ORDER BY 1`,
		`SELECT COUNT(*), date_trunc('month', timestamp) FROM messages` + where + ` GROUP BY 2 ORDER BY 2 DESC LIMIT 1`,
		`SELECT date_trunc('year', timestamp) AS y, COUNT(*) AS n FROM messages` + where + ` GROUP BY y`,
		`SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`,
		`SELECT date_trunc('week', timestamp) AS w, COUNT(*) FROM messages` + where + ` GROUP BY w ORDER BY w DESC`,
	})
}
