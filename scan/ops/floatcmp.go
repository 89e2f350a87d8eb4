package ops

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"
)

// Comparisons of floats as PostgreSQL orders them (float4/float8's float8_cmp_internal, the
// order compareFloat implements): NaN equals NaN and is greater than every other value,
// +Infinity included; -0 equals 0. IEEE comparisons, which arrow-go's kernels make, answer
// false for every comparison with a NaN but <>, so `'NaN'::float8 = 'NaN'::float8`, `x > 1`
// of a NaN, BETWEEN, CASE x WHEN, NULLIF, IS DISTINCT FROM, GREATEST and LEAST (which the SQL
// binder writes with these comparisons) answered otherwise than PostgreSQL.
//
// functions_comparison's equal, not_equal, lt, lte, gt and gte of two floats of one type
// (float32 or float64: the SQL binder widens a real compared with a double, as PostgreSQL's
// float48 operators do) are evaluated by numCmpNode, over whole columns, a constant operand
// as a constant; a row is NULL where either operand is. A client plan comparing a float32
// with a float64 is left to arrow-go, as floatarith.go leaves mixed arithmetic.
//
// The same comparisons of two signed integers of one type (int8 to int64: the SQL binder
// widens an int2 compared with an int4 or an int8, as PostgreSQL's int24/int48 operators do)
// are numCmpNode's too, with Go's integer comparisons (exact, as arrow-go's): they answer
// what arrow-go's kernels answer, a batch's column compared with one call's bit loop instead
// of an arrow-go kernel dispatch per batch, which was most of the cost of a filter such as
// (value->>'delay')::int > 60 over the shredded-column cache's int4 columns (about 2,000 rows
// a batch).

// urnComparison is Substrait's functions_comparison.
const urnComparison = extensions.SubstraitDefaultURNPrefix + "functions_comparison"

// numCmpOps are the comparisons numCmpNode evaluates.
var numCmpOps = map[string]bool{"equal": true, "not_equal": true, "lt": true, "lte": true, "gt": true, "gte": true}

// isFloatType reports whether t is Substrait's fp32 or fp64.
func isFloatType(t types.Type) bool {
	switch t.(type) {
	case *types.Float32Type, *types.Float64Type:
		return true
	}
	return false
}

// isSignedIntType reports whether t is Substrait's i8, i16, i32 or i64.
func isSignedIntType(t types.Type) bool {
	switch t.(type) {
	case *types.Int8Type, *types.Int16Type, *types.Int32Type, *types.Int64Type:
		return true
	}
	return false
}

// isNumCmp reports whether f is a comparison of two floats or two signed integers of one type
// that numCmpNode evaluates.
func isNumCmp(f *expr.ScalarFunction) bool {
	if f.ID().URN != urnComparison || !numCmpOps[f.Name()] || f.NArgs() != 2 {
		return false
	}
	var ts [2]types.Type
	for i := range 2 {
		a, ok := f.Arg(i).(expr.Expression)
		if !ok || a == nil || !isFloatType(a.GetType()) && !isSignedIntType(a.GetType()) {
			return false
		}
		ts[i] = a.GetType().WithNullability(types.NullabilityRequired)
	}
	return ts[0].Equals(ts[1])
}

// numCmp compiles a comparison isNumCmp accepts.
func (c *compiler) numCmp(f *expr.ScalarFunction) (node, error) {
	n := &numCmpNode{op: f.Name()}
	var ts [2]arrow.DataType
	for i := range 2 {
		a, err := c.compile(f.Arg(i).(expr.Expression))
		if err != nil {
			return nil, err
		}
		if ts[i], err = c.typeOf(a); err != nil {
			return nil, fmt.Errorf("ops: compile: %s: %w", f.Name(), err)
		}
		switch ts[i].ID() {
		case arrow.FLOAT32, arrow.FLOAT64, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		default:
			return nil, fmt.Errorf("ops: compile: %s: argument %d is %s, not a float or a signed integer", f.Name(), i, ts[i])
		}
		n.args[i] = a
	}
	if !arrow.TypeEqual(ts[0], ts[1]) {
		return nil, fmt.Errorf("ops: compile: %s: arguments must be numbers of one type, not %s and %s", f.Name(), ts[0], ts[1])
	}
	return n, nil
}

// numCmpNode is x op y of two floats of one type in PostgreSQL's order (the file's comment),
// or of two signed integers of one type.
type numCmpNode struct {
	op   string
	args [2]node
}

func (n *numCmpNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	var ds [2]compute.Datum
	defer func() {
		for _, d := range ds {
			if d != nil {
				d.Release()
			}
		}
	}()
	for i, a := range n.args {
		d, err := a.eval(ctx, b)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	mem := compute.GetAllocator(ctx)
	rows := int(b.NumRows())
	// Both operands constant: a constant.
	s0, c0 := ds[0].(*compute.ScalarDatum)
	s1, c1 := ds[1].(*compute.ScalarDatum)
	if c0 && c1 {
		if !s0.Value.IsValid() || !s1.Value.IsValid() {
			return compute.NewDatum(scalar.MakeNullScalar(arrow.FixedWidthTypes.Boolean)), nil
		}
		if x, ok := scalarInt64(s0.Value); ok {
			y, _ := scalarInt64(s1.Value) // of x's type (numCmp)
			return compute.NewDatum(scalar.NewBooleanScalar(numCmpTest(n.op, cmp.Compare(x, y)))), nil
		}
		x, y := scalarFloat(s0.Value), scalarFloat(s1.Value)
		return compute.NewDatum(scalar.NewBooleanScalar(numCmpTest(n.op, compareFloat(x, y)))), nil
	}
	// A NULL constant: every row NULL.
	if c0 && !s0.Value.IsValid() || c1 && !s1.Value.IsValid() {
		nulls := array.MakeArrayOfNull(mem, arrow.FixedWidthTypes.Boolean, rows)
		defer nulls.Release()
		return compute.NewDatum(nulls), nil
	}
	var arrs [2]arrow.Array
	for i, d := range ds {
		if _, constant := d.(*compute.ScalarDatum); !constant {
			a, err := toArray(d, rows, mem)
			if err != nil {
				return nil, err
			}
			defer a.Release()
			arrs[i] = a
		}
	}
	var out arrow.Array
	switch typ := ds[0].(compute.ArrayLikeDatum).Type(); typ.ID() {
	case arrow.FLOAT32:
		out = numCompare(mem, n.op, rows, arrs, [2]float32{scalarF32(ds[0]), scalarF32(ds[1])})
	case arrow.FLOAT64:
		out = numCompare(mem, n.op, rows, arrs, [2]float64{scalarF64(ds[0]), scalarF64(ds[1])})
	case arrow.INT8:
		out = numCompare(mem, n.op, rows, arrs, [2]int8{scalarInt[int8](ds[0]), scalarInt[int8](ds[1])})
	case arrow.INT16:
		out = numCompare(mem, n.op, rows, arrs, [2]int16{scalarInt[int16](ds[0]), scalarInt[int16](ds[1])})
	case arrow.INT32:
		out = numCompare(mem, n.op, rows, arrs, [2]int32{scalarInt[int32](ds[0]), scalarInt[int32](ds[1])})
	case arrow.INT64:
		out = numCompare(mem, n.op, rows, arrs, [2]int64{scalarInt[int64](ds[0]), scalarInt[int64](ds[1])})
	default:
		return nil, fmt.Errorf("ops: %s: arguments must be floats or signed integers, not %s", n.op, typ)
	}
	defer out.Release()
	return compute.NewDatum(out), nil
}

// scalarFloat is a valid float32 or float64 scalar's value as a float64 (exact).
func scalarFloat(s scalar.Scalar) float64 {
	switch v := s.(type) {
	case *scalar.Float32:
		return float64(v.Value)
	case *scalar.Float64:
		return v.Value
	}
	return math.NaN()
}

func scalarF32(d compute.Datum) float32 {
	if s, ok := d.(*compute.ScalarDatum); ok {
		if v, ok := s.Value.(*scalar.Float32); ok {
			return v.Value
		}
	}
	return 0
}

func scalarF64(d compute.Datum) float64 {
	if s, ok := d.(*compute.ScalarDatum); ok {
		if v, ok := s.Value.(*scalar.Float64); ok {
			return v.Value
		}
	}
	return 0
}

// scalarInt64 is a valid signed integer scalar's value as an int64 (exact), false when s is
// not a signed integer.
func scalarInt64(s scalar.Scalar) (int64, bool) {
	switch v := s.(type) {
	case *scalar.Int8:
		return int64(v.Value), true
	case *scalar.Int16:
		return int64(v.Value), true
	case *scalar.Int32:
		return int64(v.Value), true
	case *scalar.Int64:
		return v.Value, true
	}
	return 0, false
}

// scalarInt is a valid signed integer constant's value (scalarInt64), 0 when d is not a
// constant; numCmp made both operands of type T.
func scalarInt[T int8 | int16 | int32 | int64](d compute.Datum) T {
	if s, ok := d.(*compute.ScalarDatum); ok {
		v, _ := scalarInt64(s.Value)
		return T(v)
	}
	return 0
}

// number is the types numCompare compares: PGLess and pgEqual are PostgreSQL's order of
// floats and plain integer comparisons of integers (x != x is false for every integer).
type number interface {
	int8 | int16 | int32 | int64 | float32 | float64
}

// numCmpTest is whether a comparison result c (compareFloat's) passes op.
func numCmpTest(op string, c int) bool {
	switch op {
	case "equal":
		return c == 0
	case "not_equal":
		return c != 0
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	case "gt":
		return c > 0
	}
	return c >= 0 // gte
}

// numValues is a float or signed integer array's values (its offset applied).
func numValues[T number](a arrow.Array) []T {
	switch v := a.(type) {
	case *array.Float32:
		return any(v.Float32Values()).([]T)
	case *array.Float64:
		return any(v.Float64Values()).([]T)
	case *array.Int8:
		return any(v.Int8Values()).([]T)
	case *array.Int16:
		return any(v.Int16Values()).([]T)
	case *array.Int32:
		return any(v.Int32Values()).([]T)
	case *array.Int64:
		return any(v.Int64Values()).([]T)
	}
	panic(fmt.Sprintf("ops: numeric comparison of %s", a.DataType()))
}

// numCompare is x op y over rows rows: arrs[i] is operand i's column, nil where the operand
// is the constant consts[i] (a valid one; at most one operand is constant). Every comparison
// is written as x < y or x = y (their operands swapped, their result negated): > is y < x,
// >= is not x < y, <= is not y < x, <> is not x = y.
func numCompare[T number](mem memory.Allocator, op string, rows int, arrs [2]arrow.Array, consts [2]T) arrow.Array {
	swap, negate, less := false, false, true
	switch op {
	case "equal":
		less = false
	case "not_equal":
		less, negate = false, true
	case "gt":
		swap = true
	case "gte":
		negate = true
	case "lte":
		swap, negate = true, true
	}
	if swap {
		arrs[0], arrs[1] = arrs[1], arrs[0]
		consts[0], consts[1] = consts[1], consts[0]
	}
	vb := newBuffer(mem, int(bitutil.BytesForBits(int64(rows))), true)
	defer vb.Release()
	bits := vb.Bytes()
	var xs, ys []T
	if arrs[0] != nil {
		xs = numValues[T](arrs[0])[:rows]
	}
	if arrs[1] != nil {
		ys = numValues[T](arrs[1])[:rows]
	}
	switch {
	case xs != nil && ys != nil && less:
		lessCols(bits, xs, ys)
	case xs != nil && ys != nil:
		equalCols(bits, xs, ys)
	case xs != nil && less:
		lessThanConst(bits, xs, consts[1])
	case xs != nil:
		equalConst(bits, xs, consts[1])
	case less:
		constLessThan(bits, consts[0], ys)
	default:
		equalConst(bits, ys, consts[0])
	}
	if negate {
		for i := range bits {
			bits[i] = ^bits[i]
		}
	}
	validity, nullN := andValidity(mem, rows, arrs)
	if validity != nil {
		defer validity.Release()
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, rows, []*memory.Buffer{validity, vb}, nil, nullN, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// PGLess is x < y in PostgreSQL's order, 1 or 0, without branches: for floats
// float8_cmp_internal's (NaN above every other value, +Infinity included, and equal to NaN; -0
// equal to 0), the one order of floats of this package (compareFloat, the comparison kernels)
// and of scan/aggregate's min and max; for integers and strings, where y != y is constant
// false in each instantiation, x < y.
func PGLess[T cmp.Ordered](x, y T) uint8 {
	return b2u(x < y) | b2u(y != y)&b2u(x == x)
}

// pgEqual is x = y in PostgreSQL's order of floats (NaN equal to NaN, -0 to 0), 1 or 0: 1
// exactly where neither PGLess(x, y) nor PGLess(y, x) is; for integers x == y.
func pgEqual[T number](x, y T) uint8 {
	return b2u(x == y) | b2u(x != x)&b2u(y != y)
}

func b2u(b bool) uint8 {
	var r uint8
	if b {
		r = 1
	}
	return r
}

// The loops below set bit i of bits (zeroed, len(xs) bits at least) where the comparison of
// row i holds, eight rows a byte; each is written out, as a closure per row measured several
// times slower.

func lessCols[T number](bits []byte, xs, ys []T) {
	ys = ys[:len(xs)]
	full := len(xs) &^ 7
	for i := 0; i < full; i += 8 {
		x, y := xs[i:i+8:i+8], ys[i:i+8:i+8]
		bits[i>>3] = PGLess(x[0], y[0]) | PGLess(x[1], y[1])<<1 | PGLess(x[2], y[2])<<2 | PGLess(x[3], y[3])<<3 |
			PGLess(x[4], y[4])<<4 | PGLess(x[5], y[5])<<5 | PGLess(x[6], y[6])<<6 | PGLess(x[7], y[7])<<7
	}
	for i := full; i < len(xs); i++ {
		bits[i>>3] |= PGLess(xs[i], ys[i]) << (i & 7)
	}
}

func equalCols[T number](bits []byte, xs, ys []T) {
	ys = ys[:len(xs)]
	full := len(xs) &^ 7
	for i := 0; i < full; i += 8 {
		x, y := xs[i:i+8:i+8], ys[i:i+8:i+8]
		bits[i>>3] = pgEqual(x[0], y[0]) | pgEqual(x[1], y[1])<<1 | pgEqual(x[2], y[2])<<2 | pgEqual(x[3], y[3])<<3 |
			pgEqual(x[4], y[4])<<4 | pgEqual(x[5], y[5])<<5 | pgEqual(x[6], y[6])<<6 | pgEqual(x[7], y[7])<<7
	}
	for i := full; i < len(xs); i++ {
		bits[i>>3] |= pgEqual(xs[i], ys[i]) << (i & 7)
	}
}

func lessThanConst[T number](bits []byte, xs []T, y T) {
	full := len(xs) &^ 7
	for i := 0; i < full; i += 8 {
		x := xs[i : i+8 : i+8]
		bits[i>>3] = PGLess(x[0], y) | PGLess(x[1], y)<<1 | PGLess(x[2], y)<<2 | PGLess(x[3], y)<<3 |
			PGLess(x[4], y)<<4 | PGLess(x[5], y)<<5 | PGLess(x[6], y)<<6 | PGLess(x[7], y)<<7
	}
	for i := full; i < len(xs); i++ {
		bits[i>>3] |= PGLess(xs[i], y) << (i & 7)
	}
}

func constLessThan[T number](bits []byte, x T, ys []T) {
	full := len(ys) &^ 7
	for i := 0; i < full; i += 8 {
		y := ys[i : i+8 : i+8]
		bits[i>>3] = PGLess(x, y[0]) | PGLess(x, y[1])<<1 | PGLess(x, y[2])<<2 | PGLess(x, y[3])<<3 |
			PGLess(x, y[4])<<4 | PGLess(x, y[5])<<5 | PGLess(x, y[6])<<6 | PGLess(x, y[7])<<7
	}
	for i := full; i < len(ys); i++ {
		bits[i>>3] |= PGLess(x, ys[i]) << (i & 7)
	}
}

func equalConst[T number](bits []byte, xs []T, y T) {
	full := len(xs) &^ 7
	for i := 0; i < full; i += 8 {
		x := xs[i : i+8 : i+8]
		bits[i>>3] = pgEqual(x[0], y) | pgEqual(x[1], y)<<1 | pgEqual(x[2], y)<<2 | pgEqual(x[3], y)<<3 |
			pgEqual(x[4], y)<<4 | pgEqual(x[5], y)<<5 | pgEqual(x[6], y)<<6 | pgEqual(x[7], y)<<7
	}
	for i := full; i < len(xs); i++ {
		bits[i>>3] |= pgEqual(xs[i], y) << (i & 7)
	}
}

// andValidity is the validity bitmap of rows where every non-nil array of arrs is valid, and
// its null count; nil and 0 when no array has a null.
func andValidity(mem memory.Allocator, rows int, arrs [2]arrow.Array) (*memory.Buffer, int) {
	var withNulls []arrow.Array
	for _, a := range arrs {
		if a != nil && a.NullN() > 0 {
			withNulls = append(withNulls, a)
		}
	}
	if len(withNulls) == 0 {
		return nil, 0
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(rows))), true)
	out := buf.Bytes()
	a := withNulls[0]
	bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), rows, out, 0)
	for _, b := range withNulls[1:] {
		bitutil.BitmapAnd(out, b.NullBitmapBytes(), 0, int64(b.Data().Offset()), out, 0, int64(rows))
	}
	return buf, rows - bitutil.CountSetBits(out, 0, rows)
}

// IN lists of floats (inNode) run through arrow-go's is_in, which hashes a float's bits: -0
// and 0 are two values there, one in PostgreSQL. The list's floats and the values looked up
// are made canonical first (canonFloat): every NaN one NaN, -0 zero.

// canonFloat is x with every NaN the same NaN and -0 as 0.
func canonFloat[T float32 | float64](x T) T {
	switch {
	case x != x:
		return T(math.NaN())
	case x == 0:
		return 0
	}
	return x
}

// isCanonFloat reports whether canonFloat(x) has x's bits.
func isCanonFloat[T float32 | float64](x T) bool {
	switch {
	case x != x:
		return math.Float64bits(float64(x)) == math.Float64bits(float64(T(math.NaN())))
	case x == 0:
		return !math.Signbit(float64(x))
	}
	return true
}

// canonFloatScalar is s canonical (canonFloat) when it is a valid float scalar, else s.
func canonFloatScalar(s scalar.Scalar) scalar.Scalar {
	switch v := s.(type) {
	case *scalar.Float32:
		if v.IsValid() {
			return scalar.NewFloat32Scalar(canonFloat(v.Value))
		}
	case *scalar.Float64:
		if v.IsValid() {
			return scalar.NewFloat64Scalar(canonFloat(v.Value))
		}
	}
	return s
}

// canonFloatDatum returns d with its floats canonical (canonFloat), or d itself (retained)
// when they are already, or when d holds no floats; the caller releases the result.
func canonFloatDatum(ctx context.Context, d compute.Datum) (compute.Datum, error) {
	switch v := d.(type) {
	case *compute.ScalarDatum:
		return compute.NewDatum(canonFloatScalar(v.Value)), nil
	case *compute.ArrayDatum:
		a := v.MakeArray()
		defer a.Release()
		var out arrow.Array
		switch a := a.(type) {
		case *array.Float32:
			out = canonFloats(compute.GetAllocator(ctx), a, a.Float32Values())
		case *array.Float64:
			out = canonFloats(compute.GetAllocator(ctx), a, a.Float64Values())
		}
		if out == nil {
			return compute.NewDatum(a), nil
		}
		defer out.Release()
		return compute.NewDatum(out), nil
	}
	return nil, fmt.Errorf("ops: IN: unexpected value kind %s", d.Kind())
}

// canonFloats returns a copy of a (whose values are vs) with canonical floats, nil when they
// all are already.
func canonFloats[T float32 | float64](mem memory.Allocator, a arrow.Array, vs []T) arrow.Array {
	first := -1
	for i, x := range vs {
		if !isCanonFloat(x) {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	vb := newBuffer(mem, len(vs)*int(unsafe.Sizeof(vs[0])), false)
	defer vb.Release()
	out := arrow.GetData[T](vb.Bytes())[:len(vs)]
	for i, x := range vs {
		out[i] = canonFloat(x)
	}
	var validity *memory.Buffer
	if a.NullN() > 0 {
		validity = newBuffer(mem, int(bitutil.BytesForBits(int64(len(vs)))), true)
		defer validity.Release()
		bitutil.CopyBitmap(a.NullBitmapBytes(), a.Data().Offset(), len(vs), validity.Bytes(), 0)
	}
	data := array.NewData(a.DataType(), len(vs), []*memory.Buffer{validity, vb}, nil, a.NullN(), 0)
	defer data.Release()
	return array.MakeFromData(data)
}
