package ops

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// restartFrames runs an aggregate without an inverse transition over each frame of a
// partition (rows ps … ps+m-1 in window order) as PostgreSQL's window aggregation does: the
// state is reset and the frame's rows added again where the frame's head moves (or its end
// moves back), else the rows entering at its end are added to the running state; under a
// frame exclusion every row's frame is added anew. reset empties the state, add adds
// position p (its row is ev.w.at(ps+p)), emit reads the state as position k's answer.
func (ev *winEval) restartFrames(f WindowFunc, ps, m int, peerStart, peerEnd []int32, reset func(), add func(p int) error, emit func(k int) error) error {
	cs, ce := -1, -1
	for k := range m {
		if f.Frame.Exclude != ExcludeNoOthers {
			reset()
			if err := ev.eachInFrame(f.Frame, ps, k, m, peerStart, peerEnd, add); err != nil {
				return err
			}
		} else {
			s, e := ev.frame(f.Frame, ps, k, m, peerStart, peerEnd)
			if s != cs || e < ce {
				reset()
				cs, ce = s, s
			}
			for ; ce < e; ce++ {
				if err := add(ce); err != nil {
					return err
				}
			}
		}
		if err := emit(k); err != nil {
			return err
		}
	}
	return nil
}

// regrWindow evaluates a binary aggregate (Corr … RegrSyy) of doubles y (Args[0]) and x
// (Args[1]) over each row's frame: float8_regr_accum of the frame's pairs without a NULL, then
// the kind's final function; RegrCount answers the count (bigint), the others double
// precision, NULL where PostgreSQL's final function is.
func (ev *winEval) regrWindow(f WindowFunc) (arrow.Array, error) {
	y, ok1 := ev.args[f.Args[0]].(*array.Float64)
	x, ok2 := ev.args[f.Args[1]].(*array.Float64)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("ops: window: a binary aggregate of %s and %s, not float64", ev.args[f.Args[0]].DataType(), ev.args[f.Args[1]].DataType())
	}
	n := ev.w.n
	out := make([]float64, n)
	valid := make([]bool, n)
	var st RegrState
	err := ev.partitions(func(ps, pe int, peerStart, peerEnd []int32) error {
		return ev.restartFrames(f, ps, pe-ps, peerStart, peerEnd,
			func() { st = RegrState{} },
			func(p int) error {
				r := int(ev.w.at(ps + p))
				if y.IsNull(r) || x.IsNull(r) {
					return nil
				}
				var err error
				st, err = st.Accum(y.Value(r), x.Value(r))
				return err
			},
			func(k int) error {
				if f.Kind == RegrCount {
					out[ps+k], valid[ps+k] = st.N, true
				} else {
					out[ps+k], valid[ps+k] = st.Final(f.Kind)
				}
				return nil
			})
	})
	if err != nil {
		return nil, err
	}
	alloc := allocator(ev.w.mem)
	if f.Kind == RegrCount {
		b := array.NewInt64Builder(alloc)
		defer b.Release()
		for _, v := range out {
			b.Append(int64(v))
		}
		return b.NewArray(), nil
	}
	b := array.NewFloat64Builder(alloc)
	defer b.Release()
	b.AppendValues(out, valid)
	return b.NewArray(), nil
}

// isUTF8 reports a text type (utf8 or large_utf8).
func isUTF8(t arrow.DataType) bool { return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING }

// textAt returns a reader of a utf8 or large_utf8 array's values.
func textAt(a arrow.Array) (func(int) string, bool) {
	switch v := a.(type) {
	case *array.String:
		return v.Value, true
	case *array.LargeString:
		return v.Value, true
	}
	return nil, false
}

// collectWindow evaluates string_agg and array_agg over each row's frame (less its
// exclusion), the frame's rows in window order: the output holds every frame's values, so
// it is built through the query's ledger and checked against its limit as it grows (past it
// the query fails naming the limit, as the operator's other allocations do).
func (ev *winEval) collectWindow(f WindowFunc) (arrow.Array, error) {
	alloc := allocator(ev.w.mem)
	at := ev.w.at
	arg := ev.args[f.Args[0]]
	var b array.Builder
	var add func(r int)
	var begin func() // a row's answer starts
	var end func()   // and ends
	if f.Kind == StringAgg {
		val, ok1 := textAt(arg)
		sep, ok2 := textAt(ev.args[f.Args[1]])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("ops: window: string_agg of %s and %s", arg.DataType(), ev.args[f.Args[1]].DataType())
		}
		sb := array.NewStringBuilder(alloc)
		b = sb
		var buf []byte
		some := false
		begin = func() { buf, some = buf[:0], false }
		add = func(r int) {
			if arg.IsNull(r) {
				return
			}
			// string_agg_transfn: the delimiter before every value, the first one's cut off
			// by the final function.
			if some && ev.args[f.Args[1]].IsValid(r) {
				buf = append(buf, sep(r)...)
			}
			buf = append(buf, val(r)...)
			some = true
		}
		end = func() {
			if !some {
				sb.AppendNull()
				return
			}
			sb.BinaryBuilder.Append(buf)
		}
	} else {
		lb := array.NewListBuilder(alloc, arg.DataType())
		b = lb
		elem, err := elemAppender(lb.ValueBuilder(), arg)
		if err != nil {
			lb.Release()
			return nil, err
		}
		var keep *array.Boolean // FILTER
		if len(f.Args) == 2 {
			keep, _ = ev.args[f.Args[1]].(*array.Boolean)
		}
		// A frame without rows is NULL: a row's list begins at its first value.
		begun := false
		begin = func() { begun = false }
		add = func(r int) {
			if keep != nil && (keep.IsNull(r) || !keep.Value(r)) {
				return
			}
			if !begun {
				lb.Append(true)
				begun = true
			}
			elem(r)
		}
		end = func() {
			if !begun {
				lb.AppendNull()
			}
		}
	}
	defer b.Release()
	err := ev.partitions(func(ps, pe int, peerStart, peerEnd []int32) error {
		m := pe - ps
		for k := range m {
			if k%recomputeCheck == recomputeCheck-1 {
				if err := ctxErr(ev.w.ctx); err != nil {
					return err
				}
			}
			begin()
			for _, sp := range ev.frameSpans(f.Frame, ps, k, m, peerStart, peerEnd) {
				for p := sp.lo; p < sp.hi; p++ {
					add(int(at(ps + p)))
				}
			}
			end()
			if err := ev.w.mem.Check(); err != nil {
				return fmt.Errorf("ops: window: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.NewArray(), nil
}

// elemAppender returns a function appending row r of a (text, integer, bigint, double
// precision or boolean values) to vb, NULL where a is.
func elemAppender(vb array.Builder, a arrow.Array) (func(r int), error) {
	switch v := a.(type) {
	case *array.String:
		return appendFrom(vb, a, v, vb.(*array.StringBuilder)), nil
	case *array.Int32:
		return appendFrom(vb, a, v, vb.(*array.Int32Builder)), nil
	case *array.Int64:
		return appendFrom(vb, a, v, vb.(*array.Int64Builder)), nil
	case *array.Float64:
		return appendFrom(vb, a, v, vb.(*array.Float64Builder)), nil
	case *array.Boolean:
		return appendFrom(vb, a, v, vb.(*array.BooleanBuilder)), nil
	}
	return nil, fmt.Errorf("ops: window: array_agg of %s", a.DataType())
}

// appendFrom is elemAppender's function for values of type T read from vals (a) and appended
// to typed (vb).
func appendFrom[T any](vb array.Builder, a arrow.Array, vals interface{ Value(int) T }, typed interface{ Append(T) }) func(r int) {
	return func(r int) {
		if a.IsNull(r) {
			vb.AppendNull()
			return
		}
		typed.Append(vals.Value(r))
	}
}
