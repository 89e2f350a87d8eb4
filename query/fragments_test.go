package query_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"

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

// TestFragments: for every engine statement, the fragments' results concatenated in order
// equal Execute's answer (and the brute-force one), with and without splitting; plain scans
// over many buckets split into groups of at most EndpointBuckets buckets that never mix
// archived and hot buckets, the archived ones immutable; aggregates, limits and top-k stay one
// fragment; a fragment served by a replica that sees its pinned archive replaced fails with
// FAILED_PRECONDITION and reveals nothing, while its hot fragments are served.
func TestFragments(t *testing.T) {
	t.Parallel()
	f := buildEngFixture(t, "mixed", true)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	opts := query.Options{EndpointBuckets: 3}
	on, off := f.enginesWith(t, alloc, nil, opts)
	_, elsewhere := f.enginesWith(t, alloc, replacedArchives{f.store}, opts)
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
					rdr, err := e.ExecuteFragment(ctx, c.sql, nil, nil, fr.Spec)
					if err != nil {
						t.Fatalf("%s: fragment %d: %v", c.name, i, err)
					}
					res, err := engDrain(t, rdr, alloc, c.sql)
					if err != nil {
						t.Fatalf("%s: fragment %d: %v", c.name, i, err)
					}
					got = append(got, res.rows...)
					if len(frags) < 2 {
						continue
					}
					// Served elsewhere: fragments pinned to an archive are refused, hot ones
					// are served.
					rdr, err = elsewhere.ExecuteFragment(ctx, c.sql, nil, nil, fr.Spec)
					if err == nil {
						var again engResult
						again, err = engDrain(t, rdr, alloc, c.sql)
						if err == nil {
							engSameRows(t, c.name+" hot fragment elsewhere", again.rows, res.rows)
						}
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
