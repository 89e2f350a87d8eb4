package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// replacedArchives is a hot store whose archived routes point to other manifests than the
// real ones: what a replica sees after an archived generation was replaced.
type replacedArchives struct{ *sqlite.Store }

func replaced(r routing.Route) routing.Route {
	if r.State == routing.StateArchived {
		// Another generation: another generation-addressed path, another manifest digest.
		r.ManifestKey = strings.Replace(r.ManifestKey, "/generation-", "/generation-9", 1)
		r.ManifestKey = strings.Replace(r.ManifestKey, "/manifest-", "/manifest-ffffffffffffffff", 1)
	}
	return r
}

func (s replacedArchives) Route(ctx context.Context, b routing.BucketID) (routing.Route, error) {
	r, err := s.Store.Route(ctx, b)
	return replaced(r), err
}

func (s replacedArchives) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	r, rdr, err := s.Store.ScanRange(ctx, b, req)
	return replaced(r), rdr, err
}

func (s replacedArchives) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	r, rdr, err := s.Store.AggregateRange(ctx, b, req)
	return replaced(r), rdr, err
}

// fragmentEngines builds the mixed fixture and its engines with endpoints of at most three
// buckets: pushdown on and off, and one whose store sees every archived route replaced (a
// replica planned against other archived generations).
func fragmentEngines(t *testing.T) (f *engFixture, alloc *memory.CheckedAllocator, on, off, elsewhere *query.Engine) {
	t.Helper()
	f = buildEngFixture(t, "mixed", true)
	alloc = memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := query.Options{EndpointBuckets: 3}
	on, off = f.enginesWith(t, alloc, nil, opts)
	_, elsewhere = f.enginesWith(t, alloc, replacedArchives{f.store}, opts)
	return f, alloc, on, off, elsewhere
}

// TestFragments: for every engine statement, the fragments' results concatenated in order
// equal Execute's answer (and the brute-force one), with and without splitting; plain scans
// over many buckets split into groups of at most EndpointBuckets buckets that never mix
// archived and hot buckets, the archived ones immutable; aggregates, limits and top-k stay one
// fragment; a fragment served by a replica that sees its pinned archive replaced fails with
// FAILED_PRECONDITION and reveals nothing, while its hot fragments are served.
func TestFragments(t *testing.T) {
	t.Parallel()
	f, alloc, on, off, elsewhere := fragmentEngines(t)
	ctx := context.Background()
	split := 0
	for _, c := range engCases(f) {
		for _, e := range []*query.Engine{on, off} {
			for _, multi := range []bool{false, true} {
				frags, err := e.Fragments(ctx, c.sql, nil, nil, multi)
				if err != nil {
					t.Fatalf("%s: fragments: %v", c.name, err)
				}
				if !multi && len(frags) != 1 {
					t.Fatalf("%s: %d fragments without splitting", c.name, len(frags))
				}
				plain := !strings.Contains(c.sql, "COUNT") && !strings.Contains(c.sql, "MIN") && !strings.Contains(c.sql, "count") &&
					!strings.Contains(c.sql, "LIMIT") && !strings.Contains(c.sql, "FETCH")
				if len(frags) > 1 {
					if !plain {
						t.Fatalf("%s: %d fragments for an aggregate, limit or top-k", c.name, len(frags))
					}
					split++
				}
				var got [][]any
				for i, fr := range frags {
					if fr.Buckets > 3 && len(frags) > 1 {
						t.Fatalf("%s: fragment %d reads %d buckets, more than EndpointBuckets", c.name, i, fr.Buckets)
					}
					res, err := engRunFragment(ctx, t, e, alloc, c.sql, nil, fr.Spec)
					if err != nil {
						t.Fatalf("%s: fragment %d: %v", c.name, i, err)
					}
					got = append(got, res.rows...)
					if len(frags) < 2 {
						continue
					}
					// Served elsewhere: fragments pinned to an archive are refused, hot ones
					// are served.
					again, err := engRunFragment(ctx, t, elsewhere, alloc, c.sql, nil, fr.Spec)
					if err == nil {
						engSameRows(t, c.name+" hot fragment elsewhere", again.rows, res.rows)
					}
					if fr.Immutable {
						engCheckStatus(t, c.name+" replaced archive", err, codes.FailedPrecondition, "general", "generation", "archives")
					} else if err != nil {
						t.Fatalf("%s: hot fragment %d elsewhere: %v", c.name, i, err)
					}
				}
				want := c.want
				if c.unordered {
					got, want = engSorted(got), engSorted(want)
				}
				engSameRows(t, c.name, got, want)
			}
		}
	}
	if split == 0 {
		t.Fatal("no statement was split into several fragments")
	}

	// The whole messages range: 46 day buckets; buckets starting on an odd day are archived,
	// so archived runs are one bucket long, or two across March 31 and April 1.
	sql := "SELECT id FROM messages" + engWhere("general", routing.TimeRange{Start: engDay0.AddDate(0, 0, -3), End: engDay0.AddDate(0, 0, engDays+3)}) + " ORDER BY timestamp"
	frags, err := on.Fragments(ctx, sql, nil, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	immutable, buckets := 0, 0
	for _, fr := range frags {
		buckets += fr.Buckets
		if fr.Immutable {
			immutable++
			if fr.Buckets > 2 {
				t.Fatalf("an immutable fragment of %d buckets: at most two archived buckets are consecutive here", fr.Buckets)
			}
		}
	}
	if buckets != engDays+6 || immutable < 15 {
		t.Fatalf("%d fragments over %d buckets, %d immutable", len(frags), buckets, immutable)
	}
	// One fragment is pinned to the archived routes the planning replica has cached (it has
	// read them all by now): served elsewhere, it is refused too.
	frags, err = on.Fragments(ctx, sql, nil, nil, false)
	if err != nil || len(frags) != 1 || frags[0].Immutable {
		t.Fatalf("one fragment: %v, %v", frags, err)
	}
	rdr, err := elsewhere.ExecuteFragment(ctx, sql, nil, nil, frags[0].Spec)
	if err == nil {
		_, err = engDrain(t, rdr, alloc, sql)
	}
	engCheckStatus(t, "one pinned fragment elsewhere", err, codes.FailedPrecondition, "general", "generation", "archives")
	alloc.AssertSize(t, 0)
}

// TestFragmentsGeneral: plans of the general binder split into time windows over every
// partition they read — an IN list, = ANY($1), the partitions an analytical read discovers —
// when their result is a plain routed scan, unordered or sorted first by the timestamp in
// either direction (residual filters and projections included); each fragment reads one
// window of every partition, and the fragments' rows concatenated in order equal the
// brute-force answer computed here from the generated records (and Execute's). Windows whose
// buckets are all archived are immutable and refused by a replica that sees those archives
// replaced. Aggregates, LIMIT, other sorts and UNION ALL stay one fragment; --max-buckets
// counts an analytical read's discovered partitions at planning.
func TestFragmentsGeneral(t *testing.T) {
	t.Parallel()
	f, alloc, on, off, elsewhere := fragmentEngines(t)
	ctx := context.Background()
	analytical := session.With(ctx, session.Settings{Analytical: true})

	r := routing.TimeRange{Start: engDay0.AddDate(0, 0, -3), End: engDay0.AddDate(0, 0, engDays+3)}
	bounds := fmt.Sprintf("timestamp >= %s AND timestamp < %s", engLit(r.Start), engLit(r.End))
	both := append(f.engRecords("general", r), f.engRecords("random", r)...)
	byTimeID := func(a, b routing.Record) int { return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey) }
	slices.SortFunc(both, byTimeID)
	// ORDER BY timestamp DESC, id (ascending): not the buckets' order, but time first.
	descThenID := slices.Clone(both)
	slices.SortStableFunc(descThenID, func(a, b routing.Record) int {
		if c := b.EventTime.Compare(a.EventTime); c != 0 {
			return c
		}
		return bytes.Compare(a.SortKey, b.SortKey)
	})
	var kOnly []routing.Record
	for _, rec := range both {
		if rec.SortKey[0] == 'k' {
			kOnly = append(kOnly, rec)
		}
	}
	upper := func(recs []routing.Record) [][]any {
		rows := engProject(recs, "id", "channel_id")
		for _, row := range rows {
			row[1] = strings.ToUpper(row[1].(string))
		}
		return rows
	}
	anyParam := func() arrow.RecordBatch {
		lb := array.NewListBuilder(memory.NewGoAllocator(), arrow.BinaryTypes.String) // not alloc: it outlives every drain
		defer lb.Release()
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"random", "general"}, nil)
		col := lb.NewArray()
		defer col.Release()
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "$1", Type: col.DataType()}}, nil), []arrow.Array{col}, 1)
	}
	params := anyParam()
	defer params.Release()

	in := "channel_id IN ('general', 'random') AND " + bounds
	cases := []struct {
		name      string
		ctx       context.Context
		sql       string
		params    arrow.RecordBatch
		want      [][]any
		unordered bool
	}{
		{"in list by time and id", ctx, "SELECT channel_id, timestamp, id FROM messages WHERE " + in + " ORDER BY timestamp, id", nil,
			engProject(both, "channel_id", "timestamp", "id"), false},
		{"in list descending", ctx, "SELECT id, timestamp FROM messages WHERE " + bounds + " AND channel_id IN ('random', 'general') ORDER BY timestamp DESC, id DESC", nil,
			engProject(engReverse(both), "id", "timestamp"), false},
		{"time descending then id", ctx, "SELECT id, timestamp FROM messages WHERE " + in + " ORDER BY timestamp DESC, id", nil,
			engProject(descThenID, "id", "timestamp"), false},
		{"residual filter and projection", ctx, "SELECT id, upper(channel_id) AS ch FROM messages WHERE id LIKE 'k%' AND " + in + " ORDER BY timestamp, id", nil,
			upper(kOnly), false},
		{"subquery", ctx, "SELECT t.id FROM (SELECT id, timestamp FROM messages WHERE " + in + ") t ORDER BY t.timestamp, t.id", nil,
			engProject(both, "id"), false},
		{"unordered", ctx, "SELECT id, value FROM messages WHERE " + in, nil, engProject(both, "id", "value"), true},
		{"= ANY($1)", ctx, "SELECT channel_id, id FROM messages WHERE channel_id = ANY($1) AND " + bounds + " ORDER BY timestamp, id", params,
			engProject(both, "channel_id", "id"), false},
		{"analytical", analytical, "SELECT channel_id, id FROM messages WHERE " + bounds + " ORDER BY timestamp DESC, id DESC", nil,
			engProject(engReverse(both), "channel_id", "id"), false},
	}
	for _, c := range cases {
		for _, e := range []*query.Engine{on, off} {
			frags, err := e.Fragments(c.ctx, c.sql, nil, c.params, true)
			if err != nil {
				t.Fatalf("%s: fragments: %v", c.name, err)
			}
			if len(frags) < 10 {
				t.Fatalf("%s: %d fragments, want one per day of 46", c.name, len(frags))
			}
			var got [][]any
			immutable := 0
			for i, fr := range frags {
				if fr.Buckets > 2 {
					t.Fatalf("%s: fragment %d reads %d buckets, want one day of two partitions", c.name, i, fr.Buckets)
				}
				res, err := engRunFragment(c.ctx, t, e, alloc, c.sql, c.params, fr.Spec)
				if err != nil {
					t.Fatalf("%s: fragment %d: %v", c.name, i, err)
				}
				got = append(got, res.rows...)
				if fr.Immutable {
					immutable++
					_, err = engRunFragment(c.ctx, t, elsewhere, alloc, c.sql, c.params, fr.Spec)
					engCheckStatus(t, c.name+" replaced archive", err, codes.FailedPrecondition, "general", "random", "generation", "archives")
				}
			}
			if immutable < 4 {
				t.Fatalf("%s: %d immutable fragments, want the 4 days whose buckets of both partitions are archived", c.name, immutable)
			}
			want := c.want
			if c.unordered {
				got, want = engSorted(got), engSorted(want)
			}
			engSameRows(t, c.name+": fragments", got, want)
			whole, err := engRunCtx(c.ctx, t, e, alloc, c.sql, nil, c.params)
			if err != nil {
				t.Fatal(err)
			}
			if c.unordered {
				whole.rows = engSorted(whole.rows)
			}
			engSameRows(t, c.name+": one endpoint", whole.rows, want)
		}
	}

	// One fragment however many buckets: aggregates, LIMIT, a sort not led by the timestamp,
	// UNION ALL.
	for _, sql := range []string{
		"SELECT channel_id, count(*) FROM messages WHERE " + in + " GROUP BY 1",
		"SELECT id FROM messages WHERE " + in + " ORDER BY timestamp LIMIT 5",
		"SELECT id FROM messages WHERE " + in + " ORDER BY id",
		"SELECT id FROM messages WHERE " + in + " OFFSET 3",
		"SELECT DISTINCT channel_id FROM messages WHERE " + in,
		"SELECT id FROM messages WHERE " + in + " UNION ALL SELECT id FROM messages WHERE " + in,
	} {
		frags, err := on.Fragments(ctx, sql, nil, nil, true)
		if err != nil || len(frags) != 1 {
			t.Fatalf("%s: %d fragments, %v; want one", sql, len(frags), err)
		}
		want := 2 * (engDays + 6) // two partitions of 46 day buckets
		if strings.Contains(sql, "UNION") {
			want *= 2
		}
		if frags[0].Buckets != want {
			t.Fatalf("%s: one fragment of %d buckets, want %d", sql, frags[0].Buckets, want)
		}
	}

	// --max-buckets at planning: the analytical read counts the two partitions it discovers.
	limited, _ := f.enginesWith(t, alloc, nil, query.Options{MaxBuckets: 60})
	pinned := "SELECT id FROM messages WHERE channel_id = 'general' AND " + bounds
	if _, err := limited.Fragments(ctx, pinned, nil, nil, true); err != nil {
		t.Fatalf("one partition, 46 buckets: %v", err)
	}
	_, err := limited.Fragments(analytical, "SELECT id FROM messages WHERE "+bounds, nil, nil, true)
	engCheckStatus(t, "analytical over the limit", err, codes.ResourceExhausted, "general", "random")
	if st, _ := status.FromError(wire(err)); !strings.Contains(st.Message(), "92 buckets") || !strings.Contains(st.Message(), "--max-buckets") {
		t.Fatalf("analytical over the limit: %v", err)
	}
	alloc.AssertSize(t, 0)
}

// TestFragmentsCached: a statement without parameters that the statement cache keeps
// compiled (run once by Execute) is planned from its compiled form with the same fragments —
// windows, pins, buckets, immutability — and answers as when it was bound per call; a
// statement reading the clock is bound per call: now() in a ticket is its GetFlightInfo's
// planning instant, the same every time the ticket is served, and another GetFlightInfo
// plans another instant; a statement with parameters is bound per call with its values.
func TestFragmentsCached(t *testing.T) {
	t.Parallel()
	f, alloc, on, _, _ := fragmentEngines(t)
	ctx := context.Background()
	all := routing.TimeRange{Start: engDay0.AddDate(0, 0, -3), End: engDay0.AddDate(0, 0, engDays+3)}
	// spec strips a fragment's planning instant, which differs between calls.
	spec := func(fr query.Fragment) string {
		var m map[string]any
		js, err := query.SpecJSON(fr.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "n")
		b, _ := json.Marshal(m)
		return fmt.Sprintf("%s buckets=%d immutable=%v", b, fr.Buckets, fr.Immutable)
	}
	serve := func(sql string, frags []query.Fragment, params arrow.RecordBatch) [][]any {
		var rows [][]any
		for i, fr := range frags {
			res, err := engRunFragment(ctx, t, on, alloc, sql, params, fr.Spec)
			if err != nil {
				t.Fatalf("%s: fragment %d: %v", sql, i, err)
			}
			rows = append(rows, res.rows...)
		}
		return rows
	}
	// One fragment is pinned to the archived routes the route cache knows: read every bucket
	// once (another statement text) so that both plannings below know the same.
	if _, err := engRun(t, on, alloc, "SELECT id FROM messages"+engWhere("general", all)+" -- warm", nil); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"SELECT COUNT(*) FROM messages" + engWhere("general", all),
		"SELECT id FROM messages" + engWhere("general", all) + " ORDER BY timestamp",
		"SELECT id FROM messages" + engWhere("general", routing.TimeRange{Start: engDay0, End: engDay0.AddDate(0, 0, 5)}),
	} {
		for _, split := range []bool{false, true} {
			// A statement of its own per mode, so that the first planning is a cache miss.
			sql := sql + fmt.Sprintf(" -- %v", split)
			bound, err := on.Fragments(ctx, sql, nil, nil, split)
			if err != nil {
				t.Fatal(err)
			}
			want := serve(sql, bound, nil) // one fragment: compiled and cached by Execute
			if _, err := engRun(t, on, alloc, sql, nil); err != nil {
				t.Fatal(err)
			}
			cached, err := on.Fragments(ctx, sql, nil, nil, split)
			if err != nil {
				t.Fatal(err)
			}
			if len(cached) != len(bound) || (split && strings.Contains(sql, "id FROM") && len(cached) < 2) {
				t.Fatalf("%s: %d fragments cached, %d bound", sql, len(cached), len(bound))
			}
			for i := range cached {
				if got, want := spec(cached[i]), spec(bound[i]); got != want {
					t.Fatalf("%s: fragment %d cached %s, bound %s", sql, i, got, want)
				}
			}
			engSameRows(t, sql+" cached", serve(sql, cached, nil), want)
		}
	}

	// now(): one instant per GetFlightInfo, in every fragment and every time it is served.
	for _, split := range []bool{false, true} {
		sql := "SELECT now() AS planned, id FROM messages" + engWhere("general", all) + fmt.Sprintf(" -- %v", split)
		if _, err := engRun(t, on, alloc, sql, nil); err != nil {
			t.Fatal(err)
		}
		var instants []int64
		for range 2 {
			before := time.Now().Truncate(time.Microsecond)
			frags, err := on.Fragments(ctx, sql, nil, nil, split)
			after := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			if split && len(frags) < 2 {
				t.Fatalf("%s: %d fragments", sql, len(frags))
			}
			first := serve(sql, frags, nil)
			again := serve(sql, frags, nil)
			engSameRows(t, sql+" served again", again, first)
			if len(first) == 0 {
				t.Fatalf("%s: no rows", sql)
			}
			planned := first[0][0].(int64)
			for _, r := range first {
				if r[0].(int64) != planned {
					t.Fatalf("%s: now() %d and %d in one result", sql, r[0], planned)
				}
			}
			if p := time.Unix(0, planned); p.Before(before) || p.After(after) {
				t.Fatalf("%s: now() %s, planned between %s and %s", sql, p, before, after)
			}
			instants = append(instants, planned)
			time.Sleep(2 * time.Millisecond)
		}
		if instants[0] >= instants[1] {
			t.Fatalf("%s: two GetFlightInfo calls planned now() %d then %d", sql, instants[0], instants[1])
		}
	}

	// Parameters: bound per call with their values (the statement was run, and kept, once).
	sql := "SELECT COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3"
	for i, days := range []int{2, 5, 2} {
		r := routing.TimeRange{Start: engDay0, End: engDay0.AddDate(0, 0, days)}
		params := engParams(memory.DefaultAllocator, "general", r, 0, false)
		if i == 0 {
			if _, err := engRun(t, on, alloc, sql, params); err != nil {
				t.Fatal(err)
			}
		}
		frags, err := on.Fragments(ctx, sql, nil, params, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(frags) != 1 || frags[0].Buckets != days {
			t.Fatalf("%d days: %d fragments, %+v", days, len(frags), frags)
		}
		got := serve(sql, frags, params)
		if want := int64(len(f.engRecords("general", r))); len(got) != 1 || got[0][0] != want {
			t.Fatalf("%d days: count %v, want %d", days, got, want)
		}
		params.Release()
	}
	alloc.AssertSize(t, 0)
}
