package ops

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"

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
	return filterSelect(ctx, in, pred, nil, mem)
}

// FilterSelect is Filter followed by Select(keep) (keep may be empty: the rows are counted
// and carry no column) without copying the rows of the columns keep leaves out: the
// predicate reads every column of in, the kernel filters only the kept ones. A fragment that
// filters on a JSON field of its value column and needs no column of it after (count(*) WHERE
// (value->>'delay')::int > 60) copies no document.
func FilterSelect(ctx context.Context, in array.RecordReader, pred *Expr, keep []int, mem *ledger.Ledger) array.RecordReader {
	for _, c := range keep {
		if c < 0 || c >= in.Schema().NumFields() {
			return errStream(nil, fmt.Errorf("ops: filter: column %d out of range of %d columns", c, in.Schema().NumFields()), in)
		}
	}
	if keep == nil {
		keep = []int{}
	}
	return filterSelect(ctx, in, pred, keep, mem)
}

// filterSelect is Filter (keep nil) or FilterSelect (keep not nil, in range).
func filterSelect(ctx context.Context, in array.RecordReader, pred *Expr, keep []int, mem *ledger.Ledger) array.RecordReader {
	switch {
	case pred == nil:
		return errStream(in.Schema(), errors.New("ops: filter: nil predicate"), in)
	case pred.Type().ID() != arrow.BOOL:
		return errStream(in.Schema(), fmt.Errorf("ops: filter: predicate of type %s, not boolean", pred.Type()), in)
	case !sameTypes(in.Schema(), pred.Schema()):
		return errStream(in.Schema(), errors.New("ops: filter: predicate compiled for another schema"), in)
	}
	schema := in.Schema()
	if keep != nil {
		fields := make([]arrow.Field, len(keep))
		for i, c := range keep {
			fields[i] = schema.Field(c)
		}
		schema = arrow.NewSchema(fields, nil)
	}
	o := &owned{r: in}
	// The predicate's JSON fields are extracted with scratch kept from batch to batch.
	ectx, share := ctx, newJSONShare()
	if len(pred.jsonFields) > 0 {
		share.want(pred)
		ectx = withJSONShare(ctx, share)
	}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		for o.r != nil && o.r.Next() {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			b := o.r.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			mask, err := pred.Eval(ectx, b, mem)
			share.reset()
			if err != nil {
				return nil, err
			}
			if keep != nil {
				cols := make([]arrow.Array, len(keep))
				for i, c := range keep {
					cols[i] = b.Column(c)
				}
				b = array.NewRecordBatch(schema, cols, b.NumRows())
			}
			out, err := filterBatch(ctx, b, mask.(*array.Boolean), mem)
			mask.Release()
			if keep != nil {
				b.Release()
			}
			if err != nil || out != nil {
				return out, err
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

// filterBatch returns the rows of b where mask is true (nil when none is), b itself (retained)
// when all are.
func filterBatch(ctx context.Context, b arrow.RecordBatch, mask *array.Boolean, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	n := mask.Len()
	data := mask.Data()
	vals := data.Buffers()[1].Bytes()
	off := data.Offset()
	trues := bitutil.CountSetBits(vals, off, n)
	if mask.NullN() > 0 {
		// Count the rows both valid and true.
		trues = 0
		for i := range n {
			if mask.IsValid(i) && mask.Value(i) {
				trues++
			}
		}
	}
	switch {
	case trues == 0:
		return nil, nil
	case trues == n:
		b.Retain()
		return b, nil
	case b.NumCols() == 0:
		return array.NewRecordBatch(b.Schema(), nil, int64(trues)), nil
	}
	out, err := filterRecordBatch(computeCtx(ctx, mem), b, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
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
// rows makes pieces of 3 rows, never an 8 GB column.
func Project(ctx context.Context, in array.RecordReader, exprs []*Expr, names []string, mem *ledger.Ledger) array.RecordReader {
	if len(exprs) != len(names) {
		return errStream(nil, fmt.Errorf("ops: project: %d expressions and %d names", len(exprs), len(names)), in)
	}
	fields := make([]arrow.Field, len(exprs))
	for i, e := range exprs {
		if e == nil || !sameTypes(in.Schema(), e.Schema()) {
			return errStream(nil, fmt.Errorf("ops: project: expression %d is nil or compiled for another schema", i), in)
		}
		fields[i] = arrow.Field{Name: names[i], Type: e.Type(), Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	// The expressions' JSON fields are extracted together: one pass per batch over each
	// document column however many expressions read it (jsonfields.go).
	var share *jsonShare
	ectx := ctx
	for _, e := range exprs {
		if len(e.jsonFields) > 0 {
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
	return newStream(schema, func() (arrow.RecordBatch, error) {
		for cur == nil {
			if o.r == nil || !o.r.Next() {
				if o.r == nil {
					return nil, nil
				}
				err := o.r.Err()
				o.release()
				return nil, err
			}
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			if b := o.r.RecordBatch(); b.NumRows() > 0 {
				b.Retain()
				cur, at = b, 0
			}
		}
		n := int(cur.NumRows())
		end, claim := projectCut(exprs, cur.Columns(), at, n)
		if err := mem.Claim(claim); err != nil {
			drop()
			return nil, fmt.Errorf("ops: project: %w", err)
		}
		defer mem.Unclaim(claim)
		piece := cur
		if at > 0 || end < n {
			piece = cur.NewSlice(int64(at), int64(end))
			defer piece.Release()
		}
		if at = end; at == n {
			defer drop()
		}
		if share != nil {
			defer share.reset()
		}
		cols := make([]arrow.Array, len(exprs))
		for i, e := range exprs {
			a, err := e.Eval(ectx, piece, mem)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols[i] = a
		}
		out := array.NewRecordBatch(schema, cols, piece.NumRows())
		releaseArrays(cols)
		return out, nil
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
