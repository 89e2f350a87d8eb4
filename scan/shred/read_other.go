//go:build !unix

package shred

import (
	"errors"
	"io"
	"os"
)

// readFull reads the first len(dst) bytes of the file at path into dst (readAt from offset 0).
func readFull(path string, dst []byte) error {
	return readAt(path, []span{{0, 0, len(dst)}}, dst)
}

// span is a run of bytes of a file (from its offset at) read into dst[to:to+n].
type span struct{ at, to, n int }

// readAt reads each span of the file at path into dst. Errors: the file system's,
// io.ErrUnexpectedEOF for a file that ends before a span does.
func readAt(path string, spans []span, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, s := range spans {
		if _, err := f.ReadAt(dst[s.to:s.to+s.n], int64(s.at)); err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}
