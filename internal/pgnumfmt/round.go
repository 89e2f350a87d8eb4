package pgnumfmt

import "github.com/cockroachdb/apd/v3"

// Quantize sets q to d rounded to exponent exp (-exp digits after the point) by
// ctx.Rounding, as ctx.Quantize does, and returns its error (the result wider than ctx's
// precision). Unlike apd v3's Quantize it is right for the directed rounders too: apd rounds
// a value all of whose digits lie more than one place below 10^exp (|d| < 10^(exp-1), as
// -0.05 to a whole number) to zero whatever the rounder, so floor(-0.05) came out 0 and
// ceil(0.05) 0 where PostgreSQL's numeric_floor and numeric_ceil answer -1 and 1. Here a
// floor above d, a ceiling below it, or a rounding away from zero nearer to zero than d is
// moved one unit of 10^exp, which is the directed result; RoundHalfUp, RoundHalfEven and
// RoundDown are apd's answers unchanged (those round such a value to zero rightly).
// q and d may be the same decimal.
func Quantize(ctx *apd.Context, q, d *apd.Decimal, exp int32) error {
	var orig apd.Decimal
	orig.Set(d)
	if _, err := ctx.Quantize(q, d, exp); err != nil {
		return err
	}
	var step int64
	switch ctx.Rounding {
	case apd.RoundFloor:
		if q.Cmp(&orig) > 0 {
			step = -1
		}
	case apd.RoundCeiling:
		if q.Cmp(&orig) < 0 {
			step = 1
		}
	case apd.RoundUp:
		var aq, ad apd.Decimal
		aq.Abs(q)
		ad.Abs(&orig)
		if aq.Cmp(&ad) < 0 {
			step = 1
			if orig.Negative {
				step = -1
			}
		}
	}
	if step == 0 {
		return nil
	}
	_, err := ctx.Add(q, q, apd.New(step, exp))
	return err
}
