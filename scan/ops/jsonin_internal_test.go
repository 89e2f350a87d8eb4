package ops

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzJSONIn: json_in's validation (jsonScanner.lax) of any UTF-8 text accepts exactly what
// Go's encoding/json.Valid accepts — RFC 8259's grammar, a \u escape's four hexadecimal digits
// and nothing more (a lone surrogate and \u0000 are valid json values, as PostgreSQL's json_in
// keeps them) — and the strict scanner of -> and ->> accepts no document lax refuses.
func FuzzJSONIn(f *testing.F) {
	for _, d := range []string{`"\ud800"`, `"\u0000"`, `"\u00zz"`, `ab`, `{"a":1`, ``, `NaN`, `01`, ` [1, 2 ] `,
		`{"a":1, "a":2}`, `"\udc00\ud800"`, `[-0, 1e5, 1E+2, 0.5e-1]`, "\"\t\"", `{"a":"0123456789abcdefg"}`} {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fuzzcount.Add()
		if !utf8.Valid(doc) {
			return // Go's json.Valid does not check UTF-8; scanDoc answers docBadEncoding
		}
		lax := jsonScanner{lax: true}
		_, st := lax.scanDoc(doc, nil, nil)
		if got, want := st == docOK, json.Valid(doc); got != want {
			t.Fatalf("json_in of %q: valid %v (%d), encoding/json %v", doc, got, st, want)
		}
		var strict jsonScanner
		if _, sst := strict.scanDoc(doc, nil, nil); sst == docOK && st != docOK {
			t.Fatalf("%q: the strict scanner accepts what json_in refuses", doc)
		}
	})
}
