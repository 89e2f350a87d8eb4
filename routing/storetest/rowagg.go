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
	// A member no integer cast reads (which the executor, evaluating in its own order, may
	// or may not meet) and a record that is not JSON: declined, alone and beside the
	// answered bucket and a never-appended one in one request (the data exception makes the
	// store ask each bucket alone).
	never := dayBucket("t.rowagg", "p", "2023-05-09")
	wide := ungrouped
	wide.Range = routing.TimeRange{Start: b.Start, End: never.End}
	for i, v := range []string{`{"delay":"1x","dest":"D"}`, `{"delay":`} {
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
	// Text the casts read though it is not the number's own text (PostgreSQL's int4in and the
	// executor alike: white space, zeros before the digits): answered as the executor reads
	// it, or declined (a server whose casts may read more).
	odd := dayBucket("t.rowagg", "p", "2023-05-07")
	mustAppend(t, s, odd, rec(odd, odd.Start.Add(time.Hour), "a", `{"delay":20,"dest":"D"}`), rec(odd, odd.Start.Add(2*time.Hour), "b", `{"delay":" 017","dest":"D"}`))
	oddQ := ungrouped
	oddQ.Range = odd.Range()
	if as, err := ra.AggregateRows(bg, []routing.BucketID{odd}, oddQ); err != nil || len(as) != 1 {
		t.Fatalf("text the casts read: %+v %v", as, err)
	} else if !as[0].Declined {
		if got := fmt.Sprint(rowRows(t, as[0].Reader, ungrouped.Schema)); got != "[[2 2 37 D 20]]" {
			t.Fatalf("text the casts read: %s, want [[2 2 37 D 20]] or declined", got)
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

// testSummedCount checks a routing.RowAggregate.Summed request of count(*) (which a store may
// answer merged into one answer: RowAnswer.Summed) against brute force over the appended
// records: the answers' counts add up to the records of the asked buckets inside a range that
// cuts buckets, whether every bucket in the range is asked (a never-appended one among them),
// every route row (as partition discovery finds them), or only some of them (another partition's records and a
// bucket outside the request left out); an archiving bucket still counts, asked or not; an
// archived one whose hot rows are kept, then deleted, is its route and no reader (the table
// declines it, then no longer asks it) and its rows do not count, asked or not; with hot records
// outside the range, the same counts or routing.ErrNotSummed and no answer; a store without
// the port is skipped.
func testSummedCount(t *testing.T, s Store) {
	ra, ok := s.(routing.RowAggregator)
	if !ok {
		return
	}
	const table = "t.summed"
	tbl, err := routing.NewDurableTable(routing.TableDef{Name: "t", TableID: table, PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 1 << 20}, s, nil, routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := routing.TimeRange{Start: ts("2023-06-01T12:00:00Z"), End: ts("2023-06-03T06:00:00.0000005Z")}
	var all []routing.BucketID
	want := map[string]int64{} // records inside rng, by bucket
	for pi, pk := range []string{"a", "b", "c"} {
		for d, day := range []string{"2023-06-01", "2023-06-02", "2023-06-03"} {
			b := dayBucket(table, pk, day)
			all = append(all, b)
			if pk == "c" && d == 1 {
				continue // never appended
			}
			var recs []routing.Record
			n := 10 + 7*pi + 3*d
			for i := range n {
				at := b.Start.Add(time.Duration(i) * 24 * time.Hour / time.Duration(n))
				recs = append(recs, rec(b, at, fmt.Sprintf("k%02d", i), `{}`))
				if rng.Contains(at) {
					want[b.Key+"/"+pk]++
				}
			}
			// Records at the range's bounds: its start counts, its end (on the next
			// microsecond) does not.
			if d == 0 {
				recs = append(recs, rec(b, rng.Start, "start", `{}`))
				want[b.Key+"/"+pk]++
			}
			if d == 2 {
				recs = append(recs, rec(b, ts("2023-06-03T06:00:00.000001Z"), "end", `{}`))
			}
			mustAppend(t, s, b, recs...)
		}
	}
	q := routing.RowAggregate{Range: rng, Summed: true, Measures: []routing.RowMeasure{{Func: routing.RowCountStar}},
		Schema: arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil)}
	// count asks bs and returns the answers' counts added up; every bucket answered hot but
	// those in archived, which must be their routes alone.
	count := func(what string, bs []routing.BucketID, archived map[int]bool) int64 {
		t.Helper()
		as, err := ra.AggregateRows(bg, bs, q)
		if err != nil || len(as) != len(bs) {
			t.Fatalf("%s: %+v %v", what, as, err)
		}
		var n int64
		for i, a := range as {
			switch {
			case archived[i]:
				if a.Route.State != routing.StateArchived || a.Reader != nil || a.Declined {
					t.Fatalf("%s: archived bucket %d answered %+v", what, i, a)
				}
			case a.Declined || a.Route.State == routing.StateArchived || (a.Reader == nil) != a.Summed:
				t.Fatalf("%s: bucket %d answered %+v", what, i, a)
			case a.Reader != nil:
				for _, row := range rowRows(t, a.Reader, q.Schema) {
					n += row[0].(int64)
				}
			}
		}
		return n
	}
	sum := func(bs []routing.BucketID, skip map[int]bool) int64 {
		var n int64
		for i, b := range bs {
			if !skip[i] {
				n += want[b.Key+"/"+string(b.PartitionKey)]
			}
		}
		return n
	}
	if got, w := count("every bucket", all, nil), sum(all, nil); got != w {
		t.Fatalf("every bucket: %d records, want %d", got, w)
	}
	// The buckets with a route row, as partition discovery finds them (c's second day was
	// never appended): every hot route row in the range is asked.
	routed := append(append([]routing.BucketID(nil), all[:7]...), all[8:]...)
	if got, w := count("every route row", routed, nil), sum(routed, nil); got != w {
		t.Fatalf("every route row: %d records, want %d", got, w)
	}
	some := []routing.BucketID{all[0], all[2], all[4], all[5]} // a's first and last, b's last two
	if got, w := count("some buckets", some, nil), sum(some, nil); got != w {
		t.Fatalf("some buckets: %d records, want %d", got, w)
	}
	sess := mustClaim(t, s, all[4], time.Minute)
	if got, w := count("an archiving bucket", all, nil), sum(all, nil); got != w {
		t.Fatalf("an archiving bucket: %d records, want %d", got, w)
	}
	if got, w := count("an archiving bucket among the route rows", routed, nil), sum(routed, nil); got != w {
		t.Fatalf("an archiving bucket among the route rows: %d records, want %d", got, w)
	}
	if got, w := count("the route rows but the archiving one", withoutAt(routed, 4), nil), sum(withoutAt(routed, 4), nil); got != w {
		t.Fatalf("the route rows but the archiving one: %d records, want %d", got, w)
	}
	if err := s.PublishArchive(bg, sess, "archives/t/summed/manifest.json"); err != nil {
		t.Fatal(err)
	}
	if got, w := count("an archived bucket", all, map[int]bool{4: true}), sum(all, map[int]bool{4: true}); got != w {
		t.Fatalf("an archived bucket: %d records, want %d", got, w)
	}
	if got, w := count("an archived bucket among the route rows", routed, map[int]bool{4: true}), sum(routed, map[int]bool{4: true}); got != w {
		t.Fatalf("an archived bucket among the route rows: %d records, want %d", got, w)
	}
	if got, w := count("the route rows but the archived one", withoutAt(routed, 4), nil), sum(withoutAt(routed, 4), nil); got != w {
		t.Fatalf("the route rows but the archived one: %d records, want %d", got, w)
	}
	if err := s.DeleteHotBucket(bg, sess); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if i == all[4].Key+"/"+string(all[4].PartitionKey) {
			want[i] = 0
		}
	}
	if got, w := count("an archived bucket whose hot rows are deleted", routed, map[int]bool{4: true}), sum(routed, map[int]bool{4: true}); got != w {
		t.Fatalf("an archived bucket whose hot rows are deleted: %d records, want %d", got, w)
	}
	if got, w := count("the route rows but the deleted one", withoutAt(routed, 4), nil), sum(withoutAt(routed, 4), nil); got != w {
		t.Fatalf("the route rows but the deleted one: %d records, want %d", got, w)
	}
	for _, bs := range [][]routing.BucketID{all, routed} {
		// The table declines the archived bucket (its route now cached) and asks the others:
		// the store is not asked for it.
		for range 2 {
			as, err := tbl.AggregateRows(bg, bs, q)
			if err != nil || len(as) != len(bs) || !as[4].Declined || as[4].Reader != nil {
				t.Fatalf("an archived bucket through the table: %+v %v", as, err)
			}
			var n int64
			for _, a := range as {
				if a.Reader != nil {
					for _, row := range rowRows(t, a.Reader, q.Schema) {
						n += row[0].(int64)
					}
				}
			}
			if w := sum(bs, map[int]bool{4: true}); n != w {
				t.Fatalf("an archived bucket through the table: %d records, want %d", n, w)
			}
		}
	}
	// Hot records outside the range: answered bucket by bucket, or refused as a whole.
	out := dayBucket(table, "a", "2023-06-05")
	mustAppend(t, s, out, rec(out, out.Start.Add(time.Hour), "x", `{}`))
	if as, err := ra.AggregateRows(bg, all, q); errors.Is(err, routing.ErrNotSummed) {
		if as != nil {
			t.Fatalf("hot records outside the range: answers %+v beside ErrNotSummed", as)
		}
	} else {
		routing.ReleaseAnswers(as)
		if got, w := count("hot records outside the range", all, map[int]bool{4: true}), sum(all, map[int]bool{4: true}); got != w {
			t.Fatalf("hot records outside the range: %d records, want %d", got, w)
		}
	}
}

// withoutAt returns a copy of bs without its i'th bucket.
func withoutAt(bs []routing.BucketID, i int) []routing.BucketID {
	return append(append([]routing.BucketID(nil), bs[:i]...), bs[i+1:]...)
}
