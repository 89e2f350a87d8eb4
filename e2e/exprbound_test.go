package e2e

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestExpressionBoundsAsPostgres: time bounds written as expressions of constants, of the
// statement's clock (now(), current_date, localtimestamp) and of parameters — date_trunc to any
// unit, date_bin, make_interval, casts to date and timestamp, calendar months, AT TIME ZONE
// across a DST change — route the read and count, over the same rows, what PostgreSQL counts
// for the same SQL (trial25's "bounds written but not folded"); NOT pushed through the bounds
// (De Morgan) too. The clock-based bounds are written so that their value does not depend on
// today's date (date_trunc('decade', now()) less its distance to 2001-01-01 is 2001-01-01
// whatever the day), so that PostgreSQL's clock and ours, a few milliseconds apart, agree even across a
// midnight. Pushdown on and off.
func TestExpressionBoundsAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	const (
		q    = "SELECT count(*), min(timestamp)::text, max(timestamp)::text FROM flights WHERE origin = 'ORD' AND "
		y2k1 = "(date_trunc('year', now()) - (date_trunc('year', now()) - timestamptz '2001-01-01 00:00+00'))"
		dec  = "(date_trunc('decade', now()) - (date_trunc('decade', now()) - timestamptz '2001-01-01 00:00+00'))"
		mon  = "(date_trunc('month', current_date) - (date_trunc('month', current_date) - timestamptz '2001-01-01 00:00+00'))"
	)
	rows := comparePG(t, ctx, pg, clients, sameSQL(pgText,
		q+"timestamp >= "+y2k1+" + interval '2 months' AND timestamp < "+y2k1+" + interval '2 months 10 days'",
		q+"timestamp >= "+dec+" + interval '3 months' AND timestamp < "+dec+" + interval '3 months' + interval '10 days'",
		q+"timestamp >= ("+y2k1+" + interval '4 months')::date AND timestamp < ("+y2k1+" + interval '4 months')::date + 5",
		q+"((timestamp >= "+y2k1+" AND timestamp < "+y2k1+" + interval '3 days') OR (timestamp >= "+mon+" + interval '1 month 10 days' AND timestamp < "+mon+" + interval '1 month 12 days'))",
		q+"timestamp >= now() - (now() - timestamptz '2001-03-30 06:00+00') AND timestamp < localtimestamp - (localtimestamp - timestamp '2001-04-02 18:00')",
		q+"timestamp >= date_bin('6 hours', timestamptz '2001-03-30 13:00+00', timestamptz '2001-01-01 00:00+00') AND timestamp < date_bin('6 hours', timestamptz '2001-03-30 13:00+00', timestamptz '2001-01-01 00:00+00') + make_interval(hours => 30)",
		q+"timestamp >= timestamptz '2001-03-31 00:00+00' - make_interval(months => 1) AND timestamp < timestamp '2001-01-31 12:00' + interval '1 month'",
		q+"timestamp >= date_trunc('day', timestamptz '2001-04-01 12:00+00', 'America/Chicago') AND timestamp < date_trunc('day', timestamptz '2001-04-01 12:00+00', 'America/Chicago') + interval '1 day'",
		q+"timestamp >= (timestamp '2001-03-31 00:00' AT TIME ZONE 'America/Chicago') AND timestamp < (timestamp '2001-04-02 00:00' AT TIME ZONE 'America/Chicago')",
		q+"timestamp >= date_trunc('week', timestamp '2001-04-04 10:00')::date AND timestamp < date_trunc('week', timestamp '2001-04-04 10:00')::timestamp + interval '36 hours'",
		q+"NOT (timestamp < '2001-04-01' OR timestamp >= '2001-04-02')",
		q+"NOT (timestamp < '2001-04-01' OR NOT (timestamp < '2001-04-02 06:00') OR (value->>'delay')::int > 10)",
		q+"NOT ((timestamp < '2001-04-01' OR timestamp >= '2001-04-02') AND (timestamp < '2001-05-01' OR timestamp >= '2001-05-02'))",
		q+"NOT (timestamp NOT BETWEEN '2001-04-01' AND '2001-04-02')",
	)...)
	if rows < 14 {
		t.Errorf("only %d rows compared", rows)
	}
	// What has no finite range is refused as missing its bounds, PostgreSQL answering it.
	for _, where := range []string{
		"timestamp NOT BETWEEN '2001-04-01' AND '2001-04-02'",
		"NOT (timestamp >= '2001-04-01' AND timestamp < '2001-04-02')",
	} {
		if _, err := pgTextRowsErr(ctx, pg, q+where); err != nil {
			t.Fatalf("PostgreSQL %s: %v", where, err)
		}
		for name, cl := range clients {
			if _, err := run(ctx, cl, q+where); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "flights needs timestamp >= <start> AND timestamp < <end>" {
				t.Errorf("%s, %s: %v, want the refusal of a read without bounds", name, where, err)
			}
		}
	}
}

// TestExpressionBoundParametersAsPostgres: ADBC's origin = ? AND timestamp >= ?::timestamptz -
// ?::interval AND timestamp < ? (trial25), the interval bound as text or as Arrow's
// month_day_nano, is prepared, and each execution routes by the bound its parameters give and
// counts what PostgreSQL counts with the same parameters.
func TestExpressionBoundParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := ordEnv(t, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	const sql = "SELECT count(*) FROM flights WHERE origin = ? AND timestamp >= ?::timestamptz - ?::interval AND timestamp < ?"
	const pgSQL = "SELECT count(*) FROM flights WHERE origin = $1 AND timestamp >= $2::timestamptz - $3::interval AND timestamp < $4"
	for _, tc := range []struct {
		end, start string
		text       string                     // the interval as text
		mdn        arrow.MonthDayNanoInterval // the same interval as month_day_nano
	}{
		{"2001-04-03 00:00:00+00", "2001-04-02 00:00:00+00", "1 mon 2 days", arrow.MonthDayNanoInterval{Months: 1, Days: 2}},
		{"2001-03-31 12:00:00+00", "2001-03-31 00:00:00+00", "1 mon 06:00:00", arrow.MonthDayNanoInterval{Months: 1, Nanoseconds: 6 * int64(time.Hour)}},
	} {
		var want int64
		if err := pg.QueryRow(ctx, pgSQL, "ORD", tc.start, tc.text, tc.end).Scan(&want); err != nil || want == 0 {
			t.Fatalf("PostgreSQL %s: %d, %v", tc.text, want, err)
		}
		for name, cl := range clients {
			for _, ivType := range []arrow.DataType{arrow.BinaryTypes.String, arrow.FixedWidthTypes.MonthDayNanoInterval} {
				fields := []arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}, {Name: "$2", Type: arrow.BinaryTypes.String},
					{Name: "$3", Type: ivType}, {Name: "$4", Type: arrow.BinaryTypes.String}}
				b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
				b.Field(0).(*array.StringBuilder).Append("ORD")
				b.Field(1).(*array.StringBuilder).Append(tc.start)
				if ivType == arrow.BinaryTypes.String {
					b.Field(2).(*array.StringBuilder).Append(tc.text)
				} else {
					b.Field(2).(*array.MonthDayNanoIntervalBuilder).Append(tc.mdn)
				}
				b.Field(3).(*array.StringBuilder).Append(tc.end)
				rec := b.NewRecordBatch()
				b.Release()
				stmt, err := cl.Prepare(ctx, sql)
				if err != nil {
					t.Fatalf("%s: prepare: %v", name, err)
				}
				stmt.SetParameters(rec)
				rec.Release()
				info, err := stmt.Execute(ctx)
				if err != nil {
					t.Fatalf("%s, %s as %s: %v", name, tc.text, ivType, err)
				}
				res, err := fetch(ctx, cl, info)
				if err != nil {
					t.Fatalf("%s, %s as %s: %v", name, tc.text, ivType, err)
				}
				if got := scalarCount(t, res); got != want {
					t.Errorf("%s, %s as %s: %d rows, PostgreSQL %d", name, tc.text, ivType, got, want)
				}
				res.release()
				stmt.Close(ctx)
			}
		}
	}
}
