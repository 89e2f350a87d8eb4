package substrait_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

var orDef = routing.TableDef{Name: "flights", TableID: "flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 1}

// orChainSQL is a routed read filtered by an OR of n equalities of a JSON field, plus extra.
func orChainSQL(n int, extra string) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("value->>'destination' = 'D%03d'", i)
	}
	return "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND (" +
		strings.Join(terms, " OR ") + extra + ")"
}

// orFilter binds sql and returns its plan's residual filter (the FilterRel's condition) and
// the plan's extension registry.
func orFilter(t testing.TB, sql string) (*plan.Plan, expr.Expression) {
	t.Helper()
	cat, err := substrait.NewCatalog(orDef)
	if err != nil {
		t.Fatal(err)
	}
	st, err := substrait.Prepare(sql, cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.BindGeneral(substrait.BindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cond expr.Expression
	var walk func(plan.Rel)
	walk = func(r plan.Rel) {
		if f, ok := r.(*plan.FilterRel); ok {
			cond = f.Condition()
		}
		for _, in := range r.GetInputs() {
			walk(in)
		}
	}
	walk(b.Plan.GetRoots()[0].Input())
	if cond == nil {
		t.Fatal("no FilterRel")
	}
	return b.Plan, cond
}

// orBatch is n rows of the table's base schema whose value holds a destination D000…D499.
func orBatch(n int) arrow.RecordBatch {
	schema := substrait.TableSchema(orDef)
	bl := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bl.Release()
	for i := range n {
		bl.Field(0).(*array.StringBuilder).Append("ORD")
		bl.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(978307200000000000 + int64(i)))
		bl.Field(2).(*array.StringBuilder).Append(fmt.Sprint(i))
		doc := fmt.Sprintf(`{"delay":%d,"distance":%d,"destination":"D%03d"}`, i%90-30, i%3000, (i*7)%500)
		if i%97 == 0 {
			doc = `{"delay":1}` // no destination: NULL
		}
		bl.Field(3).(*array.BinaryBuilder).Append([]byte(doc))
	}
	return bl.NewRecordBatch()
}

// TestOrOfEqualitiesFoldsIntoIn: x = a OR x = b OR … binds as x IN (a, b, …) (Explain shows
// one IN list), other disjuncts stay, and the filter's answers equal a reference read of the
// JSON in Go, NULL where the field is absent.
func TestOrOfEqualitiesFoldsIntoIn(t *testing.T) {
	p, cond := orFilter(t, orChainSQL(250, " OR (value->>'delay')::int > 50"))
	text := substrait.Explain(p)
	if strings.Count(text, " IN (") != 1 || strings.Count(text, "json_get_text") != 2 || !strings.Contains(text, " OR ") {
		t.Fatalf("the OR chain is not one IN list beside the other disjunct:\n%.600s", text)
	}
	rec := orBatch(5000)
	defer rec.Release()
	x, err := ops.Compile(cond, rec.Schema(), p.ExtensionRegistry())
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Eval(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	res := got.(*array.Boolean)
	docs := rec.Column(3).(*array.Binary)
	for i := range int(rec.NumRows()) {
		var d struct {
			Delay       int
			Destination *string
		}
		if err := json.Unmarshal(docs.Value(i), &d); err != nil {
			t.Fatal(err)
		}
		var want *bool
		in := d.Destination != nil && len(*d.Destination) == 4 && *d.Destination < "D250"
		switch {
		case in || d.Delay > 50:
			want = new(bool)
			*want = true
		case d.Destination != nil:
			want = new(bool)
		}
		switch {
		case want == nil && !res.IsNull(i):
			t.Fatalf("row %d: %v, want NULL", i, res.Value(i))
		case want != nil && (res.IsNull(i) || res.Value(i) != *want):
			t.Fatalf("row %d: null=%v %v, want %v", i, res.IsNull(i), res.Value(i), *want)
		}
	}
}

// BenchmarkJSONOrChain filters batches of 8,192 JSON rows by an OR of n equalities of one
// JSON field, as bound by the SQL binder (folded into one IN list: the field is read once per
// row, not once per term).
func BenchmarkJSONOrChain(b *testing.B) {
	rec := orBatch(8192)
	defer rec.Release()
	for _, n := range []int{10, 250, 1000} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			evalFilter(b, rec, orChainSQL(n, ""))
			b.ReportMetric(float64(b.N)*float64(rec.NumRows())/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestRepeatedJSONFieldIsReadOnce: an expression reading one JSON field several times (the
// executor parses it once per batch and shares it) answers as a reference read in Go.
func TestRepeatedJSONFieldIsReadOnce(t *testing.T) {
	p, cond := orFilter(t, "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND "+
		"((value->>'delay')::int > 50 OR (value->>'delay')::int < -20 OR (value->>'delay')::int + (value->>'distance')::int = 100)")
	rec := orBatch(3000)
	defer rec.Release()
	x, err := ops.Compile(cond, rec.Schema(), p.ExtensionRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the per-call memo starts empty each time
		got, err := x.Eval(context.Background(), rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		res := got.(*array.Boolean)
		docs := rec.Column(3).(*array.Binary)
		for i := range int(rec.NumRows()) {
			var d struct {
				Delay    int
				Distance *int
			}
			if err := json.Unmarshal(docs.Value(i), &d); err != nil {
				t.Fatal(err)
			}
			if d.Delay > 50 || d.Delay < -20 {
				if res.IsNull(i) || !res.Value(i) {
					t.Fatalf("row %d: want true", i)
				}
				continue
			}
			if d.Distance == nil {
				if !res.IsNull(i) {
					t.Fatalf("row %d: want NULL", i)
				}
				continue
			}
			if res.IsNull(i) || res.Value(i) != (d.Delay+*d.Distance == 100) {
				t.Fatalf("row %d: got %v", i, res.Value(i))
			}
		}
		got.Release()
	}
}

// TestRepeatedJSONFieldInCase: CASE evaluates its branches on subsets of the batch; a JSON
// field shared between its conditions is evaluated again for each subset (the memo is per
// batch), so every row gets its own branch.
func TestRepeatedJSONFieldInCase(t *testing.T) {
	cat, err := substrait.NewCatalog(orDef)
	if err != nil {
		t.Fatal(err)
	}
	st, err := substrait.Prepare("SELECT CASE value->>'destination' WHEN 'D007' THEN 1 WHEN 'D014' THEN 2 END FROM flights "+
		"WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01'", cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.BindGeneral(substrait.BindOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var proj *plan.ProjectRel
	var walk func(plan.Rel)
	walk = func(r plan.Rel) {
		if p, ok := r.(*plan.ProjectRel); ok && proj == nil {
			proj = p
		}
		for _, in := range r.GetInputs() {
			walk(in)
		}
	}
	walk(b.Plan.GetRoots()[0].Input())
	rec := orBatch(2000)
	defer rec.Release()
	x, err := ops.Compile(proj.Expressions()[0], rec.Schema(), b.Plan.ExtensionRegistry())
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Eval(context.Background(), rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	res := got.(*array.Int32)
	docs := rec.Column(3).(*array.Binary)
	matched := 0
	for i := range int(rec.NumRows()) {
		var d struct{ Destination string }
		if err := json.Unmarshal(docs.Value(i), &d); err != nil {
			t.Fatal(err)
		}
		want := map[string]int32{"D007": 1, "D014": 2}[d.Destination]
		if want == 0 != res.IsNull(i) || (want != 0 && res.Value(i) != want) {
			t.Fatalf("row %d (%s): null=%v %d, want %d", i, d.Destination, res.IsNull(i), res.Value(i), want)
		}
		if want != 0 {
			matched++
		}
	}
	if matched == 0 {
		t.Fatal("no row took a branch")
	}
}
