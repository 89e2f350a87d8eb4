package ops

import (
	"bytes"
	"cmp"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// SortKey is one key of an ordering: the input column at index Column, descending when Desc,
// with nulls before every value when NullsFirst (after every value otherwise), whatever the
// direction. Values compare as PostgreSQL does: numbers and temporal values numerically (NaN
// above every float, -0 equal to 0), strings and binaries bytewise, false before true.
// Supported column types: int8–64, uint8–64, float16/32/64, bool, utf8, large_utf8,
// utf8_view, binary, large_binary, binary_view, fixed_size_binary, timestamp, date32, date64,
// time32, time64 and duration.
type SortKey struct {
	Column     int
	Desc       bool
	NullsFirst bool
}

// keyCmp compares row i of a with row j of b, two arrays of one key's type, in the key's
// order (direction and nulls included).
type keyCmp func(a arrow.Array, i int, b arrow.Array, j int) int

// valueCmp compares two non-null values, ascending.
type valueCmp func(a arrow.Array, i int, b arrow.Array, j int) int

type valuer[T any] interface {
	arrow.Array
	Value(int) T
}

func ordered[T cmp.Ordered, A valuer[T]]() valueCmp {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return cmp.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

func floats[T float32 | float64, A valuer[T]]() valueCmp {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return compareFloat(float64(a.(A).Value(i)), float64(b.(A).Value(j)))
	}
}

func byteSlices[A valuer[[]byte]]() valueCmp {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return bytes.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

func stringsCmp[A valuer[string]]() valueCmp {
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		return strings.Compare(a.(A).Value(i), b.(A).Value(j))
	}
}

// CompareFloat orders doubles as PostgreSQL does (compareFloat), for the aggregates that sort
// values themselves (scan/aggregate's array_agg).
func CompareFloat(x, y float64) int { return compareFloat(x, y) }

// compareFloat orders floats as PostgreSQL does (float8_cmp_internal): -1, 0 or 1 as x is
// before, equal to or after y in PGLess's order.
func compareFloat(x, y float64) int { return int(PGLess(y, x)) - int(PGLess(x, y)) }

// valueCmpOf returns the ascending comparison of non-null values of dt.
func valueCmpOf(dt arrow.DataType) (valueCmp, bool) {
	switch dt.ID() {
	case arrow.INT8:
		return ordered[int8, *array.Int8](), true
	case arrow.INT16:
		return ordered[int16, *array.Int16](), true
	case arrow.INT32:
		return ordered[int32, *array.Int32](), true
	case arrow.INT64:
		return ordered[int64, *array.Int64](), true
	case arrow.UINT8:
		return ordered[uint8, *array.Uint8](), true
	case arrow.UINT16:
		return ordered[uint16, *array.Uint16](), true
	case arrow.UINT32:
		return ordered[uint32, *array.Uint32](), true
	case arrow.UINT64:
		return ordered[uint64, *array.Uint64](), true
	case arrow.FLOAT16:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return compareFloat(float64(a.(*array.Float16).Value(i).Float32()), float64(b.(*array.Float16).Value(j).Float32()))
		}, true
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return CompareIntervals(a.(*array.MonthDayNanoInterval).Value(i), b.(*array.MonthDayNanoInterval).Value(j))
		}, true
	case arrow.FLOAT32:
		return floats[float32, *array.Float32](), true
	case arrow.FLOAT64:
		return floats[float64, *array.Float64](), true
	case arrow.BOOL:
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			x, y := a.(*array.Boolean).Value(i), b.(*array.Boolean).Value(j)
			switch {
			case x == y:
				return 0
			case y:
				return -1
			}
			return 1
		}, true
	case arrow.STRING:
		return stringsCmp[*array.String](), true
	case arrow.LARGE_STRING:
		return stringsCmp[*array.LargeString](), true
	case arrow.STRING_VIEW:
		return stringsCmp[*array.StringView](), true
	case arrow.BINARY:
		return byteSlices[*array.Binary](), true
	case arrow.LARGE_BINARY:
		return byteSlices[*array.LargeBinary](), true
	case arrow.BINARY_VIEW:
		return byteSlices[*array.BinaryView](), true
	case arrow.FIXED_SIZE_BINARY:
		return byteSlices[*array.FixedSizeBinary](), true
	case arrow.TIMESTAMP:
		return ordered[arrow.Timestamp, *array.Timestamp](), true
	case arrow.DATE32:
		return ordered[arrow.Date32, *array.Date32](), true
	case arrow.DATE64:
		return ordered[arrow.Date64, *array.Date64](), true
	case arrow.TIME32:
		return ordered[arrow.Time32, *array.Time32](), true
	case arrow.TIME64:
		return ordered[arrow.Time64, *array.Time64](), true
	case arrow.DURATION:
		return ordered[arrow.Duration, *array.Duration](), true
	case arrow.DECIMAL128:
		// numeric (numeric.go): the values of one column share its scale, so their unscaled
		// integers order them.
		return func(a arrow.Array, i int, b arrow.Array, j int) int {
			return a.(*array.Decimal128).Value(i).Cmp(b.(*array.Decimal128).Value(j))
		}, true
	}
	return nil, false
}

func newKeyCmp(dt arrow.DataType, k SortKey) (keyCmp, bool) {
	vc, ok := valueCmpOf(dt)
	if !ok {
		return nil, false
	}
	nullFirst := -1
	if !k.NullsFirst {
		nullFirst = 1
	}
	sign := 1
	if k.Desc {
		sign = -1
	}
	return func(a arrow.Array, i int, b arrow.Array, j int) int {
		an, bn := a.IsNull(i), b.IsNull(j)
		if an || bn {
			switch {
			case an && bn:
				return 0
			case an:
				return nullFirst
			}
			return -nullFirst
		}
		return sign * vc(a, i, b, j)
	}, true
}

// ordering is the row order of a list of sort keys over one schema.
type ordering struct {
	keys []SortKey
	cmps []keyCmp
}

func newOrdering(schema *arrow.Schema, keys []SortKey) (*ordering, error) {
	o := &ordering{keys: keys, cmps: make([]keyCmp, len(keys))}
	for i, k := range keys {
		if k.Column < 0 || k.Column >= schema.NumFields() {
			return nil, fmt.Errorf("ops: sort key %d: column %d out of range of %d columns", i, k.Column, schema.NumFields())
		}
		dt := schema.Field(k.Column).Type
		c, ok := newKeyCmp(dt, k)
		if !ok {
			return nil, fmt.Errorf("ops: sort key %d: column %d of type %s cannot be ordered", i, k.Column, dt)
		}
		o.cmps[i] = c
	}
	return o, nil
}

// keyCols returns the key columns of b, in key order.
func (o *ordering) keyCols(b arrow.RecordBatch) []arrow.Array {
	cols := make([]arrow.Array, len(o.keys))
	for i, k := range o.keys {
		cols[i] = b.Column(k.Column)
	}
	return cols
}

// viewKind selects a keyView's typed comparison.
type viewKind uint8

const (
	viewOther viewKind = iota // through the key's keyCmp
	viewI64                   // int64, timestamp, duration, time64, date64
	viewI32                   // int32, date32, time32
	viewU64
	viewF64
	viewBin32 // utf8, binary
	viewBin64 // large_utf8, large_binary
	viewBool
)

// keyView is one key column of one batch prepared for fast row comparisons: its values as typed
// slices (sliced to the array's offset), its validity bitmap, and the key's order.
type keyView struct {
	kind      viewKind
	desc      bool
	nullFirst bool
	valid     []byte // nil when the array has no null
	off       int    // the array's offset, for the bitmaps
	i64       []int64
	i32       []int32
	u64       []uint64
	f64       []float64
	offs32    []int32
	offs64    []int64
	data      []byte
	arr       arrow.Array
	cmp       keyCmp
}

// views prepares the key columns cols (one per key) for compareViews.
func (o *ordering) views(cols []arrow.Array) []keyView {
	vs := make([]keyView, len(cols))
	for k, a := range cols {
		v := &vs[k]
		v.desc, v.nullFirst, v.arr, v.cmp = o.keys[k].Desc, o.keys[k].NullsFirst, a, o.cmps[k]
		d := a.Data()
		n, off := d.Len(), d.Offset()
		v.off = off
		if a.NullN() > 0 {
			v.valid = d.Buffers()[0].Bytes()
		}
		if n == 0 {
			continue // never compared
		}
		switch a.DataType().ID() {
		case arrow.INT64, arrow.TIMESTAMP, arrow.DURATION, arrow.TIME64, arrow.DATE64:
			v.kind, v.i64 = viewI64, arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n]
		case arrow.INT32, arrow.DATE32, arrow.TIME32:
			v.kind, v.i32 = viewI32, arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n]
		case arrow.UINT64:
			v.kind, v.u64 = viewU64, arrow.Uint64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n]
		case arrow.FLOAT64:
			v.kind, v.f64 = viewF64, arrow.Float64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n]
		case arrow.STRING, arrow.BINARY:
			v.kind, v.offs32 = viewBin32, arrow.Int32Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n+1]
			if b := d.Buffers()[2]; b != nil {
				v.data = b.Bytes()
			}
		case arrow.LARGE_STRING, arrow.LARGE_BINARY:
			v.kind, v.offs64 = viewBin64, arrow.Int64Traits.CastFromBytes(d.Buffers()[1].Bytes())[off:off+n+1]
			if b := d.Buffers()[2]; b != nil {
				v.data = b.Bytes()
			}
		case arrow.BOOL:
			v.kind, v.data = viewBool, d.Buffers()[1].Bytes()
		}
	}
	return vs
}

// compareViews compares row i of the key views a with row j of the key views b (views of the
// same ordering).
func compareViews(a []keyView, i int, b []keyView, j int) int {
	for k := range a {
		if r := compareView(&a[k], i, &b[k], j); r != 0 {
			return r
		}
	}
	return 0
}

func compareView(a *keyView, i int, b *keyView, j int) int {
	if a.kind == viewOther {
		return a.cmp(a.arr, i, b.arr, j)
	}
	if a.valid != nil || b.valid != nil {
		an := a.valid != nil && !bitutil.BitIsSet(a.valid, a.off+i)
		bn := b.valid != nil && !bitutil.BitIsSet(b.valid, b.off+j)
		if an || bn {
			switch {
			case an && bn:
				return 0
			case an == a.nullFirst:
				return -1
			}
			return 1
		}
	}
	var c int
	switch a.kind {
	case viewI64:
		c = cmp.Compare(a.i64[i], b.i64[j])
	case viewI32:
		c = cmp.Compare(a.i32[i], b.i32[j])
	case viewU64:
		c = cmp.Compare(a.u64[i], b.u64[j])
	case viewF64:
		c = compareFloat(a.f64[i], b.f64[j])
	case viewBin32:
		c = bytes.Compare(a.data[a.offs32[i]:a.offs32[i+1]], b.data[b.offs32[j]:b.offs32[j+1]])
	case viewBin64:
		c = bytes.Compare(a.data[a.offs64[i]:a.offs64[i+1]], b.data[b.offs64[j]:b.offs64[j+1]])
	case viewBool:
		x, y := bitutil.BitIsSet(a.data, a.off+i), bitutil.BitIsSet(b.data, b.off+j)
		switch {
		case x == y:
		case y:
			c = -1
		default:
			c = 1
		}
	}
	if a.desc {
		return -c
	}
	return c
}
