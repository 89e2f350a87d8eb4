package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
)

// FuzzRowStatement: the SQLite row-aggregate statement is built from a query's JSON keys and
// constants (outside input). For any key and text constant, renderRows either declines
// (routing.ErrNoAggregate: an empty key, or one holding '"', '\' or a control byte) or renders
// one statement SQLite prepares whose constants travel only as parameters (as many as its
// ?n placeholders beyond the bucket's five), and whose JSON path for the key reads back, from
// a document holding that key alone, exactly that key's value.
func FuzzRowStatement(f *testing.F) {
	f.Add("delay", "JFK", int64(60))
	f.Add(`de"lay`, `'; DROP TABLE pulpitum_v4_records; --`, int64(-1))
	f.Add("", "x", int64(0))
	f.Add("a.b[0]", "?6", int64(1<<40))
	f.Add("a\x00b", `\`, int64(-1<<63))
	f.Add("café $", "'", int64(7))
	ctx := context.Background()
	s, err := Open(ctx, Config{Path: filepath.Join(f.TempDir(), "hot.db")})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
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
		st, err := renderRows(q)
		bad := key == "" || strings.ContainsAny(key, "\"\\") || strings.IndexFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
		if bad {
			if !errors.Is(err, routing.ErrNoAggregate) {
				t.Fatalf("key %q: %v, want ErrNoAggregate", key, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		for i := 6; i <= 5+len(st.args); i++ {
			if !strings.Contains(st.sql, "?"+itoa(i)) {
				t.Fatalf("parameter ?%d unused:\n%s", i, st.sql)
			}
		}
		if strings.Contains(st.sql, "?"+itoa(6+len(st.args))) {
			t.Fatalf("a placeholder beyond the %d parameters:\n%s", len(st.args), st.sql)
		}
		// Constants travel only as parameters: another text and number render the same SQL.
		other := q
		other.Filter = []routing.HotExpr{
			{Op: routing.HotEq, Args: []routing.HotExpr{field, {Op: routing.HotText, Text: "x"}}},
			{Op: routing.HotGt, Args: []routing.HotExpr{cast, {Op: routing.HotInt, Int: 0, IntBits: 64}}},
		}
		if st2, err := renderRows(other); err != nil || st2.sql != st.sql {
			t.Fatalf("text %q and %d render another statement than constants x and 0 (%v):\n%s", text, n, err, st.sql)
		}
		stmt, err := s.r.PrepareContext(ctx, st.sql)
		if err != nil {
			t.Fatalf("key %q: SQLite does not prepare the statement: %v\n%s", key, err, st.sql)
		}
		_ = stmt.Close()
		var got string
		if err := s.r.QueryRowContext(ctx, `SELECT json_extract(json_object(?1, 'v'), ?2)`, key, st.args[0]).Scan(&got); err != nil || got != "v" {
			t.Fatalf("key %q as the path %v reads %q, %v", key, st.args[0], got, err)
		}
	})
}

func itoa(i int) string { return strconv.Itoa(i) }
