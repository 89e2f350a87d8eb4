package ops

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exec"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Kernels on the calling goroutine.
//
// arrow-go v18.8.0 (and v18.9.0) runs every kernel call — compute.CallFunction, Take, Filter,
// IsIn, casts, and the function calls of exprs.ExecuteScalarExpression — on a goroutine of its
// own that hands its result back through a channel (compute's execInternal). Two costs follow
// (docs/architecture.md, "futex"): each call parks the caller and wakes another goroutine, and
// when the caller is locked to its thread (ledger.CPUTimer, measuring --query-cpu) the
// handoff parks and wakes a thread, four futex calls a kernel call; and the kernel's CPU time
// is spent on another thread, where the query's CPU clock does not see it.
//
// callFunction does what execInternal does — dispatch (DispatchBest's implicit argument
// types), casts of the arguments to them, the kernel's Init state, arrow-go's own scalar
// executor (compute.NewScalarExecutor: null propagation, preallocation, unboxing of an
// all-scalar call) — but runs the executor on the calling goroutine. Vector kernels (take,
// filter) have no public executor: callFunction runs those that allocate their own output
// (exec.NullComputedNoPrealloc, exec.MemNoPrealloc, no Finalize, every arrow-go selection
// kernel) itself, as arrow-go's vector executor does for one span. What it does not cover
// goes to the library call unchanged (counted by syncFallbacks): chunked arguments, meta
// functions (cast, take and filter of other kinds), vector kernels needing preallocation, an
// execution context cutting batches into more spans than one. Casts, and the implicit casts of
// arguments DispatchBest asks for, run through castDatum (synccast.go), which reaches the cast
// function behind the meta function "cast" and calls it with callFunc.

// syncFallbacks counts the library calls callFunction and castDatum made (tests assert the
// calls of the query path make none).
var syncFallbacks atomic.Int64

// callFunction is compute.CallFunction(ctx, name, opts, args...) run on the calling goroutine
// where it can be (above); its results and errors are the library's. Safe for concurrent use.
func callFunction(ctx context.Context, name string, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
	fn, ok := compute.GetExecCtx(ctx).Registry.GetFunction(name)
	if !ok {
		return compute.CallFunction(ctx, name, opts, args...) // the library's error
	}
	return callFunc(ctx, fn, opts, args...)
}

// callFunc is callFunction of a function already looked up.
func callFunc(ctx context.Context, fn compute.Function, opts compute.FunctionOptions, args ...compute.Datum) (compute.Datum, error) {
	fallback := func() (compute.Datum, error) {
		syncFallbacks.Add(1)
		return fn.Execute(ctx, opts, args...)
	}
	kind := fn.Kind()
	if kind != compute.FuncScalar && kind != compute.FuncVector {
		return fallback()
	}
	if opts == nil {
		if fn.Doc().OptionsRequired {
			return fallback() // the library's error
		}
		opts = fn.DefaultOptions()
	}
	inTypes := make([]arrow.DataType, len(args))
	for i, a := range args {
		switch a.(type) {
		case *compute.ArrayDatum, *compute.ScalarDatum:
		default:
			return fallback() // chunked arguments, or not values (the library's error)
		}
		inTypes[i] = a.(compute.ArrayLikeDatum).Type()
	}
	k, err := dispatch(fn, inTypes)
	if err != nil {
		return nil, err
	}
	vk, vector := k.(*exec.VectorKernel)
	if kind == compute.FuncVector && (!vector || vk.Finalize != nil || vk.MemAlloc != exec.MemNoPrealloc ||
		(vk.NullHandling != exec.NullComputedNoPrealloc && vk.NullHandling != exec.NullNoOutput)) {
		return fallback()
	}
	if kind == compute.FuncScalar && vector {
		return fallback()
	}
	// Scalar and chunk-wise vector kernels take arrays of one length, in one span when it is
	// within the context's chunk size; a vector kernel that is not chunk-wise (take) takes
	// arguments of any lengths in one span of the first array's length.
	length, allSame, allScalar := batchLength(args)
	if chunk := compute.GetExecCtx(ctx).ChunkSize; (!vector || vk.CanExecuteChunkWise) && (!allSame || chunk <= 0 || length > chunk) {
		return fallback() // the library's error, or more than one span
	}
	if cast := castArgs(ctx, args, inTypes); cast != nil {
		defer releaseCasts(cast, args)
		for _, c := range cast {
			if err, ok := c.(castFailed); ok {
				return nil, err.err
			}
		}
		args = cast
	}
	kctx := &exec.KernelCtx{Ctx: ctx, Kernel: k}
	initArgs := exec.KernelInitArgs{Kernel: k, Inputs: inTypes, Options: opts}
	if init := k.GetInitFn(); init != nil {
		if kctx.State, err = init(kctx, initArgs); err != nil {
			return nil, err
		}
	}
	if vector {
		return execVector(kctx, vk, inTypes, args, length, allScalar)
	}
	return execScalar(ctx, kctx, initArgs, args, length)
}

// castFailed stands in castArgs' result for an argument whose cast failed.
type castFailed struct {
	compute.Datum
	err error
}

// castArgs returns nil when every argument is of its type in types, else args with those
// that are not cast to it (castDatum with safe options, as execInternal's compute.CastDatum);
// a failed cast is a castFailed, and the casts before it are kept for releaseCasts.
func castArgs(ctx context.Context, args []compute.Datum, types []arrow.DataType) []compute.Datum {
	var cast []compute.Datum
	for i, a := range args {
		if arrow.TypeEqual(types[i], a.(compute.ArrayLikeDatum).Type()) {
			continue
		}
		if cast == nil {
			cast = slices.Clone(args)
		}
		c, err := castDatum(ctx, a, compute.SafeCastOptions(types[i]))
		if err != nil {
			cast[i] = castFailed{err: err}
			return cast
		}
		cast[i] = c
	}
	return cast
}

// releaseCasts releases the casts castArgs made (the entries of cast that are not args').
func releaseCasts(cast, args []compute.Datum) {
	for i, c := range cast {
		if _, failed := c.(castFailed); !failed && c != args[i] {
			c.Release()
		}
	}
}

// batchLength is compute's inference of a call's length: the arrays' common length (allSame
// false and the first array's length when they differ), 1 when every argument is a scalar,
// 0 without arguments.
func batchLength(args []compute.Datum) (length int64, allSame, allScalar bool) {
	length, allSame, allScalar = -1, true, len(args) > 0
	for _, a := range args {
		ad, ok := a.(*compute.ArrayDatum)
		if !ok {
			continue
		}
		allScalar = false
		if n := ad.Len(); length < 0 {
			length = n
		} else if n != length {
			return length, false, false
		}
	}
	switch {
	case allScalar:
		length = 1
	case length < 0:
		length = 0
	}
	return length, true, allScalar
}

// execScalar runs arrow-go's scalar executor on the calling goroutine: with one span (length
// within the context's chunk size, checked by callFunc) it emits exactly one result, so a
// channel of one holds it and nothing waits.
func execScalar(ctx context.Context, kctx *exec.KernelCtx, initArgs exec.KernelInitArgs, args []compute.Datum, length int64) (compute.Datum, error) {
	ex := compute.NewScalarExecutor()
	if err := ex.Init(kctx, initArgs); err != nil {
		return nil, err
	}
	ch := make(chan compute.Datum, 1)
	err := ex.Execute(ctx, &compute.ExecBatch{Values: args, Len: length}, ch)
	close(ch)
	if err == nil && ctx.Err() == nil {
		if out := ex.WrapResults(ctx, ch, false); out != nil {
			return out, nil
		}
	}
	for d := range ch {
		d.Release()
	}
	if err == nil {
		err = context.Cause(ctx)
	}
	return nil, err
}

// execVector is arrow-go's vector executor for one span of non-chunked arguments and a kernel
// that allocates its own output (checked by callFunc): the span over the arguments (scalars
// promoted to arrays when all are scalars, zero-length arrays of each type for a chunk-wise
// kernel over no rows), the kernel, its output as an array.
func execVector(kctx *exec.KernelCtx, vk *exec.VectorKernel, inTypes []arrow.DataType, args []compute.Datum, length int64, allScalar bool) (compute.Datum, error) {
	outType, err := vk.GetSig().OutType.Resolve(kctx, inTypes)
	if err != nil {
		return nil, err
	}
	span := &exec.ExecSpan{Len: length, Values: make([]exec.ExecValue, len(args))}
	for i, a := range args {
		switch {
		case vk.CanExecuteChunkWise && length == 0:
			exec.FillZeroLength(a.(compute.ArrayLikeDatum).Type(), &span.Values[i].Array)
		case a.Kind() == compute.KindScalar:
			span.Values[i].Scalar = a.(*compute.ScalarDatum).Value
		default:
			span.Values[i].Array.SetMembers(a.(*compute.ArrayDatum).Value)
		}
	}
	if allScalar {
		exec.PromoteExecSpanScalars(*span)
	}
	out := &exec.ExecResult{Type: outType, Len: length, Nulls: array.UnknownNullCount}
	if vk.NullHandling == exec.NullNoOutput {
		out.Nulls = 0
	}
	if err := vk.Exec(kctx, span, out); err != nil {
		return nil, err
	}
	d := out.MakeData()
	defer d.Release()
	return compute.NewDatum(d), nil
}

// takeOpts calls array_take with opts (nil: arrow-go's default, bounds checked) on the calling
// goroutine: compute.TakeArrayOpts.
func takeOpts(ctx context.Context, values, indices arrow.Array, opts *compute.TakeOptions) (arrow.Array, error) {
	var o compute.FunctionOptions
	if opts != nil {
		o = opts
	}
	d, err := callFunction(ctx, "array_take", o, compute.NewDatumWithoutOwning(values), compute.NewDatumWithoutOwning(indices))
	if err != nil {
		return nil, err
	}
	defer d.Release()
	return d.(*compute.ArrayDatum).MakeArray(), nil
}

// filterDropNulls is compute.FilterRecordBatch with compute.SelectionDropNulls on the calling
// goroutine: the rows of b where mask (a boolean array of b's length) is true and not null,
// gathered column by column with one index array (uint16 indices below 65,535 rows, uint32
// up to 2^32-1 rows, as arrow-go's GetTakeIndices chooses): fixed-width, boolean, string and
// binary columns copied by gather.go (gatherColumn), the others and batches past 2^31-1 rows
// by array_take without bounds checks. Memory comes from ctx's allocator
// (compute.WithAllocator).
func filterDropNulls(ctx context.Context, b arrow.RecordBatch, mask arrow.Array) (arrow.RecordBatch, error) {
	n := mask.Len()
	if b.NumRows() != int64(n) {
		return nil, fmt.Errorf("%w: filter inputs must all be the same length", arrow.ErrInvalid)
	}
	if mask.DataType().ID() != arrow.BOOL {
		return nil, fmt.Errorf("%w: the filter is %s, not boolean", arrow.ErrInvalid, mask.DataType())
	}
	if uint64(n) >= math.MaxUint32 {
		syncFallbacks.Add(1)
		return compute.FilterRecordBatch(ctx, b, mask, &compute.FilterOptions{NullSelection: compute.SelectionDropNulls})
	}
	mem := compute.GetAllocator(ctx)
	idx := takeIndices(mem, mask)
	defer idx.Release()
	cols := make([]arrow.Array, b.NumCols())
	defer releaseArrays(cols)
	if refs, ok := indexRefs(idx); ok {
		// gather.go's copies: arrow-go's take costs a kernel dispatch per column and batch,
		// most of the cost of the few rows a selective filter passes of a batch.
		for i, c := range b.Columns() {
			out, err := gatherColumn(ctx, c.DataType(), []arrow.Array{c}, refs, mem)
			if err != nil {
				return nil, err
			}
			cols[i] = out
		}
		return array.NewRecordBatch(b.Schema(), cols, int64(idx.Len())), nil
	}
	opts := &compute.TakeOptions{BoundsCheck: false}
	for i, c := range b.Columns() {
		out, err := takeOpts(ctx, c, idx, opts)
		if err != nil {
			return nil, err
		}
		cols[i] = out
	}
	return array.NewRecordBatch(b.Schema(), cols, int64(idx.Len())), nil
}

// indexRefs returns takeIndices' positions as gather.go's references to rows of one batch,
// false when a position is past rowRef's int32.
func indexRefs(idx arrow.Array) ([]rowRef, bool) {
	refs := make([]rowRef, idx.Len())
	switch ix := idx.(type) {
	case *array.Uint16:
		for k, v := range ix.Uint16Values() {
			refs[k] = rowRef{r: int32(v)}
		}
	case *array.Uint32:
		for k, v := range ix.Uint32Values() {
			if v > math.MaxInt32 {
				return nil, false
			}
			refs[k] = rowRef{r: int32(v)}
		}
	default:
		return nil, false
	}
	return refs, true
}

// takeIndices returns the positions where mask is true and valid, ascending: uint16 for masks
// shorter than 65,535, else uint32 (the caller keeps masks under 2^32-1).
func takeIndices(mem memory.Allocator, mask arrow.Array) arrow.Array {
	d := mask.Data()
	n, off := d.Len(), d.Offset()
	if mask.NullN() == n || d.Buffers()[1] == nil {
		n = 0 // no true value
	}
	var vals []byte
	if n > 0 {
		vals = d.Buffers()[1].Bytes()
	}
	var valid []byte
	if mask.NullN() > 0 && d.Buffers()[0] != nil {
		valid = d.Buffers()[0].Bytes()
	}
	// The positions, word by word of the bitmaps: 64 bits from position i of the mask (read
	// at the mask's offset, not past its last byte), zero past its end.
	last := (off + n - 1) >> 3
	word := func(buf []byte, i int) uint64 {
		q := off + i
		p, s := q>>3, uint(q&7)
		var w uint64
		if p+8 <= last+1 {
			w = binary.LittleEndian.Uint64(buf[p:])
		} else {
			for k := 0; p+k <= last; k++ {
				w |= uint64(buf[p+k]) << (8 * k)
			}
		}
		w >>= s
		if s != 0 && p+8 <= last {
			w |= uint64(buf[p+8]) << (64 - s)
		}
		if r := n - i; r < 64 {
			w &= 1<<r - 1
		}
		return w
	}
	each := func(f func(int)) {
		for i := 0; i < n; i += 64 {
			w := word(vals, i)
			if valid != nil {
				w &= word(valid, i)
			}
			for w != 0 {
				f(i + bits.TrailingZeros64(w))
				w &= w - 1
			}
		}
	}
	if n < math.MaxUint16 {
		bld := array.NewUint16Builder(mem)
		defer bld.Release()
		bld.Reserve(n)
		each(func(i int) { bld.UnsafeAppend(uint16(i)) })
		return bld.NewArray()
	}
	bld := array.NewUint32Builder(mem)
	defer bld.Release()
	bld.Reserve(n)
	each(func(i int) { bld.UnsafeAppend(uint32(i)) })
	return bld.NewArray()
}

// evalSubstrait is exprs.ExecuteScalarExpression(ctx, schema, e, b) with e's function calls run
// by callFunction: its leaves (literals, field references) are evaluated by exprs, which runs
// no kernel for them; a function's arguments are evaluated first, then mapped to an arrow-go
// call by the conversion of the extension set in ctx (exprs.WithExtensionIDSet), as exprs
// does. Any other expression goes to exprs whole.
func evalSubstrait(ctx context.Context, schema *arrow.Schema, e expr.Expression, b arrow.RecordBatch) (compute.Datum, error) {
	f, ok := e.(*expr.ScalarFunction)
	if !ok {
		return exprs.ExecuteScalarExpression(ctx, schema, e, compute.NewDatumWithoutOwning(b))
	}
	args := make([]compute.Datum, f.NArgs())
	defer func() {
		for _, a := range args {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i := range f.NArgs() {
		switch v := f.Arg(i).(type) {
		case types.Enum:
			args[i] = compute.NewDatum(scalar.NewStringScalar(string(v)))
		case expr.Expression:
			d, err := evalSubstrait(ctx, schema, v, b)
			if err != nil {
				return nil, err
			}
			args[i] = d
		default:
			return nil, arrow.ErrNotImplemented
		}
	}
	_, conv, ok := exprs.GetExtensionIDSet(ctx).DecodeFunction(f.FuncRef())
	if !ok {
		return nil, fmt.Errorf("%w: %s", arrow.ErrNotImplemented, f.Name())
	}
	fname, cargs, opts, err := conv(f, args)
	if err != nil {
		return nil, err
	}
	fn, ok := compute.GetExecCtx(ctx).Registry.GetFunction(fname)
	if !ok || fn.Kind() != compute.FuncScalar {
		return nil, arrow.ErrInvalid
	}
	return callFunc(ctx, fn, opts, cargs...)
}

// dispatch is fn's kernel for arguments of types inTypes: DispatchBest, which may replace
// inTypes' entries (implicit casts), after DispatchExact for a function of one argument.
// arrow-go's compare functions include the unary is_null, is_not_null and is_nan, whose
// DispatchBest promotes decimal arguments as if there were two and indexes past the one
// (x IS NULL OR y IS NULL over numerics panicked); their kernels take any type exactly.
func dispatch(fn compute.Function, inTypes []arrow.DataType) (exec.Kernel, error) {
	if len(inTypes) == 1 {
		if k, err := fn.DispatchExact(inTypes...); err == nil {
			return k, nil
		}
	}
	return fn.DispatchBest(inTypes...)
}
