package archive

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileObjects reads the objects of a file:// bucket straight from its directory, for the
// keys the archive writes (fileKey). gocloud's fileblob, which serves every other key and
// every write, stats the object and opens and decodes its .attrs sidecar (JSON) on each
// ranged read and each Attributes call before opening the object itself: on a cold
// analytical query over 1,341 archived buckets that was about 6% of the server's CPU and 14%
// of its allocations, for attributes no read uses. A read here is one open, one fstat and
// one pread of the object (os.File.ReadAt), with fileblob's error mapping: a missing object
// or a directory at the key is not found, any other failure the object store's.
//
// Reading around fileblob is sound because fileblob maps a key to its file as this does for
// these keys (filepath.Join of the bucket's absolute directory and the key, the key's bytes
// unescaped: fileblob escapes only control characters, "//", "../" and a trailing "/",
// which fileKey refuses) and keeps no state of its own for an object beyond the sidecar,
// whose attributes the archive never reads.
type fileObjects struct {
	dir string // absolute and clean, as fileblob's bucket directory
}

// newFileObjects returns the reader of the file:// bucket whose directory is dir (made
// absolute against the working directory, as fileblob does), or an error when dir is not a
// directory.
func newFileObjects(dir string) (*fileObjects, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, errors.New("archive: FileDir is not a directory")
	}
	return &fileObjects{dir: abs}, nil
}

// fileKey reports whether key is one fileObjects serves: segments separated by '/', each
// non-empty, not "." or "..", none but the last ending in "..", of ASCII letters, digits,
// '.', '-' and '_' only, and not ending in fileblob's sidecar suffix. Every key the archive writes is one (keys.go: hex
// digests and partition keys, "generation-N", "manifest-…json", "records-….parquet"); any
// other key goes through gocloud, which refuses or escapes what it must.
func fileKey(key string) bool {
	if key == "" || strings.HasSuffix(key, ".attrs") || strings.Contains(key, "../") {
		// fileblob escapes the slash of "../" even inside a segment ("0../0"): its file is
		// not at the unescaped key's path.
		return false
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// path returns key's file (key must satisfy fileKey).
func (d *fileObjects) path(key string) string {
	return filepath.Join(d.dir, filepath.FromSlash(key))
}

// open opens key's object and returns it with its size; a directory at the key is not found,
// as fileblob answers.
func (d *fileObjects) open(key string) (*os.File, int64, error) {
	f, err := os.Open(d.path(key))
	if err != nil {
		return nil, 0, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if info.IsDir() {
		f.Close()
		return nil, 0, fs.ErrNotExist
	}
	return f, info.Size(), nil
}

// size returns the size of key's object.
func (d *fileObjects) size(key string) (int64, error) {
	info, err := os.Stat(d.path(key))
	if err != nil {
		return 0, err
	}
	if info.IsDir() {
		return 0, fs.ErrNotExist
	}
	return info.Size(), nil
}

// fileRange is an open object's bytes from an offset (an io.SectionReader over the file, read
// with pread) and the object's size: objectStore reads it as a gocloud reader.
type fileRange struct {
	*io.SectionReader
	f    *os.File
	size int64
}

func (r *fileRange) Size() int64  { return r.size }
func (r *fileRange) Close() error { return r.f.Close() }

// openRange opens key's object for reading n bytes at off (n < 0: to its end; a range past
// the end reads short, as a gocloud ranged reader does).
func (d *fileObjects) openRange(key string, off, n int64) (*fileRange, error) {
	f, size, err := d.open(key)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		n = max(size-off, 0)
	}
	return &fileRange{SectionReader: io.NewSectionReader(f, off, n), f: f, size: size}, nil
}

// fileError maps an error of fileObjects as objectError maps fileblob's: the parent's
// cancellation first, a missing object ErrObjectNotFound, anything else
// ErrObjectStoreUnavailable.
func fileError(parent context.Context, err error) error {
	if perr := parent.Err(); perr != nil {
		return perr
	}
	if errors.Is(err, fs.ErrNotExist) {
		return ErrObjectNotFound
	}
	return ErrObjectStoreUnavailable
}
