package ops_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
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
// on the right; a right side of no rows is joined too, and one of one row that most left rows
// pair with.
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
	one := int64(0)
	for _, sizes := range []struct{ l, r, keys int }{{300, 200, 20}, {50, 0, 5}, {0, 40, 5}, {9000, 30, 7}, {200, 200, 1}, {9000, 1, 1}} {
		l := randomJoinRows(rnd, sizes.l, sizes.keys)
		r := randomJoinRows(rnd, sizes.r, sizes.keys)
		if sizes.r == 1 {
			r[0].k = &one // every left row of key 0 pairs with the one right row (joiner.rightColumn)
		}
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
					want := nestedLoop(typ, l, r, residual, nullAware, nullSafe)
					if !slices.Equal(got, want) {
						t.Errorf("%s: %d rows, the nested loop %d", name, len(got), len(want))
					}
					// Every output column but the left key flagged unused: the rows and their
					// keys are the same (the other columns' values are not specified).
					spec.Unused = make([]bool, ops.JoinSchema(joinLeftSchema, joinRightSchema, typ).NumFields())
					for c := 1; c < len(spec.Unused); c++ {
						spec.Unused[c] = true
					}
					out, err = drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 777)), sourceOf(t, rb, chunks(rb, 33)), spec, mem))
					if err != nil {
						t.Fatalf("%s, unused columns: %v", name, err)
					}
					got = keyOnly(joinText(t, out))
					releaseBatches(out)
					if want := keyOnly(want); !slices.Equal(got, want) {
						t.Errorf("%s, unused columns: %d rows, the nested loop %d", name, len(got), len(want))
					}
				}
			}
		}
		lb.Release()
		rb.Release()
	}
}

// keyOnly is rows (as joinText spells them) with every column but the first NULL, sorted.
func keyOnly(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := strings.Fields(r)
		for c := 1; c < len(f); c++ {
			f[c] = "NULL"
		}
		out[i] = strings.Join(f, " ")
	}
	slices.Sort(out)
	return out
}

// TestHashJoinStringKeys: keys of strings, one key and two (a string, then an integer, and the
// reverse: a key that is not its row's last is delimited by its length, so ("ab", "c") does not
// match ("a", "bc")), with NULLs and the empty string, equal the pairs matched in Go.
func TestHashJoinStringKeys(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "t", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	type row struct {
		s, t *string
		n    int64
	}
	str := func(v string) *string { return &v }
	rnd := rand.New(rand.NewPCG(19, 19))
	words := []string{"", "a", "ab", "b", "bc", "c", "abc"}
	rows := func(n int) []row {
		out := []row{{str("ab"), str("c"), 1}, {str("a"), str("bc"), 1}, {str(""), str(""), 0}}
		for range n {
			r := row{n: rnd.Int64N(3)}
			if rnd.IntN(8) > 0 {
				r.s = str(words[rnd.IntN(len(words))])
			}
			if rnd.IntN(8) > 0 {
				r.t = str(words[rnd.IntN(len(words))])
			}
			out = append(out, r)
		}
		return out
	}
	toBatch := func(rs []row) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		defer b.Release()
		for _, r := range rs {
			for c, v := range []*string{r.s, r.t} {
				if v == nil {
					b.Field(c).AppendNull()
				} else {
					b.Field(c).(*array.StringBuilder).Append(*v)
				}
			}
			b.Field(2).(*array.Int64Builder).Append(r.n)
		}
		return b.NewRecordBatch()
	}
	l, r := rows(400), rows(150)
	lb, rb := toBatch(l), toBatch(r)
	defer lb.Release()
	defer rb.Release()
	col := func(s *arrow.Schema, i int) *ops.Expr {
		e, err := ops.Column(s, i)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, keys := range [][]int{{0}, {1}, {0, 1}, {2, 0}, {0, 2, 1}} {
		var lk, rk []*ops.Expr
		for _, k := range keys {
			lk, rk = append(lk, col(schema, k)), append(rk, col(schema, k))
		}
		spec := ops.JoinSpec{Type: ops.JoinInner, LeftKeys: lk, RightKeys: rk}
		out, err := drain(t, ops.HashJoin(t.Context(), sourceOf(t, lb, chunks(lb, 100)), sourceOf(t, rb, chunks(rb, 40)), spec, newMem(t, 0)))
		if err != nil {
			t.Fatalf("keys %v: %v", keys, err)
		}
		got := len(joinText(t, out))
		releaseBatches(out)
		want := 0
		for _, a := range l {
			for _, b := range r {
				av := []*string{a.s, a.t, str(fmt.Sprint(a.n))}
				bv := []*string{b.s, b.t, str(fmt.Sprint(b.n))}
				match := true
				for _, k := range keys {
					match = match && av[k] != nil && bv[k] != nil && *av[k] == *bv[k]
				}
				if match {
					want++
				}
			}
		}
		if got != want || want == 0 {
			t.Errorf("keys %v: %d pairs, want %d", keys, got, want)
		}
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

// TestJoinTableProbesAsNestedLoop: a right side built once (BuildJoinTable) and probed by the
// parts of the left side at once, each on its own goroutine (HashJoinProbe), joins as the
// nested loop does for the types a shared table serves — inner, left, semi, anti (NOT IN's
// null-aware one too) — with and without a residual and with null-safe keys, over random keys
// with NULLs and duplicates, an empty left part and an empty right side; the table's claim is
// given back at Release; right and full joins and a probe of another schema are refused; a
// table past the ledger's limit is its error.
func TestJoinTableProbesAsNestedLoop(t *testing.T) {
	rnd := rand.New(rand.NewPCG(19, 19))
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
	for _, sizes := range []struct{ l, r, keys int }{{3000, 200, 20}, {50, 0, 5}, {0, 40, 5}, {9000, 30, 7}, {400, 200, 1}} {
		l := randomJoinRows(rnd, sizes.l, sizes.keys)
		r := randomJoinRows(rnd, sizes.r, sizes.keys)
		lb, rb := joinBatch(joinLeftSchema, l), joinBatch(joinRightSchema, r)
		// Four parts of the left rows (the second empty), as a routed read's fragments.
		cuts := []int{0, sizes.l / 3, sizes.l / 3, sizes.l * 2 / 3, sizes.l}
		for _, typ := range []ops.JoinType{ops.JoinInner, ops.JoinLeft, ops.JoinSemi, ops.JoinAnti} {
			for _, residual := range []bool{false, true} {
				for _, mode := range []struct{ nullAware, nullSafe bool }{{}, {nullAware: true}, {nullSafe: true}} {
					if mode.nullAware && (typ != ops.JoinAnti || residual) {
						continue
					}
					name := fmt.Sprintf("%d×%d/%s/residual=%v/nullaware=%v/nullsafe=%v", sizes.l, sizes.r, typ, residual, mode.nullAware, mode.nullSafe)
					spec := ops.JoinSpec{Type: typ, LeftKeys: []*ops.Expr{lk}, RightKeys: []*ops.Expr{rk}, NullAware: mode.nullAware}
					if mode.nullSafe {
						spec.NullSafe = []bool{true}
					}
					if residual {
						spec.Residual = []*ops.Expr{lt}
					}
					mem := newMem(t, 0)
					tab, err := ops.BuildJoinTable(t.Context(), joinLeftSchema, sourceOf(t, rb, chunks(rb, 33)), spec, mem)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if tab.Rows() != sizes.r {
						t.Errorf("%s: the table holds %d rows, want %d", name, tab.Rows(), sizes.r)
					}
					outs := make([][]arrow.RecordBatch, len(cuts)-1)
					errs := make([]error, len(cuts)-1)
					var wg sync.WaitGroup
					for i := range outs {
						part := lb.NewSlice(int64(cuts[i]), int64(cuts[i+1]))
						src := sourceOf(t, part, chunks(part, 777))
						part.Release()
						wg.Go(func() { outs[i], errs[i] = drain(t, ops.HashJoinProbe(t.Context(), src, tab, mem)) })
					}
					wg.Wait()
					var all []arrow.RecordBatch
					for i := range outs {
						if errs[i] != nil {
							t.Fatalf("%s: part %d: %v", name, i, errs[i])
						}
						all = append(all, outs[i]...)
					}
					got := joinText(t, all)
					releaseBatches(all)
					if want := nestedLoop(typ, l, r, residual, mode.nullAware, mode.nullSafe); !slices.Equal(got, want) {
						t.Errorf("%s: %d rows, the nested loop %d", name, len(got), len(want))
					}
					if sizes.r > 0 && mem.Claimed() == 0 {
						t.Errorf("%s: the table claims nothing", name)
					}
					tab.Release()
					if c := mem.Claimed(); c != 0 {
						t.Errorf("%s: %d bytes claimed after Release", name, c)
					}
				}
			}
		}
		lb.Release()
		rb.Release()
	}

	rb := joinBatch(joinRightSchema, randomJoinRows(rnd, 5000, 100))
	defer rb.Release()
	spec := ops.JoinSpec{Type: ops.JoinInner, LeftKeys: []*ops.Expr{lk}, RightKeys: []*ops.Expr{rk}}
	for _, typ := range []ops.JoinType{ops.JoinRight, ops.JoinFull} {
		s := spec
		s.Type = typ
		if _, err := ops.BuildJoinTable(t.Context(), joinLeftSchema, sourceOf(t, rb, chunks(rb, 1000)), s, newMem(t, 0)); err == nil {
			t.Errorf("a %s join's table was built", typ)
		}
	}
	if _, err := ops.BuildJoinTable(t.Context(), joinLeftSchema, sourceOf(t, rb, chunks(rb, 1000)), spec, newMem(t, 64<<10)); !errors.Is(err, ledger.ErrMemoryLimit) {
		t.Errorf("a table past the ledger's limit: %v, want ledger.ErrMemoryLimit", err)
	}
	mem := newMem(t, 0)
	tab, err := ops.BuildJoinTable(t.Context(), joinLeftSchema, sourceOf(t, rb, chunks(rb, 1000)), spec, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Release()
	other := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	nulls := array.MakeArrayOfNull(memory.DefaultAllocator, arrow.BinaryTypes.String, 3)
	ob := array.NewRecordBatch(other, []arrow.Array{nulls}, 3)
	nulls.Release()
	defer ob.Release()
	out, err := drain(t, ops.HashJoinProbe(t.Context(), sourceOf(t, ob, []int{3}), tab, mem))
	releaseBatches(out)
	if err == nil {
		t.Errorf("a probe of another schema than its table's: no error")
	}
}
