package routing

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The row-aggregate port: the hot tier's work done where the rows are (issue 19; see
// docs/architecture.md, "The executor and its fragments"). Where the partial-aggregate port
// (partial.go) answers only count(*) and the extremes of the event time from keys, this one
// asks a hot store to run a fragment's residual filter and partial aggregate over a bucket's
// rows — including fields of the JSON value — as the bucket's one statement, in the same
// snapshot as its route, and to answer the fragment's partial state itself (the executor's
// scan/aggregate Partial schema, built by the caller). A store answers only what it computes
// exactly as the executor does; anything else (a server or data where it could differ) is
// ErrNoAggregate and the executor reads the bucket's rows. Archived buckets are never answered
// here: their rows are read from the archive as today.

// HotOp is the operation of one HotExpr node.
type HotOp uint8

const (
	// HotTime is the record's event time (timestamp[ns, UTC]; stored in microseconds).
	HotTime HotOp = iota + 1
	// HotField is the text of a top-level member of the JSON value: value->>Key (NULL when
	// the member is absent or JSON null; a string de-escaped; any other value its JSON text
	// as written). Duplicate keys: the last one counts (docs/pulpitum-v4.md: the value is
	// JSON text; PostgreSQL's json processing functions consider the last value operative).
	HotField
	// HotInt4 and HotInt8 cast their one text argument to int4 or int8.
	HotInt4
	HotInt8
	// HotText, HotInt and HotBool are constants: Text; Int (int4 or int8 by IntBits); Bool.
	HotText
	HotInt
	HotBool
	// Comparisons of their two arguments, both text (compared bytewise, the "C" collation,
	// as the executor does), both integers, or both timestamps.
	HotEq
	HotNe
	HotLt
	HotLe
	HotGt
	HotGe
	// HotAnd, HotOr and HotNot are SQL's three-valued logic over their arguments.
	HotAnd
	HotOr
	HotNot
	// HotIsNull and HotIsNotNull test their one argument.
	HotIsNull
	HotIsNotNull
	// HotBin is Bin.Floor of the event time (date_trunc or date_bin in UTC).
	HotBin
)

// HotExpr is one store-neutral expression of a RowAggregate, over one record: a tree of
// plain values (safe to share, never modified once built). Key, Text, Int, IntBits, Bool
// and Bin are the operands of the ops that name them.
type HotExpr struct {
	Op      HotOp
	Args    []HotExpr
	Key     string
	Text    string
	Int     int64
	IntBits int // 32 or 64, for HotInt
	Bool    bool
	Bin     Binning
}

// Fields returns the JSON members e reads (HotField keys), each once, in first-use order,
// appended to into.
func (e HotExpr) Fields(into []string) []string {
	if e.Op == HotField {
		for _, k := range into {
			if k == e.Key {
				return into
			}
		}
		return append(into, e.Key)
	}
	for _, a := range e.Args {
		into = a.Fields(into)
	}
	return into
}

// String spells e as SQL over the routed table (value->>'k', (…)::int4, …), keys and
// constants elided: a shape for EXPLAIN, never a value.
func (e HotExpr) String() string {
	arg := func(i int) string {
		if i < len(e.Args) {
			return e.Args[i].String()
		}
		return "?"
	}
	switch e.Op {
	case HotTime:
		return "timestamp"
	case HotField:
		return "value->>…"
	case HotInt4:
		return "(" + arg(0) + ")::int4"
	case HotInt8:
		return "(" + arg(0) + ")::int8"
	case HotText, HotInt, HotBool:
		return "$"
	case HotEq, HotNe, HotLt, HotLe, HotGt, HotGe:
		ops := map[HotOp]string{HotEq: "=", HotNe: "<>", HotLt: "<", HotLe: "<=", HotGt: ">", HotGe: ">="}
		return arg(0) + " " + ops[e.Op] + " " + arg(1)
	case HotAnd, HotOr:
		parts := make([]string, len(e.Args))
		for i := range e.Args {
			parts[i] = arg(i)
		}
		sep := " AND "
		if e.Op == HotOr {
			sep = " OR "
		}
		return "(" + strings.Join(parts, sep) + ")"
	case HotNot:
		return "NOT (" + arg(0) + ")"
	case HotIsNull:
		return arg(0) + " IS NULL"
	case HotIsNotNull:
		return arg(0) + " IS NOT NULL"
	case HotBin:
		return e.Bin.Shape()
	}
	return fmt.Sprintf("op%d", e.Op)
}

// RowFunc is the function of one RowMeasure.
type RowFunc uint8

const (
	// RowCountStar counts the rows (int64 state).
	RowCountStar RowFunc = iota + 1
	// RowCount counts the rows whose Arg is not NULL (int64 state).
	RowCount
	// RowSum sums the integer Arg exactly: the state is decimal128(38, 0), or float64 when
	// the executor sums the integers as float8 (then exact only up to 2^53 in magnitude: a
	// store declines a larger sum); NULL without a value.
	RowSum
	// RowMin and RowMax are the least and greatest Arg (text bytewise); NULL without a value.
	RowMin
	RowMax
)

// RowMeasure is one partial-state column of a RowAggregate: Func over Arg (nil for
// RowCountStar), over the rows where Filter (when set) is true.
type RowMeasure struct {
	Func   RowFunc
	Arg    *HotExpr
	Filter *HotExpr
}

// RowAggregate asks a hot store for one bucket's partial aggregate computed over its rows
// inside Range: the rows where every Filter conjunct is true, grouped by Groups, each
// Measure computed per group. A plain value (Schema and the expressions are shared, never
// modified).
type RowAggregate struct {
	// Range is the finite half-open range [Start, End), UTC; DurableTable.AggregateRows
	// clips it to the bucket.
	Range TimeRange
	// Filter holds the residual conjuncts beyond the routed predicate.
	Filter []HotExpr
	// Groups are the grouping keys; none and not Grouped asks for exactly one row (count 0
	// and NULL states over no row, as the executor's ungrouped Partial).
	Groups []HotExpr
	// Grouped says the fragment's aggregate is grouped (Groups, or only the partition
	// column, constant in a bucket): a group exists only where a row passes Filter, so an
	// answer never holds a row over no record, as the executor's grouped Partial.
	Grouped bool
	// Measures are the partial-state columns after the groups.
	Measures []RowMeasure
	// Summed says the caller only merges the answered buckets' states (an ungrouped
	// aggregate: its final aggregate never reads one bucket's state alone) and asks for
	// every partition of the table with a route row in Range (partition discovery's), so a
	// store may answer the merge of those states at once (RowAnswer.Summed) instead of
	// bucket by bucket where that costs it less: the cockroach store does so for count(*)
	// alone (routing/cockroach/rowagg.go, "Summed counts"). A store may ignore it. The
	// buckets of a Summed request are distinct and have route rows intersecting Range (the
	// scan's Source.Present): one without a route row may be among them, but never in place
	// of a route row the request leaves out, as a store that finds as many hot route rows
	// in Range as the request asks hot buckets answers for those route rows.
	Summed bool
	// Schema is the answer's schema: one field per group then one per measure. Supported
	// types: utf8 and int32/int64 groups, timestamp[ns, UTC] bins; int64 counts;
	// decimal128(38, 0) or float64 sums; int32, int64, float64 (of integers), utf8 or
	// timestamp extremes.
	Schema *arrow.Schema
	// Alloc allocates the answer's batches (nil: memory.DefaultAllocator).
	Alloc memory.Allocator
}

// Explain describes q for EXPLAIN: shapes only, never a key, constant or value.
func (q RowAggregate) Explain() string {
	var ms []string
	for _, m := range q.Measures {
		var s string
		switch m.Func {
		case RowCountStar:
			s = "count(*)"
		case RowCount:
			s = "count(" + m.Arg.String() + ")"
		case RowSum:
			s = "sum(" + m.Arg.String() + ")"
		case RowMin:
			s = "min(" + m.Arg.String() + ")"
		case RowMax:
			s = "max(" + m.Arg.String() + ")"
		}
		if m.Filter != nil {
			s += " FILTER (" + m.Filter.String() + ")"
		}
		ms = append(ms, s)
	}
	out := "[" + strings.Join(ms, ", ") + "]"
	if len(q.Groups) > 0 {
		gs := make([]string, len(q.Groups))
		for i, g := range q.Groups {
			gs[i] = g.String()
		}
		out += " grouped by " + strings.Join(gs, ", ")
	}
	if len(q.Filter) > 0 {
		fs := make([]string, len(q.Filter))
		for i, f := range q.Filter {
			fs[i] = f.String()
		}
		out += " where " + strings.Join(fs, " AND ")
	}
	return out
}

// Validate checks q's shape: the schema's width (at least one column), the operands of every
// expression. It returns an error wrapping ErrUnsupportedMeasure otherwise.
func (q RowAggregate) Validate() error {
	if q.Schema == nil || q.Schema.NumFields() != len(q.Groups)+len(q.Measures) {
		return fmt.Errorf("%w: a row aggregate whose schema does not match its groups and measures", ErrUnsupportedMeasure)
	}
	if q.Schema.NumFields() == 0 {
		// An Arrow batch without columns holds no rows, so such an answer could not say
		// that a bucket has a group (a grouping by the partition column alone, as SELECT
		// DISTINCT origin): the partial-aggregate port's counts answer that instead.
		return fmt.Errorf("%w: a row aggregate without a group or measure", ErrUnsupportedMeasure)
	}
	var check func(e HotExpr) error
	check = func(e HotExpr) error {
		want := -1
		switch e.Op {
		case HotTime, HotField, HotText, HotInt, HotBool, HotBin:
			want = 0
		case HotInt4, HotInt8, HotNot, HotIsNull, HotIsNotNull:
			want = 1
		case HotEq, HotNe, HotLt, HotLe, HotGt, HotGe:
			want = 2
		case HotAnd, HotOr:
			if len(e.Args) < 2 {
				return fmt.Errorf("%w: %s with %d arguments", ErrUnsupportedMeasure, e, len(e.Args))
			}
		default:
			return fmt.Errorf("%w: expression op %d", ErrUnsupportedMeasure, e.Op)
		}
		if want >= 0 && len(e.Args) != want {
			return fmt.Errorf("%w: %s with %d arguments", ErrUnsupportedMeasure, e, len(e.Args))
		}
		if e.Op == HotBin {
			if err := e.Bin.Validate(); err != nil {
				return err
			}
		}
		for _, a := range e.Args {
			if err := check(a); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range append(append([]HotExpr(nil), q.Filter...), q.Groups...) {
		if err := check(e); err != nil {
			return err
		}
	}
	for _, m := range q.Measures {
		if (m.Arg == nil) != (m.Func == RowCountStar) {
			return fmt.Errorf("%w: a row measure with a wrong argument", ErrUnsupportedMeasure)
		}
		for _, e := range []*HotExpr{m.Arg, m.Filter} {
			if e != nil {
				if err := check(*e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// CountsOnly reports whether q asks count(*) alone (one or more times), with no filter and no
// group: the shape a store may answer for many buckets at once from the table's count over
// the range when q is Summed (routing/cockroach/rowagg.go, "Summed counts").
func (q RowAggregate) CountsOnly() bool {
	if q.Grouped || len(q.Groups) > 0 || len(q.Filter) > 0 || len(q.Measures) == 0 {
		return false
	}
	for _, m := range q.Measures {
		if m.Func != RowCountStar || m.Filter != nil {
			return false
		}
	}
	return true
}

// Fields returns every JSON member q reads, each once, in first-use order.
func (q RowAggregate) Fields() []string {
	var out []string
	for _, e := range q.Filter {
		out = e.Fields(out)
	}
	for _, e := range q.Groups {
		out = e.Fields(out)
	}
	for _, m := range q.Measures {
		for _, e := range []*HotExpr{m.Arg, m.Filter} {
			if e != nil {
				out = e.Fields(out)
			}
		}
	}
	return out
}

// RowAnswer is one bucket's answer of the row-aggregate port: its route and, when the store
// answered (a bucket not archived and not declined), the partial state (the reader must be
// released).
type RowAnswer struct {
	Route  Route
	Reader array.RecordReader
	// Declined reports a bucket the store would not compute exactly as the executor does
	// (ErrNoAggregate for that bucket alone): its rows are read instead.
	Declined bool
	// Summed reports a hot bucket's answer to a RowAggregate.Summed request that holds no
	// state of its own: its state is merged into the one state among the request's answers
	// (the Reader of the first bucket answered, whose Summed is false). Its Reader is nil.
	Summed bool
}

// Release releases the answers' readers.
func ReleaseAnswers(as []RowAnswer) {
	for _, a := range as {
		if a.Reader != nil {
			a.Reader.Release()
		}
	}
}

// RowAggregator is the optional row-aggregate port of a HotStore (rowagg.go): for each bucket
// of bs (one table), its route and, unless it is archived or declined, q's answer over its
// records inside q.Range clipped to it, all from one statement, so every route and answer
// come from one snapshot (docs/pulpitum-v4.md §3.2). A bucket the store would not compute
// exactly as the executor does (the server, or a record it would read differently) is
// Declined. ErrNoAggregate for the whole request when the store answers no row aggregate.
// Safe for concurrent use.
type RowAggregator interface {
	AggregateRows(ctx context.Context, bs []BucketID, q RowAggregate) ([]RowAnswer, error)
}

// SummedCounter is the optional capability of a RowAggregator that answers a Summed,
// CountsOnly request over many buckets with one statement whatever their number (the
// cockroach store on PostgreSQL: routing/cockroach/rowagg.go, "Summed counts"), so a caller
// asks every bucket in one request rather than many at once.
type SummedCounter interface {
	SumsCounts() bool
}

// SumsCounts reports whether t's hot store answers a Summed, CountsOnly row aggregate over
// many buckets at once (SummedCounter).
func (t *DurableTable) SumsCounts() bool {
	sc, ok := t.hot.(SummedCounter)
	return ok && sc.SumsCounts()
}

// AggregateRows answers q for buckets bs of t (one answer per bucket, in order) from the
// hot store, as routeBucket decides routes: a bucket with a cached archived route, or one the
// statement finds archived (then cached), or whose part of q.Range is empty, is Declined and
// the caller reads its rows (an archived one from the archive, as ScanBucket does); under
// WithPins a hot answer for a pinned bucket is ErrPinMismatch. Errors: ErrNoAggregate (the
// store has no such port), errors wrapping ErrUnsupportedMeasure for a malformed q, the
// store's errors (ErrUnavailable…). On error no reader is left open.
func (t *DurableTable) AggregateRows(ctx context.Context, bs []BucketID, q RowAggregate) ([]RowAnswer, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	ra, ok := t.hot.(RowAggregator)
	if !ok {
		return nil, ErrNoAggregate
	}
	out := make([]RowAnswer, len(bs))
	ask, at := make([]BucketID, 0, len(bs)), make([]int, 0, len(bs))
	for i, b := range bs {
		_, archived := t.archivedRoute(b)
		if archived || q.Range.Intersect(b.Range()).Empty() {
			out[i].Declined = true
			continue
		}
		ask = append(ask, b)
		at = append(at, i)
	}
	if len(ask) == 0 {
		return out, nil
	}
	as, err := ra.AggregateRows(ctx, ask, q)
	if err != nil {
		return nil, err
	}
	if len(as) != len(ask) {
		ReleaseAnswers(as)
		return nil, fmt.Errorf("%w: %d row-aggregate answers for %d buckets", ErrOperationFailed, len(as), len(ask))
	}
	for j, a := range as {
		b := ask[j]
		switch {
		case a.Route.State == StateArchived:
			if a.Reader != nil {
				a.Reader.Release()
				a.Reader = nil
			}
			t.cache.PutArchived(b, a.Route.ManifestKey)
			a.Declined = true
		case a.Reader == nil && !a.Summed:
			a.Declined = true
		default:
			if err := checkPin(ctx, b, "", ""); err != nil {
				ReleaseAnswers(as[j:])
				ReleaseAnswers(out)
				return nil, err
			}
		}
		out[at[j]] = a
	}
	return out, nil
}

// IsText reports whether e is text: a JSON member's text or a text constant.
func (e HotExpr) IsText() bool { return e.Op == HotField || e.Op == HotText }

// IsInt reports whether e is an integer: a cast member or an integer constant.
func (e HotExpr) IsInt() bool { return e.Op == HotInt4 || e.Op == HotInt8 || e.Op == HotInt }

// RowDialect is how a hot store spells a RowAggregate's parts in its SQL (RowSQL): Render
// spells one expression; Group one grouping key (sql, already rendered, of schema type t) and
// Measure one sum or extreme (arg its rendered argument; filter its " FILTER (WHERE …)" clause
// or ""), each returning ErrNoAggregate for what the store does not compute exactly.
type RowDialect struct {
	Render  func(e HotExpr) (string, error)
	Group   func(g HotExpr, sql string, t arrow.DataType) (string, error)
	Measure func(m RowMeasure, arg, filter string, t arrow.DataType) (string, error)
}

// RowSQL is the part of a RowAggregate's statement both hot stores build alike: the rendered
// residual conjuncts (Filter), the select list after the statement's present, bad and pass
// columns (Select: "… AS g0", …, "… AS m0", …), the GROUP BY ordinals of the groups (columns
// 4 on), Pass, the count of the rows passing the filter, and FloatSum, whether a sum's state
// is float8 (the store bounds such a group's rows). Counts are spelled here; sums (of
// integers only) and extremes by the dialect.
type RowSQL struct {
	Filter, Select, GroupBy []string
	Pass                    string
	FloatSum                bool
}

// SQL builds q's RowSQL in dialect d; the dialect's errors (ErrNoAggregate) are returned.
func (q RowAggregate) SQL(d RowDialect) (RowSQL, error) {
	var out RowSQL
	for _, f := range q.Filter {
		s, err := d.Render(f)
		if err != nil {
			return RowSQL{}, err
		}
		out.Filter = append(out.Filter, s)
	}
	where := func(extra *HotExpr) (string, error) {
		conds := out.Filter
		if extra != nil {
			s, err := d.Render(*extra)
			if err != nil {
				return "", err
			}
			conds = append(conds[:len(conds):len(conds)], s)
		}
		if len(conds) == 0 {
			return "", nil
		}
		return " FILTER (WHERE " + strings.Join(conds, " AND ") + ")", nil
	}
	for i, g := range q.Groups {
		s, err := d.Render(g)
		if err != nil {
			return RowSQL{}, err
		}
		if s, err = d.Group(g, s, q.Schema.Field(i).Type); err != nil {
			return RowSQL{}, err
		}
		out.Select = append(out.Select, s+" AS g"+strconv.Itoa(i))
		out.GroupBy = append(out.GroupBy, strconv.Itoa(4+i)) // after present, bad and pass
	}
	for i, m := range q.Measures {
		var arg string
		if m.Arg != nil {
			s, err := d.Render(*m.Arg)
			if err != nil {
				return RowSQL{}, err
			}
			arg = s
		}
		fl, err := where(m.Filter)
		if err != nil {
			return RowSQL{}, err
		}
		t := q.Schema.Field(len(q.Groups) + i).Type
		var s string
		switch m.Func {
		case RowCountStar:
			s = "count(*)" + fl
		case RowCount:
			s = "count(" + arg + ")" + fl
		case RowSum:
			// A float8 state is exact only for int4 values (RowSum; the stores bound its rows).
			if !m.Arg.IsInt() || t.ID() == arrow.FLOAT64 && m.Arg.Op != HotInt4 {
				return RowSQL{}, ErrNoAggregate
			}
			out.FloatSum = out.FloatSum || t.ID() == arrow.FLOAT64
			fallthrough
		default:
			if s, err = d.Measure(m, arg, fl, t); err != nil {
				return RowSQL{}, err
			}
		}
		out.Select = append(out.Select, s+" AS m"+strconv.Itoa(i))
	}
	out.Pass = "count(*)"
	if len(out.Filter) > 0 {
		out.Pass = "count(*) FILTER (WHERE " + strings.Join(out.Filter, " AND ") + ")"
	}
	return out, nil
}
