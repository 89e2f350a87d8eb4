package substrait

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

var testDef = routing.TableDef{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2}

func testCatalog(t testing.TB) *StaticCatalog {
	t.Helper()
	cat, err := NewCatalog(testDef, routing.TableDef{Name: "Events", TableID: "ev", PartitionColumn: "device", Strategy: routing.CalendarDayUTC, WritableBuckets: 1})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// seedSQL is the aggregate-pushdown seed's query, verbatim.
const seedSQL = `SELECT COUNT(*)
FROM messages
WHERE channel_id = 'general'
  AND timestamp >= TIMESTAMPTZ '2026-01-01T00:00:00Z'
  AND timestamp < TIMESTAMPTZ '2027-01-01T00:00:00Z';`

var (
	jan1  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb1  = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	year1 = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
)

// routedWhere is the accepted predicate used by most cases.
const routedWhere = ` WHERE channel_id = 'general' AND timestamp >= '2026-01-01T00:00:00Z' AND timestamp < '2026-02-01T00:00:00Z'`

var allColumns = []OutputColumn{{"channel_id", "channel_id"}, {"timestamp", "timestamp"}, {"id", "id"}, {"value", "value"}}

func scanQuery(cols []OutputColumn, order Order, limit int64) *Query {
	return &Query{Table: testDef, Partition: []byte("general"), Range: routing.TimeRange{Start: jan1, End: feb1}, Columns: cols, Order: order, Limit: limit}
}

func aggQuery(r routing.TimeRange, limit int64, ms ...Measure) *Query {
	return &Query{Table: testDef, Partition: []byte("general"), Range: r, Aggregate: &Aggregate{Measures: ms}, Limit: limit}
}

// needAll is the refusal of a read of messages without any routed conjunct.
var needAll = errNeedPart(" and timestamp >= <start> AND timestamp < <end>")

// errNeed is the refusal naming missing timestamp bounds.
func errNeed(missing string) *Error {
	return &Error{Code: InvalidArgument, Msg: "messages needs " + missing}
}

// errNeedPart is the refusal naming a missing partition pin (and more).
func errNeedPart(more string) *Error {
	return &Error{Code: InvalidArgument, Msg: "messages needs channel_id = <value>" + more + " (several partitions: channel_id IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)"}
}

// routeError prepares and binds sql (canonical or general) and reads back its routes.
func routeError(t *testing.T, cat Catalog, sql string) error {
	t.Helper()
	s, err := Prepare(sql, cat)
	if err != nil {
		return err
	}
	if !s.IsGeneral() {
		_, err := planQuery(t, cat, sql)
		return err
	}
	b, err := s.BindGeneral(BindOptions{})
	if err != nil {
		return err
	}
	_, err = Routes(b.Plan, cat, false)
	return err
}

// planQuery runs the whole SQL road: Prepare, Bind (plan), Analyze (plan → query).
func planQuery(t *testing.T, cat Catalog, sql string, args ...any) (*Query, error) {
	t.Helper()
	s, err := Prepare(sql, cat)
	if err != nil {
		return nil, err
	}
	q, err := s.Query(args...)
	if err != nil {
		return nil, err
	}
	p, err := s.Bind(args...)
	if err != nil {
		t.Fatalf("Bind after a successful Query: %v", err)
	}
	q2, err := Analyze(p, cat)
	if err != nil {
		t.Fatalf("Analyze(Bind(%q)): %v\n%s", sql, err, Explain(p))
	}
	if !reflect.DeepEqual(normalise(q), normalise(q2)) {
		t.Fatalf("Analyze(Bind(q)) = %+v, want %+v", q2, q)
	}
	return q, nil
}

func normalise(q *Query) *Query {
	c := *q
	if len(c.Columns) == 0 {
		c.Columns = nil
	}
	return &c
}

func TestSQLAccepted(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	yearRange := routing.TimeRange{Start: jan1, End: year1}
	monthRange := routing.TimeRange{Start: jan1, End: feb1}
	tests := []struct {
		name string
		sql  string
		want *Query
	}{
		{"seed query verbatim", seedSQL, aggQuery(yearRange, -1, Measure{Func: CountStar, Name: "count"})},
		{"select star", `SELECT * FROM messages` + routedWhere, scanQuery(allColumns, OrderNone, -1)},
		{"literal on the left, swapped operators",
			`SELECT * FROM messages WHERE 'general' = channel_id AND '2026-01-01T00:00:00Z' <= timestamp AND '2026-02-01T00:00:00Z' > timestamp`,
			scanQuery(allColumns, OrderNone, -1)},
		{"conjuncts in any order",
			`SELECT * FROM messages WHERE timestamp < '2026-02-01' AND channel_id = 'general' AND timestamp >= '2026-01-01'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"nested parentheses",
			`SELECT * FROM messages WHERE (channel_id = 'general' AND (timestamp >= '2026-01-01')) AND timestamp < '2026-02-01'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"same partition value repeated",
			`SELECT * FROM messages WHERE channel_id = 'general' AND 'general' = channel_id AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"cast syntax forms",
			`SELECT * FROM messages WHERE channel_id = 'general'::text AND timestamp >= '2026-01-01T00:00:00Z'::timestamptz AND timestamp < CAST('2026-02-01T00:00:00Z' AS timestamptz)`,
			scanQuery(allColumns, OrderNone, -1)},
		{"timestamp with time zone and timestamp literals",
			`SELECT * FROM messages WHERE channel_id = CAST('general' AS varchar) AND timestamp >= TIMESTAMP WITH TIME ZONE '2026-01-01 00:00:00+00' AND timestamp < TIMESTAMP '2026-02-01 00:00:00'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"date literals and pg_catalog types",
			`SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= DATE '2026-01-01' AND timestamp < '2026-02-01'::pg_catalog.timestamptz`,
			scanQuery(allColumns, OrderNone, -1)},
		{"zone offsets",
			`SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01T02:00:00+02:00' AND timestamp < TIMESTAMPTZ '2026-01-31 19:00:00-05'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"casts on the columns keep their meaning",
			`SELECT * FROM messages WHERE channel_id::text = 'general' AND timestamp::timestamptz >= '2026-01-01' AND timestamp < '2026-02-01'`,
			scanQuery(allColumns, OrderNone, -1)},
		{"identifiers fold, quoted ones match, alias qualifies",
			`SELECT M.ID, "timestamp" FROM MESSAGES AS m WHERE m.CHANNEL_ID = 'general' AND m."timestamp" >= '2026-01-01' AND "timestamp" < '2026-02-01'`,
			scanQuery([]OutputColumn{{"id", "id"}, {"timestamp", "timestamp"}}, OrderNone, -1)},
		{"table name qualifies",
			`SELECT messages.value FROM messages` + routedWhere,
			scanQuery([]OutputColumn{{"value", "value"}}, OrderNone, -1)},
		{"columns, aliases, duplicates",
			`SELECT id AS msg, timestamp ts, id FROM messages` + routedWhere,
			scanQuery([]OutputColumn{{"id", "msg"}, {"timestamp", "ts"}, {"id", "id"}}, OrderNone, -1)},
		{"qualified star and star with columns",
			`SELECT m.*, id FROM messages m` + routedWhere,
			scanQuery(append(append([]OutputColumn(nil), allColumns...), OutputColumn{"id", "id"}), OrderNone, -1)},
		{"order by timestamp", `SELECT id FROM messages` + routedWhere + ` ORDER BY timestamp`,
			scanQuery([]OutputColumn{{"id", "id"}}, OrderAsc, -1)},
		{"order by timestamp desc, id desc with limit", `SELECT * FROM messages` + routedWhere + ` ORDER BY timestamp DESC, id DESC LIMIT 10`,
			scanQuery(allColumns, OrderDesc, 10)},
		{"order by position and alias", `SELECT timestamp AS t, id AS i FROM messages` + routedWhere + ` ORDER BY 1 DESC, i DESC NULLS LAST`,
			scanQuery([]OutputColumn{{"timestamp", "t"}, {"id", "i"}}, OrderDesc, -1)},
		{"output name wins over column name", `SELECT timestamp AS id FROM messages` + routedWhere + ` ORDER BY id`,
			scanQuery([]OutputColumn{{"timestamp", "id"}}, OrderAsc, -1)},
		{"limit all and null", `SELECT * FROM messages` + routedWhere + ` LIMIT ALL`, scanQuery(allColumns, OrderNone, -1)},
		{"offset zero", `SELECT * FROM messages` + routedWhere + ` LIMIT 5 OFFSET 0`, scanQuery(allColumns, OrderNone, 5)},
		{"limit zero", `SELECT * FROM messages` + routedWhere + ` LIMIT 0`, scanQuery(allColumns, OrderNone, 0)},
		{"limit beyond int32", `SELECT * FROM messages` + routedWhere + ` LIMIT 5000000000`, scanQuery(allColumns, OrderNone, 5000000000)},
		{"fetch first", `SELECT * FROM messages` + routedWhere + ` ORDER BY timestamp FETCH FIRST 3 ROWS ONLY`, scanQuery(allColumns, OrderAsc, 3)},
		{"count alias and limit", `SELECT count(*) AS n FROM messages` + routedWhere + ` LIMIT 1`,
			aggQuery(monthRange, 1, Measure{Func: CountStar, Name: "n"})},
		{"count(1) is count(*)", `SELECT COUNT(1) FROM messages` + routedWhere,
			aggQuery(monthRange, -1, Measure{Func: CountStar, Name: "count"})},
		{"pg_catalog.count", `SELECT pg_catalog.count(*) FROM messages` + routedWhere,
			aggQuery(monthRange, -1, Measure{Func: CountStar, Name: "count"})},
		{"min, max, count(column)", `SELECT MIN(timestamp), max(timestamp) AS last, count(id) FROM messages` + routedWhere,
			aggQuery(monthRange, -1, Measure{Func: Min, Column: "timestamp", Name: "min"}, Measure{Func: Max, Column: "timestamp", Name: "last"}, Measure{Func: Count, Column: "id", Name: "count"})},
		{"other table, case-insensitive name", `SELECT count(*) FROM events WHERE device = 'd1' AND timestamp >= '2026-01-01' AND timestamp < '2027-01-01'`,
			&Query{Table: cat.byName["events"], Partition: []byte("d1"), Range: yearRange, Aggregate: &Aggregate{Measures: []Measure{{Func: CountStar, Name: "count"}}}, Limit: -1}},
		{"empty partition value", `SELECT * FROM messages WHERE channel_id = '' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
			&Query{Table: testDef, Partition: []byte(""), Range: monthRange, Columns: allColumns, Limit: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := planQuery(t, cat, tt.sql)
			if err != nil {
				t.Fatalf("%q: %v", tt.sql, err)
			}
			if !reflect.DeepEqual(normalise(got), normalise(tt.want)) {
				t.Errorf("%q:\n got %+v %+v\nwant %+v %+v", tt.sql, got, got.Aggregate, tt.want, tt.want.Aggregate)
			}
		})
	}
}

// TestRoutedPredicateErrors covers every rejected predicate shape, in both operand orders,
// with its exact error (pulpitum-reference.md §5.2–§5.3).
func TestRoutedPredicateErrors(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const (
		P = `channel_id = 'general'`
		L = `timestamp >= '2026-01-01'`
		U = `timestamp < '2026-02-01'`
	)
	where := func(conj ...string) string { return `SELECT * FROM messages WHERE ` + strings.Join(conj, " AND ") }
	tests := []struct {
		name string
		sql  string
		want *Error
	}{
		// one refusal naming everything missing and the partition column
		{"no WHERE", `SELECT * FROM messages`, needAll},
		{"missing start", where(P, U), errNeed("timestamp >= <start>")},
		{"missing both bounds", where(P), errNeed("timestamp >= <start> AND timestamp < <end>")},
		{"missing end", where(P, L), errNeed("timestamp < <end>")},
		{"missing end and partition", where(L), errNeedPart(" and timestamp < <end>")},
		{"empty range", where(P, `timestamp >= '2026-02-01'`, `timestamp < '2026-01-01'`), ErrInvalidTimestampRange},
		{"zero-length range", where(P, L, `timestamp < '2026-01-01'`), ErrInvalidTimestampRange},
		{"missing partition before an empty range", where(`timestamp >= '2026-02-01'`, `timestamp < '2026-01-01'`), errNeedPart("")},
		{"missing partition", where(L, U), errNeedPart("")},
		// conflicts: the partition sets are intersected; bounds take the tightest
		{"two partition values", where(P, `channel_id = 'other'`, L, U), ErrConflictingShardEquality},
		{"two partition values, literal left", where(P, `'other' = channel_id`, L, U), ErrConflictingShardEquality},
		{"conflict beside a residual conjunct", where(`id = 'x'`, P, `channel_id = 'other'`, L, U), ErrConflictingShardEquality},
		{"two lower bounds", where(P, L, `timestamp >= '2026-01-02'`, U), nil},
		{"two equal lower bounds", where(P, L, L, U), nil},
		{"two lower bounds, mixed operand order", where(P, L, `'2026-01-01' <= timestamp`, U), nil},
		{"two upper bounds", where(P, L, U, `'2026-02-01' > timestamp`), nil},
		// bounds in every form
		{"strict lower bound alone", where(`timestamp > '2026-01-01'`), errNeedPart(" and timestamp < <end>")},
		{"strict lower bound", where(P, `timestamp > '2026-01-01'`, U), nil},
		{"strict lower bound, literal left", where(P, `'2026-01-01' < timestamp`, U), nil},
		{"inclusive upper bound", where(P, L, `timestamp <= '2026-02-01'`), nil},
		{"inclusive upper bound, literal left", where(P, L, `'2026-02-01' >= timestamp`), nil},
		{"BETWEEN", where(P, `timestamp BETWEEN '2026-01-01' AND '2026-02-01'`), nil},
		{"IN", where(`channel_id IN ('general')`, L, U), nil},
		{"timestamp equality is residual", where(P, `timestamp = '2026-01-01'`, U), errNeed("timestamp >= <start>")},
		{"timestamp equality, literal left", where(P, `'2026-01-01' = timestamp`, U), errNeed("timestamp >= <start>")},
		{"not equal is residual", where(`channel_id <> 'general'`, L, U), errNeedPart("")},
		{"bang equal", where(`channel_id != 'general'`, L, U), errNeedPart("")},
		{"not equal, literal left", where(`'general' <> channel_id`, L, U), errNeedPart("")},
		{"partition range", where(`channel_id >= 'a'`, L, U), errNeedPart("")},
		{"OR", where(`(channel_id = 'a' OR id = 'b')`, L, U), errNeedPart("")},
		{"OR of bounds", where(P, `(timestamp >= '2026-01-01' OR timestamp < '2026-02-01')`), errNeed("timestamp >= <start> AND timestamp < <end>")},
		{"NOT", where(P, `NOT (timestamp < '2026-01-01')`, U), errNeed("timestamp >= <start>")},
		{"LIKE", where(`channel_id LIKE 'gen%'`, L, U), errNeedPart("")},
		{"NULL partition", where(`channel_id = NULL`, L, U), errNeedPart("")},
		{"NULL partition, literal left", where(`NULL = channel_id`, L, U), errNeedPart("")},
		{"NULL bound", where(P, `timestamp >= NULL`, U), errNeed("timestamp >= <start>")},
		{"typed NULL bound", where(P, L, `timestamp < NULL::timestamptz`), errNeed("timestamp < <end>")},
		{"column against column", where(`channel_id = id`, L, U), errNeedPart("")},
		{"timestamp against itself", where(P, `timestamp >= timestamp`, U), errNeed("timestamp >= <start>")},
		{"function of partition", where(`lower(channel_id) = 'general'`, L, U), errNeedPart("")},
		{"column cast changing meaning", where(P, `timestamp::date >= DATE '2026-01-01'`, U), errNeed("timestamp >= <start>")},
		// residual conjuncts are accepted
		{"IS NULL", where(P, L, U, `id IS NULL`), nil},
		{"other column", where(P, L, U, `id = 'x'`), nil},
		{"other column, literal left", where(P, L, U, `'x' = id`), nil},
		{"value column", where(P, L, U, `value = '\x00'`), nil},
		{"literal comparison", where(`1 = 1`, P, L, U), nil},
		{"boolean literal", where(`true`, P, L, U), nil},
		{"arithmetic bound", where(P, `timestamp >= TIMESTAMPTZ '2026-01-01' - INTERVAL '1 day'`, U), nil},
		{"now() bounds", where(P, `timestamp >= now() - INTERVAL '1 hour'`, `timestamp < now() + INTERVAL '1 hour'`), nil},
		{"operator schema-qualified", where(`channel_id OPERATOR(pg_catalog.=) 'general'`, L, U), nil},
		{"out of range bound is clamped", where(P, L, `timestamp < '2300-01-01'`), nil},
		{"far past bound is clamped", where(P, `timestamp >= '0001-01-01'`, U), nil},
		// type errors
		{"integer partition literal", where(`channel_id = 5`, L, U), &Error{Code: InvalidArgument, Msg: "operator does not exist: text = integer"}},
		{"integer bound", where(P, `timestamp >= 5`, U), &Error{Code: InvalidArgument, Msg: "operator does not exist: timestamp with time zone >= integer"}},
		{"cast with precision", where(P, `timestamp >= '2026-01-01'::timestamptz(3)`, U), &Error{Code: Unimplemented, Msg: "casts with a type modifier are not supported"}},
		{"cast with length", where(`channel_id = 'general'::varchar(3)`, L, U), &Error{Code: Unimplemented, Msg: "casts with a type modifier are not supported"}},
		{"row value", where(`(channel_id, id) = ('general', 'x')`, L, U), &Error{Code: Unimplemented, Msg: "row values are not supported"}},
		{"row value of bounds", where(P, `(timestamp, id) >= ('2026-01-01', 'a')`, U), &Error{Code: Unimplemented, Msg: "row values are not supported"}},
		// literals
		{"invalid timestamp literal", where(P, `timestamp >= 'yesterday'`, U), ErrInvalidTimestampLiteral},
		{"infinite bound", where(P, L, `timestamp < 'infinity'`), ErrInvalidTimestampLiteral},
		{"date literal with a time", where(P, `timestamp >= DATE '2026-01-01 10:00'`, U), ErrInvalidTimestampLiteral},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := routeError(t, cat, tt.sql)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("%q: got error %v, want it accepted", tt.sql, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("%q: got error %v, want %v", tt.sql, err, tt.want)
			}
		})
	}
}

// TestUnsupportedSQL checks the code and exact message of every construct outside the
// supported surface.
func TestUnsupportedSQL(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	tests := []struct {
		sql  string
		code Code
		msg  string
	}{
		{`SELECT * FROM messages a JOIN messages b ON a.id = b.id` + routedWhere, Unimplemented, "JOIN is not supported"},
		{`SELECT * FROM messages, events` + routedWhere, Unimplemented, "JOIN is not supported"},
		{`SELECT * FROM (SELECT * FROM messages) s` + routedWhere, InvalidArgument, needAll.Msg},
		{`SELECT * FROM messages WHERE channel_id = (SELECT 'general') AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, Unimplemented, "subqueries in expressions are not supported"},
		{`SELECT * FROM messages WHERE channel_id IN (SELECT 'general') AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, Unimplemented, "subqueries in expressions are not supported"},
		{`SELECT (SELECT 1) FROM messages` + routedWhere, Unimplemented, "subqueries in expressions are not supported"},
		{`WITH m AS (SELECT * FROM messages) SELECT * FROM m`, InvalidArgument, needAll.Msg},
		{`SELECT * FROM messages` + routedWhere + ` EXCEPT SELECT * FROM messages` + routedWhere, Unimplemented, "EXCEPT is not supported"},
		{`VALUES (1)`, Unimplemented, "VALUES is not supported"},
		{`SELECT * INTO t FROM messages` + routedWhere, Unimplemented, "SELECT INTO is not supported"},
		{`SELECT * FROM messages` + routedWhere + ` FOR UPDATE`, Unimplemented, "FOR UPDATE / FOR SHARE is not supported"},
		{`INSERT INTO messages VALUES ('a', now(), 'b', 'c')`, Unimplemented, "INSERT is not supported"},
		{`UPDATE messages SET id = 'x'`, Unimplemented, "UPDATE is not supported"},
		{`DELETE FROM messages`, Unimplemented, "DELETE is not supported"},
		{`CREATE TABLE t (a int)`, Unimplemented, "CREATE TABLE is not supported"},
		{`DROP TABLE messages`, Unimplemented, "DROP is not supported"},
		{`BEGIN`, Unimplemented, "transaction control (BEGIN, COMMIT, ROLLBACK) is not supported"},
		{`CREATE INDEX i ON messages (id)`, Unimplemented, "statement IndexStmt is not supported"},
		{`SELECT 1; SELECT 2`, Unimplemented, "multiple statements are not supported"},
		{`EXPLAIN ANALYZE SELECT * FROM messages` + routedWhere, Unimplemented, "EXPLAIN options are not supported"},
		{`SELECT * FROM other.messages` + routedWhere, Unimplemented, "table names qualified by a catalog or a schema other than public are not supported"},
		{`SELECT * FROM db.public.messages` + routedWhere, Unimplemented, "table names qualified by a catalog or a schema other than public are not supported"},
		{`SELECT * FROM generate_series(1, 2)`, Unimplemented, "table functions are not supported"},
		{`SELECT * FROM messages m(a, b)` + routedWhere, InvalidArgument, `column "channel_id" does not exist`},
		// GROUP BY a time bucket of timestamp is supported (groupby_test.go); other groupings are not.
		{`SELECT * FROM messages` + routedWhere + ` ORDER BY timestamp FETCH FIRST 5 ROWS WITH TIES`, Unimplemented, "FETCH FIRST … WITH TIES is not supported"},
		{`SELECT count(*) OVER () FROM messages` + routedWhere, Unimplemented, "window functions are not supported"},
		{`SELECT * FROM messages` + routedWhere + ` WINDOW w AS ()`, Unimplemented, "window functions are not supported"},
		{`SELECT FROM messages` + routedWhere, Unimplemented, "an empty select list is not supported"},
		{`SELECT * FROM messages` + routedWhere + ` ORDER BY timestamp USING <`, Unimplemented, "ORDER BY … USING is not supported"},
		{`SELECT * FROM messages` + routedWhere + ` LIMIT 1 + 1`, Unimplemented, "LIMIT expressions are not supported"},
		{`SELECT $1 FROM messages` + routedWhere, InvalidArgument, "could not determine the data type of parameter $1: cast it ($1::int, $1::text…)"},
		// not found / invalid names
		{`SELECT * FROM nosuch` + routedWhere, NotFound, `table "nosuch" does not exist`},
		{`SELECT * FROM "Messages2"` + routedWhere, NotFound, `table "Messages2" does not exist`},
		{`SELECT nosuch FROM messages` + routedWhere, InvalidArgument, `column "nosuch" does not exist`},
		{`SELECT * FROM messages WHERE nosuch = 'x'`, InvalidArgument, `column "nosuch" does not exist`},
		{`SELECT x.id FROM messages m` + routedWhere, InvalidArgument, `missing FROM-clause entry for table "x"`},
		{`SELECT messages.id FROM messages m` + routedWhere, InvalidArgument, `missing FROM-clause entry for table "messages"`},
		{`SELECT id, count(*) FROM messages` + routedWhere, InvalidArgument, `column "id" must appear in the GROUP BY clause or be used in an aggregate function`},
		{`SELECT * FROM messages` + routedWhere + ` ORDER BY 5`, InvalidArgument, "ORDER BY position 5 is not in select list"},
		{`SELECT * FROM messages` + routedWhere + ` LIMIT -1`, InvalidArgument, "LIMIT must not be negative"},
		{`SELECT * FROM messages` + routedWhere + ` LIMIT 1.5`, InvalidArgument, "LIMIT must be bigint, not double precision"},
		{`SELECT min(*) FROM messages` + routedWhere, InvalidArgument, "MIN(*) is not a valid aggregate"},
		{``, InvalidArgument, "empty query"},
		{`-- nothing`, InvalidArgument, "empty query"},
		{`SELEC * FROM messages`, InvalidArgument, `syntax error at or near "SELEC" (position 1)`},
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
		})
	}
}

// TestErrorsCarryNoValues: no planning error quotes a literal of the query.
func TestErrorsCarryNoValues(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, sql := range []string{
		`SELECT * FROM messages WHERE channel_id = 'sekrit' AND AND`,
		`SELECT * FROM messages WHERE channel_id = 'sekrit' AND channel_id = 'sekrit2' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
		`SELECT * FROM messages WHERE channel_id = 'sekrit' AND timestamp >= 'sekrit' AND timestamp < '2026-02-01'`,
		`SELECT * FROM messages WHERE channel_id = 'sekrit' AND id = 'sekrit'`,
		`SELECT * FROM messages WHERE channel_id = 'sekrit`,
	} {
		_, err := Prepare(sql, cat)
		var e *Error
		if !errors.As(err, &e) || strings.Contains(e.LogMessage(), "sekrit") {
			t.Errorf("%q: error %v (log form %q)", sql, err, e.LogMessage())
		}
		// Only a syntax error shows the client its own text near the error.
		if strings.Contains(e.Msg, "sekrit") && e.SQLState != "42601" {
			t.Errorf("%q: error %v quotes a value", sql, err)
		}
	}
}
