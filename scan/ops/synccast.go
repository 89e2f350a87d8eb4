package ops

import (
	"context"
	"sync"
	_ "unsafe" // go:linkname

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
)

// Casts on the calling goroutine.
//
// compute.CastDatum is the meta function "cast": it looks up the cast function of the target
// type (compute's unexported getCastFunction: one scalar function per target type ID, whose
// kernels are the casts from each source type) and calls its Execute, which runs the kernel
// on a goroutine of its own like every library call (synccall.go says what that costs: the
// handoff, and CPU time --query-cpu does not see). castDatum does what the meta function does
// — the same-type shortcut, the lookup, the wrapped "from <type>" error — and runs the cast
// function with callFunc, the same dispatch, kernel Init (the CastState of the options) and
// arrow-go scalar executor as the library's call, on the calling goroutine.
//
// arrow-go (v18.8.0, v18.9.0) exports neither the lookup nor the cast kernels, so the lookup
// is reached with go:linkname (synccast.s lets the package declare it without a body). Its
// result, a *castFunction, embeds compute.ScalarFunction as its first field, so the pointer
// is read as one: the library's own Execute calls execInternal with that embedded
// ScalarFunction, so dispatch is the same. castFunctionOK checks the lookup against
// arrow-go's cast function names before the first use: a lookup answering other functions
// hands every cast to compute.CastDatum (counted by syncFallbacks, on which
// TestCastMatchesLibrary fails). The build does not check the linked function's signature
// or castFunction's layout: an arrow-go upgrade must re-read getCastFunction and castFunction
// in the new arrow-go release and pass TestCastMatchesLibrary.
//
// Left to the library (syncFallbacks): casts of view types (the meta function coalesces
// multi-buffer views first), of chunked arrays, of lengths over the context's chunk size
// (callFunc's own fallbacks), and options without a target type (the library's error).

//go:linkname arrowCastFunction github.com/apache/arrow-go/v18/arrow/compute.getCastFunction
func arrowCastFunction(to arrow.DataType) (*compute.ScalarFunction, error)

// castFunctionOK reports whether arrowCastFunction answers arrow-go's cast functions (checked
// once: cast_int32 for int32, cast_string for utf8, cast_decimal for decimal128, each a unary
// scalar function).
var castFunctionOK = sync.OnceValue(func() bool {
	for _, c := range []struct {
		to   arrow.DataType
		name string
	}{
		{arrow.PrimitiveTypes.Int32, "cast_int32"},
		{arrow.BinaryTypes.String, "cast_string"},
		{&arrow.Decimal128Type{Precision: 10, Scale: 0}, "cast_decimal"},
	} {
		fn, err := arrowCastFunction(c.to)
		if err != nil || fn == nil || fn.Name() != c.name || fn.Kind() != compute.FuncScalar || fn.Arity().NArgs != 1 || fn.Arity().IsVarArgs {
			return false
		}
	}
	return true
})

// castDatum is compute.CastDatum(ctx, d, opts) with the cast kernel run on the calling
// goroutine where it can be (above); its results and errors are the library's. Safe for
// concurrent use.
func castDatum(ctx context.Context, d compute.Datum, opts *compute.CastOptions) (compute.Datum, error) {
	ad, ok := d.(compute.ArrayLikeDatum)
	if !ok || opts == nil || opts.ToType == nil || !castFunctionOK() || isView(ad.Type()) || isView(opts.ToType) {
		syncFallbacks.Add(1)
		return compute.CastDatum(ctx, d, opts)
	}
	if arrow.TypeEqual(ad.Type(), opts.ToType) {
		return compute.NewDatum(d), nil
	}
	fn, err := arrowCastFunction(opts.ToType)
	if err != nil {
		syncFallbacks.Add(1)
		return compute.CastDatum(ctx, d, opts) // the library's error ("… from <type>")
	}
	return callFunc(ctx, fn, opts, d)
}

// isView reports whether dt is a view type or a dictionary whose values are (the meta
// function rebuilds multi-buffer views before casting them).
func isView(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return isView(t.ValueType)
	default:
		id := dt.ID()
		return id == arrow.STRING_VIEW || id == arrow.BINARY_VIEW
	}
}
