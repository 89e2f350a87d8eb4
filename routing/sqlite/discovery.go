package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"sync"

	"github.com/flightsrv/flightsrv/routing"
)

// discoveryEntries bounds the Partitions answers kept at once: the distinct (table, strategy,
// range, limit) questions asked between two changes of the database.
const discoveryEntries = 16

// discoveryKey is one Partitions question; bounds in µs since the Unix epoch, UTC.
type discoveryKey struct {
	table, strategy string
	start, end      int64
	limit           int
}

// discoveryCache keeps the recent Partitions answers while the database is unchanged, so an
// analytical query over every partition does not read the whole bucket metadata table (1,341
// rows for the flights file: about 1.7 ms of CPU, the largest part of the grouped pushdown's
// GetFlightInfo, bench's BenchmarkGroupedCount) when nothing was written since the last one.
//
// "Unchanged" is SQLite's data_version: the value PRAGMA data_version returns on one
// connection changes whenever any other connection, of this process or another, has
// committed to the database file since its last call (TestDiscoveryCacheSeesEveryCommit
// checks it for the store's own commits and for a second store's on the same file). The
// cache's connection (db) only ever runs that PRAGMA, so every commit is another
// connection's: the store's own writes, the archiver's transitions, a `load` in another
// process. The version is read before the discovery statement runs, so an answer is filed
// under a version no newer than the state it saw, and a commit between the two makes the next
// question ask again. An answer is therefore always what the statement would return at the
// instant its version was read.
//
// Safe for concurrent use; the PRAGMA runs under mu, one at a time.
type discoveryCache struct {
	mu      sync.Mutex
	db      *sql.DB   // one read-only connection, for PRAGMA data_version only
	stmt    *sql.Stmt // PRAGMA data_version, prepared on db
	version int64
	known   bool // version was read and entries belong to it
	entries map[discoveryKey][]routing.Partition
}

// openDiscoveryCache opens the cache's own connection to the database file (dsn: a read-only
// DSN of Open). It returns nil when that fails: discovery then always asks the database.
func openDiscoveryCache(ctx context.Context, dsn string) *discoveryCache {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	stmt, err := db.PrepareContext(ctx, "PRAGMA data_version")
	if err != nil {
		_ = db.Close()
		return nil
	}
	return &discoveryCache{db: db, stmt: stmt, entries: map[discoveryKey][]routing.Partition{}}
}

// lookup reads the database's data version and returns the answer filed for k under it, if
// any. version is the value read (ok false when it could not be read: the caller must not
// store its answer).
func (c *discoveryCache) lookup(ctx context.Context, k discoveryKey) (ps []routing.Partition, hit bool, version int64, ok bool) {
	if c == nil {
		return nil, false, 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.stmt.QueryRowContext(ctx).Scan(&version); err != nil {
		c.known = false
		clear(c.entries)
		return nil, false, 0, false
	}
	if !c.known || version != c.version {
		clear(c.entries)
		c.version, c.known = version, true
		return nil, false, version, true
	}
	ps, hit = c.entries[k]
	return ps, hit, version, true
}

// store files ps as the answer to k read at version, unless the version has moved on since.
// Its bucket-key slices are clipped to their lengths, so a caller appending to one of a shared
// answer's (see shared) copies it; nothing may modify ps's keys afterwards.
func (c *discoveryCache) store(k discoveryKey, version int64, ps []routing.Partition) {
	if c == nil {
		return
	}
	for i := range ps {
		ps[i].BucketKeys = slices.Clip(ps[i].BucketKeys)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known || version != c.version {
		return
	}
	if len(c.entries) >= discoveryEntries {
		clear(c.entries)
	}
	c.entries[k] = ps
}

// shared returns a cached answer for one caller: its own outer slice (its elements may be
// replaced), sharing the keys (which must not be modified: routing.HotStore.Partitions).
func shared(ps []routing.Partition) []routing.Partition { return slices.Clone(ps) }

// close closes the cache's connection.
func (c *discoveryCache) close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.stmt.Close()
	return c.db.Close()
}
