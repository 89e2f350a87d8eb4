package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// pass returns in's batches unchanged (sliced to the batch limits), checking ctx per batch.
func pass(ctx context.Context, in array.RecordReader) array.RecordReader {
	o := &owned{r: in}
	return newStream(in.Schema(), func() (arrow.RecordBatch, error) {
		if o.r == nil {
			return nil, nil
		}
		if !o.r.Next() {
			err := o.r.Err()
			o.release()
			return nil, err
		}
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		b := o.r.RecordBatch()
		b.Retain()
		return b, nil
	}, o.release)
}

// Filter returns a reader of the rows of in for which pred is true (false and null drop
// them), with in's schema, selected with compute's filter kernel; a batch whose rows all pass
// is forwarded without a copy, a batch none passes is dropped. pred must be boolean and
// compiled for in's schema. It takes ownership of in; pred stays shared. The reader is not safe
// for concurrent use; ctx is kept by it for the kernels and checked once per input batch.
func Filter(ctx context.Context, in array.RecordReader, pred *Expr, mem *ledger.Ledger) array.RecordReader {
	return FilterCols(ctx, in, pred, nil, mem)
}

// FilterCols is Filter, except that the columns i with used[i] false (used nil: every column
// is used) are not selected: a batch of which some rows pass carries each of them as an
// all-null column of its type, so that neither the filter kernel nor the take of their values
// runs (and none at all when no column is used). The caller declares that nothing downstream
// reads those columns (Expr.Reads): a count after a filter needs no column, a grouping only
// its keys. used must have a flag per column of in.
func FilterCols(ctx context.Context, in array.RecordReader, pred *Expr, used []bool, mem *ledger.Ledger) array.RecordReader {
	var u [][]bool
	if used != nil {
		u = [][]bool{used}
	}
	return FilterAll(ctx, in, []*Expr{pred}, u, mem)
}

// FilterAll returns a reader of the rows of in for which every predicate of preds is true: the
// conjuncts of a WHERE condition, applied in turn, each to the rows the earlier ones kept
// (FilterCols for each, the columns i of in with used[k][i] false carried as nulls after
// conjunct k; used nil: every column is used). As PostgreSQL's planner orders a condition's
// conjuncts by cost rather than as written (`(v::text)::int > 10 AND k = 'delay'` answers
// there), a conjunct that fails on a batch with a data exception (logicNode's retryable) is
// set aside and applied after all the others, to the rows they kept; its error stands if it
// fails on those too. It takes ownership of in; preds stay shared. The reader is not safe for
// concurrent use; ctx is kept by it for the kernels and checked once per input batch.
func FilterAll(ctx context.Context, in array.RecordReader, preds []*Expr, used [][]bool, mem *ledger.Ledger) array.RecordReader {
	if len(preds) == 0 {
		return errStream(in.Schema(), errors.New("ops: filter: no predicate"), in)
	}
	if used != nil && len(used) != len(preds) {
		return errStream(in.Schema(), fmt.Errorf("ops: filter: %d column sets for %d predicates", len(used), len(preds)), in)
	}
	stages := make([]filterStage, len(preds))
	for k, pred := range preds {
		var u []bool
		if used != nil {
			u = used[k]
		}
		switch {
		case pred == nil:
			return errStream(in.Schema(), errors.New("ops: filter: nil predicate"), in)
		case pred.Type().ID() != arrow.BOOL:
			return errStream(in.Schema(), fmt.Errorf("ops: filter: predicate of type %s, not boolean", pred.Type()), in)
		case !sameTypes(in.Schema(), pred.Schema()):
			return errStream(in.Schema(), errors.New("ops: filter: predicate compiled for another schema"), in)
		case u != nil && len(u) != in.Schema().NumFields():
			return errStream(in.Schema(), fmt.Errorf("ops: filter: %d column flags for %d columns", len(u), in.Schema().NumFields()), in)
		}
		// A predicate's JSON fields are extracted with scratch kept from batch to batch.
		st := filterStage{pred: pred, used: u, narrow: narrowing(in.Schema(), u), ctx: ctx, share: newJSONShare()}
		if len(pred.jsonFields) > 0 {
			st.share.want(pred)
			st.ctx = withJSONShare(ctx, st.share)
		}
		stages[k] = st
	}
	o := &owned{r: in}
	var set []int // the stages set aside on the current batch
	return newStream(in.Schema(), func() (arrow.RecordBatch, error) {
		for o.r != nil && o.r.Next() {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			b := o.r.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			b.Retain()
			set = set[:0]
			var err error
			for k := range stages {
				if b, err = stages[k].apply(ctx, b, stages, set, mem); err != nil {
					if len(stages) == 1 || !retryable(err) || ctxErr(ctx) != nil {
						b.Release()
						return nil, err
					}
					set = append(set, k)
					continue
				}
				if b == nil {
					break
				}
			}
			for j, k := range set {
				if b == nil {
					break
				}
				if b, err = stages[k].apply(ctx, b, stages, set[j+1:], mem); err != nil {
					b.Release()
					return nil, err
				}
			}
			if b != nil {
				return b, nil
			}
		}
		if o.r == nil {
			return nil, nil
		}
		err := o.r.Err()
		o.release()
		return nil, err
	}, o.release)
}

// filterStage is one conjunct of FilterAll.
type filterStage struct {
	pred   *Expr
	used   []bool    // nil: every column
	narrow *narrowed // of used
	ctx    context.Context
	share  *jsonShare
}

// apply returns the rows of b (which it takes: released, or returned) where the stage's
// predicate is true, nil when none is; on a failure b is returned as it was, with the error.
// The columns its narrowing drops are kept when the stages set aside (waiting) read them.
func (st *filterStage) apply(ctx context.Context, b arrow.RecordBatch, stages []filterStage, waiting []int, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	mask, err := st.pred.Eval(st.ctx, b, mem)
	st.share.reset()
	if err != nil {
		return b, err
	}
	defer mask.Release()
	nw := st.narrow
	if len(waiting) > 0 && st.used != nil {
		keep := slices.Clone(st.used)
		for _, k := range waiting {
			for i := range keep {
				keep[i] = keep[i] || stages[k].pred.Reads(i)
			}
		}
		nw = narrowing(b.Schema(), keep)
	}
	out, err := nw.filter(ctx, b, mask.(*array.Boolean), mem)
	b.Release()
	return out, err
}

// narrowed is FilterCols' selection of the used columns: their indexes and schema; nil when
// every column is used.
type narrowed struct {
	cols []int
	sch  *arrow.Schema
}

// narrowing returns the narrowed of schema's columns flagged in used, nil when used is nil or
// flags every column.
func narrowing(schema *arrow.Schema, used []bool) *narrowed {
	if !slices.Contains(used, false) {
		return nil
	}
	nw := &narrowed{}
	var fields []arrow.Field
	for i, u := range used {
		if u {
			nw.cols = append(nw.cols, i)
			fields = append(fields, schema.Field(i))
		}
	}
	nw.sch = arrow.NewSchema(fields, nil)
	return nw
}

// filter returns filterBatch's rows of b where mask is true, the columns nw leaves out all
// null when some rows pass but not all (every column is selected when nw is nil).
func (nw *narrowed) filter(ctx context.Context, b arrow.RecordBatch, mask *array.Boolean, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	if nw == nil {
		return filterBatch(ctx, b, mask, mem)
	}
	trues := passing(mask)
	switch trues {
	case 0:
		return nil, nil
	case mask.Len():
		b.Retain()
		return b, nil
	}
	var sel arrow.RecordBatch
	if len(nw.cols) > 0 {
		cols := make([]arrow.Array, len(nw.cols))
		for k, i := range nw.cols {
			cols[k] = b.Column(i)
		}
		in := array.NewRecordBatch(nw.sch, cols, b.NumRows())
		var err error
		sel, err = filterBatch(ctx, in, mask, mem)
		in.Release()
		if err != nil {
			return nil, err
		}
		defer sel.Release()
	}
	out := make([]arrow.Array, b.NumCols())
	k := 0
	for i := range out {
		if k < len(nw.cols) && nw.cols[k] == i {
			out[i] = sel.Column(k)
			out[i].Retain()
			k++
			continue
		}
		out[i] = NullColumn(allocator(mem), b.Schema().Field(i).Type, trues)
	}
	res := array.NewRecordBatch(b.Schema(), out, int64(trues))
	releaseArrays(out)
	return res, nil
}

// passing returns the rows where mask is true (valid and set).
func passing(mask *array.Boolean) int {
	n := mask.Len()
	if mask.NullN() > 0 {
		trues := 0
		for i := range n {
			if mask.IsValid(i) && mask.Value(i) {
				trues++
			}
		}
		return trues
	}
	data := mask.Data()
	return bitutil.CountSetBits(data.Buffers()[1].Bytes(), data.Offset(), n)
}

// filterBatch returns the rows of b where mask is true (nil when none is), b itself (retained)
// when all are.
func filterBatch(ctx context.Context, b arrow.RecordBatch, mask *array.Boolean, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	n := mask.Len()
	switch passing(mask) {
	case 0:
		return nil, nil
	case n:
		b.Retain()
		return b, nil
	}
	out, err := filterRecordBatch(computeCtx(ctx, mem), b, mask)
	if err != nil {
		return nil, fmt.Errorf("ops: filter: %w", err)
	}
	return out, nil
}

// Project returns a reader with one column per expression, named names[i], of type
// exprs[i].Type() (nullable), evaluated on each batch of in (a bare column reference shares
// the input column). Every expression must be compiled for in's schema and len(names) must
// equal len(exprs). It takes ownership of in; the expressions stay shared. The reader is not
// safe for concurrent use; ctx is kept by it and checked once per input batch.
//
// Memory is reserved before it is spent: before evaluating rows, Project estimates the bytes
// their output takes (Expr.EstimateBytes: constants times rows, the input bytes the
// expressions read) and claims them from mem (ledger.Ledger.Claim), failing with its
// ErrMemoryLimit error, before allocating anything, when they do not fit; the claim is given
// back once the columns are built (mem then counts them). An input batch whose output would
// pass MaxBatchTotalBytes is evaluated in pieces of rows (zero-copy slices of it) that each
// stay under it, unless one row alone passes it: a 1 MB string literal projected over 8,192
// rows makes pieces of 3 rows, never an 8 GB column. A piece of several rows the ledger
// refuses while it is evaluated (a value a kernel sizes by its arguments, claimed as it is
// built: repeat, lpad, format…) is evaluated again in halves, and later pieces keep the
// smaller size; only a refusal of one row fails the reader, so a result whose rows each fit
// streams under the limit as PostgreSQL answers it; so is a piece whose text values would
// pass an array's 2 GiB (errTextBatch).
func Project(ctx context.Context, in array.RecordReader, exprs []*Expr, names []string, mem *ledger.Ledger) array.RecordReader {
	if len(exprs) != len(names) {
		return errStream(nil, fmt.Errorf("ops: project: %d expressions and %d names", len(exprs), len(names)), in)
	}
	fields := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		if e == nil || !e.fits(in.Schema()) {
			return errStream(nil, fmt.Errorf("ops: project: expression %d is nil or compiled for another schema", i), in)
		}
		fields[i] = arrow.Field{Name: names[i], Type: e.Type(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	all := newEvalAll(exprs)
	// The expressions' JSON fields are extracted together: one pass per batch over each
	// document column however many expressions read it (jsonfields.go).
	var share *jsonShare
	ectx := ctx
	for _, e := range exprs {
		if len(e.jsonFields) > 0 || e.deferred {
			if share == nil {
				share = newJSONShare()
				ectx = withJSONShare(ctx, share)
			}
			share.want(e)
		}
	}
	o := &owned{r: in}
	var (
		cur arrow.RecordBatch // the input batch being evaluated, from row at
		at  int
	)
	drop := func() {
		if cur != nil {
			cur.Release()
			cur = nil
		}
	}
	// rowCap, once a piece of several rows was refused by the ledger while its values were
	// built (the kernels that size a value by an argument claim it as they build it:
	// valuemem.go, which the estimate cannot foresee), caps the rows of every later piece:
	// the refused piece is evaluated again in halves, down to one row, whose refusal is final.
	var rowCap int
	piece := func(at, end int, claim int64) (arrow.RecordBatch, error) {
		if err := mem.Claim(claim); err != nil {
			return nil, fmt.Errorf("ops: project: %w", err)
		}
		defer mem.Unclaim(claim)
		p := cur
		if at > 0 || end < int(cur.NumRows()) {
			p = cur.NewSlice(int64(at), int64(end))
			defer p.Release()
		}
		if share != nil {
			defer share.reset()
		}
		cols, err := all.eval(ectx, p, mem)
		if err != nil {
			return nil, err
		}
		out := array.NewRecordBatch(schema, cols, p.NumRows())
		releaseArrays(cols)
		return out, nil
	}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		if cur == nil {
			b, err := o.next(ctx)
			if b == nil {
				return nil, err
			}
			cur, at = b, 0
		}
		n := int(cur.NumRows())
		for {
			end, claim := projectCut(exprs, cur.Columns(), at, n, rowCap)
			out, err := piece(at, end, claim)
			var limit *ledger.LimitExceededError
			if err != nil && end-at > 1 && (errors.As(err, &limit) || errors.Is(err, errTextBatch)) {
				rowCap = (end - at) / 2
				continue
			}
			if err != nil {
				drop()
				return nil, err
			}
			if at = end; at == n {
				drop()
			}
			return out, nil
		}
	}, func() {
		drop()
		o.release()
	})
}

// Select returns a reader of the columns cols of in, in that order (Substrait's emit
// mapping; a column may repeat), sharing in's arrays. A column index out of range makes the
// reader fail. It takes ownership of in; the reader is not safe for concurrent use.
func Select(in array.RecordReader, cols []int) array.RecordReader {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c < 0 || c >= in.Schema().NumFields() {
			return errStream(nil, fmt.Errorf("ops: select: column %d out of range of %d columns", c, in.Schema().NumFields()), in)
		}
		fields[i] = in.Schema().Field(c)
	}
	schema := arrow.NewSchema(fields, nil)
	o := &owned{r: in}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		if o.r == nil {
			return nil, nil
		}
		if !o.r.Next() {
			err := o.r.Err()
			o.release()
			return nil, err
		}
		b := o.r.RecordBatch()
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			arrs[i] = b.Column(c)
		}
		return array.NewRecordBatch(schema, arrs, b.NumRows()), nil
	}, o.release)
}

// Fetch returns a reader that skips the first offset rows of in and then yields at most count
// rows (all the rest when count < 0), slicing batches without copying, with in's schema. As soon
// as count rows were yielded it releases in without reading further (count == 0 never reads
// it). It takes ownership of in; the reader is not safe for concurrent use.
func Fetch(in array.RecordReader, offset, count int64) array.RecordReader {
	o := &owned{r: in}
	skip, out := max(offset, 0), int64(0)
	return newStream(in.Schema(), func() (arrow.RecordBatch, error) {
		for {
			if o.r == nil {
				return nil, nil
			}
			if count >= 0 && out >= count {
				o.release()
				return nil, nil
			}
			if !o.r.Next() {
				err := o.r.Err()
				o.release()
				return nil, err
			}
			b := o.r.RecordBatch()
			n := b.NumRows()
			if skip >= n {
				skip -= n
				continue
			}
			start, end := skip, n
			skip = 0
			if count >= 0 && end-start > count-out {
				end = start + count - out
			}
			out += end - start
			var piece arrow.RecordBatch
			if start == 0 && end == n {
				b.Retain()
				piece = b
			} else {
				piece = b.NewSlice(start, end)
			}
			if count >= 0 && out >= count {
				o.release()
			}
			return piece, nil
		}
	}, o.release)
}

// UnionAll returns a reader of the rows of inputs, input after input, with the first input's
// schema (the others must have the same column types; their batches are relabelled). Each
// input is released as soon as it ends. It takes ownership of every input; with no input the
// reader fails. The reader is not safe for concurrent use.
func UnionAll(inputs []array.RecordReader) array.RecordReader {
	if len(inputs) == 0 {
		return errStream(nil, errors.New("ops: union all of no input"))
	}
	schema := inputs[0].Schema()
	for i, in := range inputs[1:] {
		if !sameTypes(schema, in.Schema()) {
			return errStream(schema, fmt.Errorf("ops: union all: input %d has columns %s, not %s", i+1, in.Schema(), schema), inputs...)
		}
	}
	ins := make([]*owned, len(inputs))
	for i, in := range inputs {
		ins[i] = &owned{r: in}
	}
	cur := 0
	return newStream(schema, func() (arrow.RecordBatch, error) {
		for cur < len(ins) {
			in := ins[cur]
			if in.r.Next() {
				b := in.r.RecordBatch()
				return array.NewRecordBatch(schema, b.Columns(), b.NumRows()), nil
			}
			err := in.r.Err()
			in.release()
			if err != nil {
				return nil, err
			}
			cur++
		}
		return nil, nil
	}, func() {
		for _, in := range ins {
			in.release()
		}
	})
}

// Rebatch returns a reader of in's rows in the same order, coalescing consecutive small
// batches (concatenated, allocated from mem) until a batch holds at least MaxBatchRows/2 rows
// or adding the next batch would pass MaxBatchRows rows or MaxBatchBytes bytes of string and
// binary values; batches of at least MaxBatchRows/2 rows pass without a copy (sliced when
// larger than the limits). It takes ownership of in; the reader is not safe for concurrent use.
// ctx is kept by the reader and checked once per input batch.
func Rebatch(ctx context.Context, in array.RecordReader, mem *ledger.Ledger) array.RecordReader {
	o := &owned{r: in}
	schema := in.Schema()
	var (
		pending      []arrow.RecordBatch
		rows, nbytes int64
		queued       arrow.RecordBatch // a batch to emit after the pending ones
	)
	flush := func() (arrow.RecordBatch, error) {
		b, err := concatBatches(schema, pending, allocator(mem))
		for _, p := range pending {
			p.Release()
		}
		pending, rows, nbytes = nil, 0, 0
		return b, err
	}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		if queued != nil {
			b := queued
			queued = nil
			return b, nil
		}
		for o.r != nil && o.r.Next() {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			b := o.r.RecordBatch()
			n := b.NumRows()
			if n == 0 {
				continue
			}
			b.Retain()
			if n >= MaxBatchRows/2 {
				if len(pending) == 0 {
					return b, nil
				}
				queued = b
				return flush()
			}
			nb := varBytes(b.Columns(), 0, int(n))
			var out arrow.RecordBatch
			if len(pending) > 0 && (rows+n > MaxBatchRows || nbytes+nb > MaxBatchBytes) {
				var err error
				if out, err = flush(); err != nil {
					b.Release()
					return nil, err
				}
			}
			pending = append(pending, b)
			rows += n
			nbytes += nb
			if out != nil {
				return out, nil
			}
			if rows >= MaxBatchRows/2 || nbytes >= MaxBatchBytes {
				return flush()
			}
		}
		if o.r != nil {
			err := o.r.Err()
			o.release()
			if err != nil {
				return nil, err
			}
		}
		if len(pending) > 0 {
			return flush()
		}
		return nil, nil
	}, func() {
		o.release()
		for _, p := range pending {
			p.Release()
		}
		pending = nil
		if queued != nil {
			queued.Release()
			queued = nil
		}
	})
}
