package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/flightsrv/flightsrv/routing/migration"
)

// BaselineSQL creates the SQLite form of the Pulpitum v4 logical schema: the same tables,
// columns, keys, constraints and discovery index, with SQLite types. Tables are STRICT and
// WITHOUT ROWID (clustered by primary key, as in CockroachDB). Bytes are BLOB (compared
// bytewise, like BYTEA), booleans INTEGER 0/1, and timestamps INTEGER microseconds since the
// Unix epoch in UTC, the precision of CockroachDB TIMESTAMPTZ.
const BaselineSQL = `CREATE TABLE IF NOT EXISTS pulpitum_v4_bucket_metadata (
	table_id                 TEXT    NOT NULL,
	partition_key            BLOB    NOT NULL,
	bucket_key               TEXT    NOT NULL,
	bucket_strategy          TEXT    NOT NULL,
	bucket_start             INTEGER NOT NULL, -- µs since the Unix epoch, UTC
	bucket_end               INTEGER NOT NULL,
	state                    TEXT    NOT NULL DEFAULT 'hot',
	generation               INTEGER NOT NULL DEFAULT 0,
	archive_owner_token      TEXT    NULL,
	archive_owner_expires_at INTEGER NULL,
	archive_object_key       TEXT    NULL,
	hot_deleted              INTEGER NOT NULL DEFAULT 0,
	archive_attempts         INTEGER NOT NULL DEFAULT 0,
	archive_next_attempt_at  INTEGER NULL,
	PRIMARY KEY (table_id, partition_key, bucket_key),
	CONSTRAINT pulpitum_v4_metadata_state_check CHECK (state IN ('hot', 'archiving', 'archived')),
	CONSTRAINT pulpitum_v4_metadata_generation_check CHECK (generation >= 0),
	CONSTRAINT pulpitum_v4_metadata_bounds_check CHECK (bucket_start < bucket_end),
	CONSTRAINT pulpitum_v4_metadata_hot_deleted_check CHECK (hot_deleted IN (0, 1)),
	CONSTRAINT pulpitum_v4_metadata_invariants CHECK (
		(state = 'hot' AND hot_deleted = 0
			AND archive_owner_token IS NULL AND archive_owner_expires_at IS NULL AND archive_object_key IS NULL)
		OR (state = 'archiving' AND hot_deleted = 0
			AND archive_owner_token IS NOT NULL AND archive_owner_expires_at IS NOT NULL AND archive_object_key IS NULL)
		OR (state = 'archived'
			AND archive_owner_token IS NOT NULL AND archive_object_key IS NOT NULL)
	)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pulpitum_v4_records (
	table_id      TEXT    NOT NULL,
	partition_key BLOB    NOT NULL,
	bucket_key    TEXT    NOT NULL,
	event_time    INTEGER NOT NULL, -- µs since the Unix epoch, UTC
	sort_key      BLOB    NOT NULL,
	value         BLOB    NOT NULL,
	PRIMARY KEY (table_id, partition_key, bucket_key, event_time, sort_key),
	CONSTRAINT pulpitum_v4_records_bucket_fk FOREIGN KEY (table_id, partition_key, bucket_key)
		REFERENCES pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pulpitum_v4_archive_discovery_idx ON pulpitum_v4_bucket_metadata (
	state, hot_deleted, archive_next_attempt_at, archive_owner_expires_at,
	bucket_end, table_id, partition_key, bucket_key
);`

const createHistorySQL = `CREATE TABLE IF NOT EXISTS pulpitum_schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY CHECK (version >= 0),
	name       TEXT    NOT NULL UNIQUE,
	checksum   TEXT    NOT NULL,
	applied_at INTEGER NOT NULL -- µs since the Unix epoch, UTC
) STRICT`

// Migrations returns the numbered migrations of the SQLite store, oldest first: version 1,
// sqlite_v4_bucket_store_baseline, whose SQL is BaselineSQL. The numbering is the SQLite
// store's own (it has no Pulpitum history). The returned slice is a fresh copy.
func Migrations() []migration.Migration {
	return []migration.Migration{{Version: 1, Name: "sqlite_v4_bucket_store_baseline", SQL: BaselineSQL}}
}

type expectedTable struct {
	name       string
	columns    []string
	primaryKey []string
}

var expectedTables = []expectedTable{
	{
		name: "pulpitum_v4_bucket_metadata",
		columns: []string{"table_id", "partition_key", "bucket_key", "bucket_strategy", "bucket_start", "bucket_end",
			"state", "generation", "archive_owner_token", "archive_owner_expires_at", "archive_object_key",
			"hot_deleted", "archive_attempts", "archive_next_attempt_at"},
		primaryKey: []string{"table_id", "partition_key", "bucket_key"},
	},
	{
		name:       "pulpitum_v4_records",
		columns:    []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key", "value"},
		primaryKey: []string{"table_id", "partition_key", "bucket_key", "event_time", "sort_key"},
	},
}

// Migrate brings the schema up to date in one write transaction (SQLite transactions are
// serializable): it creates the history table if absent, plans the history with
// migration.Plan, applies each pending migration and records its version, name, checksum and
// time. History errors are the typed errors of package migration and nothing is changed;
// database errors wrap routing.ErrOperationFailed or routing.ErrUnavailable.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.ApplyMigrations(ctx)
	return err
}

// ApplyMigrations is Migrate returning the migrations it applied, in version order (none when
// the schema was up to date), for the operator's report.
func (s *Store) ApplyMigrations(ctx context.Context) ([]migration.Migration, error) {
	var done []migration.Migration
	err := s.inTx(ctx, "migrate schema", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.exec(ctx, tx, createHistorySQL); err != nil {
			return err
		}
		applied, err := s.readHistory(ctx, tx)
		if err != nil {
			return err
		}
		pending, err := migration.Plan(Migrations(), applied)
		if err != nil {
			return keep(err)
		}
		for _, m := range pending {
			if _, err := s.exec(ctx, tx, m.SQL); err != nil {
				return err
			}
			if _, err := s.exec(ctx, tx, `INSERT INTO pulpitum_schema_migrations (version, name, checksum, applied_at) VALUES (?1, ?2, ?3, ?4)`,
				m.Version, m.Name, m.Checksum(), micros(s.clock())); err != nil {
				return err
			}
			done = append(done, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// Validate is the read-only startup check: the history must plan without error and with
// nothing pending ([*migration.PendingError], also when the history table is absent), both
// tables must have every required column ([*migration.MissingColumnError]) and the expected
// primary-key order ([*migration.PrimaryKeyMismatchError]). It writes nothing.
func (s *Store) Validate(ctx context.Context) error {
	const op = "validate schema"
	var exists bool
	if err := s.queryRow(ctx, s.r, `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'pulpitum_schema_migrations')`,
		nil, &exists); err != nil {
		return s.classify(op, err)
	}
	var applied []migration.Applied
	if exists {
		var err error
		if applied, err = s.readHistory(ctx, s.r); err != nil {
			return s.classify(op, err)
		}
	}
	if err := migration.RequireCurrent(Migrations(), applied); err != nil {
		return err
	}
	for _, t := range expectedTables {
		cols, pk, err := s.tableInfo(ctx, t.name)
		if err != nil {
			return s.classify(op, err)
		}
		for _, c := range t.columns {
			if !slices.Contains(cols, c) {
				return &migration.MissingColumnError{Table: t.name, Column: c}
			}
		}
		if !slices.Equal(pk, t.primaryKey) {
			return &migration.PrimaryKeyMismatchError{Table: t.name, Expected: slices.Clone(t.primaryKey), Actual: pk}
		}
	}
	return nil
}

// queryer is the part of *sql.DB and *sql.Tx the store uses for queries.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *Store) readHistory(ctx context.Context, q queryer) ([]migration.Applied, error) {
	s.count(ctx)
	rows, err := q.QueryContext(ctx, `SELECT version, name, checksum FROM pulpitum_schema_migrations ORDER BY version`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []migration.Applied
	for rows.Next() {
		var a migration.Applied
		if err := rows.Scan(&a.Version, &a.Name, &a.Checksum); err != nil {
			return nil, fmt.Errorf("read migration history: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// tableInfo returns a table's column names and its primary-key columns in key order.
func (s *Store) tableInfo(ctx context.Context, table string) (cols, pk []string, err error) {
	s.count(ctx)
	rows, err := s.r.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?1)`, table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	type key struct {
		name string
		pos  int
	}
	var keys []key
	for rows.Next() {
		var (
			name string
			pos  int
		)
		if err := rows.Scan(&name, &pos); err != nil {
			return nil, nil, err
		}
		cols = append(cols, name)
		if pos > 0 {
			keys = append(keys, key{name, pos})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(keys, func(a, b key) int { return a.pos - b.pos })
	for _, k := range keys {
		pk = append(pk, k.name)
	}
	return cols, pk, nil
}
