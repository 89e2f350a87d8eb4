package ops

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestIntOp: intOp's sums, differences, quotients and remainders of signed integers against
// math/big's exact ones (Quo and Rem truncate toward zero, as int4div and int4mod do): a
// result outside the width is "… out of range" (22003), a zero divisor "division by zero"
// (22012); the smallest value divided by -1 is out of range and its remainder by -1 is 0, as
// PostgreSQL answers them. Every int8 pair, and the boundaries and random values of the wider
// types.
func TestIntOp(t *testing.T) {
	var pairs8 [][2]int8
	for x := math.MinInt8; x <= math.MaxInt8; x++ {
		for y := math.MinInt8; y <= math.MaxInt8; y++ {
			pairs8 = append(pairs8, [2]int8{int8(x), int8(y)})
		}
	}
	checkIntOp(t, arrow.PrimitiveTypes.Int8, pairs8)
	r := rand.New(rand.NewPCG(18, 3))
	checkIntOp(t, arrow.PrimitiveTypes.Int16, intPairs[int16](r, math.MinInt16, math.MaxInt16))
	checkIntOp(t, arrow.PrimitiveTypes.Int32, intPairs[int32](r, math.MinInt32, math.MaxInt32))
	checkIntOp(t, arrow.PrimitiveTypes.Int64, intPairs[int64](r, math.MinInt64, math.MaxInt64))
}

// intPairs is every pair of a type's boundary values (lo, hi, their neighbours, 0, ±1, ±2)
// and 2,000 random pairs.
func intPairs[T signed](r *rand.Rand, lo, hi T) [][2]T {
	edge := []T{lo, lo + 1, lo / 2, -2, -1, 0, 1, 2, hi / 2, hi - 1, hi}
	var out [][2]T
	for _, x := range edge {
		for _, y := range edge {
			out = append(out, [2]T{x, y})
		}
	}
	for range 2000 {
		out = append(out, [2]T{T(r.Uint64()), T(r.Uint64() >> r.IntN(64))})
	}
	return out
}

func checkIntOp[T signed](t *testing.T, typ arrow.DataType, pairs [][2]T) {
	t.Helper()
	name := map[arrow.Type]string{arrow.INT8: "smallint", arrow.INT16: "smallint", arrow.INT32: "integer", arrow.INT64: "bigint"}[typ.ID()]
	lo := new(big.Int).Lsh(big.NewInt(-1), uint(typ.(arrow.FixedWidthDataType).BitWidth()-1))
	hi := new(big.Int).Sub(new(big.Int).Neg(lo), big.NewInt(1))
	for _, p := range pairs {
		x, y := big.NewInt(int64(p[0])), big.NewInt(int64(p[1]))
		for _, op := range []string{"add", "subtract", "divide", "modulus"} {
			got, err := intOp(intOps[op], typ, p[0], p[1])
			want := new(big.Int)
			wantErr := ""
			switch {
			case op == "add":
				want.Add(x, y)
			case op == "subtract":
				want.Sub(x, y)
			case y.Sign() == 0:
				wantErr = "division by zero"
			case op == "divide":
				want.Quo(x, y)
			default:
				want.Rem(x, y)
			}
			if wantErr == "" && (want.Cmp(lo) < 0 || want.Cmp(hi) > 0) {
				wantErr = name + " out of range"
			}
			var de *DataError
			switch {
			case wantErr != "":
				if !errors.As(err, &de) || de.Msg != wantErr || de.Code != map[bool]string{true: "22012", false: "22003"}[y.Sign() == 0 && op != "add" && op != "subtract"] {
					t.Fatalf("%s %s(%d, %d) = %d, %v; want %q", typ, op, p[0], p[1], got, err, wantErr)
				}
			case err != nil || int64(got) != want.Int64():
				t.Fatalf("%s %s(%d, %d) = %d, %v; want %s", typ, op, p[0], p[1], got, err, want)
			}
		}
	}
}
