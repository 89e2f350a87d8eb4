package ops

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// PostgreSQL's sha224(bytea), sha256, sha384 and sha512, strict: the SHA-2 digest (FIPS 180-4)
// of the value's bytes, as bytea (binary) of 28, 32, 48 or 64 bytes.
func init() {
	for name, sum := range map[string]func([]byte) []byte{
		"sha224": func(b []byte) []byte { s := sha256.Sum224(b); return s[:] },
		"sha256": func(b []byte) []byte { s := sha256.Sum256(b); return s[:] },
		"sha384": func(b []byte) []byte { s := sha512.Sum384(b); return s[:] },
		"sha512": func(b []byte) []byte { s := sha512.Sum512(b); return s[:] },
	} {
		ownFunctions[name] = digestKernel(sum)
	}
	ownFunctions["encode"] = encodeKernel
}

func digestKernel(sum func([]byte) []byte) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 1, 1, 0); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.Binary
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			return mapRows[[]byte](array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary), rows, args, func(i int) ([]byte, bool, error) {
				return sum(s.ValueBytes(i)), true, nil
			})
		}
		return nil
	}
}

// encodeKernel is PostgreSQL's encode(bytea, format) (binary_encode), the format an enumeration
// first (lowercased by the binder): "hex" (lowercase digits), "base64" (RFC 4648's alphabet
// with padding, a newline after every 76 characters, the last full line's too, as
// pg_base64_encode writes them) or "escape" (esc_enc: a zero byte as \000, a backslash
// doubled, bytes from 0x80 as \ooo, others as they are). Another format is the row's 22023
// "unrecognized encoding".
func encodeKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.args[0] != nil {
		return errors.New("encode takes the format as an enumeration first")
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	format := n.enums[0]
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[1])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			b := s.ValueBytes(i)
			switch format {
			case "hex":
				return hex.EncodeToString(b), true, nil
			case "base64":
				return base64Lines(b), true, nil
			case "escape":
				return escapeEncode(b), true, nil
			}
			return "", false, &DataError{Code: "22023", Msg: fmt.Sprintf("unrecognized encoding: %q", format)}
		})
	}
	return nil
}

// base64Lines is pg_base64_encode's text of b: a newline after every 76 characters written
// by a full three-byte group (so after the last line when it is full and b's length is a
// multiple of 3), none after a final padded group.
func base64Lines(b []byte) string {
	e := base64.StdEncoding.EncodeToString(b)
	full := len(b) / 3 * 4 // characters written by full groups
	var sb strings.Builder
	for i := 0; i < len(e); i += 76 {
		end := min(i+76, len(e))
		sb.WriteString(e[i:end])
		if end-i == 76 && end <= full {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// escapeEncode is esc_enc's text of b.
func escapeEncode(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == 0:
			sb.WriteString(`\000`)
		case c == '\\':
			sb.WriteString(`\\`)
		case c >= 0x80:
			fmt.Fprintf(&sb, `\%03o`, c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
