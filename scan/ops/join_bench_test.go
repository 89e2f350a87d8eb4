package ops_test

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/types"

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

// BenchmarkHashJoinOneRowResidual: the shape of issue 19's join against avg run partition by
// partition (scan/partjoin.go): 300,000 left rows in batches of 2,048, each paired with a
// right side of one row (no key: a loop over it) and kept where the residual v < w holds,
// nothing gathered for the output.
func BenchmarkHashJoinOneRowResidual(b *testing.B) {
	k := func(v int64) *int64 { return &v }
	var l []joinRow
	for i := range 300000 {
		l = append(l, joinRow{k(0), int64(i % 100)})
	}
	r := []joinRow{{k(0), 50}}
	lb, rb := joinBatch(joinLeftSchema, l), joinBatch(joinRightSchema, r)
	defer lb.Release()
	defer rb.Release()
	joined := arrow.NewSchema(append(slices.Clone(joinLeftSchema.Fields()), joinRightSchema.Fields()...), nil)
	i64 := &types.Int64Type{Nullability: types.NullabilityNullable}
	p := newPlannerOver(b, types.NamedStruct{Names: []string{"k", "v", "k2", "w"}, Struct: types.StructType{Nullability: types.NullabilityRequired, Types: []types.Type{i64, i64, i64, i64}}}, joined)
	lt := p.compile(p.fn(urnComparison, "lt", p.ref(1), p.ref(3)))[0][0]
	spec := ops.JoinSpec{Type: ops.JoinInner, Residual: []*ops.Expr{lt}, Unused: []bool{true, true, true, true}}
	b.ReportAllocs()
	for b.Loop() {
		j := ops.HashJoin(b.Context(), sourceOf(b, lb, chunks(lb, 2048)), sourceOf(b, rb, []int{1}), spec, newMem(b, 0))
		rows := int64(0)
		for j.Next() {
			rows += j.RecordBatch().NumRows()
		}
		if err := j.Err(); err != nil || rows != 150000 {
			b.Fatalf("%d rows, %v", rows, err)
		}
		j.Release()
	}
}
