package query_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// wideWhere is the routed predicate of wideStatements' reads: archivedEngine's partition, its
// six archived months.
const wideWhere = " WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'"

// wideItems is n select-list items item(i) AS <prefix>i, i in 1…n, comma-separated.
func wideItems(n int, prefix string, item func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("%s AS %s%d", item(i+1), prefix, i+1)
	}
	return strings.Join(items, ", ")
}

// wideMemberList is a routed SELECT of n JSON members (value->>'k1'…) named <prefix>1….
func wideMemberList(n int, prefix string) string {
	return "SELECT " + wideItems(n, prefix, func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) + " FROM flights" + wideWhere
}

// wideStatements are statements of w output columns, by name.
var wideStatements = []struct {
	name string
	sql  func(w int) string
}{
	{"join-consts", func(w int) string {
		c := func(p string) string {
			return "SELECT " + wideItems(w/2, p, func(i int) string { return fmt.Sprint(i) })
		}
		return "SELECT * FROM (" + c("a") + ") a JOIN (" + c("b") + ") b ON true"
	}},
	{"join-members", func(w int) string {
		return "SELECT * FROM (" + wideMemberList(w/2, "a") + " LIMIT 20) a JOIN (" + wideMemberList(w/2, "b") + " LIMIT 20) b ON true"
	}},
	{"members", func(w int) string { return wideMemberList(w, "m") }},
	{"group-by", func(w int) string {
		keys := make([]string, w-1)
		for i := range keys {
			keys[i] = fmt.Sprint(i + 1)
		}
		return "SELECT " + wideItems(w-1, "k", func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) +
			", count(*) FROM flights" + wideWhere + " GROUP BY " + strings.Join(keys, ", ")
	}},
	{"union", func(w int) string { return wideMemberList(w, "m") + " UNION ALL " + wideMemberList(w, "n") }},
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
