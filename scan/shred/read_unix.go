//go:build unix

package shred

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// readFull reads the first len(dst) bytes of the file at path into dst (readAt from offset 0).
func readFull(path string, dst []byte) error {
	return readAt(path, []span{{0, 0, len(dst)}}, dst)
}

// span is a run of bytes of a file (from its offset at) read into dst[to:to+n].
type span struct{ at, to, n int }

// readAt reads each span of the file at path into dst through the open, pread and close
// system calls alone: os.Open also tries to register the file with the runtime's poller (one
// more system call, refused for a regular file) and sets a cleanup on the os.File, which cost
// a warm query reading one file per bucket (about 1,400 a query, scan's shredded.go) a
// noticeable share of its CPU in a profile. Errors: the system calls' (fs.ErrNotExist matches
// a missing file), io.ErrUnexpectedEOF for a file that ends before a span does.
func readAt(path string, spans []span, dst []byte) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	for _, s := range spans {
		for n := 0; n < s.n; {
			k, err := syscall.Pread(fd, dst[s.to+n:s.to+s.n], int64(s.at+n))
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
	}
	return nil
}
