package ops_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestJSONBCanonical: jsonb_out's text of documents whose answers PostgreSQL 15 gave
// (SELECT doc::jsonb::text; e2e's TestJSONBAsPostgres asks the server itself).
func TestJSONBCanonical(t *testing.T) {
	for doc, want := range map[string]string{
		`{"b":1, "a":2, "a":3}`: `{"a": 3, "b": 1}`,
		`[1, 2.50, 1e2]`:        `[1, 2.50, 100]`,
		`[1.0, -0, -0.0, 0.10e1, 1.5e-3, 1E+2, 12.500e-1, -1e-2, 1e20, 0e5]`: `[1.0, 0, 0.0, 1.0, 0.0015, 100, 1.2500, -0.01, 100000000000000000000, 0]`,
		`{"aa":1,"b":{"z":[],"y":{}},"":null, "c": "x\u00e9\n\u0001\"\\\/"}`: `{"": null, "b": {"y": {}, "z": []}, "c": "xé\n\u0001\"\\/", "aa": 1}`,
		" \t\"x\" ": `"x"`,
		`true`:      `true`,
	} {
		got, err := ops.JSONBCanonical([]byte(doc))
		if err != nil || string(got) != want {
			t.Errorf("%s: %s, %v; want %s", doc, got, err, want)
		}
	}
	for doc, state := range map[string]string{`{"a": }`: "22P02", `"\u0000"`: "22P05", "\"\xff\"": "22021", `1e1001`: "0A000", `[1] x`: "22P02"} {
		_, err := ops.JSONBCanonical([]byte(doc))
		if de := (*ops.DataError)(nil); !errors.As(err, &de) || de.Code != state {
			t.Errorf("%q: %v, want SQLSTATE %s", doc, err, state)
		}
	}
}

// FuzzJSONBCanonical: jsonb_in of arbitrary bytes never panics; a document it reads is JSON
// (encoding/json's validity), and its text is JSON read back to itself (the canonical form is
// a fixed point); a document it refuses gets a DataError.
func FuzzJSONBCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1, "a":2, "a":3}`, `[1, 2.50, 1e2, -0.0e-3]`, `{"k":"\u00e9\ud83d\ude00","k":[null,true,-1e3]}`,
		`  [ "x" , {"":{}} ]  `, `{"a":1}{"b":2}`, `"\u0000"`, `1e-1000`, `{"\n":{"\u001f":[[[]]]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		fuzzcount.Add()
		out, err := ops.JSONBCanonical(doc)
		if err != nil {
			if de := (*ops.DataError)(nil); !errors.As(err, &de) {
				t.Fatalf("%q: %v is not a DataError", doc, err)
			}
			return
		}
		if !json.Valid(doc) {
			t.Fatalf("%q is not JSON but reads as jsonb %s", doc, out)
		}
		if !json.Valid(out) {
			t.Fatalf("%q: its jsonb text %s is not JSON", doc, out)
		}
		again, err := ops.JSONBCanonical(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("%q: its jsonb text %s reads back as %s, %v", doc, out, again, err)
		}
	})
}
