package ops

// GROUPS frames and frame exclusion, as PostgreSQL's nodeWindowAgg.c places them
// (update_frameheadpos and update_frametailpos in FRAMEOPTION_GROUPS mode, row_is_in_frame's
// exclusion).
//
// A GROUPS offset counts peer groups: n PRECEDING starts the frame at the first row of the
// n-th group before the current row's (the partition's first row when there are fewer) and
// ends it after the last row of that group; n FOLLOWING likewise after the current row's group
// (an empty frame past the partition's last group). CURRENT ROW is the current row's group, as
// in RANGE mode.
//
// An exclusion removes from the frame the current row (CURRENT ROW), its peer group (GROUP) or
// its peers other than itself (TIES), wherever they lie relative to the frame's bounds. The
// frame then is up to three runs of positions, in order (frameSpans): the aggregates kept as
// prefix sums (count, the sums of integers and numerics) add the runs' differences, the value
// functions (first_value, last_value, nth_value) index into the runs, and the aggregates that
// accumulate as the frame slides (sums and averages of doubles, the variance family, min, max)
// are recomputed over each row's runs, as PostgreSQL restarts its aggregate for every row of a
// frame with an exclusion.

// span is the partition positions [lo, hi) (empty when hi <= lo).
type span struct{ lo, hi int }

// groupsOf sets ev.group, the peer group of each position of the partition starting at output
// position ps (m rows), and ev.groupStart, each group's first position followed by m, once per
// partition (every function of a GROUPS frame reads the same).
func (ev *winEval) groupsOf(ps, m int, peerStart []int32) {
	if ev.groupPS == ps && ev.groupM == m && ev.group != nil {
		return
	}
	ev.groupPS, ev.groupM = ps, m
	ev.group, ev.groupStart = ev.group[:0], ev.groupStart[:0]
	for k := range m {
		if k == 0 || peerStart[k] != peerStart[k-1] {
			ev.groupStart = append(ev.groupStart, int32(k))
		}
		ev.group = append(ev.group, int32(len(ev.groupStart)-1))
	}
	ev.groupStart = append(ev.groupStart, int32(m))
}

// groupsFrame returns the GROUPS frame [s, e) of position k from frameOf's (s, e), whose
// unbounded and CURRENT ROW bounds are GROUPS' own.
func (ev *winEval) groupsFrame(f WindowFrame, ps, k, m int, peerStart []int32, s, e int) (int, int) {
	off := func(b FrameBound) bool { return b.Kind == Preceding || b.Kind == Following }
	if !off(f.Start) && !off(f.End) {
		return s, e
	}
	ev.groupsOf(ps, m, peerStart)
	g, last := int64(ev.group[k]), int64(len(ev.groupStart)-2)
	// target is the group the bound names, clamped to [-1, last+1] (before the first group,
	// after the last).
	target := func(b FrameBound) int64 {
		if b.Kind == Preceding {
			return max(g-min(b.Offset, g+1), -1)
		}
		return min(g+min(b.Offset, last+1), last+1)
	}
	if off(f.Start) {
		t := max(target(f.Start), 0)
		s = m
		if t <= last {
			s = int(ev.groupStart[t])
		}
	}
	if off(f.End) {
		t := min(target(f.End), last)
		e = 0
		if t >= 0 {
			e = int(ev.groupStart[t+1])
		}
	}
	return s, e
}

// frameSpans returns the frame of position k (ev.frame's) less its exclusion, as at most three
// runs in the frame's order: the frame before the excluded rows, the current row (kept by
// EXCLUDE TIES when it lies in the frame) and the frame after them. Without an exclusion the
// first run is the whole frame.
func (ev *winEval) frameSpans(f WindowFrame, ps, k, m int, peerStart, peerEnd []int32) [3]span {
	s, e := ev.frame(f, ps, k, m, peerStart, peerEnd)
	return excluded(f, k, s, e, peerStart, peerEnd)
}

// excluded returns the frame [s, e) of position k less its exclusion, as frameSpans does.
func excluded(f WindowFrame, k, s, e int, peerStart, peerEnd []int32) [3]span {
	if f.Exclude == ExcludeNoOthers {
		return [3]span{{s, e}}
	}
	xs, xe := k, k+1
	if f.Exclude != ExcludeCurrentRow {
		xs, xe = int(peerStart[k]), int(peerEnd[k])
	}
	out := [3]span{{s, min(e, xs)}, {}, {max(s, xe), e}}
	if f.Exclude == ExcludeTies && s <= k && k < e {
		out[1] = span{k, k + 1}
	}
	return out
}

// frameRows returns the number of positions of a frame's runs.
func frameRows(sp [3]span) int {
	n := 0
	for _, r := range sp {
		n += max(r.hi-r.lo, 0)
	}
	return n
}

// nthInFrame returns the position of the frame's i-th row (from 0) and whether it has one.
func nthInFrame(sp [3]span, i int) (int, bool) {
	for _, r := range sp {
		if n := r.hi - r.lo; n > 0 {
			if i < n {
				return r.lo + i, true
			}
			i -= n
		}
	}
	return 0, false
}

// lastInFrame returns the position of the frame's last row and whether it has one.
func lastInFrame(sp [3]span) (int, bool) {
	for i := len(sp) - 1; i >= 0; i-- {
		if sp[i].hi > sp[i].lo {
			return sp[i].hi - 1, true
		}
	}
	return 0, false
}

// recomputeCheck is how many rows a per-row recomputation (a frame with an exclusion) goes
// between checks of its context: such a partition costs its rows times its frames' rows.
const recomputeCheck = 1024

// eachInFrame calls add with each position of position k's frame less its exclusion
// (frameSpans), in order: an aggregate recomputed for the row. The context is checked every
// recomputeCheck rows of the partition.
func (ev *winEval) eachInFrame(f WindowFrame, ps, k, m int, peerStart, peerEnd []int32, add func(p int) error) error {
	if k%recomputeCheck == recomputeCheck-1 {
		if err := ctxErr(ev.w.ctx); err != nil {
			return err
		}
	}
	for _, r := range ev.frameSpans(f, ps, k, m, peerStart, peerEnd) {
		for p := r.lo; p < r.hi; p++ {
			if err := add(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// excludedTotal is the total and the count of the values of position k's frame [s, e) less
// its exclusion, from a partition's prefix sums pre and prefix counts cnt (exact: int128 or
// int192 differences).
func excludedTotal[T interface {
	plus(T) T
	sub(T) T
}](f WindowFrame, k, s, e int, peerStart, peerEnd []int32, pre []T, cnt []int64) (sum T, c int64) {
	for _, r := range excluded(f, k, s, e, peerStart, peerEnd) {
		if r.hi > r.lo {
			sum, c = sum.plus(pre[r.hi].sub(pre[r.lo])), c+cnt[r.hi]-cnt[r.lo]
		}
	}
	return sum, c
}
