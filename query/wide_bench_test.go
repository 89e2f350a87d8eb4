package query_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flightsrv/flightsrv/internal/testsupport/widesql"
)

// wideWhere is the routed predicate of wideStatements' reads: archivedEngine's partition, its
// six archived months.
const wideWhere = " WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'"

// wideStatements are statements of w output columns, by name.
var wideStatements = []struct {
	name string
	sql  func(w int) string
}{
	{"join-consts", func(w int) string {
		return "SELECT * FROM (" + widesql.Consts(w/2, "a") + ") a JOIN (" + widesql.Consts(w/2, "b") + ") b ON true"
	}},
	{"join-members", func(w int) string {
		return "SELECT * FROM (" + widesql.Members(w/2, "a", wideWhere) + " LIMIT 20) a JOIN (" + widesql.Members(w/2, "b", wideWhere) + " LIMIT 20) b ON true"
	}},
	{"join-computed", func(w int) string {
		arm := func(p string) string {
			return "SELECT " + widesql.Items(w/2, p, func(int) string { return "id || ''" }) + " FROM flights" + wideWhere
		}
		return "SELECT * FROM (" + arm("a") + ") a JOIN (" + arm("b") + ") b ON a.a1 = b.b1"
	}},
	{"members", func(w int) string { return widesql.Members(w, "m", wideWhere) }},
	{"group-by", func(w int) string {
		return "SELECT " + widesql.Items(w-1, "k", func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) +
			", count(*) FROM flights" + wideWhere + " GROUP BY " + widesql.Ordinals(w-1)
	}},
	{"union", func(w int) string {
		return widesql.Members(w, "m", wideWhere) + " UNION ALL " + widesql.Members(w, "n", wideWhere)
	}},
}

// BenchmarkWideStatement measures a statement w columns wide from its text to its last row
// on the engine, as a Flight SQL client's DoGet pays it the first time: the statement cache
// is emptied before each execution, so each plans, binds, routes and lowers it onto the
// executor, then runs it over archivedEngine's 600 archived records (each row's members are
// NULL). Planning a statement should cost about linearly in its width.
func BenchmarkWideStatement(b *testing.B) {
	eng := archivedEngine(b)
	ctx := context.Background()
	for _, st := range wideStatements {
		for _, w := range []int{100, 400, 1600} {
			b.Run(fmt.Sprintf("%s/w=%d", st.name, w), func(b *testing.B) {
				sql := st.sql(w)
				b.ReportAllocs()
				for b.Loop() {
					eng.ForgetStatements()
					rdr, err := eng.Execute(ctx, sql, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					if n := rdr.Schema().NumFields(); n != w {
						b.Fatalf("%d columns, want %d", n, w)
					}
					for rdr.Next() {
					}
					if err := rdr.Err(); err != nil {
						b.Fatal(err)
					}
					rdr.Release()
				}
			})
		}
	}
}
