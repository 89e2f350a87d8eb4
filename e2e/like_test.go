package e2e

import "testing"

// TestLikeAsPostgres: LIKE, NOT LIKE and ILIKE (scan/ops/like.go, PostgreSQL's MatchText and,
// for ILIKE, lower() of both sides) answer PostgreSQL's rows over the flights' ids, origins,
// JSON text and fields — infixes, prefixes, suffixes, _ over multibyte characters, escapes of
// %, _ and \, runs that overlap — and over constants with non-ASCII case pairs; a pattern
// ending in its escape character is PostgreSQL's 22025 where the matching reaches that
// character, and false elsewhere; ESCAPE clauses (like_escape) rewrite constant patterns as
// PostgreSQL does, an escape string of two characters 22025.
func TestLikeAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT count(*)" + trial23Where + ` AND value::text LIKE '%"destination":"DTW"%'`,
		"SELECT count(*)" + trial23Where + ` AND value::text ILIKE '%"DESTINATION":"dtw"%'`,
		"SELECT count(*)" + trial23Where + ` AND value::text NOT LIKE '%"delay":-%'`,
		"SELECT id" + trial23Where + ` AND id LIKE '%5' ORDER BY id`,
		"SELECT id" + trial23Where + ` AND id LIKE '%1_' ORDER BY id`,
		"SELECT id" + trial23Where + ` AND id LIKE '_%2%3%' ORDER BY id`,
		"SELECT value->>'destination' d, count(*)" + trial23Where + ` AND value->>'destination' LIKE 'S%' GROUP BY 1 ORDER BY 1`,
		"SELECT value->>'destination' d, count(*)" + trial23Where + ` AND value->>'destination' ILIKE '%a%' GROUP BY 1 ORDER BY 1`,
		"SELECT value->>'destination' d, count(*)" + trial23Where + ` AND value->>'destination' LIKE '%_W' GROUP BY 1 ORDER BY 1`,
		"SELECT count(*)" + trial23Where + ` AND origin LIKE 'O%D'`,
		"SELECT count(*)" + trial23Where + ` AND origin ILIKE 'o_d'`,
		`SELECT 'İ' ILIKE 'i', 'ÀB' ILIKE 'àb', 'é' LIKE '_', 'éa' LIKE '_a', 'aa' LIKE '%a%a%', 'aba' LIKE '%ab%ba%', 'abab' LIKE '%ab%ab'`,
		`SELECT 'a%b' LIKE 'a\%b', 'aXb' LIKE 'a\%b', 'a_b' LIKE 'a\_b', 'a\b' LIKE 'a\\b', 'aaa' LIKE 'a%aa', 'aa' LIKE 'a%aa', 'x' LIKE '_%_', '' LIKE '%', '' LIKE '_'`,
		`SELECT 'abc' LIKE 'x\', 'abc' LIKE 'abc\', '' LIKE '\', 'a' LIKE '_\'`,
		`SELECT 'a%b' LIKE 'a/%b' ESCAPE '/', 'a\b' LIKE 'a\b' ESCAPE '/', 'a/b' LIKE 'a//b' ESCAPE '/', 'a\b' LIKE 'a\b' ESCAPE '', 'ab' LIKE 'a\b' ESCAPE '', like_escape('a/%\', '/'), ('a' LIKE 'a' ESCAPE NULL) IS NULL, 'x%' ILIKE 'X/%' ESCAPE '/', 'x' NOT LIKE 'x#_' ESCAPE '#'`,
		"SELECT id" + trial23Where + ` AND id LIKE '%!_1%' ESCAPE '!' ORDER BY id`,
		"SELECT count(*)" + trial23Where + ` AND value::text LIKE '%"delay":#-1_,%' ESCAPE '#'`,
		`SELECT x, x LIKE 'a%', x ILIKE '%B' FROM (VALUES ('ab'), ('AB'), (NULL), ('')) v(x) ORDER BY x NULLS FIRST`,
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		for _, q := range []string{`SELECT 'abc' LIKE 'a%\'`, `SELECT 'ab' LIKE 'a\'`, `SELECT 'a%' LIKE 'a/' ESCAPE '/'`, `SELECT 'a' LIKE 'a' ESCAPE 'xy'`, "SELECT count(*)" + trial23Where + ` AND id LIKE '%\'`} {
			refusedWithState(t, ctx, cl.c, pg, q, "22025")
		}
	}
}
