//go:build unix

package shred

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// readFull reads the first len(dst) bytes of the file at path into dst through the open, read
// and close system calls alone: os.Open also tries to register the file with the runtime's
// poller (one more system call, refused for a regular file) and sets a cleanup on the
// os.File, which cost a warm query reading one entry per field and bucket (thousands a query,
// scan's shredded.go) about a tenth of its CPU in a profile. Errors: the system calls'
// (fs.ErrNotExist matches a missing file), io.ErrUnexpectedEOF for a shorter file.
func readFull(path string, dst []byte) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	for n := 0; n < len(dst); {
		k, err := syscall.Read(fd, dst[n:])
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return &fs.PathError{Op: "read", Path: path, Err: err}
		case k == 0:
			return io.ErrUnexpectedEOF
		}
		n += k
	}
	return nil
}
