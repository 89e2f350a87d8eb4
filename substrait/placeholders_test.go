package substrait

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRewritePlaceholders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"none", `SELECT 1`, `SELECT 1`, 0},
		{"spaced", `a = ? AND b < ?`, `a =  $1  AND b <  $2 `, 2},
		{"glued equals", `channel_id=? AND x`, `channel_id= $1  AND x`, 1},
		{"glued gte", `timestamp>=?`, `timestamp>= $1 `, 1},
		{"glued lt before paren", `(timestamp<?)`, `(timestamp< $1 )`, 1},
		{"limit", `LIMIT ?`, `LIMIT  $1 `, 1},
		{"glued on the left", `?>timestamp AND ?<=x`, ` $1 >timestamp AND  $2 <=x`, 2},
		{"glued both sides", `a=? AND ?>b`, `a= $1  AND  $2 >b`, 2},
		{"fetch first", `FETCH FIRST ? ROWS ONLY`, `FETCH FIRST  $1  ROWS ONLY`, 1},
		{"between", `x BETWEEN ? AND ?`, `x BETWEEN  $1  AND  $2 `, 2},
		{"frame offset", `ROWS ? PRECEDING`, `ROWS  $1  PRECEDING`, 1},
		{"frame offsets", `RANGE BETWEEN ? PRECEDING AND ? FOLLOWING`, `RANGE BETWEEN  $1  PRECEDING AND  $2  FOLLOWING`, 2},
		{"groups frame offset", `GROUPS ? FOLLOWING`, `GROUPS  $1  FOLLOWING`, 1},
		{"like pattern before escape", `s LIKE ? ESCAPE '!' AND t NOT ILIKE ? ESCAPE ?`, `s LIKE  $1  ESCAPE '!' AND t NOT ILIKE  $2  ESCAPE  $3 `, 3},
		{"in list", `x IN (?,?)`, `x IN ( $1 , $2 )`, 2},
		{"cast", `CAST(? AS timestamptz)`, `CAST( $1  AS timestamptz)`, 1},
		{"typecast", `? ::timestamptz`, ` $1  ::timestamptz`, 1},
		{"string literal", `a = '?' AND b = ?`, `a = '?' AND b =  $1 `, 1},
		{"escape string", `a = E'\'?' AND b = ?`, `a = E'\'?' AND b =  $1 `, 1},
		{"dollar quoted", `a = $$?$$ AND b = ?`, `a = $$?$$ AND b =  $1 `, 1},
		{"tagged dollar quoted", `a = $x$ ? $x$ AND b = ?`, `a = $x$ ? $x$ AND b =  $1 `, 1},
		{"quoted identifier", `"?" = ?`, `"?" =  $1 `, 1},
		{"line comment", "a = ? -- why ?\n", "a =  $1  -- why ?\n", 1},
		{"block comment", `a /* ? */ = ?`, `a /* ? */ =  $1 `, 1},
		{"jsonb exists operator", `doc ? 'k' AND b = ?`, `doc ? 'k' AND b =  $1 `, 1},
		{"jsonb any operator", `doc ?| array['a'] AND b = ?`, `doc ?| array['a'] AND b =  $1 `, 1},
		{"jsonpath operator", `doc @? '$.a' AND b = ?`, `doc @? '$.a' AND b =  $1 `, 1},
		{"keyword column then operator", `value ? 'k'`, `value ? 'k'`, 0},
		{"only in literal", `a = '?'`, `a = '?'`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n, err := rewritePlaceholders(tt.in)
			if err != nil {
				t.Fatalf("rewritePlaceholders(%q): %v", tt.in, err)
			}
			if got != tt.want || n != tt.n {
				t.Errorf("rewritePlaceholders(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
			}
		})
	}
}

func TestRewritePlaceholdersErrors(t *testing.T) {
	t.Parallel()
	if _, _, err := rewritePlaceholders(`a = ? AND b = $2`); !errors.Is(err, ErrMixedPlaceholders) {
		t.Errorf("mixed: got %v, want ErrMixedPlaceholders", err)
	}
	_, _, err := rewritePlaceholders(`a = ? AND b = 'secret`)
	if code, _ := CodeOf(err); code != InvalidArgument {
		t.Fatalf("unterminated literal: got %v, want InvalidArgument", err)
	}
	// The client sees PostgreSQL's message near its own text; logs see the position only.
	var e *Error
	if !errors.As(err, &e) || e.Msg != `unterminated quoted string at or near "'secret" (position 15)` ||
		e.LogMessage() != "SQL syntax error at position 15" || e.SQLState != "42601" {
		t.Errorf("unterminated literal: %#v", e)
	}
}

// TestSyntaxErrorPositionAfterPlaceholders: the position of a syntax error after `?`
// placeholders refers to the client's text, although each `$n` the parser reads is longer
// than its `?` (twelve of them here, so two-digit ones too). The expected position is the
// 1-based character offset of the offending token in the client's text (PostgreSQL counts
// characters, not bytes: the 'é' before it is one).
func TestSyntaxErrorPositionAfterPlaceholders(t *testing.T) {
	t.Parallel()
	qs := strings.TrimSuffix(strings.Repeat("?,", 12), ",")
	for _, c := range []struct{ sql, at, msg string }{
		{`SELECT 'é', ? FROM t WHERE a IN (` + qs + `) AND b = ? FORM x`, "FORM", `syntax error at or near "FORM"`},
		{`SELECT ? + ? FROM t WHERE a IN (` + qs + `) AND b=? AND`, "", "syntax error at end of input"},
		// The error at a placeholder itself: at its `?`, named by the parameter it became.
		{`SELECT a FROM t WHERE a IN (` + qs + `) ?`, "", `syntax error at or near "$13"`},
		{`SELECT a FROM t WHERE a IN (` + qs + `) AND b = 'unterminated`, "'unterminated", `unterminated quoted string at or near "'unterminated"`},
	} {
		_, err := Prepare(c.sql, testCatalog(t))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want a syntax error", c.sql, err)
			continue
		}
		at := strings.Index(c.sql, c.at)
		switch {
		case c.at == "" && strings.HasSuffix(c.msg, "end of input"):
			at = len(c.sql)
		case c.at == "":
			at = strings.LastIndex(c.sql, "?")
		}
		pos := utf8.RuneCountInString(c.sql[:at]) + 1
		if !strings.HasSuffix(e.Msg, fmt.Sprintf(" (position %d)", pos)) || !strings.HasPrefix(e.Msg, c.msg) ||
			e.LogMessage() != fmt.Sprintf("SQL syntax error at position %d", pos) {
			t.Errorf("%s: %q (log %q), want %q at position %d", c.sql, e.Msg, e.LogMessage(), c.msg, pos)
		}
	}
}
