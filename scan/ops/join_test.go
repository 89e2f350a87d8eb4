package ops_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

var (
	joinLeftSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	joinRightSchema = arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "w", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
)

// joinRow is one input row: a key (nil: NULL) and a value.
type joinRow struct {
	k *int64
	v int64
}

func randomJoinRows(r *rand.Rand, n, keys int) []joinRow {
	out := make([]joinRow, n)
	for i := range out {
		out[i].v = r.Int64N(100)
		if r.IntN(10) > 0 {
			k := r.Int64N(int64(keys))
			out[i].k = &k
		}
	}
	return out
}

func joinBatch(schema *arrow.Schema, rows []joinRow) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		if r.k == nil {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(*r.k)
		}
		b.Field(1).(*array.Int64Builder).Append(r.v)
	}
	return b.NewRecordBatch()
}

// chunks are the sizes of b's rows cut into pieces of at most size rows.
func chunks(b arrow.RecordBatch, size int) []int {
	var out []int
	for n := int(b.NumRows()); n > 0; n -= size {
		out = append(out, min(n, size))
	}
	return out
}

func keyText(k *int64) string {
	if k == nil {
		return "NULL"
	}
	return fmt.Sprint(*k)
}

// nestedLoop is the reference: the join computed pair by pair in Go, each output row spelled
// as text, sorted; nullSafe matches a NULL key to a NULL key (IS NOT DISTINCT FROM).
func nestedLoop(t ops.JoinType, l, r []joinRow, residual, nullAware, nullSafe bool) []string {
	match := func(a, b joinRow) bool {
		eq := a.k != nil && b.k != nil && *a.k == *b.k
		if nullSafe {
			eq = eq || (a.k == nil && b.k == nil)
		}
		return eq && (!residual || a.v < b.v)
	}
	var out []string
	pair := func(a, b *joinRow) string {
		s := "NULL NULL"
		if a != nil {
			s = keyText(a.k) + " " + fmt.Sprint(a.v)
		}
		if b != nil {
			return s + " " + keyText(b.k) + " " + fmt.Sprint(b.v)
		}
		return s + " NULL NULL"
	}
	rmatched := make([]bool, len(r))
	rNull := slices.ContainsFunc(r, func(x joinRow) bool { return x.k == nil })
	for _, a := range l {
		n := 0
		for j, b := range r {
			if match(a, b) {
				n++
				rmatched[j] = true
				if t != ops.JoinSemi && t != ops.JoinAnti {
					out = append(out, pair(&a, &b))
				}
			}
		}
		switch {
		case n == 0 && (t == ops.JoinLeft || t == ops.JoinFull || t == ops.JoinSingle):
			out = append(out, pair(&a, nil))
		case n > 0 && t == ops.JoinSemi:
			out = append(out, keyText(a.k)+" "+fmt.Sprint(a.v))
		case n == 0 && t == ops.JoinAnti:
			if nullAware && len(r) > 0 && (rNull || a.k == nil) {
				continue
			}
			out = append(out, keyText(a.k)+" "+fmt.Sprint(a.v))
		}
	}
	if t == ops.JoinRight || t == ops.JoinFull {
		for j, b := range r {
			if !rmatched[j] {
				out = append(out, pair(nil, &b))
			}
		}
	}
	slices.Sort(out)
	return out
}

func joinText(t *testing.T, bs []arrow.RecordBatch) []string {
	t.Helper()
	var out []string
	for _, b := range bs {
		for i := range int(b.NumRows()) {
			s := ""
			for c := range int(b.NumCols()) {
				if c > 0 {
					s += " "
				}
				if b.Column(c).IsNull(i) {
					s += "NULL"
				} else {
					s += b.Column(c).ValueStr(i)
				}
			}
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// TestHashJoinAsNestedLoop: every join type, with and without a residual conjunct, over
// random keys with NULLs and duplicates, cut into batches of several sizes, equals the join
// computed pair by pair, with keys that match NULL to NULL too (NullSafe); the null-aware anti join is NOT IN's answer with and without a NULL
// on the right; a right side of no rows is joined too.
func TestHashJoinAsNestedLoop(t *testing.T) {
	rnd := rand.New(rand.NewPCG(18, 18))
	joined := arrow.NewSchema(append(slices.Clone(joinLeftSchema.Fields()), joinRightSchema.Fields()...), nil)
	i64 := &types.Int64Type{Nullability: types.NullabilityNullable}
	p := newPlannerOver(t, types.NamedStruct{Names: []string{"k", "v", "k2", "w"}, Struct: types.StructType{Nullability: types.NullabilityRequired, Types: []types.Type{i64, i64, i64, i64}}}, joined)
	lt := p.compile(p.fn(urnComparison, "lt", p.ref(1), p.ref(3)))[0][0]
	lk, err := ops.Column(joinLeftSchema, 0)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := ops.Column(joinRightSchema, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, sizes := range []struct{ l, r, keys int }{{300, 200, 20}, {50, 0, 5}, {0, 40, 5}, {9000, 30, 7}, {200, 200, 1}} {
		l := randomJoinRows(rnd, sizes.l, sizes.keys)
		r := randomJoinRows(rnd, sizes.r, sizes.keys)
		lb, rb := joinBatch(joinLeftSchema, l), joinBatch(joinRightSchema, r)
		for _, typ := range []ops.JoinType{ops.JoinInner, ops.JoinLeft, ops.JoinRight, ops.JoinFull, ops.JoinSemi, ops.JoinAnti} {
			for _, residual := range []bool{false, true} {
				for _, mode := range []struct{ nullAware, nullSafe bool }{{}, {nullAware: true}, {nullSafe: true}} {
					nullAware, nullSafe := mode.nullAware, mode.nullSafe
					if nullAware && (typ != ops.JoinAnti || residual) {
						continue
					}
					name := fmt.Sprintf("%d×%d/%s/residual=%v/nullaware=%v/nullsafe=%v", sizes.l, sizes.r, typ, residual, nullAware, nullSafe)
					spec := ops.JoinSpec{Type: typ, LeftKeys: []*ops.Expr{lk}, RightKeys: []*ops.Expr{rk}, NullAware: nullAware}
					if nullSafe {
						spec.NullSafe = []bool{true}
					}
					if residual {
						spec.Residual = []*ops.Expr{lt}
					}
					mem := newMem(t, 0)
					out, err := drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 777)), sourceOf(t, rb, chunks(rb, 33)), spec, mem))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got := joinText(t, out)
					releaseBatches(out)
					if want := nestedLoop(typ, l, r, residual, nullAware, nullSafe); !slices.Equal(got, want) {
						t.Errorf("%s: %d rows, the nested loop %d", name, len(got), len(want))
					}
				}
			}
		}
		lb.Release()
		rb.Release()
	}
}

// TestHashJoinSingleAndLimit: a single join (a scalar subquery) answers each left row's one
// match or NULL, and fails with PostgreSQL's cardinality error when a left row matches two
// right rows; a build side past the ledger's limit fails with its ErrMemoryLimit error.
func TestHashJoinSingleAndLimit(t *testing.T) {
	k := func(v int64) *int64 { return &v }
	l := []joinRow{{k(1), 10}, {k(2), 20}, {nil, 30}, {k(4), 40}}
	unique := []joinRow{{k(1), 5}, {k(4), 6}, {nil, 7}}
	lb, ub := joinBatch(joinLeftSchema, l), joinBatch(joinRightSchema, unique)
	defer lb.Release()
	defer ub.Release()
	lk, _ := ops.Column(joinLeftSchema, 0)
	rk, _ := ops.Column(joinRightSchema, 0)
	spec := ops.JoinSpec{Type: ops.JoinSingle, LeftKeys: []*ops.Expr{lk}, RightKeys: []*ops.Expr{rk}}
	out, err := drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 3)), sourceOf(t, ub, chunks(ub, 3)), spec, newMem(t, 0)))
	if err != nil {
		t.Fatal(err)
	}
	got := joinText(t, out)
	releaseBatches(out)
	if want := nestedLoop(ops.JoinSingle, l, unique, false, false, false); !slices.Equal(got, want) {
		t.Errorf("single join %v, want %v", got, want)
	}
	dup := append(slices.Clone(unique), joinRow{k(4), 8})
	db := joinBatch(joinRightSchema, dup)
	defer db.Release()
	out, err = drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 3)), sourceOf(t, db, chunks(db, 3)), spec, newMem(t, 0)))
	releaseBatches(out)
	var de *ops.DataError
	if !errors.As(err, &de) || de.Code != "21000" || de.Msg != "more than one row returned by a subquery used as an expression" {
		t.Errorf("a left row matching two rows: %v", err)
	}

	big := joinBatch(joinRightSchema, randomJoinRows(rand.New(rand.NewPCG(1, 2)), 50000, 1000))
	defer big.Release()
	spec.Type = ops.JoinInner
	out, err = drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 3)), sourceOf(t, big, chunks(big, 8192)), spec, newMem(t, 1<<20)))
	releaseBatches(out)
	if !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Errorf("a build side past the limit: %v, want ErrMemoryLimit", err)
	}
}
