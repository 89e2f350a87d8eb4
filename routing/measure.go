package routing

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// MeasureFunc is the function of a measure a store answers per bucket without reading rows
// (the aggregate-pushdown seed: count(*), then min/max of the event time).
type MeasureFunc uint8

const (
	// MeasureCount is count(*): the records of the bucket inside the range (int64).
	MeasureCount MeasureFunc = iota + 1
	// MeasureMin is the least value of the measure's column (for the event time:
	// timestamp[ns, UTC], NULL without records).
	MeasureMin
	// MeasureMax is the greatest value of the measure's column (as MeasureMin).
	MeasureMax
)

// TimeColumn is the name of a routed table's event-time column (TableSchema), the one column
// min and max measures are answered for.
const TimeColumn = "timestamp"

// Measure is one aggregate a store answers for a bucket without reading rows: a function over
// a column ("" for count(*)). Its partial-state column in a PartialAggregateSchema is Field.
// A plain value. Adding a pushed-down aggregate is one MeasureFunc, its Validate case, its
// Field, and one statement or statistics rule per store (see the pushdown package).
type Measure struct {
	Func   MeasureFunc
	Column string
}

// The measures the stores answer today.
var (
	CountStar = Measure{Func: MeasureCount}
	MinTime   = Measure{Func: MeasureMin, Column: TimeColumn}
	MaxTime   = Measure{Func: MeasureMax, Column: TimeColumn}
)

// ErrUnsupportedMeasure is returned for a measure no store answers (another function, or min
// and max of a column other than the event time).
var ErrUnsupportedMeasure = errors.New("routing: no store answers this measure without reading rows")

// Validate returns ErrUnsupportedMeasure unless m is count(*), or min or max of the event
// time.
func (m Measure) Validate() error {
	switch {
	case m.Func == MeasureCount && m.Column == "",
		(m.Func == MeasureMin || m.Func == MeasureMax) && m.Column == TimeColumn:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnsupportedMeasure, m)
}

// String spells m as SQL does: count(*), min(timestamp), max(timestamp).
func (m Measure) String() string {
	col := m.Column
	if col == "" {
		col = "*"
	}
	switch m.Func {
	case MeasureCount:
		return "count(" + col + ")"
	case MeasureMin:
		return "min(" + col + ")"
	case MeasureMax:
		return "max(" + col + ")"
	}
	return fmt.Sprintf("measure%d(%s)", m.Func, col)
}

// Field is m's partial-state column: "count" int64 (never NULL), or "min"/"max" of the event
// time, timestamp[ns, UTC], NULL where no record was found.
func (m Measure) Field() arrow.Field {
	switch m.Func {
	case MeasureCount:
		return arrow.Field{Name: "count", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	case MeasureMin:
		return arrow.Field{Name: "min", Type: TimestampType, Nullable: true}
	}
	return arrow.Field{Name: "max", Type: TimestampType, Nullable: true}
}
