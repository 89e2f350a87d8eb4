package cockroach

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// Defaults of Config (docs/pulpitum-v4.md §3.1, pool defaults and transaction wrapper).
const (
	DefaultMaxConns       = 16
	DefaultAcquireTimeout = 5 * time.Second
	DefaultConnectTimeout = 10 * time.Second
)

// Transaction wrapper limits (docs/pulpitum-v4.md §3.1).
const (
	maxAttempts     = 5
	beginTimeout    = 30 * time.Second
	bodyTimeout     = 30 * time.Second
	commitTimeout   = 10 * time.Second
	rollbackTimeout = 5 * time.Second
	// insertChunk bounds the records sent by one INSERT statement of an append.
	insertChunk = 4096
)

// Config configures a Store. The zero value of every field but URL takes its default.
type Config struct {
	// URL is a pgx connection string (postgres://user@host:port/db?sslmode=…) of a
	// CockroachDB or PostgreSQL database.
	URL string
	// MaxConns bounds the pool (default DefaultMaxConns).
	MaxConns int32
	// MinConns is the number of connections kept open (default 0; the reference pre-warms
	// all MaxConns).
	MinConns int32
	// AcquireTimeout bounds waiting for a pooled connection (default DefaultAcquireTimeout).
	AcquireTimeout time.Duration
	// ConnectTimeout bounds establishing one connection (default DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// Tracer, when set, observes every statement the store sends (installed on the pool's
	// connection config behind the store's own counting and span tracer). Its
	// pgx.PrepareTracer, pgx.ConnectTracer and pgx.CopyFromTracer hooks are forwarded when
	// implemented.
	Tracer pgx.QueryTracer
	// TracerProvider provides the OpenTelemetry tracer for statement spans (default the
	// global provider).
	TracerProvider trace.TracerProvider
}

// Store is the CockroachDB/PostgreSQL hot store over a pgx pool: it implements
// routing.HotStore and routing.ArchiveStateStore on the Pulpitum v4 schema. Every mutation
// runs in one SERIALIZABLE transaction retried on SQLSTATE 40001 (up to 5 attempts, jittered
// exponential backoff); every read is one statement. Errors wrap routing's sentinels and carry
// no keys, tokens or SQL text: pool and connection failures wrap routing.ErrUnavailable,
// database errors routing.ErrOperationFailed (with a [*SQLStateError]), an ambiguous commit
// routing.ErrCommitOutcome. A Store is safe for concurrent use; Close it when done.
type Store struct {
	pool    *pgxpool.Pool
	cfg     Config
	tracer  trace.Tracer
	product string
	// intIn15 reports a PostgreSQL 15 server, whose int4in and int8in read text exactly as
	// the executor does (internal/pgnumfmt.IntIn: PostgreSQL 15's grammar; 16 reads
	// 0x, 0o, 0b prefixes and _ separators too): the row-aggregate statement's guard of its
	// casts then need not read the values back (rowagg.go, renderRows).
	intIn15 bool
}

var (
	_ routing.HotStore          = (*Store)(nil)
	_ routing.ArchiveStateStore = (*Store)(nil)
	_ routing.TableCatalog      = (*Store)(nil)
)

// Open validates cfg, creates the pool and checks that the database answers (a failure wraps
// routing.ErrUnavailable, or is a configuration error for an unparsable URL). It does not
// migrate or validate the schema: call Migrate or Validate.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URL == "" {
		return nil, errors.New("cockroach: Config.URL is empty")
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MinConns < 0 || cfg.MinConns > cfg.MaxConns {
		return nil, errors.New("cockroach: Config.MinConns must be between 0 and MaxConns")
	}
	if cfg.AcquireTimeout <= 0 {
		cfg.AcquireTimeout = DefaultAcquireTimeout
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		// The parse error may quote the URL, password included: do not wrap it.
		return nil, errors.New("cockroach: Config.URL is not a valid connection string")
	}
	pcfg.MaxConns, pcfg.MinConns = cfg.MaxConns, cfg.MinConns
	pcfg.ConnConfig.ConnectTimeout = cfg.ConnectTimeout
	s := &Store{cfg: cfg,
		tracer: cfg.TracerProvider.Tracer("github.com/flightsrv/flightsrv/routing/cockroach")}
	pcfg.ConnConfig.Tracer = &statementTracer{
		next:   cfg.Tracer,
		tracer: s.tracer,
		attrs:  staticAttributes(pcfg.ConnConfig.Database, pcfg.ConnConfig.Host, pcfg.ConnConfig.Port),
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: create pool", routing.ErrUnavailable)
	}
	s.pool = pool
	pctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout+cfg.AcquireTimeout)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, unavailable("connect", err)
	}
	var version string
	if err := pool.QueryRow(pctx, "SELECT version()").Scan(&version); err != nil {
		pool.Close()
		return nil, s.classify("read server version", err)
	}
	s.product = productOf(version)
	if s.product == "PostgreSQL" {
		var num string
		if err := pool.QueryRow(pctx, "SELECT current_setting('server_version_num')").Scan(&num); err != nil {
			pool.Close()
			return nil, s.classify("read server version", err)
		}
		n, _ := strconv.Atoi(num)
		s.intIn15 = n >= 150000 && n < 160000
	}
	return s, nil
}

// productOf names the server whose version() is version: CockroachDB answers "CockroachDB CCL
// v23.1.11 (x86_64-pc-linux-gnu, …)", PostgreSQL "PostgreSQL 15.8 (Debian …) on …".
func productOf(version string) string {
	if strings.Contains(version, "CockroachDB") {
		return "CockroachDB"
	}
	return "PostgreSQL"
}

// Product names the database server: "CockroachDB" or "PostgreSQL" (from version(), read
// once by Open).
func (s *Store) Product() string { return s.product }

// Close closes the pool, waiting for acquired connections to be released.
func (s *Store) Close() { s.pool.Close() }

// Pool returns the underlying pool, for tools and tests; statements sent through it are
// traced like the store's own.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// SQLStateError is the privacy-preserving form of a database error: the operation that failed
// and the SQLSTATE, never the server's message (which may quote values). It is wrapped behind
// routing.ErrOperationFailed.
type SQLStateError struct {
	Op   string
	Code string
}

// Error implements error; the message carries no keys, tokens or SQL.
func (e *SQLStateError) Error() string { return "cockroach: " + e.Op + ": SQLSTATE " + e.Code }

// SQLState returns the five-character SQLSTATE code.
func (e *SQLStateError) SQLState() string { return e.Code }

// kept marks an error a transaction body returns as final: it is returned unchanged, without
// retry or classification.
type kept struct{ err error }

func (k kept) Error() string { return k.err.Error() }
func (k kept) Unwrap() error { return k.err }

func keep(err error) error { return kept{err} }

// acquire takes a pooled connection within the acquire timeout. Failures wrap
// routing.ErrUnavailable, except a cancelled or expired caller context, which wraps
// routing.ErrOperationFailed and the context's error.
func (s *Store) acquire(ctx context.Context, op string) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, s.cfg.AcquireTimeout)
	defer cancel()
	conn, err := s.pool.Acquire(actx)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up: not the store's failure
			return nil, fmt.Errorf("%w: %s: acquire connection: %w", routing.ErrOperationFailed, op, ctx.Err())
		}
		return nil, unavailable(op, err)
	}
	return conn, nil
}

func unavailable(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %w", routing.ErrUnavailable, op, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: %s: connection failed", routing.ErrUnavailable, op)
}

// classify maps an error of a statement or transaction to the routing sentinels, dropping
// server messages: kept errors are returned unwrapped as they are; database errors become
// ErrOperationFailed with their SQLSTATE; broken connections ErrUnavailable; context errors
// ErrOperationFailed wrapping the context error.
func (s *Store) classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var k kept
	if errors.As(err, &k) {
		return k.err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if connectionLost(pgErr.Code) {
			return fmt.Errorf("%w: %w", routing.ErrUnavailable, &SQLStateError{Op: op, Code: pgErr.Code})
		}
		return fmt.Errorf("%w: %w", routing.ErrOperationFailed, &SQLStateError{Op: op, Code: pgErr.Code})
	}
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %s: %w", routing.ErrOperationFailed, op, context.Canceled)
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		return fmt.Errorf("%w: %s: %w", routing.ErrOperationFailed, op, context.DeadlineExceeded)
	case isConnectionError(err):
		return unavailable(op, err)
	}
	return fmt.Errorf("%w: %s", routing.ErrOperationFailed, op)
}

func isConnectionError(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

func isSerializationFailure(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "40001"
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// retryDelay is the reference backoff after failed attempt number attempt (0-based): a delay
// drawn uniformly from [cap/2, cap] with cap = min(25 ms·2^min(attempt, 5), 1 s).
func retryDelay(attempt int) time.Duration {
	limit := min(25*time.Millisecond<<min(attempt, 5), time.Second)
	half := limit / 2
	return half + rand.N(half+1)
}

// inTx runs body in one SERIALIZABLE transaction on one pooled connection, retrying the
// whole transaction on SQLSTATE 40001 up to maxAttempts times. BEGIN and the body each have
// 30 s, COMMIT 10 s and ROLLBACK 5 s. A failed COMMIT that is not a database error yields
// routing.ErrCommitOutcome. pgxpool destroys rather than reuses a connection whose COMMIT or
// ROLLBACK did not complete.
func (s *Store) inTx(ctx context.Context, op string, body func(ctx context.Context, tx pgx.Tx) error) error {
	return s.retry(ctx, op, func() error { return s.tryTx(ctx, op, body) })
}

// inTxOn is inTx on conn, which the caller holds (and releases) across the attempts, with a
// body allowed to run for bodyLimit.
func (s *Store) inTxOn(ctx context.Context, conn *pgxpool.Conn, op string, bodyLimit time.Duration, body func(ctx context.Context, tx pgx.Tx) error) error {
	return s.retry(ctx, op, func() error { return s.txOn(ctx, conn, op, bodyLimit, body) })
}

// retry runs try up to maxAttempts times, again only after SQLSTATE 40001, with retryDelay
// between attempts; kept errors end it unchanged, others are classified.
func (s *Store) retry(ctx context.Context, op string, try func() error) error {
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		var k kept
		if errors.As(err, &k) {
			return k.err
		}
		if !isSerializationFailure(err) || attempt+1 >= maxAttempts {
			return s.classify(op, err)
		}
		t := time.NewTimer(retryDelay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return s.classify(op, ctx.Err())
		case <-t.C:
		}
	}
}

func (s *Store) tryTx(ctx context.Context, op string, body func(ctx context.Context, tx pgx.Tx) error) error {
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return keep(err)
	}
	defer conn.Release()
	return s.txOn(ctx, conn, op, bodyTimeout, body)
}

// txOn is one attempt of a SERIALIZABLE transaction running body on conn, body for at most
// bodyLimit.
func (s *Store) txOn(ctx context.Context, conn *pgxpool.Conn, op string, bodyLimit time.Duration, body func(ctx context.Context, tx pgx.Tx) error) error {
	bctx, cancel := context.WithTimeout(ctx, beginTimeout)
	tx, err := conn.BeginTx(bctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	cancel()
	if err != nil {
		return err
	}
	rollback := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
		defer cancel()
		_ = tx.Rollback(rctx)
	}
	bodyCtx, cancel := context.WithTimeout(ctx, bodyLimit)
	err = body(bodyCtx, tx)
	cancel()
	if err != nil {
		rollback()
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, commitTimeout)
	defer cancel()
	if err := tx.Commit(cctx); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return err
		}
		return keep(fmt.Errorf("%w: %s", routing.ErrCommitOutcome, op))
	}
	return nil
}

// ownerArgs returns the bucket and owner parameters $1..$5 of owner-conditioned statements.
func ownerArgs(sess *routing.ArchiveSession, extra ...any) []any {
	b := sess.Bucket
	return append([]any{b.TableID, b.PartitionKey, b.Key, sess.Generation, sess.Token}, extra...)
}

func bucketArgs(b routing.BucketID, extra ...any) []any {
	return append([]any{b.TableID, b.PartitionKey, b.Key}, extra...)
}

// connectionLost reports whether SQLSTATE code says the server ended or refused the session
// rather than the statement failing: class 08 (connection exception) and 57P01–57P03
// (admin_shutdown, crash_shutdown, cannot_connect_now: PostgreSQL or a CockroachDB node
// terminating the connection, as in a restart). Those are retriable: ErrUnavailable.
func connectionLost(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
}
