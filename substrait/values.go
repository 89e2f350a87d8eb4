package substrait

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
)

// bindValues binds VALUES (…), (…) (a FROM item, a WITH query or a statement of its own) as
// a VirtualTableReadRel of constant expressions: each column of the rows' common type
// (PostgreSQL's VALUES resolution, as commonType does for CASE: untyped literals and NULLs
// take the typed values' type, numbers are promoted, text when all are untyped), named
// column1, column2… as PostgreSQL names them. Rows of different lengths are PostgreSQL's
// error; expressions may not reference columns (there is no scope).
func (bd *binder) bindValues(sel *pg.SelectStmt) (*boundRel, error) {
	lists := sel.GetValuesLists()
	width := len(lists[0].GetList().GetItems())
	if width == 0 {
		return nil, unimplemented("VALUES without columns")
	}
	if err := bd.opts.checkColumns(width); err != nil {
		return nil, err
	}
	cols := make([][]bval, width)
	wide := make([]wideConsts, width) // a column's decimal constants past 38 digits
	empty := &scope{}
	for _, l := range lists {
		items := l.GetList().GetItems()
		if len(items) != width {
			return nil, &Error{Code: InvalidArgument, SQLState: "42601", Msg: "VALUES lists must all be the same length"}
		}
		for c, it := range items {
			v, err := wide[c].bind(bd, it, empty, len(cols[c]))
			if err != nil {
				return nil, err
			}
			cols[c] = append(cols[c], v)
		}
	}
	rows := make([]expr.VirtualTableExpressionValue, len(lists))
	out := &boundRel{sc: &scope{}}
	for c := range cols {
		if err := wide[c].resolve(cols[c]); err != nil {
			return nil, err
		}
		var err error
		if cols[c], err = bd.docUnify(cols[c]); err != nil {
			return nil, err
		}
		n, err := bpcharCommon(cols[c])
		if err != nil {
			return nil, err
		}
		es, err := bd.commonType(cols[c], "VALUES")
		if err != nil {
			return nil, err
		}
		for r, e := range es {
			rows[r] = append(rows[r], e)
		}
		name := fmt.Sprintf("column%d", c+1)
		out.names = append(out.names, name)
		// Numerics of different scales are held at the largest (commonType), each value's
		// display scale its own: the column's varies by row (col.vary, dscale.go).
		vary := familyOf(es[0].GetType()) == famNumeric && varyingScales(cols[c])
		// A column of jsonb (json) values, NULLs aside, is jsonb (json).
		json, jsonb := true, true
		for _, v := range cols[c] {
			if !v.null {
				json, jsonb = json && v.json, jsonb && v.jsonb
			}
		}
		out.sc.cols = append(out.sc.cols, col{name: name, typ: es[0].GetType(), vary: vary, json: json && familyOf(es[0].GetType()) == famBinary, jsonb: jsonb && familyOf(es[0].GetType()) == famBinary,
			bytea: anyBytea(cols[c]) && familyOf(es[0].GetType()) == famBinary, bpchar: n, typmod: commonTypmod(cols[c])}) // select_common_typmod
	}
	names := out.names
	if bd.keepScales[sel] {
		// Read alone as a derived table or WITH query (markScales): a column whose display
		// scale varies carries each row's as a hidden column, named beside it
		// (col.scaleName), as a derived table's SELECT does.
		for c, cl := range out.sc.cols[:width] {
			if !cl.vary {
				continue
			}
			scales := make([]expr.Expression, len(rows))
			for r, v := range cols[c] {
				e, err := bd.scaleExpr(v)
				if err != nil {
					scales = nil
					break
				}
				scales[r] = nullable(e)
			}
			if scales == nil {
				continue
			}
			for r := range rows {
				rows[r] = append(rows[r], scales[r])
			}
			bd.scaleSeq++
			h := col{name: fmt.Sprintf("?dscale%d?", bd.scaleSeq), typ: scales[0].GetType(), qual: subqueryQual, hidden: true}
			out.sc.cols[c].scaleName = h.name
			out.sc.cols = append(out.sc.cols, h)
			names = append(names[:len(names):len(names)], h.name)
		}
	}
	rel, err := bd.b.VirtualTableFromExpr(names, rows...)
	if err != nil {
		return nil, fmt.Errorf("bind values: %w", err)
	}
	out.rel = rel
	return bd.orderLimit(sel, out, nil, nil)
}
