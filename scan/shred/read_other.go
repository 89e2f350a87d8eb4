//go:build !unix

package shred

import (
	"io"
	"os"
)

// readFull reads the first len(dst) bytes of the file at path into dst. Errors: the file
// system's, io.ErrUnexpectedEOF for a shorter file.
func readFull(path string, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.ReadFull(f, dst); err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}
