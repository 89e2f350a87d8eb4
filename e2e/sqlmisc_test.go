package e2e

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// textColumns returns every column of res as text rows (NULL as "<null>"), in order.
func textColumns(res *result) [][]string {
	var out [][]string
	for _, rec := range res.recs {
		for r := range int(rec.NumRows()) {
			row := make([]string, rec.NumCols())
			for c := range row {
				col := rec.Column(c)
				switch {
				case col.IsNull(r):
					row[c] = "<null>"
				default:
					if s, ok := col.(*array.String); ok {
						row[c] = s.Value(r)
					} else {
						row[c] = col.ValueStr(r)
					}
				}
			}
			out = append(out, row)
		}
	}
	return out
}

// pgTextRows returns PostgreSQL's answer to q (its columns cast to text by the caller) as text
// rows, NULL as "<null>".
func pgTextRows(t *testing.T, ctx context.Context, pg *pgx.Conn, q string, args ...any) [][]string {
	t.Helper()
	rows, err := pg.Query(ctx, q, args...)
	if err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = pgCell(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	return out
}

// pgCell is a PostgreSQL value as pgTextRows writes it: NULL as "<null>", a double by its
// shortest digits.
func pgCell(v any) string {
	switch x := v.(type) {
	case nil:
		return "<null>"
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// pgTableOf runs query through flightsrv and stores its rows, as text, in PostgreSQL's
// temporary table named table, each column cast as cols says ("dest text", "delay int"…, one
// per column of the query): PostgreSQL then holds the same rows as flightsrv read. It fails
// the test below min rows.
func pgTableOf(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, min int, table, query string, cols ...string) {
	t.Helper()
	rows := textColumns(mustRun(t, cl, query))
	if len(rows) < min {
		t.Fatalf("%s: only %d rows", query, len(rows))
	}
	arrays := make([]any, len(cols))
	var sel, params, names []string
	for c, def := range cols {
		name, typ, _ := strings.Cut(def, " ")
		vals := make([]*string, len(rows))
		for i, r := range rows {
			vals[i] = nullText(r[c])
		}
		arrays[c] = vals
		params = append(params, fmt.Sprintf("$%d::text[]", c+1))
		names = append(names, fmt.Sprintf("c%d", c))
		sel = append(sel, fmt.Sprintf("c%d::%s AS %s", c, typ, name))
	}
	sql := fmt.Sprintf("CREATE TEMP TABLE %s AS SELECT %s FROM unnest(%s) AS r(%s)", table, strings.Join(sel, ", "), strings.Join(params, ", "), strings.Join(names, ", "))
	if _, err := pg.Exec(ctx, sql, arrays...); err != nil {
		t.Fatal(err)
	}
}

// compareNumbers runs ours through flightsrv and theirs on PostgreSQL and compares the rows,
// numbers to 1e-12 relative (sameNumberText); it fails the test when the row counts differ or,
// unless mayBeEmpty, when there are none, and returns PostgreSQL's rows.
func compareNumbers(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, ours, theirs string, mayBeEmpty bool) int {
	t.Helper()
	got, want := textColumns(mustRun(t, cl, ours)), pgTextRows(t, ctx, pg, theirs)
	if len(got) != len(want) || len(got) == 0 && !mayBeEmpty {
		t.Fatalf("%.80s: %d rows, PostgreSQL %d", ours, len(got), len(want))
	}
	for i := range got {
		for j := range want[i] {
			if j >= len(got[i]) || !sameNumberText(got[i][j], want[i][j]) {
				t.Errorf("%.80s… row %d column %d: %q, PostgreSQL %q", ours, i, j, got[i], want[i])
				return len(want)
			}
		}
	}
	return len(want)
}

// refusedAs checks that each query is refused with code and a message containing its text.
func refusedAs(t *testing.T, ctx context.Context, cl *flightsql.Client, code codes.Code, queries map[string]string) {
	t.Helper()
	for q, msg := range queries {
		if _, err := run(ctx, cl, q); status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), msg) {
			t.Errorf("%s: %v, want %v %q", q, err, code, msg)
		}
	}
}

// refusedAsPostgres checks that PostgreSQL refuses q with SQLSTATE sqlstate and flightsrv with
// INVALID_ARGUMENT and PostgreSQL's message, or its beginning (flightsrv leaves out the
// detail PostgreSQL's regular expression engine adds after a colon).
func refusedAsPostgres(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q, sqlstate string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != sqlstate {
		t.Fatalf("PostgreSQL %s: %v, want SQLSTATE %s", q, err, sqlstate)
	}
	if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() == "" ||
		!strings.HasPrefix(pgErr.Message, status.Convert(err).Message()) {
		t.Errorf("%s: %v, want INVALID_ARGUMENT with PostgreSQL's %q", q, err, pgErr.Message)
	}
}

// pgTextRowsErr runs q on PostgreSQL and returns its error, reading every row.
func pgTextRowsErr(ctx context.Context, pg *pgx.Conn, q string) (int, error) {
	rows, err := pg.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

// compareText compares flightsrv's text rows with PostgreSQL's.
func compareText(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, PostgreSQL %d", what, len(got), len(want))
		return
	}
	for i := range got {
		for j := range want[i] {
			if j >= len(got[i]) || got[i][j] != want[i][j] {
				g := "<missing>"
				if j < len(got[i]) {
					g = got[i][j]
				}
				t.Errorf("%s: row %d column %d: %q, PostgreSQL %q", what, i, j, g, want[i][j])
				return
			}
		}
	}
}

// TestTimeZonesAsPostgres: AT TIME ZONE and timezone() in both directions (timestamp with
// time zone → the wall clock, timestamp without time zone → the instant), with IANA zones
// around their daylight-saving transitions (times in a spring-forward gap and a fall-back
// overlap), fixed abbreviations, POSIX offsets (west-positive, as PostgreSQL reads them) and
// interval zones; date_trunc in a zone; a wall clock's text, date_trunc, extract and to_char.
// Over constants and over the rows of ORD's March and April 2001 (the US spring-forward on
// April 1st), each value is PostgreSQL's for the same inputs; unsupported zone forms are
// refused by name.
func TestTimeZonesAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	instants := []string{"2018-03-11 06:59:59.999999+00", "2018-03-11 07:00:00+00", "2018-11-04 05:30:00+00", "2018-11-04 06:30:00+00",
		"2001-03-25 00:59:59+00", "2001-03-25 01:00:00+00", "2001-10-28 00:30:00+00", "2001-10-28 01:30:00+00", "1970-01-01 00:00:00+00",
		"2001-04-07 15:20:00.123456+00", "1901-12-13 20:45:52+00", "2100-06-30 23:59:59+00"}
	walls := []string{"2018-03-11 02:30:00", "2018-03-11 03:00:00", "2018-11-04 01:30:00", "2018-11-04 00:59:59.5", "2001-03-25 02:30:00",
		"2001-10-28 02:30:00", "2001-04-01 02:00:00", "2001-04-01 01:59:59", "2014-10-26 01:30:00", "2001-01-01 00:00:00"}
	zones := []string{"'America/New_York'", "'Europe/Paris'", "'Europe/London'", "'Australia/Lord_Howe'", "'Asia/Kolkata'",
		"'America/Sao_Paulo'", "'Europe/Moscow'", "'Pacific/Chatham'", "'UTC'", "'utc'", "'GMT'", "'Z'", "'EST'", "'pst'", "'PDT'",
		"'europe/paris'", "'America/Argentina/Buenos_Aires'", "'Etc/GMT+5'", "'+05'", "'-03:30'", "'UTC+5'", "'GMT-2'",
		"INTERVAL '-08:00'", "INTERVAL '+05:30'"}
	for _, z := range zones {
		var sel []string
		for _, at := range instants {
			sel = append(sel, "(TIMESTAMPTZ '"+at+"' AT TIME ZONE "+z+")::text", "timezone("+z+", '"+at+"'::timestamptz)::text")
		}
		for _, w := range walls {
			sel = append(sel, "(TIMESTAMP '"+w+"' AT TIME ZONE "+z+")::text")
		}
		q := "SELECT " + strings.Join(sel, ", ")
		compareText(t, z, textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))
	}
	for _, z := range []string{"'America/New_York'", "'Europe/Paris'", "'Australia/Lord_Howe'", "'Asia/Kolkata'", "'+05'"} {
		var sel []string
		for _, at := range instants {
			for _, unit := range []string{"hour", "day", "week", "month", "year"} {
				sel = append(sel, "date_trunc('"+unit+"', TIMESTAMPTZ '"+at+"', "+z+")::text")
			}
			w := "(TIMESTAMPTZ '" + at + "' AT TIME ZONE " + z + ")"
			sel = append(sel, "date_trunc('day', "+w+")::text", "extract(hour FROM "+w+")::text", "to_char("+w+", 'YYYY-MM-DD HH24:MI:SS Dy')", "to_char("+w+", 'HH \"TZ=\"TZ tz OF TZH:TZM FMOF')",
				"("+w+" < TIMESTAMP '2001-04-01 12:00')::text", "("+w+" AT TIME ZONE 'UTC')::text", "("+w+"::timestamptz)::text",
				"(TIMESTAMPTZ '"+at+"'::timestamp)::text")
		}
		q := "SELECT " + strings.Join(sel, ", ")
		compareText(t, "date_trunc in "+z, textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))
	}

	// Over rows: the same expressions over ORD's flights, and grouped by the local day.
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-03'"
	exprs := "(timestamp AT TIME ZONE 'America/Chicago')::text, date_trunc('day', timestamp, 'America/Chicago')::text, " +
		"date_trunc('hour', timestamp AT TIME ZONE 'Europe/Paris')::text, ((timestamp AT TIME ZONE 'America/Chicago') AT TIME ZONE 'America/New_York')::text"
	res := mustRun(t, cl, "SELECT timestamp, "+exprs+where+" ORDER BY timestamp, id")
	var ats []time.Time
	for _, rec := range res.recs {
		col := rec.Column(0).(*array.Timestamp)
		for i := range col.Len() {
			ats = append(ats, col.Value(i).ToTime(arrow.Nanosecond))
		}
	}
	if len(ats) < 100 {
		t.Fatalf("only %d rows", len(ats))
	}
	got := textColumns(res)
	for i := range got {
		got[i] = got[i][1:]
	}
	pgq := "SELECT " + strings.ReplaceAll(exprs, "timestamp", "ts") + " FROM unnest($1::timestamptz[]) WITH ORDINALITY AS r(ts, n) ORDER BY ts, n"
	pgq = strings.ReplaceAll(pgq, "ts AT TIME ZONE", "ts AT TIME ZONE")
	compareText(t, "over rows", got, pgTextRows(t, ctx, pg, pgq, ats))
	grouped := mustRun(t, cl, "SELECT date_trunc('day', timestamp AT TIME ZONE 'America/Chicago')::text AS d, count(*), min(timestamp AT TIME ZONE 'America/Chicago')::text"+where+" GROUP BY 1 ORDER BY 1")
	compareText(t, "grouped by local day", textColumns(grouped),
		pgTextRows(t, ctx, pg, "SELECT date_trunc('day', ts AT TIME ZONE 'America/Chicago')::text AS d, count(*)::text, min(ts AT TIME ZONE 'America/Chicago')::text FROM unnest($1::timestamptz[]) ts GROUP BY 1 ORDER BY 1", ats))

	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT now() AT TIME ZONE 'CET'": "time zone abbreviations other than UTC",
		// current_user is a text constant, read as a zone name as 'flightsrv' is.
		"SELECT now() AT TIME ZONE current_user":     "time zone abbreviations other than UTC",
		"SELECT now() AT TIME ZONE INTERVAL '1 day'": "interval time zones other than INTERVAL '±hh:mm[:ss]' are not supported",
	})
	if _, err := run(ctx, cl, "SELECT now() AT TIME ZONE 'Mars/Olympus_Mons'"); status.Code(err) != codes.InvalidArgument ||
		status.Convert(err).Message() != `time zone "Mars/Olympus_Mons" not recognized` {
		t.Errorf("unknown zone: %v", err)
	}
}

// TestStatisticalAggregatesAsPostgres: stddev, stddev_samp, stddev_pop, variance, var_samp,
// var_pop (double precision), bool_and, bool_or and every, with FILTER, grouped and not, over
// ORD's March (archived) and April (hot) 2001 — partial states merged across the fragments —
// answer what PostgreSQL answers over the same rows in a table (floats to 1e-12 relative, the
// order of summation aside; NULLs, counts and booleans exactly), their DISTINCT forms of
// doubles and reals too (float8_accum over each group's distinct values, gathered across the
// fragments). DISTINCT variances of integers are refused by name (numeric in PostgreSQL).
func TestStatisticalAggregatesAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	where := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "stat_rows", "SELECT value->>'destination', value->>'delay'"+where, "dest text", "delay float8")
	aggs := "count(*), stddev(X), stddev_samp(X), stddev_pop(X), variance(X), var_samp(X), var_pop(X), stddev(X) FILTER (WHERE X > 30), " +
		"stddev(DISTINCT X), var_pop(DISTINCT X), variance(DISTINCT X) FILTER (WHERE X > 0), stddev_pop(DISTINCT X::real), " +
		"var_pop(X) FILTER (WHERE X > 1e9), var_samp(X) FILTER (WHERE X = 0), bool_and(X > -30), bool_or(X > 300), every(X >= 0), bool_or(X > 0) FILTER (WHERE X IS NULL)"
	ours := strings.ReplaceAll(aggs, "X", "(value->>'delay')::float8")
	theirs := strings.ReplaceAll(aggs, "X", "delay")
	comparePG(t, ctx, pg, one(cl), pairCases(pgNumbers, [][2]string{
		{"SELECT " + ours + where, "SELECT " + theirs + " FROM stat_rows"},
		{"SELECT value->>'destination' AS d, " + ours + where + " GROUP BY 1 ORDER BY 1", "SELECT dest AS d, " + theirs + " FROM stat_rows GROUP BY 1 ORDER BY 1"},
	})...)
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT stddev(DISTINCT (value->>'delay')::int)" + where: "stddev(DISTINCT …) of integers or numerics is not supported",
	})
}

func nullText(s string) *string {
	if s == "<null>" {
		return nil
	}
	return &s
}

// sameNumberText compares two values as text, numbers to 1e-12 relative (PostgreSQL's float8
// text and Go's differ in notation; the order of floating-point summation in the last bits),
// booleans in either spelling.
func sameNumberText(got, want string) bool {
	if got == want {
		return true
	}
	switch want {
	case "t":
		return got == "true"
	case "f":
		return got == "false"
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return g == w || math.Abs(g-w) <= 1e-12*math.Max(math.Abs(w), 1e-300)
}

// TestRegularExpressionsAsPostgres: ~, ~*, !~, !~* and regexp_replace (flags g, i, c;
// replacement references \1, \&, \\) over constants — anchors, classes, brackets, newlines,
// alternation (leftmost-longest), empty matches, multi-byte text — and over ORD's rows answer
// PostgreSQL's values; what RE2 reads otherwise or lacks is refused by name, an invalid
// pattern with PostgreSQL's SQLSTATE 2201B.
func TestRegularExpressionsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	inputs := []string{"", "abc", "ABC def", "a\nb", "xaaay", "hello world", "ÄbC déF", "foo123bar45", "a.b*c", "ab|cd", "[x]"}
	patterns := []string{"^a", "c$", "b.c", "a.b", "^$", "[[:digit:]]+", "\\d+", "\\s", "\\w+", "[^a-z]", "a|ab", "(a|ab)(c|bcd)?", "a*",
		"x*", "(o)(o|r)?", "[]x]", "[.]", "\\.", "é", "^(?:[a-z]+ )+[a-z]+$", "a{2,3}", "[[:upper:]]"}
	ascii := func(s string) bool { return strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 }) < 0 }
	for _, in := range inputs {
		var sel []string
		for _, p := range patterns {
			s, pq := quote(in), quote(p)
			if ascii(in) || !strings.ContainsAny(p, "\\:") {
				sel = append(sel, "("+s+" ~ "+pq+")::text", "("+s+" !~ "+pq+")::text", "regexp_replace("+s+", "+pq+", '<\\&>')", "regexp_replace("+s+", "+pq+", '[\\&]', 'g')")
			}
			if ascii(in) && ascii(p) {
				sel = append(sel, "("+s+" ~* "+pq+")::text", "("+s+" !~* "+pq+")::text", "regexp_replace("+s+", "+pq+", '_', 'gi')")
			}
		}
		q := "SELECT " + strings.Join(sel, ", ")
		compareText(t, "over "+quote(in), textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))
	}
	q := `SELECT regexp_replace('2001-04-07', '(\d+)-(\d+)-(\d+)', '\3/\2/\1'), regexp_replace('aaa', 'a*', '-', 'g'), regexp_replace('abc', 'x*', '-', 'g'), regexp_replace('aaa', '^a', 'b', 'g'), regexp_replace('abab ab', '\\mab', '-', 'g'), regexp_replace('ab ab', '\\yab\\y', '-', 'g'), regexp_replace(E'a\\na', '^a', 'b', 'g'), regexp_replace('a b', '\\b', '.', 'g'),` +
		` regexp_replace('a\b', 'b', '\\x\q'), regexp_replace('ABC', 'b', 'x', 'ic'), regexp_replace('ABC', 'b', 'x', 'ci'), regexp_replace(NULL, 'a', 'b')`
	compareText(t, "replacements", textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))

	// Over rows.
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-03'"
	res := mustRun(t, cl, "SELECT id, value->>'destination', (value->>'destination' ~ '^[A-M]')::text, (id ~* '7$')::text, regexp_replace(value->>'destination', '[AEIOU]', '*', 'g')"+where+" ORDER BY timestamp, id")
	got := textColumns(res)
	if len(got) < 100 {
		t.Fatalf("only %d rows", len(got))
	}
	var ids, dests []string
	for _, r := range got {
		ids, dests = append(ids, r[0]), append(dests, r[1])
	}
	compareText(t, "over rows", got, pgTextRows(t, ctx, pg, "SELECT i, d, (d ~ '^[A-M]')::text, (i ~* '7$')::text, regexp_replace(d, '[AEIOU]', '*', 'g') FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS r(i, d, n) ORDER BY n", ids, dests))

	for q, msg := range map[string]string{
		`SELECT 'aa' ~ '(a)\1'`:                         `regular expressions with backreferences (\1 … \9) are not supported`,
		`SELECT 'ab' ~ 'a(?=b)'`:                        "regular expressions with lookaround ((?=, (?!, (?<=, (?<!) are not supported",
		`SELECT 'a b' ~ 'a\bb'`:                         `regular expressions with the escape \b are not supported`,
		`SELECT 'a -' ~ '\m-'`:                          `regular expressions with a start of word (\m, [[:<:]]) before other than a word character are not supported`,
		`SELECT 'a -' ~ '[[:<:]]'`:                      "",
		`SELECT regexp_replace('aab', '^a*', '-', 'g')`: "regexp_replace with flag g of a pattern that can match the empty string beside an anchor or a word boundary is not supported",
		`SELECT regexp_replace('abc', 'a.*?c', 'x')`:    "regular expressions with non-greedy quantifiers where the match itself is used (regexp_replace, regexp_match, substring, SIMILAR TO) are not supported",
		`SELECT regexp_replace('abc', '(a|b)', '\1x')`:  "regexp_replace of a pattern with alternatives (|) and a replacement referring to its subexpressions is not supported",
		`SELECT regexp_replace('abc', 'a', 'x', 'b')`:   "regular expressions with the options b and e (basic and extended syntax) are not supported",
		`SELECT id ~ id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02'`: "operator ~ with a pattern that is not a constant is not supported",
		`SELECT substring('abc' FROM 'b.' FOR '#')`: "substring(… FROM pattern FOR escape) (a SIMILAR pattern) is not supported",
		`SELECT regexp_matches('abc', 'b')`:         "function regexp_matches is not supported",
	} {
		_, err := run(ctx, cl, q)
		if msg == "" {
			// Refused one way or another, never answered: a word start before nothing.
			if err == nil {
				t.Errorf("%s: answered, want a refusal", q)
			}
			continue
		}
		if status.Code(err) != codes.Unimplemented || status.Convert(err).Message() != msg {
			t.Errorf("%s: %v, want UNIMPLEMENTED %q", q, err, msg)
		}
	}
	refusedAsPostgres(t, ctx, cl, pg, "SELECT 'a' ~ 'a('", "2201B")
}

// TestDateArithmeticAsPostgres: date - date (integer days), date ± integer and integer + date,
// date ± interval (a timestamp without time zone) over constants and ORD's rows answer
// PostgreSQL's values, so does timestamp - timestamp (an
// interval, as text), and a sum(bigint) whose total passes bigint's range answers
// PostgreSQL's numeric total.
func TestDateArithmeticAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	q := "SELECT ('2001-04-01'::date - '2001-03-01'::date)::text, (DATE '2001-03-01' - DATE '2001-04-15')::text, (DATE '2001-02-28' + 1)::text, " +
		"(1 + DATE '2000-02-28')::text, (DATE '2001-03-01' - 1)::text, (DATE '2001-03-01' - '2000-03-01')::text, (DATE '2001-01-01' + 365 * 4)::text, " +
		"(NULL::date - DATE '2001-01-01')::text, (DATE '1970-01-01' - DATE '1900-01-01')::text"
	compareText(t, "constants", textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02'"
	res := mustRun(t, cl, "SELECT timestamp, (timestamp::date - DATE '2001-01-01')::text, (timestamp::date - 30)::text, (DATE '2001-12-25' - timestamp::date)::text"+where+" ORDER BY timestamp, id")
	var ats []time.Time
	for _, rec := range res.recs {
		c := rec.Column(0).(*array.Timestamp)
		for i := range c.Len() {
			ats = append(ats, c.Value(i).ToTime(arrow.Nanosecond))
		}
	}
	got := textColumns(res)
	for i := range got {
		got[i] = got[i][1:]
	}
	if len(got) < 100 {
		t.Fatalf("only %d rows", len(got))
	}
	compareText(t, "over rows", got, pgTextRows(t, ctx, pg, "SELECT (ts::date - DATE '2001-01-01')::text, (ts::date - 30)::text, (DATE '2001-12-25' - ts::date)::text FROM unnest($1::timestamptz[]) WITH ORDINALITY AS r(ts, n) ORDER BY n", ats))

	// date ± interval and interval + date are timestamps without time zone (months on the
	// calendar, the day clamped to the month's end), over constants and rows, and so is a
	// TIMESTAMP constant ± interval (its text has no zone).
	q = "SELECT (DATE '2001-01-31' + INTERVAL '1 month')::text, (INTERVAL '1 month 2 days 03:04:05.5' + DATE '2000-02-29')::text, " +
		"(DATE '2001-03-01' - INTERVAL '1 day 1 second')::text, (DATE '2001-03-01' - INTERVAL '1.5 months')::text, " +
		"(DATE '2001-01-01' + INTERVAL '1 day' * 3)::text, (DATE '2001-01-01' + '1 day'::interval)::text, (NULL::date + INTERVAL '1 day')::text, " +
		"(DATE '2001-01-01' + INTERVAL '1 day') = TIMESTAMP '2001-01-02', (DATE '2001-01-01' + INTERVAL '1 day') > TIMESTAMPTZ '2001-01-01 12:00+00', " +
		"(TIMESTAMP '2001-01-31 10:00' + INTERVAL '1 month')::text, (TIMESTAMP '2001-01-31 10:00' - INTERVAL '1 year')::text"
	compareText(t, "date ± interval constants", textColumns(mustRun(t, cl, q)), pgTextRows(t, ctx, pg, q))
	res = mustRun(t, cl, "SELECT timestamp, (timestamp::date + INTERVAL '1 day')::text, (CAST(timestamp AS date) - INTERVAL '1 month 1 hour')::text, "+
		"(INTERVAL '1 month' + timestamp::date)::text, date_trunc('month', timestamp::date + INTERVAL '1 month')::text, "+
		"(timestamp::date + (timestamp - TIMESTAMPTZ '2001-03-30 00:00:00+00'))::text"+where+" ORDER BY timestamp, id")
	got = textColumns(res)
	for i := range got {
		got[i] = got[i][1:]
	}
	compareText(t, "date ± interval over rows", got, pgTextRows(t, ctx, pg, "SELECT (ts::date + INTERVAL '1 day')::text, (CAST(ts AS date) - INTERVAL '1 month 1 hour')::text, "+
		"(INTERVAL '1 month' + ts::date)::text, date_trunc('month', ts::date + INTERVAL '1 month')::text, "+
		"(ts::date + (ts - TIMESTAMPTZ '2001-03-30 00:00:00+00'))::text FROM unnest($1::timestamptz[]) WITH ORDINALITY AS r(ts, n) ORDER BY n", ats))

	// timestamp - timestamp is an interval: its text is PostgreSQL's for the same instants.
	res = mustRun(t, cl, "SELECT (timestamp - TIMESTAMPTZ '2001-01-01 00:00:00+00')::text, (TIMESTAMPTZ '2001-03-31 12:00:00+00' - timestamp)::text"+where+" ORDER BY timestamp, id")
	compareText(t, "timestamp - timestamp", textColumns(res), pgTextRows(t, ctx, pg, "SELECT (ts - TIMESTAMPTZ '2001-01-01 00:00:00+00')::text, (TIMESTAMPTZ '2001-03-31 12:00:00+00' - ts)::text FROM unnest($1::timestamptz[]) WITH ORDINALITY AS r(ts, n) ORDER BY n", ats))
	const big = "SELECT sum(v) FROM (SELECT 9223372036854775807::bigint AS v UNION ALL SELECT 1::bigint) t"
	var total string
	if err := pg.QueryRow(ctx, "SELECT sum(v)::text FROM (SELECT 9223372036854775807::bigint AS v UNION ALL SELECT 1::bigint) t").Scan(&total); err != nil || total != "9223372036854775808" {
		t.Fatalf("PostgreSQL: %v %s", err, total)
	}
	// sum(bigint) is numeric, as PostgreSQL types it: the total past bigint's range answers.
	compareText(t, big, textColumns(mustRun(t, cl, "SELECT sum(v)::text FROM (SELECT 9223372036854775807::bigint AS v UNION ALL SELECT 1::bigint) t")), [][]string{{total}})
}

// TestSetOperationsAsPostgres: INTERSECT and EXCEPT of selects over ORD's March (archived) and
// April (hot) rows, with NULLs, several columns, a filter outside them and constants, answer
// PostgreSQL's rows over the same rows in a table (INTERSECT ALL and EXCEPT ALL:
// TestSetOperationsAllAsPostgres).
func TestSetOperationsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	const cols = "value->>'destination' AS dest, ((value->>'delay')::int / 30) AS late"
	month := func(m int) string {
		return fmt.Sprintf(" FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-%02d-01' AND timestamp < '2001-%02d-01'", m, m+1)
	}
	pgTableOf(t, ctx, cl, pg, 1000, "set_rows", "SELECT extract(month FROM timestamp), "+cols+month(3)+" UNION ALL SELECT extract(month FROM timestamp), "+cols+month(4),
		"m int", "dest text", "late int")
	pgMonth := func(m int) string { return fmt.Sprintf(" FROM set_rows WHERE m = %d", m) }
	cases := pairCases(pgNumbers, [][2]string{
		{"SELECT value->>'destination'" + month(3) + " INTERSECT SELECT value->>'destination'" + month(4) + " ORDER BY 1",
			"SELECT dest" + pgMonth(3) + " INTERSECT SELECT dest" + pgMonth(4) + " ORDER BY 1"},
		{"SELECT " + cols + month(3) + " EXCEPT SELECT " + cols + month(4) + " ORDER BY 1, 2 NULLS FIRST",
			"SELECT dest, late" + pgMonth(3) + " EXCEPT SELECT dest, late" + pgMonth(4) + " ORDER BY 1, 2 NULLS FIRST"},
		{"SELECT " + cols + month(4) + " INTERSECT SELECT " + cols + month(3) + " ORDER BY 1, 2 NULLS FIRST",
			"SELECT dest, late" + pgMonth(4) + " INTERSECT SELECT dest, late" + pgMonth(3) + " ORDER BY 1, 2 NULLS FIRST"},
		{"SELECT count(*) FROM (SELECT " + cols + month(3) + " EXCEPT SELECT " + cols + month(4) + ") t WHERE t.dest >= 'M'",
			"SELECT count(*) FROM (SELECT dest, late" + pgMonth(3) + " EXCEPT SELECT dest, late" + pgMonth(4) + ") t WHERE t.dest >= 'M'"},
		{"SELECT 1 AS a, NULL::text AS b UNION SELECT 2, 'x' EXCEPT SELECT 2, 'x' ORDER BY 1", "SELECT 1 AS a, NULL::text AS b UNION SELECT 2, 'x' EXCEPT SELECT 2, 'x' ORDER BY 1"},
		{"SELECT NULL::int INTERSECT SELECT NULL::int", "SELECT NULL::int INTERSECT SELECT NULL::int"},
		{"SELECT 1 INTERSECT SELECT 2", "SELECT 1 INTERSECT SELECT 2"},
		{"SELECT 1.5::float8 EXCEPT SELECT 1", "SELECT 1.5::float8 EXCEPT SELECT 1"},
	})
	for i := range cases {
		cases[i].mayBeEmpty = true
	}
	comparePG(t, ctx, pg, one(cl), cases...)
}

// TestOrderedSetAggregatesAsPostgres: percentile_cont, percentile_disc and mode() WITHIN GROUP
// (ORDER BY x [DESC]) over integers and doubles, with FILTER, grouped and not, over ORD's
// archived March and hot April (the values of every fragment merged), answer PostgreSQL's
// values over the same rows; a fraction outside [0, 1] is PostgreSQL's error, text input and
// a missing WITHIN GROUP are refused.
func TestOrderedSetAggregatesAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	where := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "os_rows", "SELECT value->>'destination', value->>'delay'"+where, "dest text", "delay int")
	aggs := "percentile_cont(0.5) WITHIN GROUP (ORDER BY X), percentile_cont(0.25) WITHIN GROUP (ORDER BY X::float8 DESC), " +
		"percentile_cont(1) WITHIN GROUP (ORDER BY X), percentile_disc(0.9) WITHIN GROUP (ORDER BY X), percentile_disc(0) WITHIN GROUP (ORDER BY X), " +
		"percentile_disc(0.5) WITHIN GROUP (ORDER BY X::float8 / 7), mode() WITHIN GROUP (ORDER BY X), mode() WITHIN GROUP (ORDER BY X DESC), " +
		"percentile_cont(0.75) WITHIN GROUP (ORDER BY X) FILTER (WHERE X > 0), mode() WITHIN GROUP (ORDER BY X) FILTER (WHERE X > 10000)"
	ours := strings.ReplaceAll(aggs, "X", "(value->>'delay')::int")
	theirs := strings.ReplaceAll(aggs, "X", "delay")
	comparePG(t, ctx, pg, one(cl), pairCases(pgNumbers, [][2]string{
		{"SELECT " + ours + where, "SELECT " + theirs + " FROM os_rows"},
		{"SELECT value->>'destination' AS d, " + ours + where + " GROUP BY 1 ORDER BY 1", "SELECT dest AS d, " + theirs + " FROM os_rows GROUP BY 1 ORDER BY 1"},
	})...)
	refusedAsPostgres(t, ctx, cl, pg, "SELECT percentile_cont(1.5) WITHIN GROUP (ORDER BY x) FROM (SELECT 1::float8 AS x) t", "22003")
	for q, code := range map[string]codes.Code{
		"SELECT mode() WITHIN GROUP (ORDER BY timestamp - timestamp)" + where:                         codes.Unimplemented,
		"SELECT percentile_cont(0.5)" + where:                                                         codes.InvalidArgument,
		"SELECT percentile_cont(ARRAY[[0.5]]) WITHIN GROUP (ORDER BY (value->>'delay')::int)" + where: codes.Unimplemented,
	} {
		if _, err := run(ctx, cl, q); status.Code(err) != code {
			t.Errorf("%s: %v, want %v", q, err, code)
		}
	}
}

// TestStringAggAsPostgres: string_agg(x, sep ORDER BY x [DESC]), string_agg(DISTINCT x, sep),
// with FILTER, grouped and not, over ORD's archived March and hot April answer PostgreSQL's
// text over the same rows; without ORDER BY (an order PostgreSQL leaves unspecified) the same
// values are joined. ORDER BY another expression is refused by name.
func TestStringAggAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	pgTableOf(t, ctx, cl, pg, 100, "sa_rows", "SELECT id, value->>'destination', value->>'delay'"+where, "id text", "dest text", "delay int")
	aggs := "string_agg({D}, ',' ORDER BY {D}), string_agg(DISTINCT {D}, '|' ORDER BY {D}), string_agg(DISTINCT {D}, '; '), " +
		"string_agg({D}, '' ORDER BY {D} DESC) FILTER (WHERE {X} > 60), string_agg({D} || '!', '-' ORDER BY {D} || '!') FILTER (WHERE {X} > 100000)"
	rep := strings.NewReplacer("{D}", "(value->>'destination')", "{X}", "(value->>'delay')::int")
	pgRep := strings.NewReplacer("{D}", "dest", "{X}", "delay")
	comparePG(t, ctx, pg, one(cl), pairCases(pgText, [][2]string{
		{"SELECT " + rep.Replace(aggs) + where, "SELECT " + pgRep.Replace(aggs) + " FROM sa_rows"},
		{"SELECT (value->>'delay')::int / 60 AS h, " + rep.Replace(aggs) + where + " GROUP BY 1 ORDER BY 1 NULLS FIRST",
			"SELECT delay / 60 AS h, " + pgRep.Replace(aggs) + " FROM sa_rows GROUP BY 1 ORDER BY 1 NULLS FIRST"},
	})...)
	// Without ORDER BY: the same ids, in some order.
	got := textColumns(mustRun(t, cl, "SELECT string_agg(id, ',')"+where))
	want := pgTextRows(t, ctx, pg, "SELECT string_agg(id, ',') FROM sa_rows")
	g, w := strings.Split(got[0][0], ","), strings.Split(want[0][0], ",")
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("string_agg(id, ','): %d ids, PostgreSQL %d, or others", len(g), len(w))
	}
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT string_agg(id, id)" + where:     "string_agg with a separator that is not a text constant is not supported",
		"SELECT string_agg(value, ',')" + where: "string_agg of bytea is not supported",
	})
}

// TestGroupingSetsAsPostgres: GROUP BY ROLLUP, CUBE and GROUPING SETS (with a plain key beside
// them and an empty set), GROUPING(), HAVING and expressions over the keys, over ORD's
// archived March and hot April, answer PostgreSQL's rows over the same rows in a table, pushdown
// on and off; GROUPING() may be an ORDER BY or DISTINCT ON key outside the select list.
func TestGroupingSetsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	where := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "gs_rows", "SELECT extract(month FROM timestamp), value->>'destination', value->>'delay'"+where, "m int", "dest text", "delay int")
	rep := strings.NewReplacer("{M}", "extract(month FROM timestamp)", "{D}", "(value->>'destination')", "{X}", "(value->>'delay')::int", "{FROM}", where)
	pgRep := strings.NewReplacer("{M}", "m", "{D}", "dest", "{X}", "delay", "{FROM}", " FROM gs_rows")
	clients := map[string]*flightsql.Client{"pushdown on": cl, "pushdown off": dial(t, e.off)}
	comparePG(t, ctx, pg, clients, pairedSQL(func(q string) (string, string) { return rep.Replace(q), pgRep.Replace(q) },
		"SELECT {M} AS m, {D} AS d, count(*), sum({X}), GROUPING({M}, {D}) AS g{FROM} GROUP BY ROLLUP({M}, {D}) ORDER BY 5, 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT {M} AS m, {X} > 60 AS late, count(*), max({X}), GROUPING({X} > 60) AS g{FROM} GROUP BY CUBE({M}, {X} > 60) ORDER BY 5, 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT {M} AS m, {D} AS d, count(*){FROM} GROUP BY GROUPING SETS (({M}), ({D}), ()) HAVING count(*) > 100 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT {M} AS m, {D} AS d, CASE WHEN GROUPING({D}) = 1 THEN 'all' ELSE lower({D}) END AS label, count(*){FROM} GROUP BY {M}, ROLLUP({D}) ORDER BY 1, 2 NULLS FIRST LIMIT 40",
		// GROUPING() as an ORDER BY or DISTINCT ON key without being in the select list.
		"SELECT {M} AS m, {D} AS d, count(*){FROM} GROUP BY {M}, ROLLUP({D}) ORDER BY GROUPING({D}), 3 DESC, 1, 2 LIMIT 6",
		"SELECT {M} AS m, {D} AS d, count(*){FROM} GROUP BY CUBE({M}, {D}) ORDER BY GROUPING({M}, {D}) * 10 + 1 DESC, 1 NULLS FIRST, 2 NULLS FIRST",
		"SELECT DISTINCT ON (GROUPING({D})) {M} AS m, {D} AS d, count(*){FROM} GROUP BY {M}, ROLLUP({D}) ORDER BY GROUPING({D}), 3 DESC, 1, 2",
	)...)
}
