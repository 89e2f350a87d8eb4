package ops

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
)

// inSet is the set of an IN list of text or integer constants, built once at compile time.
// Generated statements carry IN lists of tens of thousands of constants: inNode's general
// path converts each through exprs at compile time (the larger part of compiling such a
// filter), and compute's is_in builds its hash table of the value set again on every call
// (compute.CallFunction runs the kernel's init each time), that is every batch. inSet's lookups keep SQL's meaning, as is_in with NullMatchingInconclusive: NULL
// where x is NULL, true where x is in the set, else NULL when the list holds a NULL and false
// otherwise.
type inSet struct {
	text    map[string]struct{} // the list's strings, when it is of text
	ints    map[int64]struct{}  // the list's integers, when it is of integers
	hasNull bool
}

// newInSet builds the set of opts and its arrow array (the value set of the general path)
// without exprs, when every option is a string literal or every one an integer literal of
// one width (or a NULL of that type), of no type variation; ok is false otherwise.
func newInSet(opts []expr.Expression) (set *inSet, arr arrow.Array, ok bool) {
	var b array.Builder
	s := &inSet{}
	for _, o := range opts {
		var v any
		var t types.Type
		switch l := o.(type) {
		case *expr.PrimitiveLiteral[string]:
			v, t = l.Value, l.Type
		case *expr.PrimitiveLiteral[int64]:
			v, t = l.Value, l.Type
		case *expr.PrimitiveLiteral[int32]:
			v, t = l.Value, l.Type
		case *expr.PrimitiveLiteral[int16]:
			v, t = l.Value, l.Type
		case *expr.NullLiteral:
			t = l.Type
		default:
			return nil, nil, false
		}
		if t == nil || t.GetTypeVariationReference() != 0 {
			return nil, nil, false
		}
		var at arrow.DataType
		switch t.(type) {
		case *types.StringType:
			at = arrow.BinaryTypes.String
		case *types.Int64Type:
			at = arrow.PrimitiveTypes.Int64
		case *types.Int32Type:
			at = arrow.PrimitiveTypes.Int32
		case *types.Int16Type:
			at = arrow.PrimitiveTypes.Int16
		default:
			return nil, nil, false
		}
		if b == nil {
			b = array.NewBuilder(memory.DefaultAllocator, at)
			defer b.Release()
		} else if !arrow.TypeEqual(b.Type(), at) {
			return nil, nil, false
		}
		switch v := v.(type) {
		case nil:
			s.hasNull = true
			b.AppendNull()
		case string:
			if s.text == nil {
				s.text = make(map[string]struct{}, len(opts))
			}
			s.text[v] = struct{}{}
			b.(*array.StringBuilder).Append(v)
		case int64:
			s.addInt(v, len(opts))
			b.(*array.Int64Builder).Append(v)
		case int32:
			s.addInt(int64(v), len(opts))
			b.(*array.Int32Builder).Append(v)
		case int16:
			s.addInt(int64(v), len(opts))
			b.(*array.Int16Builder).Append(v)
		}
	}
	if b == nil {
		return nil, nil, false
	}
	return s, b.NewArray(), true
}

func (s *inSet) addInt(v int64, n int) {
	if s.ints == nil {
		s.ints = make(map[int64]struct{}, n)
	}
	s.ints[v] = struct{}{}
}

// lookup answers x IN (the set) for every row of a, an array of the set's kind (ok false for
// any other array: the caller takes the general path).
func (s *inSet) lookup(mem memory.Allocator, a arrow.Array) (arrow.Array, bool) {
	var found func(i int) bool
	switch a := a.(type) {
	case *array.String:
		found = func(i int) bool { _, ok := s.text[a.Value(i)]; return ok }
	case *array.LargeString:
		found = func(i int) bool { _, ok := s.text[a.Value(i)]; return ok }
	case *array.Int64:
		found = func(i int) bool { _, ok := s.ints[a.Value(i)]; return ok }
	case *array.Int32:
		found = func(i int) bool { _, ok := s.ints[int64(a.Value(i))]; return ok }
	case *array.Int16:
		found = func(i int) bool { _, ok := s.ints[int64(a.Value(i))]; return ok }
	default:
		return nil, false
	}
	if (s.text == nil) != (a.DataType().ID() != arrow.STRING && a.DataType().ID() != arrow.LARGE_STRING) {
		return nil, false
	}
	n := a.Len()
	vals := memory.NewResizableBuffer(mem)
	vals.Resize(int(bitutil.BytesForBits(int64(n))))
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(n))))
	vb, nb := vals.Bytes(), valid.Bytes()
	clear(vb)
	clear(nb)
	nulls := 0
	for i := range n {
		switch {
		case a.IsNull(i):
			nulls++
		case found(i):
			bitutil.SetBit(vb, i)
			bitutil.SetBit(nb, i)
		case s.hasNull:
			nulls++
		default:
			bitutil.SetBit(nb, i)
		}
	}
	data := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	defer data.Release()
	valid.Release()
	vals.Release()
	return array.NewBooleanData(data), true
}

// eval answers d IN the set when d is an array the set can look up (ok false otherwise).
func (s *inSet) eval(ctx context.Context, d compute.Datum) (compute.Datum, bool) {
	ad, isArr := d.(*compute.ArrayDatum)
	if !isArr {
		return nil, false
	}
	a := ad.MakeArray()
	defer a.Release()
	out, ok := s.lookup(compute.GetAllocator(ctx), a)
	if !ok {
		return nil, false
	}
	defer out.Release()
	return compute.NewDatum(out), true
}
