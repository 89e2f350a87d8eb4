package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// TestServeRefusesContradictingTables runs `serve` itself (the check lives in the command,
// where it once never ran) against a store holding month buckets of table id
// flightsrv.demo.flights: a --table with another strategy, or without the id, is refused
// before listening, with a message saying what differs; a matching one passes the check.
func TestServeRefusesContradictingTables(t *testing.T) {
	ctx := context.Background()
	dir, storeURL, st := migratedSQLite(t)
	at := time.Date(2001, 3, 5, 10, 0, 0, 0, time.UTC)
	b := routing.BucketFor("flightsrv.demo.flights", []byte("ORD"), routing.CalendarMonthUTC, at)
	if err := st.Append(ctx, b, []routing.Record{{PartitionKey: []byte("ORD"), EventTime: at, SortKey: []byte("1"), Value: []byte("{}")}}); err != nil {
		t.Fatal(err)
	}
	serve := func(table string) error {
		return cmdServe(ctx, []string{"--store", storeURL, "--archive", filepath.Join(dir, "archive"),
			"--listen", "127.0.0.1:0", "--no-auth", "--table", table})
	}
	for _, tc := range []struct{ table, want string }{
		{"name=flights,id=flightsrv.demo.flights,partition=origin,strategy=year",
			`table flights: --table says strategy=year, but the store holds month buckets of table id "flightsrv.demo.flights"`},
		{"name=flights,partition=origin,strategy=month",
			`table flights: the store holds no bucket of table id "flights", but it holds table ids that no --table serves: "flightsrv.demo.flights" (month); give the table's id with id= in --table`},
	} {
		err := serve(tc.table)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("serve --table %s = %v\nwant an error containing %q", tc.table, err, tc.want)
		}
	}
	ok := []tableFlags{
		{{Name: "flights", TableID: "flightsrv.demo.flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2}},
		// An empty table beside the served one is fine: every stored id is served.
		{{Name: "flights", TableID: "flightsrv.demo.flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2},
			{Name: "messages", TableID: "messages", PartitionColumn: "channel_id", Strategy: routing.CalendarYearUTC, WritableBuckets: 2}},
	}
	for _, tables := range ok {
		if err := checkTables(ctx, st, tables); err != nil {
			t.Fatalf("checkTables(%v) = %v", tables, err)
		}
	}
}

// migratedSQLite opens a migrated SQLite store in a new temporary directory, closed when the
// test ends, and returns the directory, the store's URL and the store.
func migratedSQLite(t *testing.T) (dir, storeURL string, st *openedStore) {
	t.Helper()
	dir = t.TempDir()
	storeURL = "sqlite://" + filepath.Join(dir, "hot.db")
	st, err := openStore(context.Background(), storeURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, storeURL, st
}

// parseServe parses serve's flags args (with --no-auth and one table) and validates them.
func parseServe(args ...string) (serveConfig, error) {
	var cfg serveConfig
	fs := newFlags("serve")
	cfg.register(fs, true)
	if err := parse(fs, append([]string{"--no-auth"}, args...)); err != nil {
		return cfg, err
	}
	_ = cfg.tables.Set("name=flights,partition=origin,strategy=month")
	return cfg, cfg.validate()
}

// TestArchiveCheckFlags: --payload-check-interval and --damage-memory default to the archive
// reader's and the tables' defaults, take durations (FLIGHTSRV_DAMAGE_MEMORY too), and a
// negative damage memory is refused (0 is the default, as for a serveConfig built in code).
func TestArchiveCheckFlags(t *testing.T) {
	parsed := parseServe
	cfg, err := parsed()
	if err != nil || cfg.payloadCheck != archive.DefaultPayloadCheckInterval || cfg.damageMemory != routing.DamageMemory {
		t.Fatalf("defaults: %v %v, %v", cfg.payloadCheck, cfg.damageMemory, err)
	}
	cfg, err = parsed("--payload-check-interval", "1m", "--damage-memory", "30s")
	if err != nil || cfg.payloadCheck != time.Minute || cfg.damageMemory != 30*time.Second {
		t.Fatalf("flags: %v %v, %v", cfg.payloadCheck, cfg.damageMemory, err)
	}
	t.Setenv("FLIGHTSRV_DAMAGE_MEMORY", "1h")
	if cfg, err = parsed(); err != nil || cfg.damageMemory != time.Hour {
		t.Fatalf("environment: %v, %v", cfg.damageMemory, err)
	}
	if _, err := parsed("--damage-memory", "-1m"); err == nil || !strings.Contains(err.Error(), "--damage-memory") {
		t.Errorf("--damage-memory -1m: %v, want a refusal naming the flag", err)
	}
	if cfg, err := parsed("--damage-memory", "0s"); err != nil || cfg.damageMemory != 0 {
		t.Errorf("--damage-memory 0s (the default): %v, %v", cfg.damageMemory, err)
	}
}

// TestHealthIntervalFlag: --health-interval defaults to server.DefaultHealthInterval, takes a
// duration, and cannot be off (a negative interval is refused, naming the flag).
func TestHealthIntervalFlag(t *testing.T) {
	parsed := parseServe
	if cfg, err := parsed(); err != nil || cfg.healthInterval != server.DefaultHealthInterval {
		t.Fatalf("default: %v, %v", cfg.healthInterval, err)
	}
	if cfg, err := parsed("--health-interval", "250ms"); err != nil || cfg.healthInterval != 250*time.Millisecond {
		t.Fatalf("--health-interval 250ms: %v, %v", cfg.healthInterval, err)
	}
	if _, err := parsed("--health-interval", "-1s"); err == nil || !strings.Contains(err.Error(), "--health-interval") {
		t.Fatalf("--health-interval -1s: %v, want a refusal naming the flag", err)
	}
}

// TestShredCacheFlags: the shredded-column cache is off by default, --shred-cache names its
// directory (FLIGHTSRV_SHRED_CACHE too), --shred-cache-size takes GOMEMLIMIT's syntax with a
// 1 GiB default and refuses 0, negative and malformed sizes naming the flag.
func TestShredCacheFlags(t *testing.T) {
	cfg, err := parseServe()
	if err != nil || cfg.shredCache != "" || cfg.shredCacheSize != defaultShredCacheSize {
		t.Fatalf("defaults: %q %d, %v", cfg.shredCache, cfg.shredCacheSize, err)
	}
	cfg, err = parseServe("--shred-cache", "/var/cache/flightsrv", "--shred-cache-size", "512MiB")
	if err != nil || cfg.shredCache != "/var/cache/flightsrv" || cfg.shredCacheSize != 512<<20 {
		t.Fatalf("flags: %q %d, %v", cfg.shredCache, cfg.shredCacheSize, err)
	}
	t.Setenv("FLIGHTSRV_SHRED_CACHE", "/tmp/shreds")
	if cfg, err = parseServe(); err != nil || cfg.shredCache != "/tmp/shreds" {
		t.Fatalf("FLIGHTSRV_SHRED_CACHE: %q, %v", cfg.shredCache, err)
	}
	for _, bad := range []string{"0", "-1MiB", "12 parsecs"} {
		if _, err := parseServe("--shred-cache-size", bad); err == nil || !strings.Contains(err.Error(), "shred-cache-size") {
			t.Errorf("--shred-cache-size %s: %v, want a refusal naming the flag", bad, err)
		}
	}
}

// TestArchiveFileDir: the directories serve's archive reader reads a file:// archive from
// directly (archive.ReaderOptions.FileDir), as fileblob resolves the same locations; none for
// other schemes or hosts.
func TestArchiveFileDir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ raw, want string }{
		{"file:///var/lib/flightsrv/archive", "/var/lib/flightsrv/archive"},
		{"file:///var/lib/flightsrv/archive?create_dir=true&metadata=skip", "/var/lib/flightsrv/archive"},
		{"file://localhost/srv/a", "/srv/a"},
		{"file://./rel/dir", "rel/dir"},
		{"relative/dir", filepath.Join(wd, "relative/dir")},
		{"/abs/dir", "/abs/dir"},
		{"file://otherhost/srv/a", ""},
		{"s3://bucket/prefix", ""},
		{"mem://", ""},
		{"", ""},
	} {
		if got := archiveFileDir(c.raw); got != c.want {
			t.Errorf("archiveFileDir(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}
