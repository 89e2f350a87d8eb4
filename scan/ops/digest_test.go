package ops

import (
	"strings"
	"testing"
)

// TestEncodeTextAsPostgres checks base64Lines and escapeEncode against PostgreSQL 15's encode
// of the same bytes (values read from psql; e2e's TestEncodeAsPostgres compares them live).
func TestEncodeTextAsPostgres(t *testing.T) {
	a := func(n int) []byte { return []byte(strings.Repeat("a", n)) }
	line := strings.Repeat("YWFh", 19) // 57 bytes of 'a': one full 76-character line
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{nil, ""},
		{[]byte("A"), "QQ=="},
		{a(57), line + "\n"},
		{a(58), line + "\nYQ=="},
		{a(56), strings.Repeat("YWFh", 18) + "YWE="},
		{a(114), line + "\n" + line + "\n"},
	} {
		if got := base64Lines(c.in); got != c.want {
			t.Errorf("base64Lines(%d bytes) = %q, PostgreSQL %q", len(c.in), got, c.want)
		}
	}
	if got, want := escapeEncode([]byte{0x00, 0x01, 0x0a, 0xff, 0x5c, 0x7e, 0x7f, 0x80}), "\\000\x01\n\\377\\\\~\x7f\\200"; got != want {
		t.Errorf("escapeEncode = %q, PostgreSQL %q", got, want)
	}
}
