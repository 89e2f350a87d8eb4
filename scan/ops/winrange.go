package ops

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// RANGE frames with an offset (RANGE BETWEEN x PRECEDING AND y FOLLOWING): a bound is the
// first (start) or last (end) row whose single ORDER BY key lies within the offset of the
// current row's key, in the order's direction, as PostgreSQL's in_range support functions and
// nodeWindowAgg.c's update_frameheadpos/update_frametailpos place them. The key is an integer
// (the offset a count of its units), a double precision (the offset a whole number) or a
// timestamp (the offset in the timestamp's unit: the binder converts an interval without
// months). A NULL key's bound is its peers' (the NULL rows), and rows whose key is NULL are
// never within a non-NULL key's offset; a bound past the type's range includes every row on
// that side. Positions are found by binary search in the partition's ordered rows.

// rangeOffsetKind reports whether a key type can carry a RANGE offset frame.
func rangeOffsetKind(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT32, arrow.INT64, arrow.FLOAT64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// hasRangeOffset reports a RANGE frame with a PRECEDING or FOLLOWING offset.
func (f WindowFrame) hasRangeOffset() bool {
	off := func(b FrameBound) bool { return b.Kind == Preceding || b.Kind == Following }
	return !f.Rows && !f.Groups && (off(f.Start) || off(f.End))
}

// ErrRangeOffsetOrder is wrapped by CheckWindowSpec's refusal of a RANGE frame with an offset
// whose order is not exactly one key (PostgreSQL's 42P20 "RANGE with offset
// PRECEDING/FOLLOWING requires exactly one ORDER BY column").
var ErrRangeOffsetOrder = errors.New("a RANGE frame with an offset needs exactly one ORDER BY key")

// checkRangeOffset refuses a RANGE offset frame whose order is not one key of a type that
// carries one.
func checkRangeOffset(s *arrow.Schema, spec WindowSpec, i int) error {
	if len(spec.Order) != 1 {
		return fmt.Errorf("ops: window function %d: %w, not %d", i, ErrRangeOffsetOrder, len(spec.Order))
	}
	if c := spec.Order[0].Column; c < 0 || c >= s.NumFields() || !rangeOffsetKind(s.Field(c).Type) {
		return fmt.Errorf("ops: window function %d: a RANGE frame with an offset over an ORDER BY key of another type", i)
	}
	return nil
}

// frame returns the frame [s, e) of position k of the partition starting at output position
// ps (m rows), before its exclusion (frameSpans): frameOf, for a GROUPS offset bound
// groupsFrame, and for a RANGE offset bound the binary search above.
func (ev *winEval) frame(f WindowFrame, ps, k, m int, peerStart, peerEnd []int32) (int, int) {
	s, e := frameOf(f, k, m, peerStart, peerEnd)
	if f.Groups {
		return ev.groupsFrame(f, ps, k, m, peerStart, s, e)
	}
	if !f.hasRangeOffset() {
		return s, e
	}
	v := &ev.views[ev.nPart]
	row := func(p int) int { return int(ev.w.at(ps + p)) }
	null := func(p int) bool { return v.valid != nil && !bitutil.BitIsSet(v.valid, v.off+row(p)) }
	if null(k) {
		// A NULL key's offset bounds are its peers' (the NULL rows).
		if f.Start.Kind == Preceding || f.Start.Kind == Following {
			s = int(peerStart[k])
		}
		if f.End.Kind == Preceding || f.End.Kind == Following {
			e = int(peerEnd[k])
		}
		return s, e
	}
	// The non-NULL rows of the partition: [lo, hi).
	lo, hi := 0, m
	if v.nullFirst {
		lo = sort.Search(m, func(p int) bool { return !null(p) })
	} else {
		hi = sort.Search(m, func(p int) bool { return null(p) })
	}
	cur := row(k)
	// dist(p) compares row p's key with the current key moved by delta in the order's
	// direction: -1, 0, 1 as key(p) is before, at or after it in the order.
	dist := func(p int, delta int64) int {
		c := rangeCompare(v, row(p), cur, delta)
		if v.desc {
			return -c
		}
		return c
	}
	signed := func(b FrameBound) int64 {
		if b.Kind == Preceding {
			return -b.Offset
		}
		return b.Offset
	}
	if b := f.Start; b.Kind == Preceding || b.Kind == Following {
		d := signed(b)
		s = lo + sort.Search(hi-lo, func(i int) bool { return dist(lo+i, d) >= 0 })
	}
	if b := f.End; b.Kind == Preceding || b.Kind == Following {
		d := signed(b)
		e = lo + sort.Search(hi-lo, func(i int) bool { return dist(lo+i, d) > 0 })
	}
	return s, e
}

// rangeCompare compares the key of row r with the key of row cur moved by delta (in the
// ascending direction for a descending key: the caller flips the result), exactly: -1, 0 or 1.
func rangeCompare(v *keyView, r, cur int, delta int64) int {
	if v.desc {
		delta = -delta
	}
	switch v.kind {
	case viewI64, viewI32:
		var x, c int64
		if v.kind == viewI64 {
			x, c = v.i64[r], v.i64[cur]
		} else {
			x, c = int64(v.i32[r]), int64(v.i32[cur])
		}
		// x - (c + delta) in 128 bits.
		d := int128{}.add(x).sub(int128{}.add(c).add(delta))
		switch {
		case d.hi < 0:
			return -1
		case d.hi == 0 && d.lo == 0:
			return 0
		}
		return 1
	case viewF64:
		x, c := v.f64[r], v.f64[cur]
		// PostgreSQL's in_range_float8_float8: NaN sorts above everything and is only
		// within range of NaN; c + delta past the range is infinite.
		switch {
		case math.IsNaN(x) && math.IsNaN(c):
			return 0
		case math.IsNaN(x):
			return 1
		case math.IsNaN(c):
			return -1
		}
		t := c + float64(delta)
		switch {
		case x < t:
			return -1
		case x > t:
			return 1
		}
		return 0
	}
	// Other kinds carry no offset (checkRangeOffset).
	return 0
}
