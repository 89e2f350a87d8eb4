package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// trialRange is the routed predicate of the trial's queries over ORD: March (archived) and
// April (archiving) 2001.
const trialRange = "timestamp >= '2001-03-01' AND timestamp < '2001-05-01'"

// TestUserTrialRefusals: the queries a new user's trial of the demo found answered INTERNAL,
// refused in the wrong words or leaking what they wrote into the log. Each is refused with its
// gRPC code and PostgreSQL's message, and leaves one "query refused" line (a warning, not an
// internal failure) whose message holds none of the client's text and whose sqlstate is
// PostgreSQL's.
func TestUserTrialRefusals(t *testing.T) {
	e := newEnv(t)
	srv, logs := queryLogServer(t, e, e.store, slog.LevelInfo)
	cl := dial(t, srv)
	ctx := context.Background()
	ord := "FROM flights WHERE origin = 'ORD' AND " + trialRange
	for _, c := range []struct {
		sql, msg, logMsg, sqlstate string
		code                       codes.Code
	}{
		{"SELECT 1/0", "division by zero", "", "22012", codes.InvalidArgument},
		{"SELECT 2147483647::int + 1", "integer out of range", "", "22003", codes.InvalidArgument},
		{"SELECT id, distance / 0 FROM (SELECT id, (value->>'distance')::int AS distance " + ord + ") t", "division by zero", "", "22012", codes.InvalidArgument},
		{"SELECT (value->>'distance')::int * 2000000000 " + ord, "integer out of range", "", "22003", codes.InvalidArgument},
		// A column value that is not a number, cast to an integer.
		{"SELECT (value->>'destination')::int " + ord, "invalid input syntax for type integer", "", "22P02", codes.InvalidArgument},
		// An unquoted value reads as a column: the client is told which, the log is not.
		{"SELECT id FROM flights WHERE origin = Zqxjv AND " + trialRange, `column "zqxjv" does not exist`, "column <identifier> does not exist", "42703", codes.InvalidArgument},
		{"SELECT zqxjv.id " + ord, `missing FROM-clause entry for table "zqxjv"`, "missing FROM-clause entry for table <identifier>", "42P01", codes.InvalidArgument},
		{"SELEC id FROM zqxjv", `syntax error at or near "SELEC" (position 1)`, "SQL syntax error at position 1", "42601", codes.InvalidArgument},
		{"SELECT id " + ord + " AND id = 'Zqxjv", `unterminated quoted string at or near "'Zqxjv" (position 113)`, "SQL syntax error at position 113", "42601", codes.InvalidArgument},
		{"SELECT " + strings.Repeat("1+", 6000) + "1", "statement too complex: its expressions nest deeper than the parse tree's 10,000 levels (about 5,000 nested operators or function calls)", "", "54001", codes.InvalidArgument},
		// 25,000 terms ended the process (pg_query's C code recursing past the thread's stack):
		// now refused before the parser runs (substrait.CheckDepth), the server still serving.
		{"SELECT " + strings.Repeat("1+", 25000) + "1", "statement too complex: its expressions nest deeper than 10,000 levels of chained operators, casts, set operations or joins", "", "54001", codes.InvalidArgument},
		{"SELECT 1" + strings.Repeat("::int", 25000), "statement too complex: its expressions nest deeper than 10,000 levels of chained operators, casts, set operations or joins", "", "54001", codes.InvalidArgument},
		{"SELECT timestamp + INTERVAL '300 years' " + ord, "timestamp out of range", "", "22008", codes.InvalidArgument},
		// PostgreSQL's type names, not Arrow's or Substrait's.
		{"SELECT id + 1 " + ord, "operator does not exist: text + integer", "", "42883", codes.InvalidArgument},
		{"SELECT char_length(value) " + ord, "function char_length(bytea) does not exist", "", "42883", codes.InvalidArgument},
		// The binder's own words stay in the log form; the client's column name does not.
		{"SELECT id, count(*) " + ord, `column "id" must appear in the GROUP BY clause or be used in an aggregate function`, "column <identifier> must appear in the GROUP BY clause or be used in an aggregate function", "42803", codes.InvalidArgument},
		{"SELECT mode() WITHIN GROUP (ORDER BY interval '1 day') " + ord, "mode of interval is not supported", "", "0A000", codes.Unimplemented},
		{"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x FROM r) CYCLE x SET c USING p SELECT * FROM r", "SEARCH and CYCLE clauses of WITH RECURSIVE are not supported", "", "0A000", codes.Unimplemented},
	} {
		logs.reset()
		_, err := run(ctx, cl, c.sql)
		if st := status.Convert(err); st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("%.80s: %v %q, want %v %q", c.sql, st.Code(), st.Message(), c.code, c.msg)
			continue
		}
		lines := logs.lines(t, "query refused", "query failed")
		if len(lines) != 1 {
			t.Errorf("%.80s: %d log lines, want one \"query refused\":\n%s", c.sql, len(lines), logs)
			continue
		}
		want := map[string]any{"level": "WARN", "msg": "query refused", "message": cmp.Or(c.logMsg, c.msg)}
		if c.sqlstate != "" {
			want["sqlstate"] = c.sqlstate
		}
		for k, v := range want {
			if lines[0][k] != v {
				t.Errorf("%.80s: log %s = %v, want %v", c.sql, k, lines[0][k], v)
			}
		}
		if c.sqlstate == "" && lines[0]["sqlstate"] != nil {
			t.Errorf("%.80s: log sqlstate %v", c.sql, lines[0]["sqlstate"])
		}
		if s := logs.String(); strings.Contains(strings.ToLower(s), "zqxjv") || strings.Contains(s, "at or near") {
			t.Errorf("%.80s: the log holds the client's text:\n%s", c.sql, s)
		}
	}

	// A syntax error after a dozen `?` placeholders, prepared as JDBC and ADBC do: its position
	// is in the client's text, as PostgreSQL reports it for the same text with each `?` replaced
	// by a one-character operand (PostgreSQL has no `?` placeholders).
	qs := strings.TrimSuffix(strings.Repeat("?, ", 12), ", ")
	for _, sql := range []string{
		"SELECT id FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ? AND id NOT IN (" + qs + ") ORDER BY id LIMT 5",
		"SELECT 'é', id FROM flights WHERE origin IN (" + qs + ") AND timestamp >= ? AND",
	} {
		conn, err := pgx.Connect(ctx, e.url)
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Prepare(ctx, "", strings.ReplaceAll(sql, "?", "1"))
		conn.Close(ctx)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Position == 0 {
			t.Fatalf("PostgreSQL: %v, want a syntax error with a position", err)
		}
		want := fmt.Sprintf("%s (position %d)", pe.Message, pe.Position)
		if _, err := cl.Prepare(ctx, sql); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != want {
			t.Errorf("%.60s…: %v, want InvalidArgument %q", sql, err, want)
		}
	}
}

// TestUserTrialAnswers: what the trial found refused or wrong now answers as PostgreSQL does:
// UNION and UNION ALL of selects without FROM and over tables, length(bytea) in bytes, now()
// in microseconds, EXPLAIN without values; --max-buckets is checked at GetFlightInfo.
func TestUserTrialAnswers(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ints := func(res *result) []int64 {
		var out []int64
		for _, rec := range res.recs {
			switch c := rec.Column(0).(type) {
			case *array.Int32:
				for i := range c.Len() {
					out = append(out, int64(c.Value(i)))
				}
			case *array.Int64:
				out = append(out, c.Int64Values()...)
			default:
				t.Fatalf("column of %s", c.DataType())
			}
		}
		return out
	}
	from, to := ts("2001-03-01T00:00:00Z"), ts("2001-05-01T00:00:00Z")
	nORD, nBOS := int64(len(expected(e.sample, "ORD", from, to))), int64(len(expected(e.sample, "BOS", from, to)))
	for _, c := range []struct {
		sql    string
		want   []int64
		sorted bool
	}{
		{"SELECT 1 UNION SELECT 2 ORDER BY 1", []int64{1, 2}, false},
		{"SELECT 2 UNION ALL SELECT 2 UNION ALL SELECT 1", []int64{1, 2, 2}, true},
		{"SELECT 1 UNION SELECT 1", []int64{1}, false},
		{"SELECT * FROM (SELECT 7 AS x) t WHERE x > 5", []int64{7}, false},
		{"SELECT count(*) FROM flights WHERE origin = 'ORD' AND " + trialRange + " UNION ALL SELECT 5 ORDER BY 1", []int64{5, nORD}, false},
		{"SELECT count(*) FROM (SELECT id FROM flights WHERE origin = 'ORD' AND " + trialRange +
			" UNION SELECT id FROM flights WHERE origin = 'BOS' AND " + trialRange + ") u", []int64{distinctIDs(e.sample, from, to, "ORD", "BOS")}, false},
		{"SELECT count(*) FROM (SELECT origin FROM flights WHERE origin = 'ORD' AND " + trialRange +
			" UNION ALL SELECT origin FROM flights WHERE origin = 'BOS' AND " + trialRange + ") u", []int64{nORD + nBOS}, false},
		// The OR of equalities of the partition column is its IN list: a route.
		{"SELECT count(*) FROM flights WHERE (origin = 'ORD' OR origin = 'BOS') AND " + trialRange, []int64{nORD + nBOS}, false},
	} {
		got := ints(mustRun(t, cl, c.sql))
		if c.sorted {
			slices.Sort(got)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%.100s: %v, want %v", c.sql, got, c.want)
		}
	}

	// length(bytea) is the byte count of value (PostgreSQL), octet_length the same; both
	// integer, as PostgreSQL types them.
	res := mustRun(t, cl, "SELECT id, length(value), octet_length(value) FROM flights WHERE origin = 'ORD' AND "+trialRange+" ORDER BY id")
	want := expected(e.sample, "ORD", from, to)
	slices.SortFunc(want, func(a, b row) int { return strings.Compare(a.id, b.id) })
	n := 0
	for _, rec := range res.recs {
		ids, l, o := rec.Column(0).(*array.String), rec.Column(1).(*array.Int32), rec.Column(2).(*array.Int32)
		for i := range ids.Len() {
			w := want[n]
			if ids.Value(i) != w.id || int(l.Value(i)) != len(w.value()) || o.Value(i) != l.Value(i) {
				t.Fatalf("row %d: %s %d %d, want %s %d", n, ids.Value(i), l.Value(i), o.Value(i), w.id, len(w.value()))
			}
			n++
		}
	}
	if n != len(want) {
		t.Fatalf("%d rows, want %d", n, len(want))
	}

	// now() has PostgreSQL's microseconds, which drivers converting to microsecond datetimes
	// accept.
	before := time.Now().Truncate(time.Microsecond)
	res = mustRun(t, cl, "SELECT now(), current_timestamp")
	after := time.Now()
	for c := range 2 {
		col := res.recs[0].Column(c).(*array.Timestamp)
		unit := col.DataType().(*arrow.TimestampType).Unit
		got := col.Value(0).ToTime(unit)
		if got.Before(before) || got.After(after) || got.Nanosecond()%1000 != 0 {
			t.Errorf("column %d: %v (%s), want microseconds between %v and %v", c, got, col.DataType(), before, after)
		}
	}

	// EXPLAIN shows the route and the filters, never the partition value or a literal.
	res = mustRun(t, cl, "EXPLAIN SELECT id FROM flights WHERE origin = 'ORD' AND "+trialRange+" AND (value->>'destination') = 'Zqxjv'")
	var lines []string
	for _, rec := range res.recs {
		c := rec.Column(0).(*array.String)
		for i := range c.Len() {
			lines = append(lines, c.Value(i))
		}
	}
	text := strings.Join(lines, "\n")
	for _, bad := range []string{"'ORD'", "Zqxjv", "2001-03", "2001-05"} {
		if strings.Contains(text, bad) {
			t.Errorf("EXPLAIN holds %q:\n%s", bad, text)
		}
	}
	for _, good := range []string{"origin = <value>", "= <value>", "Routes:", "3 WHERE conjunct(s) became the route", "1 residual conjunct(s)", "Pushdown: on", "Executor:"} {
		if !strings.Contains(text, good) {
			t.Errorf("EXPLAIN lacks %q:\n%s", good, text)
		}
	}

	// --max-buckets: refused at GetFlightInfo, naming the flag.
	small, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader, Pushdown: true, MaxBuckets: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(small.Close)
	for _, sql := range []string{
		"SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'",
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'",
		"SELECT id FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-03-01'",
	} {
		_, err := dial(t, small).Execute(context.Background(), sql)
		if st := status.Convert(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "(--max-buckets)") {
			t.Errorf("%.90s at GetFlightInfo: %v", sql, err)
		}
	}
	// Exactly the limit: three partitions of one bucket each.
	atLimit := "SELECT count(*) FROM flights WHERE origin IN ('ORD', 'BOS', 'SFO') AND " + trialRange[:strings.Index(trialRange, "2001-05-01")] + "2001-04-01'"
	if got, want := ints(mustRun(t, dial(t, small), atLimit)), []int64{int64(len(expected(e.sample, "ORD", from, ts("2001-04-01T00:00:00Z")))) +
		int64(len(expected(e.sample, "BOS", from, ts("2001-04-01T00:00:00Z")))) + int64(len(expected(e.sample, "SFO", from, ts("2001-04-01T00:00:00Z"))))}; !slices.Equal(got, want) {
		t.Errorf("%s: %v, want %v", atLimit, got, want)
	}
}

// distinctIDs counts the distinct ids of the origins' flights in [from, to).
func distinctIDs(all []row, from, to time.Time, origins ...string) int64 {
	seen := map[string]bool{}
	for _, o := range origins {
		for _, r := range expected(all, o, from, to) {
			seen[r.id] = true
		}
	}
	return int64(len(seen))
}

// TestCastParameters: CAST(? AS text)::timestamptz and CAST(? AS timestamp) prepared through
// arrow-go's Flight SQL client behave as in PostgreSQL, asked the same over pgx in a UTC
// session: the first parameter is declared text and its value read as a timestamp with time
// zone, the second is declared timestamp without time zone (zone-less) and its wall clock is the
// UTC instant; both serve as routed bounds, and the count equals the sample's between
// PostgreSQL's instants.
func TestCastParameters(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	conn := pgUTC(t, ctx, e.url)
	// PostgreSQL's parameter types: text (OID 25) and timestamp (OID 1114).
	sd, err := conn.Prepare(ctx, "", "SELECT CAST($1 AS text)::timestamptz, CAST($2 AS timestamp)")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sd.ParamOIDs, []uint32{25, 1114}) {
		t.Fatalf("PostgreSQL's parameter types %v", sd.ParamOIDs)
	}
	stmt, err := cl.Prepare(ctx, "SELECT CAST(? AS text)::timestamptz AS a, CAST(? AS timestamp) AS b")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	ps := stmt.ParameterSchema()
	if ps.NumFields() != 2 || ps.Field(0).Type.ID() != arrow.STRING || ps.Field(1).Type.ID() != arrow.TIMESTAMP ||
		ps.Field(1).Type.(*arrow.TimestampType).TimeZone != "" {
		t.Fatalf("parameter schema %s, want utf8 and a zone-less timestamp", ps)
	}
	wall := time.Date(2001, 3, 15, 10, 30, 0, 123456000, time.UTC)
	for _, text := range []string{"2001-03-15 02:00:00+02", "2001-03-15T00:00:00Z", "2001-03-15", "2001-03-15 10:30:00.123456"} {
		for _, zone := range []string{"", "UTC"} {
			var pa, pb time.Time
			if err := conn.QueryRow(ctx, "SELECT CAST($1 AS text)::timestamptz, CAST($2 AS timestamp)", text, wall).Scan(&pa, &pb); err != nil {
				t.Fatal(err)
			}
			schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String},
				{Name: "b", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: zone}}}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			b.Field(0).(*array.StringBuilder).Append(text)
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(wall.UnixMicro()))
			res := executeWith(t, ctx, cl, stmt, b)
			rec := res.recs[0]
			ga := rec.Column(0).(*array.Timestamp).Value(0).ToTime(rec.Schema().Field(0).Type.(*arrow.TimestampType).Unit)
			gb := rec.Column(1).(*array.Timestamp).Value(0).ToTime(rec.Schema().Field(1).Type.(*arrow.TimestampType).Unit)
			res.release()
			if !ga.Equal(pa) || !gb.Equal(pb) {
				t.Errorf("%q, %s (zone %q): %s %s, PostgreSQL %s %s", text, wall, zone, ga, gb, pa, pb)
			}
		}
	}

	// As routed bounds.
	from, to := "2001-03-15 02:00:00+02", time.Date(2001, 4, 15, 0, 0, 0, 0, time.UTC)
	var pFrom, pTo time.Time
	if err := conn.QueryRow(ctx, "SELECT CAST($1 AS text)::timestamptz, CAST($2 AS timestamp)", from, to).Scan(&pFrom, &pTo); err != nil {
		t.Fatal(err)
	}
	count, err := cl.Prepare(ctx, "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= CAST(? AS text)::timestamptz AND timestamp < CAST(? AS timestamp)")
	if err != nil {
		t.Fatal(err)
	}
	defer count.Close(ctx)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String},
		{Name: "c", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	b.Field(0).(*array.StringBuilder).Append("ORD")
	b.Field(1).(*array.StringBuilder).Append(from)
	b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(to.UnixMicro()))
	res := executeWith(t, ctx, cl, count, b)
	defer res.release()
	if got, want := scalarCount(t, res), int64(len(expected(e.sample, "ORD", pFrom, pTo))); got != want || want == 0 {
		t.Fatalf("count %d, want %d (between PostgreSQL's %s and %s)", got, want, pFrom, pTo)
	}
}

// TestTimestampTextAsPostgres: timestamp::text and to_char with the patterns the user trial
// found copied into the output (FM, IW, IYYY, ID, WW, TZ, OF, CC, lower-case meridians) answer,
// through the SQL path over archived and hot rows, exactly what PostgreSQL answers for the same
// instants in a UTC session.
func TestTimestampTextAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	const f = `FMMonth FMDDth IYYY-IW-ID WW CC HH12:MI pm TZ OF`
	res := mustRun(t, cl, "SELECT timestamp AS t, timestamp::text AS x, to_char(timestamp, '"+f+"') AS c FROM flights WHERE origin = 'ORD'"+
		" AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY timestamp, id")
	n := 0
	for _, rec := range res.recs {
		at, text, chars := rec.Column(0).(*array.Timestamp), rec.Column(1).(*array.String), rec.Column(2).(*array.String)
		for i := range int(rec.NumRows()) {
			var wantText, wantChars string
			if err := pg.QueryRow(ctx, "SELECT $1::timestamptz::text, to_char($1::timestamptz, $2)", at.Value(i).ToTime(arrow.Nanosecond), f).Scan(&wantText, &wantChars); err != nil {
				t.Fatal(err)
			}
			if text.Value(i) != wantText || chars.Value(i) != wantChars {
				t.Fatalf("row %d: %q, %q; PostgreSQL %q, %q", n, text.Value(i), chars.Value(i), wantText, wantChars)
			}
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d rows compared", n)
	}
}

// TestBooleanOrderingAsPostgres: <, >, <= and >= between booleans (false < true, NULL
// unknown) answer PostgreSQL's values, in a select list over rows and in WHERE, where they were
// INTERNAL errors.
func TestBooleanOrderingAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	const q = "SELECT true > false, false > true, true >= true, false <= true, NULL::boolean < true, (1 = 1) < (1 = 2)"
	var want [6]*bool
	if err := pg.QueryRow(ctx, q).Scan(&want[0], &want[1], &want[2], &want[3], &want[4], &want[5]); err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, cl, q)
	for i, w := range want {
		c := res.recs[0].Column(i).(*array.Boolean)
		if (w == nil) != c.IsNull(0) || (w != nil && *w != c.Value(0)) {
			t.Errorf("column %d of %s: %v, PostgreSQL %v", i, q, c.ValueStr(0), w)
		}
	}
	where := "origin = 'ORD' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-03'"
	all := scalarCount(t, mustRun(t, cl, "SELECT count(*) FROM flights WHERE "+where))
	late := scalarCount(t, mustRun(t, cl, "SELECT count(*) FROM flights WHERE "+where+" AND ((value->>'delay')::int > 0) > false"))
	notLate := scalarCount(t, mustRun(t, cl, "SELECT count(*) FROM flights WHERE "+where+" AND ((value->>'delay')::int > 0) <= false"))
	if late == 0 || notLate == 0 || late+notLate != all {
		t.Errorf("late %d + not late %d of %d", late, notLate, all)
	}
}

// TestDecimalCastsAsPostgres: a decimal literal cast to an integer type rounds half away from
// zero as PostgreSQL's numeric does (2.5::int = 3, not 2), and a value past the type's range is
// refused with PostgreSQL's SQLSTATE 22003.
func TestDecimalCastsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	const q = "SELECT 2.5::int, (-2.5)::int, -2.5::int, 3.5::int, 0.5::smallint, 1.4999::bigint, 1e2::int, 2.5e0::int, CAST(99999999999.5 AS bigint), CAST(-0.5 AS integer)"
	want := pgRow[int64](t, ctx, pg, q)
	res := mustRun(t, cl, q)
	for i, w := range want {
		got, err := strconv.ParseInt(res.recs[0].Column(i).ValueStr(0), 10, 64)
		if err != nil || got != w {
			t.Errorf("column %d of %s: %s, PostgreSQL %d", i, q, res.recs[0].Column(i).ValueStr(0), w)
		}
	}
	var pgErr *pgconn.PgError
	if err := pg.QueryRow(ctx, "SELECT 3000000000.5::int").Scan(new(int64)); !errors.As(err, &pgErr) || pgErr.Code != "22003" {
		t.Fatalf("PostgreSQL: %v", err)
	}
	if _, err := run(ctx, cl, "SELECT 3000000000.5::int"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "integer out of range") {
		t.Errorf("3000000000.5::int: %v, want PostgreSQL's integer out of range", err)
	}
}

// TestStringFunctionsAsPostgres: left, right, split_part, strpos, POSITION(… IN …), lpad,
// rpad, initcap, reverse and repeat answer, over the rows' ids and values and over constants
// with negative counts, empty delimiters and fills, multi-byte characters and NULLs, exactly
// what PostgreSQL answers for the same inputs.
func TestStringFunctionsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	inputs := []string{"", "a", "ORD", "hello world", "x-y-z", "--a--", "ÄbC déF ghi", "o'hare jfk-lga 2nd", "ab"}
	exprs := []string{
		"left(S, 2)", "left(S, -1)", "left(S, 0)", "right(S, 3)", "right(S, -2)", "split_part(S, '-', 2)",
		"split_part(S, '-', -1)", "split_part(S, '', 1)", "split_part(S, ' ', 3)", "split_part(S, 'zz', 1)", "strpos(S, 'o')",
		"strpos(S, '')", "position('d' IN S)", "lpad(S, 6)", "lpad(S, 6, 'xy')", "lpad(S, 2, '*')", "lpad(S, 5, '')",
		"rpad(S, 7, 'é')", "rpad(S, 1)", "rpad(S, -3, 'a')", "initcap(S)", "reverse(S)", "repeat(S, 3)", "repeat(S, -1)",
		"left(NULL::text, 1)", "lpad(S, NULL::int)",
	}
	var sel []string
	for _, x := range exprs {
		sel = append(sel, "coalesce("+x+"::text, '<null>')")
	}
	for _, in := range inputs {
		lit := "'" + strings.ReplaceAll(in, "'", "''") + "'"
		q := "SELECT " + strings.ReplaceAll(strings.Join(sel, ", "), "S", lit)
		want := pgRow[string](t, ctx, pg, q)
		res := mustRun(t, cl, q)
		for i, w := range want {
			if got := res.recs[0].Column(i).(*array.String).Value(0); got != w {
				t.Errorf("%s over %q: %q, PostgreSQL %q", exprs[i], in, got, w)
			}
		}
	}
	// Over rows: the ids and the JSON values of ORD's first June days.
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-02' ORDER BY timestamp, id"
	res := mustRun(t, cl, "SELECT id, convert_from(value, 'UTF8'), left(id, 4), right(id, 3), split_part(convert_from(value, 'UTF8'), ',', 2), "+
		"strpos(convert_from(value, 'UTF8'), 'destination'), lpad(right(id, 2), 4, '0'), initcap(value->>'destination'), reverse(id)"+where)
	rows := 0
	for _, rec := range res.recs {
		for r := range int(rec.NumRows()) {
			id, val := rec.Column(0).(*array.String).Value(r), rec.Column(1).(*array.String).Value(r)
			var w [7]string
			var pos int32
			if err := pg.QueryRow(ctx, "SELECT left($1, 4), right($1, 3), split_part($2, ',', 2), strpos($2, 'destination'), lpad(right($1, 2), 4, '0'), initcap($2::json->>'destination'), reverse($1)",
				id, val).Scan(&w[0], &w[1], &w[2], &pos, &w[4], &w[5], &w[6]); err != nil {
				t.Fatal(err)
			}
			got := []string{rec.Column(2).ValueStr(r), rec.Column(3).ValueStr(r), rec.Column(4).ValueStr(r), "", rec.Column(6).ValueStr(r), rec.Column(7).ValueStr(r), rec.Column(8).ValueStr(r)}
			for k := range w {
				if k != 3 && got[k] != w[k] {
					t.Fatalf("row %d, column %d: %q, PostgreSQL %q", rows, k+2, got[k], w[k])
				}
			}
			if p := rec.Column(5).(*array.Int32).Value(r); p != pos {
				t.Fatalf("row %d strpos: %d, PostgreSQL %d", rows, p, pos)
			}
			rows++
		}
	}
	if rows < 20 {
		t.Fatalf("only %d rows compared", rows)
	}
	if _, err := run(ctx, cl, "SELECT split_part('a-b', '-', 0)"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "field position must not be zero") {
		t.Errorf("split_part(…, 0): %v", err)
	}
}

// TestMathFunctionsAsPostgres: ceil, ceiling, floor, trunc, sign, sqrt, exp, ln, log, power,
// pow and mod over integer and float columns and constants answer PostgreSQL's double
// precision (and integer mod) values; PostgreSQL's errors (square root and logarithm out of
// their domain, zero to a negative power, division by zero, exp underflow) keep their
// SQLSTATE; a numeric argument (a decimal literal) of sqrt, power or two-argument log makes
// them numeric, never float8 (numeric_test.go checks numeric's own functions).
func TestMathFunctionsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	exprs := []string{"ceil(X / 7::float8)", "ceiling(X)", "floor(X / 3)", "floor(X::float8 / 3)", "trunc(X::float8 / 4)", "round(X::float8 / 2)", "round(X / 4)", "round(X)", "sign(X)",
		"sqrt(abs(X))", "exp(X / 100)", "ln(abs(X) + 1)", "log(abs(X) + 1)", "power(X, 2)", "pow(2, X / 50)", "mod(X, 7)", "mod(X, -3)"}
	for _, x := range []string{"0", "1", "-1", "17", "-17", "120", "-45"} {
		var sel []string
		for _, ex := range exprs {
			sel = append(sel, strings.ReplaceAll(ex, "X", "("+x+")")+"::float8")
		}
		q := "SELECT " + strings.Join(sel, ", ")
		want := pgRow[float64](t, ctx, pg, q)
		res := mustRun(t, cl, q)
		for i, w := range want {
			got := res.recs[0].Column(i).(*array.Float64).Value(0)
			if got != w && math.Abs(got-w) > 1e-15*math.Abs(w) {
				t.Errorf("%s with X = %s: %v, PostgreSQL %v", exprs[i], x, got, w)
			}
		}
	}
	// Over the rows' delays.
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-02'"
	agg := "SELECT sum(floor((value->>'delay')::int / 10::float8)), sum(sign((value->>'delay')::int)), sum(mod((value->>'delay')::int, 5)), sum(sqrt(abs((value->>'delay')::int)))"
	res := mustRun(t, cl, agg+where)
	var delays []int64
	for _, rec := range mustRun(t, cl, "SELECT (value->>'delay')::int"+where).recs {
		for i := range int(rec.NumRows()) {
			delays = append(delays, int64(rec.Column(0).(*array.Int32).Value(i)))
		}
	}
	var w [4]float64
	if err := pg.QueryRow(ctx, "SELECT sum(floor(d / 10::float8)), sum(sign(d)), sum(mod(d, 5)), sum(sqrt(abs(d))) FROM unnest($1::int[]) d", delays).Scan(&w[0], &w[1], &w[2], &w[3]); err != nil {
		t.Fatal(err)
	}
	for i := range w {
		got, _ := strconv.ParseFloat(res.recs[0].Column(i).ValueStr(0), 64)
		if math.Abs(got-w[i]) > 1e-9*math.Max(1, math.Abs(w[i])) {
			t.Errorf("aggregate %d over %d delays: %v, PostgreSQL %v", i, len(delays), got, w[i])
		}
	}
	for q, code := range map[string]string{
		"SELECT sqrt(-1)": "2201F", "SELECT ln(0)": "2201E", "SELECT log(-5)": "2201E", "SELECT power(0, -1)": "2201F",
		"SELECT mod(5, 0)": "22012", "SELECT exp(-1000)": "22003",
	} {
		var pgErr *pgconn.PgError
		if err := pg.QueryRow(ctx, q).Scan(new(float64)); !errors.As(err, &pgErr) || pgErr.Code != code {
			t.Fatalf("PostgreSQL %s: %v, want %s", q, err, code)
		}
		_, err := run(ctx, cl, q)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), pgErr.Message) {
			t.Errorf("%s: %v, want PostgreSQL's %q", q, err, pgErr.Message)
		}
	}
	// A numeric argument makes them numeric, never float8: their text is PostgreSQL's
	// numeric text (numeric_test.go checks numeric's functions at length).
	for _, q := range []string{"SELECT power(2, 0.5)::text", "SELECT sqrt(2.25)::text", "SELECT log(2, 8)::text", "SELECT (2 ^ 0.5)::text"} {
		var want string
		if err := pg.QueryRow(ctx, q).Scan(&want); err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		res, err := run(ctx, cl, q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if got := res.recs[0].Column(0).ValueStr(0); got != want {
			t.Errorf("%s: %s, PostgreSQL %s", q, got, want)
		}
		res.release()
	}
}

// pgRow returns the one row PostgreSQL answers to q, every column scanned as a T.
func pgRow[T any](t *testing.T, ctx context.Context, pg *pgx.Conn, q string) []T {
	t.Helper()
	rows, err := pg.Query(ctx, q)
	if err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatalf("PostgreSQL %s: no row (%v)", q, rows.Err())
	}
	out := make([]T, len(rows.FieldDescriptions()))
	dest := make([]any, len(out))
	for i := range out {
		dest[i] = &out[i]
	}
	if err := rows.Scan(dest...); err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	return out
}
