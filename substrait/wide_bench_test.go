package substrait_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/testsupport/widesql"
	"github.com/flightsrv/flightsrv/substrait"
)

// wideWhere is the routed predicate of wideShapes' reads of flights: one partition, one month.
const wideWhere = " WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01'"

// wideShapes are statements whose result (or whose widest relation) has w columns, by name.
var wideShapes = []struct {
	name string
	sql  func(w int) string
}{
	{"derived-consts", func(w int) string { return "SELECT * FROM (" + widesql.Consts(w, "c") + ") a" }},
	{"join-consts", func(w int) string {
		return "SELECT * FROM (" + widesql.Consts(w/2, "a") + ") a JOIN (" + widesql.Consts(w/2, "b") + ") b ON true"
	}},
	{"join-members", func(w int) string {
		return "SELECT * FROM (" + widesql.Members(w/2, "a", wideWhere) + ") a JOIN (" + widesql.Members(w/2, "b", wideWhere) + ") b ON true"
	}},
	{"join-columns", func(w int) string {
		cols := func(p string) string {
			return "SELECT " + widesql.Items(w/2, p, func(i int) string {
				return []string{"id", "origin", "timestamp", "value"}[i%4]
			}) + " FROM flights" + wideWhere
		}
		return "SELECT * FROM (" + cols("a") + ") a JOIN (" + cols("b") + ") b ON a.a1 = b.b1"
	}},
	{"group-by", func(w int) string {
		return "SELECT " + widesql.Items(w-1, "k", func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) +
			", count(*) FROM flights" + wideWhere + " GROUP BY " + widesql.Ordinals(w-1)
	}},
	{"union", func(w int) string {
		return widesql.Members(w, "m", wideWhere) + " UNION " + widesql.Members(w, "n", wideWhere)
	}},
	{"cte-twice", func(w int) string {
		return "WITH t AS (" + widesql.Members(w/2, "m", wideWhere) + ") SELECT * FROM t a JOIN t b ON a.m1 = b.m1"
	}},
	{"members", func(w int) string { return widesql.Members(w, "m", wideWhere) }},
}

// BenchmarkWideBind measures planning a statement w columns wide as the server plans it
// (query.Engine.Execute): parse and bind (PrepareWith, which binds once for the dataset
// schema), bind again (BindGeneral) and read every routed read's route (Routes). PostgreSQL
// plans a 1,600-column statement in milliseconds: cost here should grow about linearly in w.
// The executor's share (lowering, running) is query.BenchmarkWideStatement's.
func BenchmarkWideBind(b *testing.B) {
	cat, err := substrait.NewCatalog(orDef)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range wideShapes {
		for _, w := range []int{100, 400, 1600} {
			b.Run(fmt.Sprintf("%s/w=%d", shape.name, w), func(b *testing.B) {
				sql := shape.sql(w)
				b.ReportAllocs()
				for b.Loop() {
					st, err := substrait.PrepareWith(sql, cat, substrait.BindOptions{})
					if err != nil {
						b.Fatal(err)
					}
					bd, err := st.BindGeneral(substrait.BindOptions{})
					if err != nil {
						b.Fatal(err)
					}
					if bd.Plan == nil {
						continue
					}
					if _, err := substrait.Routes(bd.Plan, cat, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// nestedShapes are statements nested d levels deep, by name.
var nestedShapes = []struct {
	name string
	sql  func(d int) string
}{
	{"scalar", func(d int) string { return "SELECT " + strings.Repeat("(SELECT ", d) + "1" + strings.Repeat(")", d) }},
	{"derived", func(d int) string {
		return "SELECT * FROM " + strings.Repeat("(SELECT * FROM ", d) + "(SELECT 1 AS x) t" + strings.Repeat(") t", d)
	}},
	{"exists", func(d int) string {
		return "SELECT 1 " + strings.Repeat("WHERE EXISTS (SELECT 1 ", d) + strings.Repeat(")", d)
	}},
}

// BenchmarkNestedBind measures planning statements nested d levels deep (scalar subqueries,
// derived tables, EXISTS), as BenchmarkWideBind does: each level's binding must not walk the
// levels below it again (trial 32 F9: the derived tables' and EXISTS' column-name counts did,
// 600 levels 2.1–2.3 s against 48–62 ms once memoized per SELECT; 600 scalar subqueries
// 2.9 s against 0.20 s here, 100/300/600 levels 0.11/0.93/2.9 s against 0.05/0.11/0.20 s, once
// decorrelate stopped cloning each level's statement, every level below it included, to defer
// a select list that had nothing to defer).
func BenchmarkNestedBind(b *testing.B) {
	cat, err := substrait.NewCatalog(orDef)
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range nestedShapes {
		for _, d := range []int{100, 300, 600} {
			b.Run(fmt.Sprintf("%s/d=%d", shape.name, d), func(b *testing.B) {
				benchBind(b, cat, shape.sql(d))
			})
		}
	}
}

// benchBind measures preparing and binding sql over cat.
func benchBind(b *testing.B, cat substrait.Catalog, sql string) {
	b.ReportAllocs()
	for b.Loop() {
		st, err := substrait.PrepareWith(sql, cat, substrait.BindOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.BindGeneral(substrait.BindOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
