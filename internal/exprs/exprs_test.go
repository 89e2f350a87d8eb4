package exprs_test

import (
	"testing"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/exprs"
)

// TestSameVariadicCalls: calls of one function with more or fewer arguments differ, either
// way round, nested too; substrait-go's Equals says the first equals the second and panics on
// the reverse.
func TestSameVariadicCalls(t *testing.T) {
	reg := expr.NewEmptyExtensionRegistry(extensions.GetDefaultCollectionWithNoError())
	str := &types.StringType{Nullability: types.NullabilityNullable}
	ref := func(i int32) expr.Expression {
		r, err := expr.NewRootFieldRefFromType(expr.NewStructFieldRef(i), str)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	concat := func(args ...types.FuncArg) expr.Expression {
		f, err := expr.NewCustomScalarFunc(reg, extensions.NewScalarFuncVariant(extensions.ID{URN: "urn:test:functions", Name: "concat"}), str, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	ab, abc := concat(ref(0), ref(1)), concat(ref(0), ref(1), ref(2))
	for _, c := range []struct {
		a, b expr.Expression
		want bool
	}{
		{ab, ab, true}, {ab, concat(ref(0), ref(1)), true}, {ab, abc, false}, {abc, ab, false},
		{concat(ab, ref(2)), concat(abc, ref(2)), false}, {concat(abc, ref(2)), concat(ab, ref(2)), false},
		{ab, ref(0), false}, {nil, nil, true}, {ab, nil, false}, {nil, ab, false},
	} {
		if got := exprs.Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%v, %v) = %t, want %t", c.a, c.b, got, c.want)
		}
	}
}
