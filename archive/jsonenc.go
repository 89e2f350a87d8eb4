package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The helpers in this file reproduce the bytes that serde_json writes for the reference's types
// (compact output, fields in declaration order, Vec<u8> as an array of integers, chrono
// DateTime<Utc> as RFC 3339), and parse them as strictly as serde does where it matters:
// case-sensitive field names, no duplicate fields, integers only for integer fields.

// appendRFC3339 appends t in UTC the way chrono's serde serialises DateTime<Utc>:
// RFC 3339 with a "Z" suffix and SecondsFormat::AutoSi fractional seconds — none when the
// nanoseconds are zero, else 3, 6 or 9 digits, the fewest that are exact
// (2001-01-01T00:00:00Z, 2001-01-01T00:00:00.250Z, 2001-01-01T00:00:00.000001Z).
func appendRFC3339(dst []byte, t time.Time) []byte {
	t = t.UTC()
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		dst = appendFrac(dst, ns/1_000_000, 3)
	case ns%1_000 == 0:
		dst = appendFrac(dst, ns/1_000, 6)
	default:
		dst = appendFrac(dst, ns, 9)
	}
	return append(dst, 'Z')
}

func appendFrac(dst []byte, v, digits int) []byte {
	dst = append(dst, '.')
	s := strconv.Itoa(v)
	for i := len(s); i < digits; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// parseRFC3339 parses an RFC 3339 timestamp with any offset and 0–9 fractional digits, as
// chrono's DateTime<Utc> deserialiser accepts it (a lowercase 't'/'z' or a space separator
// included), and returns it in UTC.
func parseRFC3339(s string) (time.Time, error) {
	if len(s) > 10 && (s[10] == 't' || s[10] == ' ') {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// appendJSONString appends s as a JSON string escaped exactly as serde_json does: '"' and '\'
// escaped, \b \f \n \r \t in short form, other control characters as \u00xx (lowercase hex),
// everything else (including DEL and non-ASCII) verbatim. s must be valid UTF-8.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendByteArray appends p as a JSON array of integers (serde's Vec<u8>).
func appendByteArray(dst []byte, p []byte) []byte {
	dst = append(dst, '[')
	for i, b := range p {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(dst, uint64(b), 10)
	}
	return append(dst, ']')
}

var errByteArray = errors.New("not an array of byte integers")

// parseByteArray parses a JSON array of integers 0–255 (serde's Vec<u8>), tolerating JSON
// whitespace. It is the hot loop of JSON payload decoding, hence hand-written.
func parseByteArray(raw []byte) ([]byte, error) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errByteArray
	}
	out := make([]byte, 0, len(raw)/3)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		if skipSpace(raw, i+1) != len(raw) {
			return nil, errByteArray
		}
		return out, nil
	}
	for {
		i = skipSpace(raw, i)
		start := i
		v := 0
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			v = v*10 + int(raw[i]-'0')
			if v > 255 {
				return nil, errByteArray
			}
			i++
		}
		// JSON forbids leading zeros ("01"); an empty run is not a number.
		if i == start || (raw[start] == '0' && i-start > 1) {
			return nil, errByteArray
		}
		out = append(out, byte(v))
		i = skipSpace(raw, i)
		if i >= len(raw) {
			return nil, errByteArray
		}
		switch raw[i] {
		case ',':
			i++
		case ']':
			if skipSpace(raw, i+1) != len(raw) {
				return nil, errByteArray
			}
			return out, nil
		default:
			return nil, errByteArray
		}
	}
}

func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

// decodeObject decodes one JSON object into its members, keyed case-sensitively, rejecting
// duplicate names and trailing data (serde's derive rejects duplicates; encoding/json would
// silently keep the last one and match names case-insensitively).
func decodeObject(raw []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("object member name is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("duplicate field %q", name)
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON object")
	}
	return out, nil
}

// isNull reports whether a raw member is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

// decodeString decodes a required JSON string that must be valid UTF-8.
func decodeString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", errors.New("missing string")
	}
	if !utf8.Valid(raw) {
		return "", errors.New("invalid UTF-8 in string")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// decodeUint decodes a required unsigned integer no larger than max.
func decodeUint(raw json.RawMessage, max uint64) (uint64, error) {
	if isNull(raw) {
		return 0, errors.New("missing integer")
	}
	s := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max || (len(s) > 1 && s[0] == '0') {
		return 0, errors.New("not an unsigned integer in range")
	}
	return v, nil
}
