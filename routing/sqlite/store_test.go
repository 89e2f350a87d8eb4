package sqlite_test

import (
	"errors"
	"strings"
	"time"

	"context"
	"path/filepath"
	"testing"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/migration"

	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db"), RowAggregates: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func migrated(t testing.TB) *sqlite.Store {
	t.Helper()
	s := openStore(t)
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return gauged{migrated(t)} })
}

func TestMigrateAndValidate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	var pending *migration.PendingError
	if err := s.Validate(ctx); !errors.As(err, &pending) || len(pending.Versions) != 1 || pending.Versions[0] != 1 {
		t.Fatalf("Validate before Migrate = %v, want pending version 1", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if err := s.Validate(ctx); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var (
		version   int64
		name, sum string
		applied   int64
	)
	if err := s.DB().QueryRow(`SELECT version, name, checksum, applied_at FROM pulpitum_schema_migrations`).Scan(&version, &name, &sum, &applied); err != nil {
		t.Fatal(err)
	}
	if version != 1 || name != "sqlite_v4_bucket_store_baseline" || sum != migration.Checksum(sqlite.BaselineSQL) {
		t.Fatalf("history = %d %q %s", version, name, sum)
	}
	if d := time.Since(time.UnixMicro(applied)); d < 0 || d > time.Minute {
		t.Fatalf("applied_at is %v ago", d)
	}
	if err := migration.Validate(sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}

	mustExec(t, s, `UPDATE pulpitum_schema_migrations SET checksum = 'x'`)
	var drift *migration.ChecksumDriftError
	if err := s.Validate(ctx); !errors.As(err, &drift) {
		t.Fatalf("Validate with drift = %v", err)
	}
	if err := s.Migrate(ctx); !errors.As(err, &drift) {
		t.Fatalf("Migrate with drift = %v", err)
	}
	mustExec(t, s, `UPDATE pulpitum_schema_migrations SET checksum = ?1`, sum)
	mustExec(t, s, `INSERT INTO pulpitum_schema_migrations VALUES (2, 'future', 'x', 0)`)
	var future *migration.FutureVersionError
	if err := s.Validate(ctx); !errors.As(err, &future) || future.Version != 2 {
		t.Fatalf("Validate with a future version = %v", err)
	}
	mustExec(t, s, `DELETE FROM pulpitum_schema_migrations WHERE version = 2`)
	mustExec(t, s, `ALTER TABLE pulpitum_v4_records RENAME COLUMN value TO payload`)
	var missing *migration.MissingColumnError
	if err := s.Validate(ctx); !errors.As(err, &missing) || missing.Column != "value" {
		t.Fatalf("Validate with a renamed column = %v", err)
	}
}

func TestValidateRejectsPrimaryKeyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	// The baseline with the records key in another order, recorded as if migrated.
	ddl := strings.Replace(sqlite.BaselineSQL, "PRIMARY KEY (table_id, partition_key, bucket_key, event_time, sort_key)",
		"PRIMARY KEY (table_id, partition_key, bucket_key, sort_key, event_time)", 1)
	if ddl == sqlite.BaselineSQL {
		t.Fatal("primary key clause not found in BaselineSQL")
	}
	mustExec(t, s, ddl)
	if err := s.Migrate(ctx); err != nil { // records version 1; CREATE … IF NOT EXISTS keeps the tables
		t.Fatal(err)
	}
	var pk *migration.PrimaryKeyMismatchError
	if err := s.Validate(ctx); !errors.As(err, &pk) || pk.Table != "pulpitum_v4_records" || pk.Actual[3] != "sort_key" {
		t.Fatalf("Validate = %v, want a primary key mismatch", err)
	}
}

func TestSchemaConstraints(t *testing.T) {
	t.Parallel()
	s := migrated(t)
	insert := `INSERT INTO pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key, bucket_strategy,
		bucket_start, bucket_end, state, generation, archive_owner_token, archive_owner_expires_at, archive_object_key, hot_deleted)
		VALUES ('t', x'70', ?1, 'calendar_day_utc', 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`
	for _, tc := range []struct {
		name string
		args []any
		ok   bool
	}{
		{"hot", []any{"a", 1, "hot", 0, nil, nil, nil, 0}, true},
		{"archiving", []any{"b", 1, "archiving", 1, "tok", 5, nil, 0}, true},
		{"archived", []any{"c", 1, "archived", 1, "tok", nil, "m", 1}, true},
		{"unknown state", []any{"d", 1, "frozen", 0, nil, nil, nil, 0}, false},
		{"negative generation", []any{"e", 1, "hot", -1, nil, nil, nil, 0}, false},
		{"reversed bounds", []any{"f", -1, "hot", 0, nil, nil, nil, 0}, false},
		{"hot with token", []any{"g", 1, "hot", 0, "tok", nil, nil, 0}, false},
		{"archiving with key", []any{"h", 1, "archiving", 1, "tok", 5, "m", 0}, false},
		{"archived without key", []any{"i", 1, "archived", 1, "tok", nil, nil, 0}, false},
		{"hot_deleted not boolean", []any{"j", 1, "archived", 1, "tok", nil, "m", 2}, false},
		{"text in an integer column", []any{"k", "soon", "hot", 0, nil, nil, nil, 0}, false},
	} {
		_, err := s.DB().Exec(insert, tc.args...)
		if tc.ok != (err == nil) {
			t.Errorf("%s: error = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if _, err := s.DB().Exec(`INSERT INTO pulpitum_v4_records VALUES ('t', x'70', 'nope', 0, x'6b', x'')`); err == nil {
		t.Fatal("record without metadata accepted: foreign keys are off")
	}
}

func TestClosedAndCancelled(t *testing.T) {
	t.Parallel()
	s := migrated(t)
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := storetest.Drain(s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 1})); !errors.Is(err, context.Canceled) {
		t.Fatalf("ScanRange with a cancelled context = %v", err)
	}
	if err := s.Append(ctx, b, []routing.Record{{PartitionKey: []byte("p"), EventTime: b.Start, SortKey: []byte("k")}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context = %v", err)
	}
	s2, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "closed.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := storetest.Drain(s2.ScanRange(context.Background(), b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 1})); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("ScanRange after Close = %v, want ErrUnavailable", err)
	}
	if err := s2.Append(context.Background(), b, []routing.Record{{PartitionKey: []byte("p"), EventTime: b.Start, SortKey: []byte("k")}}); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("Append after Close = %v, want ErrUnavailable", err)
	}
	if _, err := sqlite.Open(context.Background(), sqlite.Config{Path: "x.db?mode=ro"}); err == nil {
		t.Fatal("Open accepted a path with a query")
	}
	if _, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "missing-dir", "x.db")}); !errors.Is(err, routing.ErrUnavailable) {
		t.Fatalf("Open in a missing directory = %v, want ErrUnavailable", err)
	}
}

// TestReopen checks that data, WAL mode and the schema survive closing and reopening the file.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "reopen.db")
	s, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	want := routing.Record{PartitionKey: []byte("p"), EventTime: b.Start.Add(1500 * time.Microsecond), SortKey: []byte("k"), Value: []byte("v")}
	if err := s.Append(ctx, b, []routing.Record{want}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Validate(ctx); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := s.DB().QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	_, got, err := storetest.Records(ctx, s, b, routing.ReadRequest{Range: b.Range(), Limit: 10})
	if err != nil || len(got) != 1 || !got[0].EventTime.Equal(want.EventTime) || string(got[0].Value) != "v" {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
}

// TestReadsDuringWrites runs readers against a bucket while a writer appends to it: every
// read sees a prefix-closed, ordered set of rows and no read fails with a lock error.
func TestReadsDuringWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := migrated(t)
	b := routing.BucketFor("t", []byte("p"), routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	const batches, per = 40, 50
	done := make(chan error, 1)
	go func() {
		for i := 0; i < batches; i++ {
			var recs []routing.Record
			for j := 0; j < per; j++ {
				recs = append(recs, routing.Record{PartitionKey: []byte("p"), EventTime: b.Start.Add(time.Duration(i*per+j) * time.Millisecond), SortKey: []byte("k"), Value: []byte("v")})
			}
			if err := s.Append(ctx, b, recs); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	reads := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		n, err := storetest.Count(ctx, s, b, b.Range())
		if err != nil {
			t.Fatalf("count during writes: %v", err)
		}
		if n%per != 0 {
			t.Fatalf("count %d is not a whole number of appends: a read saw a partial transaction", n)
		}
		_, got, err := storetest.Records(ctx, s, b, routing.ReadRequest{Range: b.Range(), Limit: 100000, Desc: true})
		if err != nil {
			t.Fatalf("read during writes: %v", err)
		}
		if len(got)%per != 0 {
			t.Fatalf("read %d rows: not a whole number of appends", len(got))
		}
		for i := 1; i < len(got); i++ {
			if !got[i].EventTime.Before(got[i-1].EventTime) {
				t.Fatalf("descending read out of order at %d", i)
			}
		}
		reads++
	}
	if n, _ := storetest.Count(ctx, s, b, b.Range()); n != batches*per {
		t.Fatalf("final count = %d", n)
	}
	t.Logf("%d reads during %d appends", reads, batches)
}

func mustExec(t *testing.T, s *sqlite.Store, query string, args ...any) {
	t.Helper()
	if _, err := s.DB().Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestRowAggregatesOff checks that the row-aggregate port answers routing.ErrNoAggregate
// unless Config.RowAggregates is set (the executor then reads the buckets' rows).
func TestRowAggregatesOff(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	q := routing.RowAggregate{Measures: []routing.RowMeasure{{Func: routing.RowCount}}}
	if _, err := s.AggregateRows(ctx, nil, q); !errors.Is(err, routing.ErrNoAggregate) {
		t.Fatalf("AggregateRows with the port off: %v, want routing.ErrNoAggregate", err)
	}
}
