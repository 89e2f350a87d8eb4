package substrait_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/scan/ops"
)

// bigListSQL is a routed read of flights filtered by id IN (n text constants) (or false: an OR
// of n equalities id = '…'); every other constant is an id of orBatch's rows.
func bigListSQL(n int, or bool) string {
	var b strings.Builder
	b.WriteString("SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND ")
	if !or {
		b.WriteString("id IN (")
	} else {
		b.WriteString("(")
	}
	for i := range n {
		if i > 0 {
			if or {
				b.WriteString(" OR ")
			} else {
				b.WriteString(", ")
			}
		}
		if or {
			b.WriteString("id = ")
		}
		fmt.Fprintf(&b, "'%d'", 2*i)
	}
	b.WriteString(")")
	return b.String()
}

// BenchmarkOrOfDistinctFields measures binding an OR of 8,000 equalities each of another JSON
// field (no two fold into one IN list): finding an equality's group costs one lookup, not a
// scan of the groups (20 s of planning before).
func BenchmarkOrOfDistinctFields(b *testing.B) {
	terms := make([]string, 8000)
	for i := range terms {
		terms[i] = fmt.Sprintf("value->>'f%d' = 'x'", i)
	}
	sql := "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND (" + strings.Join(terms, " OR ") + ")"
	b.ReportAllocs()
	for b.Loop() {
		orFilter(b, sql)
	}
}

// BenchmarkBigInList measures what a statement with a long IN list (in=…) or OR chain of
// equalities (or=…) of text constants costs from SQL text to a filtered batch: parsing,
// binding, compiling the filter and evaluating it over 8,192 rows. Generated statements
// (a BI tool's selection, an application's id list) reach 60,000 constants.
func BenchmarkBigInList(b *testing.B) {
	rec := orBatch(8192)
	defer rec.Release()
	for _, or := range []bool{false, true} {
		for _, n := range []int{1000, 10_000, 60_000} {
			name := fmt.Sprintf("in=%d", n)
			if or {
				name = fmt.Sprintf("or=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				sql := bigListSQL(n, or)
				b.ReportAllocs()
				for b.Loop() {
					p, cond := orFilter(b, sql)
					x, err := ops.Compile(cond, rec.Schema(), p.ExtensionRegistry())
					if err != nil {
						b.Fatal(err)
					}
					out, err := x.Eval(context.Background(), rec, nil)
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/element")
			})
		}
	}
}
