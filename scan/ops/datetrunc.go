package ops

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// date_trunc(unit, x) of URNPostgres, for the units of more than a year, which
// functions_datetime's round_calendar cannot express (its multiples of years count from the
// year, not from year 1):
//
//	date_trunc(DECADE | CENTURY | MILLENNIUM, x)   x (a timestamp of any unit, with or
//	                                               without a zone, read in UTC) moved back to
//	                                               January 1st, 00:00, of the first year of its
//	                                               decade, century or millennium, as
//	                                               PostgreSQL's timestamp_trunc computes it:
//	                                               decades start on years divisible by 10,
//	                                               centuries on 1, 101…, 1901, 2001,
//	                                               millennia on 1, 1001, 2001; before year 1
//	                                               (1 BC is year 0) on its mirror images
//	                                               (the century of 1 BC starts in 100 BC)
//
// The result has x's type; a start before the unit's earliest instant (1677-09-21 for
// nanoseconds) is PostgreSQL's "timestamp out of range" (22008) for the range this engine holds.
func init() { ownFunctions["date_trunc"] = dateTruncKernel }

// truncYear is PostgreSQL's timestamp_trunc of year y (astronomical: 0 is 1 BC) to the first
// year of its decade, century or millennium.
func truncYear(unit string, y int64) (int64, bool) {
	switch unit {
	case "DECADE":
		if y > 0 {
			return y / 10 * 10, true
		}
		return -((8 - (y - 1)) / 10) * 10, true
	case "CENTURY":
		if y > 0 {
			return (y+99)/100*100 - 99, true
		}
		return -((99-(y-1))/100)*100 + 1, true
	case "MILLENNIUM":
		if y > 0 {
			return (y+999)/1000*1000 - 999, true
		}
		return -((999-(y-1))/1000)*1000 + 1, true
	}
	return 0, false
}

func dateTruncKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.args[0] != nil || n.args[1] == nil || n.types[1].ID() != arrow.TIMESTAMP {
		return errors.New("takes a unit enumeration and a timestamp")
	}
	unit := n.enums[0]
	if _, ok := truncYear(unit, 1); !ok {
		return fmt.Errorf("unit %q is not supported", unit)
	}
	n.out = n.types[1]
	perDay := 86400 * (time1s / nanosPerTick(n.types[1].(*arrow.TimestampType).Unit))
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x, ok := args[1].(*array.Timestamp)
		if !ok {
			return nil, errors.New("argument is not a timestamp")
		}
		return floorTimestamps(x, mem, "date_trunc", func(t int64) (int64, bool) {
			y, _, _ := civilFromDays(floorDiv(t, perDay))
			y, _ = truncYear(unit, y)
			return mulChecked(daysFromCivil(y, 1, 1), perDay)
		})
	}
	return nil
}
