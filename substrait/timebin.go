package substrait

import (
	"github.com/substrait-io/substrait-go/v8/expr"

	"github.com/flightsrv/flightsrv/routing"
)

// TimeBinOf reports whether e, an expression over the base schema of a ReadRel of def, is a
// time bin of the timestamp column in UTC — round_calendar or round_temporal with FLOOR
// rounding in one of the forms groupby.go documents (date_trunc and date_bin) — and returns
// its binning. Anything else, including a bin of another column or in another time zone, is
// not a time bin. The executor's pushdown rewrite uses it to recognise a store-answerable
// grouping wherever it appears in a plan.
func TimeBinOf(e expr.Expression, def routing.TableDef) (routing.Binning, bool) {
	st := &relState{def: def}
	for i := range numFields {
		st.out = append(st.out, lineage{col: i, measure: -1})
	}
	bin, err := st.binOf(e)
	if err != nil {
		return routing.Binning{}, false
	}
	return bin, true
}
