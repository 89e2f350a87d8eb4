package pgbytea

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// TestInOut: both input formats and the hex output, each expected value worked out by hand
// from byteain's rules (the package comment); TestInAsPostgres checks them against a server.
func TestInOut(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // Out of the value, or the error's SQLSTATE
	}{
		{`\x6162`, `\x6162`}, {`\x`, `\x`}, {`\xDEADbeef`, `\xdeadbeef`}, {"\\x 61\n62\t63\r", `\x616263`},
		{`\x616`, "22023"}, {`\x6g`, "22023"}, {`\x6 1`, "22023"}, {`\X61`, "22P02"},
		{`ab`, `\x6162`}, {``, `\x`}, {`a\\b`, `\x615c62`}, {`\141\142`, `\x6162`}, {`\000`, `\x00`}, {`\377`, `\xff`},
		{`\400`, "22P02"}, {`\18`, "22P02"}, {`\1`, "22P02"}, {`a\`, "22P02"}, {`\n`, "22P02"}, {`é`, `\xc3a9`},
	} {
		got, err := In(c.in)
		switch {
		case err != nil:
			if e, ok := err.(*Error); !ok || e.Code != c.want {
				t.Errorf("In(%q): %v, want %s", c.in, err, c.want)
			}
		case Out(got) != c.want:
			t.Errorf("In(%q) = %s, want %s", c.in, Out(got), c.want)
		}
	}
}

// FuzzIn: In never panics, fails only with 22P02 or 22023, reads Out's text back as the same
// bytes, and reads text without backslashes as its own bytes.
func FuzzIn(f *testing.F) {
	for _, s := range []string{`\x6162`, `\x 61 62`, `\x616`, `\xzz`, `a\\b`, `\141`, `\400`, `\`, ``, "abc", `\x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		b, err := In(s)
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Code != "22P02" && e.Code != "22023" {
				t.Fatalf("In(%q): %T %v", s, err, err)
			}
		}
		if !strings.Contains(s, `\`) && (err != nil || string(b) != s) {
			t.Fatalf("In(%q) = %q, %v", s, b, err)
		}
		back, err := In(Out([]byte(s)))
		if err != nil || !bytes.Equal(back, []byte(s)) {
			t.Fatalf("In(Out(%q)) = %q, %v", s, back, err)
		}
	})
}
