package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// Issue 18's second user trial (trial23): generate_series' type, jsonb, || of a value beside
// text, and the errors PostgreSQL raises where flightsrv answered or raised another.

// trial23Where is ORD's flights over a day and a half (archived March, hot April).
const trial23Where = " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 18:00'"

// TestTimestampSeriesTypeAsPostgres: generate_series of timestamps is timestamp without time
// zone when an end is one and none is timestamptz (a date or an untyped literal beside it
// too), else timestamptz, as PostgreSQL resolves it; ::text, AT TIME ZONE, to_char's TZ,
// extract, min, max, date_trunc and UNION over it answer PostgreSQL's text.
func TestTimestampSeriesTypeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const s = "generate_series(timestamp '2001-03-31 22:00', timestamp '2001-04-01 01:00', interval '1 hour') g"
	qs := []string{
		"SELECT g::text FROM " + s + " ORDER BY 1",
		"SELECT (g AT TIME ZONE 'America/New_York')::text FROM " + s + " ORDER BY 1",
		"SELECT to_char(g, 'YYYY-MM-DD HH24:MI TZ'), extract(hour FROM g AT TIME ZONE 'Europe/Paris')::text FROM " + s + " ORDER BY 1",
		"SELECT g::text FROM generate_series(timestamp '2001-01-31', timestamp '2001-06-30', interval '1 month') g",
		"SELECT g::text FROM generate_series(date '2001-01-31', timestamp '2001-03-30', interval '1 month') g",
		"SELECT g::text FROM generate_series(timestamp '2001-01-31', '2001-03-30 00:00+05', interval '1 month') g",
		"SELECT g::text FROM generate_series(timestamptz '2001-01-31', timestamp '2001-03-30', interval '1 month') g",
		"SELECT g::text FROM generate_series(date '2001-01-31', date '2001-03-30', '1 month') g",
		"SELECT g::text FROM generate_series('2001-01-31', '2001-03-30', interval '1 month') g",
		"SELECT min(g)::text, max(g)::text, date_trunc('month', max(g))::text FROM generate_series(timestamp '2001-01-31', timestamp '2001-06-30', interval '1 month') g",
		"SELECT a::text FROM generate_series(timestamp '2001-01-31', timestamp '2001-03-30', interval '1 month') a UNION SELECT b::text FROM generate_series(timestamptz '2001-01-31', timestamptz '2001-02-28', interval '1 month') b ORDER BY 1",
		"SELECT g::text FROM generate_series(timestamp '2001-01-31', NULL, interval '1 month') g",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
	}
}

// TestJSONBAsPostgres: ::jsonb answers PostgreSQL's jsonb — keys sorted shorter first then
// bytewise, a duplicate key's last value, numbers as numeric writes them, jsonb_out's
// spacing — through ::text, ->, ->>, #>, #>>, =, <> and jsonb_typeof, over constants and
// the flights' documents; bad documents, casts and operators are PostgreSQL's errors; what
// jsonb has and flightsrv does not (INTERSECT and EXCEPT of jsonb, numbers past an exponent
// of 1000) is refused by name.
func TestJSONBAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		`SELECT '{"b":1, "a":2, "a":3}'::jsonb::text, '{"b":1, "a":2, "a":3}'::json::text, '[1, 2.50, 1e2]'::jsonb::text`,
		`SELECT '{"b":1, "a":2, "a":3}'::jsonb->>'a', '{"b":1, "a":2}'::jsonb = '{"a":2,"b":1}'::jsonb`,
		`SELECT '[1.0, -0, -0.0, 0.10e1, 1.5e-3, 1E+2, 12.500e-1, -1e-2, 1e20, 0e5]'::jsonb::text, '{"aa":1,"b":{"z":[],"y":{}},"":null, "c": "x\u00e9\n\u0001\"\\\/"}'::jsonb::text`,
		`SELECT '1.0'::jsonb = '1'::jsonb, '{"a":[1,2]}'::jsonb = '{"a":[1,2.00]}'::jsonb, '{"a":1}'::jsonb <> '{"a":2}'::jsonb, '"x"'::jsonb = '"x"', '[1]'::jsonb = '[1, 1]', NULL::jsonb = '1'`,
		`SELECT '"x"'::jsonb->>0, '"x"'::jsonb->>-1, '"x"'::jsonb->>1, ('5'::jsonb->0)::text, '"x"'::jsonb #>> '{0}', '"x"'::jsonb->>'a', '["x"]'::jsonb->>-1, '"x"'::json->>0, ('[1,{"b":2,"a":1}]'::jsonb->1)::text`,
		`SELECT COALESCE(NULL, '{"b":1,"a":2.0}'::jsonb)::text, COALESCE(NULL, '1.0'::jsonb) = '1', CASE WHEN true THEN '[1.0]'::jsonb END = '[1]'::jsonb, CASE WHEN false THEN '1'::jsonb ELSE '2'::jsonb END::text`,
		`SELECT jsonb_typeof('{"a":1}'::jsonb), jsonb_typeof('1.50'), jsonb_typeof('[]'::jsonb->0), ('{"x":{"b":1,"a":[2.0]}}'::jsonb->'x')::text, '{"x":{"b":1,"a":[2.0]}}'::jsonb #>> '{x}'`,
		"SELECT id, value::jsonb::text, (value::jsonb)->>'delay', jsonb_typeof(value::jsonb->'delay'), (value::jsonb->'destination')::text, (value::jsonb #> '{distance}')::text" + trial23Where + " ORDER BY timestamp, id",
		"SELECT (value::jsonb)->>'destination' d, count(*)" + trial23Where + " GROUP BY 1 ORDER BY 2 DESC, 1",
		"SELECT count(DISTINCT value::jsonb::text), count(*)" + trial23Where,
		"SELECT count(*) FROM flights a JOIN flights b ON a.value::jsonb = b.value::jsonb WHERE a.origin = 'ORD' AND a.timestamp >= '2001-03-31 20:00' AND a.timestamp < '2001-04-01 04:00' AND b.origin = 'ORD' AND b.timestamp >= '2001-03-31 20:00' AND b.timestamp < '2001-04-01 04:00'",
		"SELECT count(*) FROM (SELECT value::jsonb j" + trial23Where + ") s WHERE j = '{\"delay\": 77, \"destination\": \"DTW\", \"distance\": 235.0}'",
		// Once refused by name, now answered (json18).
		`SELECT ('{"a":1}'::jsonb || '{"b":1}'::jsonb)::text, ('{"a":1}'::jsonb - 'a')::text, jsonb_array_length('[1]'::jsonb)`,
		"SELECT id" + trial23Where + " ORDER BY value::jsonb, id",
		"SELECT id, value::jsonb::text AS j" + trial23Where + " ORDER BY value::jsonb DESC, id",
		"SELECT id, row_number() OVER (ORDER BY value::jsonb, id), count(*) OVER (PARTITION BY value::jsonb->'destination')" + trial23Where + " ORDER BY id",
		"SELECT count(DISTINCT j) FROM (VALUES ('1.0'::jsonb), ('1'::jsonb)) v(j)",
		`SELECT '{"a":1}'::jsonb < '{"a":2}'::jsonb, '[1]'::jsonb >= '1', '1.0'::jsonb <= '1', '{}'::jsonb > '[1,2]'`,
		`SELECT j::text FROM (SELECT '1'::jsonb AS j UNION SELECT '2'::jsonb UNION SELECT '[]'::jsonb) s ORDER BY 1`,
		`SELECT count(*) FROM (SELECT '1.0'::jsonb UNION SELECT '1'::jsonb) s`,
		"SELECT count(*), sum(n)::text FROM (SELECT j, count(*) n FROM (VALUES ('1.0'::jsonb), ('1'::jsonb)) v(j) GROUP BY j) s",
		"SELECT count(*) FROM (SELECT DISTINCT j FROM (VALUES ('1.0'::jsonb), ('1'::jsonb), ('[1]')) v(j)) s",
		"SELECT x::text, count(*) FROM (SELECT value::jsonb->'destination' x" + trial23Where + ") s GROUP BY x ORDER BY 2 DESC, x",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			`SELECT '{"a": }'::jsonb`:                   "22P02",
			`SELECT '"\u0000"'::jsonb`:                  "22P05",
			`SELECT 1::jsonb`:                           "42846",
			`SELECT '{"a":1}'::json = '{"a":1}'::json`:  "42883",
			`SELECT '{"a":1}'::jsonb = '{"a":1}'::json`: "42883",
			`SELECT json_typeof('1'::jsonb)`:            "42883",
			`SELECT jsonb_typeof('1'::json)`:            "42883",
			`SELECT max('1'::jsonb)`:                    "42883",
			`SELECT '{"a":1}'::jsonb || 'x'`:            "22P02",
		} {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		for _, q := range []string{
			`SELECT '1e1001'::jsonb`,
			`SELECT '1'::jsonb INTERSECT SELECT '1.0'::jsonb`,
			`SELECT '1'::jsonb EXCEPT SELECT '1.0'::jsonb`,
		} {
			if _, err := run(ctx, cl.c, q); status.Code(err) != codes.Unimplemented || sqlstateOf(err) != "0A000" {
				t.Errorf("%s (%s): %v, want UNIMPLEMENTED 0A000", q, cl.name, err)
			}
		}
	}
}

// TestTrial23ErrorsAsPostgres: || of text and a value of another type is the value's text
// (interval, numeric, boolean, dates), of two values neither of which is text 42883; a window
// frame the grammar refuses is 42P20; min and max of boolean are 42883; generate_series over
// another FROM item's column and array || are refused by name; 'a' || bytea is bytea
// (byteacat).
func TestTrial23ErrorsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT (value->>'destination') || interval '1 day', (value->>'destination') || 1.50, 1.50 || (value->>'destination')" + trial23Where + " ORDER BY timestamp, id",
		"SELECT 'a' || 1.50, 1.50 || 'a', 'x' || interval '1 mon 2 days', interval '-3 hours' || 'x', 'a' || 2, 'a' || true, 'a' || 1.5::float8, 'a' || date '2001-01-01', " +
			"'a' || timestamp '2001-01-01', 'a' || timestamptz '2001-01-01', 'a' || NULL::int, 'a' || 'b', NULL || 'b'",
		"SELECT 'a' || value" + trial23Where + " ORDER BY id LIMIT 2",
		"SELECT g::text FROM generate_series(1::smallint, 3) g",
		"SELECT g::text FROM generate_series(1::smallint, 3::smallint, 1) g",
		"SELECT g::text FROM generate_series('1', 3) g",
		"SELECT g::text FROM generate_series(1, 3::bigint) g",
		"SELECT g::text FROM unnest(ARRAY[timestamp '2001-01-01 10:00', '2001-01-02']) g",
		"SELECT g::text FROM unnest(ARRAY[timestamptz '2001-01-01 10:00', timestamp '2001-01-02']) g",
		"SELECT g::text FROM unnest(ARRAY[1::smallint, 2::smallint]) g",
		"SELECT 'x' || (timestamp - timestamp '2001-03-31 00:00'), 'n=' || avg((value->>'delay')::int), 'c' || count(*)" + trial23Where + " GROUP BY timestamp ORDER BY 1",
		"SELECT ('a' || '\\x01'::bytea)::text",
	}
	const frame = "SELECT id, sum((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS %s)" + trial23Where + " LIMIT 1"
	states := map[string]string{
		"SELECT 1 || 2": "42883",
		"SELECT interval '1 day' || interval '1 day'":                 "42883",
		"SELECT max((value->>'delay')::int > 0)::text" + trial23Where: "42883",
		"SELECT min(true)": "42883",
		"SELECT max(x) OVER () FROM (VALUES (true)) v(x)":                              "42883",
		strings.Replace(frame, "%s", "BETWEEN 1 FOLLOWING AND 1 PRECEDING", 1):         "42P20",
		strings.Replace(frame, "%s", "BETWEEN CURRENT ROW AND 1 PRECEDING", 1):         "42P20",
		strings.Replace(frame, "%s", "BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW", 1): "42P20",
		strings.Replace(frame, "%s", "BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING", 1): "42P20",
		strings.Replace(frame, "%s", "1 FOLLOWING", 1):                                 "42P20",
		"SELECT * FROM generate_series(1::smallint, 3::smallint) g":                    "42725",
		"SELECT * FROM generate_series(1::smallint, '3') g":                            "42725",
		"SELECT * FROM generate_series('1', '3') g":                                    "42725",
		"SELECT * FROM generate_series(1.5::float8, 3) g":                              "42883",
		"SELECT * FROM generate_series(1, 100000::smallint) g":                         "22003",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range states {
			refusedWithState(t, ctx, cl.c, pg, q, state)
		}
		for _, q := range []string{
			"SELECT * FROM (VALUES (ARRAY[1])) v(a), unnest(ARRAY[v.a[1]]) b",
		} {
			if _, err := run(ctx, cl.c, q); status.Code(err) != codes.Unimplemented || sqlstateOf(err) != "0A000" {
				t.Errorf("%s (%s): %v, want UNIMPLEMENTED 0A000", q, cl.name, err)
			}
		}
	}
}

// TestJSONValueComparisonsAsPostgres: over a table declaring JSON values (routing.TableDef's
// JSONValues, `--table …,value=json`), the value column is json as PostgreSQL's table has it:
// NATURAL JOIN, USING (value), value = value and max(value) are PostgreSQL's 42883; the same
// column cast to jsonb compares by value.
func TestJSONValueComparisonsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	def := flightsTable
	def.JSONValues = true
	srv, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{def}, Hot: e.store, Archive: e.reader, Pushdown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cl := dial(t, srv)
	const ab = " WHERE a.origin = 'ORD' AND a.timestamp >= '2001-03-31 20:00' AND a.timestamp < '2001-04-01 04:00' AND b.origin = 'ORD' AND b.timestamp >= '2001-03-31 20:00' AND b.timestamp < '2001-04-01 04:00'"
	for q, state := range map[string]string{
		"SELECT count(*) FROM flights a NATURAL JOIN flights b" + ab:                 "42883",
		"SELECT count(*) FROM flights a JOIN flights b USING (value)" + ab:           "42883",
		"SELECT count(*) FROM flights a JOIN flights b ON a.value = b.value" + ab:    "42883",
		"SELECT count(*)" + trial23Where + " AND value = value":                      "42883",
		"SELECT max(value)" + trial23Where:                                           "42883",
		"SELECT count(*) FROM (SELECT value AS v" + trial23Where + ") s WHERE v = v": "42883",
		"SELECT id" + trial23Where + " ORDER BY value":                               "42883",
		"SELECT id" + trial23Where + " ORDER BY value->'delay'":                      "42883",
		"SELECT value->'destination', count(*)" + trial23Where + " GROUP BY 1":       "42883",
		"SELECT DISTINCT value" + trial23Where:                                       "42883",
		"SELECT value" + trial23Where + " UNION SELECT value" + trial23Where:         "42883",
		"SELECT count(*) OVER (PARTITION BY value)" + trial23Where:                   "42883",
	} {
		refusedWithState(t, ctx, cl, pg, q, state)
	}
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT count(*) FROM flights a JOIN flights b ON a.value::jsonb = b.value::jsonb"+ab,
		"SELECT (value->'destination')::text, value::text"+trial23Where+" ORDER BY id LIMIT 3")...)
}

// refusedWithState checks that PostgreSQL refuses q with SQLSTATE state and flightsrv with
// INVALID_ARGUMENT, the same SQLSTATE and PostgreSQL's message (or its beginning).
func refusedWithState(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q, state string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != state {
		t.Fatalf("PostgreSQL %s: %v, want SQLSTATE %s", q, err, state)
	}
	_, err := run(ctx, cl, q)
	if msg := status.Convert(err).Message(); status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != state || msg == "" || !strings.HasPrefix(pgErr.Message, msg) {
		t.Errorf("%s: %v (SQLSTATE %q), want INVALID_ARGUMENT %s with PostgreSQL's %q", q, err, sqlstateOf(err), state, pgErr.Message)
	}
}
