package substrait

import (
	"errors"
	"strings"
	"testing"
)

func TestSQLTextLimits(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	base := `SELECT id FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01T00:00:00Z' AND timestamp < '2026-02-01T00:00:00Z' ORDER BY timestamp`
	cases := map[string]*Error{
		base + "\x00 LIMIT 1":  ErrNulInQuery, // the C parser would stop at the NUL and drop the LIMIT
		base + " LIMIT 1 \xff": ErrInvalidUTF8Query,
		base + " /*" + strings.Repeat("x", MaxSQLBytes) + "*/": ErrQueryTooLong,
		"":      ErrEmptyQuery,
		"  ;  ": ErrEmptyQuery,
	}
	for sql, want := range cases {
		_, err := Prepare(sql, cat)
		if !errors.Is(err, want) {
			t.Errorf("%.60q: %v, want %v", sql, err, want)
		}
	}
	if _, err := Prepare(strings.Replace(base, "messages", "public.messages", 1), cat); err != nil {
		t.Errorf("public.messages: %v", err)
	}
}
