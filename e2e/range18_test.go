package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestNanosecondRangeNeverClampsAsPostgres (trial26 W1–W4): flightsrv's instants are int64
// nanoseconds (1677-09-21 to 2262-04-11), PostgreSQL's reach the year 294276. Where
// PostgreSQL's answer is a number, text or interval, flightsrv answers it for dates and
// differences beyond that range — timestamp - timestamp past 292 years, to_char, date_part
// and age of a date, timestamp - date — constants, per row and bound as a parameter; where
// the answer is an instant beyond the range (to_timestamp(1e10), COALESCE(ts, date
// '0001-01-01'), least, CASE, date_trunc of such a date) it is 22008 "timestamp out of
// range", never a value clamped to the range; to_timestamp of infinity is refused by name.
// timestamp ± interval answers whenever its result is in range, however many days the
// interval holds; interval '-2147483648 days' reads; a sum of intervals past the time part's
// ±292 years or a field's range is 22008 "interval out of range".
func TestNanosecondRangeNeverClampsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const where = " FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02'"
	qs := []string{
		// W2: the difference exact, as interval_justify_hours of the microseconds.
		"SELECT (timestamp '2001-01-01' - timestamp '1700-01-01')::text, (timestamp '2200-01-01' - timestamp '1700-01-01')::text, " +
			"(timestamptz '2001-01-01 00:00+00' - timestamptz '1701-01-01 00:00+00')::text, justify_days(timestamp '2001-01-01' - timestamp '1700-01-01')::text, " +
			"extract(day from timestamp '2001-01-01' - timestamp '1700-01-01')::text, (timestamp '1700-01-01' - timestamp '2262-01-01 12:34:56.789')::text",
		"SELECT (date '2001-01-01' - timestamp '1700-01-01')::text, (timestamp '2001-01-01' - date '1600-01-01')::text, " +
			"(date '2300-01-01' - timestamp '2001-01-01')::text, (date '0001-01-01' - timestamptz '2001-01-01 06:00+00')::text",
		"SELECT id, (timestamp - timestamp '1700-01-01')::text, extract(epoch from timestamp - timestamptz '1700-01-01 00:00+00')::text, " +
			"(timestamp - date '1600-01-01')::text, (date '2300-01-01' - timestamp)::text, (timestamp::date - timestamp '1700-01-01')::text" + where + " ORDER BY id",
		// W3: functions of a date whose answer is text, a number or an interval.
		"SELECT to_char(date '1600-01-01', 'YYYY-MM-DD Dy'), to_char(date '1500-12-31', 'YYYY DDD'), to_char(date '2300-01-01', 'YYYY-MM-DD Dy TZ'), " +
			"to_char(to_date('2300-05-05', 'YYYY-MM-DD'), 'DD Mon YYYY'), to_char(date '2300-01-01' - 1, 'YYYY'), to_char(date '0001-01-01', 'YYYY-MM-DD HH24:MI:SS')",
		"SELECT date_part('year', date '2300-06-01'), date_part('dow', date '2300-01-01'), date_part('month', date '1600-02-29'), date_part('day', date '1500-03-01'), " +
			"date_part('epoch', date '2300-01-01'), date_part('epoch', date '1500-01-01'), date_part('julian', date '2300-01-01'), date_part('hour', date '2001-01-01'), " +
			"date_part('century', date '0001-01-01'), date_part('isoyear', date '1000-01-01'), date_part('doy', date '2001-03-01')",
		"SELECT age(date '2001-01-01', date '1600-01-01')::text, age(date '2300-01-01', date '2001-01-01')::text, age(date '1600-02-29', date '2300-03-31')::text, " +
			"age(timestamp '2001-04-01 06:00', date '1700-01-31')::text, age(date '2001-01-01', timestamptz '2001-03-31 23:00+00')::text",
		"SELECT id, to_char(timestamp::date, 'YYYY-MM-DD Dy'), date_part('year', timestamp::date), date_part('dow', timestamp::date), age(timestamp::date, date '1600-01-01')::text, " +
			"to_char(timestamp::date - 200000, 'YYYY-MM-DD'), date_part('year', timestamp::date + 120000)" + where + " ORDER BY id",
		// Days and time added apart: only the result must be in range.
		"SELECT (timestamp '2001-01-01' - interval '110000 days')::text, (timestamptz '2001-01-01 00:00+00' - interval '110000 days 3 hours')::text, " +
			"(timestamp '1700-01-01' + interval '200000 days -2000000 hours')::text, interval '-2147483648 days'::text, interval '-2147483648 mons'::text, " +
			"interval '-02147483648 days'::text, (interval '-2147483648.5 days')::text",
		"SELECT id, (timestamp - interval '110000 days')::text, (timestamp::timestamp - interval '110000 days 1 hour')::text, " +
			"(timestamp + (value->>'delay')::int * interval '1 minute' - interval '110000 days')::text" + where + " ORDER BY id",
		// Comparisons still order a date beyond the range as PostgreSQL does.
		"SELECT date '1500-01-01' < timestamp '2001-01-01', date '2300-01-01' > timestamptz '2001-01-01 00:00+00', timestamp '2001-01-01' BETWEEN date '1000-01-01' AND date '3000-01-01'",
		"SELECT count(*)" + where + " AND timestamp > date '1500-01-01'",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		// PostgreSQL answers an instant beyond timestamp[ns]: 22008, never a clamped value.
		for _, q := range []string{
			"SELECT to_timestamp(1e10)::text", "SELECT to_timestamp(9.3e9)", "SELECT to_timestamp(-1e10)", "SELECT extract(year from to_timestamp(1e10))",
			"SELECT to_timestamp(9223372036.86)", "SELECT to_timestamp(-9223372036.86)",
			"SELECT least(date '1500-01-01', timestamptz '2001-01-01')", "SELECT greatest(date '2300-01-01', timestamp '2001-01-01')",
			"SELECT CASE WHEN true THEN date '2300-01-01' ELSE timestamp '2001-01-01' END", "SELECT COALESCE(NULL, date '2300-01-01', timestamp '2001-01-01')",
			"SELECT COALESCE(timestamp, date '0001-01-01')" + where, "SELECT least(timestamp, date '1000-01-01')" + where,
			"SELECT COALESCE(timestamp, '0001-01-01')" + where,
			"SELECT date_trunc('month', date '2300-01-15')", "SELECT date_trunc('week', date '2263-01-05')::text",
		} {
			outOfRange(t, ctx, cl.c, pg, q)
		}
		// A sum of intervals past a field's range: 22008 (PostgreSQL's time part holds
		// ±292,000 years, flightsrv's ±292: docs/sql.md).
		for _, q := range []string{
			"SELECT sum(x) FROM (VALUES (interval '2000000000 days'), (interval '2000000000 days')) v(x)",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, "22008")
		}
		for _, q := range []string{
			"SELECT sum(x)::text FROM (VALUES (interval '1000000 hours'), (interval '1000000 hours'), (interval '1000000 hours')) v(x)",
			"SELECT avg(x)::text FROM (VALUES (interval '1000000 hours'), (interval '1000000 hours'), (interval '1000000 hours')) v(x)",
		} {
			if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
				t.Fatalf("PostgreSQL %s: %v", q, err)
			}
			refusedAs(t, ctx, cl.c, codes.InvalidArgument, map[string]string{q: "interval out of range"})
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT to_timestamp('Infinity'::float8)":  "to_timestamp of infinity",
			"SELECT to_timestamp('-Infinity'::float8)": "to_timestamp of infinity",
		})
		// A date parameter (ADBC's date32, JDBC's setDate) beyond the range.
		for q, want := range map[string]string{
			"SELECT to_char(?::date, 'YYYY-MM-DD')":           "1500-01-01",
			"SELECT date_part('year', CAST(? AS date))":       "1500",
			"SELECT (timestamp '2001-04-01' - ?::date)::text": "183077 days",
			"SELECT age(date '2001-01-01', ?::date)::text":    "501 years",
		} {
			var pgWant string
			day := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := pg.QueryRow(ctx, "SELECT ("+replaceFirst(q[len("SELECT "):], "?", "$1")+")::text", day).Scan(&pgWant); err != nil {
				t.Fatalf("PostgreSQL %s: %v", q, err)
			}
			if pgWant != want {
				t.Fatalf("PostgreSQL %s: %q, want %q", q, pgWant, want)
			}
			if got, err := dateParamAnswer(t, ctx, cl.c, q, day, false); err != nil || got != want {
				t.Errorf("%s bound 1500-01-01: %q (%v), PostgreSQL %q", q, got, err, want)
			}
		}
		// A date parameter read as a timestamp beyond the range: a value is 22008, a bound
		// compared with the rows clamped (the rows PostgreSQL counts).
		day := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
		if _, err := dateParamAnswer(t, ctx, cl.c, "SELECT ?::date::timestamptz", day, false); status.Code(err) != codes.InvalidArgument ||
			!strings.Contains(status.Convert(err).Message(), "outside the nanosecond range") {
			t.Errorf("SELECT ?::date::timestamptz bound 1500-01-01: %v, want the documented refusal of the cast", err)
		}
		for _, q := range []string{"SELECT COALESCE(NULL, ?, timestamptz '2001-01-01 00:00+00')", "SELECT least(?, timestamp '2001-01-01')"} {
			if _, err := dateParamAnswer(t, ctx, cl.c, q, day, false); status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "22008" {
				t.Errorf("%s bound 1500-01-01: %v (SQLSTATE %q), want 22008", q, err, sqlstateOf(err))
			}
		}
		// A timestamp parameter beyond the range is refused as it is read.
		if _, err := dateParamAnswer(t, ctx, cl.c, "SELECT ?", day, true); status.Code(err) != codes.InvalidArgument {
			t.Errorf("SELECT ? bound timestamp 1500-01-01: %v, want INVALID_ARGUMENT", err)
		}
		var n string
		if err := pg.QueryRow(ctx, "SELECT count(*)::text"+where+" AND timestamp > $1", day).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if got, err := dateParamAnswer(t, ctx, cl.c, "SELECT count(*)"+where+" AND timestamp > ?", day, false); err != nil || got != n {
			t.Errorf("count after a 1500-01-01 parameter: %q (%v), PostgreSQL %q", got, err, n)
		}
	}
}

// outOfRange checks that PostgreSQL answers q and flightsrv refuses it with 22008 "timestamp
// out of range" (PostgreSQL's instant is outside timestamp[ns]).
func outOfRange(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q string) {
	t.Helper()
	if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	_, err := run(ctx, cl, q)
	if status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "22008" || status.Convert(err).Message() != "timestamp out of range" {
		t.Errorf("%s: %v (SQLSTATE %q), want INVALID_ARGUMENT 22008 timestamp out of range", q, err, sqlstateOf(err))
	}
}

// replaceFirst replaces the first old in s by repl.
func replaceFirst(s, old, repl string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + repl + s[i+len(old):]
		}
	}
	return s
}

// dateParamAnswer runs q with its one parameter bound as a date32 of day (a timestamp[us] in
// UTC when ts) and returns the text of its one value, or the error.
func dateParamAnswer(t *testing.T, ctx context.Context, cl *flightsql.Client, q string, day time.Time, ts bool) (string, error) {
	t.Helper()
	stmt, err := cl.Prepare(ctx, q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	defer stmt.Close(ctx)
	typ := arrow.DataType(arrow.FixedWidthTypes.Date32)
	if ts {
		typ = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "p", Type: typ, Nullable: true}}, nil))
	defer b.Release()
	if ts {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(day.UnixMicro()))
	} else {
		b.Field(0).(*array.Date32Builder).Append(arrow.Date32FromTime(day))
	}
	params := b.NewRecordBatch()
	defer params.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	if err != nil {
		return "", err
	}
	res, err := fetch(ctx, cl, info)
	if err != nil {
		return "", err
	}
	defer res.release()
	if len(res.recs) != 1 || res.recs[0].NumRows() != 1 {
		t.Fatalf("%s: %d batches, want one row", q, len(res.recs))
	}
	return textColumns(res)[0][0], nil
}
