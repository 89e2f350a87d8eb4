package substrait

import (
	"hash/maphash"

	"github.com/substrait-io/substrait-go/v8/expr"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// exprIndex finds an expression's match (sameExpr) in a list of expressions that only grows,
// such as an aggregation's GROUP BY keys, by looking at the few of the list with its
// exprHash rather than comparing it with each: a select list of n items over n keys is bound
// in O(n) comparisons, not O(n²) (a 1,600-key GROUP BY took minutes). The zero value is an
// empty index; it indexes the list given to find as it grows.
type exprIndex struct {
	n  int // the expressions of the list indexed: es[:n]
	at map[uint64][]int
}

// find returns the first i of es, in order, with sameExpr(es[i], e) and ok(i) (nil ok: any),
// or -1: the loop `for i := range es { if sameExpr(es[i], e) && ok(i) … }` answers the same,
// since sameExpr(a, b) implies exprHash(a) == exprHash(b) — save where expr's Equals reads
// only the first's arguments (ScalarFunction.Equals: concat(a, b) "equals" concat(a, b, c),
// and the other way round indexes past the arguments), which find takes for no match, as
// PostgreSQL does (42803 for concat(a, b, c) under GROUP BY concat(a, b)). es is the list of the earlier
// calls, possibly longer (a shorter one is indexed afresh).
func (x *exprIndex) find(es []expr.Expression, e expr.Expression, ok func(int) bool) int {
	if x.at == nil || len(es) < x.n {
		x.at, x.n = map[uint64][]int{}, 0
	}
	for ; x.n < len(es); x.n++ {
		h := exprHash(es[x.n])
		x.at[h] = append(x.at[h], x.n)
	}
	for _, i := range x.at[exprHash(e)] {
		if sameExpr(es[i], e) && (ok == nil || ok(i)) {
			return i
		}
	}
	return -1
}

var exprSeed = maphash.MakeSeed()

// exprHash hashes e's Substrait message so that sameExpr(a, b) implies equal hashes: every
// populated field of the message tree but the floating-point values (proto.Equal takes NaN
// to equal NaN and 0 to equal -0, whose bits differ) and the entries of maps (in no fixed
// order: their number only). Equals of expr's expressions compares what their messages hold.
func exprHash(e expr.Expression) uint64 {
	var h maphash.Hash
	h.SetSeed(exprSeed)
	hashMessage(&h, e.ToProto().ProtoReflect())
	return h.Sum64()
}

// hashMessage writes m's populated fields, in field order, to h (exprHash).
func hashMessage(h *maphash.Hash, m protoreflect.Message) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if !m.Has(fd) {
			continue
		}
		maphash.WriteComparable(h, fd.Number())
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			maphash.WriteComparable(h, l.Len())
			for j := range l.Len() {
				hashValue(h, fd, l.Get(j))
			}
		case fd.IsMap():
			maphash.WriteComparable(h, v.Map().Len())
		default:
			hashValue(h, fd, v)
		}
	}
}

// hashValue writes one value of field fd to h (exprHash).
func hashValue(h *maphash.Hash, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		hashMessage(h, v.Message())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		// Not hashed: see exprHash.
	case protoreflect.StringKind:
		h.WriteString(v.String())
	case protoreflect.BytesKind:
		h.Write(v.Bytes())
	case protoreflect.BoolKind:
		maphash.WriteComparable(h, v.Bool())
	case protoreflect.EnumKind:
		maphash.WriteComparable(h, v.Enum())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		maphash.WriteComparable(h, v.Uint())
	default: // the signed integer kinds
		maphash.WriteComparable(h, v.Int())
	}
}
