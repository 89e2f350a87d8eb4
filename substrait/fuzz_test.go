package substrait_test

// Fuzz targets of the planning path's outside input: SQL text (FuzzSQL), a client's Substrait
// plan bytes (FuzzSubstraitPlan); flightsql's FuzzParameterBatch binds DoPut parameters. Each
// runs its input through binding (or decoding and validation),
// routing (substrait.Routes) and lowering onto the executor (scan.Prepare), as
// query.Engine does, and asserts what the server promises beyond "no panic": a refusal is a
// *substrait.Error or the executor's unsupported-plan error (what the Flight layer maps to
// INVALID_ARGUMENT, UNIMPLEMENTED or NOT_FOUND), never another error that would reach the
// client as INTERNAL; and a plan the binder produces from SQL is one a client may send back.
// Seed corpora: testdata/fuzz/<target> (Go's layout), plus the seeds f.Add gives below.

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	substraitpb "github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/internal/pgregex"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ops"
	"github.com/flightsrv/flightsrv/substrait"
)

// fuzzEnv is the catalog the targets plan against: messages (the tests' table, partitioned by
// channel_id) and flights (the demo's, partitioned by origin, as the producers' plans read),
// each backed by a table whose hot store is never called: lowering reads definitions only.
type fuzzEnv struct {
	cat    *substrait.StaticCatalog
	tables map[string]*routing.DurableTable
}

// noStore is a hot store that is never read (scan.Prepare does not read).
type noStore struct{ routing.HotStore }

func newFuzzEnv(tb testing.TB) *fuzzEnv {
	tb.Helper()
	defs := []routing.TableDef{
		{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2},
		{Name: "flights", TableID: "flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2},
	}
	cat, err := substrait.NewCatalog(defs...)
	if err != nil {
		tb.Fatal(err)
	}
	env := &fuzzEnv{cat: cat, tables: map[string]*routing.DurableTable{}}
	for _, d := range defs {
		t, err := routing.NewDurableTable(d, noStore{}, nil, routing.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		env.tables[d.Name] = t
	}
	return env
}

// lower routes p's reads and lowers it onto the executor, as query.Engine.compile does.
func (env *fuzzEnv) lower(p *plan.Plan, analytical bool) error {
	routes, err := substrait.Routes(p, env.cat, analytical)
	if err != nil {
		return err
	}
	_, err = scan.Prepare(p, scan.Options{Pushdown: true, Bind: func(r *plan.NamedTableReadRel) (scan.Source, error) {
		rt, ok := routes[r]
		if !ok {
			return scan.Source{}, errors.New("a read of the plan has no route")
		}
		parts := rt.Partitions
		if parts == nil { // analytical: the engine discovers the partitions
			parts = [][]byte{[]byte("p")}
		}
		return scan.Source{Table: env.tables[rt.Table.Name], Partitions: parts, Range: rt.Range}, nil
	}})
	return err
}

// checkRefusal fails unless err is a refusal the Flight layer turns into a status a client
// can act on: a *substrait.Error (InvalidArgument, Unimplemented, NotFound), a statement past
// a bound (*substrait.PartitionListError, *substrait.OutputColumnsError), the executor's
// unsupported plan or expression, or a data exception of a constant expression.
func checkRefusal(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var de *ops.DataError
	var pl *substrait.PartitionListError
	var oc *substrait.OutputColumnsError
	if _, ok := substrait.CodeOf(err); ok || errors.Is(err, scan.ErrUnsupported) || errors.Is(err, ops.ErrUnsupported) || errors.As(err, &de) || errors.As(err, &pl) || errors.As(err, &oc) {
		return
	}
	t.Fatalf("%s: refusal %v (%T) is no planning error: the client would get INTERNAL", what, err, err)
}

// fuzzSQL are seeds of the SQL surface: routed scans, aggregates, histograms, joins, set
// operations, subqueries, parameters, table-less statements and broken statements.
var fuzzSQL = []string{
	`SELECT COUNT(*) FROM messages WHERE channel_id = 'general' AND timestamp >= TIMESTAMPTZ '2026-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2027-01-01T00:00:00Z'`,
	`SELECT * FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01T00:00:00Z' AND timestamp < '2026-02-01T00:00:00Z' ORDER BY timestamp DESC LIMIT 10`,
	`SELECT id, value FROM messages WHERE channel_id IN ('a', 'b') AND timestamp BETWEEN '2026-01-01' AND '2026-01-31' AND id <> 'x' ORDER BY id OFFSET 3`,
	`SELECT date_trunc('day', timestamp) AS d, count(*) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-03-01' GROUP BY 1 ORDER BY 1`,
	`SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01') AS b, min(timestamp), max(timestamp) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1`,
	`SELECT origin, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-05-01' GROUP BY origin HAVING count(*) > 1`,
	`SELECT count(DISTINCT id), sum(length(value)), avg(length(id)) FROM messages WHERE channel_id = 'g' AND timestamp > now() - INTERVAL '1 day'`,
	`SELECT a.id FROM messages a JOIN messages b ON a.id = b.id WHERE a.channel_id = 'x' AND b.channel_id = 'y' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02'`,
	`SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' UNION ALL SELECT id FROM messages WHERE channel_id = 'h' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
	`SELECT * FROM (SELECT id, value::text ->> 'k' AS k FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02') s WHERE k LIKE 'a%' ORDER BY k NULLS FIRST`,
	`SELECT CASE WHEN id = 'a' THEN 1 ELSE 2 END, coalesce(id, 'z'), upper(id), substring(id, 2, 3), id || '/' FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3 LIMIT $4`,
	`SELECT id FROM messages WHERE channel_id = ANY($1) AND timestamp >= ? AND timestamp < ?`,
	`EXPLAIN SELECT count(*) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT count(*) FROM messages WHERE timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT 1, 'a' || 'b', 1.5 * 2, now(), current_user, version()`,
	`SHOW server_version`,
	`SELECT row_number() OVER (ORDER BY timestamp) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' AND id IN (SELECT id FROM messages WHERE channel_id = 'h' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01')`,
	`WITH w AS (SELECT id FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01') SELECT count(*) FROM w`,
	`SELECT extract(epoch FROM timestamp), to_char(timestamp, 'YYYY-MM-DD'), date_part('dow', timestamp) FROM Events WHERE device = 'd' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
	`SELECT 1/0`,
	`SELECT * FROM nosuch`,
	`SELECT FROM WHERE`,
	`select id from messages where channel_id = 'g' and timestamp >= '2026-01-01 00:00:00+02' and timestamp < '2026-01-01 12:00' order by 1 desc limit 0`,
	// Window functions (window.go): frames, named windows, windows over an aggregate.
	`SELECT id, row_number() OVER w, lag(id, 2, 'x') OVER w, sum(length(id)) OVER (w ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' WINDOW w AS (PARTITION BY channel_id ORDER BY timestamp DESC NULLS LAST)`,
	`SELECT * FROM (SELECT channel_id, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) AS r, sum(count(*)) OVER () AS t FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1) g WHERE r <= 3 ORDER BY r`,
	`SELECT id, count(*) OVER (ORDER BY timestamp RANGE BETWEEN INTERVAL '1 hour' PRECEDING AND '5 minutes' FOLLOWING), avg(length(id)) OVER (ORDER BY length(id) DESC RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
	`SELECT channel_id, avg(length(id)), round(avg(DISTINCT length(id)), 3), avg(length(id)) FILTER (WHERE id > 'm') FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1`,
	`SELECT channel_id, array_agg(id ORDER BY id DESC)::text, array_to_string(array_agg(length(id)), ',', '-') FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1`,
	// Issue 18's forms: time zones, regular expressions, date arithmetic, the new aggregates,
	// INTERSECT/EXCEPT and grouping sets.
	`SELECT timestamp AT TIME ZONE 'America/New_York', date_trunc('day', timestamp, 'Europe/Paris'), TIMESTAMP '2026-01-01 02:30' AT TIME ZONE '+05' FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT id ~ '^a.*b$', id !~* 'x', regexp_replace(id, '(a)b', '\\1', 'g'), current_date - DATE '2026-01-01' FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT stddev(length(id)::float8), bool_and(id > 'a'), percentile_cont(0.5) WITHIN GROUP (ORDER BY length(id)), string_agg(id, ',' ORDER BY id) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT id FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' INTERSECT SELECT id FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' EXCEPT SELECT 'x'`,
	`SELECT channel_id, length(id), count(*), GROUPING(channel_id) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' GROUP BY ROLLUP (channel_id, length(id)) ORDER BY 3`,
	`SELECT channel_id AS c, count(*), sum(count(*)) OVER w, lag(count(*), 1, 0::bigint) OVER (w ORDER BY channel_id) FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' GROUP BY ROLLUP (1) WINDOW w AS (PARTITION BY GROUPING(channel_id)) ORDER BY GROUPING(channel_id), rank() OVER (ORDER BY count(*)) LIMIT 3`,
	`WITH r AS (SELECT channel_id, id, row_number() OVER (ORDER BY id) rn FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01') SELECT * FROM r WHERE channel_id = 'a' AND rn < 3`,
	// DISTINCT ON, INTERSECT/EXCEPT ALL, numeric quotients of casts, table functions in FROM.
	`SELECT DISTINCT ON (length(id)) id, timestamp FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' ORDER BY length(id), timestamp DESC LIMIT 5`,
	`SELECT id FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' INTERSECT ALL SELECT 'x' EXCEPT ALL SELECT NULL::text`,
	`SELECT round(id::numeric / 3, 2), (length(id)::float8::numeric / 7)::numeric(10, 3) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT g, t FROM generate_series(1, 10, 3) AS g, generate_series('2026-01-31'::timestamptz, '2026-05-01', '1 month') t`,
	`WITH u AS (SELECT * FROM unnest(ARRAY['a', NULL, 'c']) AS x) SELECT x, count(*) FROM u GROUP BY 1`,
	// Superset's sub-hour grain, intervals times numbers, extract's fractions, date(), round, mod.
	`SELECT DATE_TRUNC('hour', timestamp) + INTERVAL '5 minutes' * FLOOR(EXTRACT(MINUTE FROM timestamp) / 5), timestamp - 2 * INTERVAL '1 day', extract(milliseconds FROM timestamp), date_part('second', timestamp), date(timestamp), round(length(id) / 3.0::float8), mod(length(id), 3) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT INTERVAL '1 day'::text, timestamp + INTERVAL '1 month' * 2, 123456789012345678::float8::text, '-Infinity'::float8::text FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	// Numeric display scales (dscale.go): averages and CASE/COALESCE of mixed scales as text,
	// over windows, through subqueries; to_char of numbers; window sums of bigints.
	`SELECT channel_id, avg(length(id))::text, (avg(length(id)) * 1.5 - 1)::text, COALESCE(avg(length(id)) FILTER (WHERE id > 'm'), 0)::text, 'a=' || avg(DISTINCT length(id)), concat(CASE WHEN count(*) > 2 THEN avg(length(id)) ELSE 0.5 END, '/') FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1 HAVING avg(length(id)) > 2`,
	`SELECT (avg(length(id)) OVER (ORDER BY timestamp ROWS 2 PRECEDING))::text, sum(length(id)::bigint) OVER (), to_char(avg(length(id)) OVER (), 'FM9,990.00'), GREATEST(1.5, 2)::text FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
	`SELECT a::text, to_char(a, '999.99'), to_char(n, '0000D9') FROM (SELECT avg(length(id)) AS a, count(*) AS n FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02') s`,
	// Numerics over windows, DISTINCT, the variance family, sqrt/exp/ln/log/sign (issue 18).
	`SELECT sum(length(id) * 0.5) OVER (ORDER BY timestamp ROWS 1 PRECEDING), (avg(length(id) * 1.25) OVER ())::text, (lag(length(id) * 0.5, 1, 0) OVER (ORDER BY timestamp))::text, max(length(id)::numeric(6,2)) OVER () FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
	`SELECT count(DISTINCT length(id) * 0.5), sum(DISTINCT length(id) * 0.25), avg(DISTINCT length(id)::numeric(5,1))::text, stddev(length(id))::text, var_pop(length(id) * 1.5) FILTER (WHERE id > 'a'), sqrt(length(id) * 1.0)::text, ln(2.5), log(2, length(id)), exp(0.5), sign(-1.5), power(length(id) * 1.5, 0.5), 2.0 ^ length(id), 2 ^ 0.5::float8 FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY id`,
	// Subqueries under OR and NOT, EXISTS in the select list (mark joins, join.go).
	`SELECT id, EXISTS (SELECT 1 FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND b.id = a.id) FROM messages a WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND (a.id = 'x' OR a.id IN (SELECT id FROM messages WHERE channel_id = 'h' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02') OR NOT EXISTS (SELECT 1 FROM messages c WHERE c.channel_id = 'i' AND c.timestamp >= '2026-01-01' AND c.timestamp < '2026-01-02' AND c.value = a.value))`,
	// Grouping sets of several expressions, sums of varying display scales, constant time
	// bounds, concat_ws/md5/translate/make_date/json_typeof (issue 18, trial 22).
	`SELECT channel_id, id, count(*), GROUPING(channel_id, id), sum(CASE WHEN id > 'm' THEN 1.0 ELSE 0 END) / count(*), avg(CASE WHEN id > 'm' THEN 1.5 ELSE 2 END)::text FROM messages WHERE channel_id IN ('a', 'b') AND timestamp >= ('2026-01-01'::timestamp AT TIME ZONE 'America/Chicago') AND timestamp < DATE '2026-01-02' + 1 GROUP BY GROUPING SETS ((1, 2), (id), ()), (channel_id, id)`,
	// Set-returning functions over rows and in the select list (issue 18, srf18).
	"SELECT id, e.key, e.value::text, x.n FROM messages m CROSS JOIN LATERAL jsonb_each(m.value::jsonb) WITH ORDINALITY AS e LEFT JOIN LATERAL generate_series(1, length(id)) AS x(n) ON true WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'",
	"SELECT json_object_keys(value), count(*), generate_series(1, 2) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' GROUP BY 1, 3",
	`SELECT * FROM ROWS FROM (json_array_elements_text('[1, "a"]'), unnest(ARRAY[1, 2, 3])) WITH ORDINALITY AS r(a, b, n)`,
	`SELECT concat_ws('-', id, true, 2.5), md5(id), md5(value), translate(id, 'abc', 'x'), make_date(2026, length(id) % 12 + 1, 1), json_typeof(value), extract(julian FROM timestamp) FROM messages WHERE channel_id = 'g' AND timestamp >= timezone('UTC', TIMESTAMP '2026-01-01') AND timestamp < '2026-01-02'`,
	// time without time zone (timetype.go): input forms, time(p), casts, operators, extract,
	// grouping and ordering (time18).
	`SELECT timestamp::time, (timestamp::time + interval '90 minutes')::text, timestamp::time - time '12:00', timestamp::date + timestamp::time(0), extract(epoch FROM timestamp::time), date_part('hour', timestamp::time), count(*), min(timestamp::time), sum(timestamp::time) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' AND timestamp::time BETWEEN '06:00' AND '6:30 pm' GROUP BY 1 ORDER BY 1 DESC`,
	`SELECT time '06:59', '23:59:59.9999995'::time(3), time(0) '24:00', id::time, localtime(2), interval '-1 hour'::time, time '06:59' - '06:00', '1 hour' + time '01:00', date '2026-01-01' - time '06:59', to_char(time '06:59', 'HH24'), - time '01:00', time '06:59' * 2 FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'`,
}

// FuzzSQL runs SQL text through the general binder (substrait.PrepareWith and BindGeneral,
// with no parameters bound), routing and lowering. A statement the binder accepts must lower
// or be refused as a planning error, and its plan, serialized, must be accepted back by the
// client-plan path (substrait.PrepareSubstrait).
// A SET or RESET goes through substrait.CheckSet, as the engine takes it: a refusal is a
// planning error.
func FuzzSQL(f *testing.F) {
	for _, s := range fuzzSQL {
		f.Add(s, false)
	}
	f.Add(fuzzSQL[13], true)
	for _, s := range numericFuzzSQL {
		f.Add(s, false)
	}
	for i, s := range joinFuzzSQL {
		f.Add(s, i == len(joinFuzzSQL)-1)
	}
	for _, s := range intervalFuzzSQL {
		f.Add(s, false)
	}
	for _, s := range floatByteaFuzzSQL {
		f.Add(s, false)
	}
	const routed = "channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'"
	for _, s := range []string{
		"SET TimeZone = 'UTC'", "SET TIME ZONE INTERVAL '+01:00' HOUR TO MINUTE", "RESET ALL", "SET extra_float_digits = -16",
		"SET search_path = '\"$user\", public'", "SET LOCAL DateStyle = ISO, MDY", "SET TRANSACTION READ ONLY",
		"SELECT * FROM messages WHERE false OR (" + routed + ") LIMIT 2 - 1",
		"SELECT * FROM messages WHERE NOT (NOT ((" + routed + ") OR (SELECT 1 <> 1)))",
		"SELECT * FROM messages a JOIN messages b ON a.id = b.id WHERE 1 <> 1",
		"SELECT * FROM generate_series(1, 3) g LEFT JOIN messages m ON (SELECT false)",
		"SELECT localtimestamp(3), current_timestamp(0), localtimestamp AT TIME ZONE 'Asia/Tokyo', localtime",
		"SELECT repeat('é', 40)::name, id::name FROM messages WHERE " + routed + " GROUP BY 'x' ORDER BY NULL",
		"SELECT DISTINCT ON (1.5) id FROM messages WHERE " + routed + " AND timestamp < localtimestamp(2)",
		"SELECT current_setting('TimeZone'), current_setting('x', true), current_setting(id) FROM messages WHERE " + routed,
		"SELECT generate_series(1, 3), count(*), row_number() OVER () FROM messages WHERE " + routed,
		"SELECT m.id, e FROM messages m LEFT JOIN LATERAL json_array_elements(m.value->'a') e ON e->>'k' = 'v' WHERE " + routed,
		"SELECT unnest(ARRAY[[1,2],[3,4]]::bigint[]), x FROM unnest(ARRAY[]::text[], ARRAY[1.5]) u(x, y)",
		"SELECT string_agg(id, ',') OVER (ORDER BY timestamp ROWS 2 PRECEDING), NULLIF(avg(1.5) OVER (), 0) FROM messages WHERE " + routed,
		"SELECT (SELECT avg(x) FROM (VALUES (1),(2)) v(x))::text, make_timestamptz(2001,1,1,0,0,0,'UTC'), pg_typeof(1), div(7.5, 2)",
		// typ18b: lag/lead display scales, CASE and quantified names, NULLIF's type, errors;
		// generate_series(*) beside a window recursed for ever in postponeSRFs.
		"SELECT lag(x, 1, x / 2.0) OVER (ORDER BY x)::text, lead(x::numeric, 2, 1.5) OVER w, CASE WHEN x > 1 THEN 2.5 ELSE x END, x > ALL (SELECT 1) FROM generate_series(1, 3) x WINDOW w AS (ORDER BY x)",
		"SELECT nullif(x::smallint, 70000), date '2001-01-01' IN (timestamp '2001-01-01'), 'J2451911'::date, 0.01::numeric(2,3), ('{}'::json)['k'], first(x ORDER BY x) FROM generate_series(1, 3) x",
		"SELECT generate_series(*),r()OVER()FROMs WHERE d''AND p''", "SELECT generate_series(1, 2) WITHIN GROUP (ORDER BY 1), count(*)",
		// misc18's shapes: sum(real) and over a window, SET/SHOW of unknown and fixed
		// parameters, integer arguments of string functions, percentile_cont of intervals,
		// per-row display scales through UNION ALL, VALUES and EXCEPT.
		"SELECT sum(length(id)::real), sum(DISTINCT 1.5::real), sum(1::real) OVER (ORDER BY timestamp ROWS 1 PRECEDING) FROM messages WHERE " + routed,
		"SET no_such_parameter = 1", "RESET shared_buffers", "SET my.custom TO DEFAULT", "SHOW no_such_parameter",
		"SELECT substring(id FROM length(id)::bigint), left(id, 2.0), substring(id FROM 2 FOR '3'), current_setting('work_mem') FROM messages WHERE " + routed,
		"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY timestamp - timestamp), percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY interval '1 day') FROM messages WHERE " + routed,
		"SELECT x::text FROM (SELECT 1.5 AS x UNION ALL SELECT 2.250 UNION ALL SELECT 3) s, (VALUES (1.5), (2.250)) v(y) WHERE x > y EXCEPT ALL SELECT 2.5",
		// scale18: display scales through DISTINCT ON and set operations read back (trial31).
		"SELECT x::text, k FROM (SELECT DISTINCT ON (k) k, x FROM (VALUES (1, 1.5), (2, 3)) v(k, x) ORDER BY k) s",
		"SELECT x::text FROM (SELECT n AS x FROM (VALUES (1.5), (0.10)) v(n) INTERSECT ALL SELECT '1.5' EXCEPT SELECT avg(1) UNION SELECT 1.50 UNION ALL SELECT '7.125') s",
		"WITH c AS (SELECT id, avg(length(id)) AS x FROM messages WHERE " + routed + " GROUP BY id UNION SELECT '2.5', 1.5) SELECT x::text FROM c",
		// srf18c: fields of a record-returning set-returning function in a select list.
		"SELECT (json_each(value::json)).key, (jsonb_each_text(value::jsonb)).*, count(*) OVER () FROM messages WHERE " + routed + " ORDER BY (json_each(value::json)).value->>'a'",
		"SELECT DISTINCT ON ((json_each_text('{\"a\":1}')).key) (json_each_text('{\"a\":1}')).*, count(*) FROM messages WHERE " + routed + " GROUP BY 1 ORDER BY 1",
	} {
		f.Add(s, false)
	}
	env := newFuzzEnv(f)
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, sql string, analytical bool) {
		fuzzcount.Add()
		if substrait.IsSet(sql) {
			// The engine takes SET and RESET apart (CheckSet).
			if err := substrait.CheckSet(sql); err != nil {
				checkRefusal(t, "SET", err)
			}
			return
		}
		opts := substrait.BindOptions{Analytical: analytical, Now: now, User: "fuzz"}
		st, err := substrait.PrepareWith(sql, env.cat, opts)
		if err != nil {
			checkRefusal(t, "prepare", err)
			return
		}
		b, err := st.BindGeneral(opts)
		if err != nil {
			checkRefusal(t, "bind", err)
			return
		}
		if b.Plan == nil {
			return // table-less: constants, evaluated by the engine
		}
		if err := env.lower(b.Plan, analytical); err != nil {
			checkRefusal(t, "lower", err)
			return
		}
		pb, err := b.Plan.ToProto()
		if err != nil {
			t.Fatalf("the bound plan does not serialize: %v", err)
		}
		raw, err := proto.Marshal(pb)
		if err != nil {
			t.Fatalf("the bound plan does not marshal: %v", err)
		}
		if _, err := substrait.PrepareSubstrait(raw, env.cat, opts); err != nil {
			checkRefusal(t, "the bound plan as a client plan", err)
		}
	})
}

// FuzzDeclareParameterTypes runs SQL text and a binding's Arrow types through
// substrait.DeclareParameterTypes (the rewrite of the parameters as the binding declares them,
// through pg_query's parse tree and deparser), and the text through
// substrait.DeclareUnknownParameters: a refusal is a planning error, and the text each
// returns prepares.
func FuzzDeclareParameterTypes(f *testing.F) {
	f.Add("SELECT ?", uint8(0))
	f.Add("SELECT $1 AS a, $2, '$1' FROM messages WHERE channel_id = $3 AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'", uint8(3))
	f.Add("SELECT ?, ? || 'x', (SELECT ?)", uint8(5))
	types := []arrow.DataType{arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String,
		&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, arrow.PrimitiveTypes.Float32, arrow.Null, arrow.ListOf(arrow.PrimitiveTypes.Int32)}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, sql string, pick uint8) {
		fuzzcount.Add()
		fields := make([]arrow.Field, 3)
		for i := range fields {
			fields[i] = arrow.Field{Name: "p", Type: types[(int(pick)+i)%len(types)], Nullable: true}
		}
		if text, err := substrait.DeclareUnknownParameters(sql, env.cat, substrait.BindOptions{}); err != nil {
			checkRefusal(t, "declare unknown", err)
		} else if _, err := substrait.Prepare(text, env.cat); err != nil {
			t.Fatalf("%q with its unknown parameters declared as %q does not prepare: %v", sql, text, err)
		}
		text, err := substrait.DeclareParameterTypes(sql, env.cat, substrait.BindOptions{}, arrow.NewSchema(fields, nil))
		if err != nil {
			checkRefusal(t, "declare", err)
			return
		}
		if _, err := substrait.Prepare(text, env.cat); err != nil {
			t.Fatalf("%q declared as %q does not prepare: %v", sql, text, err)
		}
	})
}

// FuzzSubstraitPlan runs plan bytes through the client-plan path as query.Engine's
// prepareSubstrait does: decoding and validation (substrait.PrepareSubstrait), routing
// (substrait.Routes) and lowering (scan.Prepare). Seeds: plans the binder makes from fuzzSQL,
// plans built with substrait-go's builder as a client's producer writes them
// (clientPlans), and the producers' plans under testdata/fuzz/FuzzSubstraitPlan.
func FuzzSubstraitPlan(f *testing.F) {
	env := newFuzzEnv(f)
	windowSeeds := 0
	for _, s := range append(append([]string{}, fuzzSQL...), joinFuzzSQL...) {
		p, err := substrait.FromSQL(s, env.cat)
		if err != nil || p == nil {
			continue
		}
		pb, err := p.ToProto()
		if err != nil {
			f.Fatal(err)
		}
		raw, err := proto.Marshal(pb)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, false)
		// The same windows as a ConsistentPartitionWindowRel (rewriteWindowRels reads it back).
		if windowRels(pb) {
			if raw, err = proto.Marshal(pb); err != nil {
				f.Fatal(err)
			}
			f.Add(raw, false)
			windowSeeds++
		}
	}
	if windowSeeds == 0 {
		f.Fatal("no seed plan holds a window ProjectRel to write as a ConsistentPartitionWindowRel")
	}
	for _, raw := range clientPlans(f) {
		f.Add(raw, false)
		f.Add(raw, true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, analytical bool) {
		fuzzcount.Add()
		env.checkPlan(t, raw, analytical)
	})
}

// checkPlan is FuzzSubstraitPlan's check of one plan.
func (env *fuzzEnv) checkPlan(t *testing.T, raw []byte, analytical bool) {
	t.Helper()
	opts := substrait.BindOptions{Analytical: analytical, Now: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)}
	b, err := substrait.PrepareSubstrait(raw, env.cat, opts)
	if err != nil {
		checkRefusal(t, "PrepareSubstrait", err)
		return
	}
	if b.Schema == nil || b.Plan == nil {
		t.Fatalf("an accepted plan has no schema or plan")
	}
	checkRefusal(t, "lower", env.lower(b.Plan, analytical))
}

// TestPendingPlanSeeds runs the plans of testdata/fuzz-pending/FuzzSubstraitPlan through
// FuzzSubstraitPlan's checks: crashers found whose fix belongs to another change (issue 16's
// DataFusion 55 aggregate plan waited there for the producers' fix of scan.aggregateSpec,
// and is now testdata/fuzz/FuzzSubstraitPlan/datafusion55-count-ord).
// A seed that still panics is skipped, naming the panic; once it passes, move it to
// testdata/fuzz/FuzzSubstraitPlan, where a panic fails the test.
func TestPendingPlanSeeds(t *testing.T) {
	env := newFuzzEnv(t)
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz-pending", "FuzzSubstraitPlan", "*"))
	if err != nil || len(files) == 0 {
		t.Skip("no pending seed")
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Skipf("still panics (fix pending, issue 16): %v", r)
				}
			}()
			env.checkPlan(t, raw, false)
		})
	}
}

// The standard extensions' URNs (substrait-go's default collection).
var (
	urnComparison = substrait.URNComparison
	urnBoolean    = substrait.URNBoolean
	urnAggregate  = substrait.URNAggregate
	urnString     = substrait.URNString
)

// clientPlans builds plans over messages as a client's producer writes them with
// substrait-go's builder (query/substrait_test.go's cases): a grouped aggregate under a sort,
// a projection and fetch, a UNION ALL under an aggregate, an analytical aggregate.
func clientPlans(tb testing.TB) [][]byte {
	tb.Helper()
	must := func(err error) {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
	}
	lo := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	hi := lo.AddDate(0, 0, 28)
	tsLit := func(t time.Time) expr.Expression {
		return expr.NewPrecisionTimestampTzLiteral(t.UnixNano(), types.PrecisionNanoSeconds, types.NullabilityRequired)
	}
	strLit := func(s string) expr.Expression { return expr.NewPrimitiveLiteral(s, false) }
	var out [][]byte
	build := func(mk func(b plan.Builder) (plan.Rel, []string)) {
		b := plan.NewBuilderDefault()
		root, names := mk(b)
		p, err := b.Plan(root, names)
		must(err)
		pb, err := p.ToProto()
		must(err)
		raw, err := proto.Marshal(pb)
		must(err)
		out = append(out, raw)
	}
	read := func(b plan.Builder) *plan.NamedTableReadRel {
		req := types.NullabilityRequired
		return b.NamedScan([]string{"messages"}, types.NamedStruct{
			Names: []string{"channel_id", "timestamp", "id", "value"},
			Struct: types.StructType{Nullability: req, Types: []types.Type{
				&types.StringType{Nullability: req},
				&types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: req}},
				&types.StringType{Nullability: req},
				&types.BinaryType{Nullability: req},
			}},
		})
	}
	ref := func(b plan.Builder, rel plan.Rel, i int32) *expr.FieldReference {
		r, err := b.RootFieldRef(rel, i)
		must(err)
		return r
	}
	fn := func(b plan.Builder, urn, name string, args ...types.FuncArg) expr.Expression {
		e, err := b.ScalarFn(urn, name, nil, args...)
		must(err)
		return e
	}
	and := func(b plan.Builder, args ...expr.Expression) expr.Expression {
		e := args[0]
		for _, a := range args[1:] {
			e = fn(b, urnBoolean, "and", e, a)
		}
		return e
	}
	routed := func(b plan.Builder, channel string, withPin bool) (*plan.NamedTableReadRel, plan.Rel) {
		r := read(b)
		conj := []expr.Expression{fn(b, urnComparison, "gte", ref(b, r, 1), tsLit(lo)), fn(b, urnComparison, "lt", ref(b, r, 1), tsLit(hi))}
		if withPin {
			conj = append(conj, fn(b, urnComparison, "equal", ref(b, r, 0), strLit(channel)))
		}
		filter, err := b.Filter(r, and(b, conj...))
		must(err)
		return r, filter
	}
	// A grouped aggregate (count, max) under a sort, the pin an IN list.
	build(func(b plan.Builder) (plan.Rel, []string) {
		r := read(b)
		filter, err := b.Filter(r, and(b,
			fn(b, urnComparison, "gte", ref(b, r, 1), tsLit(lo)),
			fn(b, urnComparison, "not_equal", ref(b, r, 2), strLit("k00003")),
			&expr.SingularOrList{Value: ref(b, r, 0), Options: []expr.Expression{strLit("random"), strLit("general")}},
			fn(b, urnComparison, "lt", ref(b, r, 1), tsLit(hi))))
		must(err)
		count, err := b.AggregateFn(urnAggregate, "count", nil)
		must(err)
		agg, err := b.AggregateColumns(filter, []plan.AggRelMeasure{b.Measure(count, nil)}, 0)
		must(err)
		sorts, err := b.SortFields(agg, 0)
		must(err)
		sorted, err := b.Sort(agg, sorts...)
		must(err)
		return sorted, []string{"channel_id", "n"}
	})
	// A projection with an expression over a sort, then a fetch with an offset.
	build(func(b plan.Builder) (plan.Rel, []string) {
		r, filter := routed(b, "general", true)
		sorted, err := b.Sort(filter, expr.SortField{Expr: ref(b, r, 1), Kind: types.SortDescNullsLast})
		must(err)
		proj, err := b.ProjectRemap(sorted, []int32{2, 4}, fn(b, urnString, "concat:str", ref(b, sorted, 0), strLit("/"), ref(b, sorted, 2)))
		must(err)
		fetch, err := b.Fetch(proj, 2, 7)
		must(err)
		return fetch, []string{"id", "label"}
	})
	// UNION ALL of two routed reads under an ungrouped count.
	build(func(b plan.Builder) (plan.Rel, []string) {
		side := func(channel string) plan.Rel {
			_, filter := routed(b, channel, true)
			proj, err := b.ProjectRemap(filter, []int32{2}, ref(b, filter, 2))
			must(err)
			return proj
		}
		set, err := b.Set(plan.SetOpUnionAll, side("general"), side("random"))
		must(err)
		count, err := b.AggregateFn(urnAggregate, "count", nil)
		must(err)
		agg, err := b.AggregateColumns(set, []plan.AggRelMeasure{b.Measure(count, nil)})
		must(err)
		return agg, []string{"n"}
	})
	// An analytical read (no pin) grouped by the partition.
	build(func(b plan.Builder) (plan.Rel, []string) {
		_, filter := routed(b, "", false)
		count, err := b.AggregateFn(urnAggregate, "count", nil)
		must(err)
		agg, err := b.AggregateColumns(filter, []plan.AggRelMeasure{b.Measure(count, nil)}, 0)
		must(err)
		return agg, []string{"channel_id", "n"}
	})
	return out
}

// TestRootColumnWithoutType: FuzzSubstraitPlan's crasher of that name (a plan whose root
// relation's output leaves a column's type out; arrow-go's type conversion dereferenced it)
// is refused as an invalid plan naming the column (or its filter, which is not boolean).
func TestRootColumnWithoutType(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzSubstraitPlan", "root-column-without-type"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Split(string(data), "\n")[1] // []byte("…"), Go's corpus encoding
	raw, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(line, "[]byte("), ")"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = substrait.PrepareSubstrait([]byte(raw), newFuzzEnv(t).cat, substrait.BindOptions{})
	// The plan's filter is not boolean either, and its column is a field reference without a
	// reference, either of which checkConditions refuses first.
	if code, ok := substrait.CodeOf(err); !ok || code != substrait.InvalidArgument || !strings.Contains(err.Error(), "has no type") &&
		!strings.Contains(err.Error(), "must be type boolean") && !strings.Contains(err.Error(), "neither a direct nor a masked reference") {
		t.Fatalf("PrepareSubstrait = %v, want InvalidArgument naming the column without a type, the filter that is not boolean or the reference", err)
	}
}

// windowRels rewrites, in pb, each ProjectRel whose expressions are window functions of one
// partitioning and order into the ConsistentPartitionWindowRel it is equivalent to, and
// reports whether it rewrote one.
func windowRels(pb *substraitpb.Plan) bool {
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if r, ok := m.Interface().(*substraitpb.Rel); ok {
			if p := r.GetProject(); p != nil && len(p.GetExpressions()) > 0 {
				w := &substraitpb.ConsistentPartitionWindowRel{Common: p.GetCommon(), Input: p.GetInput()}
				for i, e := range p.GetExpressions() {
					f := e.GetWindowFunction()
					if f == nil || (i > 0 && (!proto.Equal(&substraitpb.Expression_WindowFunction{Partitions: f.GetPartitions(), Sorts: f.GetSorts()},
						&substraitpb.Expression_WindowFunction{Partitions: w.GetPartitionExpressions(), Sorts: w.GetSorts()}))) {
						w = nil
						break
					}
					w.PartitionExpressions, w.Sorts = f.GetPartitions(), f.GetSorts()
					w.WindowFunctions = append(w.WindowFunctions, &substraitpb.ConsistentPartitionWindowRel_WindowRelFunction{
						FunctionReference: f.GetFunctionReference(), Arguments: f.GetArguments(), OutputType: f.GetOutputType(),
						Phase: f.GetPhase(), Invocation: f.GetInvocation(), LowerBound: f.GetLowerBound(), UpperBound: f.GetUpperBound(), BoundsType: f.GetBoundsType(),
					})
				}
				if w != nil {
					r.RelType, found = &substraitpb.Rel_Window{Window: w}, true
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsMap():
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind:
				walk(v.Message())
			}
			return true
		})
	}
	walk(pb.ProtoReflect())
	return found
}

// FuzzSimilarEscape translates SQL SIMILAR TO patterns (outside input) with an escape of zero
// or one character: the translation never panics, is anchored as PostgreSQL anchors it, and
// internal/pgregex compiles it or refuses it by name or as a syntax error.
func FuzzSimilarEscape(f *testing.F) {
	for _, s := range []string{"abc", "%(b|d)%", "a#_c", `a\%`, "[]x]+", "[^]a]%", `a#"b#"c`, `#"a#"b#"c#"`, "_{2,3}", "(a", "ü%ß"} {
		f.Add(s, "#")
		f.Add(s, "")
		f.Add(s, `\`)
	}
	f.Fuzz(func(t *testing.T, p, esc string) {
		fuzzcount.Add()
		re, err := substrait.SimilarEscapeForTest(p, esc)
		if err != nil {
			var se *substrait.Error
			if !errors.As(err, &se) {
				t.Fatalf("%q ESCAPE %q: %v is no planning error", p, esc, err)
			}
			return
		}
		if !strings.HasPrefix(re, "^(?:") || !strings.HasSuffix(re, ")$") {
			t.Fatalf("%q ESCAPE %q: %q is not anchored", p, esc, re)
		}
		if _, err := pgregex.Compile(re, pgregex.Options{}); err != nil {
			var ue *pgregex.UnsupportedError
			if !errors.As(err, &ue) && !errors.Is(err, pgregex.ErrSyntax) {
				t.Fatalf("%q ESCAPE %q: %v", p, esc, err)
			}
		}
	})
}
