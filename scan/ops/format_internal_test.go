package ops

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzFormatText: format's reading of its format string (a client's text) never panics; it
// answers text or a DataError with PostgreSQL's SQLSTATE, and a string without % is itself.
func FuzzFormatText(f *testing.F) {
	for _, s := range []string{"Hello %s", "%1$s %1$I %L", "|%-10s|%10s|", "%%", "abc %", "%0$s", "%x", "%*s", "%2147483648$s", "%3$s %s"} {
		f.Add(s, "a", true)
	}
	f.Fuzz(func(t *testing.T, format, arg string, null bool) {
		fuzzcount.Add()
		if len(format) > 64 {
			return // widths are bounded by maxTextBytes; keep each run small
		}
		vals := []*string{&arg, &arg, nil}
		if null {
			vals[1] = nil
		}
		out, err := formatText(nil, format, vals)
		var de *DataError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("format(%q): %v is not a DataError", format, err)
		}
		if err == nil && !strings.Contains(format, "%") && out != format {
			t.Fatalf("format(%q) = %q", format, out)
		}
		if err == nil && utf8.ValidString(format) && utf8.ValidString(arg) && !utf8.ValidString(out) {
			t.Fatalf("format(%q) = %q is not UTF-8", format, out)
		}
	})
}
