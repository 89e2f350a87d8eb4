package cockroach

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
)

// FuzzRowStatement: the row-aggregate statement is built from a query's JSON keys and
// constants (outside input). For any key and text constant, renderRows either declines
// (routing.ErrNoAggregate: a key holding NUL) or renders one statement PostgreSQL's grammar
// parses, whose constants and key travel only as parameters (their count matches the $n
// placeholders; the key is a parameter, exactly).
func FuzzRowStatement(f *testing.F) {
	f.Add("delay", "JFK", int64(60))
	f.Add(`de"lay`, `'; DROP TABLE pulpitum_v4_records; --`, int64(-1))
	f.Add("", "x", int64(0))
	f.Add(strings.Repeat("k", 64), "$1", int64(1<<40))
	f.Add("a\x00b", `\`, int64(-1<<63))
	f.Fuzz(func(t *testing.T, key, text string, n int64) {
		fuzzcount.Add()
		field := routing.HotExpr{Op: routing.HotField, Key: key}
		cast := routing.HotExpr{Op: routing.HotInt8, Args: []routing.HotExpr{field}}
		q := routing.RowAggregate{
			Filter: []routing.HotExpr{
				{Op: routing.HotEq, Args: []routing.HotExpr{field, {Op: routing.HotText, Text: text}}},
				{Op: routing.HotGt, Args: []routing.HotExpr{cast, {Op: routing.HotInt, Int: n, IntBits: 64}}},
			},
			Groups: []routing.HotExpr{field}, Grouped: true,
			Measures: []routing.RowMeasure{{Func: routing.RowCountStar}, {Func: routing.RowSum, Arg: &cast}},
			Schema: arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
				{Name: "n", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: &arrow.Decimal128Type{Precision: 38}, Nullable: true}}, nil),
		}
		st, err := renderRows("t", q, n%2 == 0)
		bad := strings.ContainsRune(key, 0)
		if bad {
			if !errors.Is(err, routing.ErrNoAggregate) {
				t.Fatalf("key %q: %v, want ErrNoAggregate", key, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		if !utf8.ValidString(key) {
			return // the server refuses it (a data exception, which declines the bucket)
		}
		if _, err := pg_query.Parse(st.sql); err != nil {
			t.Fatalf("key %q: the statement does not parse: %v\n%s", key, err, st.sql)
		}
		for i := 1; i <= len(st.args); i++ {
			if !strings.Contains(st.sql, "$"+itoa(i)+"::") && i > 5 {
				t.Fatalf("parameter $%d unused:\n%s", i, st.sql)
			}
		}
		if strings.Contains(st.sql, "$"+itoa(len(st.args)+1)) {
			t.Fatalf("a placeholder beyond the %d parameters:\n%s", len(st.args), st.sql)
		}
		if len(st.args) < 6 || st.args[5] != key {
			t.Fatalf("key %q: not the first parameter after the buckets' (%q)", key, st.args)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
