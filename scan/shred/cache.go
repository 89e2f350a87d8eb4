package shred

import (
	"container/list"
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

	hits, misses, writes, damaged, evicted, writeErrors, ranges atomic.Int64
}

// file is one entry's file in the index.
type file struct {
	name string
	size int64
	// rng is the range the entry's header states, once a Put, Get or Range has read it
	// (ranged): the entry's content never changes, so neither does its range.
	rng    Range
	ranged bool
}

// Stats are a Cache's counters since Open: Gets answered (Hits) and not (Misses, damaged
// entries included), entries written, entries found damaged and removed, entries evicted for
// the bound, failed writes (an I/O error: the read itself is unaffected), Range calls answered
// (Ranges), and the entries and bytes held now.
type Stats struct {
	Hits, Misses, Writes, Damaged, Evicted, WriteErrors, Ranges int64
	Entries, Bytes                                              int64
}

const (
	entrySuffix = ".shred"
	tmpPrefix   = ".tmp-"
)

// Open opens (creating it when missing, mode 0o700) the cache directory dir with a bound of
// maxBytes bytes (> 0). Entry files already there are indexed, least recently modified first
// out, and removed past the bound; leftover temporary files are removed; other files are left
// alone. Errors: an invalid bound, or the directory's (creation, listing).
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
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, tmpPrefix):
			_ = os.Remove(filepath.Join(dir, name))
		case e.Type().IsRegular() && validName(name):
			info, err := e.Info()
			if err != nil {
				continue
			}
			have = append(have, found{file{name: name, size: info.Size()}, info.ModTime()})
		}
	}
	slices.SortFunc(have, func(a, b found) int { return a.mod.Compare(b.mod) })
	c := &Cache{dir: dir, max: maxBytes, order: list.New(), index: map[string]*list.Element{}}
	c.mu.Lock()
	for _, f := range have {
		c.index[f.name] = c.order.PushFront(&file{name: f.name, size: f.size})
		c.bytes += f.size
	}
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

// validName reports whether name is an entry file's name.
func validName(name string) bool {
	h, ok := strings.CutSuffix(name, entrySuffix)
	if !ok || len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// nameOf returns the file name of an entry id.
func nameOf(id [32]byte) string {
	var b [40 + len(entrySuffix)]byte
	hex.Encode(b[:40], id[:20])
	copy(b[40:], entrySuffix)
	return string(b[:])
}

// MaxEntryBytes is the largest entry Put writes: an eighth of the bound. Callers stop
// collecting a column once it is past this.
func (c *Cache) MaxEntryBytes() int64 { return max(c.max/8, 1) }

// Get returns the column of the entry (content, field) of type typ, allocated from mem and
// owned by the caller, or false on a miss. A damaged entry (see the package documentation) is
// removed and answers false.
func (c *Cache) Get(content, field string, typ arrow.DataType, mem memory.Allocator) (arrow.Array, bool) {
	id := entryID(content, field)
	name := nameOf(id)
	f, ok := c.lookup(name, true)
	if !ok {
		c.misses.Add(1)
		return nil, false
	}
	buf, err := readBuffer(filepath.Join(c.dir, name), f.size, c.MaxEntryBytes(), mem)
	if err != nil {
		if errors.Is(err, errDamaged) {
			c.damaged.Add(1)
		}
		c.drop(name, errors.Is(err, fs.ErrNotExist))
		c.misses.Add(1)
		return nil, false
	}
	a, rng, err := decodeEntry(buf, id, typ) // the column's buffers are slices of buf
	buf.Release()
	if err != nil {
		c.damaged.Add(1)
		c.drop(name, false)
		c.misses.Add(1)
		return nil, false
	}
	c.setRange(name, rng)
	c.hits.Add(1)
	return a, true
}

// Range returns the range (see Range) of the column of entry (content, field) as its header
// states it, without reading the column: from the index once a Put, Get or Range of this
// process has read it, else from the entry file's header alone, which carries its own
// checksum (a header that fails it is damage: the entry is removed and counted, and Range
// answers false). False too when the cache holds no such entry. The executor prunes reads with
// it (scan's shredded.go); it does not count as a use of the entry for eviction.
func (c *Cache) Range(content, field string) (Range, bool) {
	id := entryID(content, field)
	name := nameOf(id)
	f, ok := c.lookup(name, false)
	if !ok {
		return Range{}, false
	}
	if f.ranged {
		c.ranges.Add(1)
		return f.rng, true
	}
	hdr, err := readHeader(filepath.Join(c.dir, name))
	var size uint64
	var rng Range
	if err == nil {
		size, rng, err = decodeHeader(hdr, id)
		if err == nil && size+headerBytes != uint64(f.size) {
			err = errDamaged
		}
	}
	if err != nil {
		if errors.Is(err, errDamaged) {
			c.damaged.Add(1)
		}
		c.drop(name, errors.Is(err, fs.ErrNotExist))
		return Range{}, false
	}
	c.setRange(name, rng)
	c.ranges.Add(1)
	return rng, true
}

// readHeader reads the first headerBytes bytes of the file at path (errDamaged when it is
// shorter).
func readHeader(path string) ([]byte, error) {
	hdr := make([]byte, headerBytes)
	if err := readFull(path, hdr); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errDamaged
		}
		return nil, err
	}
	return hdr, nil
}

// setRange records the range of entry name in the index (when it is still there).
func (c *Cache) setRange(name string, rng Range) {
	c.mu.Lock()
	if e, ok := c.index[name]; ok {
		f := e.Value.(*file)
		f.rng, f.ranged = rng, true
	}
	c.mu.Unlock()
}

// lookup returns a copy of the index's record of entry name, false when the index has none;
// use moves the entry to the front of the eviction order.
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

// readBuffer reads the size bytes (the index's size of the entry: no stat) of the file at path
// into one buffer allocated from mem (its caller's reference; nil on error). A size past
// limit, which Put never writes, is errDamaged without a read; a file shorter than size fails
// the read, one longer fails decodeEntry's checks.
func readBuffer(path string, size, limit int64, mem memory.Allocator) (*memory.Buffer, error) {
	if size > limit {
		return nil, errDamaged
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(size))
	if err := readFull(path, buf.Bytes()); err != nil {
		buf.Release()
		return nil, err
	}
	return buf, nil
}

// drop removes entry name from the index and, unless gone is set, from the directory.
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

// Put writes column a as the entry (content, field), atomically (a temporary file renamed
// into place), then evicts least recently used entries past the bound. An entry larger than
// MaxEntryBytes is not written (nil error). Errors: encoding or the file system's (counted in
// WriteErrors; nothing half-written remains).
func (c *Cache) Put(content, field string, a arrow.Array) error {
	id := entryID(content, field)
	data, err := encodeEntry(id, a)
	if err != nil {
		c.writeErrors.Add(1)
		return err
	}
	if int64(len(data)) > c.MaxEntryBytes() {
		return nil
	}
	name := nameOf(id)
	if err := writeAtomic(c.dir, name, data); err != nil {
		c.writeErrors.Add(1)
		return fmt.Errorf("shred: write entry: %w", err)
	}
	c.writes.Add(1)
	size := int64(len(data))
	_, rng, _ := decodeHeader(data, id)
	c.mu.Lock()
	if e, ok := c.index[name]; ok {
		f := e.Value.(*file)
		c.bytes += size - f.size
		f.size, f.rng, f.ranged = size, rng, true
		c.order.MoveToFront(e)
	} else {
		c.index[name] = c.order.PushFront(&file{name: name, size: size, rng: rng, ranged: true})
		c.bytes += size
	}
	c.evictLocked()
	c.mu.Unlock()
	return nil
}

// evictLocked removes least recently used entries while the total is past the bound. c.mu is
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

// writeAtomic writes data to dir/name through a temporary file in dir and a rename.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
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
