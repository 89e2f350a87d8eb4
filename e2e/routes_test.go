package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
)

// TestRoutedPredicatesAsPostgres: routed predicates written where BI tools write them are
// found and answered as PostgreSQL answers them over the same rows (the sample's ORD and BOS
// flights in a temporary table of the test's PostgreSQL), with pushdown on and off:
// Superset's virtual datasets as SQLAlchemy's PostgreSQL dialect renders them (the time filter,
// and sometimes the partition pin, outside `(SELECT … FROM flights …) AS virtual_table`, with
// TO_TIMESTAMP(…, 'YYYY-MM-DD HH24:MI:SS.US') literals, DATE_TRUNC time grains, double-quoted
// metric labels), CTEs, `timestamp = X`, NOT of comparisons, BETWEEN, to_timestamp(epoch), and
// empty ranges and contradictory pins, which answer no rows (count 0, other aggregates NULL,
// no groups). EXPLAIN shows the outer filter reached the read: its route pins one partition
// over the buckets of the range.
func TestRoutedPredicatesAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	conn := pgUTC(t, ctx, e.url)
	if _, err := conn.Exec(ctx, `CREATE TEMPORARY TABLE flights (origin text NOT NULL, "timestamp" timestamptz NOT NULL, id text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	var ordApril time.Time // an instant one ORD flight of April leaves at
	for _, f := range e.sample {
		if f.origin == "ORD" || f.origin == "BOS" {
			rows = append(rows, []any{f.origin, f.at, f.id})
		}
		if f.origin == "ORD" && ordApril.IsZero() && f.at.Month() == time.April && f.at.Day() == 10 {
			ordApril = f.at
		}
	}
	if n, err := conn.CopyFrom(ctx, pgx.Identifier{"flights"}, []string{"origin", "timestamp", "id"}, pgx.CopyFromRows(rows)); err != nil || n != int64(len(rows)) {
		t.Fatalf("copy %d of %d rows: %v", n, len(rows), err)
	}
	if ordApril.IsZero() {
		t.Fatal("the sample has no ORD flight on 2001-04-10")
	}
	tsLit := func(ts string) string {
		return "TO_TIMESTAMP('" + ts + ".000000', 'YYYY-MM-DD HH24:MI:SS.US')"
	}
	// Superset's virtual dataset: its SQL, then the chart's query around it.
	virtual := func(inner, where, sel, tail string) string {
		return "SELECT " + sel + " \nFROM (" + inner + ") AS virtual_table \nWHERE " + where + tail
	}
	superRange := "virtual_table.timestamp >= " + tsLit("2001-03-01 00:00:00") + " AND virtual_table.timestamp < " + tsLit("2001-04-15 00:00:00")
	at := ordApril.Format("2006-01-02 15:04:05.999999999Z07:00")
	queries := []struct {
		name string
		sql  string
		rows int // the least number of rows PostgreSQL answers (0: an empty answer is expected)
	}{
		{"Superset time series, time filter outside the virtual dataset",
			virtual("SELECT * FROM flights WHERE origin = 'ORD'", superRange,
				`DATE_TRUNC('day', virtual_table.timestamp) AS __timestamp, count(*) AS "COUNT(*)"`,
				` GROUP BY DATE_TRUNC('day', virtual_table.timestamp) ORDER BY "COUNT(*)" DESC LIMIT 10000`), 40},
		{"Superset big number",
			virtual("SELECT * FROM flights WHERE origin = 'BOS'", superRange, `count(*) AS "COUNT(*)"`, ""), 1},
		{"Superset table, pin and time filter outside",
			virtual("SELECT origin, timestamp, id FROM flights", "virtual_table.origin = 'ORD' AND "+superRange,
				`virtual_table.id AS id, virtual_table.timestamp AS timestamp`, ` ORDER BY virtual_table.timestamp DESC, virtual_table.id LIMIT 50`), 50},
		{"Superset table grouped by origin over an IN list",
			virtual("SELECT * FROM flights WHERE origin IN ('ORD', 'BOS')", superRange,
				`virtual_table.origin AS origin, min(virtual_table.timestamp) AS "MIN(timestamp)", max(virtual_table.timestamp) AS "MAX(timestamp)", count(*) AS "COUNT(*)"`,
				` GROUP BY virtual_table.origin ORDER BY "COUNT(*)" DESC LIMIT 1000`), 2},
		{"Superset weekly grain, hot buckets",
			virtual("SELECT * FROM flights WHERE origin = 'ORD'", "virtual_table.timestamp >= "+tsLit("2001-05-01 00:00:00")+" AND virtual_table.timestamp < "+tsLit("2001-06-15 00:00:00"),
				`DATE_TRUNC('week', virtual_table.timestamp) AS __timestamp, count(*) AS "COUNT(*)"`,
				` GROUP BY DATE_TRUNC('week', virtual_table.timestamp) LIMIT 10000`), 6},
		{"UNION ALL arms filtered from outside",
			"SELECT origin, count(*) FROM (SELECT origin, timestamp FROM flights WHERE origin = 'ORD' UNION ALL SELECT origin, timestamp FROM flights WHERE origin = 'BOS') u WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY origin", 2},
		{"grouped subquery filtered on its key",
			"SELECT * FROM (SELECT origin, count(*) AS n, min(timestamp) AS first FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY origin) g WHERE origin = 'ORD'", 1},
		{"CTE", "WITH m AS (SELECT origin, timestamp FROM flights WHERE origin = 'ORD') SELECT count(*) FROM m WHERE timestamp >= '2001-05-01' AND timestamp < '2001-06-01'", 1},
		{"HAVING over the grouping key", "SELECT origin, count(*) FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY origin HAVING origin = 'BOS'", 1},
		{"timestamp = X", "SELECT id, timestamp FROM flights WHERE origin = 'ORD' AND timestamp = '" + at + "'", 1},
		{"X = timestamp outside a subquery", "SELECT count(*) FROM (SELECT * FROM flights WHERE origin = 'ORD') s WHERE '" + at + "' = s.timestamp", 1},
		{"NOT (timestamp < X) AND NOT (timestamp >= Y)", "SELECT count(*) FROM flights WHERE origin = 'ORD' AND NOT (timestamp < '2001-03-10') AND NOT (timestamp >= '2001-04-10')", 1},
		{"NOT (timestamp <= X) AND NOT (timestamp > Y)", "SELECT count(*), min(timestamp), max(timestamp) FROM flights WHERE origin = 'ORD' AND NOT (timestamp <= '" + at + "') AND NOT (timestamp > '2001-04-20 12:00')", 1},
		{"BETWEEN", "SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp BETWEEN '2001-03-10' AND '2001-04-10 12:00'", 1},
		{"BETWEEN TO_TIMESTAMPs", "SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp BETWEEN " + tsLit("2001-03-10 00:00:00") + " AND " + tsLit("2001-04-10 12:00:00"), 1},
		{"to_timestamp(epoch seconds)", "SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= to_timestamp(984182400) AND timestamp < to_timestamp(986860800.5)", 1},
		// Empty routes: PostgreSQL's answers over no rows.
		{"inverted range", "SELECT count(*), min(timestamp), max(id) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-01' AND timestamp < '2001-04-01'", 1},
		{"inverted range, rows", "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-01' AND timestamp < '2001-04-01'", 0},
		{"zero-length range", "SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01'", 1},
		{"contradictory pins", "SELECT count(*) FROM flights WHERE origin = 'ORD' AND origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-04-01'", 1},
		{"contradictory pins, grouped", "SELECT origin, count(*) FROM flights WHERE origin = 'ORD' AND origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-04-01' GROUP BY origin", 0},
		{"contradiction across the virtual dataset",
			virtual("SELECT * FROM flights WHERE origin = 'ORD'", "virtual_table.origin = 'BOS' AND "+superRange, `count(*) AS "COUNT(*)", max(virtual_table.timestamp) AS "MAX(timestamp)"`, ""), 1},
		{"Superset empty time range",
			virtual("SELECT * FROM flights WHERE origin = 'ORD'", "virtual_table.timestamp >= "+tsLit("2001-04-15 00:00:00")+" AND virtual_table.timestamp < "+tsLit("2001-03-01 00:00:00"),
				`DATE_TRUNC('day', virtual_table.timestamp) AS __timestamp, count(*) AS "COUNT(*)"`,
				` GROUP BY DATE_TRUNC('day', virtual_table.timestamp) LIMIT 10000`), 0},
	}
	on, off := dial(t, e.on), dial(t, e.off)
	compared := 0
	for _, q := range queries {
		want := pgStrings(t, ctx, conn, q.sql)
		if len(want) < q.rows || (q.rows == 0 && len(want) != 0) {
			t.Fatalf("%s: PostgreSQL answers %d rows, the test expects at least %d (0: none)", q.name, len(want), q.rows)
		}
		for _, srv := range []struct {
			name string
			cl   *flightsql.Client
		}{{"on", on}, {"off", off}} {
			res, err := run(ctx, srv.cl, q.sql)
			if err != nil {
				t.Errorf("%s (pushdown %s): %v\n%s", q.name, srv.name, err, q.sql)
				continue
			}
			got := flightStrings(t, res)
			res.release()
			if !ordered(q.sql) {
				slices.SortFunc(got, slices.Compare)
				slices.SortFunc(want, slices.Compare)
			}
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("%s (pushdown %s): %d rows %.300v; PostgreSQL %d rows %.300v\n%s", q.name, srv.name, len(got), got, len(want), want, q.sql)
			}
		}
		compared += len(want)
	}
	t.Logf("%d queries, %d rows equal to PostgreSQL's", len(queries), compared)

	// The outer filter reached the read: its route pins ORD over March and April.
	plan := explainLines(t, on, "EXPLAIN "+queries[0].sql)
	read := slices.IndexFunc(plan, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "Read flights") })
	if read < 1 || strings.TrimSpace(plan[read-1]) != "Filter origin = <value> AND timestamp >= <value> AND timestamp < <value>" ||
		!slices.ContainsFunc(plan, func(l string) bool {
			return strings.Contains(l, "read flights: 3 WHERE conjunct(s) became the route (1 partition(s) pinned, a finite range over 2 calendar_month_utc bucket(s)); 0 residual")
		}) {
		t.Errorf("EXPLAIN of the virtual dataset does not route its read to ORD's March and April:\n%s", strings.Join(plan, "\n"))
	}
	plan = explainLines(t, on, "EXPLAIN "+queries[len(queries)-1].sql)
	if !slices.ContainsFunc(plan, func(l string) bool { return strings.Contains(l, "make an empty route") }) {
		t.Errorf("EXPLAIN of an empty range does not say its route is empty:\n%s", strings.Join(plan, "\n"))
	}
	// A prepared statement whose parameters sit outside the virtual dataset: the count of the
	// sample's ORD flights in the range, then none for an inverted range.
	stmt, err := on.Prepare(ctx, "SELECT count(*) FROM (SELECT * FROM flights WHERE origin = $1) AS virtual_table WHERE virtual_table.timestamp >= $2 AND virtual_table.timestamp < $3")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close(ctx)
	from, to := time.Date(2001, 3, 15, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 15, 0, 0, 0, 0, time.UTC)
	for _, r := range [][2]time.Time{{from, to}, {to, from}} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String},
			{Name: "b", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
			{Name: "c", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		b.Field(0).(*array.StringBuilder).Append("ORD")
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r[0].UnixMicro()))
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r[1].UnixMicro()))
		res := executeWith(t, ctx, on, stmt, b)
		want := int64(len(expected(e.sample, "ORD", r[0], r[1])))
		if got := scalarCount(t, res); got != want || (want == 0) != r[0].After(r[1]) {
			t.Errorf("prepared virtual dataset over [%v, %v): %d, the sample has %d", r[0], r[1], got, want)
		}
		res.release()
	}
	// Still refused: no range at all, and a filter that cannot pass a LIMIT.
	for _, q := range []string{
		"SELECT count(*) FROM flights WHERE origin = 'ORD' AND origin = 'SFO'",
		virtual("SELECT * FROM flights WHERE origin = 'ORD' LIMIT 10", superRange, "count(*)", ""),
	} {
		if _, err := run(ctx, on, q); err == nil || !strings.Contains(err.Error(), "flights needs timestamp >= <start> AND timestamp < <end>") {
			t.Errorf("%s: %v, want the routed contract's refusal", q, err)
		}
	}
}

// ordered reports a query whose ORDER BY orders every row (compared in order).
func ordered(sql string) bool {
	return strings.Contains(sql, "ORDER BY virtual_table.timestamp DESC, virtual_table.id")
}

// explainLines runs an EXPLAIN and returns its lines.
func explainLines(t *testing.T, cl *flightsql.Client, sql string) []string {
	t.Helper()
	var out []string
	for _, row := range flightStrings(t, mustRun(t, cl, sql)) {
		out = append(out, row[0])
	}
	return out
}

// pgStrings runs sql on PostgreSQL and returns its rows as text (valueText).
func pgStrings(t *testing.T, ctx context.Context, conn *pgx.Conn, sql string) [][]string {
	t.Helper()
	rs, err := conn.Query(ctx, sql)
	if err != nil {
		t.Fatalf("PostgreSQL: %v\n%s", err, sql)
	}
	defer rs.Close()
	var out [][]string
	for rs.Next() {
		vals, err := rs.Values()
		if err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = valueText(v)
		}
		out = append(out, row)
	}
	if err := rs.Err(); err != nil {
		t.Fatalf("PostgreSQL: %v\n%s", err, sql)
	}
	return out
}

// flightStrings returns a result's rows as text (valueText).
func flightStrings(t *testing.T, res *result) [][]string {
	t.Helper()
	var out [][]string
	for _, rec := range res.recs {
		for i := range int(rec.NumRows()) {
			row := make([]string, rec.NumCols())
			for j, c := range rec.Columns() {
				if c.IsNull(i) {
					row[j] = valueText(nil)
					continue
				}
				switch a := c.(type) {
				case *array.Int64:
					row[j] = valueText(a.Value(i))
				case *array.Timestamp:
					row[j] = valueText(a.Value(i).ToTime(a.DataType().(*arrow.TimestampType).Unit))
				case *array.String:
					row[j] = valueText(a.Value(i))
				default:
					t.Fatalf("column %d is %s", j, c.DataType())
				}
			}
			out = append(out, row)
		}
	}
	return out
}

// valueText spells a value for comparison: integers in decimal, instants in RFC 3339 UTC,
// text as it is, NULL as NULL.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case int64:
		return fmt.Sprint(x)
	case int32:
		return fmt.Sprint(x)
	case string:
		return x
	}
	return fmt.Sprintf("%T %v", v, v)
}
