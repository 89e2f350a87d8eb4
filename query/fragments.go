package query

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/session"
	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// This file splits queries into fragments for Flight endpoints (architecture.md decision 9;
// seed 002: "plan pinned to a metadata version", "leaf fragment → endpoint"). A fragment is
// the query restricted to a group of consecutive buckets — a time window [start, end) on
// bucket bounds — together with the archived generation of every archived bucket it reads,
// known at planning. Fragments are what tickets carry: any replica serves one, reading
// exactly the pinned archives (routing.WithPins: a replaced archive fails the read with
// FAILED_PRECONDITION rather than returning other rows) and the hot buckets at serving time,
// one snapshot per bucket.

// Defaults of Options.EndpointBuckets and Options.MaxEndpoints.
const (
	DefaultEndpointBuckets = 4
	DefaultMaxEndpoints    = 64
)

// Fragment is one share of a query's result: Spec (opaque; ExecuteFragment's input), whether
// it reads archived buckets only, and how many buckets it reads.
type Fragment struct {
	Spec      []byte
	Immutable bool
	Buckets   int
}

// fragmentSpec is the JSON form of a fragment: an optional window (Unix nanoseconds, UTC;
// absent for the whole query) and the pins of its archived buckets.
type fragmentSpec struct {
	Window *[2]int64 `json:"w,omitempty"`
	Pins   []pinSpec `json:"p,omitempty"`
}

type pinSpec struct {
	Partition  []byte `json:"k"`
	Start      int64  `json:"s"`
	Generation int64  `json:"g"`
	Route      string `json:"m"`
}

// bucketRoute is one bucket a query reads with its route at planning.
type bucketRoute struct {
	b        routing.BucketID
	archived bool
	pin      routing.Pin
}

// planned is a bound query: the classic routed query (p, q) or a plan of the general binder
// (general), or a statement that reads no table.
type planned struct {
	p       *plan.Plan
	q       *substrait.Query
	general *substrait.Bound
	explain bool
}

// bindQuery binds sql (or a Substrait plan) with params as Execute does, under the session
// of ctx (session.From: the analytical mode, the user). A client plan of the canonical shapes
// is planned canonically (it may be split into endpoints); any other is bound as Execute binds
// it (prepareSubstrait) and served as one fragment.
func (e *Engine) bindQuery(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch) (*planned, error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, errEmptyQuery
	}
	var (
		pl  planned
		err error
	)
	if sql != "" {
		st, perr := e.stmts.prepare(sql, e.cat, e.bindOptions(ctx))
		if perr != nil {
			return nil, planError(perr)
		}
		pl.explain = st.IsExplain()
		hasParams := params != nil && params.NumRows() > 0
		switch {
		case st.IsGeneral() && hasParams:
			pl.general, err = st.BindGeneralRecord(e.bindOptions(ctx), params, 0)
		case st.IsGeneral():
			pl.general, err = st.BindGeneral(e.bindOptions(ctx))
		case hasParams:
			pl.p, err = st.BindRecord(params, 0)
		default:
			pl.p, err = st.Bind()
		}
	} else if pl.p, err = substrait.FromSubstrait(substraitPlan, e.cat); err != nil {
		// Not of the canonical shapes: the general path, as Execute takes it.
		pl.p = nil
		if pl.general, err = e.prepareSubstrait(ctx, substraitPlan); err != nil {
			return nil, err // a status error already
		}
	}
	if err != nil {
		return nil, planError(err)
	}
	if pl.p != nil {
		if pl.q, err = substrait.Analyze(pl.p, e.cat); err != nil {
			return nil, planError(err)
		}
	}
	return &pl, nil
}

// Fragments plans a query and returns its fragments in result order (flightsql
// FragmentEngine). When split is set and the query is a plain routed scan (no aggregate, no
// limit; ordered by time or not at all) over more than one bucket, every bucket's route is
// resolved (the route cache, else the hot store, at most the table's fan-out at a time) and
// the buckets are grouped: one fragment per group of at most Options.EndpointBuckets
// consecutive buckets (more when the range would need more than Options.MaxEndpoints
// groups), archived and hot buckets in separate groups, in time order (reversed for a
// descending scan), each pinned to the archived generations of its archived buckets.
// Otherwise the query is one fragment, pinned to the archived routes the route cache knows
// (the others resolve when it is served: asking the hot store for every route would double
// the statements of a query over hot buckets). Errors are Execute's planning errors, and
// UNAVAILABLE when the hot store cannot be asked for a route.
func (e *Engine) Fragments(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, split bool) ([]Fragment, error) {
	pl, err := e.bindQuery(ctx, sql, substraitPlan, params)
	if err != nil {
		return nil, err
	}
	if pl.explain {
		return []Fragment{{}}, nil
	}
	type read struct {
		t          *routing.DurableTable
		partitions [][]byte
		r          routing.TimeRange
	}
	var reads []read
	switch {
	case pl.q != nil:
		t, ok := e.tables[pl.q.Table.Name]
		if !ok {
			return nil, status.Error(codes.NotFound, "table not found")
		}
		reads = append(reads, read{t, [][]byte{pl.q.Partition}, pl.q.Range})
	case pl.general != nil && pl.general.Plan != nil:
		routes, err := substrait.Routes(pl.general.Plan, e.cat, session.From(ctx).Analytical)
		if err != nil {
			return nil, planError(err)
		}
		for _, r := range routes {
			if t, ok := e.tables[r.Table.Name]; ok {
				reads = append(reads, read{t, r.Partitions, r.Range})
			}
		}
	}
	var buckets []routing.BucketID
	tableOf := map[string]*routing.DurableTable{}
	total := 0
	for _, rd := range reads {
		// Refused at planning, as Execute would refuse it (an analytical read's partitions
		// are discovered when it runs: counted as one here).
		total += pushdown.BucketCount(rd.t.Def().Strategy, rd.r) * max(1, len(rd.partitions))
		if err := e.checkBuckets(total); err != nil {
			return nil, err
		}
		for _, p := range rd.partitions {
			bs := rd.t.Buckets(p, rd.r)
			for _, b := range bs {
				tableOf[b.TableID] = rd.t
			}
			buckets = append(buckets, bs...)
		}
	}
	if !split || pl.q == nil || !splittable(pl.q) || len(buckets) < 2 {
		// One fragment: pinned to the archived routes the route cache knows (asking the hot
		// store for every route would double the statements of a hot query).
		var routes []bucketRoute
		for _, b := range buckets {
			if key, ok := tableOf[b.TableID].CachedArchive(b); ok {
				routes = append(routes, bucketRoute{b: b, archived: true, pin: routing.PinOf(b, key)})
			}
		}
		f, err := fragmentOf(routes, nil)
		f.Buckets, f.Immutable = len(buckets), f.Immutable && len(routes) == len(buckets)
		if err != nil {
			return nil, err
		}
		return []Fragment{f}, nil
	}
	routes, err := e.resolveRoutes(ctx, buckets, tableOf)
	if err != nil {
		return nil, err
	}
	per := max(e.opts.EndpointBuckets, (len(routes)+e.opts.MaxEndpoints-1)/e.opts.MaxEndpoints)
	var frags []Fragment
	for run := range tierRuns(routes) {
		for chunk := range slices.Chunk(run, per) {
			first, last := chunk[0].b, chunk[len(chunk)-1].b
			w := routing.TimeRange{Start: first.Start, End: last.End}.Intersect(pl.q.Range)
			f, err := fragmentOf(chunk, &[2]int64{w.Start.UnixNano(), w.End.UnixNano()})
			if err != nil {
				return nil, err
			}
			frags = append(frags, f)
		}
	}
	if pl.q.Order == substrait.OrderDesc {
		slices.Reverse(frags)
	}
	return frags, nil
}

// splittable reports whether the buckets of q's range partition its result: a plain scan
// without a limit, in time order or in none.
func splittable(q *substrait.Query) bool {
	return q.Aggregate == nil && q.Group == nil && q.Limit < 0
}

// tierRuns yields the maximal runs of consecutive buckets of one tier (archived or hot).
func tierRuns(routes []bucketRoute) func(func([]bucketRoute) bool) {
	return func(yield func([]bucketRoute) bool) {
		start := 0
		for i := 1; i <= len(routes); i++ {
			if i == len(routes) || routes[i].archived != routes[start].archived {
				if !yield(routes[start:i]) {
					return
				}
				start = i
			}
		}
	}
}

// fragmentOf returns the fragment reading routes within window (nil: the whole query).
func fragmentOf(routes []bucketRoute, window *[2]int64) (Fragment, error) {
	spec := fragmentSpec{Window: window}
	immutable := len(routes) > 0
	for _, r := range routes {
		if !r.archived {
			immutable = false
			continue
		}
		spec.Pins = append(spec.Pins, pinSpec{Partition: r.pin.Partition, Start: r.pin.Start, Generation: r.pin.Generation, Route: r.pin.Route})
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return Fragment{}, err
	}
	return Fragment{Spec: b, Immutable: immutable, Buckets: len(routes)}, nil
}

// resolveRoutes resolves the route of every bucket, at most the largest fan-out of the
// tables at a time, keeping their order.
func (e *Engine) resolveRoutes(ctx context.Context, buckets []routing.BucketID, tableOf map[string]*routing.DurableTable) ([]bucketRoute, error) {
	out := make([]bucketRoute, len(buckets))
	g, gctx := errgroup.WithContext(ctx)
	limit := 1
	for _, t := range tableOf {
		limit = max(limit, t.Fanout())
	}
	g.SetLimit(limit)
	for i, b := range buckets {
		g.Go(func() error {
			r, err := tableOf[b.TableID].ResolveRoute(gctx, b)
			if err != nil {
				return err
			}
			out[i] = bucketRoute{b: b, archived: r.State == routing.StateArchived}
			if out[i].archived {
				out[i].pin = routing.PinOf(b, r.ManifestKey)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, e.execError(err)
	}
	return out, nil
}

// errBadFragment answers a fragment spec this engine cannot have made (tickets are signed,
// so only a server of another version could have).
var errBadFragment = status.Error(codes.InvalidArgument, "the ticket's fragment does not fit its query; run the query again")

// ExecuteFragment runs one fragment of a query (flightsql FragmentEngine): the query with its
// reads restricted to the fragment's window, under the fragment's pins (a pinned bucket whose
// archive was replaced since planning fails the read with FAILED_PRECONDITION). params are
// Execute's; the result stream is Execute's for the fragment's buckets.
func (e *Engine) ExecuteFragment(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, specBytes []byte) (rdr array.RecordReader, err error) {
	defer func() { noteExecution(ctx, rdr) }()
	var spec fragmentSpec
	if json.Unmarshal(specBytes, &spec) != nil {
		return nil, errBadFragment
	}
	if len(spec.Pins) > 0 {
		pins := make([]routing.Pin, len(spec.Pins))
		for i, p := range spec.Pins {
			pins[i] = routing.Pin{Partition: p.Partition, Start: p.Start, Generation: p.Generation, Route: p.Route}
		}
		ctx = routing.WithPins(ctx, routing.NewPins(pins))
	}
	if spec.Window == nil {
		return e.Execute(ctx, sql, substraitPlan, params)
	}
	pl, err := e.bindQuery(ctx, sql, substraitPlan, params)
	if err != nil {
		return nil, err
	}
	if pl.q == nil || pl.explain || !splittable(pl.q) {
		return nil, errBadFragment
	}
	ph, err := pushdown.Plan(pl.p, e.cat, pushdown.Options{Pushdown: e.opts.Pushdown})
	if err != nil {
		return nil, planError(err)
	}
	w := routing.TimeRange{Start: time.Unix(0, spec.Window[0]).UTC(), End: time.Unix(0, spec.Window[1]).UTC()}
	ph.Range = ph.Range.Intersect(w)
	if ph.Range.Empty() {
		return scan.EmptyReader(ph.Schema), nil
	}
	ph.Buckets = pushdown.BucketCount(ph.Table.Strategy, ph.Range)
	return e.run(ctx, pl.p, ph)
}

// pinError is the client's error of a read whose pinned archive was replaced.
func pinError(err error) error {
	if errors.Is(err, routing.ErrPinMismatch) {
		return status.Error(codes.FailedPrecondition, "an archived bucket this ticket was planned against has been replaced since; run the query again")
	}
	return nil
}
