package ops

import (
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// slowTextNumeric is numeric_cast's general path for text: numeric_in's syntax (a regexp),
// apd's rounding and precision check, math/big's conversion.
func slowTextNumeric(s string, rd rounding) (decimal128.Num, error) {
	d, err := parseNumeric(s)
	if err == nil {
		d, err = rd.apply(d)
	}
	if err != nil {
		return decimal128.Num{}, err
	}
	return toNum(d, rd.s)
}

// FuzzNumericFast: wherever the fast paths of numfast.go answer, they answer as the general
// path does: text and integers cast to numeric(prec, places) under every rounding mode (the
// same value, or the same error), and + - * and comparisons of decimal128 values of any
// scales (the same value as apd's exact arithmetic).
func FuzzNumericFast(f *testing.F) {
	for _, s := range []string{"1.50", " -3.5e1 ", ".5", "5.", "-0", "+0.010", "\t42\n", "9999999999999999999", "1.2.3", "NaN", "١٢", "00012.30", "12345678901234567890"} {
		f.Add(s, int8(2), uint8(10), uint8(0), int64(-7), uint64(123), int64(0), uint64(45), uint8(3), uint8(1))
	}
	f.Add("1", int8(18), uint8(0), uint8(3), int64(-1), uint64(1), int64(5), uint64(0), uint8(38), uint8(0))
	f.Add("100", int8(0), uint8(3), uint8(1), int64(0), uint64(1<<63), int64(0), uint64(99), uint8(0), uint8(37))
	modes := []string{"ROUND", "TRUNC", "CEIL", "FLOOR"}
	f.Fuzz(func(t *testing.T, s string, places int8, prec, mode uint8, hx int64, lx uint64, hy int64, ly uint64, sa, sb uint8) {
		fuzzcount.Add()
		rd := rounding{mode: roundModes[modes[int(mode)%4]], places: int32(places) % 40, prec: int32(prec) % 39}
		rd.s = max(rd.places, 0)
		v1, ok1, err1 := fastTextNumeric(s, rd)
		if v, ok, err := fastTextNumeric([]byte(s), rd); v != v1 || ok != ok1 || err != err1 {
			t.Fatalf("%q: read as a string %v %v %v, as bytes %v %v %v", s, v1.BigInt(), ok1, err1, v.BigInt(), ok, err)
		}
		if v, ok, err := fastTextNumeric([]byte(s), rd); ok {
			want, werr := slowTextNumeric(s, rd)
			if err != werr || (err == nil && v != want) {
				t.Fatalf("%q as numeric(%d,%d): fast %v %v, general %v %v", s, rd.prec, rd.places, v.BigInt(), err, want.BigInt(), werr)
			}
		}
		if v, ok, err := fastIntNumeric(hx, rd); ok {
			d, werr := rd.apply(apd.New(hx, 0))
			var want decimal128.Num
			if werr == nil {
				want, werr = toNum(d, rd.s)
			}
			if err != werr || (err == nil && v != want) {
				t.Fatalf("%d as numeric(%d,%d): fast %v %v, general %v %v", hx, rd.prec, rd.places, v.BigInt(), err, want.BigInt(), werr)
			}
		}
		x, y := decimal128.New(hx, lx), decimal128.New(hy, ly)
		if !x.FitsInPrecision(numericDigits) || !y.FitsInPrecision(numericDigits) {
			return
		}
		as, bs := int32(sa)%(numericDigits+1), int32(sb)%(numericDigits+1)
		var dx, dy apd.Decimal
		dx.SetFinite(0, -as)
		dx.Coeff.SetMathBigInt(x.BigInt())
		dx.Negative = dx.Coeff.Sign() < 0
		dx.Coeff.Abs(&dx.Coeff)
		dy.SetFinite(0, -bs)
		dy.Coeff.SetMathBigInt(y.BigInt())
		dy.Negative = dy.Coeff.Sign() < 0
		dy.Coeff.Abs(&dy.Coeff)
		if c, ok := fastCmp(x, y, as, bs); ok && c != dx.Cmp(&dy) {
			t.Fatalf("cmp %v/%d %v/%d: fast %d, apd %d", x.BigInt(), as, y.BigInt(), bs, c, dx.Cmp(&dy))
		}
		for op, f := range map[string]func(d, x, y *apd.Decimal) (apd.Condition, error){"add": numericCtx.Add, "subtract": numericCtx.Sub, "multiply": numericCtx.Mul} {
			s := max(as, bs)
			if op == "multiply" {
				s = as + bs
			}
			if s > numericDigits {
				continue
			}
			v, ok := fastArith(op, x, y, as, bs, s)
			if !ok {
				continue
			}
			var d apd.Decimal
			if _, err := f(&d, &dx, &dy); err != nil {
				t.Fatalf("%s: apd %v", op, err)
			}
			want, err := toNum(&d, s)
			if err != nil || v != want {
				t.Fatalf("%s %v/%d %v/%d: fast %v, apd %v (%v)", op, x.BigInt(), as, y.BigInt(), bs, v.BigInt(), want.BigInt(), err)
			}
		}
	})
}

// BenchmarkNumericTextCast: one 4,096-row batch of integer texts (distances) cast to
// numeric(10,0), the fast path beside the general path it replaces.
func BenchmarkNumericTextCast(b *testing.B) {
	texts := make([][]byte, 4096)
	for i := range texts {
		texts[i] = []byte(strconv.Itoa(31 + i*7%4900))
	}
	rd := rounding{mode: apd.RoundHalfUp, places: 0, prec: 10}
	b.Run("fast", func(b *testing.B) {
		for range b.N {
			for _, t := range texts {
				if _, ok, err := fastTextNumeric(t, rd); !ok || err != nil {
					b.Fatal("not fast")
				}
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		for range b.N {
			for _, t := range texts {
				if _, err := slowTextNumeric(string(t), rd); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkNumericCastArith: (text)::numeric(10,0) * 1.0375 over one 8,192-row batch of
// integer texts (distances), through mapRows as numeric_cast and numeric_arith run it: the
// per-row null test and builder beside the fast paths (numeric_cast's four arguments,
// numeric_arith's two).
func BenchmarkNumericCastArith(b *testing.B) {
	const n = 8192
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	for i := range n {
		sb.Append(strconv.Itoa(31 + i*7%4900))
	}
	texts := sb.NewArray()
	defer texts.Release()
	// numeric_cast's other arguments (precision, scale, rounding), constants of n rows.
	ib := array.NewInt32Builder(mem)
	for range n {
		ib.Append(10)
	}
	konst := ib.NewArray()
	defer konst.Release()
	factor := decimal128.FromU64(10375)
	rd := rounding{mode: apd.RoundHalfUp, places: 0, prec: 10}
	tx := texts.(*array.String)
	b.ReportAllocs()
	for b.Loop() {
		casted, err := mapRows[decimal128.Num](array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0}), n, []arrow.Array{konst, konst, konst, texts}, func(i int) (decimal128.Num, bool, error) {
			return fastTextNumeric(tx.Value(i), rd)
		})
		if err != nil {
			b.Fatal(err)
		}
		c := casted.(*array.Decimal128)
		prod, err := mapRows[decimal128.Num](array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 4}), n, []arrow.Array{c, c}, func(i int) (decimal128.Num, bool, error) {
			v, ok := fastArith("multiply", c.Value(i), factor, 0, 4, 4)
			return v, ok, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		casted.Release()
		prod.Release()
	}
}

// BenchmarkNumericArithArray: numeric(10,0) * 1.0375 (the constant broadcast to a column, as
// the kernel receives it) over one 8,192-row batch without NULLs, the kernel's vector path
// (path=vector: fastArithArray, one loop into one buffer) beside the per-row path it takes
// otherwise (path=mapRows: the null test, closure and builder per row, fastArith inside).
func BenchmarkNumericArithArray(b *testing.B) {
	const n = 8192
	mem := memory.NewGoAllocator()
	xb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	fb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 4})
	for i := range n {
		xb.Append(decimal128.FromI64(int64(31 + i*7%4900)))
		fb.Append(decimal128.FromU64(10375))
	}
	x, f := xb.NewDecimal128Array(), fb.NewDecimal128Array()
	xb.Release()
	fb.Release()
	defer x.Release()
	defer f.Release()
	b.Run("path=vector", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := fastArithArray(mem, "multiply", x, f, 0, 4, 4)
			if out == nil {
				b.Fatal("not decided")
			}
			out.Release()
		}
	})
	b.Run("path=mapRows", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := mapRows[decimal128.Num](array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 4}), n, []arrow.Array{x, f}, func(i int) (decimal128.Num, bool, error) {
				v, ok := fastArith("multiply", x.Value(i), f.Value(i), 0, 4, 4)
				return v, ok, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			out.Release()
		}
	})
}

// TestFastArithArray: the vector path answers each row as fastArith does, for every op and
// mixed scales; a batch with a row fastArith leaves to the general path (a factor of 10^19 or
// more, a modulus) or with a NULL is nil, so that numeric_arith computes it row by row.
func TestFastArithArray(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	column := func(scale int32, vals ...decimal128.Num) *array.Decimal128 {
		b := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: scale})
		defer b.Release()
		b.AppendValues(vals, nil)
		return b.NewDecimal128Array()
	}
	big := decimal128.FromU64(10_000_000_000_000_000_000) // 10^19
	xs := []decimal128.Num{decimal128.FromI64(599), decimal128.FromI64(-12345), decimal128.FromI64(0), big.Sub(decimal128.FromI64(1)), big.Sub(decimal128.FromI64(1)).Negate()}
	ys := []decimal128.Num{decimal128.FromI64(10375), decimal128.FromI64(-1), decimal128.FromI64(7), decimal128.FromI64(99), decimal128.FromI64(-3)}
	x, y := column(0, xs...), column(4, ys...)
	defer x.Release()
	defer y.Release()
	for _, op := range []string{"add", "subtract", "multiply"} {
		s := int32(4)
		out := fastArithArray(mem, op, x, y, 0, 4, s)
		if out == nil {
			t.Fatalf("%s: not decided", op)
		}
		if !arrow.TypeEqual(out.DataType(), numericOut(s)) || out.Len() != len(xs) || out.NullN() != 0 {
			t.Fatalf("%s: %s of %d rows, %d NULL", op, out.DataType(), out.Len(), out.NullN())
		}
		for i := range xs {
			want, ok := fastArith(op, xs[i], ys[i], 0, 4, s)
			if got := out.(*array.Decimal128).Value(i); !ok || got != want {
				t.Errorf("%s row %d: %v, fastArith %v (%t)", op, i, got, want, ok)
			}
		}
		out.Release()
	}
	if out := fastArithArray(mem, "modulus", x, y, 0, 4, 4); out != nil {
		t.Error("modulus decided")
	}
	wide := column(0, decimal128.FromI64(2), big)
	defer wide.Release()
	two := column(0, decimal128.FromI64(3), decimal128.FromI64(3))
	defer two.Release()
	if out := fastArithArray(mem, "multiply", wide, two, 0, 0, 0); out != nil {
		t.Error("a factor of 10^19 decided")
	}
	nb := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 38, Scale: 0})
	nb.AppendNull()
	nb.Append(decimal128.FromI64(1))
	nulls := nb.NewDecimal128Array()
	nb.Release()
	defer nulls.Release()
	if out := fastArithArray(mem, "add", nulls, two, 0, 0, 0); out != nil {
		t.Error("a NULL decided")
	}
}
