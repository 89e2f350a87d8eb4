package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
)

// fn18Where reads BOS's flights of two days.
const fn18Where = " FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02'"

// TestVarcharCastAsPostgres: an explicit cast to varchar(n) or character varying(n) cuts the
// text to its first n characters, as PostgreSQL does (no error), of columns, numbers, NULL and
// multibyte text, named varchar; lengths out of PostgreSQL's range are its 22023; character(n)
// is refused by name.
func TestVarcharCastAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT id, CAST(id AS varchar(4)), (value->>'destination')::character varying(2), CAST((value->>'delay')::int AS varchar(1)), " +
			"CAST(value->>'nosuch' AS varchar(3)), length(CAST(value->>'destination' AS varchar(10))), CAST(origin AS VARCHAR(10)) || '|'" + fn18Where + " ORDER BY 1",
		"SELECT CAST('abcdef' AS varchar(3)), 'ab'::varchar(3), CAST(12345 AS varchar(2)), 'héllo'::varchar(2), CAST(NULL AS varchar(3)), 'a  '::varchar(2) || '|', " +
			"CAST(2.50 AS varchar(3)), CAST(true AS varchar(1)), 'x'::pg_catalog.varchar(10485760)",
		"SELECT count(*), min(CAST(value->>'destination' AS varchar(1)))" + fn18Where + " GROUP BY CAST(value->>'destination' AS varchar(1)) ORDER BY 2",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		sameColumnNames(t, ctx, cl.c, pg, "SELECT CAST(origin AS varchar(2)), CAST('a' AS character varying(3)), CAST(1 AS varchar(3))"+fn18Where+" LIMIT 1")
		for _, q := range []string{"SELECT 'abc'::varchar(0)", "SELECT CAST(id AS varchar(10485761))" + fn18Where} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "22023")
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT CAST(origin AS char(4))" + fn18Where: "character(n)",
			"SELECT 'abc'::character(2)":                 "character(n)",
			"SELECT CAST('abc' AS char)":                 "character(n)",
		})
	}
}
