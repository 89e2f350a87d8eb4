package cockroach_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/migration"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openStore opens a store on a fresh database of the shared test server, without migrating.
func openStore(t *testing.T, cfg cockroach.Config) *cockroach.Store {
	t.Helper()
	if cfg.URL == "" {
		cfg.URL = pgtest.Start(t).NewDatabase(t)
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = 4
	}
	s, err := cockroach.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func migrated(t *testing.T, cfg cockroach.Config) *cockroach.Store {
	t.Helper()
	s := openStore(t, cfg)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return gauged{migrated(t, cockroach.Config{MaxConns: 8})} })
}

// recorder is a pgx.QueryTracer that keeps the text of every statement.
type recorder struct {
	mu  sync.Mutex
	sql []string
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sql = append(r.sql, d.SQL)
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sql
	r.sql = nil
	return out
}

func TestMigrateAndValidate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	s := openStore(t, cockroach.Config{Tracer: rec})

	var pending *migration.PendingError
	if err := s.Validate(ctx); !errors.As(err, &pending) || len(pending.Versions) != 1 || pending.Versions[0] != 4 {
		t.Fatalf("Validate before Migrate = %v, want pending version 4", err)
	}
	for _, sql := range rec.take() {
		if isDDL(sql) {
			t.Fatalf("Validate sent DDL: %s", sql)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if err := s.Validate(ctx); err != nil {
		t.Fatalf("Validate after Migrate: %v", err)
	}
	rec.take()
	if err := s.Validate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sql := range rec.take() {
		if isDDL(sql) || !strings.HasPrefix(strings.TrimSpace(sql), "SELECT") {
			t.Fatalf("Validate sent a statement that is not a SELECT: %s", sql)
		}
	}

	var version int64
	var name, checksum string
	if err := s.Pool().QueryRow(ctx, "SELECT version, name, checksum FROM pulpitum_schema_migrations").Scan(&version, &name, &checksum); err != nil {
		t.Fatal(err)
	}
	if version != 4 || name != "v4_durable_bucket_store_baseline" || checksum != migration.Checksum(cockroach.V4BaselineSQL) {
		t.Fatalf("history row = %d %q %s", version, name, checksum)
	}

	// A database migrated by Pulpitum records the checksum of the reference's SQL text.
	exec(t, s, "UPDATE pulpitum_schema_migrations SET checksum = $1 WHERE version = 4", cockroach.ReferenceV4Checksum)
	if err := s.Validate(ctx); err != nil {
		t.Fatalf("Validate with the reference checksum: %v", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate with the reference checksum: %v", err)
	}

	exec(t, s, "UPDATE pulpitum_schema_migrations SET checksum = $1 WHERE version = 4", strings.Repeat("0", 64))
	var drift *migration.ChecksumDriftError
	if err := s.Validate(ctx); !errors.As(err, &drift) || drift.Version != 4 {
		t.Fatalf("Validate with a drifted checksum = %v", err)
	}
	if err := s.Migrate(ctx); !errors.As(err, &drift) {
		t.Fatalf("Migrate with a drifted checksum = %v", err)
	}
	exec(t, s, "UPDATE pulpitum_schema_migrations SET checksum = $1 WHERE version = 4", checksum)

	exec(t, s, "INSERT INTO pulpitum_schema_migrations (version, name, checksum) VALUES (5, 'from the future', 'x')")
	var future *migration.FutureVersionError
	if err := s.Validate(ctx); !errors.As(err, &future) || future.Version != 5 {
		t.Fatalf("Validate with a future version = %v", err)
	}
	if err := s.Migrate(ctx); !errors.As(err, &future) {
		t.Fatalf("Migrate with a future version = %v", err)
	}
	exec(t, s, "DELETE FROM pulpitum_schema_migrations WHERE version = 5")

	exec(t, s, "INSERT INTO pulpitum_schema_migrations (version, name, checksum) VALUES (3, 'v3', 'x')")
	var historical *migration.UnsupportedHistoricalVersionError
	if err := s.Validate(ctx); !errors.As(err, &historical) || historical.Version != 3 {
		t.Fatalf("Validate with version 3 = %v", err)
	}
	exec(t, s, "DELETE FROM pulpitum_schema_migrations WHERE version = 3")

	exec(t, s, "ALTER TABLE pulpitum_v4_records RENAME COLUMN value TO payload")
	var missing *migration.MissingColumnError
	if err := s.Validate(ctx); !errors.As(err, &missing) || missing.Table != "pulpitum_v4_records" || missing.Column != "value" {
		t.Fatalf("Validate with a renamed column = %v", err)
	}
	exec(t, s, "ALTER TABLE pulpitum_v4_records RENAME COLUMN payload TO value")
	if err := s.Validate(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejectsPrimaryKeyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := migrated(t, cockroach.Config{})
	exec(t, s, "ALTER TABLE pulpitum_v4_records DROP CONSTRAINT pulpitum_v4_records_pkey")
	exec(t, s, "ALTER TABLE pulpitum_v4_records ADD PRIMARY KEY (table_id, partition_key, bucket_key, sort_key, event_time)")
	var pk *migration.PrimaryKeyMismatchError
	if err := s.Validate(ctx); !errors.As(err, &pk) || pk.Table != "pulpitum_v4_records" || pk.Actual[3] != "sort_key" {
		t.Fatalf("Validate with a reordered primary key = %v", err)
	}
}

func TestMigrationsList(t *testing.T) {
	t.Parallel()
	ms := cockroach.Migrations()
	if err := migration.Validate(ms); err != nil {
		t.Fatal(err)
	}
	if ms[0].Version != 4 || ms[0].Name != "v4_durable_bucket_store_baseline" {
		t.Fatalf("first migration = %d %q", ms[0].Version, ms[0].Name)
	}
	ref := cockroach.ReferenceV4Checksum
	if len(ref) != 64 || strings.Trim(ref, "0123456789abcdef") != "" || ref == ms[0].Checksum() {
		t.Fatalf("reference checksum %q is not a distinct lowercase hex SHA-256", ref)
	}
	pending, err := migration.Plan(ms, []migration.Applied{{Version: 4, Name: ms[0].Name, Checksum: ref}})
	if err != nil || len(pending) != 0 {
		t.Fatalf("Plan with the reference checksum = %v, %v", pending, err)
	}
	for _, word := range []string{" STRING", " BYTES", " INT8", " BOOL "} {
		if strings.Contains(cockroach.V4BaselineSQL, word) {
			t.Fatalf("baseline SQL uses the CockroachDB-only spelling %q", word)
		}
	}
}

// TestSchemaConstraints checks the CHECK constraints and the foreign key of the v4 schema.
func TestSchemaConstraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := migrated(t, cockroach.Config{})
	insert := `INSERT INTO pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key, bucket_strategy,
		bucket_start, bucket_end, state, generation, archive_owner_token, archive_owner_expires_at, archive_object_key, hot_deleted)
		VALUES ('t', 'p', $1, 'calendar_day_utc', '2024-01-01', $2, $3, $4, $5, $6, $7, $8)`
	future := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name string
		args []any
		ok   bool
	}{
		{"hot", []any{"a", "2024-01-02", "hot", 0, nil, nil, nil, false}, true},
		{"archiving", []any{"b", "2024-01-02", "archiving", 1, "tok", future, nil, false}, true},
		{"archived", []any{"c", "2024-01-02", "archived", 1, "tok", nil, "m", true}, true},
		{"unknown state", []any{"d", "2024-01-02", "frozen", 0, nil, nil, nil, false}, false},
		{"negative generation", []any{"e", "2024-01-02", "hot", -1, nil, nil, nil, false}, false},
		{"reversed bounds", []any{"f", "2023-12-31", "hot", 0, nil, nil, nil, false}, false},
		{"hot with token", []any{"g", "2024-01-02", "hot", 0, "tok", nil, nil, false}, false},
		{"hot deleted while hot", []any{"h", "2024-01-02", "hot", 0, nil, nil, nil, true}, false},
		{"archiving without expiry", []any{"i", "2024-01-02", "archiving", 1, "tok", nil, nil, false}, false},
		{"archiving with key", []any{"j", "2024-01-02", "archiving", 1, "tok", future, "m", false}, false},
		{"archived without key", []any{"k", "2024-01-02", "archived", 1, "tok", nil, nil, false}, false},
		{"archived without token", []any{"l", "2024-01-02", "archived", 1, nil, nil, "m", false}, false},
	} {
		_, err := s.Pool().Exec(ctx, insert, tc.args...)
		var pgErr *pgconn.PgError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.As(err, &pgErr) || pgErr.Code != "23514"):
			t.Errorf("%s: error = %v, want a check violation", tc.name, err)
		}
	}
	_, err := s.Pool().Exec(ctx, `INSERT INTO pulpitum_v4_records VALUES ('t', 'p', 'nope', now(), 'k', 'v')`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Fatalf("record without metadata: %v, want a foreign key violation", err)
	}
	// A row breaking the reader invariants (possible only without the constraints) is an error.
	exec(t, s, "ALTER TABLE pulpitum_v4_bucket_metadata DROP CONSTRAINT pulpitum_v4_metadata_invariants")
	exec(t, s, `UPDATE pulpitum_v4_bucket_metadata SET archive_object_key = NULL WHERE bucket_key = 'c'`)
	b := routing.BucketID{TableID: "t", PartitionKey: []byte("p"), Strategy: routing.CalendarDayUTC, Key: "day:2024-01-01",
		Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}
	exec(t, s, `UPDATE pulpitum_v4_bucket_metadata SET bucket_key = 'day:2024-01-01' WHERE bucket_key = 'c'`)
	if err := storetest.Drain(s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 1})); !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("ScanRange of an archived row without key = %v, want ErrOperationFailed", err)
	}
}

// TestReadIsOneRoutedStatement checks the statement shapes the pushdown relies on.
func TestReadIsOneRoutedStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC))
	rec.take() // the migration's statements
	if err := s.Append(ctx, b, []routing.Record{{PartitionKey: []byte("p"), EventTime: b.Start, SortKey: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	appendSQL := rec.take()
	if len(appendSQL) != 6 || !strings.HasPrefix(appendSQL[0], "begin isolation level serializable") || appendSQL[5] != "commit" {
		t.Fatalf("append statements = %q", appendSQL)
	}
	for _, sql := range appendSQL {
		if strings.Contains(sql, "'p'") || strings.Contains(sql, "day:2024") {
			t.Fatalf("append statement is not parameterised: %s", sql)
		}
	}

	if err := storetest.Drain(s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 5})); err != nil {
		t.Fatal(err)
	}
	read := rec.take()
	if len(read) != 1 || !strings.Contains(read[0], "UNION ALL") || !strings.Contains(read[0], "pulpitum_v4_bucket_metadata") {
		t.Fatalf("ScanRange statements = %q", read)
	}
	aggregate := func(req routing.AggregateRequest) {
		t.Helper()
		_, rd, err := s.AggregateRange(ctx, b, req)
		if err != nil {
			t.Fatal(err)
		}
		rd.Release()
	}
	aggregate(routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.CountStar}})
	count := rec.take()
	if len(count) != 1 || !strings.Contains(count[0], "count(*)") {
		t.Fatalf("AggregateRange statements = %q", count)
	}
	for _, col := range []string{"value", "sort_key"} {
		if strings.Contains(count[0], col) {
			t.Fatalf("AggregateRange statement mentions %s:\n%s", col, count[0])
		}
	}
	aggregate(routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.MinTime, routing.MaxTime}})
	mm := rec.take()
	if len(mm) != 1 || strings.Count(mm[0], "LIMIT 1") != 2 ||
		!strings.Contains(mm[0], "ORDER BY rec.event_time ASC") || !strings.Contains(mm[0], "ORDER BY rec.event_time DESC") ||
		!strings.Contains(mm[0], "route.state <> 'archived'") || strings.Contains(mm[0], "count(") || strings.Contains(mm[0], "min(") ||
		strings.Contains(mm[0], "value") || strings.Contains(mm[0], "sort_key") {
		t.Fatalf("MIN/MAX AggregateRange statements = %q", mm)
	}
}

// TestSerializationFailuresAreRetried forces SQLSTATE 40001 with concurrent first appends and
// checks that they all succeed.
func TestSerializationFailuresAreRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	s := migrated(t, cockroach.Config{Tracer: rec, MaxConns: 8})
	for round := 0; round < 5; round++ {
		b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1+round, 0, 0, 0, 0, time.UTC))
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Append(ctx, b, []routing.Record{{PartitionKey: []byte("p"), EventTime: b.Start.Add(time.Duration(i) * time.Second), SortKey: []byte("k"), Value: []byte("v")}})
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if n, err := storetest.Count(ctx, s, b, b.Range()); err != nil || n != 6 {
			t.Fatalf("round %d: count = %d, %v", round, n, err)
		}
	}
	t.Logf("30 appends took %d transactions", begins(rec.take()))
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: connection refused.
	_, err := cockroach.Open(context.Background(), cockroach.Config{URL: "postgres://postgres@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"})
	if !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("Open of an unreachable server = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error reveals the address: %v", err)
	}
	_, err = cockroach.Open(context.Background(), cockroach.Config{URL: "postgres://user:hunter2@host:notaport/db"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("Open with a bad URL = %v", err)
	}

	s := migrated(t, cockroach.Config{})
	s.Close()
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	if err := storetest.Drain(s.ScanRange(context.Background(), b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 1})); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("ScanRange on a closed pool = %v, want ErrUnavailable", err)
	}
	if err := s.Append(context.Background(), b, []routing.Record{{PartitionKey: []byte("p"), EventTime: b.Start, SortKey: []byte("k")}}); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("Append on a closed pool = %v, want ErrUnavailable", err)
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	s := migrated(t, cockroach.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	err := storetest.Drain(s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 1}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ScanRange with a cancelled context = %v, want context.Canceled", err)
	}
}

func exec(t *testing.T, s *cockroach.Store, sql string, args ...any) {
	t.Helper()
	if _, err := s.Pool().Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func isDDL(sql string) bool {
	w, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(sql)), " ")
	switch w {
	case "CREATE", "ALTER", "DROP", "GRANT", "REVOKE", "TRUNCATE", "INSERT", "UPDATE", "DELETE":
		return true
	}
	return false
}

// TestProductAndAppliedMigrations: the store names the server it talks to (PostgreSQL here),
// and ApplyMigrations reports the baseline once, then nothing.
func TestProductAndAppliedMigrations(t *testing.T) {
	s := openStore(t, cockroach.Config{})
	if got := s.Product(); got != "PostgreSQL" {
		t.Fatalf("Product = %q", got)
	}
	ctx := context.Background()
	applied, err := s.ApplyMigrations(ctx)
	if err != nil || len(applied) != 1 || applied[0].Version != 4 || applied[0].Name != "v4_durable_bucket_store_baseline" {
		t.Fatalf("first ApplyMigrations = %d, %v", len(applied), err)
	}
	if again, err := s.ApplyMigrations(ctx); err != nil || len(again) != 0 {
		t.Fatalf("second ApplyMigrations = %d, %v", len(again), err)
	}
}

// injectFailures installs statement triggers on the records and metadata tables of s's
// database that raise SQLSTATE code on the first n INSERTs into the records table
// (records = true) or UPDATEs of the metadata table (records = false) from now on. The count
// is a sequence, which a rolled-back transaction does not undo, so each attempt of a retried
// transaction consumes one.
func injectFailures(t *testing.T, s *cockroach.Store, records bool, n int, code string) {
	t.Helper()
	exec(t, s, `CREATE TABLE IF NOT EXISTS test_fail_budget (n INT8 NOT NULL, code TEXT NOT NULL)`)
	exec(t, s, `CREATE SEQUENCE IF NOT EXISTS test_fail_seq`)
	exec(t, s, `CREATE OR REPLACE FUNCTION test_fail_first() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE b RECORD;
BEGIN
	SELECT n, code INTO b FROM test_fail_budget;
	IF nextval('test_fail_seq') <= b.n THEN
		RAISE EXCEPTION 'injected failure' USING ERRCODE = b.code;
	END IF;
	RETURN NULL;
END $$`)
	exec(t, s, `DROP TRIGGER IF EXISTS test_fail_records ON pulpitum_v4_records`)
	exec(t, s, `DROP TRIGGER IF EXISTS test_fail_metadata ON pulpitum_v4_bucket_metadata`)
	if records {
		exec(t, s, `CREATE TRIGGER test_fail_records BEFORE INSERT ON pulpitum_v4_records FOR EACH STATEMENT EXECUTE FUNCTION test_fail_first()`)
	} else {
		exec(t, s, `CREATE TRIGGER test_fail_metadata BEFORE UPDATE ON pulpitum_v4_bucket_metadata FOR EACH STATEMENT EXECUTE FUNCTION test_fail_first()`)
	}
	exec(t, s, `DELETE FROM test_fail_budget`)
	exec(t, s, `INSERT INTO test_fail_budget (n, code) VALUES ($1, $2)`, n, code)
	exec(t, s, `SELECT setval('test_fail_seq', 1, false)`)
}

// begins counts the transactions among recorded statements.
func begins(sqls []string) int {
	n := 0
	for _, sql := range sqls {
		if strings.HasPrefix(strings.ToLower(sql), "begin") {
			n++
		}
	}
	return n
}

// TestSerializationFailureRetriesTheWholeTransaction: SQLSTATE 40001 raised by the database
// inside a mutation (CockroachDB's "restart transaction") makes the adapter run the whole
// transaction again, as CockroachDB requires, up to five attempts (docs/pulpitum-v4.md
// §3.1): an append whose first two inserts fail commits on its third transaction with each
// record once; a claim whose first update fails commits on its second with generation 1 (the
// failed attempt left nothing); five failures in a row give ErrOperationFailed after exactly
// five transactions and write nothing; another SQLSTATE (a check violation, 23514) is not
// retried. The failures are injected by triggers, so every count is exact.
func TestSerializationFailureRetriesTheWholeTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	s := migrated(t, cockroach.Config{Tracer: rec})
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	record := func(i int) routing.Record {
		return routing.Record{PartitionKey: []byte("p"), EventTime: b.Start.Add(time.Duration(i) * time.Second), SortKey: []byte("k"), Value: []byte("v")}
	}
	count := func() uint64 {
		t.Helper()
		n, err := storetest.Count(ctx, s, b, b.Range())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	injectFailures(t, s, true, 2, "40001")
	rec.take()
	if err := s.Append(ctx, b, []routing.Record{record(0), record(1)}); err != nil {
		t.Fatalf("append after two serialization failures: %v", err)
	}
	if n := begins(rec.take()); n != 3 {
		t.Errorf("append took %d transactions, want 3", n)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d records after the retried append, want 2", n)
	}

	injectFailures(t, s, true, 5, "40001")
	rec.take()
	err := s.Append(ctx, b, []routing.Record{record(2)})
	if !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("append failing five times: %v, want ErrOperationFailed", err)
	}
	if n := begins(rec.take()); n != 5 {
		t.Errorf("the failing append took %d transactions, want 5", n)
	}
	if strings.Contains(err.Error(), "injected") || strings.Contains(err.Error(), "pulpitum_v4") {
		t.Errorf("the error carries the database's text: %v", err)
	}

	injectFailures(t, s, true, 1, "23514")
	rec.take()
	if err := s.Append(ctx, b, []routing.Record{record(3)}); !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("append failing with 23514: %v, want ErrOperationFailed", err)
	}
	if n := begins(rec.take()); n != 1 {
		t.Errorf("a check violation was retried: %d transactions", n)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d records after the failed appends, want still 2", n)
	}

	injectFailures(t, s, false, 1, "40001")
	rec.take()
	sess, err := s.ClaimArchive(ctx, b, time.Minute)
	if err != nil || sess == nil {
		t.Fatalf("claim after a serialization failure: %v, %v", sess, err)
	}
	if n := begins(rec.take()); n != 2 {
		t.Errorf("claim took %d transactions, want 2", n)
	}
	if sess.Generation != 1 {
		t.Errorf("claim generation %d, want 1: the failed attempt must leave nothing", sess.Generation)
	}
	if r, err := s.Route(ctx, b); err != nil || r.State != routing.StateArchiving || r.Generation != 1 {
		t.Fatalf("route after the claim: %+v, %v", r, err)
	}
}
