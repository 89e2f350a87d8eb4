package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/flightsrv/flightsrv/routing"
)

// Defaults of Config.
const (
	DefaultReadConns   = 4
	DefaultBusyTimeout = 5 * time.Second
)

// Config configures a Store.
type Config struct {
	// Path is the database file, created when absent. It must not contain '?'.
	Path string
	// ReadConns bounds the connections used by reads (default DefaultReadConns). Writes use
	// one connection.
	ReadConns int
	// BusyTimeout is how long a statement waits for a lock held by another connection or
	// process (default DefaultBusyTimeout).
	BusyTimeout time.Duration
	// Clock is the store's clock, default time.Now. It plays the role of the database clock of
	// the CockroachDB store: lease expiries and retry times are computed with it and compared
	// with it.
	Clock func() time.Time
	// RowAggregates turns on the row-aggregate port (AggregateRows, rowagg.go); off, it
	// answers routing.ErrNoAggregate and the executor reads the buckets' rows. Off by default:
	// the store runs in the server's process, so the port saves no transfer, and its statement
	// (SQLite's JSON functions behind the per-row checks the executor's reading needs) was
	// measured 12–41× slower than the executor reading the same rows (the demo's 300,000
	// flights, every hot bucket of April–June, `serve --analytical`: see docs/architecture.md).
	RowAggregates bool
}

// Store is the embedded hot store over SQLite (modernc.org/sqlite, pure Go): it implements
// routing.HotStore and routing.ArchiveStateStore with the same answers as the CockroachDB
// store. The database is in WAL mode: writes go through a single connection in IMMEDIATE
// transactions (serializable), reads through a small pool, each read one statement (route and
// rows from one snapshot). Errors wrap routing's sentinels and carry no keys, tokens or SQL:
// lock timeouts and a closed store wrap routing.ErrUnavailable, other database errors
// routing.ErrOperationFailed (with a [*CodeError]). A Store is safe for concurrent use; Close
// it when done.
type Store struct {
	w, r  *sql.DB
	clock func() time.Time
	// rowAggregates is Config.RowAggregates.
	rowAggregates bool
	closed        atomic.Bool

	// stmts holds the read statements prepared on r, by SQL text (readQuery).
	stmtsMu sync.Mutex
	stmts   map[string]*sql.Stmt

	// discovery keeps Partitions answers while the database is unchanged (nil: none).
	discovery *discoveryCache
}

// readQuery runs query, one of this package's fixed read statements (never text built from
// input: the cache holds at most one entry per statement of the package), on the read pool as
// a prepared statement: database/sql prepares it once per connection and reuses it, where
// QueryContext with the text would parse and plan it again on every call (SQLite's parser was
// most of the CPU of a bucket read of a few rows).
func (s *Store) readQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s.stmtsMu.Lock()
	st, ok := s.stmts[query]
	if !ok {
		var err error
		if st, err = s.r.PrepareContext(ctx, query); err != nil {
			s.stmtsMu.Unlock()
			return nil, err
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[query] = st
	}
	s.stmtsMu.Unlock()
	return st.QueryContext(ctx, args...)
}

var (
	_ routing.HotStore          = (*Store)(nil)
	_ routing.ArchiveStateStore = (*Store)(nil)
	_ routing.TableCatalog      = (*Store)(nil)
)

// Open opens (creating if needed) the database at cfg.Path in WAL mode with foreign keys on.
// It does not migrate or validate the schema: call Migrate or Validate. Errors wrap
// routing.ErrUnavailable when the file cannot be opened.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Path == "" || strings.ContainsRune(cfg.Path, '?') || strings.HasPrefix(cfg.Path, "file:") {
		return nil, errors.New("sqlite: Config.Path must be a plain file path")
	}
	if cfg.ReadConns <= 0 {
		cfg.ReadConns = DefaultReadConns
	}
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = DefaultBusyTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	busy := fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds())
	writeQ := url.Values{
		"_pragma": {busy, "foreign_keys(1)", "synchronous(NORMAL)", "journal_mode(WAL)"},
		"_txlock": {"immediate"},
	}
	readQ := url.Values{"_pragma": {busy, "foreign_keys(1)", "query_only(1)"}}

	w, err := sql.Open("sqlite", cfg.Path+"?"+writeQ.Encode())
	if err != nil {
		return nil, fmt.Errorf("%w: open database", routing.ErrUnavailable)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("%w: open database", routing.ErrUnavailable)
	}
	r, err := sql.Open("sqlite", cfg.Path+"?"+readQ.Encode())
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("%w: open database", routing.ErrUnavailable)
	}
	r.SetMaxOpenConns(cfg.ReadConns)
	r.SetMaxIdleConns(cfg.ReadConns)
	if err := r.PingContext(ctx); err != nil {
		_ = w.Close()
		_ = r.Close()
		return nil, fmt.Errorf("%w: open database", routing.ErrUnavailable)
	}
	return &Store{w: w, r: r, clock: cfg.Clock, rowAggregates: cfg.RowAggregates, discovery: openDiscoveryCache(ctx, cfg.Path+"?"+readQ.Encode())}, nil
}

// Close closes both connection pools. Calls after Close fail with routing.ErrUnavailable.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.stmtsMu.Lock()
	errs := make([]error, 0, len(s.stmts)+2)
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	s.stmts = nil
	s.stmtsMu.Unlock()
	return errors.Join(append(errs, s.discovery.close(), s.r.Close(), s.w.Close())...)
}

// DB returns the write connection pool, for tools and tests.
func (s *Store) DB() *sql.DB { return s.w }

// CodeError is the privacy-preserving form of an SQLite error: the operation and the
// (extended) result code, never the message. It is wrapped behind routing.ErrOperationFailed.
type CodeError struct {
	Op   string
	Code int
}

// Error implements error; the message carries no keys, tokens or SQL.
func (e *CodeError) Error() string { return fmt.Sprintf("sqlite: %s: result code %d", e.Op, e.Code) }

type kept struct{ err error }

func (k kept) Error() string { return k.err.Error() }
func (k kept) Unwrap() error { return k.err }

// keep marks an error a transaction body returns as final: returned unchanged.
func keep(err error) error { return kept{err} }

func sqliteCode(err error) (int, bool) {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code(), true
	}
	return 0, false
}

// classify maps an error to the routing sentinels without the driver's message.
func (s *Store) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var k kept
	if errors.As(err, &k) {
		return k.err
	}
	if s.closed.Load() {
		return fmt.Errorf("%w: %s: store closed", routing.ErrUnavailable, op)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %s: %w", routing.ErrOperationFailed, op, context.Canceled)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %s: %w", routing.ErrOperationFailed, op, context.DeadlineExceeded)
	}
	if code, ok := sqliteCode(err); ok {
		switch code & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN:
			return fmt.Errorf("%w: %w", routing.ErrUnavailable, &CodeError{Op: op, Code: code})
		case sqlite3.SQLITE_INTERRUPT:
			return fmt.Errorf("%w: %s: %w", routing.ErrOperationFailed, op, context.Canceled)
		}
		return fmt.Errorf("%w: %w", routing.ErrOperationFailed, &CodeError{Op: op, Code: code})
	}
	return fmt.Errorf("%w: %s", routing.ErrOperationFailed, op)
}

func isPrimaryKeyViolation(err error) bool {
	code, ok := sqliteCode(err)
	return ok && (code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || code == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// count adds one statement to the context's ReadStats.
func (s *Store) count(ctx context.Context) { routing.StatsFrom(ctx).AddHotStatement() }

func (s *Store) exec(ctx context.Context, q queryer, query string, args ...any) (sql.Result, error) {
	s.count(ctx)
	return q.ExecContext(ctx, query, args...)
}

// queryRow runs a one-row query; it returns sql.ErrNoRows unclassified, other errors raw.
func (s *Store) queryRow(ctx context.Context, q queryer, query string, args []any, dest ...any) error {
	s.count(ctx)
	return q.QueryRowContext(ctx, query, args...).Scan(dest...)
}

// inTx runs body in one IMMEDIATE transaction on the write connection; SQLite serialises
// writers, so there is nothing to retry (lock waits are bounded by the busy timeout).
// BEGIN and COMMIT (or ROLLBACK) are counted as statements.
func (s *Store) inTx(ctx context.Context, op string, body func(ctx context.Context, tx *sql.Tx) error) error {
	if s.closed.Load() {
		return fmt.Errorf("%w: %s: store closed", routing.ErrUnavailable, op)
	}
	s.count(ctx)
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.classify(op, err)
	}
	if err := body(ctx, tx); err != nil {
		s.count(ctx)
		_ = tx.Rollback()
		return s.classify(op, err)
	}
	s.count(ctx)
	if err := tx.Commit(); err != nil {
		if ctx.Err() != nil { // database/sql rolled the transaction back
			return s.classify(op, ctx.Err())
		}
		if _, ok := sqliteCode(err); ok || errors.Is(err, sql.ErrTxDone) {
			return s.classify(op, err)
		}
		return fmt.Errorf("%w: %s", routing.ErrCommitOutcome, op)
	}
	return nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
