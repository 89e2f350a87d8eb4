package e2e

import (
	"context"
	"strings"
	"testing"
)

// TestByteaAsPostgres: text cast to bytea reads as PostgreSQL's byteain (hex format '\x6162'
// with white space between pairs, escape format 'a\\b' and '\141'; it was the text's own
// bytes, '\x6162'::bytea six bytes for PostgreSQL's two), of constants and of rows, and a
// bytea cast to text is byteaout's hex; text byteain does not read is PostgreSQL's 22023 or
// 22P02, in its words.
func TestByteaAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		`SELECT length('\x6162'::bytea), octet_length('\x6162'::bytea), '\x6162'::bytea::text, 'a\\b'::bytea::text, '\141\142'::bytea::text, length('a\\b'::bytea)`,
		"SELECT '\\x 61 62'::bytea::text, '\\xDEADbeef'::bytea::text, ''::bytea::text, '\\x'::bytea::text, CAST(CAST('\\x00ff' AS bytea) AS text), length(bytea '\\x41')",
		`SELECT convert_from('\x6162'::bytea, 'UTF8'), '\x6162'::bytea = 'ab'::bytea, '\x61'::bytea < '\x62'::bytea, '\x6162'::bytea::varchar`,
		`SELECT x::bytea::text, length(x::bytea) FROM (VALUES ('\x6162'), ('a\\b'), ('\141'), (NULL), ('plain'), ('\x')) v(x)`,
		// A bytea read from a subquery, a CTE, a set operation, a join or a grouping key.
		`SELECT b::text FROM (SELECT '\x6162'::bytea AS b) t`,
		`WITH c AS (SELECT x::bytea AS b FROM (VALUES ('\x61'), ('a\\b')) v(x)) SELECT b::text, length(b) FROM c ORDER BY 1`,
		`SELECT b::text FROM (SELECT '\x61'::bytea AS b UNION SELECT '\x62'::bytea) t ORDER BY 1`,
		`SELECT t.b::text, u.b::text FROM (SELECT '\x61'::bytea AS b) t JOIN (SELECT '\x61'::bytea AS b) u ON t.b = u.b`,
		`SELECT b::text, count(*) FROM (SELECT x::bytea AS b FROM (VALUES ('\x61'), ('a'), ('b')) v(x)) t GROUP BY b ORDER BY 1`,
		// An untyped literal beside a bytea value is bytea, read by byteain (issue 18): it was
		// compared as its own characters.
		`SELECT b::text, b = '\x61', '\x61' = b, b <> 'a\\b', b < '\x62', b >= 'a', b IN ('\x61', '\x62'), b NOT IN ('a\\b'), b IN ('\x61', x::bytea), '\x61' IN (b) FROM (SELECT x, x::bytea AS b FROM (VALUES ('\x61'), ('a\\b'), ('\x62'), (NULL)) v(x)) t ORDER BY 1`,
		`SELECT b::text FROM (SELECT x::bytea AS b FROM (VALUES ('\x61'), ('a\\b'), ('\x6162')) v(x)) t WHERE b = '\x6162' OR b IN ('a\\b') ORDER BY 1`,
		`SELECT '\x6162'::bytea = '\x6162', '\x61'::bytea IN ('a', '\x62'), '\x6162'::bytea::bpchar, CAST('\x61'::bytea AS varchar), '\x61'::bytea::name`,
		`SELECT length(b), b::text FROM (SELECT '\x61'::bytea AS b UNION ALL SELECT '\x6263' UNION ALL SELECT 'a\\b') t ORDER BY 1`,
		`SELECT length(coalesce(b, '\x7a7a')), length(CASE WHEN b IS NULL THEN '\x7a' ELSE b END), length(greatest(b, '\x7a7a7a')) FROM (SELECT x::bytea AS b FROM (VALUES ('\x61'), (NULL)) v(x)) t ORDER BY 1`,
		`SELECT b::varchar, b::bpchar, CAST(b AS character varying) FROM (SELECT x::bytea AS b FROM (VALUES ('\x6162'), ('a'), (NULL)) v(x)) t ORDER BY 1`,
	)...)
	for q, code := range map[string]string{
		`SELECT '\x616'::bytea`: "22023", `SELECT '\xzz'::bytea`: "22023", `SELECT '\x6 1'::bytea`: "22023", `SELECT 'a\b'::bytea`: "22P02",
		`SELECT '\400'::bytea`: "22P02", `SELECT x::bytea FROM (VALUES ('ok'), ('\x6')) v(x)`: "22023",
		`SELECT x::bytea FROM (VALUES ('ok'), ('\q')) v(x)`: "22P02",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, code)
	}
	// Over rows: the same rows in PostgreSQL.
	from := " FROM flights WHERE origin = 'ORD' AND " + trialRange
	pgTableOf(t, ctx, cl, pg, 1000, "bytea_rows", "SELECT id, value->>'destination', value->>'distance'"+from, "id text", "dest text", "distance text")
	ours := strings.NewReplacer("{DEST}", "(value->>'destination')", "{DIST}", "(value->>'distance')", "{FROM}", from)
	theirs := strings.NewReplacer("{DEST}", "dest", "{DIST}", "distance", "{FROM}", " FROM bytea_rows WHERE true")
	var rows []pgCase
	for _, q := range []string{
		`SELECT id, {DEST}::bytea::text, length({DEST}::bytea), ('\x' || {DIST})::bytea::text, ('\' || substring({DIST} FROM 1 FOR 1) || '00')::bytea::text {FROM} AND length({DIST}) IN (2, 4) AND {DIST} < '4' ORDER BY id`,
		`SELECT ('\x' || {DIST})::bytea::text AS b, count(*) {FROM} AND length({DIST}) = 4 GROUP BY 1 ORDER BY 1`,
	} {
		rows = append(rows, pgCase{ours: ours.Replace(q), theirs: theirs.Replace(q)})
	}
	if n := comparePG(t, ctx, pg, one(cl), rows...); n < 500 {
		t.Errorf("only %d rows compared", n)
	}
}
