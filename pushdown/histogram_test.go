package pushdown

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

func TestPlanHistogram(t *testing.T) {
	t.Parallel()
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	i64 := arrow.PrimitiveTypes.Int64
	origin := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		sql     string
		args    []any
		opts    Options
		kind    Kind
		bin     routing.Binning
		cols    []string
		ordered bool
		desc    bool
		limit   int64
		schema  []arrow.Field
		decided []string
	}{
		{name: "month bins over month buckets", opts: on, kind: KindHistogram, limit: -1,
			sql:    `SELECT date_trunc('month', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1`,
			bin:    routing.TruncBinning(routing.TruncMonth),
			schema: []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			decided: []string{
				"COUNT(*) grouped by date_trunc('month', timestamp) over one routed scan with only the routed predicate: pushed down to the durable-table per-bin count (no record value is read)",
				"every calendar_month_utc bucket lies inside one bin: each bucket is answered by CountBucket (hot count, manifest record count or archive statistics)",
				"bins in ascending order (no ORDER BY), empty bins omitted"}},
		{name: "hour bins, desc, limit parameter, count first", opts: on, kind: KindHistogram, ordered: true, desc: true, limit: 24,
			sql:    `SELECT count(*) AS n, date_trunc('hour', timestamp) AS t FROM messages` + where + ` GROUP BY t ORDER BY t DESC LIMIT ?`,
			args:   []any{24},
			bin:    routing.TruncBinning(routing.TruncHour),
			schema: []arrow.Field{{Name: "n", Type: i64}, {Name: "t", Type: ts}},
			decided: []string{
				"a bucket whose part of the range lies inside one bin is answered by CountBucket (hot count, manifest record count or archive statistics); other buckets are counted per bin: one GROUP BY statement per hot bucket, trusted row-group and page statistics per archived bucket, decoding only event_time where a group or page spans bins",
				"bins in descending order, empty bins omitted, limit 24"}},
		{name: "15-minute bins, pushdown off", opts: off, kind: KindScan, ordered: true, limit: -1, cols: []string{"timestamp"},
			sql:    `SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`,
			bin:    routing.StrideBinning(15*time.Minute, origin),
			schema: []arrow.Field{{Name: "t", Type: ts}, {Name: "count", Type: i64}},
			decided: []string{
				"COUNT(*) grouped by date_bin('15 minutes', timestamp, origin) is a pushdown candidate but pushdown is disabled: counted per bin on the scan path",
				"scan path: read columns [timestamp], then count per bin",
				"bins in ascending order, empty bins omitted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ph, err := planSQL(t, tt.sql, tt.opts, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if ph.Kind != tt.kind || ph.Group == nil || ph.Group.Binning != tt.bin || !slices.Equal(ph.Columns, tt.cols) ||
				ph.Ordered != tt.ordered || ph.Desc != tt.desc || ph.Limit != tt.limit || ph.Aggregate == nil {
				t.Fatalf("physical %+v group %+v", ph, ph.Group)
			}
			if want := arrow.NewSchema(tt.schema, nil); !ph.Schema.Equal(want) {
				t.Errorf("schema\n%v\nwant\n%v", ph.Schema, want)
			}
			for _, d := range tt.decided {
				if !slices.Contains(ph.Decisions, d) {
					t.Errorf("decisions %q lack %q", ph.Decisions, d)
				}
			}
			for _, d := range ph.Decisions {
				if strings.Contains(d, "general") || strings.Contains(d, "2026") || strings.Contains(d, "2001") {
					t.Errorf("decision %q carries a value", d)
				}
			}
		})
	}
}

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

// TestGoldenHistogram prints EXPLAIN and the decisions of histogram queries and compares them
// with testdata/histogram.golden (go test ./pushdown -run TestGolden -update rewrites it).
func TestGoldenHistogram(t *testing.T) {
	t.Parallel()
	cat := catalog(t)
	queries := []struct {
		sql  string
		opts Options
	}{
		{`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1 ORDER BY 1`, on},
		{`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + where + ` GROUP BY 1 ORDER BY 1`, off},
		{`SELECT COUNT(*), date_trunc('month', timestamp) FROM messages` + where + ` GROUP BY 2 ORDER BY 2 DESC LIMIT 1`, on},
		{`SELECT date_trunc('year', timestamp) AS y, COUNT(*) AS n FROM messages` + where + ` GROUP BY y`, on},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + where + ` GROUP BY t ORDER BY t`, on},
		{`SELECT date_trunc('week', timestamp) AS w, COUNT(*) FROM messages` + where + ` GROUP BY w ORDER BY w DESC`, on},
	}
	var b strings.Builder
	for _, q := range queries {
		p, err := substrait.FromSQL(q.sql, cat)
		if err != nil {
			t.Fatalf("%q: %v", q.sql, err)
		}
		ph, err := Plan(p, cat, q.opts)
		if err != nil {
			t.Fatalf("%q: %v", q.sql, err)
		}
		fmt.Fprintf(&b, "== %s\n-- options: %+v\n%s-- kind: %v, buckets: %d, columns: %v, limit: %d, schema: %v\n",
			strings.Join(strings.Fields(q.sql), " "), q.opts, substrait.Explain(p), ph.Kind, ph.Buckets, ph.Columns, ph.Limit, ph.Schema.Fields())
		for _, d := range ph.Decisions {
			fmt.Fprintf(&b, "-- decision: %s\n", d)
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "histogram.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pushdown -run TestGolden -update)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("golden mismatch (go test ./pushdown -run TestGolden -update to accept):\n%s", got)
	}
}
