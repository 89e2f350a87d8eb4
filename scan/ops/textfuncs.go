package ops

import (
	"crypto/md5"
	"encoding/hex"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// More of PostgreSQL's string functions (PostgreSQL 15, "String Functions and Operators"):
//
//	md5(s)                       the MD5 digest of s's bytes (text or bytea) as 32 lower-case
//	                             hexadecimal digits; strict
//	translate(s, from, to)       each character of s found in from replaced by the character
//	                             at the same position of to (the first occurrence in from
//	                             counts), or removed when to is shorter; strict
func init() {
	ownFunctions["md5"] = stringMap(md5Hex)
	ownFunctions["translate"] = text3Kernel(translateText)
}

// md5Hex is the MD5 digest of s's bytes as lower-case hexadecimal digits.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// translateText is PostgreSQL's translate of s: characters of from become to's at the same
// position, or are removed past to's end.
func translateText(s, from, to string) string {
	if from == "" {
		return s
	}
	f, t := []rune(from), []rune(to)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		k := -1
		for j, c := range f {
			if c == r {
				k = j
				break
			}
		}
		switch {
		case k < 0:
			b.WriteRune(r)
		case k < len(t):
			b.WriteRune(t[k])
		}
	}
	return b.String()
}

// json_typeof(doc) is PostgreSQL's json_typeof: the kind of the document's top-level value as
// text (object, array, string, number, boolean, null); strict. The document is validated as
// PostgreSQL's json input validates it (jsonScanner; a document that is not JSON is 22P02);
// a \u0000 escape, which json keeps, does not stop it.
func init() { ownFunctions["json_typeof"] = jsonTypeofKernel }

var jsonKindNames = [...]string{jNull: "null", jString: "string", jStringEsc: "string", jNumber: "number",
	jTrue: "boolean", jFalse: "boolean", jObject: "object", jArray: "array"}

func jsonTypeofKernel(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		d, _ := asTexts(args[0])
		var s jsonScanner
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			doc := d.ValueBytes(i)
			kind, st := s.scanDoc(doc, nil, nil)
			if st == docNulEscape {
				kind = firstJSONKind(doc)
			} else if err := st.err(); err != nil {
				return "", false, err
			}
			return jsonKindNames[kind], true, nil
		})
	}
	return nil
}

// firstJSONKind is the kind of a valid document's value read from its first byte.
func firstJSONKind(doc []byte) jsonKind {
	for _, c := range doc {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return jObject
		case '[':
			return jArray
		case '"':
			return jString
		case 't':
			return jTrue
		case 'f':
			return jFalse
		case 'n':
			return jNull
		}
		return jNumber
	}
	return jNull
}
