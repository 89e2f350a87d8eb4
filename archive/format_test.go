package archive

import (
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// The reference's own key-layout examples (docs/pulpitum-v4.md §1.5 and the reference
// adapter's tests).
func TestKeyLayout(t *testing.T) {
	t.Parallel()
	b := routing.BucketFor("test-table", []byte("general"), routing.CalendarYearUTC, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	d := strings.Repeat("a", 64)
	cases := []struct{ got, want string }{
		{PayloadKey("archives", b, -1, d, FormatJSON), "archives/746573742d7461626c65/67656e6572616c/796561723a32303234/records-" + d + ".json"},
		{ManifestKey("archives", b, -1, d), "archives/746573742d7461626c65/67656e6572616c/796561723a32303234/manifest-" + d + ".json"},
		{PayloadKey("/archives/", b, 7, d, FormatParquet), "archives/746573742d7461626c65/67656e6572616c/796561723a32303234/generation-7/records-" + d + ".parquet"},
		{ManifestKey("archives", b, 7, d), "archives/746573742d7461626c65/67656e6572616c/796561723a32303234/generation-7/manifest-" + d + ".json"},
	}
	bin := b
	bin.PartitionKey = []byte{0x00, 0xff, '/'}
	cases = append(cases, struct{ got, want string }{PayloadKey("archives", bin, -1, d, FormatJSON), "archives/746573742d7461626c65/00ff2f/796561723a32303234/records-" + d + ".json"})
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("key = %q, want %q", c.got, c.want)
		}
	}
}

func TestManifestKeyDigest(t *testing.T) {
	t.Parallel()
	d := strings.Repeat("0f", 32)
	for _, c := range []struct {
		key     string
		digest  string
		has     bool
		invalid bool
	}{
		{"p/a/b/c/manifest-" + d + ".json", d, true, false},
		{"manifest-" + d + ".json", d, true, false},
		{"p/a/b/c/manifest-abc.json", "", false, true},
		{"p/a/b/c/manifest-" + strings.Repeat("g", 64) + ".json", "", false, true},
		{"p/a/b/c/legacy.json", "", false, false},
		{"p/a/b/c/manifest-" + d + ".txt", "", false, false},
	} {
		got, has, err := manifestKeyDigest(c.key)
		if got != c.digest || has != c.has || (err != nil) != c.invalid {
			t.Errorf("manifestKeyDigest(%q) = %q, %v, %v", c.key, got, has, err)
		}
		if c.invalid && err != ErrManifestKeyDigest {
			t.Errorf("manifestKeyDigest(%q) error = %v, want ErrManifestKeyDigest", c.key, err)
		}
	}
}

// chrono serialises DateTime<Utc> with SecondsFormat::AutoSi and a Z suffix.
func TestRFC3339AutoSi(t *testing.T) {
	t.Parallel()
	base := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{base, "2001-01-01T00:00:00Z"},
		{base.Add(250 * time.Millisecond), "2001-01-01T00:00:00.250Z"},
		{base.Add(time.Microsecond), "2001-01-01T00:00:00.000001Z"},
		{base.Add(123456 * time.Microsecond), "2001-01-01T00:00:00.123456Z"},
		{base.Add(1), "2001-01-01T00:00:00.000000001Z"},
		{time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, time.FixedZone("x", 3600)), "2024-02-29T22:59:59.999999999Z"},
	} {
		got := string(appendRFC3339(nil, c.t))
		if got != c.want {
			t.Errorf("appendRFC3339(%v) = %q, want %q", c.t, got, c.want)
		}
		back, err := parseRFC3339(got)
		if err != nil || !back.Equal(c.t) {
			t.Errorf("parseRFC3339(%q) = %v, %v", got, back, err)
		}
	}
	for _, s := range []string{"2001-01-01T01:00:00+01:00", "2001-01-01 00:00:00Z", "2001-01-01t00:00:00z", "2001-01-01T00:00:00.0Z"} {
		got, err := parseRFC3339(s)
		if err != nil || !got.Equal(base) {
			t.Errorf("parseRFC3339(%q) = %v, %v; want %v", s, got, err, base)
		}
	}
}

// The JSON payload bytes are those serde_json writes for the reference's records.
func TestJSONPayloadBytes(t *testing.T) {
	t.Parallel()
	recs := []routing.Record{
		{PartitionKey: []byte("general"), EventTime: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), SortKey: []byte{0, 0xff}, Value: []byte{0, 1, 2}},
		{PartitionKey: []byte("general"), EventTime: time.Date(2024, 1, 2, 0, 0, 0, 1000, time.UTC), SortKey: []byte("second"), Value: []byte{}},
	}
	want := `[{"partition_key":[103,101,110,101,114,97,108],"event_time":"2024-01-01T00:00:00Z","sort_key":[0,255],"value":[0,1,2]},` +
		`{"partition_key":[103,101,110,101,114,97,108],"event_time":"2024-01-02T00:00:00.000001Z","sort_key":[115,101,99,111,110,100],"value":[]}]`
	got := encodeJSONPayload(recs)
	if string(got) != want {
		t.Fatalf("payload:\n got %s\nwant %s", got, want)
	}
	back, err := decodeJSONPayload(got)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "decoded", back, recs)
	// Other valid spellings take the general decoder and give the same records.
	spaced := `[ { "value" : [0, 1, 2], "extra": {"x": [1]}, "sort_key": [0,255], "event_time": "2024-01-01T01:00:00+01:00",` +
		` "partition_key": [103,101,110,101,114,97,108] } ]`
	back, err = decodeJSONPayload([]byte(spaced))
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "spaced", back, recs[:1])
	for _, bad := range []string{
		``, `{}`, `[{"partition_key":[1],"event_time":"2024-01-01T00:00:00Z","sort_key":[1]}]`,
		`[{"partition_key":[256],"event_time":"2024-01-01T00:00:00Z","sort_key":[1],"value":[]}]`,
		`[{"partition_key":[1.0],"event_time":"2024-01-01T00:00:00Z","sort_key":[1],"value":[]}]`,
		`[{"partition_key":[1],"event_time":"yesterday","sort_key":[1],"value":[]}]`,
		`[{"partition_key":"AQ==","event_time":"2024-01-01T00:00:00Z","sort_key":[1],"value":[]}]`,
	} {
		if _, err := decodeJSONPayload([]byte(bad)); err != ErrPayloadDecode {
			t.Errorf("decodeJSONPayload(%s) error = %v, want ErrPayloadDecode", bad, err)
		}
	}
}

// The manifest bytes are those serde_json writes for the reference's ArchiveManifest.
func TestManifestBytes(t *testing.T) {
	t.Parallel()
	b := routing.BucketFor("test-table", []byte("gen\"al"), routing.CalendarMonthUTC, time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC))
	m := &Manifest{
		Version: 4, Format: FormatParquet, SchemaVersion: 2, Bucket: b, Generation: 7,
		PayloadKey: "archives/x/records-ab.parquet", RecordCount: 2, PayloadBytes: 1234,
		SHA256: "ab", ClusteringKey: clusteringKey,
	}
	want := `{"version":4,"format":"parquet","schema_version":2,"bucket":{"table_id":"test-table",` +
		`"partition_key":[103,101,110,34,97,108],"strategy":"calendar_month_utc","key":"month:2024-02",` +
		`"start":"2024-02-01T00:00:00Z","end":"2024-03-01T00:00:00Z"},"generation":7,` +
		`"payload_key":"archives/x/records-ab.parquet","record_count":2,"payload_bytes":1234,"sha256":"ab",` +
		`"clustering_key":["event_time","sort_key"]}`
	got, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("manifest:\n got %s\nwant %s", got, want)
	}
	back, err := ParseManifest(got)
	if err != nil || !back.Equal(m) {
		t.Fatalf("ParseManifest = %+v, %v", back, err)
	}
	m.Generation = -1
	got, _ = m.MarshalJSON()
	if !strings.Contains(string(got), `"generation":null,`) {
		t.Fatalf("null generation not written: %s", got)
	}
	if back, err := ParseManifest(got); err != nil || back.Generation != -1 {
		t.Fatalf("ParseManifest(null generation) = %+v, %v", back, err)
	}
	// serde_json string escaping: control characters as \u00xx, DEL and non-ASCII verbatim.
	if got := string(appendJSONString(nil, "a\x01\b\t\n\f\r\"\\/\x7fé")); got != `"a\u0001\b\t\n\f\r\"\\/`+"\x7fé"+`"` {
		t.Fatalf("appendJSONString = %s", got)
	}
}

func TestParseManifestStrictness(t *testing.T) {
	t.Parallel()
	b := routing.BucketFor("t", []byte{1}, routing.CalendarDayUTC, time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC))
	m := &Manifest{Version: 4, Format: FormatJSON, SchemaVersion: 2, Bucket: b, Generation: 1, PayloadKey: "k",
		RecordCount: 1, PayloadBytes: 2, SHA256: "s", ClusteringKey: clusteringKey}
	good, _ := m.MarshalJSON()
	replace := func(old, new string) string { return strings.Replace(string(good), old, new, 1) }
	for _, c := range []struct {
		name, body string
		want       error
	}{
		{"unknown field ignored", replace(`{"version":4`, `{"later":{"a":[1]},"version":4`), nil},
		{"missing field", replace(`"record_count":1,`, ``), ErrManifestDecode},
		{"null field", replace(`"record_count":1`, `"record_count":null`), ErrManifestDecode},
		{"duplicate field", replace(`"record_count":1`, `"record_count":1,"record_count":1`), ErrManifestDecode},
		{"case-variant name", replace(`"version"`, `"Version"`), ErrManifestDecode},
		{"negative count", replace(`"record_count":1`, `"record_count":-1`), ErrManifestDecode},
		{"fractional version", replace(`"version":4`, `"version":4.0`), ErrManifestDecode},
		{"byte out of range", replace(`"partition_key":[1]`, `"partition_key":[300]`), ErrManifestDecode},
		{"unknown strategy", replace(`calendar_day_utc`, `calendar_week_utc`), ErrManifestDecode},
		{"blank bucket key", replace(`"key":"day:2024-02-03"`, `"key":" "`), ErrManifestDecode},
		{"bad time", replace(`"start":"2024-02-03T00:00:00Z"`, `"start":"2024-02-03"`), ErrManifestDecode},
		{"unknown format", replace(`"format":"json"`, `"format":"avro"`), ErrFormat},
		{"not an object", `[1]`, ErrManifestDecode},
		{"trailing data", string(good) + `{}`, ErrManifestDecode},
	} {
		got, err := ParseManifest([]byte(c.body))
		if err != c.want {
			t.Errorf("%s: ParseManifest error = %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && (got == nil || !got.Equal(m)) {
			t.Errorf("%s: ParseManifest = %+v", c.name, got)
		}
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Format{"json": FormatJSON, " PARQUET ": FormatParquet, "Json": FormatJSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("ndjson"); err == nil {
		t.Error("ParseFormat(ndjson) succeeded")
	}
}
