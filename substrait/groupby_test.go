package substrait

import (
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
	"github.com/flightsrv/flightsrv/routing"
)

var origin2001 = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// histQuery is the shape of a histogram: counts named counts, the bin named name at output
// position index.
func histQuery(bin routing.Binning, name string, index int, order string, limit int64, counts ...string) shape {
	var ms []meas
	for _, c := range counts {
		ms = append(ms, meas{"count(*)", c})
	}
	sh := aggQuery(routing.TimeRange{Start: jan1, End: feb1}, limit, ms...)
	sh.names = slices.Insert(sh.names, index, name)
	sh.order, sh.bin = order, &bin
	return sh
}

// TestGroupedSQL binds every accepted spelling of a histogram with the general binder and
// compares the shape of its plan: the route, the output names, the sort, the limit, the
// measures, and the time bin its AggregateRel groups by as the pushdown rewrite recognises it
// (TimeBinOf); the bin's output field is a non-null timestamp.
func TestGroupedSQL(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	hour := routing.TruncBinning(routing.TruncHour)
	bin15 := routing.StrideBinning(15*time.Minute, origin2001)
	tests := []struct {
		sql  string
		args []any
		want shape
	}{
		{`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + routedWhere + ` GROUP BY 1`,
			nil, histQuery(hour, "t", 0, orderNone, -1, "count")},
		{`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + routedWhere + ` GROUP BY 1 ORDER BY 1`,
			nil, histQuery(hour, "t", 0, orderAsc, -1, "count")},
		{`SELECT date_trunc('hour', timestamp) AS t, COUNT(*) FROM messages` + routedWhere + ` GROUP BY t ORDER BY t DESC LIMIT 24`,
			nil, histQuery(hour, "t", 0, orderDesc, 24, "count")},
		{`SELECT COUNT(*) AS n, date_trunc('HOURS', m.timestamp) FROM messages m` + routedWhere + ` GROUP BY date_trunc('h', timestamp) ORDER BY 2 ASC`,
			nil, histQuery(hour, "date_trunc", 1, orderAsc, -1, "n")},
		{`SELECT count(1), date_trunc('hour', timestamp::timestamptz, 'UTC') b, count(*) AS c FROM messages` + routedWhere + ` GROUP BY b, 2 ORDER BY date_trunc('hour', timestamp) DESC`,
			nil, histQuery(hour, "b", 1, orderDesc, -1, "count", "c")},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01T00:00:00Z') AS t, COUNT(*) FROM messages` + routedWhere + ` GROUP BY t ORDER BY t`,
			nil, histQuery(bin15, "t", 0, orderAsc, -1, "count")},
		{`SELECT date_bin('PT15M', timestamp, '2001-01-01'), COUNT(*) FROM messages` + routedWhere + ` GROUP BY date_bin('00:15', timestamp, DATE '2001-01-01')`,
			nil, histQuery(bin15, "date_bin", 0, orderNone, -1, "count")},
		{`SELECT date_bin('0.25 hours'::interval, timestamp, TIMESTAMP '2001-01-01 00:00') AS t, COUNT(*) FROM messages` + routedWhere + ` GROUP BY 1 ORDER BY t LIMIT ?`,
			[]any{int64(3)}, histQuery(bin15, "t", 0, orderAsc, 3, "count")},
		{`SELECT date_trunc('week', timestamp) AS "Week", COUNT(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3 GROUP BY "Week"`,
			[]any{"general", jan1, feb1}, histQuery(routing.TruncBinning(routing.TruncWeek), "Week", 0, orderNone, -1, "count")},
		{`SELECT date_trunc('qtr', timestamp), COUNT(*) FROM messages` + routedWhere + ` GROUP BY 1`,
			nil, histQuery(routing.TruncBinning(routing.TruncQuarter), "date_trunc", 0, orderNone, -1, "count")},
		// An output name equal to a table column: GROUP BY resolves the table column, ORDER BY
		// the output column (PostgreSQL's rules).
		{`SELECT date_trunc('day', timestamp) AS timestamp, COUNT(*) FROM messages` + routedWhere + ` GROUP BY 1 ORDER BY timestamp DESC`,
			nil, histQuery(routing.TruncBinning(routing.TruncDay), "timestamp", 0, orderDesc, -1, "count")},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			t.Parallel()
			got, err := planShape(t, cat, tt.sql, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !sameShape(got, tt.want) {
				t.Fatalf("%q:\n got %+v bin %v\nwant %+v bin %v", tt.sql, got, got.bin, tt.want, tt.want.bin)
			}
			st, _ := Prepare(tt.sql, cat)
			bins := 0
			for _, f := range st.DatasetSchema().Fields() {
				if arrow.TypeEqual(f.Type, timestampType) {
					bins++
					if f.Nullable {
						t.Fatalf("bin field %v is nullable", f)
					}
				}
			}
			if bins != 1 {
				t.Fatalf("dataset schema %v: %d bin fields", st.DatasetSchema(), bins)
			}
		})
	}
}

func TestGroupedSQLErrors(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const sel = `SELECT date_trunc('hour', timestamp) AS t, count(*) FROM messages` + routedWhere
	tests := []struct {
		sql  string
		code Code
		msg  string
	}{
		{`SELECT * FROM messages` + routedWhere + ` GROUP BY 2`, InvalidArgument, "column \"channel_id\" must appear in the GROUP BY clause or be used in an aggregate function"},
		{sel + ` GROUP BY ()`, InvalidArgument, `column "timestamp" must appear in the GROUP BY clause or be used in an aggregate function`},
		{sel + ` GROUP BY CUBE (1, 2, 1, 2, 1, 2, 1, 2, 1)`, InvalidArgument, "CUBE of more than 8 elements is not supported (256 grouping sets at most)"},
		{sel + ` GROUP BY DISTINCT 1`, Unimplemented, "GROUP BY DISTINCT is not supported"},
		{sel + ` GROUP BY lower(id)`, InvalidArgument, "column \"timestamp\" must appear in the GROUP BY clause or be used in an aggregate function"},
		{sel + ` GROUP BY 'x'`, InvalidArgument, "non-integer constant in GROUP BY"}, // PostgreSQL's 42601, before the ungrouped column
		{sel + ` GROUP BY 'x'::text`, InvalidArgument, "column \"timestamp\" must appear in the GROUP BY clause or be used in an aggregate function"},
		{sel + ` GROUP BY 1 ORDER BY t USING <`, Unimplemented, "ORDER BY … USING is not supported"},
		{`SELECT date_trunc('microseconds', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_trunc to microseconds is not supported"},
		{`SELECT date_trunc('fortnight', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "date_trunc unit is not recognized"},
		{`SELECT date_trunc(channel_id, timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_trunc with a unit that is not a string literal or a parameter is not supported"},
		{`SELECT date_trunc('hour', timestamp, 'CET'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "time zone abbreviations other than UTC, GMT, Z, EST, EDT, CST, CDT, MST, MDT, PST and PDT are not supported; name the zone (America/New_York) or a POSIX offset (UTC+5)"},
		{`SELECT date_trunc('hour', timestamp, zone), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_trunc with a time zone that is not a text constant is not supported"},
		{`SELECT timestamp AT TIME ZONE id FROM messages` + routedWhere, Unimplemented, "AT TIME ZONE with a zone that is not a constant is not supported"},
		{`SELECT timestamp AT TIME ZONE 'Mars/Olympus_Mons' FROM messages` + routedWhere, InvalidArgument, `time zone "Mars/Olympus_Mons" not recognized`},
		{`SELECT date_trunc('hour', timestamp + interval 'P0001-02'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "interval values in ISO 8601's alternative format (P0001-02-03T04:05:06) are not supported: write P1Y2M3DT4H5M6S"},
		{`SELECT date_bin(INTERVAL '1 month', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "timestamps cannot be binned into intervals containing months or years"},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, now()), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_bin with an origin that is not a timestamp literal is not supported"},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, $1), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_bin with an origin that is not a timestamp literal is not supported"},
		{`SELECT date_trunc('hour', timestamp) OVER (), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "window functions are not allowed here"},
		{`SELECT date_trunc('hour', timestamp) AS t, count(*) FROM messages` + routedWhere + ` GROUP BY t ORDER BY lower(id)`, InvalidArgument, "column \"id\" must appear in the GROUP BY clause or be used in an aggregate function"},
		// query errors
		{`SELECT date_trunc('hour', timestamp), id, count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, `column "id" must appear in the GROUP BY clause or be used in an aggregate function`},
		{`SELECT date_trunc('hour', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY date_trunc('day', timestamp)`, InvalidArgument, `column "timestamp" must appear in the GROUP BY clause or be used in an aggregate function`},
		{sel + ` GROUP BY 1 ORDER BY timestamp`, InvalidArgument, `column "timestamp" must appear in the GROUP BY clause or be used in an aggregate function`},
		{sel + ` GROUP BY 1 ORDER BY date_trunc('day', timestamp)`, InvalidArgument, `column "timestamp" must appear in the GROUP BY clause or be used in an aggregate function`},
		{sel + ` GROUP BY 3`, InvalidArgument, "GROUP BY position 3 is not in select list"},
		{sel + ` GROUP BY 2`, InvalidArgument, "aggregate functions are not allowed in GROUP BY"},
		{sel + ` GROUP BY count`, InvalidArgument, "aggregate functions are not allowed in GROUP BY"},
		{sel + ` GROUP BY nosuch`, InvalidArgument, `column "nosuch" does not exist`},
		{sel + ` GROUP BY 1 ORDER BY 7`, InvalidArgument, "ORDER BY position 7 is not in select list"},
		{`SELECT date_trunc('fortnight', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "date_trunc unit is not recognized"},
		{`SELECT date_trunc(' hour', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "date_trunc unit is not recognized"},
		{`SELECT date_trunc('hour', id), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "argument 2 of date_trunc must be timestamp with time zone, not text"},
		{`SELECT date_trunc('hour'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "date_trunc takes two or three arguments"},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "date_bin takes three arguments (stride, timestamp, origin)"},
		{`SELECT date_bin(INTERVAL '0 seconds', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "stride must be greater than zero"},
		{`SELECT date_bin(INTERVAL '-1 hour', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "stride must be greater than zero"},
		{`SELECT date_bin(INTERVAL '0.0000005 seconds', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "stride must be greater than zero"},
		{`SELECT date_bin(INTERVAL '1000000 days', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, "date_bin strides of 292 years or more (flightsrv's timestamps are nanoseconds) are not supported"},
		{`SELECT date_bin(INTERVAL 'fifteen minutes', timestamp, '2001-01-01'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "invalid input syntax for type interval"},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, 'yesterday'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, Unimplemented, `the special timestamp with time zone value "yesterday" is not supported: write a date or time`},
		{`SELECT date_bin(INTERVAL '15 minutes', timestamp, 'soon'), count(*) FROM messages` + routedWhere + ` GROUP BY 1`, InvalidArgument, "invalid input syntax for type timestamp with time zone"},
		{`SELECT date_trunc('hour', timestamp), count(*) FROM messages WHERE channel_id = 'general' GROUP BY 1`, InvalidArgument, errNeed("timestamp >= <start> AND timestamp < <end>").Msg},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			t.Parallel()
			_, err := Prepare(tt.sql, cat)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error %v is not an *Error", tt.sql, err)
			}
			if e.Code != tt.code || e.Msg != tt.msg {
				t.Errorf("%q:\n got %v %q\nwant %v %q", tt.sql, e.Code, e.Msg, tt.code, tt.msg)
			}
			if strings.Contains(e.Msg, "general") || strings.Contains(e.Msg, "2026") || strings.Contains(e.Msg, "2001") {
				t.Errorf("error %q carries a literal", e.Msg)
			}
		})
	}
}

// TestParseStride compares interval parsing with PostgreSQL 15's extract(epoch from interval).
func TestParseStride(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]time.Duration{
		"15 minutes":        15 * time.Minute,
		"1.5 hours":         90 * time.Minute,
		"+1.5 h":            90 * time.Minute,
		"00:15":             15 * time.Minute,
		"1:30":              90 * time.Minute,
		"15:00":             15 * time.Hour,
		"1 day 02:00":       26 * time.Hour,
		"1 day -02:00":      22 * time.Hour,
		"1:2:3.5":           time.Hour + 2*time.Minute + 3500*time.Millisecond,
		"01:02:03.000004":   time.Hour + 2*time.Minute + 3*time.Second + 4*time.Microsecond,
		"PT15M":             15 * time.Minute,
		"P1DT2H":            26 * time.Hour,
		"P0.5D":             12 * time.Hour,
		"P1W":               7 * 24 * time.Hour,
		"1 week":            7 * 24 * time.Hour,
		"2 weeks 3 days":    17 * 24 * time.Hour,
		"1h30m":             90 * time.Minute,
		"90 s":              90 * time.Second,
		"15":                15 * time.Second,
		"1 hour -5 minutes": 55 * time.Minute,
		"1 hour, 2 minutes": 62 * time.Minute,
		"@ 3 mins":          3 * time.Minute,
		"0 months 1 hour":   time.Hour,
		"  2 Days ":         48 * time.Hour,
		"250 ms":            250 * time.Millisecond,
		"0.0000015 seconds": time.Microsecond, // PostgreSQL's double precision: 1.4999… µs, rounded
		"1 microsecond":     time.Microsecond,
	} {
		us, months, ok := parseInterval(s)
		if !ok || months.Sign() != 0 {
			t.Errorf("%q: ok=%v months=%v", s, ok, months)
			continue
		}
		if got := new(big.Rat).Mul(us, big.NewRat(1000, 1)); got.Cmp(big.NewRat(int64(want), 1)) != 0 {
			t.Errorf("%q = %v µs, want %v", s, us.FloatString(3), want)
		}
	}
	for _, s := range []string{"", "minutes", "15 fortnights", "P", "P1H", "PT1D", "1::2", "1:2:3:4", "ago", "15 minutes 3"} {
		if _, _, ok := parseInterval(s); ok && s != "15 minutes 3" {
			t.Errorf("%q parsed", s)
		}
	}
	for s, want := range map[string]int64{"1 month": 1, "1 year": 12, "P1M": 1, "P1Y": 12, "1 decade": 120, "2 mons 1 day": 2,
		"1 century": 1200, "1 year 2 months ago": -14, "P1Y2M3DT4H": 14, "-1 year +13 months": 1, "1.5 years": 18} {
		if _, months, ok := parseInterval(s); !ok || months.Cmp(big.NewRat(want, 1)) != 0 {
			t.Errorf("%q: months=%v ok=%v, want %d", s, months, ok, want)
		}
	}
	if _, err := parseStride("2 days ago"); err == nil {
		t.Error("negative stride accepted")
	}
	if d, err := parseStride("0.0000005 seconds"); err == nil {
		t.Errorf("a stride PostgreSQL reads as zero accepted: %v", d) // rint(0.5) µs is 0
	}
}

// TestGroupedClientPlans: the pushdown rewrite's time-bin recogniser (TimeBinOf) reads the
// groupings of client-built plans — round_calendar and round_temporal with FLOOR rounding in
// UTC, of the timestamp — as the stores' bins, and nothing else (another rounding, week start,
// multiple, zone, a calendar unit in round_temporal, another column).
func TestGroupedClientPlans(t *testing.T) {
	t.Parallel()
	nsTS := &types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: types.NullabilityNullable}}
	lit := func(t time.Time) expr.Literal { return timestampLiteral(t.UnixNano()) }
	routed := func(t *testing.T, c *clientPlan) plan.Rel {
		cond := c.fn(t, URNBoolean, "and",
			c.fn(t, URNBoolean, "and",
				c.fn(t, URNComparison, "equal", c.ref(c.read, 0), expr.NewPrimitiveLiteral("general", false)),
				c.fn(t, URNComparison, "gte", c.ref(c.read, 1), lit(jan1))),
			c.fn(t, URNComparison, "lt", c.ref(c.read, 1), lit(feb1)))
		return must(c.b.Filter(c.read, cond))
	}
	i64 := func(v int64) expr.Literal { return expr.NewPrimitiveLiteral(v, false) }
	str := func(s string) expr.Literal { return expr.NewPrimitiveLiteral(s, false) }
	calendar := func(c *clientPlan, r plan.Rel, rounding, unit, origin string, multiple int64, zone string) expr.Expression {
		return c.fn(t, URNDatetime, "round_calendar", c.ref(r, 1), types.Enum(rounding), types.Enum(unit), types.Enum(origin), i64(multiple), str(zone))
	}
	temporal := func(c *clientPlan, r plan.Rel, unit string, multiple int64, origin time.Time) expr.Expression {
		return c.fn(t, URNDatetime, "round_temporal", c.ref(r, 1), types.Enum("FLOOR"), types.Enum(unit), i64(multiple), str("UTC"), lit(origin))
	}
	count := func(c *clientPlan) plan.AggRelMeasure {
		return c.b.Measure(must(c.b.AggregateFn(URNAggregate, "count", nil)), nil)
	}
	grouped := func(c *clientPlan, r plan.Rel, g expr.Expression, ms ...plan.AggRelMeasure) plan.Rel {
		if len(ms) == 0 {
			ms = []plan.AggRelMeasure{count(c)}
		}
		return must(c.b.AggregateExprs(r, ms, []expr.Expression{g}))
	}
	tests := []struct {
		name  string
		build func(c *clientPlan) (plan.Rel, []string)
		bin   routing.Binning
		order string
		index int
		code  Code
		msg   string
	}{
		{"week from ISO_WEEK, sorted desc, count first", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			agg := grouped(c, r, calendar(c, r, "FLOOR", "WEEK", "ISO_WEEK", 1, "Etc/UTC"))
			s := must(c.b.Sort(agg, expr.SortField{Expr: c.ref(agg, 0), Kind: types.SortDescNullsLast}))
			return must(s.Remap(1, 0)), []string{"n", "w"}
		}, routing.TruncBinning(routing.TruncWeek), orderDesc, 1, 0, ""},
		{"day from YEAR", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, calendar(c, r, "FLOOR", "DAY", "YEAR", 1, "UTC")), []string{"d", "n"}
		}, routing.TruncBinning(routing.TruncDay), orderNone, 0, 0, ""},
		{"round_temporal in days", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, temporal(c, r, "DAY", 2, origin2001)), []string{"d", "n"}
		}, routing.StrideBinning(48*time.Hour, origin2001), orderNone, 0, 0, ""},
		{"ceil rounding", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, calendar(c, r, "CEIL", "DAY", "YEAR", 1, "UTC")), []string{"d", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "round_calendar rounding other than FLOOR is not supported"},
		{"sunday weeks", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, calendar(c, r, "FLOOR", "WEEK", "SUNDAY_WEEK", 1, "UTC")), []string{"d", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "round_calendar other than date_trunc to second, minute, hour, day, week, month, quarter or year is not supported"},
		{"two days calendar", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, calendar(c, r, "FLOOR", "DAY", "MONTH", 2, "UTC")), []string{"d", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "round_calendar other than date_trunc to second, minute, hour, day, week, month, quarter or year is not supported"},
		{"other zone", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, calendar(c, r, "FLOOR", "DAY", "MONTH", 1, "Europe/Paris")), []string{"d", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "round_calendar in a time zone other than UTC is not supported"},
		{"round_temporal by month", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, temporal(c, r, "MONTH", 1, origin2001)), []string{"d", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "round_temporal to a calendar unit is not supported"},
		{"group by id", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			return grouped(c, r, c.ref(r, 2)), []string{"id", "n"}
		}, routing.Binning{}, "", 0, Unimplemented, "grouped AggregateRel (GROUP BY) other than by one time bucket of timestamp is not supported"},
		{"min per bin", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			mn := c.b.Measure(must(c.b.AggregateFn(URNDatetime, "min", nil, c.ref(r, 1))), nil)
			return grouped(c, r, calendar(c, r, "FLOOR", "DAY", "MONTH", 1, "UTC"), mn), []string{"d", "m"}
		}, routing.TruncBinning(routing.TruncDay), "", 0, Unimplemented, "MIN(timestamp) with GROUP BY is not supported"},
		{"sort on the count", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			agg := grouped(c, r, calendar(c, r, "FLOOR", "DAY", "MONTH", 1, "UTC"))
			return must(c.b.Sort(agg, expr.SortField{Expr: c.ref(agg, 1), Kind: types.SortAscNullsLast})), []string{"d", "n"}
		}, routing.TruncBinning(routing.TruncDay), "", 0, Unimplemented, "SortRel other than on the time bucket is not supported"},
		{"bin not output", func(c *clientPlan) (plan.Rel, []string) {
			r := routed(t, c)
			agg := grouped(c, r, calendar(c, r, "FLOOR", "DAY", "MONTH", 1, "UTC"))
			return must(agg.Remap(1)), []string{"n"}
		}, routing.TruncBinning(routing.TruncDay), "", 0, Unimplemented, "GROUP BY a time bucket that is not selected is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClientPlan("messages", nsTS)
			rel, _ := tt.build(c)
			var agg *plan.AggregateRel
			for r := rel; agg == nil; r = r.GetInputs()[0] {
				agg, _ = r.(*plan.AggregateRel)
			}
			bin, ok := TimeBinOf(agg.GroupingExpressions()[0], testDef)
			if ok != (tt.bin != routing.Binning{}) || bin != tt.bin {
				t.Fatalf("TimeBinOf = %v, %v; want %v", bin, ok, tt.bin)
			}
		})
	}
}

// TestAddMonths: timestamp ± months as PostgreSQL computes it (values checked with
// PostgreSQL 15: SELECT timestamptz '…' + interval '…' in a UTC session).
func TestAddMonths(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		from   string
		months int64
		want   string
	}{
		{"2001-01-31T10:00:00Z", 1, "2001-02-28T10:00:00Z"},
		{"2004-01-31T00:00:00Z", 1, "2004-02-29T00:00:00Z"},
		{"2004-02-29T12:34:56.789Z", 12, "2005-02-28T12:34:56.789Z"},
		{"2001-03-31T00:00:00Z", -1, "2001-02-28T00:00:00Z"},
		{"2001-01-15T00:00:00Z", -13, "1999-12-15T00:00:00Z"},
		{"2001-12-31T23:59:59.999999Z", 2, "2002-02-28T23:59:59.999999Z"},
		{"2001-05-31T00:00:00Z", 0, "2001-05-31T00:00:00Z"},
	} {
		if got := calendar.AddMonths(at(c.from), c.months); !got.Equal(at(c.want)) {
			t.Errorf("%s %+d months = %s, want %s", c.from, c.months, got.Format(time.RFC3339Nano), c.want)
		}
	}
}
