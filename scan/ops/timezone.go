package ops

import (
	"errors"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/pgzone"
)

// timezone(zone, ts) is PostgreSQL's ts AT TIME ZONE zone (and its function form), with the
// zone an enumeration argument holding an internal/pgzone Spec written by the SQL binder:
//
//	timestamp[u, <zone>] → timestamp[u]        timestamp with time zone AT TIME ZONE zone:
//	                                           the wall-clock time of the instant in zone
//	                                           (timestamp without time zone)
//	timestamp[u]         → timestamp[u, UTC]   timestamp without time zone AT TIME ZONE zone:
//	                                           the instant whose wall-clock time in zone it is;
//	                                           a time in a spring-forward gap takes the offset
//	                                           before the transition, one in a fall-back
//	                                           overlap the offset after it, as PostgreSQL does
//	timezone(zone, wall, ref)                  the instant of wall-clock time wall (timestamp[u])
//	                                           at the offset zone has at the instant ref
//	                                           (timestamp[u, UTC]): PostgreSQL's date_trunc in
//	                                           a zone to hours and finer keeps the offset of
//	                                           the instant truncated
//
// A wall-clock time is stored as the instant at which a UTC clock shows it. A result outside
// the unit's int64 range is PostgreSQL's "timestamp out of range" (22008).
func init() { ownFunctions["timezone"] = timezoneKernel }

var errTimestampRange = &DataError{Code: "22008", Msg: "timestamp out of range"}

func timezoneKernel(n *fnNode) error {
	if err := argCount(n, 2, 3); err != nil {
		return err
	}
	if n.args[0] != nil || n.args[1] == nil || n.types[1].ID() != arrow.TIMESTAMP {
		return errors.New("takes a zone enumeration and a timestamp")
	}
	withRef := len(n.args) == 3
	if withRef && (n.args[2] == nil || n.types[2].ID() != arrow.TIMESTAMP || n.types[2].(*arrow.TimestampType).TimeZone == "" ||
		n.types[1].(*arrow.TimestampType).TimeZone != "" || n.types[2].(*arrow.TimestampType).Unit != n.types[1].(*arrow.TimestampType).Unit) {
		return errors.New("takes a wall-clock time and a reference instant of one unit")
	}
	zone, err := pgzone.ParseSpec(n.enums[0])
	if err != nil {
		return err
	}
	in := n.types[1].(*arrow.TimestampType)
	toWall := in.TimeZone != ""
	out := &arrow.TimestampType{Unit: in.Unit}
	if !toWall {
		out.TimeZone = "UTC"
	}
	n.out = out
	perSec := int64(time1s / nanosPerTick(in.Unit))
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		ts, ok := args[1].(*array.Timestamp)
		if !ok {
			return nil, errors.New("argument is not a timestamp")
		}
		var ref *array.Timestamp
		if withRef {
			if ref, ok = args[2].(*array.Timestamp); !ok {
				return nil, errors.New("argument is not a timestamp")
			}
		}
		return mapRows[arrow.Timestamp](array.NewTimestampBuilder(mem, out), rows, args, func(i int) (arrow.Timestamp, bool, error) {
			v := int64(ts.Value(i))
			sec := floorDiv(v, perSec)
			var off int64
			switch {
			case toWall:
				off = zone.OffsetAt(sec)
			case withRef:
				off = -zone.OffsetAt(floorDiv(int64(ref.Value(i)), perSec))
			default:
				off = -zone.OffsetOfWall(sec)
			}
			d, ok := mulChecked(off, perSec)
			if !ok {
				return 0, false, errTimestampRange
			}
			r := v + d
			if (d > 0 && r < v) || (d < 0 && r > v) {
				return 0, false, errTimestampRange
			}
			return arrow.Timestamp(r), true, nil
		})
	}
	return nil
}

const time1s = int64(1e9)
