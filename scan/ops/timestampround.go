package ops

import (
	"errors"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// timestamp_round(p, x) of URNPostgres, PostgreSQL's cast to timestamp(p) and timestamptz(p)
// (timestamp_scale, timestamptz_scale):
//
//	timestamp_round(p, x)   x (a timestamp of any unit, with or without a zone) rounded to p
//	                        fractional digits of a second (p an enumeration "0" to "5"), half
//	                        a unit away from PostgreSQL's epoch 2000-01-01 rounding away from it
//	                        (AdjustTimestampForTypmod: 1999-12-31 23:59:59.5 is 23:59:59 at
//	                        p = 0, 2000-01-01 00:00:00.5 is 00:00:01)
//
// The result has x's type; one past the unit's range is "timestamp out of range" (22008).
func init() { ownFunctions["timestamp_round"] = timestampRoundKernel }

func timestampRoundKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.args[0] != nil || n.args[1] == nil || n.types[1].ID() != arrow.TIMESTAMP {
		return errors.New("takes a precision enumeration and a timestamp")
	}
	p, err := strconv.Atoi(n.enums[0])
	if err != nil || p < 0 || p > 5 {
		return errors.New("precision must be 0 to 5")
	}
	n.out = n.types[1]
	perTick := nanosPerTick(n.types[1].(*arrow.TimestampType).Unit)
	scale := int64(math.Pow10(9-p)) / perTick // ticks per unit of the precision
	if scale <= 1 {
		// The unit holds no digit finer than p: every value stays.
		n.run = func(_ memory.Allocator, _ int, args []arrow.Array) (arrow.Array, error) {
			args[1].Retain()
			return args[1], nil
		}
		return nil
	}
	epoch := 946684800 * (time1s / perTick) // 2000-01-01 00:00 UTC in ticks
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, ok := args[1].(*array.Timestamp)
		if !ok {
			return nil, errors.New("argument is not a timestamp")
		}
		return floorTimestamps(x, mem, "timestamp_round", func(t int64) (int64, bool) {
			// epoch is a whole number of seconds, so a multiple of scale: rounding t - epoch
			// to a multiple of scale is rounding t, ties going away from epoch.
			rem := t % scale
			if rem < 0 {
				rem += scale
			}
			if rem == 0 {
				return t, true
			}
			if rem*2 < scale || rem*2 == scale && t < epoch {
				down := t - rem
				return down, down <= t
			}
			up := t + (scale - rem)
			return up, up >= t
		})
	}
	return nil
}
