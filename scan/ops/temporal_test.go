package ops_test

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// tsTable is a one-column table "ts" of timestamps in unit, with or without the UTC zone.
type tsTable struct {
	name  string
	unit  arrow.TimeUnit
	zoned bool
}

func (tt tsTable) planner(t testing.TB) *planner {
	prec := map[arrow.TimeUnit]types.TimePrecision{arrow.Nanosecond: types.PrecisionNanoSeconds,
		arrow.Microsecond: types.PrecisionMicroSeconds, arrow.Millisecond: types.PrecisionMilliSeconds}[tt.unit]
	pt := types.PrecisionTimestampType{Precision: prec, Nullability: nullable}
	var st types.Type = &pt
	at := &arrow.TimestampType{Unit: tt.unit}
	if tt.zoned {
		st = &types.PrecisionTimestampTzType{PrecisionTimestampType: pt}
		at.TimeZone = "UTC"
	}
	base := types.NamedStruct{Names: []string{"ts"}, Struct: types.StructType{Nullability: required, Types: []types.Type{st}}}
	return newPlannerOver(t, base, arrow.NewSchema([]arrow.Field{{Name: "ts", Type: at, Nullable: true}}, nil))
}

// batch returns the timestamps of testdata/rows.json floored to the table's unit.
func (tt tsTable) batch(t testing.TB, p *planner, mem memory.Allocator) arrow.RecordBatch {
	var rows []jsonRow
	readJSON(t, "rows.json", &rows)
	b := array.NewTimestampBuilder(mem, p.schema.Field(0).Type.(*arrow.TimestampType))
	defer b.Release()
	per := map[arrow.TimeUnit]int64{arrow.Nanosecond: 1, arrow.Microsecond: 1e3, arrow.Millisecond: 1e6}[tt.unit]
	for _, r := range rows {
		if r.TS == "" {
			b.AppendNull()
			continue
		}
		b.Append(arrow.Timestamp(floorDivTest(mustInt(t, r.TS), per)))
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(p.schema, []arrow.Array{a}, int64(a.Len()))
}

func floorDivTest(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// calendar builds round_calendar(x, FLOOR, unit, origin, multiple[, 'UTC']).
func (p *planner) calendar(x expr.Expression, unit, origin string, multiple int64, zoned bool) expr.Expression {
	args := []types.FuncArg{x, types.Enum("FLOOR"), types.Enum(unit), types.Enum(origin), expr.NewPrimitiveLiteral(multiple, false)}
	if zoned {
		args = append(args, expr.NewPrimitiveLiteral("UTC", false))
	}
	return p.fn(urnDatetime, "round_calendar", args...)
}

// temporal builds round_temporal(x, FLOOR, unit, multiple[, 'UTC'], origin).
func (p *planner) temporal(x expr.Expression, unit string, multiple int64, origin expr.Expression, zoned bool) expr.Expression {
	args := []types.FuncArg{x, types.Enum("FLOOR"), types.Enum(unit), expr.NewPrimitiveLiteral(multiple, false)}
	if zoned {
		args = append(args, expr.NewPrimitiveLiteral("UTC", false))
	}
	return p.fn(urnDatetime, "round_temporal", append(args, origin)...)
}

// TestTemporalEncodings evaluates the golden date_trunc and date_bin cases in the other
// encodings the front end accepts (substrait/groupby.go), over nanosecond and microsecond
// columns with and without the UTC zone, against DuckDB's answers.
func TestTemporalEncodings(t *testing.T) {
	ctx := context.Background()
	golden := map[string]goldenCase{}
	for _, c := range goldenCases(t, "project") {
		golden[c.Name] = c
	}
	type enc struct {
		golden string
		build  func(p *planner, x expr.Expression, zoned bool, origin expr.Expression) expr.Expression
	}
	cal := func(g, unit, origin string, m int64) enc {
		return enc{g, func(p *planner, x expr.Expression, zoned bool, _ expr.Expression) expr.Expression {
			return p.calendar(x, unit, origin, m, zoned)
		}}
	}
	tmp := func(g, unit string, m int64) enc {
		return enc{g, func(p *planner, x expr.Expression, zoned bool, origin expr.Expression) expr.Expression {
			return p.temporal(x, unit, m, origin, zoned)
		}}
	}
	encs := []enc{
		cal("trunc_second", "SECOND", "MINUTE", 1), cal("trunc_second", "SECOND", "SECOND", 1),
		cal("trunc_minute", "MINUTE", "HOUR", 1), cal("trunc_minute", "MINUTE", "DAY", 1),
		cal("trunc_hour", "HOUR", "DAY", 1), cal("trunc_hour", "HOUR", "MONTH", 1),
		cal("trunc_day", "DAY", "MONTH", 1), cal("trunc_day", "DAY", "YEAR", 1), cal("trunc_day", "DAY", "DAY", 1),
		cal("trunc_day", "DAY", "MONDAY_WEEK", 1),
		cal("trunc_week", "WEEK", "MONDAY_WEEK", 1), cal("trunc_week", "WEEK", "ISO_WEEK", 1),
		cal("trunc_month", "MONTH", "YEAR", 1), cal("trunc_month", "MONTH", "MONTH", 1),
		cal("trunc_quarter", "MONTH", "YEAR", 3), cal("trunc_year", "YEAR", "YEAR", 1),
		tmp("bin_15m", "MINUTE", 15), tmp("bin_15m", "SECOND", 900),
		tmp("bin_90m_odd_origin", "MINUTE", 90),
		tmp("bin_1d_noon", "HOUR", 24), tmp("bin_1d_noon", "DAY", 1),
		tmp("bin_7d_monday", "WEEK", 1), tmp("bin_7d_monday", "DAY", 7),
		tmp("bin_1500ms", "MILLISECOND", 1500),
		tmp("bin_37us", "MICROSECOND", 37),
		tmp("bin_1h_pre1970_origin", "HOUR", 1),
	}
	tables := []tsTable{
		{"ns UTC", arrow.Nanosecond, true},
		{"us UTC", arrow.Microsecond, true},
		{"ns naive", arrow.Nanosecond, false},
	}
	for _, tt := range tables {
		t.Run(tt.name, func(t *testing.T) {
			mem := newMem(t, 0)
			p := tt.planner(t)
			b := tt.batch(t, p, mem)
			defer b.Release()
			per := map[arrow.TimeUnit]int64{arrow.Nanosecond: 1, arrow.Microsecond: 1e3}[tt.unit]
			for _, e := range encs {
				g, ok := golden[e.golden]
				if !ok {
					t.Fatalf("no golden case %s", e.golden)
				}
				var origin expr.Expression
				if o, ok := g.Expr["origin"].(json.Number); ok {
					ns := mustInt(t, o)
					prec := map[arrow.TimeUnit]types.TimePrecision{arrow.Nanosecond: types.PrecisionNanoSeconds, arrow.Microsecond: types.PrecisionMicroSeconds}[tt.unit]
					if tt.zoned {
						origin = expr.NewPrecisionTimestampTzLiteral(ns/per, prec, required)
					} else {
						origin = expr.NewPrecisionTimestampLiteral(ns/per, prec, required)
					}
				}
				x := e.build(p, p.ref(0), tt.zoned, origin)
				for _, c := range p.compile(x)[0] {
					a, err := c.Eval(ctx, b, mem)
					if err != nil {
						t.Fatalf("%s as %s: %v", e.golden, x, err)
					}
					got := a.(*array.Timestamp)
					for i, w := range g.Values {
						switch {
						case w == nil && got.IsValid(i):
							t.Fatalf("%s as %s, row %d: got %d, want NULL", e.golden, x, i, got.Value(i))
						case w == nil:
						case got.IsNull(i):
							t.Fatalf("%s as %s, row %d: got NULL", e.golden, x, i)
						case int64(got.Value(i))*per != mustInt(t, w.(json.Number)):
							t.Fatalf("%s as %s, row %d: got %d, DuckDB %s (%s)", e.golden, x, i, int64(got.Value(i))*per, w, g.SQL)
						}
					}
					a.Release()
				}
			}
		})
	}
}

// TestCalendarAgainstGoTime checks round_calendar's (unit, origin, multiple) combinations that
// date_trunc does not produce against Go's time package, and round_temporal against big-number
// arithmetic, over random instants of the nanosecond range.
func TestCalendarAgainstGoTime(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	tt := tsTable{"ns UTC", arrow.Nanosecond, true}
	p := tt.planner(t)
	r := rand.New(rand.NewPCG(7, 11))
	lo := time.Date(1678, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	hi := time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	const n = 3000
	vals := make([]int64, n)
	tb := array.NewTimestampBuilder(mem, tsType)
	for i := range vals {
		switch i % 4 {
		case 0: // a boundary of some unit, or next to one
			d := time.Date(1678+r.IntN(584), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), 0, 0, time.UTC)
			vals[i] = d.UnixNano() + r.Int64N(3) - 1
		default:
			vals[i] = int64(uint64(lo) + r.Uint64N(uint64(hi)-uint64(lo)))
		}
		tb.Append(arrow.Timestamp(vals[i]))
	}
	col := tb.NewArray()
	tb.Release()
	b := array.NewRecordBatch(p.schema, []arrow.Array{col}, n)
	col.Release()
	defer b.Release()

	configs := []struct {
		unit, origin string
		multiple     int64
	}{
		{"HOUR", "DAY", 6}, {"MINUTE", "HOUR", 15}, {"MONTH", "YEAR", 2}, {"MONTH", "YEAR", 5}, {"DAY", "MONTH", 10},
		{"WEEK", "SUNDAY_WEEK", 1}, {"WEEK", "US_WEEK", 1}, {"WEEK", "YEAR", 1}, {"WEEK", "MONTH", 2},
		{"DAY", "SUNDAY_WEEK", 3}, {"SECOND", "MINUTE", 7}, {"MILLISECOND", "SECOND", 250},
		{"MICROSECOND", "MILLISECOND", 3}, {"HOUR", "MONDAY_WEEK", 12}, {"DAY", "YEAR", 100}, {"YEAR", "YEAR", 1},
		{"MINUTE", "MINUTE", 1}, {"MILLISECOND", "MILLISECOND", 1},
	}
	for _, c := range configs {
		e := p.compile(p.calendar(p.ref(0), c.unit, c.origin, c.multiple, true))[0][0]
		a, err := e.Eval(ctx, b, mem)
		if err != nil {
			t.Fatalf("%v: %v", c, err)
		}
		got := a.(*array.Timestamp)
		for i, v := range vals {
			want := refCalendar(time.Unix(0, v).UTC(), c.unit, c.origin, c.multiple).UnixNano()
			if int64(got.Value(i)) != want {
				t.Fatalf("round_calendar(%s, %s, %d) of %s: got %s, want %s", c.unit, c.origin, c.multiple,
					time.Unix(0, v).UTC(), time.Unix(0, int64(got.Value(i))).UTC(), time.Unix(0, want).UTC())
			}
		}
		a.Release()
	}
	checked := 0
	for k := range 40 {
		units := []struct {
			name string
			d    int64
		}{{"MICROSECOND", 1e3}, {"MILLISECOND", 1e6}, {"SECOND", 1e9}, {"MINUTE", 60e9}, {"HOUR", 3600e9}, {"DAY", 86400e9}, {"WEEK", 7 * 86400e9}}
		u := units[k%len(units)]
		m := 1 + r.Int64N(min(1000, 60*86400e9/u.d)) // strides up to 60 days
		if k%5 == 0 {
			m = 1 + r.Int64N(math.MaxInt64/u.d) // any stride: bins may start before 1677
		}
		origin := int64(uint64(lo) + r.Uint64N(uint64(hi)-uint64(lo)))
		e := p.compile(p.temporal(p.ref(0), u.name, m, tsLit(origin), true))[0][0]
		a, err := e.Eval(ctx, b, mem)
		if err != nil {
			if de, ok := err.(*ops.DataError); ok && de.Code == "22008" {
				continue // a bin starts before 1677: a refusal, checked below
			}
			t.Fatalf("round_temporal(%s, %d, %d): %v", u.name, m, origin, err)
		}
		got := a.(*array.Timestamp)
		stride := new(big.Int).Mul(big.NewInt(m), big.NewInt(u.d))
		for i, v := range vals {
			d := new(big.Int).Sub(big.NewInt(v), big.NewInt(origin))
			q := new(big.Int).Div(d, stride) // Euclidean: floor for a positive divisor
			want := q.Mul(q, stride).Add(q, big.NewInt(origin))
			if !want.IsInt64() || int64(got.Value(i)) != want.Int64() {
				t.Fatalf("round_temporal(%s, %d, origin %d) of %d: got %d, want %s", u.name, m, origin, v, got.Value(i), want)
			}
		}
		a.Release()
		checked++
	}
	if checked < 30 {
		t.Errorf("only %d of 40 round_temporal cases evaluated", checked)
	}
}

// refCalendar is round_calendar(t, FLOOR, unit, origin, multiple, 'UTC') with Go's time
// package: the last multiple of unit counted from the start of the last origin unit.
func refCalendar(t time.Time, unit, origin string, multiple int64) time.Time {
	y, mo, d := t.Date()
	var o time.Time
	switch origin {
	case "YEAR":
		o = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	case "MONTH":
		o = time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
	case "MONDAY_WEEK", "ISO_WEEK":
		o = time.Date(y, mo, d-(int(t.Weekday())+6)%7, 0, 0, 0, 0, time.UTC)
	case "SUNDAY_WEEK", "US_WEEK":
		o = time.Date(y, mo, d-int(t.Weekday()), 0, 0, 0, 0, time.UTC)
	case "DAY":
		o = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	default:
		o = t.Truncate(map[string]time.Duration{"HOUR": time.Hour, "MINUTE": time.Minute, "SECOND": time.Second, "MILLISECOND": time.Millisecond}[origin])
	}
	switch unit {
	case "YEAR":
		return o
	case "MONTH":
		months := int64((y-o.Year())*12 + int(mo-o.Month()))
		return o.AddDate(0, int(months/multiple*multiple), 0)
	}
	w := map[string]time.Duration{"WEEK": 7 * 24 * time.Hour, "DAY": 24 * time.Hour, "HOUR": time.Hour, "MINUTE": time.Minute,
		"SECOND": time.Second, "MILLISECOND": time.Millisecond, "MICROSECOND": time.Microsecond}[unit]
	n := int64(t.Sub(o) / w)
	return o.Add(time.Duration(n/multiple*multiple) * w)
}

// TestTemporalRange: a bin that starts before the first nanosecond timestamp (1677-09-21) is an
// error, not a wrapped-around value; bins up to the last timestamp are fine.
func TestTemporalRange(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	tt := tsTable{"ns UTC", arrow.Nanosecond, true}
	p := tt.planner(t)
	tb := array.NewTimestampBuilder(mem, tsType)
	tb.AppendValues([]arrow.Timestamp{math.MinInt64 + 5, math.MaxInt64}, nil)
	col := tb.NewArray()
	tb.Release()
	b := array.NewRecordBatch(p.schema, []arrow.Array{col}, 2)
	col.Release()
	defer b.Release()
	for _, x := range []expr.Expression{
		p.trunc("year", p.ref(0)),
		p.trunc("day", p.ref(0)),
		p.bin(time.Hour, 0, p.ref(0)),
	} {
		e := p.compile(x)[0][0]
		a, err := e.Eval(ctx, b, mem)
		if err == nil {
			a.Release()
			t.Errorf("%s of 1677-09-21: no error", x)
			continue
		}
		if de, ok := err.(*ops.DataError); !ok || de.Code != "22008" || de.Msg != "timestamp out of range" {
			t.Errorf("%s: %v", x, err)
		}
	}
	// The last instant floors fine.
	one := b.NewSlice(1, 2)
	defer one.Release()
	for _, x := range []expr.Expression{p.trunc("year", p.ref(0)), p.bin(time.Hour, 0, p.ref(0))} {
		e := p.compile(x)[0][0]
		a, err := e.Eval(ctx, one, mem)
		if err != nil {
			t.Fatalf("%s of 2262-04-11: %v", x, err)
		}
		want := map[bool]int64{true: time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), false: time.Date(2262, 4, 11, 23, 0, 0, 0, time.UTC).UnixNano()}[strings.Contains(x.String(), "round_calendar")]
		if got := int64(a.(*array.Timestamp).Value(0)); got != want {
			t.Errorf("%s of the last instant: %d, want %d", x, got, want)
		}
		a.Release()
	}
	// A bin of a day or less after the first instant floors fine, whatever its origin's
	// start (date_trunc's day counts from the month's start, 1677-09-01, before the range):
	// PostgreSQL's date_trunc('day', '1677-09-22 10:00'), ('hour', …), ('minute', …).
	tb = array.NewTimestampBuilder(mem, tsType)
	first := time.Date(1677, 9, 22, 10, 20, 30, 0, time.UTC)
	tb.AppendValues([]arrow.Timestamp{arrow.Timestamp(first.UnixNano())}, nil)
	col = tb.NewArray()
	tb.Release()
	early := array.NewRecordBatch(p.schema, []arrow.Array{col}, 1)
	col.Release()
	defer early.Release()
	for unit, want := range map[string]time.Time{
		"day": time.Date(1677, 9, 22, 0, 0, 0, 0, time.UTC), "hour": time.Date(1677, 9, 22, 10, 0, 0, 0, time.UTC),
		"minute": time.Date(1677, 9, 22, 10, 20, 0, 0, time.UTC),
	} {
		a, err := p.compile(p.trunc(unit, p.ref(0)))[0][0].Eval(ctx, early, mem)
		if err != nil {
			t.Fatalf("date_trunc(%s) of %s: %v", unit, first, err)
		}
		if got := int64(a.(*array.Timestamp).Value(0)); got != want.UnixNano() {
			t.Errorf("date_trunc(%s) of %s: %d, want %s", unit, first, got, want)
		}
		a.Release()
	}
	// A unit finer than the column's precision is refused.
	ms := tsTable{"ms", arrow.Millisecond, true}.planner(t)
	x := ms.temporal(ms.ref(0), "MICROSECOND", 3, expr.NewPrecisionTimestampTzLiteral(0, types.PrecisionMilliSeconds, required), true)
	if _, err := ops.Compile(x, ms.schema, ms.registry()); err == nil || !strings.Contains(err.Error(), "finer") {
		t.Errorf("round_temporal to microseconds of milliseconds: %v", err)
	}

}
