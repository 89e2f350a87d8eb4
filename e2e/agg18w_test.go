package e2e

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
)

// TestWindowAggregatesAsPostgres: string_agg and array_agg, corr, covar_pop, covar_samp and the
// regr_ family, and sum and avg of intervals as window functions — partitioned and ordered, with
// ROWS, RANGE and GROUPS frames, exclusions, FILTER, NULLs, over grouped rows — answer
// PostgreSQL's values and text over the flights' fields and series; an aggregate ORDER BY in a
// window aggregate and DISTINCT are PostgreSQL's 0A000 refusals, a string_agg of another type
// and a binary aggregate of one argument its 42883.
func TestWindowAggregatesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT g, string_agg(g::text, ',') OVER (ORDER BY g), (array_agg(g) OVER (PARTITION BY g % 2 ORDER BY g ROWS 1 PRECEDING))::text, " +
			"(array_agg(g::text) OVER (ORDER BY g ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING))::text FROM generate_series(1, 6) g ORDER BY g",
		// Each value's own row's delimiter (none where NULL), NULL values left out, FILTER.
		"SELECT g, string_agg(NULLIF(g, 3)::text, CASE WHEN g % 2 = 0 THEN '-' END) OVER (ORDER BY g), " +
			"(array_agg(NULLIF(g, 3)::float8) OVER (ORDER BY g RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW))::text, " +
			"(array_agg(g > 3) OVER (ORDER BY g GROUPS BETWEEN CURRENT ROW AND 1 FOLLOWING))::text, string_agg(g::text, ';') FILTER (WHERE g % 2 = 1) OVER (), " +
			"(array_agg(g) FILTER (WHERE g > 1) OVER (ORDER BY g))::text, string_agg(g::char(3), '|') OVER (), (array_agg(g::char(3)) OVER ())::text, " +
			"string_agg(NULL::text, ',') OVER (), (array_agg(g::bigint * 3) OVER (ORDER BY g DESC))::text, array_to_string(array_agg(g::int2) OVER (ORDER BY g DESC), '|') " +
			"FROM generate_series(1, 6) g ORDER BY g",
		"SELECT id, string_agg(value->>'destination', ', ') OVER (PARTITION BY (value->>'delay')::int > 0 ORDER BY timestamp, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW), " +
			"(array_agg((value->>'delay')::int) OVER (ORDER BY timestamp RANGE BETWEEN '1 hour' PRECEDING AND CURRENT ROW))::text, " +
			"string_agg(id, '') OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE TIES)" +
			fn18Where + " ORDER BY timestamp, id",
		"SELECT value->>'destination' AS d, string_agg(value->>'destination', '/') OVER (ORDER BY count(*) DESC, value->>'destination' ROWS 2 PRECEDING), " +
			"(array_agg(count(*)) OVER (ORDER BY value->>'destination' ROWS UNBOUNDED PRECEDING))::text" + fn18Where + " GROUP BY 1 ORDER BY 1",
		// The binary aggregates: float8_regr_accum over each frame.
		"SELECT g, corr(g, g * g) OVER (ORDER BY g), regr_slope(g, g * g) OVER (), covar_pop(g, g) OVER (), regr_count(g, NULLIF(g, 2)) OVER (ORDER BY g ROWS 1 PRECEDING), " +
			"covar_samp(g::real, g) OVER (ORDER BY g ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW), regr_avgx(g, 1.5 * g) OVER (PARTITION BY g % 2), " +
			"regr_avgy(g, g) OVER (ORDER BY g GROUPS 1 PRECEDING), regr_sxx(g, g) OVER (ORDER BY g), regr_syy(g * 2, g) OVER (ORDER BY g), regr_sxy(g, -g) OVER (ORDER BY g), " +
			"regr_r2(g, g % 3) OVER (ORDER BY g), regr_intercept(g, g % 3) OVER (ORDER BY g), regr_count(NULL::int, g) OVER () FROM generate_series(1, 8) g ORDER BY g",
		"SELECT id, corr((value->>'delay')::int, (value->>'distance')::int) OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id), " +
			"regr_intercept((value->>'delay')::float8, (value->>'distance')::numeric) OVER (ORDER BY timestamp RANGE BETWEEN '3 hours' PRECEDING AND CURRENT ROW), " +
			"regr_r2((value->>'delay')::int, (value->>'distance')::int) FILTER (WHERE (value->>'delay')::int > 0) OVER (ORDER BY timestamp, id ROWS 5 PRECEDING), " +
			"regr_count((value->>'delay')::int, (value->>'nosuch')::int) OVER ()" + fn18Where + " ORDER BY timestamp, id",
		"SELECT value->>'destination' AS d, regr_avgx(count(*), sum((value->>'delay')::int)) OVER (), regr_slope(sum((value->>'delay')::int), count(*)) OVER (ORDER BY value->>'destination')" +
			fn18Where + " GROUP BY 1 ORDER BY 1",
		// sum and avg of intervals: each field's exact total, avg interval_div by the count.
		"SELECT g, sum(g * interval '1 hour') OVER (ORDER BY g)::text, avg(g * interval '1 hour') OVER (ORDER BY g ROWS 1 PRECEDING)::text, sum(interval '1 mon 2 days' * g) OVER ()::text, " +
			"avg(CASE WHEN g > 2 THEN interval '1 mon 1 day 1 sec' * g END) OVER (ORDER BY g)::text, avg(interval '1 mon' * g) OVER (ORDER BY g ROWS BETWEEN CURRENT ROW AND CURRENT ROW EXCLUDE CURRENT ROW)::text, " +
			"avg(interval '1 mon' * g) OVER (ORDER BY g ROWS 2 PRECEDING)::text, sum(interval '-1 day 3 hours' * g) FILTER (WHERE g <> 2) OVER (ORDER BY g RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)::text " +
			"FROM generate_series(1, 5) g ORDER BY g",
		"SELECT id, sum(timestamp - date_trunc('day', timestamp)) OVER (ORDER BY timestamp, id ROWS 2 PRECEDING)::text, " +
			"avg(timestamp - date_trunc('hour', timestamp)) FILTER (WHERE (value->>'delay')::int > 0) OVER (PARTITION BY value->>'destination')::text" + fn18Where + " ORDER BY timestamp, id",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{
			"SELECT g, string_agg(g::text, ',' ORDER BY g) OVER () FROM generate_series(1, 4) g",
			"SELECT g, array_agg(g ORDER BY g DESC) OVER () FROM generate_series(1, 4) g",
			"SELECT g, string_agg(DISTINCT g::text, ',') OVER () FROM generate_series(1, 4) g",
			"SELECT corr(DISTINCT g, g) OVER () FROM generate_series(1, 3) g",
		} {
			var pgErr *pgconn.PgError
			if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != "0A000" {
				t.Fatalf("PostgreSQL %s: %v, want 0A000", q, err)
			}
			refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{q: pgErr.Message})
		}
		for q, state := range map[string]string{
			"SELECT corr(g) OVER () FROM generate_series(1, 3) g":                                       "42883",
			"SELECT string_agg(g, ',') OVER () FROM generate_series(1, 3) g":                            "42883",
			"SELECT string_agg(g, ',') FROM generate_series(1, 3) g":                                    "42883",
			"SELECT string_agg(g::text, 1) OVER () FROM generate_series(1, 3) g":                        "42883",
			"SELECT corr(g, 'a') OVER () FROM generate_series(1, 3) g":                                  "22P02",
			"SELECT sum(interval '2147483647 mons' * g) OVER (ORDER BY g) FROM generate_series(1, 2) g": "22008",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
	}
}

// TestMakeTimestampAsPostgres: make_timestamp and make_timestamptz of six fields (constants,
// the flights' fields, seconds of a numeric, a real or a text literal, rounded to the
// microsecond), to_timestamp of a double that is not a constant and pg_typeof as a select-list
// column answer PostgreSQL's values and text; fields naming no day or time, NaN and instants
// out of range are its 22008, other argument types its 42883; make_timestamptz with a zone
// name answers PostgreSQL's instant, with a numeric offset or a zone column it is refused by
// name, as is pg_typeof where its regtype would be compared.
func TestMakeTimestampAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT make_timestamp(2001, 2, 3, 4, 5, 6.5)::text, make_timestamptz(2001, 2, 3, 4, 5, 6.5)::text, make_timestamp(2001, 2, 3, 24, 0, 0)::text, " +
			"make_timestamp(2001, 2, 3, 23, 59, 60)::text, make_timestamp(2000, 2, 29, 0, 0, 0)::text, make_timestamp(2001, 2, 3, 4, 5, 59.9999996)::text, " +
			"make_timestamp(2001, 2, 3, 4, 5, 60.0000001)::text, make_timestamp(2001::int2, 2, 3, 4, 5, 1::real)::text, make_timestamp(2001, 2, 3, 4, 5, '1.25')::text, " +
			"make_timestamp(NULL, 2, 3, 4, 5, 6)::text, make_timestamp(2001, 2, 3, 4, 5, -0.0000001)::text",
		"SELECT id, make_timestamp(2001, 3, 31, extract(hour from timestamp)::int, 30, (value->>'delay')::int % 60 + 0.25)::text, " +
			"make_timestamptz(2001, 4, (value->>'delay')::int % 28 + 1, 0, 0, 0)::text" + fn18Where + " AND (value->>'delay')::int >= 0 ORDER BY 1",
		// A zone by name, abbreviation or POSIX rule, around DST changes (the local 02:30 of
		// 2001-04-01 does not exist in New York, 01:30 of 2001-10-28 twice).
		"SELECT make_timestamptz(2001, 4, 1, 2, 30, 0, 'America/New_York')::text, make_timestamptz(2001, 10, 28, 1, 30, 0, 'America/New_York')::text, " +
			"make_timestamptz(2001, 6, 1, 12, 0, 0.5, 'EST')::text, make_timestamptz(2001, 6, 1, 12, 0, 0, 'UTC+5')::text, make_timestamptz(2001, 6, 1, 12, 0, 0, 'europe/paris')::text, " +
			"make_timestamptz(2001, 6, 1, 12, 0, 0, 'Asia/Kolkata')::text, make_timestamptz(2001, 6, 1, 12, 0, 0, 'EST5EDT')::text",
		"SELECT id, make_timestamptz(2001, 3, 31, extract(hour from timestamp)::int, 0, 0, 'Europe/Paris')::text" + fn18Where + " ORDER BY 1",
		"SELECT to_timestamp(986083200 + 86400)::text, to_timestamp(g * 1.5)::text, to_timestamp(g::real)::text, to_timestamp(NULL::int), to_timestamp(-g * 1e9)::text FROM generate_series(1, 3) g",
		"SELECT id, to_timestamp(extract(epoch from timestamp) + 86400)::text, to_timestamp((value->>'delay')::int * 1000.25)::text" + fn18Where + " ORDER BY 1",
		"SELECT pg_typeof(1), pg_typeof('a'::text), pg_typeof(now()), pg_typeof(1.5), pg_typeof(1::int2), pg_typeof(1::int8), pg_typeof(1.5::real), pg_typeof(1.5::float8), " +
			"pg_typeof('a'), pg_typeof(NULL), pg_typeof(true), pg_typeof('a'::varchar), pg_typeof('a'::varchar(3)), pg_typeof('a'::char(3)), pg_typeof('\\x00'::bytea), " +
			"pg_typeof('{}'::json), pg_typeof('{}'::jsonb), pg_typeof(interval '1 day'), pg_typeof(date '2001-01-01'), pg_typeof(timestamp '2001-01-01')::text, pg_typeof(1 / 2.0)",
		"SELECT pg_typeof(timestamp), pg_typeof(value->'delay'), pg_typeof(count(*)), pg_typeof(sum((value->>'delay')::int)), pg_typeof(avg((value->>'delay')::int)), " +
			"pg_typeof(lower(min(value->>'destination'))), pg_typeof(sum((value->>'distance')::bigint))::text" + fn18Where + " GROUP BY 1, 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT make_timestamp(2001, 2, 30, 4, 5, 6)":                                      "22008",
			"SELECT make_timestamp(0, 2, 3, 4, 5, 6)":                                          "22008",
			"SELECT make_timestamp(2001, 2, 3, 24, 0, 0.5)":                                    "22008",
			"SELECT make_timestamp(2001, 2, 3, 23, 60, 0)":                                     "22008",
			"SELECT make_timestamp(2001, 2, 3, 4, 5, -0.1)":                                    "22008",
			"SELECT make_timestamp(2001, 2, 3, 4, 5, 'NaN')":                                   "22008",
			"SELECT make_timestamp(2001, 2, 3, -1, 0, 0)":                                      "22008",
			"SELECT make_timestamp(300000, 2, 3, 4, 5, 1)":                                     "22008",
			"SELECT make_timestamp(2001, 2, (value->>'delay')::int + 40, 4, 5, 6)" + fn18Where: "22008",
			"SELECT make_timestamp(2001::bigint, 2, 3, 4, 5, 1)":                               "42883",
			"SELECT make_timestamp(2001, 2, 3, 4, 5)":                                          "42883",
			"SELECT make_timestamp('2001'::text, 2, 3, 4, 5, 1)":                               "42883",
			"SELECT to_timestamp(x) FROM (VALUES (1e300::float8)) v(x)":                        "22008",
			"SELECT to_timestamp(x) FROM (VALUES ('NaN'::float8)) v(x)":                        "22008",
			"SELECT to_timestamp(x) FROM (VALUES ('a'::text)) v(x)":                            "42883",
			"SELECT to_timestamp(x) FROM (VALUES (interval '1 day')) v(x)":                     "42883",
			"SELECT pg_typeof((value->>'destination')::int)" + fn18Where:                       "22P02",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT make_timestamptz(2001, 2, 3, 4, 5, 6, '+05')":                  "make_timestamptz with a time zone argument that is not a zone name",
			"SELECT make_timestamptz(2001, 2, 3, 4, 5, 6, origin)" + fn18Where:     "make_timestamptz with a time zone argument that is not a zone name",
			"SELECT to_timestamp(x) FROM (VALUES ('Infinity'::float8)) v(x)":       "to_timestamp of infinity",
			"SELECT pg_typeof(1) = 'integer'":                                      "pg_typeof other than as a column",
			"SELECT pg_typeof(g) FROM generate_series(1, 2) g ORDER BY 1":          "pg_typeof other than as a column",
			"SELECT t FROM (SELECT pg_typeof(1) AS t) s":                           "pg_typeof other than as a column",
			"SELECT pg_typeof(x) FROM (SELECT 'a'::varchar AS x) s":                "pg_typeof of a text column",
			"SELECT pg_typeof(COALESCE(x, 'b')) FROM (SELECT 'a'::varchar AS x) s": "pg_typeof of a text column",
			"SELECT pg_typeof(value)" + fn18Where:                                  "pg_typeof of a binary value",
		})
	}
}

// TestGroupByIntervalAsPostgres: an interval as a GROUP BY key (an expression of the flights'
// timestamps, a subquery's column, VALUES with NULL and negative intervals, beside other keys),
// a DISTINCT column or a UNION's column groups as PostgreSQL's interval_cmp compares
// intervals: '1 mon', '30 days' and '720 hours' are one group. In grouping sets it is refused
// by name.
func TestGroupByIntervalAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT (date_trunc('hour', timestamp) - date_trunc('day', timestamp))::text AS k, count(*), min(id)" + fn18Where + " GROUP BY date_trunc('hour', timestamp) - date_trunc('day', timestamp) ORDER BY 1",
		"SELECT k::text, count(*), min(id), sum((v->>'delay')::int) FROM (SELECT timestamp - date_trunc('day', timestamp) AS k, id, value AS v" + fn18Where + ") s GROUP BY k ORDER BY k",
		"SELECT k::text, count(*) FROM (VALUES (interval '1 day'), (interval '1 day'), (NULL), (interval '-1 day'), (interval '2 hours'), (interval '1 mon -3 days')) v(k) GROUP BY k ORDER BY k",
		"SELECT count(*) FROM (VALUES (interval '1 mon'), (interval '30 days'), (interval '720 hours'), (interval '1 mon 1 sec')) v(k) GROUP BY k ORDER BY 1",
		"SELECT (date_trunc('day', timestamp) - timestamp '2001-03-01')::text AS k, value->>'destination' AS d, count(*)" + fn18Where + " GROUP BY 1, 2 ORDER BY 2, 1",
		"SELECT (timestamp - date_trunc('hour', timestamp))::text, count(*)" + fn18Where + " GROUP BY timestamp - date_trunc('hour', timestamp) HAVING count(*) > 1 ORDER BY 2 DESC, 1",
		// DISTINCT and UNION of intervals: one row per span.
		"SELECT k::text FROM (SELECT DISTINCT (timestamp - date_trunc('hour', timestamp)) AS k" + fn18Where + ") s ORDER BY s.k",
		"SELECT k::text FROM (SELECT DISTINCT timestamp - date_trunc('day', timestamp) AS k, value->>'destination' AS d" + fn18Where + ") s ORDER BY k, d LIMIT 20",
		"SELECT count(*) FROM (SELECT DISTINCT k FROM (VALUES (interval '1 mon'), (interval '30 days'), (interval '720 hours'), (interval '1 mon 1 sec'), (NULL)) v(k)) s",
		"SELECT k::text FROM (SELECT interval '1 day' AS k UNION SELECT interval '24 hours' UNION SELECT interval '2 days' UNION SELECT NULL) s ORDER BY k",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT k::text, count(*) FROM (VALUES (interval '1 day'), (interval '-1 day')) v(k) GROUP BY ROLLUP (k) ORDER BY 1": "GROUPING SETS, ROLLUP or CUBE of an interval",
		})
	}
}

// TestPercentileDiscAsPostgres: percentile_disc(f) WITHIN GROUP (ORDER BY x [DESC]) of
// timestamps (with and without time zone), dates, text, booleans and numerics answers
// PostgreSQL's value (the ceil(f·n)-th in the ordering, NULLs left out, NULL without values),
// grouped and not; a fraction outside [0, 1] is its 22003, percentile_cont of a timestamp its
// 42883; the array form of these types and percentile_disc of intervals are refused by name.
func TestPercentileDiscAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY timestamp '2001-01-01' + g * interval '1 hour')::text, " +
			"percentile_disc(0.5) WITHIN GROUP (ORDER BY timestamptz '2001-01-01' + g * interval '1 hour')::text, percentile_disc(0.9) WITHIN GROUP (ORDER BY date '2001-01-01' + g)::text, " +
			"percentile_disc(0.3) WITHIN GROUP (ORDER BY g::text DESC), percentile_disc(0) WITHIN GROUP (ORDER BY g > 2), percentile_disc(1) WITHIN GROUP (ORDER BY g * 1.5)::text, " +
			"percentile_disc(0.75) WITHIN GROUP (ORDER BY NULLIF(g, 2)::numeric(5,2))::text FROM generate_series(1, 4) g",
		"SELECT value->>'destination' AS d, percentile_disc(0.5) WITHIN GROUP (ORDER BY timestamp)::text, percentile_disc(0.25) WITHIN GROUP (ORDER BY timestamp DESC)::text, " +
			"percentile_disc(0.5) WITHIN GROUP (ORDER BY id), percentile_disc(0.1) WITHIN GROUP (ORDER BY timestamp::date)::text" + fn18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY timestamp)::text, percentile_disc(0.99) WITHIN GROUP (ORDER BY value->>'destination')" + fn18Where,
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x)::text FROM (VALUES (NULL::timestamp), (timestamp '2001-01-01'), (NULL)) v(x)",
		"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x)::text FROM (VALUES (NULL::timestamp)) v(x)",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for q, state := range map[string]string{
			"SELECT percentile_disc(1.5) WITHIN GROUP (ORDER BY timestamp)" + fn18Where: "22003",
			"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY timestamp)" + fn18Where: "42883",
			"SELECT percentile_cont(0) WITHIN GROUP (ORDER BY id)" + fn18Where:          "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY timestamp)" + fn18Where:                       "percentile_disc of timestamp with time zone",
			"SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY g * interval '1 hour') FROM generate_series(1, 4) g": "percentile_disc of interval",
		})
	}
}
