package substrait_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/substrait"
)

// wideWhere is the routed predicate of wideShapes' reads of flights: one partition, one month.
const wideWhere = " WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01'"

// wideList is a select list of n items: item(i) AS <prefix>i for i in 1…n.
func wideList(n int, prefix string, item func(i int) string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s AS %s%d", item(i), prefix, i)
	}
	return b.String()
}

// wideConsts is a table-less SELECT of n integer constants named <prefix>1…<prefix>n.
func wideConsts(n int, prefix string) string {
	return "SELECT " + wideList(n, prefix, func(i int) string { return fmt.Sprint(i) })
}

// wideMembers is a routed SELECT of n JSON members of flights (value->>'k1'…) named
// <prefix>1…<prefix>n.
func wideMembers(n int, prefix string) string {
	return "SELECT " + wideList(n, prefix, func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) + " FROM flights" + wideWhere
}

// wideShapes are statements whose result (or whose widest relation) has w columns, by name.
var wideShapes = []struct {
	name string
	sql  func(w int) string
}{
	{"derived-consts", func(w int) string { return "SELECT * FROM (" + wideConsts(w, "c") + ") a" }},
	{"join-consts", func(w int) string {
		return "SELECT * FROM (" + wideConsts(w/2, "a") + ") a JOIN (" + wideConsts(w/2, "b") + ") b ON true"
	}},
	{"join-members", func(w int) string {
		return "SELECT * FROM (" + wideMembers(w/2, "a") + ") a JOIN (" + wideMembers(w/2, "b") + ") b ON true"
	}},
	{"join-columns", func(w int) string {
		cols := func(p string) string {
			return "SELECT " + wideList(w/2, p, func(i int) string {
				return []string{"id", "origin", "timestamp", "value"}[i%4]
			}) + " FROM flights" + wideWhere
		}
		return "SELECT * FROM (" + cols("a") + ") a JOIN (" + cols("b") + ") b ON a.a1 = b.b1"
	}},
	{"group-by", func(w int) string {
		keys := make([]string, w-1)
		for i := range keys {
			keys[i] = fmt.Sprint(i + 1)
		}
		return "SELECT " + wideList(w-1, "k", func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) +
			", count(*) FROM flights" + wideWhere + " GROUP BY " + strings.Join(keys, ", ")
	}},
	{"union", func(w int) string { return wideMembers(w, "m") + " UNION " + wideMembers(w, "n") }},
	{"cte-twice", func(w int) string {
		return "WITH t AS (" + wideMembers(w/2, "m") + ") SELECT * FROM t a JOIN t b ON a.m1 = b.m1"
	}},
	{"members", func(w int) string { return wideMembers(w, "m") }},
}

// BenchmarkWideBind measures planning a statement w columns wide as the server plans it
// (query.Engine.Execute): parse and bind (PrepareWith, which binds once for the dataset
// schema), bind again (BindGeneral) and read every routed read's route (Routes). PostgreSQL
// plans a 1,600-column statement in milliseconds: cost here should grow about linearly in w.
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
					if bd.Plan != nil {
						if _, err := substrait.Routes(bd.Plan, cat, false); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
