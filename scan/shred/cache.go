package shred

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Cache is the shredded-column cache over one directory (see the package documentation). The
// zero value is not usable: Open one. Safe for concurrent use.
type Cache struct {
	dir string
	max int64

	mu    sync.Mutex
	order *list.List               // front: most recently used; elements hold *file
	index map[string]*list.Element // by file name
	bytes int64

	// locks serialise a bucket's Puts (a Put reads the file it replaces and writes the union)
	// and keep its reads (Get, Range: shared) from a Put's rename and index update, so that a
	// read's size from the index is its file's; striped by the first byte of the content
	// key's SHA-256.
	locks [64]sync.RWMutex

	hits, misses, writes, damaged, evicted, writeErrors, ranges atomic.Int64
}

// file is one bucket's file in the index.
type file struct {
	name string
	size int64
	// dir is the file's directory (fields, places, ranges) once a Put, Get or Range of this
	// process has read it: a file's content never changes but by a Put, which sets it.
	dir []dirEntry
}

// Stats are a Cache's counters since Open: Gets answered (Hits) and not (Misses, damaged
// files included), files written, files found damaged and removed (those of an earlier
// layout too), files evicted for the bound, failed writes (an I/O error: the read itself is
// unaffected), Range calls answered (Ranges), and the files and bytes held now. A Get or Put
// is of one bucket, whatever the number of its fields.
type Stats struct {
	Hits, Misses, Writes, Damaged, Evicted, WriteErrors, Ranges int64
	Entries, Bytes                                              int64
}

// Field names a column of a bucket's file: its field key, and the type it is read as.
type Field struct {
	Key  string
	Type arrow.DataType
}

const (
	fileSuffix = ".bucket"
	// earlierSuffix is the suffix of the files of the earlier layouts (one file per bucket and
	// field, "FSHRED01" to "FSHRED03"), removed by Open as damage.
	earlierSuffix = ".shred"
	tmpPrefix     = ".tmp-"
)

// Open opens (creating it when missing, mode 0o700) the cache directory dir with a bound of
// maxBytes bytes (> 0). Bucket files already there are indexed, least recently modified first
// out, and removed past the bound; leftover temporary files and the files of the earlier
// layouts (one per bucket and field, DIR/<hex>.shred; counted as damaged) are removed; other
// files are left alone. Errors: an invalid bound, or the directory's (creation, listing).
func Open(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("shred: cache size must be positive, not %d", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("shred: cache directory: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("shred: cache directory: %w", err)
	}
	type found struct {
		file
		mod time.Time
	}
	var have []found
	c := &Cache{dir: dir, max: maxBytes, order: list.New(), index: map[string]*list.Element{}}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			_ = os.Remove(filepath.Join(dir, name))
		case e.Type().IsRegular() && validName(name, earlierSuffix):
			if os.Remove(filepath.Join(dir, name)) == nil {
				c.damaged.Add(1)
			}
		case e.Type().IsRegular() && validName(name, fileSuffix):
			info, err := e.Info()
			if err != nil {
				continue
			}
			have = append(have, found{file{name: name, size: info.Size()}, info.ModTime()})
		}
	}
	slices.SortFunc(have, func(a, b found) int { return a.mod.Compare(b.mod) })
	c.mu.Lock()
	for _, f := range have {
		c.index[f.name] = c.order.PushFront(&file{name: f.name, size: f.size})
		c.bytes += f.size
	}
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

// enter takes the read lock of the bucket of content key content (the caller releases mu) and
// returns its id, file name and a copy of the index's record of its file (ok false when the
// index has none; use moves it to the front of the eviction order).
func (c *Cache) enter(content string, use bool) (id [sha256.Size]byte, name string, f file, ok bool, mu *sync.RWMutex) {
	id = contentID(content)
	name = nameOf(id)
	mu = c.lock(id)
	mu.RLock()
	f, ok = c.lookup(name, use)
	return id, name, f, ok, mu
}

// lock returns the lock of the bucket of content id.
func (c *Cache) lock(id [sha256.Size]byte) *sync.RWMutex { return &c.locks[id[0]%byte(len(c.locks))] }

// validName reports whether name is 40 hex digits followed by suffix.
func validName(name, suffix string) bool {
	h, ok := strings.CutSuffix(name, suffix)
	if !ok || len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// nameOf returns the file name of a content id.
func nameOf(id [sha256.Size]byte) string {
	var b [40 + len(fileSuffix)]byte
	hex.Encode(b[:40], id[:20])
	copy(b[40:], fileSuffix)
	return string(b[:])
}

// MaxEntryBytes is the largest file Put writes: an eighth of the bound. Callers stop
// collecting a bucket's columns once they are past this.
func (c *Cache) MaxEntryBytes() int64 { return max(c.max/8, 1) }

// Get returns the columns of fields (in their order) of the bucket of content key content,
// allocated from mem (one buffer: one open, then one read of the whole file when this process
// has not read its directory yet, else reads of the columns asked alone) and owned by the
// caller, or false on a miss: no file, or a file without one of the fields. A damaged file
// (see the package documentation: any check of its header and directory, or of a column
// asked for, failing; a column asked for as another type) is removed and answers false.
func (c *Cache) Get(content string, fields []Field, mem memory.Allocator) ([]arrow.Array, bool) {
	id, name, f, ok, mu := c.enter(content, true)
	defer mu.RUnlock()
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	var buf *memory.Buffer
	var dir []dirEntry
	var err error
	if f.dir != nil {
		// The directory known (this process wrote or read the file, and no Put replaced it
		// since), only the columns asked are read.
		buf, dir, err = c.readColumns(name, f, fields, mem)
	} else {
		buf, dir, err = c.readFile(name, id, f.size, mem)
	}
	if err != nil || buf == nil {
		c.misses.Add(1)
		return nil, false
	}
	defer buf.Release()
	cols := make([]arrow.Array, 0, len(fields))
	for _, fl := range fields {
		e, ok := find(dir, fieldID(fl.Key))
		var a arrow.Array
		if ok {
			if a, err = decodeColumn(buf, e, fl.Type); err != nil {
				releaseAll(cols)
				c.damaged.Add(1)
				c.drop(name, false)
				c.misses.Add(1)
				return nil, false
			}
		}
		if !ok || (len(cols) > 0 && a.Len() != cols[0].Len()) {
			if a != nil {
				a.Release()
			}
			releaseAll(cols)
			c.misses.Add(1)
			return nil, false
		}
		cols = append(cols, a)
	}
	c.hits.Add(1)
	return cols, true
}

// readColumns reads the columns of fields of file name, whose directory f.dir holds, into one
// buffer of mem (the caller's; nil, with a nil error, when the directory lacks a field): each
// at a multiple of 8 bytes, adjacent columns with one read. It returns the directory of the
// buffer (the columns' records with their offsets in it). The columns are not checked here
// (decodeColumn checks each, its CRC-32C first: a file replaced under a stale directory is
// damage, never served). A file shorter than the directory says is damaged: removed and
// counted; a file gone is dropped from the index.
func (c *Cache) readColumns(name string, f file, fields []Field, mem memory.Allocator) (*memory.Buffer, []dirEntry, error) {
	dir := make([]dirEntry, 0, len(fields))
	for _, fl := range fields {
		e, ok := find(f.dir, fieldID(fl.Key))
		if !ok {
			return nil, nil, nil
		}
		if !slices.ContainsFunc(dir, func(o dirEntry) bool { return o.field == e.field }) {
			dir = append(dir, e)
		}
	}
	slices.SortFunc(dir, func(a, b dirEntry) int { return a.off - b.off })
	var spans []span
	to := 0
	for i := range dir {
		e := &dir[i]
		if k := len(spans) - 1; k >= 0 && spans[k].at+spans[k].n == e.off {
			spans[k].n += e.len
		} else {
			spans = append(spans, span{at: e.off, to: to, n: e.len})
		}
		e.off = to
		to += e.len
		if i+1 < len(dir) {
			// The padding to the next column, read with it when the two are adjacent.
			pad := padded(to) - to
			if dir[i+1].off == padded(spans[len(spans)-1].at+spans[len(spans)-1].n) {
				spans[len(spans)-1].n += pad
			}
			to += pad
		}
	}
	if int64(to) > c.MaxEntryBytes() {
		return nil, nil, errDamaged
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(to)
	if err := readAt(filepath.Join(c.dir, name), spans, buf.Bytes()); err != nil {
		buf.Release()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			c.damaged.Add(1)
		}
		c.drop(name, errors.Is(err, fs.ErrNotExist))
		return nil, nil, err
	}
	slices.SortFunc(dir, func(a, b dirEntry) int { return bytes.Compare(a.field[:], b.field[:]) })
	return buf, dir, nil
}

// readFile reads the file name (of content id, size bytes by the index: no stat) into one
// buffer of mem and checks its header, directory and padding (not its columns), recording the
// directory in the index. A damaged file is removed and counted; a file gone is dropped from
// the index. The buffer is the caller's (nil on error).
func (c *Cache) readFile(name string, id [sha256.Size]byte, size int64, mem memory.Allocator) (*memory.Buffer, []dirEntry, error) {
	buf, err := readBuffer(filepath.Join(c.dir, name), size, c.MaxEntryBytes(), mem)
	var dir []dirEntry
	if err == nil {
		if dir, err = decodeDirectory(buf.Bytes(), id, int(size)); err == nil && !zeroPadding(buf.Bytes(), dir) {
			err = errDamaged
		}
		if err != nil {
			buf.Release()
		}
	}
	if err != nil {
		if errors.Is(err, errDamaged) {
			c.damaged.Add(1)
		}
		c.drop(name, errors.Is(err, fs.ErrNotExist))
		return nil, nil, err
	}
	c.setDir(name, dir)
	return buf, dir, nil
}

// zeroPadding reports whether the bytes between the columns of dir in the whole file data are
// zero (no CRC covers them).
func zeroPadding(data []byte, dir []dirEntry) bool {
	for i := 1; i < len(dir); i++ {
		if !zeros(data[dir[i-1].off+dir[i-1].len : dir[i].off]) {
			return false
		}
	}
	return true
}

// releaseAll releases every array of as.
func releaseAll(as []arrow.Array) {
	for _, a := range as {
		a.Release()
	}
}

// Range returns the range (see Range) of the column of field in the bucket of content key
// content as its file's directory states it, without reading the column: from the index once
// a Put, Get or Range of this process has read the directory, else from the file's header and
// directory alone, which carry their own checksum (failing it is damage: the file is removed
// and counted, and Range answers false). False too when the cache holds no such column. The
// executor prunes reads with it (scan's shredded.go); it does not count as a use of the file
// for eviction.
func (c *Cache) Range(content, field string) (Range, bool) {
	id, name, f, ok, mu := c.enter(content, false)
	defer mu.RUnlock()
	if !ok {
		return Range{}, false
	}
	dir := f.dir
	if dir == nil {
		var err error
		if dir, err = readDirectory(filepath.Join(c.dir, name), id, f.size); err != nil {
			if errors.Is(err, errDamaged) {
				c.damaged.Add(1)
			}
			c.drop(name, errors.Is(err, fs.ErrNotExist))
			return Range{}, false
		}
		c.setDir(name, dir)
	}
	e, ok := find(dir, fieldID(field))
	if !ok {
		return Range{}, false
	}
	c.ranges.Add(1)
	return e.rng, true
}

// readDirectory reads and checks the header and directory of the file at path (of content
// id, size bytes long by the index): errDamaged when they fail a check or the file is shorter.
func readDirectory(path string, id [sha256.Size]byte, size int64) ([]dirEntry, error) {
	head := make([]byte, min(size, 4096))
	if err := readFull(path, head); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errDamaged
		}
		return nil, err
	}
	n, err := directoryBytes(head)
	if err != nil || int64(n) > size {
		return nil, errDamaged
	}
	if n > len(head) {
		head = make([]byte, n)
		if err := readFull(path, head); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, errDamaged
			}
			return nil, err
		}
	}
	return decodeDirectory(head, id, int(size))
}

// setDir records the directory of file name in the index (when it is still there).
func (c *Cache) setDir(name string, dir []dirEntry) {
	c.mu.Lock()
	if e, ok := c.index[name]; ok {
		e.Value.(*file).dir = dir
	}
	c.mu.Unlock()
}

// lookup returns a copy of the index's record of file name, false when the index has none;
// use moves the file to the front of the eviction order.
func (c *Cache) lookup(name string, use bool) (file, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[name]
	if !ok {
		return file{}, false
	}
	if use {
		c.order.MoveToFront(e)
	}
	return *e.Value.(*file), true
}

// readBuffer reads the size bytes (the index's size of the file: no stat) of the file at path
// into one buffer allocated from mem (its caller's reference; nil on error). A size past
// limit, which Put never writes, is errDamaged without a read; a file shorter than size fails
// the read, one longer fails decodeDirectory's checks.
func readBuffer(path string, size, limit int64, mem memory.Allocator) (*memory.Buffer, error) {
	if size > limit {
		return nil, errDamaged
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(size))
	if err := readFull(path, buf.Bytes()); err != nil {
		buf.Release()
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errDamaged
		}
		return nil, err
	}
	return buf, nil
}

// drop removes file name from the index and, unless gone is set, from the directory.
func (c *Cache) drop(name string, gone bool) {
	c.mu.Lock()
	if e, ok := c.index[name]; ok {
		c.order.Remove(e)
		delete(c.index, name)
		c.bytes -= e.Value.(*file).size
	}
	c.mu.Unlock()
	if !gone {
		_ = os.Remove(filepath.Join(c.dir, name))
	}
}

// Put adds the columns cols of the fields keys (distinct; arrays of Supported types and equal
// lengths) to the bucket of content key content: its file is rewritten, atomically (a
// temporary file renamed into place), with the columns it held for other fields and these
// (the union; those it held for these fields replaced), then least recently used files are
// evicted past the bound. A union past MaxEntryBytes keeps fewer of the earlier columns (the
// new ones first); when the new ones alone are past it, nothing is written (nil error). A
// file found damaged is counted and replaced by the new columns alone. Puts of one bucket are
// serialised in this process; across processes sharing the directory the last rename wins.
// The file it replaces is read into a buffer of mem (the caller's query's: what the read
// charges it), released before Put returns. Errors: encoding or the file system's (counted in WriteErrors; nothing half-written
// remains, the earlier file is kept).
func (c *Cache) Put(content string, keys []string, cols []arrow.Array, mem memory.Allocator) error {
	if len(keys) != len(cols) {
		return fmt.Errorf("shred: put: %d keys for %d columns", len(keys), len(cols))
	}
	id := contentID(content)
	name := nameOf(id)
	var add []column
	size := int64(headerSize)
	for i, a := range cols {
		col, err := encodeColumn(keys[i], a)
		if err != nil {
			c.writeErrors.Add(1)
			return err
		}
		if i > 0 && a.Len() != cols[0].Len() {
			c.writeErrors.Add(1)
			return fmt.Errorf("shred: put: columns of %d and %d rows", cols[0].Len(), a.Len())
		}
		if slices.ContainsFunc(add, func(o column) bool { return o.field == col.field }) {
			c.writeErrors.Add(1)
			return fmt.Errorf("shred: put: field %q twice", keys[i])
		}
		add = append(add, col)
		size += int64(dirRecord + padded(len(col.body)))
	}
	if size > c.MaxEntryBytes() {
		return nil
	}
	mu := c.lock(id)
	mu.Lock()
	defer mu.Unlock()
	// The columns the file holds for other fields, checked, with equal row counts, while they
	// fit.
	if f, ok := c.lookup(name, false); ok {
		buf, dir, err := c.readFile(name, id, f.size, mem)
		if err == nil {
			// The columns kept are slices of buf, written before it is released.
			defer buf.Release()
			rows := cols[0].Len()
			var keep []column
			for _, e := range dir {
				if slices.ContainsFunc(add, func(o column) bool { return o.field == e.field }) {
					continue
				}
				body := buf.Bytes()[e.off : e.off+e.len]
				if crc32Of(body) != e.crc {
					keep = nil
					c.damaged.Add(1)
					break
				}
				if columnRows(body) != uint64(rows) {
					continue
				}
				if size+int64(dirRecord+padded(e.len)) <= c.MaxEntryBytes() {
					size += int64(dirRecord + padded(e.len))
					keep = append(keep, column{field: e.field, body: body, crc: e.crc, rng: e.rng})
				}
			}
			add = append(add, keep...)
		}
	}
	head, sorted, n := encodeHead(id, add)
	// The head and the columns as they are, with the zero padding between them: no copy of
	// the file is assembled.
	parts := [][]byte{head}
	at := len(head)
	var zero [8]byte
	for _, col := range sorted {
		parts = append(parts, zero[:padded(at)-at], col.body)
		at = padded(at) + len(col.body)
	}
	if err := writeAtomic(c.dir, name, parts); err != nil {
		c.writeErrors.Add(1)
		return fmt.Errorf("shred: write file: %w", err)
	}
	c.writes.Add(1)
	dir, _ := decodeDirectory(head, id, n)
	c.mu.Lock()
	if e, ok := c.index[name]; ok {
		f := e.Value.(*file)
		c.bytes += int64(n) - f.size
		f.size, f.dir = int64(n), dir
		c.order.MoveToFront(e)
	} else {
		c.index[name] = c.order.PushFront(&file{name: name, size: int64(n), dir: dir})
		c.bytes += int64(n)
	}
	c.evictLocked()
	c.mu.Unlock()
	return nil
}

// evictLocked removes least recently used files while the total is past the bound. c.mu is
// held; the files are removed under it, so that a concurrent Put of an evicted name cannot
// have its new file removed.
func (c *Cache) evictLocked() {
	for c.bytes > c.max {
		last := c.order.Back()
		if last == nil {
			return
		}
		f := last.Value.(*file)
		c.order.Remove(last)
		delete(c.index, f.name)
		c.bytes -= f.size
		_ = os.Remove(filepath.Join(c.dir, f.name))
		c.evicted.Add(1)
	}
}

// writeAtomic writes parts, one after the other, to dir/name through a temporary file in dir
// and a rename.
func writeAtomic(dir, name string, parts [][]byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	for _, p := range parts {
		if err == nil && len(p) > 0 {
			_, err = f.Write(p)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// Stats returns the cache's counters and size.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	entries, bytes := int64(len(c.index)), c.bytes
	c.mu.Unlock()
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Writes: c.writes.Load(), Damaged: c.damaged.Load(),
		Evicted: c.evicted.Load(), WriteErrors: c.writeErrors.Load(), Ranges: c.ranges.Load(), Entries: entries, Bytes: bytes}
}
