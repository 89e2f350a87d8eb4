package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTimeTypeAsPostgres: PostgreSQL's time without time zone (Arrow time64[us]) as
// PostgreSQL answers it: constants and their input forms, time(p) rounding, casts from text,
// timestamps and intervals and to text and interval, time ± interval around midnight, time -
// time, date + time, extract and date_part, comparisons, ordering, grouping, DISTINCT,
// aggregates, windows, joins, CASE/COALESCE and UNION, of constants and of the flights' rows;
// PostgreSQL's errors with its SQLSTATE and message.
func TestTimeTypeAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	var inputs []string
	for _, s := range []string{"06:59", "6:5:3", "06:59:00.5", "06:59:00.", "06:59:00.123456789", "06:59:00.0000005",
		"06:59:00.0000015", "00:00:00.0000025", "24:00", "24:00:00.0000004", "23:59:60", "23:59:59.9999995", "0601",
		"060102", "010203.5", "6:30 pm", "6:30PM", "12:00 am", "12:00 pm", "0:30 am", "06:59+02", "06:59-02:30",
		"06:59+0230", "06:59Z", "06:59 UTC", "06:59 gmt", "2001-04-01 06:59", "2001-04-01 06:59:00+02", "T06:59",
		"  06:59  ", "06:59:", "06:59.5", "allballs", "001:02", "01:02:003", "11:59:59.9999995 pm", "06:59 pm +02",
		"06:59:00.5-02:30:15"} {
		inputs = append(inputs, "('"+s+"')")
	}
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		// Constants, input and output.
		`SELECT (time '06:59')::text, ('06:59:00.5'::time)::text, (time '24:00:00')::text, ('23:59:59.9999995'::time)::text, ('00:00:00.0000015'::time)::text, CAST(TIME '06:59:00.000001' AS text)`,
		`SELECT s, s::time::text, CAST(s AS time)::varchar FROM (VALUES `+strings.Join(inputs, ", ")+`) v(s) ORDER BY 1`,
		`SELECT ('06:59:00.5'::time(0))::text, ('06:59:01.5'::time(0))::text, ('06:59:00.25'::time(1))::text, ('06:59:00.35'::time(1))::text, ('23:59:59.5'::time(0))::text, (time(2) '06:59:00.125')::text, CAST('06:59:00.125' AS time(2))::text, (time '06:59:00.5')::time(0)::text, ('06:59:00.5'::time(6))::text`,
		`SELECT s::time(0)::text, s::time(3)::text, CAST(s AS time(1))::text FROM (VALUES ('06:59:00.5'), ('23:59:59.9995'), ('06:59:00.05'), (NULL)) v(s) ORDER BY 1`,
		// Casts.
		`SELECT (timestamp '2001-04-01 06:59:00.5')::time::text, (timestamptz '2001-04-01 06:59:00.5+02')::time::text, (interval '1 day 02:03:04')::time::text, (interval '-1 hour')::time::text, (interval '25 hours')::time::text, (interval '1 month 3 hours')::time::text, (time '06:59')::interval::text, (time '24:00')::interval::text, (time '06:59:00.000001')::varchar`,
		`SELECT i::time::text, (i::time)::interval::text FROM (VALUES (interval '-1 hour'), (interval '49 hours 30 minutes'), (interval '-25 hours -1 microsecond'), (NULL)) v(i) ORDER BY 1`,
		// Operators.
		`SELECT (time '23:00' + interval '2 hours')::text, (time '01:00' - interval '2 hours')::text, (interval '2 hours' + time '23:00')::text, (time '01:00' - interval '1 day 3 months 2 hours')::text, (time '06:59' - time '07:00')::text, (time '24:00' - time '00:00')::text, (time '24:00' + interval '0')::text, (time '06:59' + interval '-25 hours')::text, (time '00:00' - interval '1 microsecond')::text`,
		`SELECT (date '2001-04-01' + time '06:59')::text, (time '06:59' + date '2001-04-01')::text, (date '2001-04-01' - time '06:59')::text, (date '2001-04-01' + time '24:00')::text, (date '2001-04-01' + NULL::time)::text`,
		`SELECT (time '06:59' + '1 hour')::text, (time '06:59' - '06:00')::text, ('07:00' - time '06:59')::text, ('1 hour' + time '06:59')::text, (interval '1 day' - time '01:00')::text, (interval '1 day' + time '01:00')::text, (- time '01:00')::text, (time '06:59' * 2.5)::text, (time '06:59' / 2)::text, (2 * time '06:59')::text`,
		`SELECT (timestamp '2001-04-01 00:00' + time '06:59')::text, (timestamp '2001-04-01 00:00' - time '06:59')::text, (time '06:59' + timestamp '2001-04-01')::text, (timestamptz '2001-04-01 00:00+00' + time '06:59')::text`,
		`SELECT time '06:59' < time '07:00', time '06:59' = '06:59:00', time '06:59' IN ('06:59', '07:00'), time '06:59' BETWEEN '06:00' AND '07:00', time '06:59' = interval '06:59', time '06:59' < interval '1 day', time '24:00' > '23:59:59.999999', time '06:59' <> '06:59:00.0000004', time '06:59' IS DISTINCT FROM NULL`,
		`SELECT coalesce(NULL, time '06:59')::text, (CASE WHEN true THEN time '06:59' ELSE '07:00' END)::text, greatest(time '06:59', '07:00')::text, least(time '06:59', NULL)::text, nullif(time '06:59', '06:59')::text, time '06:59' || 'x', 'at ' || time '06:59:00.5'`,
		// extract and date_part.
		`SELECT extract(hour from time '06:59:07.5')::text, extract(minute from time '06:59:07.5')::text, extract(second from time '06:59:07.5')::text, extract(epoch from time '06:59:07.5')::text, extract(microsecond from time '06:59:07.5')::text, extract(millisecond from time '06:59:07.5')::text, extract(secs from time '06:59:07.5')::text, extract(hour from time '24:00')::text, extract(epoch from time '24:00')::text`,
		`SELECT date_part('hour', time '06:59:07.5'), date_part('epoch', time '06:59:07.5'), date_part('second', time '06:59:07.5'), date_part('microseconds', time '06:59:07.5'), date_part('msec', time '06:59:07.5')`,
		`SELECT to_char(time '06:59:07.5', 'HH24:MI:SS.MS'), justify_hours(time '06:59')::text, sum(t)::text, avg(t)::text FROM (VALUES (time '06:59'), ('07:00:00.5')) v(t)`,
		// Rows: ordering, grouping, DISTINCT, aggregates, windows, joins, set operations.
		`SELECT t::text FROM (VALUES (time '06:59'), ('07:00'), (NULL), ('24:00'), ('00:00'), ('06:59:00.5')) v(t) ORDER BY t`,
		`SELECT t::text FROM (VALUES (time '06:59'), ('07:00'), (NULL), ('24:00'), ('00:00'), ('06:59:00.5')) v(t) ORDER BY t DESC NULLS LAST`,
		`SELECT DISTINCT t::text FROM (VALUES (time '06:59'), ('06:59:00'), ('07:00'), (NULL)) v(t) ORDER BY 1`,
		`SELECT t::text, count(*) FROM (VALUES (time '06:59'), ('06:59:00'), ('07:00'), (NULL)) v(t) GROUP BY t ORDER BY t`,
		`SELECT min(t)::text, max(t)::text, count(t), count(DISTINCT t) FROM (VALUES (time '06:59'), ('07:00'), (NULL), ('24:00'), ('06:59:00')) v(t)`,
		`SELECT t::text, row_number() OVER (ORDER BY t), lag(t) OVER (ORDER BY t)::text, max(t) OVER (ORDER BY t)::text FROM (VALUES (time '06:59'), ('07:00'), ('24:00'), ('00:00:00.5')) v(t) ORDER BY t`,
		`SELECT a.t::text, b.n FROM (VALUES (time '06:59'), ('07:00')) a(t) JOIN (VALUES ('06:59:00'::time, 1), ('08:00', 2)) b(t, n) ON a.t = b.t`,
		`SELECT t::text FROM (SELECT time '06:59' AS t UNION SELECT '07:00' UNION SELECT time '06:59:00') u ORDER BY t`,
		`SELECT t::text FROM (SELECT time '06:59' AS t UNION ALL SELECT localtime - localtime + time '01:00') u ORDER BY t`,
		`SELECT s::time::text FROM (VALUES ('06:59'), ('bad'), ('07:00')) v(s) WHERE s < 'a' ORDER BY 1`,
		`SELECT localtime IS NOT NULL, localtime(0) <= '24:00', localtime(2) >= time '00:00'`,
	)...)
	// The result's column type is time (Arrow time64[us]), as PostgreSQL's.
	comparePG(t, ctx, pg, one(cl), nonEmptyTyped(
		`SELECT time '06:59', '06:59:00.5'::time, NULL::time, time '24:00', timestamp '2001-04-01 06:59:00.25'::time, time '06:59' + interval '1 hour'`,
		`SELECT t, t + interval '90 minutes', min(t) OVER () FROM (VALUES (time '06:59'), ('23:00'), (NULL)) v(t) ORDER BY t`,
	)...)
	// PostgreSQL's errors, in its words.
	for q, code := range map[string]string{
		`SELECT '24:00:00.1'::time`: "22008", `SELECT '25:00'::time`: "22008", `SELECT time '12:60'`: "22008",
		`SELECT 'abc'::time`: "22007", `SELECT '-01:00'::time`: "22007", `SELECT '06:59+16'::time`: "22009",
		`SELECT ''::time`: "22007", `SELECT '13:00 pm'::time`: "22008", `SELECT '12345'::time`: "22007",
		`SELECT '06:59 apr'::time`: "22007", `SELECT '06:59 Europe/Paris'::time`: "22007",
		`SELECT date '2001-04-01'::time`: "42846", `SELECT time '06:59'::date`: "42846",
		`SELECT time '06:59'::int`: "42846", `SELECT 5::time`: "42846", `SELECT time '06:59'::timestamp`: "42846",
		`SELECT time '06:59' + time '01:00'`: "42725", `SELECT time '06:59' + 1`: "42883",
		`SELECT time '06:59' % 2`: "42883", `SELECT time '06:59' < '07:00'::text`: "42883",
		`SELECT time '06:59' = 1`: "42883", `SELECT extract(foo from time '06:59')`: "22023",
		`SELECT time '06:59' - '1 hour'`: "22007", `SELECT '2001-01-01' + time '06:59'`: "22007",
		`SELECT s::time FROM (VALUES ('06:59'), ('bad')) v(s)`:      "22007",
		`SELECT s::time FROM (VALUES ('06:59'), ('24:00:01')) v(s)`: "22008",
		`SELECT + time '06:59'`:                                     "42883", `SELECT time '06:59'::json`: "42846",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, code)
	}
	// PostgreSQL's 0A000: the fields of a timestamp a time has not.
	for _, q := range []string{`SELECT extract(day from time '06:59')`, `SELECT date_part('dow', time '06:59')`,
		`SELECT extract(timezone_hour from time '06:59')`, `SELECT extract(quarter from time '06:59')`} {
		var pgErr *pgconn.PgError
		if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
			t.Fatalf("PostgreSQL %s: %v, want 0A000", q, err)
		}
		if _, err := run(ctx, cl, q); status.Code(err) != codes.Unimplemented || status.Convert(err).Message() != pgErr.Message {
			t.Errorf("%s: %v, want UNIMPLEMENTED with PostgreSQL's %q", q, err, pgErr.Message)
		}
	}
	// Refused by name: what PostgreSQL reads that flightsrv does not (0A000).
	for _, q := range []string{`SELECT current_time`, `SELECT 'now'::time`, `SELECT '06:59 EST'::time`, `SELECT time with time zone '06:59'`,
		`SELECT date_trunc('hour', time '06:59')`, `SELECT time '06:59' AT TIME ZONE 'UTC'`,
		`SELECT array_agg(t) FROM (VALUES (time '06:59')) v(t)`, `SELECT mode() WITHIN GROUP (ORDER BY t) FROM (VALUES (time '06:59')) v(t)`} {
		if _, err := run(ctx, cl, q); status.Code(err) != codes.Unimplemented {
			t.Errorf("%s: %v, want UNIMPLEMENTED", q, err)
		}
	}

	// Over rows: the flights' timestamps as times of day, the same rows in PostgreSQL.
	from := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "time_rows", "SELECT id, timestamp::text, value->>'delay'"+from, "id text", "ts timestamptz", "delay int")
	ours := strings.NewReplacer("{TS}", "timestamp", "{DELAY}", "(value->>'delay')::int", "{FROM}", from)
	theirs := strings.NewReplacer("{TS}", "ts", "{DELAY}", "delay", "{FROM}", " FROM time_rows WHERE true")
	var rows []pgCase
	for _, q := range []string{
		`SELECT id, {TS}::time::text, ({TS}::time + interval '90 minutes')::text, ({TS}::time - time '12:00')::text, (({TS})::date + {TS}::time)::text, extract(hour from {TS}::time)::text, extract(epoch from {TS}::time)::text {FROM} ORDER BY id`,
		`SELECT {TS}::time::text AS t, count(*) {FROM} GROUP BY {TS}::time ORDER BY {TS}::time DESC`,
		`SELECT extract(hour from {TS}::time)::text, count(*), min({TS}::time)::text, max({TS}::time)::text {FROM} GROUP BY 1 ORDER BY 1`,
		`SELECT id, {TS}::time::text {FROM} AND {TS}::time BETWEEN '06:00' AND '09:30' ORDER BY {TS}::time, id`,
		`SELECT DISTINCT ({TS}::time(0) - interval '1 minute' * {DELAY})::text AS t {FROM} AND {DELAY} > 30 ORDER BY 1`,
		`SELECT id, {TS}::time::text, rank() OVER (PARTITION BY extract(hour from {TS}::time) ORDER BY {TS}::time)::text {FROM} ORDER BY id`,
	} {
		rows = append(rows, pgCase{ours: ours.Replace(q), theirs: theirs.Replace(q)})
	}
	if n := comparePG(t, ctx, pg, one(cl), rows...); n < 500 {
		t.Errorf("only %d rows compared", n)
	}
}

// TestTimeParametersAsPostgres: a parameter of type time (CAST(? AS time)) is declared
// time32[ms] (the JDBC driver's setTime fills milliseconds); a bound time64[us] (ADBC's datetime.time) or time32[ms] (the JDBC driver's
// setTime) value is a time of day and declares an untyped parameter time, and a bound string
// is read as time_in reads it: each answers as PostgreSQL answers the same time.
func TestTimeParametersAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	stmt, err := cl.Prepare(ctx, "SELECT CAST(? AS time)::text")
	if err != nil {
		t.Fatal(err)
	}
	if ps := stmt.ParameterSchema(); ps == nil || ps.NumFields() != 1 || !arrow.TypeEqual(ps.Field(0).Type, arrow.FixedWidthTypes.Time32ms) {
		t.Errorf("parameter schema %v, want one time32[ms]", ps)
	}
	stmt.Close(ctx)
	for _, tc := range []struct {
		ours, theirs string
		typ          arrow.DataType
		val          any
	}{
		{"SELECT CAST(? AS time)::text", "SELECT CAST('06:59:00.5' AS time)::text", arrow.FixedWidthTypes.Time64us, arrow.Time64(25_140_500_000)},
		{"SELECT ?::text", "SELECT '06:59:00.5'::time::text", &arrow.Time32Type{Unit: arrow.Millisecond}, arrow.Time32(25_140_500)},
		{"SELECT (? + interval '1 hour')::text", "SELECT (time '23:30' + interval '1 hour')::text", arrow.FixedWidthTypes.Time64us, arrow.Time64(84_600_000_000)},
		{"SELECT (? - time '01:00')::text", "SELECT (time '00:30' - time '01:00')::text", &arrow.Time32Type{Unit: arrow.Millisecond}, arrow.Time32(1_800_000)},
		{"SELECT CAST(? AS time)::text", "SELECT CAST('6:30 pm' AS time)::text", arrow.BinaryTypes.String, "6:30 pm"},
		{"SELECT extract(minute from CAST(? AS time))::text", "SELECT extract(minute from time '06:59')::text", arrow.FixedWidthTypes.Time64us, arrow.Time64(25_140_000_000)},
	} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "$1", Type: tc.typ, Nullable: true}}, nil))
		switch x := tc.val.(type) {
		case arrow.Time64:
			b.Field(0).(*array.Time64Builder).Append(x)
		case arrow.Time32:
			b.Field(0).(*array.Time32Builder).Append(x)
		case string:
			b.Field(0).(*array.StringBuilder).Append(x)
		}
		rec := b.NewRecordBatch()
		b.Release()
		stmt, err := cl.Prepare(ctx, tc.ours)
		if err != nil {
			t.Fatalf("%s: prepare: %v", tc.ours, err)
		}
		stmt.SetParameters(rec)
		info, err := stmt.Execute(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.ours, err)
		}
		got, err := fetch(ctx, cl, info)
		if err != nil {
			t.Fatalf("%s: %v", tc.ours, err)
		}
		compareText(t, tc.ours, textColumns(got), pgTextRows(t, ctx, pg, tc.theirs))
		stmt.Close(ctx)
		rec.Release()
	}
}
