package cockroach

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing/migration"
)

// Table names of the Pulpitum v4 schema (docs/pulpitum-v4.md §1).
const (
	MetadataTable   = "pulpitum_v4_bucket_metadata"
	RecordsTable    = "pulpitum_v4_records"
	MigrationsTable = "pulpitum_schema_migrations"
)

// ReferenceV4Checksum is the checksum Pulpitum records for migration version 4: the lowercase
// hex SHA-256 of the exact V4_BASELINE_SQL string in pulpitum-tech/pulpitum
// src/adapters/cockroach_schema.rs (commit 6f492e18). Databases migrated by Pulpitum carry it
// in their history, so version 4 accepts it besides the checksum of [V4BaselineSQL].
//
// How it was derived: the Rust string literal (no escapes, no line continuations: its bytes are
// the characters between the quotes, 2,275 bytes, lines joined by "\n", no trailing newline)
// was transcribed twice independently, once from the decoded file text and once from the
// JSON-escaped form returned by the search tool's read_file, and both transcriptions hashed to
// this digest. The literal's bounds were checked against read_file offsets: the file text at
// offset 581 begins with "CREATE TABLE IF NOT EXISTS pulpitum_v4_bucket_metadata (" and the
// text at offset 2856 = 581 + 2275 begins with the closing `";`.
const ReferenceV4Checksum = "302df742b6d7077249d8231d3d053c76661ac2a6cd99b5c01b412617c41fcb16"

// V4BaselineSQL creates the Pulpitum v4 schema: the bucket metadata table (route state,
// archive lease and retry bookkeeping), the records table keyed Cassandra-style by bucket then
// (event_time, sort_key), and the archive discovery index. Table, column, constraint and index
// names are those of the Pulpitum v4 schema, so databases created by either implementation
// are interchangeable. It runs unchanged on CockroachDB and PostgreSQL (TEXT, BYTEA, BIGINT,
// BOOLEAN and TIMESTAMPTZ are CockroachDB aliases of STRING, BYTES, INT8, BOOL, TIMESTAMPTZ).
const V4BaselineSQL = `CREATE TABLE IF NOT EXISTS pulpitum_v4_bucket_metadata (
	table_id                 TEXT        NOT NULL,
	partition_key            BYTEA       NOT NULL,
	bucket_key               TEXT        NOT NULL,
	bucket_strategy          TEXT        NOT NULL,
	bucket_start             TIMESTAMPTZ NOT NULL,
	bucket_end               TIMESTAMPTZ NOT NULL,
	state                    TEXT        NOT NULL DEFAULT 'hot',
	generation               BIGINT      NOT NULL DEFAULT 0,
	archive_owner_token      TEXT        NULL,
	archive_owner_expires_at TIMESTAMPTZ NULL,
	archive_object_key       TEXT        NULL,
	hot_deleted              BOOLEAN     NOT NULL DEFAULT false,
	archive_attempts         BIGINT      NOT NULL DEFAULT 0,
	archive_next_attempt_at  TIMESTAMPTZ NULL,
	PRIMARY KEY (table_id, partition_key, bucket_key),
	CONSTRAINT pulpitum_v4_metadata_state_check CHECK (state IN ('hot', 'archiving', 'archived')),
	CONSTRAINT pulpitum_v4_metadata_generation_check CHECK (generation >= 0),
	CONSTRAINT pulpitum_v4_metadata_bounds_check CHECK (bucket_start < bucket_end),
	CONSTRAINT pulpitum_v4_metadata_invariants CHECK (
		(state = 'hot' AND hot_deleted = false
			AND archive_owner_token IS NULL AND archive_owner_expires_at IS NULL AND archive_object_key IS NULL)
		OR (state = 'archiving' AND hot_deleted = false
			AND archive_owner_token IS NOT NULL AND archive_owner_expires_at IS NOT NULL AND archive_object_key IS NULL)
		OR (state = 'archived'
			AND archive_owner_token IS NOT NULL AND archive_object_key IS NOT NULL)
	)
);
CREATE TABLE IF NOT EXISTS pulpitum_v4_records (
	table_id      TEXT        NOT NULL,
	partition_key BYTEA       NOT NULL,
	bucket_key    TEXT        NOT NULL,
	event_time    TIMESTAMPTZ NOT NULL,
	sort_key      BYTEA       NOT NULL,
	value         BYTEA       NOT NULL,
	PRIMARY KEY (table_id, partition_key, bucket_key, event_time, sort_key),
	CONSTRAINT pulpitum_v4_records_bucket_fk FOREIGN KEY (table_id, partition_key, bucket_key)
		REFERENCES pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key)
);
CREATE INDEX IF NOT EXISTS pulpitum_v4_archive_discovery_idx ON pulpitum_v4_bucket_metadata (
	state, hot_deleted, archive_next_attempt_at, archive_owner_expires_at,
	bucket_end, table_id, partition_key, bucket_key
);`

// createHistorySQL creates the migration history table when absent. It is bookkeeping of the
// migrator itself, not a numbered migration.
const createHistorySQL = `CREATE TABLE IF NOT EXISTS pulpitum_schema_migrations (
	version    BIGINT      NOT NULL PRIMARY KEY,
	name       TEXT        NOT NULL,
	checksum   TEXT        NOT NULL,
	applied_at TIMESTAMPTZ NOT NULL DEFAULT now(),
	CONSTRAINT pulpitum_schema_migrations_version_check CHECK (version >= 0),
	CONSTRAINT pulpitum_schema_migrations_name_unique UNIQUE (name)
)`

// Migrations returns the numbered migrations of the CockroachDB/PostgreSQL hot store, oldest
// first. The first managed version is 4 (versions 1–3 belong to Pulpitum's pre-v4 history and
// are rejected); version 4 is v4_durable_bucket_store_baseline, accepting both the checksum of
// V4BaselineSQL and ReferenceV4Checksum. The returned slice is a fresh copy.
func Migrations() []migration.Migration {
	return []migration.Migration{{
		Version:         4,
		Name:            "v4_durable_bucket_store_baseline",
		SQL:             V4BaselineSQL,
		LegacyChecksums: []string{ReferenceV4Checksum},
	}}
}

// expectedTable is a table Validate requires, with its columns and primary-key order.
type expectedTable struct {
	name       string
	columns    []string
	primaryKey []string
}

var expectedTables = []expectedTable{
	{
		name: MetadataTable,
		columns: []string{"table_id", "partition_key", "bucket_key", "bucket_strategy", "bucket_start", "bucket_end",
			"state", "generation", "archive_owner_token", "archive_owner_expires_at", "archive_object_key",
			"hot_deleted", "archive_attempts", "archive_next_attempt_at"},
		primaryKey: []string{"table_id", "partition_key", "bucket_key"},
	},
	{
		name:       RecordsTable,
		columns:    []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key", "value"},
		primaryKey: []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key"},
	},
}

var (
	sqlReadHistory = register("SELECT pulpitum_schema_migrations", "SELECT", MigrationsTable,
		`SELECT version, name, checksum FROM pulpitum_schema_migrations ORDER BY version`)
	sqlInsertHistory = register("INSERT pulpitum_schema_migrations", "INSERT", MigrationsTable,
		`INSERT INTO pulpitum_schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`)
	sqlHistoryExists = register("SELECT information_schema.tables", "SELECT", "information_schema.tables",
		`SELECT EXISTS (
	SELECT 1 FROM information_schema.tables
	WHERE table_schema::TEXT = current_schema() AND table_name::TEXT = $1::TEXT
)`)
	sqlColumns = register("SELECT information_schema.columns", "SELECT", "information_schema.columns",
		`SELECT column_name::TEXT FROM information_schema.columns
WHERE table_schema::TEXT = current_schema() AND table_name::TEXT = $1::TEXT`)
	sqlPrimaryKey = register("SELECT information_schema.key_column_usage", "SELECT", "information_schema.key_column_usage",
		`SELECT kcu.column_name::TEXT
FROM information_schema.table_constraints AS tc
JOIN information_schema.key_column_usage AS kcu
	ON kcu.constraint_schema = tc.constraint_schema
	AND kcu.constraint_name = tc.constraint_name
	AND kcu.table_name = tc.table_name
WHERE tc.constraint_type = 'PRIMARY KEY'
	AND tc.table_schema::TEXT = current_schema() AND tc.table_name::TEXT = $1::TEXT
ORDER BY kcu.ordinal_position`)
	_ = register("CREATE pulpitum_schema_migrations", "CREATE", MigrationsTable, createHistorySQL)
	_ = register("CREATE pulpitum_v4 schema", "CREATE", MetadataTable, V4BaselineSQL)
)

// Migrate brings the schema up to date: in one SERIALIZABLE transaction (retried on SQLSTATE
// 40001) it creates the history table if absent, reads and plans the history with
// migration.Plan, applies each pending migration's SQL and records its version, name and
// checksum. History errors are the typed errors of package migration ([*migration.GapError],
// [*migration.ChecksumDriftError], …) and nothing is changed; database errors wrap
// routing.ErrOperationFailed or routing.ErrUnavailable. Migrate is for a privileged deployment
// step; a server should call Validate. Concurrent Migrate calls on one database may fail
// and can be retried.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.ApplyMigrations(ctx)
	return err
}

// ApplyMigrations is Migrate returning the migrations it applied, in version order (none when
// the schema was up to date), for the operator's report.
func (s *Store) ApplyMigrations(ctx context.Context) ([]migration.Migration, error) {
	ctx, span := s.startSpan(ctx, "pulpitum.schema.migrate")
	defer span.End()
	var done []migration.Migration
	err := s.inTx(ctx, "migrate schema", func(ctx context.Context, tx pgx.Tx) error {
		done = nil // a retried transaction starts over
		if _, err := tx.Exec(ctx, createHistorySQL); err != nil {
			return err
		}
		applied, err := readHistory(ctx, tx)
		if err != nil {
			return err
		}
		pending, err := migration.Plan(Migrations(), applied)
		if err != nil {
			return keep(err)
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, sqlInsertHistory, m.Version, m.Name, m.Checksum()); err != nil {
				return err
			}
			done = append(done, m)
		}
		return nil
	})
	recordError(span, err)
	if err != nil {
		return nil, err
	}
	return done, nil
}

// Validate is the read-only startup check (docs/pulpitum-v4.md §1.3): the history must plan
// without error and with nothing pending ([*migration.PendingError] otherwise, also when the
// history table is absent), every required column of both tables must exist
// ([*migration.MissingColumnError]) and the primary keys must have the expected columns in
// order ([*migration.PrimaryKeyMismatchError]). It issues no DDL and writes nothing.
func (s *Store) Validate(ctx context.Context) error {
	ctx, span := s.startSpan(ctx, "pulpitum.schema.validate")
	defer span.End()
	err := s.validate(ctx)
	recordError(span, err)
	return err
}

func (s *Store) validate(ctx context.Context) error {
	const op = "validate schema"
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return err
	}
	defer conn.Release()
	var exists bool
	if err := conn.QueryRow(ctx, sqlHistoryExists, MigrationsTable).Scan(&exists); err != nil {
		return s.classify(op, err)
	}
	var applied []migration.Applied
	if exists {
		if applied, err = readHistory(ctx, conn); err != nil {
			return s.classify(op, err)
		}
	}
	if err := migration.RequireCurrent(Migrations(), applied); err != nil {
		return err
	}
	for _, t := range expectedTables {
		cols, err := queryStrings(ctx, conn, sqlColumns, t.name)
		if err != nil {
			return s.classify(op, err)
		}
		for _, c := range t.columns {
			if !slices.Contains(cols, c) {
				return &migration.MissingColumnError{Table: t.name, Column: c}
			}
		}
		pk, err := queryStrings(ctx, conn, sqlPrimaryKey, t.name)
		if err != nil {
			return s.classify(op, err)
		}
		if !slices.Equal(pk, t.primaryKey) {
			return &migration.PrimaryKeyMismatchError{Table: t.name, Expected: slices.Clone(t.primaryKey), Actual: pk}
		}
	}
	return nil
}

// querier is the part of pgx.Tx and *pgxpool.Conn the schema code needs.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func readHistory(ctx context.Context, q querier) ([]migration.Applied, error) {
	rows, err := q.Query(ctx, sqlReadHistory)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (migration.Applied, error) {
		var a migration.Applied
		err := r.Scan(&a.Version, &a.Name, &a.Checksum)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read migration history: %w", err)
	}
	return out, nil
}

func queryStrings(ctx context.Context, q querier, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
