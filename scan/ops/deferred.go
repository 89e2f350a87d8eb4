package ops

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
)

// Deferred errors (docs/architecture.md, "Errors only from rows that are paired"). PostgreSQL
// evaluates a correlated subquery's select list, and the pieces of a join condition over one
// side, only for the rows the correlation or the join pairs; the executor evaluates them on
// every row of their input, below the join. Three functions of URNPostgres let it do so
// without raising an error PostgreSQL would not:
//
//	deferred_value(x)         x, NULL on the rows where evaluating x raises a data exception
//	                          (*DataError); any other failure is the batch's error
//	deferred_error(x)         utf8: NULL where x evaluates, else the row's data exception,
//	                          encoded (its SQLSTATE, message and log message)
//	raise_deferred(err, v)    v; the first row whose err is not NULL raises its data exception
//	raise_deferred_here(e, v) the same, where the binder lets it be evaluated on every row
//	subquery_rows_error(n)    utf8: NULL where the bigint n is at most 1 or NULL, else
//	                          ErrSubqueryRows (21000) as deferred_error encodes it: a scalar
//	                          subquery's rows per outer row counted, its error raised where
//	                          the expression reading the subquery is evaluated
//
// The binder and the join lowering compute deferred_value and deferred_error of an expression
// where its input is (a subquery's relation, a bucket's fragment), carry both columns through
// the join, and read raise_deferred(err, v) where PostgreSQL evaluates it: on the pairs alone.
// A row that no join pairs is dropped with its error. The rows x fails on are found by
// evaluating x on halves of the batch, down to single rows (at most 2·k·log2(n) evaluations for
// k failing rows of n; a batch without one costs one evaluation).

// deferredNode evaluates in per row: its value (errs false) or its errors (errs true).
type deferredNode struct {
	in   node
	errs bool
	typ  arrow.DataType // in's type
	refs []bool         // the input columns in reads (the others are not copied for a subset)
	key  string         // in's Substrait text: deferred_value and deferred_error of one x share it
}

// deferKey identifies one evaluation of a deferred expression in an operator's share: the
// expression, and the batch by its first column as the operator gave it.
type deferKey struct {
	expr string
	col  arrow.Array
	rows int
}

// deferred is one evaluation of a deferred expression: its values (NULL where it failed) and
// its failing rows.
type deferred struct {
	vals arrow.Array
	errs []rowError
}

// deferredSep separates the fields of deferred_error's text.
const deferredSep = "\x1f"

// deferredKey signs deferred_error's texts (a key of this process's own): raise_deferred
// raises only what deferred_error wrote, so that a client's plan cannot make it raise (and log)
// a message of its own.
var deferredKey = func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic(err)
	}
	return k
}()

func deferredMAC(s string) string {
	m := hmac.New(sha256.New, deferredKey)
	m.Write([]byte(s))
	return hex.EncodeToString(m.Sum(nil)[:12])
}

// encodeDataError is deferred_error's text of de: its SQLSTATE, message and log message, signed.
func encodeDataError(de *DataError) string {
	s := de.Code + deferredSep + de.Msg + deferredSep + de.LogMsg
	return s + deferredSep + deferredMAC(s)
}

// decodeDataError reads deferred_error's text back; a text deferred_error did not write is a
// data exception of SQLSTATE 22000 ("data exception"), which no kernel raises.
func decodeDataError(s string) *DataError {
	f := strings.Split(s, deferredSep)
	if len(f) != 4 || !hmac.Equal([]byte(f[3]), []byte(deferredMAC(strings.Join(f[:3], deferredSep)))) {
		return &DataError{Code: "22000", Msg: "data exception"}
	}
	return &DataError{Code: f[0], Msg: f[1], LogMsg: f[2]}
}

func (n *deferredNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	mem := compute.GetAllocator(ctx)
	rows := int(b.NumRows())
	// deferred_value(x) and deferred_error(x) of one operator's expressions on one batch (a
	// join's pushed columns) evaluate x once: the second finds the first's in the share.
	var sh *jsonShare
	var key deferKey
	if ev, _ := ctx.Value(jsonEvalKey{}).(*jsonEval); ev != nil && ev.anon == b && len(ev.orig) > 0 && ev.share != nil {
		sh, key = ev.share, deferKey{expr: n.key, col: ev.orig[0], rows: rows}
	}
	var d *deferred
	if sh != nil {
		d = sh.deferred[key]
	}
	if d == nil {
		vals, errs, err := n.rowwise(ctx, b, 0, rows)
		if err != nil {
			releaseArrays(vals)
			return nil, err
		}
		d = &deferred{errs: errs}
		if len(vals) == 1 {
			d.vals = vals[0]
		} else {
			d.vals, err = array.Concatenate(vals, mem)
			releaseArrays(vals)
			if err != nil {
				return nil, err
			}
		}
		if sh != nil {
			if sh.deferred == nil {
				sh.deferred = map[deferKey]*deferred{}
			}
			sh.deferred[key] = d
		} else {
			defer d.vals.Release()
		}
	}
	errs := d.errs
	if n.errs {
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		if len(errs) == 0 {
			a := NullColumn(mem, arrow.BinaryTypes.String, rows)
			defer a.Release()
			return compute.NewDatum(a), nil
		}
		bld.Reserve(rows)
		next := 0
		for i := range rows {
			if next < len(errs) && errs[next].row == i {
				bld.Append(encodeDataError(errs[next].err))
				next++
			} else {
				bld.AppendNull()
			}
		}
		a := bld.NewArray()
		defer a.Release()
		return compute.NewDatum(a), nil
	}
	return compute.NewDatum(d.vals), nil
}

// rowError is the data exception of one row.
type rowError struct {
	row int
	err *DataError
}

// rowwise evaluates n.in on rows [lo, hi) of b: the values of those rows in order (arrays, a
// NULL one for each failing row) and the failing rows' errors, ascending.
func (n *deferredNode) rowwise(ctx context.Context, b arrow.RecordBatch, lo, hi int) ([]arrow.Array, []rowError, error) {
	mem := compute.GetAllocator(ctx)
	sub := b
	if lo != 0 || hi != int(b.NumRows()) {
		var err error
		if sub, err = rowsOf(b, n.refs, lo, hi, mem); err != nil {
			return nil, nil, err
		}
		defer sub.Release()
	}
	d, err := n.in.eval(ctx, sub)
	if err == nil {
		defer d.Release()
		a, err := toArray(d, hi-lo, mem)
		if err != nil {
			return nil, nil, err
		}
		return []arrow.Array{a}, nil, nil
	}
	var de *DataError
	if !errors.As(err, &de) {
		return nil, nil, err
	}
	if hi-lo == 1 {
		return []arrow.Array{NullColumn(mem, n.typ, 1)}, []rowError{{row: lo, err: de}}, nil
	}
	if hi-lo <= 16 {
		// Few rows: one by one (halving again would cost as many evaluations).
		var vals []arrow.Array
		var errs []rowError
		for i := lo; i < hi; i++ {
			v, e, err := n.rowwise(ctx, b, i, i+1)
			vals, errs = append(vals, v...), append(errs, e...)
			if err != nil {
				return vals, nil, err
			}
		}
		return vals, errs, nil
	}
	mid := lo + (hi-lo)/2
	lv, le, err := n.rowwise(ctx, b, lo, mid)
	if err != nil {
		return lv, nil, err
	}
	rv, re, err := n.rowwise(ctx, b, mid, hi)
	return append(lv, rv...), append(le, re...), err
}

// rowsOf copies rows [lo, hi) of b's columns marked in refs into a batch whose columns start
// at offset 0 of their buffers (arrow-go's kernels misread sliced inputs: Expr.Eval); the
// others are NULL.
func rowsOf(b arrow.RecordBatch, refs []bool, lo, hi int, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, b.NumCols())
	defer releaseArrays(cols)
	for i, c := range b.Columns() {
		if i < len(refs) && !refs[i] {
			cols[i] = NullColumn(mem, c.DataType(), hi-lo)
			continue
		}
		s := array.NewSlice(c, int64(lo), int64(hi))
		cp, err := array.Concatenate([]arrow.Array{s}, mem)
		s.Release()
		if err != nil {
			return nil, err
		}
		cols[i] = cp
	}
	return array.NewRecordBatch(b.Schema(), cols, int64(hi-lo)), nil
}

// raiseNode is raise_deferred(err, v).
type raiseNode struct{ err, v node }

func (n *raiseNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	ed, err := n.err.eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer ed.Release()
	switch e := ed.(type) {
	case *compute.ScalarDatum:
		if e.Value.IsValid() {
			s, ok := e.Value.(interface{ String() string })
			if ok {
				return nil, decodeDataError(strings.Clone(s.String()))
			}
		}
	default:
		a, err := toArray(ed, int(b.NumRows()), compute.GetAllocator(ctx))
		if err != nil {
			return nil, err
		}
		defer a.Release()
		if a.NullN() < a.Len() {
			s, ok := a.(*array.String)
			if !ok {
				return nil, fmt.Errorf("ops: raise_deferred: errors of type %s, not utf8", a.DataType())
			}
			for i := range s.Len() {
				if s.IsValid(i) {
					return nil, decodeDataError(strings.Clone(s.Value(i)))
				}
			}
		}
	}
	return n.v.eval(ctx, b)
}

// deferredCall compiles deferred_value, deferred_error and raise_deferred (ok false for
// another function).
func (c *compiler) deferredCall(f *expr.ScalarFunction) (node, bool, error) {
	if f.ID().URN != URNPostgres {
		return nil, false, nil
	}
	arg := func(i int) (node, error) {
		a, ok := f.Arg(i).(expr.Expression)
		if !ok {
			return nil, fmt.Errorf("ops: compile: %s argument %d is not a value", f.Name(), i)
		}
		return c.compile(a)
	}
	switch f.Name() {
	case "deferred_value", "deferred_error":
		if f.NArgs() != 1 {
			return nil, true, fmt.Errorf("ops: compile: %s takes 1 argument", f.Name())
		}
		in, err := arg(0)
		if err != nil {
			return nil, true, err
		}
		t, err := c.typeOf(in)
		if err != nil {
			return nil, true, err
		}
		refs := make([]bool, c.in.NumFields())
		markRefs(f.Arg(0).(expr.Expression), refs)
		if c.shred != nil {
			refs = nil // the fields read typed columns of their own: every column copied
		}
		c.deferred = true
		return &deferredNode{in: in, errs: f.Name() == "deferred_error", typ: t, refs: refs, key: f.Arg(0).(expr.Expression).String()}, true, nil
	case "raise_deferred", "raise_deferred_here":
		if f.NArgs() != 2 {
			return nil, true, errors.New("ops: compile: raise_deferred takes 2 arguments")
		}
		e, err := arg(0)
		if err != nil {
			return nil, true, err
		}
		v, err := arg(1)
		if err != nil {
			return nil, true, err
		}
		if t, err := c.typeOf(e); err != nil || t.ID() != arrow.STRING {
			return nil, true, fmt.Errorf("ops: compile: raise_deferred's errors are %v, not utf8 (%v)", t, err)
		}
		return &raiseNode{err: e, v: v}, true, nil
	}
	return nil, false, nil
}

// subqueryRowsError is subquery_rows_error(n) (above): the cardinality error of a scalar
// subquery that answers n rows for an outer row, as deferred_error's text, for raise_deferred.
func subqueryRowsError(n *fnNode) error {
	if len(n.args) != 1 || n.types[0] == nil || n.types[0].ID() != arrow.INT64 {
		return errors.New("takes one bigint")
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		c, ok := args[0].(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("an argument of type %s, not bigint", args[0].DataType())
		}
		enc := encodeDataError(ErrSubqueryRows)
		bld := array.NewStringBuilder(mem)
		defer bld.Release()
		bld.Reserve(rows)
		for i := range rows {
			if c.IsValid(i) && c.Value(i) > 1 {
				bld.Append(enc)
			} else {
				bld.AppendNull()
			}
		}
		return bld.NewArray(), nil
	}
	return nil
}
