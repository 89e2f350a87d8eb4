package substrait

import (
	"errors"
	"fmt"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
)

// The merged columns of JOIN … USING and NATURAL JOIN.
//
// PostgreSQL's buildMergedJoinVar (parse_clause.c) types a merged column with the common type
// of the two sides (select_common_type, as for CASE and UNION: integer USING numeric is
// numeric, date USING timestamp timestamp, timestamp USING timestamptz timestamptz, smallint
// USING bigint bigint, integer USING double precision double precision) and its type
// modifier with select_common_typmod; its value is
//   - an inner join's: the left side's, unless the left needs a coercion to the common type
//     (another type or type modifier) and the right does not, then the right's (character
//     strings: the left side's);
//   - a left join's: the left side's, coerced; a right join's: the right side's, coerced;
//   - a full join's: COALESCE(left, right), both coerced.
// A numeric value keeps its own display scale through the coercion (numeric's, integer's 0):
// a full join's merged numeric shows each row at the scale of the side it came from, and so
// does a side whose scale varies by row (dscale.go). The sides' own columns keep their own
// types, reachable qualified (v.b, w.b).

// mergedColumn binds the merged column of the left column li of l and the right column ri of
// r over j, the relation joining them with join type jt (l's columns, then r's), as
// buildMergedJoinVar does (above). The value's ds is its display scale where it differs from
// its type's; character(n) lengths are the caller's (bpcharCommon).
func (bd *binder) mergedColumn(j *boundRel, nl, li, ri int, jt plan.JoinType) (bval, error) {
	side := func(at int) bval {
		c := j.sc.cols[at]
		v := typed(j.sc.ref(at))
		v.bytea, v.json, v.jsonb, v.bpchar, v.typmod = c.bytea, c.json, c.jsonb, c.bpchar, c.typmod
		if c.vary {
			v.ds = bd.scaleOf(j.sc, at)
		}
		return v
	}
	vs := []bval{side(li), side(nl + ri)}
	es, err := bd.commonType(vs, "JOIN/USING")
	if err != nil {
		return bval{}, err
	}
	t, typmod := es[0].GetType(), commonTypmod(vs)
	if jt == plan.JoinTypeOuter {
		nn, err := bd.fn(URNComparison, "is_not_null", booleanType(), vs[0].e)
		if err != nil {
			return bval{}, err
		}
		e, err := bd.ifThen([]expr.IfThenPair{{If: nn, Then: es[0]}}, es[1])
		if err != nil {
			return bval{}, err
		}
		out := typed(e)
		if familyOf(t) == famNumeric && varyingScales(vs) {
			out.ds = bd.branchScale([]expr.Expression{nn}, vs)
		}
		out.json, out.jsonb = docMarkers(vs)
		out.bytea = anyBytea(vs)
		out.typmod = typmod
		return out, nil
	}
	k := 0 // the side whose value the merged column is
	switch {
	case jt == plan.JoinTypeRight:
		k = 1
	case jt == plan.JoinTypeInner && familyOf(t) != famString:
		// Character strings are left out of this rule: the merged column is the left side's
		// value with its character(n) length (bpchar.go), the answer the char(n) e2e tests
		// compare with PostgreSQL's.
		needs := func(v bval) bool { return typeName(v.typ()) != typeName(t) || v.typmod != typmod }
		if needs(vs[0]) && !needs(vs[1]) {
			k = 1
		}
	}
	v := vs[k]
	out := v
	out.typmod = typmod
	switch {
	case sameType(v.typ(), t):
		// The side's own column, as it is.
	case familyOf(t) == famNumeric && v.ds == nil:
		// An integer or numeric of one display scale: a numeric of that scale, which
		// shows every row's value as PostgreSQL does.
		x, err := bd.coerceNumeric(v, numType(staticScale(v)))
		if err != nil {
			return bval{}, err
		}
		if !sameType(x.GetType(), v.typ()) {
			out.e = nullable(x)
		}
	default:
		out.e = es[k]
	}
	return out, nil
}

// usingScales gives each merged column of exprs whose display scale varies by row (ds[k]
// non-nil) a hidden column holding that scale (col.scaleName), bound over j: it appends the
// scale expressions to exprs and their columns to cols (cols[k] describes exprs[k]). A scale
// that cannot be followed from here (a side's varying numeric read from a VALUES list, CTE or
// set operation) leaves the column vary without one: its text is refused by name.
func (bd *binder) usingScales(exprs []expr.Expression, cols []col, ds []dscale) ([]expr.Expression, []col, error) {
	n := len(exprs)
	for k := range n {
		if ds[k] == nil {
			continue
		}
		cols[k].vary = true
		s, err := ds[k]()
		var lost *lostScaleError
		if errors.As(err, &lost) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		bd.scaleSeq++
		name := fmt.Sprintf("?dscale%d?", bd.scaleSeq)
		exprs = append(exprs, s)
		cols = append(cols, col{name: name, qual: subqueryQual, typ: s.GetType(), hidden: true})
		cols[k].scaleName = name
	}
	return exprs, cols, nil
}
