package ops_test

import (
	"testing"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// BenchmarkHashJoinSemi: the semi join of issue 19's `IN (SELECT busy origins)`, 300,000 left
// rows in batches of 2,048 (runs of 1,000 rows of one of 230 keys, 156 of them on the right:
// most batches keep every row, some a part) against 156 right rows, no residual, nothing gathered.
func BenchmarkHashJoinSemi(b *testing.B) {
	k := func(v int64) *int64 { return &v }
	var l, r []joinRow
	want := int64(0)
	for i := range 300000 {
		key := int64(i / 1000 % 230)
		l = append(l, joinRow{k(key), int64(i)})
		if key < 156 {
			want++
		}
	}
	for i := range 156 {
		r = append(r, joinRow{k(int64(i)), int64(i)})
	}
	lb, rb := joinBatch(joinLeftSchema, l), joinBatch(joinRightSchema, r)
	defer lb.Release()
	defer rb.Release()
	lk, _ := ops.Column(joinLeftSchema, 0)
	rk, _ := ops.Column(joinRightSchema, 0)
	spec := ops.JoinSpec{Type: ops.JoinSemi, LeftKeys: []*ops.Expr{lk}, RightKeys: []*ops.Expr{rk}, Unused: []bool{true, true}}
	b.ReportAllocs()
	for b.Loop() {
		j := ops.HashJoin(b.Context(), sourceOf(b, lb, chunks(lb, 2048)), sourceOf(b, rb, chunks(rb, 156)), spec, newMem(b, 0))
		rows := int64(0)
		for j.Next() {
			rows += j.RecordBatch().NumRows()
		}
		if err := j.Err(); err != nil || rows != want {
			b.Fatalf("%d rows, %v", rows, err)
		}
		j.Release()
	}
}
