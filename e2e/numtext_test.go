package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
)

// numTextRows are texts of numbers with different display scales (numeric_in keeps each one's:
// '1.50' shows 1.50, '2' shows 2, '1e3' 1000, '1.2e-3' 0.0012), NULLs, and a key to group by.
const numTextRows = "(VALUES (1, '1.50'), (1, '2'), (1, ' 1e3 '), (2, '1.2e-3'), (2, '-0.125'), (2, NULL), (3, '3.000'), (3, '1.0000000000000000000000'), (4, NULL), (5, '-7'))"

// TestTextToNumericAsPostgres: text and double precision cast to numeric without a scale, per
// row — a VALUES column, x::text::numeric, (value->>'k')::numeric of a routed table's JSON —
// keep each value's display scale as PostgreSQL's numeric_in (float8_numeric) keeps it: their
// text, + - * and comparisons, round, sum and avg (the largest display scale of a group's
// values; numeric_div of it by the count), ORDER BY and GROUP BY answer PostgreSQL's text over
// the same rows. A value decimal128 cannot hold exactly at 16 digits after the point or 22
// before it is refused by name, never rounded; text that is no number is PostgreSQL's 22P02;
// the text of min, max or a GROUP BY key of such values, whose display scale PostgreSQL takes
// from whichever equal value it meets last, is refused by name.
func TestTextToNumericAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pair, cl, pg := ordRows(t, ctx, e, "numtext_rows")
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT k, x::numeric::text, (x::numeric * 2)::text, (x::numeric + 1.0)::text, (x::numeric - x::numeric)::text, (-x::numeric)::text, abs(x::numeric)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT k, (x::numeric * x::numeric)::text, (x::numeric > 1.5)::text, (x::numeric = 2.0)::text, round(x::numeric, 1)::text, round(x::numeric)::text, trunc(x::numeric, 2)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT k, sum(x::numeric)::text, avg(x::numeric)::text, (sum(x::numeric) + 1)::text, count(x::numeric)::text, (min(x::numeric) = -0.125)::text FROM "+numTextRows+" v(k, x) GROUP BY k ORDER BY k",
		"SELECT sum(x::numeric)::text, avg(x::numeric)::text, round(max(x::numeric), 2)::text, round(min(x::numeric), 3)::text FROM "+numTextRows+" v(k, x)",
		"SELECT x::numeric::text FROM "+numTextRows+" v(k, x) WHERE x::numeric BETWEEN -1 AND 2 ORDER BY x::numeric, k",
		"SELECT round(x::numeric, 2)::text, count(*)::text FROM "+numTextRows+" v(k, x) GROUP BY round(x::numeric, 2) ORDER BY 1",
		"SELECT count(DISTINCT x::numeric)::text FROM (VALUES ('1.5'), ('1.50'), ('2'), ('2.0'), (NULL)) v(x)",
		"SELECT x::float8::numeric::text, (x::float8::numeric * 3)::text, (x::float8 / 3)::numeric::text FROM (VALUES ('1.5'), ('0.1'), ('2'), ('-1e5'), (NULL)) v(x) ORDER BY 1",
		"SELECT (CASE WHEN x::numeric > 1 THEN x::numeric ELSE 0.5 END)::text, coalesce(x::numeric, 0.00)::text FROM "+numTextRows+" v(k, x) ORDER BY k, x",
		"SELECT x::numeric::text FROM (VALUES ('1234567890123456789012'), ('0.1234567890123456'), ('-0.0000000000000001'), ('1.10000000000000000000000000000000000000000')) v(x)",
		"SELECT '1.50'::numeric::text, ('1.50'::numeric + '2'::numeric)::text, '1e-3'::numeric::text, ' 7 '::text::numeric::text",
	)...)
	comparePG(t, ctx, pg, one(cl), pairedSQL(pair,
		"SELECT ID, DELAY::text::numeric::text, (DELAY::text || '.50')::numeric::text, ((DELAY::text || '.5')::numeric + DELAY::text::numeric)::text FROMROWS ORDER BY TS, ID",
		"SELECT DEST, sum((DELAY::text || CASE WHEN DELAY % 3 = 0 THEN '.25' WHEN DELAY % 3 = 1 THEN '.1' ELSE '' END)::numeric)::text, "+
			"avg((DELAY::text || CASE WHEN DELAY % 2 = 0 THEN '.0' ELSE '' END)::numeric)::text FROMROWS GROUP BY DEST ORDER BY DEST",
		"SELECT DEST, count(*)::text FROMROWS AND DELAY::text::numeric > 10.5 GROUP BY DEST ORDER BY DEST",
	)...)
	// (value->>'delay')::numeric itself, read in the JSON extraction.
	where := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	comparePG(t, ctx, pg, one(cl), pairCases(pgText, [][2]string{
		{"SELECT id, (value->>'delay')::numeric::text, ((value->>'delay')::numeric / 4)::text" + where + " ORDER BY timestamp, id",
			"SELECT id, delay::text::numeric::text, (delay::text::numeric / 4)::text FROM numtext_rows ORDER BY ts, id"},
		{"SELECT sum((value->>'delay')::numeric)::text, avg((value->>'delay')::numeric)::text, max((value->>'delay')::numeric)::int::text" + where,
			"SELECT sum(delay::text::numeric)::text, avg(delay::text::numeric)::text, max(delay::text::numeric)::int::text FROM numtext_rows"},
	})...)

	for _, q := range []string{
		"SELECT x::numeric FROM (VALUES ('1.5'), ('abc'), (NULL)) v(x)",
		"SELECT x::numeric::text FROM (VALUES ('1.5'), ('1_000')) v(x)",
		"SELECT x::numeric FROM (VALUES (''), ('2')) v(x)",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, "22P02")
	}
	refusedAs(t, ctx, cl, codes.Unimplemented, map[string]string{
		// Past decimal128 at 16 digits after the point: refused by name, never rounded.
		"SELECT x::numeric FROM (VALUES ('0.12345678901234567'), ('1')) v(x)":                     "needs more than 16 digits after the point",
		"SELECT x::numeric::text FROM (VALUES ('12345678901234567890123'), ('1')) v(x)":           "or 22 before it",
		"SELECT x::numeric FROM (VALUES ('NaN'), ('1')) v(x)":                                     "numeric NaN is not supported",
		"SELECT max(x::numeric)::text FROM (VALUES ('2'), ('2.0')) v(x)":                          "the text of max of a numeric whose display scale varies by row",
		"SELECT min(x::numeric)::text FROM (VALUES ('2'), ('2.0')) v(x)":                          "the text of min of a numeric whose display scale varies by row",
		"SELECT x::numeric::text, count(*) FROM (VALUES ('2'), ('2.0')) v(x) GROUP BY x::numeric": "GROUP BY key",
	})
}
