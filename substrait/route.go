package substrait

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"

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
}

// route takes the routed conjuncts out of a read's WHERE conjunction: partition equalities and
// IN lists (= ANY), and timestamp bounds (>=, >, <, <=, BETWEEN, either operand order). It
// returns the conjunction to filter with: the route, normalised (partition equality or IN,
// timestamp >= start, timestamp < end), then the other conjuncts as residual filters.
// Missing parts are one error naming everything missing and the table's partition column.
func (bd *binder) route(from *fromItem, conj []expr.Expression) ([]expr.Expression, error) {
	def := from.def
	var ra routeAtoms
	var residual []expr.Expression
	routeCount := 0
	for _, c := range conj {
		if bd.routeAtom(c, &ra) {
			routeCount++
			continue
		}
		residual = append(residual, c)
	}
	if err := ra.check(def, bd.opts.Analytical); err != nil {
		return nil, err
	}
	if ra.lower != nil && ra.upper != nil && !ra.lower.Before(*ra.upper) {
		return nil, ErrInvalidTimestampRange
	}
	if ra.partSeen && !ra.partUnknown && len(ra.parts) == 0 {
		return nil, ErrConflictingShardEquality
	}
	if len(ra.parts) > bd.opts.MaxPartitions {
		return nil, errTooManyPartitions(def, len(ra.parts), bd.opts.MaxPartitions)
	}
	read := from.boundRel
	pref := read.sc.ref(partitionField)
	tref := read.sc.ref(timestampField)
	var out []expr.Expression
	info := RouteInfo{Table: def, RouteConjuncts: routeCount, Residual: len(residual), Analytical: !ra.partSeen}
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
	if ra.lower != nil && ra.upper != nil {
		info.Range = routing.TimeRange{Start: *ra.lower, End: *ra.upper}
		gte, err := bd.b.ScalarFn(URNComparison, "gte", nil, tref, timestampLiteral(ra.lower.UnixNano()))
		if err != nil {
			return nil, err
		}
		lt, err := bd.b.ScalarFn(URNComparison, "lt", nil, tref, timestampLiteral(ra.upper.UnixNano()))
		if err != nil {
			return nil, err
		}
		out = append(out, gte, lt)
	}
	bd.routes = append(bd.routes, info)
	return append(out, residual...), nil
}

// routeAtom reads one conjunct as part of the route; false leaves it residual.
func (bd *binder) routeAtom(c expr.Expression, ra *routeAtoms) bool {
	switch v := c.(type) {
	case *expr.SingularOrList:
		if !routedColumn(v.Value, partitionField) {
			return false
		}
		var set []string
		for _, o := range v.Options {
			if _, ph := bd.ps.placeholders[o]; ph {
				ra.partSeen, ra.partUnknown = true, true
				return true
			}
			s, ok := o.(*expr.PrimitiveLiteral[string])
			if !ok {
				return false
			}
			set = append(set, s.Value)
		}
		ra.addParts(set)
		return true
	case *expr.ScalarFunction:
		if v.NArgs() != 2 || v.ID().URN != URNComparison {
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
		col, val := l, r
		if !isBaseRef(l) {
			col, val, op = r, l, swapped[op]
		}
		if _, ph := bd.ps.placeholders[val]; ph {
			switch {
			case routedColumn(col, partitionField) && op == "=":
				ra.partSeen, ra.partUnknown = true, true
				return true
			case routedColumn(col, timestampField) && (op == ">=" || op == ">"):
				ra.lowerSeen = true
				return true
			case routedColumn(col, timestampField) && (op == "<" || op == "<="):
				ra.upperSeen = true
				return true
			}
			return false
		}
		switch {
		case routedColumn(col, partitionField) && op == "=":
			s, ok := val.(*expr.PrimitiveLiteral[string])
			if !ok {
				return false
			}
			ra.addParts([]string{s.Value})
			return true
		case routedColumn(col, timestampField):
			lit, ok := val.(expr.Literal)
			if !ok {
				return false
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
	}
	return false
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
	switch {
	case ra.partSeen:
		for _, p := range partitions {
			if !slices.Contains(ra.parts, string(p)) {
				return false
			}
		}
		return len(partitions) > 0
	case ra.lower != nil:
		return !ra.lower.After(r.Start)
	case ra.upper != nil:
		return !ra.upper.Before(r.End)
	}
	return false
}

// check refuses a read missing part of its route with one InvalidArgument naming everything
// missing and the table's own partition column; without a partition pin it says how to list
// several partitions and, unless analytical, how to read them all (the analytical mode).
func (ra *routeAtoms) check(def routing.TableDef, analytical bool) error {
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
	msg := def.Name + " needs " + strings.Join(missing, " and ")
	if !ra.partSeen {
		msg += " (several partitions: " + def.PartitionColumn + " IN (…) or = ANY($1)"
		if !analytical {
			msg += "; every partition of the range: the analytical mode, session option " + AnalyticalOption + " = on"
		}
		msg += ")"
	}
	return &Error{Code: InvalidArgument, Msg: msg}
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

func isBaseRef(e expr.Expression) bool {
	fr, ok := e.(*expr.FieldReference)
	if !ok {
		return false
	}
	_, ok = rootFieldIndex(fr)
	return ok
}

// Route is what one routed read of a plan reads: the table, the pinned partitions (nil when
// the read is analytical: every partition of the range) and the finite half-open time range.
type Route struct {
	Table      routing.TableDef
	Partitions [][]byte
	Range      routing.TimeRange
}

// Routes reads the route of every NamedTableReadRel of p from its filter and the FilterRels
// directly above it (where the binder and Build put it): a partition equality or IN list of
// string literals (several are intersected), and timestamp >= / < bounds of timestamp
// literals (the tightest win). A read without a partition pin is refused unless analytical;
// one without both bounds is always refused, naming the table's partition column.
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
			bd := &binder{ps: &paramState{placeholders: map[expr.Expression]int{}}, opts: opts}
			var ra routeAtoms
			info := RouteInfo{Table: def}
			for _, c := range flat {
				if bd.routeAtom(c, &ra) {
					info.RouteConjuncts++
				} else {
					info.Residual++
				}
			}
			if err := ra.check(def, opts.Analytical); err != nil {
				return err
			}
			if ra.lower == nil || ra.upper == nil {
				return invalidPlan("a timestamp bound of the read of %s is a parameter", def.Name) // plans have none
			}
			if !ra.lower.Before(*ra.upper) {
				return ErrInvalidTimestampRange
			}
			rt := Route{Table: def, Range: routing.TimeRange{Start: *ra.lower, End: *ra.upper}}
			if ra.partSeen {
				if len(ra.parts) == 0 {
					return ErrConflictingShardEquality
				}
				if len(ra.parts) > opts.MaxPartitions {
					return errTooManyPartitions(def, len(ra.parts), opts.MaxPartitions)
				}
				for _, s := range ra.parts {
					rt.Partitions = append(rt.Partitions, []byte(s))
				}
			}
			info.Partitions, info.Range, info.Analytical = rt.Partitions, rt.Range, !ra.partSeen
			infos = append(infos, info)
			out[r] = rt
			return nil
		case *plan.FilterRel:
			return walk(r.Input(), append(slices.Clone(above), r.Condition()))
		case *plan.ProjectRel:
			return walk(r.Input(), nil)
		case *plan.AggregateRel:
			return walk(r.Input(), nil)
		case *plan.SortRel:
			return walk(r.Input(), nil)
		case *plan.FetchRel:
			return walk(r.Input(), nil)
		case *plan.SetRel:
			for _, in := range r.Inputs() {
				if err := walk(in, nil); err != nil {
					return err
				}
			}
			return nil
		case *plan.VirtualTableReadRel:
			return nil // constants: no route
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
// (BindOptions.MaxPartitions, the server's --max-partitions). INVALID_ARGUMENT: the statement
// itself asks too much, before any bucket is touched. It names the table, the counts and the
// flag, never a partition value.
func errTooManyPartitions(def routing.TableDef, n, limit int) *Error {
	return errorf(InvalidArgument, "%s lists %d partitions, more than this server's limit of %d (--max-partitions): list fewer or split the query", def.Name, n, limit)
}
