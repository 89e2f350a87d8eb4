package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestJSONBesideUnknownAsPostgres: json beside untyped literals in VALUES and UNION is json,
// which has no equality (trial25's W2: VALUES ('{"a":1}'::json), ('{"a":1}') was grouped,
// counted DISTINCT and compared by its bytes), and jsonb beside them jsonb (a literal read by
// jsonb_in, so that UNION compares by value and shows jsonb's text).
func TestJSONBesideUnknownAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const vals = `(VALUES ('{"a":1}'::json), ('{"a":1}')) t(j)`
	const rec = `WITH RECURSIVE r(j, n) AS (SELECT '{"a":1}'::json, 0 UNION ALL SELECT j, n + 1 FROM r WHERE n < 2) `
	qs := []string{
		`SELECT j::text FROM (VALUES ('{"a" : 1}'::json), ('{"b" :  2}'), (NULL)) t(j)`,
		`SELECT COALESCE(NULL::json, '{"a" : 1}')::text, (CASE WHEN true THEN '{"b":  2}' ELSE '[]'::json END)::text`,
		`SELECT count(*) FROM (SELECT '1.0'::jsonb UNION SELECT '1') t(j)`,
		`SELECT j::text FROM (SELECT '1'::jsonb UNION ALL SELECT ' 1.0 ') t(j) ORDER BY 1`,
		`SELECT j::text FROM (SELECT '{"b":1, "a":2}' UNION ALL SELECT '[]'::jsonb) t(j) ORDER BY 1`,
		`WITH RECURSIVE r(j, n) AS (SELECT '{"a": 1.0}'::jsonb, 0 UNION ALL SELECT '{"b":2,   "a":1}', n + 1 FROM r WHERE n < 2) SELECT n, j::text FROM r ORDER BY n`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		allRefusedWithState(t, ctx, cl.c, pg, "42883",
			`SELECT count(*) FROM `+vals+` GROUP BY j`,
			`SELECT count(DISTINCT j) FROM `+vals,
			`SELECT count(*) FROM (VALUES (NULL), ('{"a":1}'::json)) t(j) GROUP BY j`,
			`SELECT j::text FROM (SELECT '{"a":1}'::json UNION SELECT '{"a":1}') t(j)`,
			`SELECT j::text FROM (SELECT '{"a":1}' UNION SELECT '{"a":1}'::json) t(j)`,
			`SELECT count(*) FROM (SELECT '{"a":1}'::json UNION ALL SELECT '{"a":1}') t(j) GROUP BY j`,
			rec+`SELECT count(*) FROM r GROUP BY j`,
			rec+`SELECT count(DISTINCT j) FROM r`,
			`WITH RECURSIVE r(j) AS (SELECT '{"a":1}'::json UNION SELECT '{"a":1}' FROM r) SELECT count(*) FROM r`,
		)
		refusedWithState(t, ctx, cl.c, pg, `SELECT count(*) FROM `+vals+` WHERE j = '{"a":1}'`, "42883")
		refusedWithState(t, ctx, cl.c, pg, rec+`SELECT count(*) FROM r WHERE j = '{"a":1}'`, "42883")
	}
}

// TestSetOperationKindsAsPostgres: INTERSECT and EXCEPT keep their columns' kinds, so bytea
// shows byteaout's text through them (it showed its bytes as text: '\x61' was "a").
func TestSetOperationKindsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT x::text FROM (SELECT '\x61'::bytea INTERSECT SELECT '\x61'::bytea) t(x)`,
		`SELECT x::text, length(x) FROM (SELECT '\x61'::bytea UNION ALL SELECT '\x6263'::bytea EXCEPT SELECT '\x62'::bytea) t(x) ORDER BY 2`,
		`SELECT x::text FROM (SELECT '\x61'::bytea INTERSECT ALL SELECT '\x61'::bytea) t(x)`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestRecursiveTypmodAsPostgres: a recursive query's column whose non-recursive term has a
// type modifier (varchar(n), numeric(p,s)) keeps it only when the recursive term's column has
// the same (a reference to the column, a cast to the same modifier, a CASE or COALESCE of
// such), else PostgreSQL's 42804 (trial25's W3: a varchar(3) column held 'abbb').
func TestRecursiveTypmodAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const head = "WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT "
	const tail = ", n + 1 FROM r WHERE n < 4) SELECT s, n FROM r ORDER BY n"
	const nhead = "WITH RECURSIVE r(x, n) AS (SELECT 1.5::numeric(4,1), 1 UNION ALL SELECT "
	const ntail = ", n + 1 FROM r WHERE n < 4) SELECT x::text, n FROM r ORDER BY n"
	qs := []string{
		head + "s" + tail,
		head + "'b'::varchar(3)" + tail,
		head + "CASE WHEN n > 1 THEN s ELSE 'x'::varchar(3) END" + tail,
		head + "COALESCE(s, s)" + tail,
		head + "(SELECT 'q'::varchar(3))" + tail,
		"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT s, n + 1 FROM r WHERE n < 4 GROUP BY s, n) SELECT s, n FROM r ORDER BY n",
		"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT DISTINCT s, n + 1 FROM r WHERE n < 4) SELECT s, n FROM r ORDER BY n",
		"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL (SELECT s, n + 1 FROM r WHERE n < 4 INTERSECT SELECT 'a'::varchar(3), 2)) SELECT s, n FROM r ORDER BY n",
		"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT t.s, r.n + 1 FROM r, (SELECT 'z'::varchar(3) AS s) t WHERE r.n < 4) SELECT s, n FROM r ORDER BY n",
		"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar, 1 UNION ALL SELECT 'b'::varchar(4), n + 1 FROM r WHERE n < 4) SELECT s, n FROM r ORDER BY n",
		"WITH RECURSIVE r(s, n) AS (SELECT 'a', 1 UNION ALL SELECT s || 'b', n + 1 FROM r WHERE n < 4) SELECT s, n FROM r ORDER BY n",
		nhead + "x" + ntail,
		nhead + "(x + 1)::numeric(4,1)" + ntail,
		"WITH RECURSIVE r(x, n) AS (SELECT x, 1 FROM (VALUES (1.5::numeric(4,1)), (2.5::numeric(4,1))) v(x) UNION ALL SELECT x, n + 1 FROM r WHERE n < 2) SELECT x::text, n FROM r ORDER BY n, x",
		"WITH RECURSIVE r(x, n) AS (SELECT x, 1 FROM (VALUES (1.5::numeric(4,1)), (2.5)) v(x) UNION ALL SELECT x + 1, n + 1 FROM r WHERE n < 2) SELECT x::text, n FROM r ORDER BY n, x",
		"WITH RECURSIVE r(x, n) AS (SELECT max(x), 1 FROM (VALUES (1.5::numeric(4,1))) v(x) UNION ALL SELECT x + 1, n + 1 FROM r WHERE n < 2) SELECT x::text, n FROM r ORDER BY n",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		allRefusedWithState(t, ctx, cl.c, pg, "42804",
			head+"s || 'b'"+tail,
			head+"'b'"+tail,
			head+"NULL"+tail,
			head+"s::text"+tail,
			head+"'b'::varchar(4)"+tail,
			head+"CASE WHEN n > 1 THEN s END"+tail,
			nhead+"x + 1"+ntail,
			nhead+"2"+ntail,
			nhead+"(x + 1)::numeric(5,2)"+ntail,
			nhead+"(x + 1)::float8"+ntail,
			"WITH RECURSIVE r(x, n) AS (SELECT 1.5::numeric(4), 1 UNION ALL SELECT x + 1, n + 1 FROM r WHERE n < 4) SELECT x, n FROM r",
			"WITH RECURSIVE r(x, n) AS (SELECT x, 1 FROM (SELECT 1.5::numeric(4,1) UNION ALL SELECT 2.5::numeric(4,1)) v(x) UNION ALL SELECT x + 1, n + 1 FROM r WHERE n < 2) SELECT x, n FROM r",
			"WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION SELECT s || 'b', n + 1 FROM r WHERE n < 4) SELECT s, n FROM r",
			"WITH RECURSIVE r(s, n) AS (SELECT s, 1 FROM (SELECT 'a'::varchar(3) AS s) q UNION ALL SELECT s || 'x', n + 1 FROM r WHERE n < 4) SELECT s, n FROM r",
			"WITH RECURSIVE c AS (SELECT 'a'::varchar(3) AS s), r(s, n) AS (SELECT s, 1 FROM c UNION ALL SELECT s || 'x', n + 1 FROM r WHERE n < 4) SELECT s, n FROM r",
		)
	}
}

// TestTrial25RefusalsAsPostgres: a recursive UNION (without ALL) of an interval is refused by
// name (trial25's I1: INTERNAL); regexp_match's flag g is PostgreSQL's
// 22023 whether its array is subscripted or not (it was 0A000 naming the array).
func TestTrial25RefusalsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, cl := range clients {
		for _, q := range []string{
			"WITH RECURSIVE r(i) AS (SELECT interval '1 day' UNION SELECT interval '24 hours' FROM r) SELECT i::text FROM r",
			"WITH RECURSIVE r(i, n) AS (SELECT interval '1 mon', 0 UNION SELECT interval '30 days', 0 FROM r) SELECT count(*) FROM r",
		} {
			_, err := run(ctx, cl.c, q)
			if status.Code(err) != codes.Unimplemented || sqlstateOf(err) != "0A000" || !strings.Contains(status.Convert(err).Message(), "recursive UNION (without ALL) of an interval is not supported") {
				t.Errorf("%s: %v (SQLSTATE %q), want UNIMPLEMENTED 0A000 naming the interval", q, err, sqlstateOf(err))
			}
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText,
			"WITH RECURSIVE r(i, n) AS (SELECT interval '1 day', 0 UNION ALL SELECT interval '24 hours', n + 1 FROM r WHERE n < 2) SELECT i::text, n FROM r ORDER BY n")...)
		allRefusedWithState(t, ctx, cl.c, pg, "22023",
			"SELECT regexp_match('abc', 'b', 'g')",
			"SELECT (regexp_match('abc', 'b', 'g'))[1]",
			"SELECT regexp_match('abc', 'b', 'ig')",
			"SELECT regexp_match('abc', 'b', 'gz')",
			"SELECT regexp_match(origin, 'O', 'g') FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02'",
		)
	}
}

// TestTrial25ParametersAsPostgres: LIKE with a parameter pattern and ESCAPE answers (trial25's
// E1: the `?` before ESCAPE was taken for the jsonb operator, "casts to escape"), date_bin's
// stride as a parameter beside a constant source answers, and a stride with months is 0A000
// in PostgreSQL's words.
func TestTrial25ParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'"
	for _, cl := range clients {
		for _, tc := range []struct {
			q, pgq string
			v      any
		}{
			{"SELECT count(*)" + w + " AND value->>'destination' LIKE ? ESCAPE '!'", "SELECT count(*)" + w + " AND value->>'destination' LIKE $1 ESCAPE '!'", "L!_%"},
			{"SELECT count(*)" + w + " AND value->>'destination' LIKE ? ESCAPE '!'", "SELECT count(*)" + w + " AND value->>'destination' LIKE $1 ESCAPE '!'", "!L%"},
			{"SELECT count(*)" + w + " AND value->>'destination' NOT ILIKE ? ESCAPE '!'", "SELECT count(*)" + w + " AND value->>'destination' NOT ILIKE $1 ESCAPE '!'", "l%"},
			{"SELECT 'a_b' LIKE 'a!_b' ESCAPE ?", "SELECT 'a_b' LIKE 'a!_b' ESCAPE $1", "!"},
			{"SELECT date_bin(?::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')::text", "SELECT date_bin($1::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')::text", "15 minutes"},
			{"SELECT date_bin(?::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')::text", "SELECT date_bin($1::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')::text",
				arrow.MonthDayNanoInterval{Nanoseconds: 900_000_000_000}},
		} {
			pgArg := tc.v
			if mdn, ok := tc.v.(arrow.MonthDayNanoInterval); ok {
				pgArg = fmt.Sprintf("%d days %d microseconds", mdn.Days, mdn.Nanoseconds/1000)
			}
			want := pgTextRows(t, ctx, pg, tc.pgq, pgArg)
			res, err := preparedRun(ctx, cl.c, tc.q, tc.v)
			if err != nil {
				t.Errorf("%s (%v): %v", tc.q, tc.v, err)
				continue
			}
			compareText(t, fmt.Sprintf("%s (%v)", tc.q, tc.v), textColumns(res), want)
			res.release()
		}
		const monthly = "SELECT date_bin(?::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')::text"
		for _, v := range []any{"1 month", arrow.MonthDayNanoInterval{Months: 1}} {
			_, err := preparedRun(ctx, cl.c, monthly, v)
			if status.Code(err) != codes.Unimplemented || sqlstateOf(err) != "0A000" || status.Convert(err).Message() != "timestamps cannot be binned into intervals containing months or years" {
				t.Errorf("%s (%v): %v (SQLSTATE %q), want UNIMPLEMENTED 0A000 in PostgreSQL's words", monthly, v, err, sqlstateOf(err))
			}
		}
	}
}

// allRefusedWithState is refusedWithState of each query.
func allRefusedWithState(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, state string, qs ...string) {
	t.Helper()
	for _, q := range qs {
		refusedWithState(t, ctx, cl, pg, q, state)
	}
}

// preparedRun prepares q through cl, binds v (a string or a month_day_nano interval) as its
// one parameter and returns the answer.
func preparedRun(ctx context.Context, cl *flightsql.Client, q string, v any) (*result, error) {
	stmt, err := cl.Prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	defer stmt.Close(ctx)
	var typ arrow.DataType = arrow.BinaryTypes.String
	if _, ok := v.(arrow.MonthDayNanoInterval); ok {
		typ = arrow.FixedWidthTypes.MonthDayNanoInterval
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "p", Type: typ, Nullable: true}}, nil))
	defer b.Release()
	switch x := v.(type) {
	case string:
		b.Field(0).(*array.StringBuilder).Append(x)
	case arrow.MonthDayNanoInterval:
		b.Field(0).(*array.MonthDayNanoIntervalBuilder).Append(x)
	}
	params := b.NewRecordBatch()
	defer params.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, cl, info)
}
