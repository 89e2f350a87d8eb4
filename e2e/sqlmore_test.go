package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
)

// ordRows copies ORD's rows of March (archived) and April (hot) into PostgreSQL's temporary
// table name (id, ts, dest, delay) and returns a function that turns a query template into
// flightsrv's and PostgreSQL's SQL: ID, TS, DEST and DELAY stand for the columns (the JSON
// fields for flightsrv), FROMROWS for the read with its WHERE (more conjuncts may follow
// with AND).
func ordRows(t *testing.T, ctx context.Context, e *env, name string) (pair func(tmpl string) (ours, theirs string), cl *flightsql.Client, pg *pgx.Conn) {
	t.Helper()
	cl = dial(t, e.on)
	pg = pgUTC(t, ctx, e.url)
	from := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, name, "SELECT id, timestamp, value->>'destination', value->>'delay'"+from,
		"id text", "ts timestamptz", "dest text", "delay int")
	ours := strings.NewReplacer("ID", "id", "TS", "timestamp", "DEST", "(value->>'destination')", "DELAY", "((value->>'delay')::int)", "FROMROWS", from)
	theirs := strings.NewReplacer("ID", "id", "TS", "ts", "DEST", "dest", "DELAY", "delay", "FROMROWS", " FROM "+name+" WHERE true")
	return func(tmpl string) (string, string) { return ours.Replace(tmpl), theirs.Replace(tmpl) }, cl, pg
}

// TestDistinctOnAsPostgres: SELECT DISTINCT ON (…) over ORD's archived March and hot April —
// by select-list names, ordinals and expressions outside the select list, several keys,
// after GROUP BY, under LIMIT, inside a subquery with a filter outside it, NULL keys — answers
// PostgreSQL's rows over the same rows; an ORDER BY not starting with the DISTINCT ON
// expressions is PostgreSQL's error 42P10.
func TestDistinctOnAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "don_rows")
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT DISTINCT ON (DEST) DEST AS d, DELAY::text AS dl, TS::text AS t, ID FROMROWS ORDER BY DEST, DELAY DESC NULLS LAST, TS, ID",
		"SELECT DISTINCT ON (1) DEST AS d, TS::text AS t FROMROWS ORDER BY 1, TS DESC, ID",
		"SELECT DISTINCT ON (d) DEST AS d, DELAY::text AS dl FROMROWS ORDER BY d, DELAY NULLS FIRST, ID",
		"SELECT DISTINCT ON (extract(day FROM TS)) ID, DEST FROMROWS ORDER BY extract(day FROM TS), TS DESC, ID",
		"SELECT DISTINCT ON (DEST, DELAY / 60) DEST, (DELAY / 60)::text, ID FROMROWS ORDER BY DEST, DELAY / 60, ID DESC",
		"SELECT DISTINCT ON (DELAY / 60, DEST) DEST, (DELAY / 60)::text, ID FROMROWS ORDER BY DEST, DELAY / 60 DESC, ID",
		"SELECT DISTINCT ON (DEST) DEST, (DELAY / 30)::text AS late, count(*)::text FROMROWS GROUP BY 1, 2 ORDER BY DEST, count(*) DESC, 2",
		"SELECT DISTINCT ON (DEST) DEST, ID FROMROWS ORDER BY DEST DESC, TS, ID LIMIT 7 OFFSET 2",
		"SELECT DISTINCT ON (DELAY) DELAY::text AS dl, ID FROMROWS ORDER BY DELAY NULLS FIRST, ID LIMIT 3",
		"SELECT t.d, t.i FROM (SELECT DISTINCT ON (DEST) DEST AS d, ID AS i FROMROWS ORDER BY DEST, TS DESC, ID) t WHERE t.d >= 'M' ORDER BY 1",
		"SELECT count(*)::text, count(DISTINCT d)::text FROM (SELECT DISTINCT ON (DEST) DEST AS d FROMROWS) t",
		"SELECT DISTINCT ON (DEST) DEST FROMROWS ORDER BY DEST",
	)...)
	for _, q := range []string{
		"SELECT DISTINCT ON (a) a, b FROM (SELECT 1 AS a, 2 AS b) t ORDER BY b, a",
		"SELECT DISTINCT ON (a, b) a, b FROM (SELECT 1 AS a, 2 AS b) t ORDER BY a, 1 + b, b",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, "42P10")
	}
}

// TestSetOperationsAllAsPostgres: INTERSECT ALL and EXCEPT ALL keep PostgreSQL's multiset
// counts (min(m, n) and max(m - n, 0) copies of a row found m times on the left and n on the
// right) over ORD's archived March and hot April rows, with NULLs, several columns, a filter
// outside them, nested set operations and constants, each answer PostgreSQL's over the same
// rows.
func TestSetOperationsAllAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "setall_rows")
	month := func(m string) string {
		return " FROMROWS AND TS >= '2001-0" + m + "-01' AND TS < '2001-0" + string(m[0]+1) + "-01'"
	}
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT DEST"+month("3")+" INTERSECT ALL SELECT DEST"+month("4")+" ORDER BY 1",
		"SELECT DEST"+month("3")+" EXCEPT ALL SELECT DEST"+month("4")+" ORDER BY 1",
		"SELECT DEST, (DELAY / 30)::text"+month("4")+" EXCEPT ALL SELECT DEST, (DELAY / 30)::text"+month("3")+" ORDER BY 1, 2 NULLS FIRST",
		"SELECT DEST, DELAY / 30"+month("4")+" INTERSECT ALL SELECT DEST, DELAY / 30"+month("3")+" ORDER BY 1, 2 NULLS FIRST",
		"SELECT count(*)::text FROM (SELECT DEST AS d"+month("3")+" EXCEPT ALL SELECT DEST"+month("4")+") t WHERE t.d >= 'M'",
		"SELECT DELAY / 100"+month("3")+" INTERSECT ALL SELECT DELAY / 100"+month("4")+" EXCEPT ALL SELECT DELAY / 200"+month("4")+" ORDER BY 1 NULLS FIRST",
	)...)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT 1 INTERSECT ALL SELECT 1",
		"SELECT 1 EXCEPT ALL SELECT 2",
		"SELECT x FROM (SELECT 1 AS x UNION ALL SELECT 1 UNION ALL SELECT NULL::int UNION ALL SELECT NULL::int UNION ALL SELECT 2) a INTERSECT ALL SELECT x FROM (SELECT 1 AS x UNION ALL SELECT NULL::int UNION ALL SELECT NULL::int UNION ALL SELECT NULL::int) b ORDER BY 1",
		"SELECT x FROM (SELECT 1 AS x UNION ALL SELECT 1 UNION ALL SELECT 1 UNION ALL SELECT NULL::int UNION ALL SELECT NULL::int) a EXCEPT ALL SELECT x FROM (SELECT 1 AS x UNION ALL SELECT NULL::int) b ORDER BY 1",
		"SELECT 1.5::float8 EXCEPT ALL SELECT 1",
	)...)
}

// TestNumericQuotientOfCastsAsPostgres: round, trunc and numeric(p,s) casts of a quotient
// whose operand is text or double precision cast to numeric without a scale (each value with
// its own display scale, which chooses the quotient's scale: round(text::numeric / 3, 2))
// answer PostgreSQL's values over ORD's rows, with scales from 0 to 2 and values past 10^17.
func TestNumericQuotientOfCastsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "numq_rows")
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT round(DELAY::text::numeric / 3, 2)::text, trunc((DELAY::text || '.50')::numeric / 7, 4)::text, round(DELAY::float8::numeric / 3, 2)::text FROMROWS AND DELAY IS NOT NULL ORDER BY TS, ID",
		"SELECT round((DELAY::text || '123456789012345')::numeric / 3, 1)::text, round(3 / nullif(DELAY, 0)::text::numeric, 5)::text, ((DELAY::text || '.25')::numeric / 2.5)::numeric(20, 3)::text FROMROWS AND DELAY > 0 ORDER BY TS, ID",
		"SELECT round((DELAY::float8 / 7)::numeric / 3, 6)::text, floor(DELAY::text::numeric / 4)::text, ceil(DELAY::text::numeric / 4)::text FROMROWS AND DELAY IS NOT NULL ORDER BY TS, ID",
	)...)
	// numeric / double precision is double precision, which round(…, n) does not take
	// (PostgreSQL's 42883 "function round(double precision, integer) does not exist").
	refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{
		"SELECT round((value->>'delay')::numeric / 3.0::float8, 2) FROM flights WHERE origin = 'ORD' AND " + trialRange: "function round(double precision, integer) does not exist",
	})
}

// TestTableFunctionsAsPostgres: generate_series of integers (both directions, bigint, empty)
// and of timestamps with calendar and fixed steps, and unnest(ARRAY[…]) with NULLs, in FROM
// alone, with an alias and column alias, filtered, aggregated and as a CTE, answer
// PostgreSQL's rows, a series past MaxSeriesRows too; a zero step is PostgreSQL's error, an
// unnest past MaxSeriesRows is refused by name.
func TestTableFunctionsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT * FROM generate_series(1, 10)",
		"SELECT g, g * 2 FROM generate_series(10, 1, -3) AS g",
		"SELECT n FROM generate_series(1, 5) AS t(n) WHERE n % 2 = 1 ORDER BY n DESC",
		"SELECT sum(x)::text, count(*)::text FROM generate_series(1::bigint, 10000) x",
		"SELECT count(*)::text FROM generate_series(5, 1)",
		"SELECT count(*)::text, sum(g)::text FROM generate_series(1, 100000) g",
		"SELECT ts::text FROM generate_series('2001-01-31'::timestamptz, '2001-06-01', interval '1 month') ts",
		"SELECT ts::text FROM generate_series('2001-03-02'::timestamptz, '2001-03-01', '-7 hours') AS ts",
		"SELECT date_trunc('day', ts)::text, count(*)::text FROM generate_series(timestamptz '2001-03-01 00:00', timestamptz '2001-03-03 23:00', interval '90 minutes') ts GROUP BY 1 ORDER BY 1",
		"WITH s AS (SELECT * FROM generate_series(1, 3) AS v) SELECT v FROM s ORDER BY v",
		"SELECT * FROM unnest(ARRAY[3, 1, NULL, 2])",
		"SELECT u FROM unnest(ARRAY['b', 'a', 'c']) AS u ORDER BY 1",
		"SELECT count(x)::text, count(*)::text FROM unnest(ARRAY[NULL, 2, 3::bigint]) AS t(x)",
		"SELECT * FROM unnest(ARRAY[1, 2], ARRAY[3, 4])",
	)...)
	refusedAsPostgres(t, ctx, cl, pg, "SELECT * FROM generate_series(1, 5, 0)", "22023")
	refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{
		"SELECT count(*) FROM unnest(ARRAY[" + strings.Repeat("1, ", 10000) + "1])": "unnest in FROM of more than 10000 rows is not supported",
	})
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT * FROM regexp_split_to_table('a b', ' ')": "the table function regexp_split_to_table is not supported",
	})
}

// TestSimilarToAndRegexpMatchAsPostgres: SIMILAR TO and NOT SIMILAR TO (%, _, |, groups,
// quantifiers, bracket expressions, escapes with ESCAPE and the default backslash, the
// whole-string anchor) and elements of regexp_match (captures, the whole match without
// captures, a capture that took no part, an index past the array, no match, flag i) over
// constants and ORD's destinations answer PostgreSQL's values; the bare text[] is refused by
// name, flag g as PostgreSQL refuses it.
func TestSimilarToAndRegexpMatchAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "sim_rows")
	q := "SELECT 'abc' SIMILAR TO 'abc', 'abc' SIMILAR TO 'a', 'abc' SIMILAR TO '%(b|d)%', 'abc' SIMILAR TO '(a|b)%', 'abd' NOT SIMILAR TO '_b[cd]', " +
		"'a_c' SIMILAR TO 'a#_c' ESCAPE '#', 'abc' SIMILAR TO 'a#_c' ESCAPE '#', 'a.c' SIMILAR TO 'a.c', 'abc' SIMILAR TO 'a.c', 'a%' SIMILAR TO 'a\\%', " +
		"'aaa' SIMILAR TO 'a{2,3}', 'ab' SIMILAR TO 'a+b?', 'x]' SIMILAR TO '[]x]+', 'AB' SIMILAR TO '[a-z]+', NULL SIMILAR TO 'a', 'a' SIMILAR TO NULL, " +
		"(regexp_match('foobarbequebaz', 'bar.*que'))[1], (regexp_match('foobarbequebaz', '(bar)(beque)'))[2], (regexp_match('abc', 'x'))[1], " +
		"(regexp_match('abc', '(a)(x)?'))[2], (regexp_match('abc', '(a)'))[3], (regexp_match('ABC', 'b(.)', 'i'))[1], (regexp_match('a1b22', '[0-9]+'))[1]"
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText, q)...)
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT DEST, DEST SIMILAR TO '(S|L)%', DEST SIMILAR TO '_[AEIOU]%', DEST NOT SIMILAR TO '%[XYZ]_', (regexp_match(DEST, '^([A-Z])([A-Z])'))[2], (regexp_match(DEST, '[AEIOU]+'))[1] FROMROWS ORDER BY TS, ID",
		"SELECT count(*)::text FROMROWS AND DEST SIMILAR TO '(D|M)%'",
	)...)
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		"SELECT regexp_match('abc', 'b')":           "regexp_match's text[] result is not supported",
		"SELECT (regexp_match('abc', '(a|b)c'))[1]": "regexp_match of a pattern with alternatives (|) and subexpressions",
		"SELECT (ARRAY[1, 2])[1]":                   "array subscripts",
		"SELECT 'a' SIMILAR TO ('a' || id) FROM flights WHERE origin = 'ORD' AND " + trialRange: "SIMILAR TO with a pattern or escape that is not a constant",
	})
	refusedAsPostgres(t, ctx, cl, pg, "SELECT (regexp_match('abc', 'b', 'g'))[1]", "22023")
	refusedAsPostgres(t, ctx, cl, pg, "SELECT 'a' SIMILAR TO 'a' ESCAPE 'xy'", "22025")
}

// TestNumericAggregatesAsPostgres: numerics as grouping keys (GROUP BY alone and beside text,
// DISTINCT, UNION, INTERSECT, DISTINCT ON, window partitions: decimal128 keys), sum(bigint)
// as numeric (grouped totals past bigint's range, DISTINCT, FILTER, beside sum(integer) as
// bigint), and sum, min and max of numerics (grouped, with FILTER and DISTINCT, totals of 22
// digits, empty inputs), over ORD's archived and hot rows with partial states merged across
// fragments, answer PostgreSQL's values with PostgreSQL's scales.
func TestNumericAggregatesAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "numagg_rows")
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT round(DELAY / 60.0, 1)::text, count(*)::text FROMROWS GROUP BY round(DELAY / 60.0, 1) ORDER BY round(DELAY / 60.0, 1) NULLS FIRST",
		"SELECT DEST, (DELAY * 0.25)::text, count(*)::text FROMROWS AND DELAY > 60 GROUP BY DEST, DELAY * 0.25 ORDER BY DEST, DELAY * 0.25",
		"SELECT count(*)::text FROM (SELECT DISTINCT DELAY * 0.25 AS x FROMROWS) t",
		"SELECT x::text FROM (SELECT DELAY * 0.5 AS x FROMROWS AND DELAY < -20 UNION SELECT DELAY * 0.5 FROMROWS AND DELAY > 200) t ORDER BY x",
		"SELECT x::text FROM (SELECT DELAY * 1.5 AS x FROMROWS AND DELAY < 0 INTERSECT SELECT DELAY * 1.5 FROMROWS AND DEST >= 'M') t ORDER BY x",
		"SELECT DISTINCT ON (round(DELAY / 30.0, 0)) round(DELAY / 30.0, 0)::text AS r, ID FROMROWS ORDER BY round(DELAY / 30.0, 0), ID",
		"SELECT (DELAY * 0.1)::text AS d, count(*) OVER (PARTITION BY DELAY * 0.1)::text AS n, ID FROMROWS AND DELAY > 150 ORDER BY TS, ID",
		"SELECT DEST, sum(DELAY::bigint * 1000000000000000)::text, sum(DISTINCT DELAY::bigint)::text, sum(DELAY)::text, sum(DELAY::bigint) FILTER (WHERE DELAY > 30)::text FROMROWS GROUP BY DEST ORDER BY DEST",
		"SELECT sum(DELAY::bigint * 1000000000000000)::text, sum(DISTINCT DELAY::bigint * 1000000000000000)::text, sum(DELAY::bigint) > 1000 FROMROWS",
		"SELECT sum(DELAY::bigint)::text FROMROWS AND DELAY > 100000",
		"SELECT DEST, min(DELAY * 0.25)::text, max(DELAY * 1.50)::text, max(DISTINCT DELAY::numeric(8,2)) FILTER (WHERE DELAY < 30)::text FROMROWS GROUP BY DEST ORDER BY DEST",
		"SELECT min(DELAY * -0.125)::text, max(round(DELAY / 7.0, 3))::text FROMROWS",
		"SELECT min(DELAY * 0.5)::text FROMROWS AND DELAY > 100000",
		"SELECT DEST, sum(DELAY * 0.25)::text, sum(DELAY::numeric(8,2) * 1.5) FILTER (WHERE DELAY > 10)::text, sum(round(DELAY / 7.0, 3))::text FROMROWS GROUP BY DEST ORDER BY DEST",
		"SELECT sum(DELAY * -0.125)::text, sum(DELAY * 1000000000000000000000.5)::text FROMROWS",
		"SELECT sum(DELAY * 0.5)::text FROMROWS AND DELAY > 100000",
	)...)
}
