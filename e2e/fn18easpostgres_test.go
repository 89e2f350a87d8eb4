package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// TestSubstringRegexAsPostgres: substring(s FROM pattern) and substring(s, pattern) with a
// POSIX regular expression (Metabase's regexextract) over the flights' fields and constants
// answer PostgreSQL's text: the first parenthesised subexpression's text, else the whole match,
// NULL without a match, of NULL or when that subexpression took no part. The SIMILAR form
// (… FOR escape), patterns with alternatives and subexpressions and patterns that are not
// constants are refused by name; an invalid pattern is PostgreSQL's 2201B.
func TestSubstringRegexAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, substring(id FROM '[0-9]+'), substring(id, '-([0-9])'), substring(value->>'destination' FROM '^(.)'), substring(value->>'destination' FROM '[AEIOU](.)?'), " +
			"substring(value::text FROM '\"destination\": \"([A-Z]+)\"'), substring(value->>'nosuch' FROM 'a'), substring(origin FROM 'x')" + fn18Where + " ORDER BY 1",
		"SELECT substring('foobar' FROM 'o(b)'), substring('foobar' FROM 'o.b'), substring('foobar' FROM 'x'), substring('foobar' FROM '(x)?b'), substring('foobar' FROM '(?:o)b'), " +
			"substring('foobar', 'o+'), substring('hello' FROM '2'), substring(NULL::text FROM 'l'), substring('héllo' FROM 'é.'), substring('hello' FROM '(l)(o)'), " +
			"substring('hello' FROM '2' FOR 2), substring('a1b22c333' FROM '[0-9]{2,}'), substring('abc' FROM '')",
		"SELECT count(*), substring(value->>'destination' FROM '^[A-Z]')" + fn18Where + " GROUP BY 2 ORDER BY 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT substring('foobar' FROM '%o#\"b_#\"%' FOR '#')":       "substring(… FROM pattern FOR escape) (a SIMILAR pattern)",
			"SELECT substring('foobar' SIMILAR '%o#\"b_#\"%' ESCAPE '#')": "substring(… FROM pattern FOR escape) (a SIMILAR pattern)",
			"SELECT substring('hello' FROM '(x)|l')":                      "substring(… FROM pattern) of a pattern with alternatives (|) and subexpressions",
			"SELECT substring(id FROM id)" + fn18Where:                    "substring(… FROM pattern) with a pattern that is not a constant",
		})
		for _, q := range []string{"SELECT substring('hello' FROM '(')", "SELECT substring(id, '[')" + fn18Where} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "2201B")
		}
	}
}
