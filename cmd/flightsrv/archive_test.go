package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/pgtest"
	"github.com/flightsrv/flightsrv/routing"
)

// TestArchiveCommandGoesPastAFailingBucket: `flightsrv archive` over a file:// archive with a
// partition value too long for a file name archives every other bucket, exits with an error
// and reports the failed one by table and bucket with a key-free reason.
func TestArchiveCommandGoesPastAFailingBucket(t *testing.T) {
	ctx := context.Background()
	dir, storeURL, st := migratedSQLite(t)
	long := strings.Repeat("L", 130)
	at := time.Date(2001, 2, 5, 10, 0, 0, 0, time.UTC)
	var buckets []routing.BucketID
	for _, pk := range []string{"ATL", long, "ORD"} {
		b := routing.BucketFor("flights", []byte(pk), routing.CalendarMonthUTC, at)
		if err := st.Append(ctx, b, []routing.Record{{PartitionKey: []byte(pk), EventTime: at, SortKey: []byte("1"), Value: []byte("{}")}}); err != nil {
			t.Fatal(err)
		}
		buckets = append(buckets, b)
	}
	err := cmdArchive(ctx, []string{"--store", storeURL, "--archive", filepath.Join(dir, "archive"), "--before", "2001-04-01T00:00:00Z"})
	if err == nil || !strings.Contains(err.Error(), "1 bucket(s) failed") {
		t.Fatalf("archive = %v", err)
	}
	for i, b := range buckets {
		r, err := st.Route(ctx, b)
		want := routing.StateArchived
		if i == 1 {
			want = routing.StateHot
		}
		if err != nil || r.State != want {
			t.Fatalf("bucket %d route = %+v, %v; want %v", i, r, err, want)
		}
	}

	var out bytes.Buffer
	printSummary(&out, archive.RunSummary{Published: 2, Cleaned: 2, Failed: 1, Failures: []archive.ItemFailure{{
		Bucket: buckets[1], Kind: routing.WorkCutover, Deferred: true,
		Err: &archive.KeyLimitError{Part: "partition key", Bytes: 260, Limit: 255}}}})
	want := "archived 2 buckets, cleaned 2, 1 failed:\n" +
		"  table flights, bucket month:2001-02 (cutover, deferred to its retry time): archive: the partition key's object-key segment would be 260 bytes (hex of 130 bytes), beyond the archive's limit of 255 bytes per segment: this bucket cannot be archived under the key scheme\n"
	if out.String() != want {
		t.Fatalf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestMigrateReport: migrate says which migrations it applied, and that none were when the
// schema was already up to date, naming the store for what it is.
func TestMigrateReport(t *testing.T) {
	ctx := context.Background()
	st, err := openStore(ctx, "sqlite://"+filepath.Join(t.TempDir(), "hot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	applied, err := st.ApplyMigrations(ctx)
	if err != nil || len(applied) != 1 || applied[0].Name != "sqlite_v4_bucket_store_baseline" {
		t.Fatalf("first migrate = %d migrations, %v", len(applied), err)
	}
	want := fmt.Sprintf("applied migration %d ", applied[0].Version) + applied[0].Name + " (sha256 " + applied[0].Checksum()[:12] + ")\nSQLite schema is up to date (1 migration(s) applied)\n"
	if got := migrationReport(st.kind, applied); got != want {
		t.Fatalf("report = %q, want %q", got, want)
	}
	again, err := st.ApplyMigrations(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second migrate = %+v, %v", again, err)
	}
	if got := migrationReport(st.kind, again); got != "SQLite schema already up to date: no migration applied\n" {
		t.Fatalf("report = %q", got)
	}
}

// TestStoreNamedForWhatItIs: a postgres:// store that is PostgreSQL is named PostgreSQL (not
// CockroachDB) in migrate's report and in the archive command's log line, which JSON handlers
// and operators read.
func TestStoreNamedForWhatItIs(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Start(t).NewDatabase(t)
	st, err := openStore(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.kind != "PostgreSQL" {
		t.Fatalf("store kind %q, want PostgreSQL", st.kind)
	}
	applied, err := st.ApplyMigrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := migrationReport(st.kind, applied); !strings.HasSuffix(got, "PostgreSQL schema is up to date (1 migration(s) applied)\n") {
		t.Fatalf("migrate report %q", got)
	}
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	if err := cmdArchive(ctx, []string{"--store", url, "--archive", t.TempDir(), "--before", "2001-04-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var line struct{ Msg, Store string }
		if json.Unmarshal([]byte(l), &line) == nil && line.Msg == "archiving due buckets" {
			found = line.Store == "PostgreSQL"
		}
	}
	if !found {
		t.Fatalf("no archive log line naming the store PostgreSQL:\n%s", logs.String())
	}
}

// TestArchiveSettings: the archive command's settings are the reference runner's
// (docs/pulpitum-v4.md §4.2): interval 15 s, lease 60 s, renewal every max(lease/3, 1 s) and
// always shorter than the lease, retry 15 s, scan limit 64, eligible-before Jan 1 of the
// previous UTC year (recomputed at every cycle) unless --before names an instant, which may
// not be in the future; an orphan delay must outlast a lease.
func TestArchiveSettings(t *testing.T) {
	c := defaultArchiveConfig()
	if c.interval != 15*time.Second || c.lease != time.Minute || c.retry != 15*time.Second || c.scanLimit != 64 || c.validate() != nil {
		t.Fatalf("defaults: %+v, %v", c, c.validate())
	}
	now := time.Date(2026, 12, 1, 23, 11, 0, 0, time.FixedZone("X", 5*3600))
	if got, err := c.cutoff(now); err != nil || !got.Equal(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("default cutoff at %v: %v, %v", now, got, err)
	}
	c.before = "2026-04-01"
	if got, err := c.cutoff(now); err != nil || !got.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("--before 2026-04-01: %v, %v", got, err)
	}
	c.before = "2027-01-01T00:00:00Z"
	if _, err := c.cutoff(now); err == nil || !strings.Contains(err.Error(), "in the future") {
		t.Fatalf("a future --before: %v", err)
	}
	for name, change := range map[string]func(*archiveConfig){
		"--renew":        func(c *archiveConfig) { c.renew = c.lease },
		"--lease":        func(c *archiveConfig) { c.lease = 0 },
		"--interval":     func(c *archiveConfig) { c.interval = 0 },
		"--retry":        func(c *archiveConfig) { c.retry = -time.Second },
		"--scan-limit":   func(c *archiveConfig) { c.scanLimit = 0 },
		"--orphan-delay": func(c *archiveConfig) { c.orphanDelay = c.lease },
	} {
		c := defaultArchiveConfig()
		change(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s out of range: %v, want a refusal naming it", name, err)
		}
	}
}
