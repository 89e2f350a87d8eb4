package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// archives

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/migration"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// hotStore is what the binary needs of a hot-store adapter. It includes routing.Pinger, so
// that the server's health reporter probes the store through this wrapper (without it the
// wrapper hid the adapter's Ping and health answered SERVING with the store down).
type hotStore interface {
	routing.HotStore
	routing.Pinger
	routing.ArchiveStateStore
	routing.TableCatalog
	Migrate(ctx context.Context) error
	ApplyMigrations(ctx context.Context) ([]migration.Migration, error)
	Validate(ctx context.Context) error
}

// openedStore is a hot store with its closer and the name of what it is (CockroachDB,
// PostgreSQL or SQLite) for logs.
type openedStore struct {
	hotStore
	close func() error
	kind  string
}

func (s *openedStore) Close() error { return s.close() }

// adapter is the store adapter itself (*cockroach.Store or *sqlite.Store), for the server: the
// optional ports the server and the routing layer find by type assertion (the row-aggregate
// port routing.RowAggregator, the pgx pool behind --query-connections' default cap) are the
// adapter's methods, which this wrapper's embedded interface hides.
func (s *openedStore) adapter() routing.HotStore { return s.hotStore }

// openStore opens the hot store named by a URL: postgres:// or postgresql:// (CockroachDB or
// PostgreSQL over pgx), or sqlite://PATH / a plain file path (embedded SQLite).
func openStore(ctx context.Context, raw string) (*openedStore, error) {
	return openStoreWith(ctx, raw, false)
}

// openStoreWith is openStore with SQLite's row-aggregate port (sqlite.Config.RowAggregates,
// serve --sqlite-row-aggregates) on when sqliteRowAggregates is set; it does not change a
// PostgreSQL or CockroachDB store.
func openStoreWith(ctx context.Context, raw string, sqliteRowAggregates bool) (*openedStore, error) {
	switch {
	case strings.HasPrefix(raw, "postgres://"), strings.HasPrefix(raw, "postgresql://"):
		st, err := cockroach.Open(ctx, cockroach.Config{URL: raw})
		if err != nil {
			return nil, fmt.Errorf("open CockroachDB/PostgreSQL store: %w", err)
		}
		return &openedStore{hotStore: st, close: func() error { st.Close(); return nil }, kind: st.Product()}, nil
	case raw == "":
		return nil, errors.New("no hot store given (--store or FLIGHTSRV_STORE)")
	}
	path := strings.TrimPrefix(raw, "sqlite://")
	if strings.Contains(path, "://") {
		return nil, errors.New("unsupported store URL scheme (want postgres://, postgresql:// or sqlite://)")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create store directory: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, sqlite.Config{Path: path, RowAggregates: sqliteRowAggregates})
	if err != nil {
		return nil, fmt.Errorf("open SQLite store: %w", err)
	}
	return &openedStore{hotStore: st, close: st.Close, kind: "SQLite"}, nil
}

// openArchive opens the archive bucket named by a gocloud.dev/blob URL; a plain directory
// path means file://<absolute path>, and the directory is created when missing.
func openArchive(ctx context.Context, raw string) (*blob.Bucket, error) {
	if raw == "" {
		return nil, errors.New("no archive location given (--archive or FLIGHTSRV_ARCHIVE)")
	}
	if !strings.Contains(raw, "://") {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return nil, err
		}
		raw = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	if u, err := url.Parse(raw); err == nil && u.Scheme == "file" {
		if err := os.MkdirAll(u.Path, 0o755); err != nil {
			return nil, fmt.Errorf("create archive directory: %w", err)
		}
	}
	b, err := blob.OpenBucket(ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("open archive bucket: %w", err)
	}
	return b, nil
}

// archiveFileDir returns the directory of a file:// archive location (as openArchive resolves
// raw: a plain path is that directory), which the archive reader then reads objects from
// directly (archive.ReaderOptions.FileDir); "" for any other scheme, or a file URL with a
// host other than "." (a path relative to the working directory) or localhost.
func archiveFileDir(raw string) string {
	if raw == "" {
		return ""
	}
	if !strings.Contains(raw, "://") {
		abs, err := filepath.Abs(raw)
		if err != nil {
			return ""
		}
		return abs
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	path := u.Path
	switch u.Host {
	case "", "localhost":
	case ".": // fileblob: a path relative to the working directory
		path = strings.TrimPrefix(path, "/")
	default:
		return ""
	}
	if path == "" {
		return ""
	}
	return filepath.FromSlash(path)
}

// openValidated opens the hot store named by raw and validates its schema (a store that was
// never migrated is refused, with the command to run).
func openValidated(ctx context.Context, raw string) (*openedStore, error) {
	st, err := openStore(ctx, raw)
	if err != nil {
		return nil, err
	}
	if err := st.Validate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("validate schema (run `flightsrv migrate` first): %w", err)
	}
	return st, nil
}
