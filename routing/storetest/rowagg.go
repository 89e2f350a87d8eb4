package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/routing"
)

// testRowAggregate checks the optional row-aggregate port (routing.RowAggregator,
// routing/rowagg.go) of a store that has one against brute force over the appended records
// (their JSON values decoded here with encoding/json): count(*), count, sum and the extremes
// of an integer member and of a text member, ungrouped and grouped by a member, under a
// filter; the route of an archiving and an archived bucket (archived: no reader); a bucket
// holding a member the executor would read otherwise (a leading zero) or a value that is not
// JSON declines (routing.ErrNoAggregate); a bucket holding duplicate keys is answered with
// the last of them counting, or declined (SQLite's json_extract reads the first). A store
// without the port must be refused by routing.DurableTable.AggregateRows with ErrNoAggregate.
func testRowAggregate(t *testing.T, s Store) {
	b := dayBucket("t.rowagg", "p", "2023-05-01")
	delay := routing.HotExpr{Op: routing.HotInt4, Args: []routing.HotExpr{{Op: routing.HotField, Key: "delay"}}}
	dest := routing.HotExpr{Op: routing.HotField, Key: "dest"}
	filter := routing.HotExpr{Op: routing.HotGt, Args: []routing.HotExpr{delay, {Op: routing.HotInt, Int: 10, IntBits: 32}}}
	i64, str, dec := arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String, &arrow.Decimal128Type{Precision: 38, Scale: 0}
	ungrouped := routing.RowAggregate{
		Range: b.Range(), Filter: []routing.HotExpr{filter},
		Measures: []routing.RowMeasure{{Func: routing.RowCountStar}, {Func: routing.RowCount, Arg: &delay}, {Func: routing.RowSum, Arg: &delay},
			{Func: routing.RowMin, Arg: &dest}, {Func: routing.RowMax, Arg: &delay}},
		Schema: arrow.NewSchema([]arrow.Field{{Name: "n", Type: i64}, {Name: "c", Type: i64}, {Name: "s", Type: dec, Nullable: true},
			{Name: "lo", Type: str, Nullable: true}, {Name: "hi", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil),
	}
	grouped := routing.RowAggregate{
		Range: b.Range(), Filter: []routing.HotExpr{filter}, Groups: []routing.HotExpr{dest}, Grouped: true,
		Measures: []routing.RowMeasure{{Func: routing.RowCountStar}},
		Schema:   arrow.NewSchema([]arrow.Field{{Name: "dest", Type: str, Nullable: true}, {Name: "n", Type: i64}}, nil),
	}
	tbl, err := routing.NewDurableTable(routing.TableDef{Name: "t", TableID: "t.rowagg", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 1 << 20}, s, nil, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ra, ok := s.(routing.RowAggregator)
	if !ok {
		if _, err := tbl.AggregateRows(bg, []routing.BucketID{b}, ungrouped); !errors.Is(err, routing.ErrNoAggregate) {
			t.Fatalf("a store without the row-aggregate port: %v, want ErrNoAggregate", err)
		}
		return
	}
	var recs []routing.Record
	for i := range 60 {
		v := fmt.Sprintf(`{"delay":%d,"dest":"E%d"}`, i*7%50-5, i%3)
		switch i % 10 {
		case 3:
			v = `{"dest":"X"}`
		case 7:
			v = `{"delay":null,"dest":null}`
		}
		recs = append(recs, rec(b, b.Start.Add(time.Duration(i)*time.Minute), fmt.Sprintf("k%02d", i), v))
	}
	mustAppend(t, s, b, recs...)
	type doc struct {
		Delay *int32
		Dest  *string
	}
	var n, c int64
	var sum int64
	var lo *string
	var hi *int32
	groups := map[string]int64{}
	var nullGroup int64
	for _, r := range recs {
		var d doc
		if err := json.Unmarshal(r.Value, &d); err != nil {
			t.Fatal(err)
		}
		if d.Delay == nil || *d.Delay <= 10 {
			continue
		}
		n++
		c++
		sum += int64(*d.Delay)
		if d.Dest != nil && (lo == nil || *d.Dest < *lo) {
			lo = d.Dest
		}
		if hi == nil || *d.Delay > *hi {
			hi = d.Delay
		}
		if d.Dest == nil {
			nullGroup++
		} else {
			groups[*d.Dest]++
		}
	}
	want := fmt.Sprint([]any{n, c, strconv.FormatInt(sum, 10), *lo, *hi})
	if got := rowAnswer(t, ra, b, ungrouped); len(got) != 1 || fmt.Sprint(got[0]) != want {
		t.Fatalf("ungrouped row aggregate %v, want [%s]", got, want)
	}
	var wantGroups []string
	for k, v := range groups {
		wantGroups = append(wantGroups, fmt.Sprint([]any{k, v}))
	}
	if nullGroup > 0 {
		wantGroups = append(wantGroups, fmt.Sprint([]any{nil, nullGroup}))
	}
	var gotGroups []string
	for _, row := range rowAnswer(t, ra, b, grouped) {
		gotGroups = append(gotGroups, fmt.Sprint(row))
	}
	slices.Sort(wantGroups)
	slices.Sort(gotGroups)
	if !slices.Equal(gotGroups, wantGroups) {
		t.Fatalf("grouped row aggregate %v, want %v", gotGroups, wantGroups)
	}
	// Duplicate keys: the last counts (docs/pulpitum-v4.md: JSON text, as PostgreSQL's json
	// reads it), or the bucket is declined.
	dup := dayBucket("t.rowagg", "p", "2023-05-05")
	mustAppend(t, s, dup, rec(dup, dup.Start.Add(time.Hour), "a", `{"delay":20,"dest":"D","dest":"E"}`),
		rec(dup, dup.Start.Add(2*time.Hour), "b", `{"delay":30,"dest":"E"}`),
		rec(dup, dup.Start.Add(3*time.Hour), "c", `{"delay":40,"dest":"D","d\u0065st":"E"}`))
	dupQ := grouped
	dupQ.Range = dup.Range()
	if as, err := ra.AggregateRows(bg, []routing.BucketID{dup}, dupQ); err != nil || len(as) != 1 {
		t.Fatalf("duplicate keys: %+v %v", as, err)
	} else if !as[0].Declined {
		if got := fmt.Sprint(rowRows(t, as[0].Reader, grouped.Schema)); got != "[[E 3]]" {
			t.Fatalf("duplicate keys: %s, want [[E 3]] (the last counts, an escaped key too) or declined", got)
		}
	}
	// Records the executor reads otherwise, and one that is not JSON: declined, alone and
	// beside the answered bucket and a never-appended one in one request (the data exception
	// of the second makes the store ask each bucket alone).
	never := dayBucket("t.rowagg", "p", "2023-05-09")
	wide := ungrouped
	wide.Range = routing.TimeRange{Start: b.Start, End: never.End}
	for i, v := range []string{`{"delay":"017","dest":"D"}`, `{"delay":`} {
		d := dayBucket("t.rowagg", "p", fmt.Sprintf("2023-05-0%d", 2+i))
		mustAppend(t, s, d, rec(d, d.Start.Add(time.Hour), "a", `{"delay":20,"dest":"D"}`), rec(d, d.Start.Add(2*time.Hour), "b", v))
		as, err := ra.AggregateRows(bg, []routing.BucketID{d}, wide)
		if err != nil || len(as) != 1 || !as[0].Declined || as[0].Reader != nil {
			t.Fatalf("%s: %+v %v, want declined", v, as, err)
		}
		as, err = tbl.AggregateRows(bg, []routing.BucketID{b, d, never}, wide)
		if err != nil || len(as) != 3 {
			t.Fatalf("%s: three buckets: %+v %v", v, as, err)
		}
		if as[0].Declined || as[0].Reader == nil || !as[1].Declined || as[2].Declined || as[2].Reader == nil || as[2].Route.State != routing.StateHot {
			t.Fatalf("%s: three buckets: %+v", v, as)
		}
		got := rowRows(t, as[0].Reader, ungrouped.Schema)
		if len(got) != 1 || fmt.Sprint(got[0]) != want {
			t.Fatalf("%s: the answered bucket beside it: %v, want [%s]", v, got, want)
		}
		if got := rowRows(t, as[2].Reader, ungrouped.Schema); fmt.Sprint(got) != "[[0 0 <nil> <nil> <nil>]]" {
			t.Fatalf("%s: a never-appended bucket: %v", v, got)
		}
	}

	// Archiving: still answered from the hot rows; archived: the route and no reader, and
	// the table declines it.
	sess := mustClaim(t, s, b, time.Minute)
	if as, err := ra.AggregateRows(bg, []routing.BucketID{b}, ungrouped); err != nil || as[0].Route.State != routing.StateArchiving || as[0].Reader == nil {
		t.Fatalf("archiving bucket: %+v %v", as, err)
	} else {
		routing.ReleaseAnswers(as)
	}
	if err := s.PublishArchive(bg, sess, "archives/t/rowagg/manifest.json"); err != nil {
		t.Fatal(err)
	}
	if as, err := ra.AggregateRows(bg, []routing.BucketID{b}, ungrouped); err != nil || as[0].Route.State != routing.StateArchived || as[0].Reader != nil {
		t.Fatalf("archived bucket: %+v %v", as, err)
	}
	if as, err := tbl.AggregateRows(bg, []routing.BucketID{b}, ungrouped); err != nil || !as[0].Declined || as[0].Reader != nil {
		t.Fatalf("archived bucket through the table: %+v %v", as, err)
	}
}

// rowAnswer asks ra for q over b alone and returns the answer's rows (rowRows).
func rowAnswer(t *testing.T, ra routing.RowAggregator, b routing.BucketID, q routing.RowAggregate) [][]any {
	t.Helper()
	as, err := ra.AggregateRows(bg, []routing.BucketID{b}, q)
	if err != nil || len(as) != 1 || as[0].Route.State != routing.StateHot || as[0].Reader == nil {
		t.Fatalf("AggregateRows: %+v %v", as, err)
	}
	return rowRows(t, as[0].Reader, q.Schema)
}

// rowRows drains and releases the answer r (of schema sc): its rows, decimals as text.
func rowRows(t *testing.T, r array.RecordReader, sc *arrow.Schema) [][]any {
	t.Helper()
	defer r.Release()
	q := struct{ Schema *arrow.Schema }{sc}
	var out [][]any
	for r.Next() {
		batch := r.RecordBatch()
		if !batch.Schema().Equal(q.Schema) {
			t.Fatalf("answer schema %v, want %v", batch.Schema(), q.Schema)
		}
		for i := range int(batch.NumRows()) {
			row := make([]any, batch.NumCols())
			for c := range int(batch.NumCols()) {
				col := batch.Column(c)
				if col.IsNull(i) {
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					row[c] = a.Value(i)
				case *array.Int32:
					row[c] = a.Value(i)
				case *array.String:
					row[c] = a.Value(i)
				case *array.Decimal128:
					row[c] = a.Value(i).BigInt().String()
				}
			}
			out = append(out, row)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
