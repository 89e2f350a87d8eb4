package substrait

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestCheckDepth: chains past maxChainDepth are refused before the parser builds them (25,000
// `+1` terms killed the process in pg_query's C code); long flat statements of the same size
// are not, and nothing shorter than the limit is scanned.
func TestCheckDepth(t *testing.T) {
	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	refused := map[string]string{
		"+ chain":              "SELECT 1" + rep("+1", 25000),
		"cast chain":           "SELECT 1" + rep("::int", 12000),
		"IS NULL chain":        "SELECT 1" + rep(" IS NULL", 12000),
		"UNION chain":          rep("SELECT 1, 2 UNION ", 12000) + "SELECT 1, 2",
		"JOIN chain":           "SELECT 1 FROM t" + rep(" JOIN t ON true", 12000),
		"chain through CASE":   "SELECT 1" + rep(" + CASE WHEN true THEN 1 END", 12000),
		"chain through parens": "SELECT 1" + rep("+(1)", 12000),
		"chain through a call": "SELECT 1" + rep("+f(1, 2)", 12000),
		"chain in a subscript": "SELECT a[1" + rep("+1", 11000) + "]",
		"chain of comparisons": "SELECT 1" + rep(" < 1", 11000),
		"nested and chained":   "SELECT " + rep("(1+", 2000) + "1" + rep("+1+1+1+1)", 2000),
	}
	for name, sql := range refused {
		err := CheckDepth(sql)
		var e *Error
		if !errors.As(err, &e) || e.SQLState != "54001" {
			t.Errorf("%s: %v, want 54001", name, err)
		}
		if _, err := parseStatement(sql); !errors.As(err, &e) || e.SQLState != "54001" {
			t.Errorf("%s: parseStatement: %v, want 54001", name, err)
		}
	}
	vals := make([]string, 30000)
	for i := range vals {
		vals[i] = "(-1, 'a'::text, CASE WHEN x > 1 THEN -2 ELSE 3 END)"
	}
	in := make([]string, 50000)
	for i := range in {
		in[i] = "-1"
	}
	allowed := map[string]string{
		"VALUES of negative numbers and casts": "SELECT * FROM (VALUES " + strings.Join(vals, ", ") + ") v(a, b, c)",
		"long IN list":                         "SELECT 1 WHERE x IN (" + strings.Join(in, ", ") + ")",
		"many ANDs":                            "SELECT 1 WHERE " + rep("x + 1 > 2 AND ", 8000) + "true",
		"long CASE":                            "SELECT CASE" + rep(" WHEN x = 1 THEN 'a'", 8000) + " END",
		"a chain of 4,000":                     "SELECT 1" + rep("+1", 4000),
	}
	for name, sql := range allowed {
		if err := CheckDepth(sql); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Sums of products of casts are as deep as their sums: PostgreSQL answers 4,000 terms
	// (its max_stack_depth stops 4,500), and so do we; past about 5,000 levels the decoder
	// of pg_query's tree refuses (54001), below the estimate's limit.
	products := func(n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = fmt.Sprintf("(%d.5)::float8 * 1.25::float8", i)
		}
		return "SELECT " + strings.Join(terms, " + ")
	}
	for _, n := range []int{2500, 4000} {
		if _, err := parseStatement(products(n)); err != nil {
			t.Errorf("%d products: %v", n, err)
		}
	}
	for name, sql := range map[string]string{
		"6,000 products":         products(6000),
		"6,000 CASEs in a chain": "SELECT 1" + rep(" + CASE WHEN true THEN 1 END", 6000),
	} {
		if err := CheckDepth(sql); err != nil {
			t.Errorf("%s: refused by the estimate (%v), which should leave it to the decoder", name, err)
		}
		var e *Error
		if _, err := parseStatement(sql); !errors.As(err, &e) || e.SQLState != "54001" {
			t.Errorf("%s: parseStatement: %v, want 54001", name, err)
		}
	}
	if err := CheckDepth("SELECT 1" + rep("+1", maxChainDepth/2-5)); err != nil {
		t.Errorf("a statement of fewer than %d bytes was refused: %v", maxChainDepth, err)
	}
}

// FuzzCheckDepth repeats a fragment of SQL past the size CheckDepth scans and parses what it
// lets through: its estimate must never let a statement reach the parser whose tree would
// overflow the C stack (the process would die here), and it must not panic on any text.
func FuzzCheckDepth(f *testing.F) {
	for _, s := range []string{"+1", "::int", " IS NULL", " UNION SELECT 1", " JOIN t ON true", "+(1)", "+CASE WHEN true THEN 1 END", "-1, ", "[1]", "(((", ")))", "'a'||", " AND x<1",
		"*1.5::float8+1", "::float8", " COLLATE \"C\"", ".a", "::numeric(10,2)", "-", " NOT x", "[1][1]", "+f(1)", " AT TIME ZONE 'UTC'", "::int[]"} {
		f.Add(s, uint16(30000))
	}
	f.Fuzz(func(t *testing.T, frag string, n uint16) {
		fuzzcount.Add()
		if frag == "" {
			return
		}
		sql := "SELECT 1" + strings.Repeat(frag, min(int(n), MaxSQLBytes/len(frag)))
		if err := CheckDepth(sql); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.SQLState != "54001" {
				t.Fatalf("CheckDepth: %v, want 54001", err)
			}
			return
		}
		_, _ = parseStatement(sql)
	})
}
