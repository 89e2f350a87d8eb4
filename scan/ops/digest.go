package ops

import (
	"crypto/sha256"
	"crypto/sha512"

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
