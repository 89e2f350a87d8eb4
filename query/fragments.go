package query

import (
	"context"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/plan"
	"golang.org/x/sync/errgroup"

	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// This file splits queries into fragments for Flight endpoints (docs/architecture.md decision 9;
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

// fragmentSpec is a fragment: an optional window (Unix nanoseconds, UTC; absent for the whole
// query), the pins of its archived buckets and the planning instant. Its ticket form is
// encodeSpec's (fragmentspec.go); the JSON tags are the form of earlier releases, still read.
type fragmentSpec struct {
	Window *[2]int64 `json:"w,omitempty"`
	Pins   []pinSpec `json:"p,omitempty"`
	// Now is the planning instant (Unix ns, UTC, microseconds): every fragment binds the
	// statement's now() and current_timestamp to it, so that the fragments of one result, and
	// a fragment fetched again, see one clock.
	Now int64 `json:"n,omitempty"`
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

// planned is a bound query: a plan over tables or the constants of a table-less statement.
type planned struct {
	b       *substrait.Bound
	explain bool
}

// bindQuery binds sql (or a client's Substrait plan, prepareSubstrait) with params as Execute
// does, under the session of ctx (session.From: the analytical mode, the user) and the
// statement's clock when ctx carries one (withClock).
func (e *Engine) bindQuery(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch) (*planned, error) {
	if sql == "" && len(substraitPlan) == 0 {
		return nil, ErrEmptyQuery
	}
	var (
		pl  planned
		err error
	)
	if sql == "" {
		pl.b, err = e.prepareSubstrait(ctx, substraitPlan)
		return &pl, err // a status error already
	}
	ent, err := e.stmts.entry(sql, e.cat, e.bindOptions(ctx))
	if err != nil {
		return nil, err
	}
	st := ent.st
	pl.explain = st.IsExplain()
	if params != nil && params.NumRows() > 0 {
		pl.b, err = st.BindGeneralRecord(e.bindOptions(ctx), params, 0)
	} else {
		pl.b, err = ent.bind(e.bindOptions(ctx))
	}
	if err != nil {
		return nil, err
	}
	return &pl, nil
}

// cachedCompiled returns the compiled form the statement cache keeps for sql (see Execute):
// nil for a client's Substrait plan, a statement with parameters (its plan depends on the
// values bound) and one not kept compiled (not run yet; its binding reads the clock or the
// user, Bound.Volatile; an analytical read; too many buckets), which are bound per call. A
// statement that cannot be prepared is refused as Execute refuses it.
func (e *Engine) cachedCompiled(ctx context.Context, sql string, params arrow.RecordBatch) (*compiled, error) {
	if sql == "" || (params != nil && params.NumRows() > 0) {
		return nil, nil
	}
	ent, err := e.stmts.entry(sql, e.cat, e.bindOptions(ctx))
	if err != nil {
		return nil, err
	}
	return ent.exec.Load(), nil
}

// readsOf returns the routed reads of routes over this engine's tables.
func (e *Engine) readsOf(routes map[*plan.NamedTableReadRel]substrait.Route) []read {
	var reads []read
	for _, r := range routes {
		if t, ok := e.tables[r.Table.Name]; ok {
			reads = append(reads, read{t: t, route: r})
		}
	}
	return reads
}

// Fragments plans a query and returns its fragments in result order (flightsql
// FragmentEngine). When split is set and the query's result splits into time windows of its
// one routed read (windowsOf: a plain routed scan — filters and projections over the read, no
// aggregate, FetchRel or SetRel — unordered or sorted first by the timestamp) over more than
// one bucket of time, every bucket's route, of every partition the read lists or, analytical,
// discovers, is resolved (the route cache, else the hot store, at most the table's fan-out at
// a time) and the bucket bounds are grouped into windows: one fragment per window of at most
// max(1, Options.EndpointBuckets / partitions) consecutive buckets of time (more when the
// range would need more than Options.MaxEndpoints windows), each reading that window of every
// partition; windows whose buckets are all archived and windows with a hot bucket are never
// grouped together; in time order (reversed for a descending sort), each pinned to the
// archived generations of its archived buckets and immutable when all of them are. Otherwise
// the query is one fragment, pinned to the archived routes the route cache knows (the others
// resolve when it is served: asking the hot store for every route would double the
// statements of a query over hot buckets). Every fragment carries the planning instant, the
// statement's now(). A SQL statement the statement cache keeps compiled (one without
// parameters whose binding reads neither the clock nor the user and whose reads pin their
// partitions, once executed: see Execute) is planned from its compiled form, neither bound
// nor lowered again; other queries are bound per call, at the planning instant. Errors are
// Execute's planning errors, RESOURCE_EXHAUSTED beyond --max-buckets (an analytical read
// counted with the partitions discovered), and UNAVAILABLE when the hot store cannot be
// asked.
func (e *Engine) Fragments(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, split bool) ([]Fragment, error) {
	if _, ok, err := e.parseSystem(sql); ok {
		// A system statement is one endpoint, executed (Execute) where its ticket is fetched.
		return []Fragment{{}}, err
	}
	if substrait.IsSet(sql) {
		// A SET or RESET (a poll of one): one endpoint answering no rows (Execute), or refused.
		if err := substrait.CheckSet(sql); err != nil {
			return nil, err
		}
		return []Fragment{{}}, nil
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	ctx = withClock(ctx, now)
	var (
		reads []read
		win   *read // the one read whose time windows split the result
		desc  bool
	)
	c, err := e.cachedCompiled(ctx, sql, params)
	if err != nil {
		return nil, err
	}
	if c != nil {
		// Compiled with the same plan, routes and options as windowsOf would use, and
		// within --max-buckets (compile checked it).
		reads = c.reads
		if split && len(reads) == 1 {
			if w := c.pr.Windows(); w != scan.WindowsNone {
				win, desc = &reads[0], w == scan.WindowsDesc
			}
		}
	} else {
		pl, err := e.bindQuery(ctx, sql, substraitPlan, params)
		if err != nil {
			return nil, err
		}
		if pl.explain {
			return []Fragment{{}}, nil
		}
		if pl.b.Plan != nil {
			routes, _, total, err := e.routes(ctx, pl.b.Plan)
			if err != nil {
				return nil, err
			}
			if err := e.checkBuckets(total); err != nil {
				return nil, err
			}
			reads = e.readsOf(routes)
			if split && len(reads) == 1 {
				w, err := e.windowsOf(pl.b.Plan, routes)
				if err != nil {
					return nil, err
				}
				if w != scan.WindowsNone {
					win, desc = &reads[0], w == scan.WindowsDesc
				}
			}
		}
	}
	var buckets []routing.BucketID
	tableOf := map[string]*routing.DurableTable{}
	if c != nil {
		buckets = c.bucketIDs // read-only
		for _, rd := range reads {
			tableOf[rd.t.Def().TableID] = rd.t
		}
	} else {
		total := 0
		for _, rd := range reads {
			total += bucketsOf(rd.route)
			if err := e.checkBuckets(total); err != nil {
				return nil, err
			}
			tableOf[rd.t.Def().TableID] = rd.t
			if buckets == nil {
				buckets = rd.buckets()
			} else {
				buckets = append(buckets, rd.buckets()...)
			}
		}
	}
	if !split || win == nil || len(win.route.Partitions) == 0 || routing.BucketCountIn(win.t.Def().Strategy, win.route.Pieces()) < 2 {
		// One fragment: pinned to the archived routes the route cache knows (asking the hot
		// store for every route would double the statements of a hot query).
		spec := fragmentSpec{Now: now.UnixNano(), Pins: make([]pinSpec, 0, len(buckets))}
		for _, b := range buckets {
			if p, ok := tableOf[b.TableID].CachedPin(b); ok {
				spec.Pins = append(spec.Pins, pinOf(p))
			}
		}
		immutable := len(buckets) > 0 && len(spec.Pins) == len(buckets)
		return []Fragment{{Spec: encodeSpec(spec), Immutable: immutable, Buckets: len(buckets)}}, nil
	}
	frags, err := e.windowFragments(ctx, win, now)
	if err != nil {
		return nil, err
	}
	if desc {
		slices.Reverse(frags)
	}
	return frags, nil
}

// read is one routed read of a query: its table and route (partitions, range, and the
// buckets discovery found).
type read struct {
	t     *routing.DurableTable
	route substrait.Route
}

// buckets lists the buckets rd reads, partition by partition, each in bound order.
func (rd read) buckets() []routing.BucketID {
	return slices.Concat(rd.route.Buckets()...)
}

// windowFragments splits rd (at least one partition) into fragments of consecutive windows of
// bucket bounds in ascending time order (see Fragments).
func (e *Engine) windowFragments(ctx context.Context, rd *read, now time.Time) ([]Fragment, error) {
	// Every bucket of every partition, discovered with a route row or not: the windows are
	// slots of bucket bounds shared by all the partitions.
	nparts := len(rd.route.Partitions)
	per := make([][]routing.BucketID, nparts)
	for i, p := range rd.route.Partitions {
		per[i] = routing.BucketsForRanges(rd.t.Def().TableID, p, rd.t.Def().Strategy, rd.route.Pieces())
	}
	slots := len(per[0])
	// Slot-major: the buckets of window slot i are flat[i*nparts : (i+1)*nparts].
	flat := make([]routing.BucketID, 0, slots*nparts)
	for i := range slots {
		for j := range nparts {
			flat = append(flat, per[j][i])
		}
	}
	routes, err := e.resolveRoutes(ctx, flat, map[string]*routing.DurableTable{rd.t.Def().TableID: rd.t})
	if err != nil {
		return nil, err
	}
	slotOf := func(i int) []bucketRoute { return routes[i*nparts : (i+1)*nparts] }
	archived := make([]bool, slots)
	for i := range slots {
		archived[i] = !slices.ContainsFunc(slotOf(i), func(r bucketRoute) bool { return !r.archived })
	}
	size := max(1, e.opts.EndpointBuckets/nparts, (slots+e.opts.MaxEndpoints-1)/e.opts.MaxEndpoints)
	var frags []Fragment
	for start := 0; start < slots; {
		end := start + 1
		for end < slots && end-start < size && archived[end] == archived[start] {
			end++
		}
		w := routing.TimeRange{Start: per[0][start].Start, End: per[0][end-1].End}.Intersect(rd.route.Range)
		frags = append(frags, fragmentOf(routes[start*nparts:end*nparts], &[2]int64{w.Start.UnixNano(), w.End.UnixNano()}, now))
		start = end
	}
	return frags, nil
}

// windowsOf lowers a general plan bound to its routes (scan.Prepare, nothing started) and
// reports how its result splits into time windows (scan.Prepared.Windows).
func (e *Engine) windowsOf(p *plan.Plan, routes map[*plan.NamedTableReadRel]substrait.Route) (scan.Windows, error) {
	pr, err := scan.Prepare(p, e.boundOptions(routes))
	if err != nil {
		return scan.WindowsNone, unsupportedPlan(err)
	}
	return pr.Windows(), nil
}

// fragmentOf returns the fragment reading routes within window (nil: the whole query),
// planned at now.
func fragmentOf(routes []bucketRoute, window *[2]int64, now time.Time) Fragment {
	spec := fragmentSpec{Window: window, Now: now.UnixNano(), Pins: make([]pinSpec, 0, len(routes))}
	immutable := len(routes) > 0
	for _, r := range routes {
		if !r.archived {
			immutable = false
			continue
		}
		spec.Pins = append(spec.Pins, pinOf(r.pin))
	}
	return Fragment{Spec: encodeSpec(spec), Immutable: immutable, Buckets: len(routes)}
}

// pinOf is p's form in a fragment spec.
func pinOf(p routing.Pin) pinSpec {
	return pinSpec{Partition: p.Partition, Start: p.Start, Generation: p.Generation, Route: p.Route}
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
		g.Go(func() (err error) {
			defer panics.Recover("route resolution", &err)
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
		return nil, err
	}
	return out, nil
}

// ExecuteFragment runs one fragment of a query (flightsql FragmentEngine): the query, bound
// at the fragment's planning instant, with its reads restricted to the fragment's window,
// under the fragment's pins (a pinned bucket whose archive was replaced since planning fails
// the read with FAILED_PRECONDITION). params are Execute's; the result stream is Execute's for
// the fragment's buckets.
func (e *Engine) ExecuteFragment(ctx context.Context, sql string, substraitPlan []byte, params arrow.RecordBatch, specBytes []byte) (rdr array.RecordReader, err error) {
	ctx = withReads(ctx)
	defer func() { noteExecution(ctx, rdr) }()
	spec, err := decodeSpec(specBytes)
	if err != nil {
		return nil, ErrBadFragment
	}
	if len(spec.Pins) > 0 {
		pins := make([]routing.Pin, len(spec.Pins))
		for i, p := range spec.Pins {
			pins[i] = routing.Pin{Partition: p.Partition, Start: p.Start, Generation: p.Generation, Route: p.Route}
		}
		ctx = routing.WithPins(ctx, routing.NewPins(pins))
	}
	if spec.Now != 0 {
		ctx = withClock(ctx, time.Unix(0, spec.Now).UTC())
	}
	if spec.Window == nil {
		return e.Execute(ctx, sql, substraitPlan, params)
	}
	w := routing.TimeRange{Start: time.Unix(0, spec.Window[0]).UTC(), End: time.Unix(0, spec.Window[1]).UTC()}
	pl, err := e.bindQuery(ctx, sql, substraitPlan, params)
	if err != nil {
		return nil, err
	}
	if pl.explain || pl.b.Plan == nil {
		return nil, ErrBadFragment
	}
	c, _, err := e.compile(ctx, pl.b, &w)
	if err != nil {
		return nil, err
	}
	if c.pr != nil && c.pr.Windows() == scan.WindowsNone {
		return nil, ErrBadFragment
	}
	return e.start(ctx, c)
}
