package ops_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// jsonbOrdered are documents in the order PostgreSQL 15 sorts them as jsonb (SELECT
// string_agg(d::jsonb::text, … ORDER BY d::jsonb) over them; e2e's TestJSONBOrderAsPostgres
// asks the server itself): the empty top-level array first, then null < string < number <
// boolean < array < object, arrays and objects by their length first.
var jsonbOrdered = []string{`[]`, `null`, `""`, `"a\u0001"`, `"aa"`, `"ab"`, `"b"`, `"é"`, `-1000`, `-1.5`, `-0.5`, `-0.001`,
	`-0.00000000000000000001`, `0`, `0.00000000000000000001`, `2`, `10`, `999.99`, `1000`, `123456789012345678901234567890`,
	`false`, `true`, `[null]`, `["x"]`, `[1]`, `[true]`, `[[]]`, `[[1]]`, `[{}]`, `[0, 0]`, `[1, "a"]`, `[1, 1]`, `[[], []]`,
	`{}`, `{"a": null}`, `{"a": "z"}`, `{"a": 1}`, `{"a": [1]}`, `{"a": {"b": 1}}`, `{"aa": 0}`, `{"b": 0}`, `{"a": 1, "b": 2}`}

// TestJSONBSortKeyOrder: jsonb_sortkey's keys of jsonbOrdered increase strictly; documents
// equal as jsonb (1.0 and 1, 0 and -0.0) have equal keys.
func TestJSONBSortKeyOrder(t *testing.T) {
	var prev []byte
	for i, doc := range jsonbOrdered {
		k, err := ops.JSONBSortKey([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			t.Errorf("%s sorts before %s", doc, jsonbOrdered[i-1])
		}
		prev = k
	}
	for a, b := range map[string]string{`1.0`: `1`, `-0.0`: `0`, `[1.50, {"a": 2e1}]`: `[1.5, {"a": 20}]`, `{"b":1,"a":2,"a":3}`: `{"a":3,"b":1}`, `1e-3`: `0.001`} {
		ka, err1 := ops.JSONBSortKey([]byte(a))
		kb, err2 := ops.JSONBSortKey([]byte(b))
		if err1 != nil || err2 != nil || !bytes.Equal(ka, kb) {
			t.Errorf("%s and %s: keys differ (%v, %v)", a, b, err1, err2)
		}
	}
}

// FuzzJSONBFunctions: json_strip_nulls of an arbitrary json document is JSON or a DataError;
// of arbitrary documents, jsonb_sortkey, @>, || and jsonb_pretty never
// panic and refuse what jsonb_in refuses with a DataError; two documents have equal sort keys
// exactly when jsonb equality's key (jsonb_key, written separately) is equal; a document
// contains itself; a || b and jsonb_pretty's text read back as jsonb.
func FuzzJSONBFunctions(f *testing.F) {
	for i := 0; i+1 < len(jsonbOrdered); i += 3 {
		f.Add([]byte(jsonbOrdered[i]), []byte(jsonbOrdered[i+1]))
	}
	f.Add([]byte(`{"a":1.0,"b":[1,2,{"c":null}]}`), []byte(`{"b":[{}],"a":1}`))
	f.Add([]byte(`"x"`), []byte(`["x"]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		fuzzcount.Add()
		// json_strip_nulls reads json (duplicates kept, \u0000 read): what it writes is JSON.
		if s, err := ops.JSONStripNulls(a); err == nil && !json.Valid(s) {
			t.Fatalf("json_strip_nulls(%q) = %q is not JSON", a, s)
		} else if de := (*ops.DataError)(nil); err != nil && !errors.As(err, &de) {
			t.Fatalf("json_strip_nulls(%q): %v is not a DataError", a, err)
		}
		ka, err := ops.JSONBSortKey(a)
		if err != nil {
			if de := (*ops.DataError)(nil); !errors.As(err, &de) {
				t.Fatalf("%q: %v is not a DataError", a, err)
			}
			return
		}
		kb, err := ops.JSONBSortKey(b)
		if err != nil {
			return
		}
		ea, err1 := ops.JSONBEqualKey(a)
		eb, err2 := ops.JSONBEqualKey(b)
		if err1 != nil || err2 != nil {
			t.Fatalf("%q, %q: jsonb_key refuses what jsonb_sortkey reads: %v, %v", a, b, err1, err2)
		}
		if bytes.Equal(ka, kb) != bytes.Equal(ea, eb) {
			t.Fatalf("%q, %q: equal sort keys %v, equal jsonb keys %v", a, b, bytes.Equal(ka, kb), bytes.Equal(ea, eb))
		}
		if in, err := ops.JSONBContains(a, a); err != nil || !in {
			t.Fatalf("%q does not contain itself: %v", a, err)
		}
		if _, err := ops.JSONBContains(a, b); err != nil {
			t.Fatalf("%q @> %q: %v", a, b, err)
		}
		c, err := ops.JSONBConcat(a, b)
		if err != nil {
			t.Fatalf("%q || %q: %v", a, b, err)
		}
		if again, err := ops.JSONBCanonical(c); err != nil || !bytes.Equal(again, c) {
			t.Fatalf("%q || %q = %s reads back as %s, %v", a, b, c, again, err)
		}
		p, err := ops.JSONBPretty(a)
		if err != nil {
			t.Fatalf("jsonb_pretty(%q): %v", a, err)
		}
		ca, _ := ops.JSONBCanonical(a)
		if again, err := ops.JSONBCanonical([]byte(p)); err != nil || !bytes.Equal(again, ca) {
			t.Fatalf("jsonb_pretty(%q) = %q reads back as %s, %v; want %s", a, p, again, err, ca)
		}
	})
}
