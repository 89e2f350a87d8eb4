package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// goldenQuery is one query of testdata/sql/golden.json (see testdata/sql/gen.py): the SQL
// flightsrv runs, the SQL DuckDB ran, the kind of each column and DuckDB's rows.
type goldenQuery struct {
	SQL        string   `json:"sql"`
	Analytical bool     `json:"analytical"`
	DuckDB     string   `json:"duckdb"`
	Kinds      []string `json:"kinds"`
	Rows       [][]any  `json:"rows"`
}

// corpusFiles are the golden corpus: corpus.sql's queries are checked against PostgreSQL and
// DuckDB (golden.json), postgres.sql's against PostgreSQL only (what DuckDB spells or answers
// differently: to_char patterns, ::text output, numeric, AT TIME ZONE, windows…).
var corpusFiles = []string{"corpus.sql", "postgres.sql"}

// corpusQuery is one query of the corpus as testdata/sql/corpus.sql's header describes it:
// blocks separated by blank lines, with directives in comment lines.
type corpusQuery struct {
	where      string // file:line
	sql        string // what flightsrv runs
	postgres   string // what PostgreSQL runs ("-- postgres:", else sql)
	analytical bool   // "-- mode: analytical"
	refused    string // "-- refused: CONSTRUCT", a key of corpusRefusals
	duck       *goldenQuery
}

// corpusRefusals are the constructs the engine refuses today (UNIMPLEMENTED, the message
// containing the text given) that parallel work on issue 18 builds: a query marked
// "-- refused: CONSTRUCT" must be refused so, and PostgreSQL must answer it. Once the
// construct answers, the test fails naming the query: remove its mark, and the query is
// compared with PostgreSQL's answer like every other. A wrong answer is never marked.
var corpusRefusals = map[string]string{}

// readCorpus reads one file of testdata/sql (see corpusFiles).
func readCorpus(t *testing.T, name string) []corpusQuery {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "testdata", "sql", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusQuery
	line := 1
	for _, block := range strings.Split(string(b), "\n\n") {
		q := corpusQuery{where: fmt.Sprintf("%s:%d", name, line)}
		line += strings.Count(block, "\n") + 2
		var sql []string
		for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "-- postgres:"):
				q.postgres = strings.TrimSpace(strings.TrimPrefix(l, "-- postgres:"))
			case strings.HasPrefix(l, "-- refused:"):
				q.refused = strings.TrimSpace(strings.TrimPrefix(l, "-- refused:"))
				if _, ok := corpusRefusals[q.refused]; !ok {
					t.Fatalf("%s: %q is not one of corpusRefusals", q.where, q.refused)
				}
			case l == "-- mode: analytical":
				q.analytical = true
			case strings.HasPrefix(l, "--") || l == "":
			default:
				sql = append(sql, l)
			}
		}
		if len(sql) == 0 {
			continue
		}
		q.sql = strings.Join(sql, " ")
		if q.postgres == "" {
			q.postgres = q.sql
		}
		out = append(out, q)
	}
	return out
}

// loadCorpus reads every file of the corpus, with DuckDB's answers (golden.json) for
// corpus.sql's queries: each must be there (regenerate with testdata/sql/gen.py).
func loadCorpus(t *testing.T) []corpusQuery {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "testdata", "sql", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden []goldenQuery
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	duck := map[string]*goldenQuery{}
	for i := range golden {
		duck[golden[i].SQL] = &golden[i]
	}
	var qs []corpusQuery
	for _, name := range corpusFiles {
		for _, q := range readCorpus(t, name) {
			if name == "corpus.sql" {
				if q.duck = duck[q.sql]; q.duck == nil || q.duck.Analytical != q.analytical {
					t.Fatalf("%s is not in golden.json as written: run testdata/sql/gen.py", q.where)
				}
			}
			qs = append(qs, q)
		}
	}
	if len(qs) < 400 || len(golden) < 150 {
		t.Errorf("the corpus has %d queries (%d checked against DuckDB), want at least 400 (150)", len(qs), len(golden))
	}
	return qs
}

// pgFlights creates the temporary table flights on conn (origin, timestamp, id, value json),
// unless it exists, and adds the sample's rows of origins in [from, to): the rows flightsrv serves, in a plain
// PostgreSQL table, for queries whose expected answers are PostgreSQL's.
func pgFlights(t *testing.T, ctx context.Context, conn *pgx.Conn, sample []row, origins []string, from, to time.Time) int {
	t.Helper()
	if _, err := conn.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS flights (origin text NOT NULL, "timestamp" timestamptz NOT NULL, id text NOT NULL, value json NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	for _, origin := range origins {
		for _, f := range expected(sample, origin, from, to) {
			rows = append(rows, []any{f.origin, f.at, f.id, f.value()})
		}
	}
	if n, err := conn.CopyFrom(ctx, pgx.Identifier{"flights"}, []string{"origin", "timestamp", "id", "value"}, pgx.CopyFromRows(rows)); err != nil || n != int64(len(rows)) {
		t.Fatalf("copy %d of %d rows: %v", n, len(rows), err)
	}
	if _, err := conn.Exec(ctx, "ANALYZE flights"); err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// testGolden runs the SQL corpus through both servers (pushdown on and off) and compares each
// answer with PostgreSQL's over the same rows in a plain table (the oracle: column types as
// compareTyped allows, the same rows in the same order, NULLs included, floats to a relative
// 1e-9) and, for corpus.sql's queries, with DuckDB's (golden.json: the same column kinds).
// The queries of the analytical mode run through onA and offA, clients of the same servers
// whose sessions have it on; the others refuse them. A query marked refused must be refused
// as corpusRefusals says, and answered by PostgreSQL.
func testGolden(t *testing.T, e *env, on, off, onA, offA *flightsql.Client) {
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	qs := loadCorpus(t)
	compared, refused := 0, map[string]int{}
	for _, q := range qs {
		clients := map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}
		if q.analytical {
			clients = map[string]*flightsql.Client{"pushdown on, analytical": onA, "pushdown off, analytical": offA}
			// Outside it, a read without a partition pin is refused (the corpus' pinned
			// analytical queries, origin IN (…), are not).
			if _, err := run(ctx, on, q.sql); !strings.Contains(q.sql, "origin IN") && status.Code(err) != codes.InvalidArgument {
				t.Errorf("%s outside the analytical mode: %v, want INVALID_ARGUMENT", q.where, err)
			}
		}
		wantTypes, want, err := pgTypedErr(ctx, pg, q.postgres)
		if err != nil {
			t.Errorf("%s: PostgreSQL: %v\n%s", q.where, err, q.postgres)
			continue
		}
		for name, cl := range clients {
			res, err := run(ctx, cl, q.sql)
			if q.refused != "" {
				if err == nil {
					types, got := flightTyped(t, res)
					res.release()
					if msg := compareTyped(types, got, wantTypes, want); msg != "" {
						t.Errorf("%s (%s) marked refused (%s) answers wrongly: %s\n%s", q.where, name, q.refused, msg, q.sql)
					} else {
						t.Errorf("%s (%s) marked refused (%s) answers as PostgreSQL now: remove its mark\n%s", q.where, name, q.refused, q.sql)
					}
				} else if st := status.Convert(err); st.Code() != codes.Unimplemented || !strings.Contains(st.Message(), corpusRefusals[q.refused]) {
					t.Errorf("%s (%s): %v %q, want UNIMPLEMENTED naming %q\n%s", q.where, name, st.Code(), st.Message(), corpusRefusals[q.refused], q.sql)
				}
				refused[q.refused]++
				continue
			}
			if err != nil {
				t.Errorf("%s (%s): %v\n%s", q.where, name, err, q.sql)
				continue
			}
			types, got := flightTyped(t, res)
			res.release()
			if msg := compareTyped(types, got, wantTypes, want); msg != "" {
				t.Errorf("%s (%s): %s\n%s", q.where, name, msg, q.sql)
			}
			compared += len(want)
			if q.duck != nil {
				compareDuckDB(t, q, name, got, types)
			}
		}
	}
	t.Logf("%d queries, %d rows equal to PostgreSQL's (both servers); refused by name as expected: %v", len(qs), compared, refused)
}

// compareDuckDB compares one answer with DuckDB's in golden.json: column kinds (integers are
// not floats) and rows.
func compareDuckDB(t *testing.T, q corpusQuery, name string, rows [][]any, types []string) {
	t.Helper()
	kinds := make([]string, len(types))
	for i, ty := range types {
		kinds[i] = map[string]string{"int2": "int", "int4": "int", "int8": "int", "float4": "float", "float8": "float", "numeric": "float",
			"text": "text", "bytea": "text", "bool": "bool", "timestamptz": "timestamp", "timestamp": "timestamp"}[ty]
	}
	d := q.duck
	if fmt.Sprint(kinds) != fmt.Sprint(d.Kinds) {
		t.Errorf("%s (%s): %s\ncolumn kinds %v, DuckDB %v", q.where, name, q.sql, kinds, d.Kinds)
		return
	}
	if len(rows) != len(d.Rows) {
		t.Errorf("%s (%s): %s\n%d rows, DuckDB %d: %v", q.where, name, q.sql, len(rows), len(d.Rows), firstRows(rows))
		return
	}
	for r := range rows {
		for c := range rows[r] {
			if !goldenEqual(rows[r][c], d.Rows[r][c]) {
				t.Errorf("%s (%s): %s\nrow %d column %d: %v, DuckDB %v", q.where, name, q.sql, r, c, rows[r][c], d.Rows[r][c])
			}
		}
	}
}

func firstRows(rows [][]any) [][]any {
	return rows[:min(len(rows), 3)]
}

// goldenEqual compares one of our values with DuckDB's as JSON decoded it (numbers are
// float64 there).
func goldenEqual(ours, theirs any) bool {
	switch o := ours.(type) {
	case nil:
		return theirs == nil
	case int64:
		f, ok := theirs.(float64)
		return ok && float64(o) == f
	case float64:
		f, ok := theirs.(float64)
		if !ok {
			return false
		}
		if o == f {
			return true
		}
		return math.Abs(o-f) <= 1e-9*math.Max(math.Abs(o), math.Abs(f))
	}
	return ours == theirs
}

// goldenRows reads a result's rows as int64, float64, string, bool or nil (goldenValue).
func goldenRows(t *testing.T, res *result) [][]any {
	t.Helper()
	var rows [][]any
	for _, rec := range res.recs {
		for r := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c := range int(rec.NumCols()) {
				row[c] = goldenValue(rec.Column(c), r)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// goldenValue is row i of a as int64, float64, string, bool or nil: instants (and dates, and
// wall clocks) as RFC 3339 UTC text with microseconds, as gen.py writes DuckDB's; intervals as
// "months:days:microseconds" (intervalText); decimals as float64 (their exact text is
// compared where a query casts them to text).
func goldenValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch v := a.(type) {
	case *array.Int8:
		return int64(v.Value(i))
	case *array.Int16:
		return int64(v.Value(i))
	case *array.Int32:
		return int64(v.Value(i))
	case *array.Int64:
		return v.Value(i)
	case *array.Uint64:
		return int64(v.Value(i))
	case *array.Float32:
		return float64(v.Value(i))
	case *array.Float64:
		return v.Value(i)
	case *array.Decimal128:
		return v.Value(i).ToFloat64(v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.String:
		return v.Value(i)
	case *array.LargeString:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	case *array.Boolean:
		return v.Value(i)
	case *array.Timestamp:
		unit := v.DataType().(*arrow.TimestampType).Unit
		return v.Value(i).ToTime(unit).UTC().Format(goldenTime)
	case *array.Date32:
		return v.Value(i).ToTime().UTC().Format(goldenTime)
	case *array.Time64:
		// A time of day as its microseconds, as pgTypedErr spells PostgreSQL's time.
		return fmt.Sprintf("time:%d", int64(v.Value(i))/map[arrow.TimeUnit]int64{arrow.Microsecond: 1, arrow.Nanosecond: 1000}[v.DataType().(*arrow.Time64Type).Unit])
	case *array.MonthDayNanoInterval:
		x := v.Value(i)
		return intervalText(int64(x.Months), int64(x.Days), x.Nanoseconds/1000)
	}
	return fmt.Sprintf("%s:%s", a.DataType(), a.ValueStr(i))
}

// intervalText spells an interval's three fields, as goldenValue and pgTypedErr compare them.
func intervalText(months, days, micros int64) string {
	return fmt.Sprintf("%d:%d:%d", months, days, micros)
}

// goldenTime is how goldenValue spells an instant: RFC 3339 UTC with microseconds, as gen.py
// writes DuckDB's.
const goldenTime = "2006-01-02T15:04:05.000000Z"

// pgTyped runs sql on PostgreSQL and returns its column type names and rows (pgTypedErr); it
// fails the test on PostgreSQL's error.
func pgTyped(t *testing.T, ctx context.Context, conn *pgx.Conn, sql string) ([]string, [][]any) {
	t.Helper()
	typs, rows, err := pgTypedErr(ctx, conn, sql)
	if err != nil {
		t.Fatalf("PostgreSQL: %v\n%s", err, sql)
	}
	return typs, rows
}

// pgTypedErr runs sql on PostgreSQL and returns its column type names (pgx's: int4, text,
// timestamptz…) and rows, each value spelled as goldenValue spells ours: integers int64,
// numerics and floats float64, instants, dates and wall clocks RFC 3339 UTC text, intervals
// intervalText, json its text.
func pgTypedErr(ctx context.Context, conn *pgx.Conn, sql string) ([]string, [][]any, error) {
	rs, err := conn.Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	var typs []string
	for _, f := range rs.FieldDescriptions() {
		name := strconv.Itoa(int(f.DataTypeOID))
		if dt, ok := conn.TypeMap().TypeForOID(f.DataTypeOID); ok {
			name = dt.Name
		}
		typs = append(typs, name)
	}
	var out [][]any
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			return nil, nil, err
		}
		raw := rs.RawValues()
		for i, v := range vals {
			switch x := v.(type) {
			case pgtype.Numeric:
				f, err := x.Float64Value()
				if err != nil {
					return nil, nil, err
				}
				vals[i] = f.Float64
			case int32:
				vals[i] = int64(x)
			case int16:
				vals[i] = int64(x)
			case float32:
				vals[i] = float64(x)
			case time.Time:
				vals[i] = x.UTC().Format(goldenTime) // as goldenValue spells ours
			case pgtype.Interval:
				vals[i] = intervalText(int64(x.Months), int64(x.Days), x.Microseconds)
			case pgtype.Time:
				vals[i] = fmt.Sprintf("time:%d", x.Microseconds) // as goldenValue spells ours
			}
			if v != nil && (typs[i] == "json" || typs[i] == "jsonb") {
				vals[i] = string(raw[i])
			}
		}
		out = append(out, vals)
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	return typs, out, nil
}

// flightTyped returns a result's columns as PostgreSQL type names (pgx's) and its rows
// (goldenRows).
func flightTyped(t *testing.T, res *result) ([]string, [][]any) {
	t.Helper()
	schema := res.streamSchema
	if schema == nil {
		schema = res.infoSchema
	}
	typs := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		typs[i] = pgTypeNames[f.Type.ID()]
		if ts, ok := f.Type.(*arrow.TimestampType); ok && ts.TimeZone == "" {
			typs[i] = "timestamp"
		}
		if typs[i] == "" {
			typs[i] = f.Type.String()
		}
	}
	return typs, goldenRows(t, res)
}

// pgTypeNames are the PostgreSQL type names (pgx's) of the Arrow types flightsrv answers in
// (a zone-less timestamp is timestamp, flightTyped's exception).
var pgTypeNames = map[arrow.Type]string{
	arrow.INT16: "int2", arrow.INT32: "int4", arrow.INT64: "int8", arrow.FLOAT32: "float4", arrow.FLOAT64: "float8",
	arrow.DECIMAL128: "numeric", arrow.DECIMAL256: "numeric", arrow.STRING: "text", arrow.LARGE_STRING: "text",
	arrow.BINARY: "bytea", arrow.LARGE_BINARY: "bytea", arrow.TIMESTAMP: "timestamptz", arrow.DATE32: "date",
	arrow.INTERVAL_MONTH_DAY_NANO: "interval", arrow.BOOL: "bool", arrow.TIME64: "time",
}

// compareTyped compares our answer with PostgreSQL's: "" when equal, else what differs. The
// column types must be PostgreSQL's but where flightsrv documents another: bigint or double
// precision where PostgreSQL answers numeric (a window's sum of bigints, extract; docs/sql.md), and
// the column value is bytea where the tests' PostgreSQL table holds it as json (docs/sql.md,
// "JSON"; its bytes must equal PostgreSQL's text).
func compareTyped(typs []string, got [][]any, wantTypes []string, want [][]any) string {
	if len(typs) != len(wantTypes) {
		return fmt.Sprintf("%d columns, PostgreSQL %d", len(typs), len(wantTypes))
	}
	for i := range typs {
		if typs[i] != wantTypes[i] && !(wantTypes[i] == "numeric" && (typs[i] == "int8" || typs[i] == "float8")) &&
			!(wantTypes[i] == "json" && typs[i] == "bytea") {
			return fmt.Sprintf("column %d is %s, PostgreSQL's %s", i+1, typs[i], wantTypes[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, PostgreSQL %d: %.300v", len(got), len(want), got)
	}
	for r := range got {
		for c := range got[r] {
			if !sameValue(got[r][c], want[r][c]) {
				return fmt.Sprintf("row %d column %d: %v, PostgreSQL %v (row %v, PostgreSQL %v)", r+1, c+1, got[r][c], want[r][c], got[r], want[r])
			}
		}
	}
	return ""
}

func sameValue(ours, theirs any) bool {
	switch o := ours.(type) {
	case nil:
		return theirs == nil
	case int64:
		switch w := theirs.(type) {
		case int64:
			return o == w
		case float64:
			return float64(o) == w
		}
		return false
	case float64:
		w, ok := theirs.(float64)
		return ok && (o == w || (math.IsNaN(o) && math.IsNaN(w)) || math.Abs(o-w) <= 1e-9*math.Max(math.Abs(o), math.Abs(w)))
	}
	return ours == theirs
}
