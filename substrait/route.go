package substrait

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
)

// routeAtoms gathers the routed conjuncts of one table read's WHERE.
type routeAtoms struct {
	partSeen     bool
	parts        []string // the intersection of the partition sets seen (nil before any)
	partUnknown  bool     // a partition value is a parameter not bound yet
	lower, upper *time.Time
	lowerSeen    bool
	upperSeen    bool
	// nullBound: the timestamp was compared with a NULL of its type (a parameter bound
	// NULL), which no row passes.
	nullBound bool
	// notConstant: the timestamp was compared with an expression over the rows (another
	// column, a field of the value), which bounds no read.
	notConstant bool
	// ranges, when rangesSeen, is the union of time ranges that the conjuncts read by rangeSet
	// allow (an OR of ranges, an IN list of instants; several intersected), sorted by start,
	// disjoint and not adjacent.
	ranges     []routing.TimeRange
	rangesSeen bool
	// param: a time bound or a value of a range set is a parameter not bound yet (prepare
	// time), so the time the read allows is not known.
	param bool
}

// routeRead is the binder's filterPusher.atRead: it takes the routed conjuncts out of the
// conjunction pushed down to read r (route), and returns r under a FilterRel of the route,
// normalised (partition equality or IN, timestamp >= start, timestamp < end), then the other
// conjuncts as residual filters. Missing parts are one error naming everything missing and
// the table's partition column; an empty route (partition sets without a common value, or
// an empty time range) keeps the conjuncts as they are, for Routes to read as a read of no
// bucket.
func (bd *binder) routeRead(r *plan.NamedTableReadRel, conj []expr.Expression) (plan.Rel, error) {
	names := r.Names()
	if len(names) != 1 {
		return nil, unimplementedAre("multi-part table names")
	}
	def, err := lookupTable(bd.cat, names[0])
	if err != nil {
		return nil, err
	}
	// A domain's copy of an outer read takes the routed conjuncts that reached the outer read
	// (cloneReads, domain.go): the outer read is pushed to first, as it is on the left of the
	// join that reads the domain.
	if t, ok := bd.readLinks[r]; ok {
		conj = append(slices.Clip(conj), bd.readRouted[t]...)
	}
	if bd.readRouted == nil {
		bd.readRouted = map[*plan.NamedTableReadRel][]expr.Expression{}
	}
	for _, c := range conj {
		var ra routeAtoms
		if bd.routeAtom(c, &ra) {
			bd.readRouted[r] = append(bd.readRouted[r], c)
		} else if _, _, ok := bd.rangeSet(c); ok {
			bd.readRouted[r] = append(bd.readRouted[r], c)
		}
	}
	out, err := bd.route(def, conj, bd.readLabel(r, def))
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return r, nil
	}
	fp := filterPusher{reg: bd.reg}
	return fp.filter(r, out)
}

// route takes the routed conjuncts out of a read's conjunction (over the base schema of def):
// partition equalities and IN lists (= ANY), and timestamp bounds (>=, >, <, <=, =, BETWEEN,
// NOT of a comparison, either operand order). It returns the conjunction to filter with: the
// route, normalised (partition equality or IN, timestamp >= start, timestamp < end), then the
// other conjuncts as residual filters. A conjunct that is a union of time ranges (rangeSet: an
// OR of ranges, an IN list or = ANY of instants) narrows the route to the buckets the ranges
// cover (RouteInfo.Ranges; the route's bounds are their hull) and stays a residual filter. Missing parts are one error naming everything missing
// and the table's partition column. An empty route — partition sets without a common value
// (origin = 'ORD' AND origin = 'SFO') or bounds that leave no instant — answers no rows, as
// PostgreSQL does: the conjuncts are returned as they are and the read's RouteInfo is Empty.
func (bd *binder) route(def routing.TableDef, conj []expr.Expression, label readLabel) ([]expr.Expression, error) {
	var ra routeAtoms
	var residual, routed []expr.Expression
	bd.boundErr = nil
	for _, c := range conj {
		if bd.routeAtom(c, &ra) {
			routed = append(routed, c)
			continue
		}
		bd.rangeAtom(c, &ra)
		residual = append(residual, c)
	}
	info := RouteInfo{Table: def, RouteConjuncts: len(routed), Residual: len(residual), Analytical: !ra.partSeen}
	readsNothing := ra.nullBound || slices.ContainsFunc(residual, bd.constantlyFalse)
	if !readsNothing {
		if err := ra.check(def, label, bd.opts.Analytical, bd.boundErr); err != nil {
			return nil, err
		}
	}
	if readsNothing || ra.empty() {
		info.Empty, info.Analytical, info.Partitions = true, false, [][]byte{}
		info.Range = ra.emptyRange()
		bd.routes = append(bd.routes, info)
		return append(routed, residual...), nil
	}
	if len(ra.parts) > bd.opts.MaxPartitions {
		return nil, errTooManyPartitions(def, len(ra.parts), bd.opts.MaxPartitions)
	}
	rt := types.NewRecordTypeFromTypes(baseSchema(def).Struct.Types)
	pref, err := expr.NewRootFieldRef(expr.NewStructFieldRef(partitionField), rt)
	if err != nil {
		return nil, err
	}
	tref, err := expr.NewRootFieldRef(expr.NewStructFieldRef(timestampField), rt)
	if err != nil {
		return nil, err
	}
	var out []expr.Expression
	if ra.partSeen {
		if ra.partUnknown {
			// Prepare time: the values are parameters.
			out = append(out, expr.NewPrimitiveLiteral(true, false))
		} else {
			opts := make([]expr.Expression, len(ra.parts))
			for i, p := range ra.parts {
				opts[i] = expr.NewPrimitiveLiteral(p, false)
				info.Partitions = append(info.Partitions, []byte(p))
			}
			if len(opts) == 1 {
				eq, err := bd.b.ScalarFn(URNComparison, "equal", nil, pref, opts[0])
				if err != nil {
					return nil, err
				}
				out = append(out, eq)
			} else {
				out = append(out, &expr.SingularOrList{Value: pref, Options: opts})
			}
		}
	}
	if set, finite := ra.timeSet(); finite {
		info.Range, info.Ranges = hullOf(set)
		gte, err := bd.b.ScalarFn(URNComparison, "gte", nil, tref, timestampLiteral(info.Range.Start.UnixNano()))
		if err != nil {
			return nil, err
		}
		lt, err := bd.b.ScalarFn(URNComparison, "lt", nil, tref, timestampLiteral(info.Range.End.UnixNano()))
		if err != nil {
			return nil, err
		}
		out = append(out, gte, lt)
	}
	bd.routes = append(bd.routes, info)
	return append(out, residual...), nil
}

// empty reports a route that reads nothing: partition sets without a common value, or both
// bounds known and no instant between them (or in the union of ranges they intersect).
func (ra *routeAtoms) empty() bool {
	if ra.partSeen && !ra.partUnknown && len(ra.parts) == 0 {
		return true
	}
	set, finite := ra.timeSet()
	return finite && len(set) == 0
}

// timeSet is the set of instants ra's time atoms allow, as sorted disjoint ranges: the range
// of its bounds, intersected with its union of ranges when one was read (rangeAtom). finite is
// false while a side is unbounded or bounded only by a parameter not bound yet.
func (ra *routeAtoms) timeSet() (set []routing.TimeRange, finite bool) {
	if ra.param || !ra.rangesSeen && (ra.lower == nil || ra.upper == nil) {
		return nil, false
	}
	b := routing.TimeRange{Start: minNanoTime, End: maxNanoTime}
	if ra.lower != nil {
		b.Start = *ra.lower
	}
	if ra.upper != nil {
		b.End = *ra.upper
	}
	if !ra.rangesSeen {
		if b.Empty() {
			return nil, true
		}
		return []routing.TimeRange{b}, true
	}
	return intersectRanges(ra.ranges, []routing.TimeRange{b}), true
}

// hullOf returns the smallest range holding every range of set (sorted, disjoint, at least
// one), and set itself when it holds more than one (nil otherwise: the hull is the set).
func hullOf(set []routing.TimeRange) (routing.TimeRange, []routing.TimeRange) {
	hull := routing.TimeRange{Start: set[0].Start, End: set[len(set)-1].End}
	if len(set) == 1 {
		return hull, nil
	}
	return hull, set
}

// rangeAtom reads conjunct c as a union of time ranges into ra (rangeSet), reporting whether
// it did. A value that is a parameter not bound yet sees both bounds, as routeAtom's do.
func (bd *binder) rangeAtom(c expr.Expression, ra *routeAtoms) bool {
	pinned := bd.orPartitions(c, ra)
	set, unknown, ok := bd.rangeSet(c)
	if !ok {
		return pinned
	}
	ra.lowerSeen, ra.upperSeen = true, true
	switch {
	case unknown:
		ra.param = true
	case !ra.rangesSeen:
		ra.rangesSeen, ra.ranges = true, set
	default:
		ra.ranges = intersectRanges(ra.ranges, set)
	}
	return true
}

// passesNothing reports a disjunct no row passes: one of its conjuncts is a constant false
// or NULL (constantlyFalse), as in (1 = 2 AND origin = 'ATL').
func (bd *binder) passesNothing(a expr.Expression) bool {
	return slices.ContainsFunc(splitConj(a), bd.constantlyFalse)
}

// positive returns c without the double negations around it: NOT NOT x passes the rows x
// passes (NOT NOT NULL is NULL).
func positive(c expr.Expression) expr.Expression {
	for {
		n, ok := notOf(c)
		if !ok {
			return c
		}
		x, ok := notOf(n)
		if !ok {
			return c
		}
		c = x
	}
}

// notOf returns x when c is functions_boolean's not(x).
func notOf(c expr.Expression) (expr.Expression, bool) {
	v, ok := c.(*expr.ScalarFunction)
	if !ok || v.ID().URN != URNBoolean || v.Name() != "not" || v.NArgs() != 1 {
		return nil, false
	}
	x, ok := v.Arg(0).(expr.Expression)
	return x, ok
}

// orPartitions reads c, a conjunct routeAtom does not read, as the partitions an OR whose
// every disjunct pins the partition column in its conjunction allows — (origin = 'ORD' AND
// timestamp >= A AND timestamp < B) OR (origin = 'SFO' AND …), as analysts and dashboards
// compare two series — the union of the disjuncts' partition sets, and narrows ra's
// partitions to it (addParts); the OR stays a residual filter, which keeps each pin with its
// own range. A disjunct whose pins contradict allows no partition. It reports whether c was
// read so.
func (bd *binder) orPartitions(c expr.Expression, ra *routeAtoms) bool {
	v, ok := positive(c).(*expr.ScalarFunction)
	if !ok || v.ID().URN != URNBoolean || v.Name() != "or" || v.NArgs() < 2 {
		return false
	}
	union, unknown := []string{}, false
	for i := range v.NArgs() {
		a, ok := v.Arg(i).(expr.Expression)
		if !ok {
			return false
		}
		if bd.passesNothing(a) {
			continue // a disjunct no row passes allows no partition
		}
		var arm routeAtoms
		for _, cc := range splitConj(a) {
			if !bd.routeAtom(cc, &arm) {
				bd.orPartitions(cc, &arm)
			}
		}
		if !arm.partSeen {
			return false
		}
		unknown = unknown || arm.partUnknown
		union = append(union, arm.parts...)
	}
	if unknown {
		ra.partSeen, ra.partUnknown = true, true
		return true
	}
	ra.addParts(union)
	return true
}

// rangeSet reads c, a conjunct routeAtom does not read, as a union of time ranges of the
// timestamp column: an IN list (or = ANY) of timestamp constants, each the one instant
// [X, X+1ns), or an OR every disjunct of which bounds the timestamp on both sides in its
// conjunction (its bounds, and the range sets among its conjuncts, intersected; its other
// conjuncts narrow nothing, and the OR stays a residual filter), NOT (a AND b) read as the OR
// of NOT a and NOT b, or NOT (a OR b) whose operands routeAtom does not all read, narrowed by
// the negations it reads (negatedAtom; the others narrow nothing). The ranges come sorted by
// start, disjoint and not adjacent; unknown reports a value that is a parameter not bound yet
// (prepare time), where set is nil.
func (bd *binder) rangeSet(c expr.Expression) (set []routing.TimeRange, unknown, ok bool) {
	switch v := positive(c).(type) {
	case *expr.SingularOrList:
		if !routedColumn(unwrapColumnCast(v.Value), timestampField) {
			return nil, false, false
		}
		for _, o := range v.Options {
			if bd.isParamBound(o) {
				return nil, true, true
			}
			var one routeAtoms
			if !bd.boundAtom(">=", o, &one) || !bd.boundAtom("<=", o, &one) {
				return nil, false, false
			}
			set = append(set, routing.TimeRange{Start: *one.lower, End: *one.upper})
		}
		return mergeRanges(set), false, true
	case *expr.ScalarFunction:
		if v.ID().URN != URNBoolean || v.NArgs() < 1 {
			return nil, false, false
		}
		neg := false
		if x, ok := v.Arg(0).(*expr.ScalarFunction); ok && v.Name() == "not" && v.NArgs() == 1 && x.ID().URN == URNBoolean && x.NArgs() >= 1 {
			switch x.Name() {
			case "and":
				// NOT (a AND b): the union of NOT a and NOT b.
				neg, v = true, x
			case "or":
				// NOT (a OR b) implies NOT a and NOT b: those read narrow, one arm.
				var arm routeAtoms
				for i := range x.NArgs() {
					if a, ok := x.Arg(i).(expr.Expression); ok {
						bd.negatedAtom(a, &arm)
					}
				}
				if arm.param {
					return nil, true, true
				}
				sub, finite := arm.timeSet()
				if !finite {
					return nil, false, false
				}
				return mergeRanges(sub), false, true
			}
		}
		if !neg && v.Name() != "or" {
			return nil, false, false
		}
		for i := range v.NArgs() {
			a, ok := v.Arg(i).(expr.Expression)
			if !ok {
				return nil, false, false
			}
			if !neg && bd.passesNothing(a) {
				continue // a disjunct no row passes allows no instant
			}
			var arm routeAtoms
			if neg {
				bd.negatedAtom(a, &arm)
			} else {
				for _, cc := range splitConj(a) {
					if !bd.routeAtom(cc, &arm) {
						bd.rangeAtom(cc, &arm)
					}
				}
			}
			if arm.param {
				unknown = true
				continue
			}
			sub, finite := arm.timeSet()
			if !finite {
				return nil, false, false
			}
			set = append(set, sub...)
		}
		if unknown {
			return nil, true, true
		}
		return mergeRanges(set), false, true
	}
	return nil, false, false
}

// mergeRanges sorts rs by start and merges the ranges that overlap or touch, dropping empty
// ones.
func mergeRanges(rs []routing.TimeRange) []routing.TimeRange {
	rs = slices.DeleteFunc(rs, routing.TimeRange.Empty)
	slices.SortFunc(rs, func(a, b routing.TimeRange) int { return a.Start.Compare(b.Start) })
	out := []routing.TimeRange{}
	for _, r := range rs {
		if n := len(out); n > 0 && !r.Start.After(out[n-1].End) {
			if r.End.After(out[n-1].End) {
				out[n-1].End = r.End
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// intersectRanges returns the instants both a and b hold, of two sorted disjoint lists of
// ranges, as one such list.
func intersectRanges(a, b []routing.TimeRange) []routing.TimeRange {
	out := []routing.TimeRange{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if x := a[i].Intersect(b[j]); !x.Empty() {
			out = append(out, x)
		}
		if a[i].End.Before(b[j].End) {
			i++
		} else {
			j++
		}
	}
	return out
}

// emptyRange is the range an empty route records: the empty range at its lower bound.
func (ra *routeAtoms) emptyRange() routing.TimeRange {
	if ra.lower == nil {
		return routing.TimeRange{}
	}
	return routing.TimeRange{Start: *ra.lower, End: *ra.lower}
}

// routeAtom reads one conjunct as part of the route; false leaves it residual. It reads the
// forms the binder writes and those of the Substrait producers people use: a partition
// equality, IN list (SingularOrList) or OR chain of those; a timestamp comparison in either
// operand order or between(timestamp, low, high) (both bounds inclusive), NOT pushed through
// them (negatedAtom); literals, or expressions of constants (constantBound), under
// casts to string or timestamp types (a zone-less timestamp or a string is a UTC time), and
// the column under a cast to its own type family (after normalizeTimestamps a cast of the
// timestamp to a timestamp type does not change it).
func (bd *binder) routeAtom(c expr.Expression, ra *routeAtoms) bool {
	if set, unknown, ok := bd.partitionSet(c); ok {
		if unknown {
			ra.partSeen, ra.partUnknown = true, true
			return true
		}
		ra.addParts(set)
		return true
	}
	v, ok := c.(*expr.ScalarFunction)
	if ok && v.ID().URN == URNBoolean && v.Name() == "not" && v.NArgs() == 1 {
		x, _ := v.Arg(0).(expr.Expression)
		return x != nil && bd.negatedAtom(x, ra)
	}
	if !ok || (v.ID().URN != URNComparison && v.ID().URN != URNDatetime) {
		// isthmus declares timestamp comparisons in functions_datetime (lt:pts_pts…).
		return false
	}
	if v.Name() == "between" && v.NArgs() == 3 {
		col, _ := v.Arg(0).(expr.Expression)
		lo, _ := v.Arg(1).(expr.Expression)
		hi, _ := v.Arg(2).(expr.Expression)
		if col == nil || lo == nil || hi == nil || !routedColumn(unwrapColumnCast(col), timestampField) {
			return false
		}
		if bd.isParamBound(lo) || bd.isParamBound(hi) {
			ra.lowerSeen, ra.upperSeen, ra.param = true, true, true
			return true
		}
		if bd.nullConstant(lo) || bd.nullConstant(hi) {
			ra.nullBound = true
			return true
		}
		var tmp routeAtoms
		if !bd.boundAtom(">=", lo, &tmp) || !bd.boundAtom("<=", hi, &tmp) {
			return false
		}
		for _, b := range []struct {
			op  string
			val expr.Expression
		}{{">=", lo}, {"<=", hi}} {
			bd.boundAtom(b.op, b.val, ra)
		}
		return true
	}
	if v.NArgs() != 2 {
		return false
	}
	op, ok := substraitOps[v.Name()]
	if !ok {
		return false
	}
	l, _ := v.Arg(0).(expr.Expression)
	r, _ := v.Arg(1).(expr.Expression)
	if l == nil || r == nil {
		return false
	}
	return bd.comparisonAtom(op, l, r, ra)
}

// negatedAtom reads NOT x as route atoms into ra, pushing the NOT down as De Morgan's laws
// do: NOT of a comparison is its negation (NOT (timestamp < X) is timestamp >= X: the column
// is NOT NULL, and a NULL operand is no bound, so the negation is the complement), NOT NOT y
// is y (a conjunction of route atoms), and NOT (a OR b) is NOT a AND NOT b, read only when
// every one of them is a route atom. ra is unchanged when it reads nothing. NOT (a AND b), a
// union, is rangeSet's; NOT BETWEEN, two half-lines, bounds no finite range.
func (bd *binder) negatedAtom(x expr.Expression, ra *routeAtoms) bool {
	in, ok := x.(*expr.ScalarFunction)
	if !ok {
		return false
	}
	tmp := *ra
	switch {
	case in.ID().URN == URNBoolean && in.Name() == "not" && in.NArgs() == 1:
		y, _ := in.Arg(0).(expr.Expression)
		if y == nil {
			return false
		}
		for _, c := range splitConj(y) {
			if !bd.routeAtom(c, &tmp) {
				ra.notConstant = ra.notConstant || tmp.notConstant
				return false
			}
		}
	case in.ID().URN == URNBoolean && in.Name() == "or":
		for i := range in.NArgs() {
			a, _ := in.Arg(i).(expr.Expression)
			if a == nil || !bd.negatedAtom(a, &tmp) {
				ra.notConstant = ra.notConstant || tmp.notConstant
				return false
			}
		}
	case (in.ID().URN == URNComparison || in.ID().URN == URNDatetime) && in.NArgs() == 2:
		neg, ok := negatedOps[in.Name()]
		if !ok {
			return false
		}
		l, _ := in.Arg(0).(expr.Expression)
		r, _ := in.Arg(1).(expr.Expression)
		if l == nil || r == nil {
			return false
		}
		return bd.comparisonAtom(neg, l, r, ra)
	default:
		return false
	}
	*ra = tmp
	return true
}

// negatedOps maps a Substrait comparison to the SQL operator of its negation.
var negatedOps = map[string]string{"lt": ">=", "lte": ">", "gt": "<=", "gte": "<"}

// comparisonAtom reads `l op r` (op a SQL operator) as a timestamp bound into ra, either
// operand order: an inequality is one bound, an equality timestamp = X the one-instant range
// [X, X+1ns) (both bounds, or neither when X is not a timestamp literal).
func (bd *binder) comparisonAtom(op string, l, r expr.Expression, ra *routeAtoms) bool {
	col, val := unwrapColumnCast(l), r
	if !isBaseRef(col) {
		col, val, op = unwrapColumnCast(r), l, swapped[op]
	}
	if bd.isParamBound(val) {
		switch {
		case routedColumn(col, timestampField) && (op == ">=" || op == ">"):
			ra.lowerSeen, ra.param = true, true
			return true
		case routedColumn(col, timestampField) && (op == "<" || op == "<="):
			ra.upperSeen, ra.param = true, true
			return true
		case routedColumn(col, timestampField) && op == "=":
			ra.lowerSeen, ra.upperSeen, ra.param = true, true, true
			return true
		}
		return false
	}
	if !routedColumn(col, timestampField) {
		return false
	}
	if bd.nullConstant(val) {
		ra.nullBound = true // timestamp <op> NULL: no row passes
		return true
	}
	if op == "=" {
		var tmp routeAtoms
		if !bd.boundAtom(">=", val, &tmp) || !bd.boundAtom("<=", val, &tmp) {
			ra.notConstant = ra.notConstant || !isConstant(val)
			return false
		}
		bd.boundAtom(">=", val, ra)
		bd.boundAtom("<=", val, ra)
		return true
	}
	if !bd.boundAtom(op, val, ra) {
		ra.notConstant = ra.notConstant || op != "<>" && !isConstant(val)
		return false
	}
	return true
}

// boundAtom reads `timestamp op val` as a bound into ra; false when val is neither a
// timestamp literal nor an expression of constants whose value is a timestamp or a date
// (constantBound), or op not an inequality.
func (bd *binder) boundAtom(op string, val expr.Expression, ra *routeAtoms) bool {
	lit, ok := literalOf(val)
	if !ok {
		if lit, ok = bd.constantBound(val); !ok {
			return false
		}
	}
	t, err := timestampLiteralValue(lit)
	if err != nil {
		return false
	}
	ns := t.UnixNano()
	switch op {
	case ">=":
	case ">":
		if ns == math.MaxInt64 {
			return false
		}
		t = time.Unix(0, ns+1).UTC()
	case "<":
	case "<=":
		if ns == math.MaxInt64 {
			// timestamp <= the last instant: every row; the bound is the end of time.
			t = maxNanoTime
		} else {
			t = time.Unix(0, ns+1).UTC()
		}
	default:
		return false
	}
	if op == ">=" || op == ">" {
		ra.lowerSeen = true
		if ra.lower == nil || t.After(*ra.lower) {
			ra.lower = &t
		}
	} else {
		ra.upperSeen = true
		if ra.upper == nil || t.Before(*ra.upper) {
			ra.upper = &t
		}
	}
	return true
}

// partitionSet reads c as a set of partition values: partition = literal (either order), a
// SingularOrList of the partition column, or an OR (functions_boolean) of those, whose set is
// their union. unknown is true when a value is a parameter not bound yet.
func (bd *binder) partitionSet(c expr.Expression) (set []string, unknown, ok bool) {
	switch v := c.(type) {
	case *expr.SingularOrList:
		if !routedColumn(unwrapColumnCast(v.Value), partitionField) {
			return nil, false, false
		}
		for _, o := range v.Options {
			if _, ph := bd.ps.placeholders[o]; ph {
				return nil, true, true
			}
			if _, null := o.(*expr.NullLiteral); null {
				continue // a NULL member (a parameter bound NULL) matches no partition
			}
			s, ok := partitionLiteral(o)
			if !ok {
				return nil, false, false
			}
			set = append(set, s)
		}
		return set, false, true
	case *expr.ScalarFunction:
		switch {
		case v.ID().URN == URNBoolean && v.Name() == "or" && v.NArgs() >= 1:
			for i := range v.NArgs() {
				a, ok := v.Arg(i).(expr.Expression)
				if !ok {
					return nil, false, false
				}
				if bd.passesNothing(a) {
					continue // a disjunct no row passes allows no partition
				}
				sub, unk, ok := bd.partitionSet(a)
				if !ok {
					return nil, false, false
				}
				unknown = unknown || unk
				set = append(set, sub...)
			}
			return set, unknown, true
		case v.ID().URN == URNComparison && v.Name() == "equal" && v.NArgs() == 2:
			l, _ := v.Arg(0).(expr.Expression)
			r, _ := v.Arg(1).(expr.Expression)
			if l == nil || r == nil {
				return nil, false, false
			}
			col, val := unwrapColumnCast(l), r
			if !isBaseRef(col) {
				col, val = unwrapColumnCast(r), l
			}
			if !routedColumn(col, partitionField) {
				return nil, false, false
			}
			if _, ph := bd.ps.placeholders[val]; ph {
				return nil, true, true
			}
			if _, null := val.(*expr.NullLiteral); null {
				return []string{}, false, true // partition = NULL (a parameter bound NULL): no partition
			}
			s, ok := partitionLiteral(val)
			if !ok {
				if isConstant(val) && bd.holdsParameter(val) {
					return nil, true, true // origin = ?::char(3) at prepare time
				}
				if s, ok = bd.constantString(val); !ok {
					return nil, false, false
				}
			}
			return []string{s}, false, true
		}
	}
	return nil, false, false
}

// constantString evaluates val, a text expression of constants (a parameter's value under a
// cast to char(n), which the comparison with the text column reads blank-trimmed as
// PostgreSQL's bpchar-to-text cast does), as its value; false when val is no such expression
// or its value is NULL.
func (bd *binder) constantString(val expr.Expression) (string, bool) {
	a, ok := bd.evalConstant(val)
	if !ok {
		return "", false
	}
	defer a.Release()
	if a.Len() != 1 || a.IsNull(0) {
		return "", false
	}
	switch v := a.(type) {
	case *array.String:
		return v.Value(0), true
	case *array.LargeString:
		return v.Value(0), true
	}
	return "", false
}

// partitionLiteral reads a string literal (possibly under casts to string types) as a
// partition value. A fixed-length char literal keeps its characters: producers write
// 'ORD' as char(3).
func partitionLiteral(e expr.Expression) (string, bool) {
	l, ok := literalOf(e)
	if !ok {
		return "", false
	}
	return stringLiteral(l)
}

// unwrapColumnCast removes casts around a base column reference to a string or timestamp
// type (identity casts once timestamps are normalised; a varchar cast of a string column):
// the column itself, or e unchanged.
func unwrapColumnCast(e expr.Expression) expr.Expression {
	x := e
	for {
		c, ok := x.(*expr.Cast)
		if !ok {
			break
		}
		switch c.Type.(type) {
		case *types.StringType, *types.VarCharType, *types.PrecisionTimestampTzType:
		default:
			return e
		}
		x = c.Input
	}
	if isBaseRef(x) {
		return x
	}
	return e
}

// ImpliedByRoute reports whether conjunct e, an expression over the base schema of a ReadRel
// of def, holds for every record a routed read of partitions inside r returns, so that the
// executor need not evaluate it: a partition equality or IN list holding every partition read,
// a lower bound (timestamp >= L, or > L) at or before r.Start, or an upper bound (timestamp <
// L, or <= L) at or after r.End, in either operand order — the conjuncts the binder makes the
// route of (routeAtom). Any other expression, or one it cannot read, is not implied (the
// executor evaluates it).
func ImpliedByRoute(e expr.Expression, def routing.TableDef, partitions [][]byte, r routing.TimeRange) bool {
	bd := &binder{ps: &paramState{placeholders: map[expr.Expression]int{}}}
	var ra routeAtoms
	if !bd.routeAtom(e, &ra) {
		return false
	}
	if ra.partSeen {
		for _, p := range partitions {
			if !slices.Contains(ra.parts, string(p)) {
				return false
			}
		}
		if len(partitions) == 0 {
			return false
		}
	}
	if ra.lower != nil && ra.lower.After(r.Start) {
		return false
	}
	if ra.upper != nil && ra.upper.Before(r.End) {
		return false
	}
	return ra.partSeen || ra.lower != nil || ra.upper != nil
}

// check refuses a read missing part of its route with one InvalidArgument naming everything
// missing and the table's own partition column; without a partition pin, unless analytical
// (where no pin is needed, and the message names the time bound only), it says how to list
// several partitions and how to read them all (the analytical mode).
func (ra *routeAtoms) check(def routing.TableDef, label readLabel, analytical bool, boundErr error) error {
	if boundErr != nil && (!ra.lowerSeen || !ra.upperSeen) {
		return boundErr
	}
	var missing []string
	if !ra.partSeen && !analytical {
		missing = append(missing, def.PartitionColumn+" = <value>")
	}
	switch {
	case !ra.lowerSeen && !ra.upperSeen:
		missing = append(missing, "timestamp >= <start> AND timestamp < <end>")
	case !ra.lowerSeen:
		missing = append(missing, "timestamp >= <start>")
	case !ra.upperSeen:
		missing = append(missing, "timestamp < <end>")
	}
	if len(missing) == 0 {
		return nil
	}
	msg := " needs " + strings.Join(missing, " and ")
	if !ra.partSeen && !analytical {
		// The analytical mode reads every partition of the range: only the time bound is
		// missing then, and the hint would speak of what is not.
		msg += " (several partitions: " + def.PartitionColumn + " IN (…) or = ANY($1); every partition of the range: the analytical mode, session option " + AnalyticalOption + " = on)"
	}
	if ra.notConstant && (!ra.lowerSeen || !ra.upperSeen) {
		msg += notConstantBound
	}
	if label.place == "" {
		return &Error{Code: InvalidArgument, Msg: def.Name + msg}
	}
	// The statement reads the table more than once: the read is named by the alias it is read
	// under, which is the client's text (the log says <identifier>).
	return &Error{Code: InvalidArgument, Msg: def.Name + " read " + label.how + " " + label.place + msg,
		LogMsg: def.Name + " read " + label.how + " <identifier>" + msg}
}

// notConstantBound ends the refusal of a read whose timestamp was compared with an expression
// over the rows (timestamp >= (value->>'t')::timestamptz), which bounds nothing.
const notConstantBound = "; a time bound is a constant, a constant expression or a parameter, not an expression over the rows"

// readLabel names one read of a table in a statement that reads it more than once: how is
// "as" (FROM flights AS i) or "in" (a derived table or WITH query FROM … AS i reads it), place
// the alias. The zero readLabel names none.
type readLabel struct{ how, place string }

// readLabel is the label of read r (of table def) in refusals of its route: the alias it is
// read under when the statement reads def more than once, else none.
func (bd *binder) readLabel(r *plan.NamedTableReadRel, def routing.TableDef) readLabel {
	if t, ok := bd.readLinks[r]; ok {
		r = t // a domain's copy is named as the read it copies
	}
	n := 0
	for _, x := range bd.reads {
		if x.Names()[0] == def.Name {
			n++
		}
	}
	if n < 2 {
		return readLabel{}
	}
	return bd.readPlace[r]
}

// AnalyticalOption is the name of the Flight SQL session option that enables the analytical
// mode (flightsql.OptionAnalytical), as refusals name it.
const AnalyticalOption = "analytical"

func (ra *routeAtoms) addParts(set []string) {
	slices.Sort(set)
	set = slices.Compact(set)
	if !ra.partSeen {
		ra.partSeen, ra.parts = true, set
		return
	}
	var keep []string
	for _, p := range ra.parts {
		if slices.Contains(set, p) {
			keep = append(keep, p)
		}
	}
	ra.parts = keep
}

// nullConstant reports whether e, a bound of the timestamp, is a constant whose value is NULL:
// a NULL literal, or an expression of constants evaluating to NULL (a parameter bound NULL
// under the casts that retype it to the column's type).
func (bd *binder) nullConstant(e expr.Expression) bool {
	if _, ok := e.(*expr.NullLiteral); ok {
		return true
	}
	if _, ok := literalOf(e); ok || !isConstant(e) || holdsDeferred(e) {
		return false
	}
	return bd.constantlyFalse(e) // a timestamp is never false: only NULL is
}

func isBaseRef(e expr.Expression) bool {
	fr, ok := e.(*expr.FieldReference)
	if !ok {
		return false
	}
	_, ok = rootFieldIndex(fr)
	return ok
}

// Route is what one routed read of a plan reads: the table, the pinned partitions (nil when
// the read is analytical: every partition of the range) and the finite half-open time range;
// Ranges, when not nil, the disjoint ranges (sorted, at least two) whose union the read's
// time filter allows (an OR of ranges, an IN list of instants), Range their hull: the read asks
// only the buckets they cover.
// An Empty route (contradictory partition pins, or bounds leaving no instant) reads no
// bucket: its Partitions are empty and not nil, its Range empty. Present, when not nil, is set
// by partition discovery: per partition (parallel to Partitions), the buckets with a route row
// (routing.BucketSet), the only ones the read asks; nil reads every bucket of the range.
type Route struct {
	Table      routing.TableDef
	Partitions [][]byte
	Present    []routing.BucketSet
	Range      routing.TimeRange
	Ranges     []routing.TimeRange
	Empty      bool
}

// Buckets returns the buckets the read asks, per partition (parallel to Partitions): those of
// the range (of its ranges, when it has several), less the ones discovery found without a
// route row (Present).
func (r Route) Buckets() [][]routing.BucketID {
	return routing.PartitionBucketsIn(r.Table, r.Partitions, r.Present, r.Pieces())
}

// Clip returns the route restricted to the instants of w (a multi-endpoint result's window):
// its Range and Ranges intersected with w; an empty Range when nothing is left.
func (r Route) Clip(w routing.TimeRange) Route {
	r.Range = r.Range.Intersect(w)
	if r.Ranges == nil || r.Range.Empty() {
		r.Ranges = nil
		return r
	}
	set := intersectRanges(r.Ranges, []routing.TimeRange{w})
	if len(set) == 0 {
		r.Range, r.Ranges = routing.TimeRange{Start: w.Start, End: w.Start}, nil
		return r
	}
	r.Range, r.Ranges = hullOf(set)
	return r
}

// Pieces returns the disjoint ranges the read reads: Ranges, or Range alone.
func (r Route) Pieces() []routing.TimeRange {
	if r.Ranges != nil {
		return r.Ranges
	}
	return []routing.TimeRange{r.Range}
}

// Routes reads the route of every NamedTableReadRel of p from its filter and the FilterRels
// directly above it (where the binder and Build put it): a partition equality or IN list of
// string literals (several are intersected), and timestamp bounds of timestamp literals (>=,
// >, <, <=, =, between, NOT of a comparison; the tightest win). A read without a partition
// pin is refused unless analytical; one without both bounds is always refused, naming the
// table's partition column (InvalidArgument). Partition sets without a common value or
// bounds leaving no instant give an Empty route: the read answers no rows, as PostgreSQL's
// does. Plans whose filters sit higher (above an aggregate, a sort or a set operation) are
// first rewritten by the binder and PrepareSubstrait (filterPusher).
func Routes(p *plan.Plan, cat Catalog, analytical bool) (map[*plan.NamedTableReadRel]Route, error) {
	routes, _, err := routesOf(p, cat, BindOptions{Analytical: analytical, MaxPartitions: math.MaxInt}, false)
	return routes, err
}

// routesOf is Routes with the reads' RouteInfo (for EXPLAIN) in plan order, and the bound on
// the partitions a read may list (opts.MaxPartitions, InvalidArgument beyond). client checks
// each read as a client's (checkClientRead) before its route is read.
func routesOf(p *plan.Plan, cat Catalog, opts BindOptions, client bool) (map[*plan.NamedTableReadRel]Route, []RouteInfo, error) {
	out := map[*plan.NamedTableReadRel]Route{}
	var infos []RouteInfo
	var walk func(rel plan.Rel, above []expr.Expression) error
	walk = func(rel plan.Rel, above []expr.Expression) error {
		switch r := rel.(type) {
		case *plan.NamedTableReadRel:
			names := r.Names()
			if len(names) != 1 {
				return unimplementedAre("multi-part table names")
			}
			def, err := lookupTable(cat, names[0])
			if err != nil {
				return err
			}
			if client {
				if err := checkClientRead(r, def); err != nil {
					return err
				}
			}
			conj := slices.Clone(above)
			if f := r.Filter(); f != nil {
				conj = append(conj, f)
			}
			var flat []expr.Expression
			for _, c := range conj {
				flat = append(flat, splitConj(c)...)
			}
			bd := &binder{ps: &paramState{placeholders: map[expr.Expression]int{}}, opts: opts, reg: p.ExtensionRegistry()}
			var ra routeAtoms
			info := RouteInfo{Table: def}
			for _, c := range flat {
				if bd.routeAtom(c, &ra) {
					info.RouteConjuncts++
				} else {
					bd.rangeAtom(c, &ra)
					info.Residual++
				}
			}
			readsNothing := ra.nullBound || slices.ContainsFunc(flat, bd.constantlyFalse)
			if !readsNothing {
				if err := ra.check(def, readLabel{}, opts.Analytical, bd.boundErr); err != nil {
					return err
				}
			}
			set, finite := ra.timeSet()
			if !finite && !readsNothing {
				return invalidPlan("a timestamp bound of the read of %s is a parameter", def.Name) // plans have none
			}
			if readsNothing || ra.empty() {
				rt := Route{Table: def, Partitions: [][]byte{}, Range: ra.emptyRange(), Empty: true}
				info.Partitions, info.Range, info.Empty = rt.Partitions, rt.Range, true
				infos = append(infos, info)
				out[r] = rt
				return nil
			}
			rt := Route{Table: def}
			rt.Range, rt.Ranges = hullOf(set)
			if ra.partSeen {
				if len(ra.parts) > opts.MaxPartitions {
					return errTooManyPartitions(def, len(ra.parts), opts.MaxPartitions)
				}
				for _, s := range ra.parts {
					rt.Partitions = append(rt.Partitions, []byte(s))
				}
			}
			info.Partitions, info.Range, info.Ranges, info.Analytical = rt.Partitions, rt.Range, rt.Ranges, !ra.partSeen
			infos = append(infos, info)
			out[r] = rt
			return nil
		case *plan.FilterRel:
			return walk(r.Input(), append(slices.Clone(above), r.Condition()))
		case *plan.ProjectRel:
			return walk(r.Input(), throughProject(above, r))
		case *plan.AggregateRel:
			return walk(r.Input(), nil)
		case *plan.SortRel:
			return walk(r.Input(), nil)
		case *plan.FetchRel:
			return walk(r.Input(), nil)
		case *plan.JoinRel:
			if err := checkJoinType(r.Type()); err != nil {
				return err
			}
			for _, in := range r.GetInputs() {
				if err := walk(in, nil); err != nil {
					return err
				}
			}
			return nil
		case *plan.HashJoinRel:
			if err := checkHashJoinType(r.Type()); err != nil {
				return err
			}
			for _, in := range []plan.Rel{r.Left(), r.Right()} {
				if err := walk(in, nil); err != nil {
					return err
				}
			}
			return nil
		case *plan.SetRel:
			for _, in := range r.Inputs() {
				if err := walk(in, nil); err != nil {
					return err
				}
			}
			return nil
		case *plan.VirtualTableReadRel, *plan.ExtensionLeafRel:
			return nil // constants, a recursive query's working table: no route
		case *plan.ExtensionSingleRel:
			if _, ok := r.Definition().(*ProjectSet); !ok {
				return unimplemented(relName(rel))
			}
			down, _ := inputConjuncts(above, r)
			return walk(r.Input(), down)
		case *plan.ExtensionMultiRel:
			if _, ok := r.Definition().(*RecursiveUnion); !ok {
				return unimplemented(relName(rel))
			}
			for _, in := range r.GetInputs() {
				if err := walk(in, nil); err != nil {
					return err
				}
			}
			return nil
		case nil:
			return invalidPlan("a relation has no input")
		}
		return unimplemented(relName(rel))
	}
	for _, root := range p.GetRoots() {
		if err := walk(root.Input(), nil); err != nil {
			return nil, nil, err
		}
	}
	return out, infos, nil
}

// throughProject rewrites the conjuncts of filters above pr into conjuncts over pr's input
// where every column they reference is an input column passed through (directly or as a
// plain field reference), for routesOf to read routes from filters above projections; the
// others are dropped (they stay in the plan and are evaluated as they are). Over window
// functions only the input columns that partition every window pass (windowPartitionColumns,
// the filterPusher's rule): a bound or a partition pin on another column would narrow the
// read, and so the rows every window sees, although the filter runs above the windows.
func throughProject(above []expr.Expression, pr *plan.ProjectRel) []expr.Expression {
	if len(above) == 0 {
		return nil
	}
	n := len(pr.Input().RecordType().Types())
	exprs := pr.Expressions()
	mapping := pr.OutputMapping()
	keys, windowed := windowPartitionColumns(exprs)
	src := func(out int) (int, bool) {
		if mapping != nil {
			if out >= len(mapping) {
				return 0, false
			}
			out = int(mapping[out])
		}
		if windowed {
			return out, out < n && keys[out]
		}
		if out < n {
			return out, true
		}
		if k := out - n; k < len(exprs) {
			if fr, ok := exprs[k].(*expr.FieldReference); ok {
				return rootFieldIndex(fr)
			}
		}
		return 0, false
	}
	var out []expr.Expression
	for _, c := range above {
		for _, c := range splitConj(c) {
			ok := true
			var visit func(e expr.Expression) expr.Expression
			visit = func(e expr.Expression) expr.Expression {
				if fr, isRef := e.(*expr.FieldReference); isRef {
					i, root := rootFieldIndex(fr)
					j, found := src(i)
					if !root || !found {
						ok = false
						return e
					}
					nr, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(int32(j)), fr.GetType())
					if err != nil {
						ok = false
						return e
					}
					return nr
				}
				return e.Visit(visit)
			}
			if m := visit(c); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// splitConj splits nested boolean ands.
func splitConj(e expr.Expression) []expr.Expression {
	if f, ok := e.(*expr.ScalarFunction); ok && f.Name() == "and" && f.ID().URN == URNBoolean {
		var out []expr.Expression
		for i := range f.NArgs() {
			a, ok := f.Arg(i).(expr.Expression)
			if !ok {
				return []expr.Expression{e}
			}
			out = append(out, splitConj(a)...)
		}
		return out
	}
	return []expr.Expression{e}
}

// errTooManyPartitions is the refusal of a read listing n partitions (IN, = ANY) beyond limit
// (BindOptions.MaxPartitions): a *PartitionListError.
func errTooManyPartitions(def routing.TableDef, n, limit int) error {
	return &PartitionListError{Table: def.Name, Listed: n, Limit: limit}
}
