package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// castTargets are the types the casts of the comparisons go to: syncTypes and a few more the
// binder casts to (int16, uint16, decimal128 of another precision and scale, large binary).
var castTargets = append(append([]arrow.DataType(nil), syncTypes...),
	arrow.PrimitiveTypes.Uint16, &arrow.Decimal128Type{Precision: 10, Scale: 0}, arrow.BinaryTypes.LargeBinary)

// compareCast casts d to opts.ToType through castDatum and compute.CastDatum, each on a
// checked allocator, and compares them as compareCall does.
func compareCast(t *testing.T, what string, d compute.Datum, opts *compute.CastOptions) {
	t.Helper()
	mine, lib := memory.NewCheckedAllocator(memory.NewGoAllocator()), memory.NewCheckedAllocator(memory.NewGoAllocator())
	got, gerr := castDatum(compute.WithAllocator(context.Background(), mine), d, opts)
	want, werr := compute.CastDatum(compute.WithAllocator(context.Background(), lib), d, opts)
	sameOutcome(t, what, got, gerr, want, werr)
	releaseBoth(got, want)
	if m, l := mine.CurrentAlloc(), lib.CurrentAlloc(); m != l {
		t.Errorf("%s: %d bytes left allocated, the library's cast %d", what, m, l)
	}
}

// TestCastMatchesLibrary compares castDatum with compute.CastDatum from every type of
// syncTypes to every type of castTargets, with safe options and with every truncation and
// overflow allowed (the options castNode gives integer-to-float casts allow float
// truncation), over every argument shape of syncShapes: equal types, values, validity and
// errors word for word (overflow, truncation, text that does not parse, casts arrow-go does not
// implement), none handed to the library. Text that parses as numbers and dates is cast too.
func TestCastMatchesLibrary(t *testing.T) {
	if !castFunctionOK() {
		t.Fatal("arrow-go's cast functions are not where synccast.go looks for them: every cast goes to the library")
	}
	r := rand.New(rand.NewPCG(18, 19))
	mem := memory.NewGoAllocator()
	before := syncFallbacks.Load()
	for _, from := range syncTypes {
		for _, s := range syncShapes {
			d := syncArg(r, mem, from, s)
			for _, to := range castTargets {
				safe := compute.SafeCastOptions(to)
				compareCast(t, fmt.Sprintf("%s %s to %s, safe", from, s.name, to), d, safe)
				loose := compute.UnsafeCastOptions(to)
				compareCast(t, fmt.Sprintf("%s %s to %s, unsafe", from, s.name, to), d, loose)
				float := compute.SafeCastOptions(to)
				float.AllowFloatTruncate = true
				compareCast(t, fmt.Sprintf("%s %s to %s, float truncation allowed", from, s.name, to), d, float)
			}
			d.Release()
		}
	}
	// Text that parses: integers (one out of int8's range), decimals, doubles, dates and
	// timestamps, and one that does not, sliced and not.
	for _, c := range []struct {
		json string
		to   []arrow.DataType
	}{
		{`["1", "-7", null, "120", "300"]`, []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
			arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Float64, &arrow.Decimal128Type{Precision: 10, Scale: 0}}},
		{`["1.25", "-7.5", null, "1e3"]`, []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
			&arrow.Decimal128Type{Precision: 20, Scale: 2}, arrow.PrimitiveTypes.Int32}},
		{`["2001-01-01", null, "2001-07-01T12:30:00Z", "not a date"]`, []arrow.DataType{arrow.FixedWidthTypes.Date32,
			&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, &arrow.TimestampType{Unit: arrow.Microsecond}}},
	} {
		a, _, err := array.FromJSON(mem, arrow.BinaryTypes.String, strings.NewReader(c.json))
		if err != nil {
			t.Fatal(err)
		}
		sl := array.NewSlice(a, 1, int64(a.Len()))
		for _, to := range c.to {
			compareCast(t, fmt.Sprintf("%s to %s", c.json, to), compute.NewDatumWithoutOwning(a), compute.SafeCastOptions(to))
			compareCast(t, fmt.Sprintf("%s[1:] to %s", c.json, to), compute.NewDatumWithoutOwning(sl), compute.SafeCastOptions(to))
		}
		sl.Release()
		a.Release()
	}
	if n := syncFallbacks.Load() - before; n != 0 {
		t.Errorf("%d casts went to the library", n)
	}
	// What goes to the library, with its answers: a view type, no target type.
	a := randArray(r, mem, arrow.BinaryTypes.String, 20, 10)
	defer a.Release()
	compareCast(t, "utf8 to utf8_view", compute.NewDatumWithoutOwning(a), compute.SafeCastOptions(arrow.BinaryTypes.StringView))
	compareCast(t, "no target type", compute.NewDatumWithoutOwning(a), &compute.CastOptions{})
	if n := syncFallbacks.Load() - before; n != 2 {
		t.Errorf("%d casts went to the library, want the 2 of view and no target type", n)
	}
}

// TestCastStartsNoGoroutine: 200 casts of text to integers and of integers to decimals through
// castDatum start no goroutine (arrow-go's start one each, checked too so that the test can
// fail); a few are allowed for the test binary's own background work.
func TestCastStartsNoGoroutine(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(3, 4))
	x := randArray(r, mem, arrow.PrimitiveTypes.Int32, 1000, 10)
	defer x.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	checkNoGoroutines(t, func(lib bool) { castTwice(t, ctx, lib, x) })
}

// castTwice casts x (integers) to text and the text back to int64, then x to decimal128(20,2),
// through arrow-go's calls (lib) or castDatum, and releases the results.
func castTwice(t *testing.T, ctx context.Context, lib bool, x arrow.Array) {
	t.Helper()
	cast := castDatum
	if lib {
		cast = compute.CastDatum
	}
	text, err := cast(ctx, compute.NewDatumWithoutOwning(x), compute.SafeCastOptions(arrow.BinaryTypes.String))
	if err != nil {
		t.Fatal(err)
	}
	defer text.Release()
	back, err := cast(ctx, text, compute.SafeCastOptions(arrow.PrimitiveTypes.Int64))
	if err != nil {
		t.Fatal(err)
	}
	back.Release()
	dec, err := cast(ctx, compute.NewDatumWithoutOwning(x), compute.SafeCastOptions(&arrow.Decimal128Type{Precision: 20, Scale: 2}))
	if err != nil {
		t.Fatal(err)
	}
	dec.Release()
}
