package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/flightsrv/flightsrv/internal/load"
)

// The demo data: the committed sample of real 2001 US flights (see testdata/README.md).
// Its flights run from 2001-01-01 to 2001-07-01; January–March are archived.
var (
	demoAsOf   = time.Date(2001, 7, 31, 23, 59, 59, 0, time.UTC) // back-fill clock: every 2001 month is writable
	demoCutoff = time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC)     // archive buckets ending at or before this
)

func cmdDemo(ctx context.Context, args []string) error {
	var cfg serveConfig
	flags := newFlags("demo")
	cfg.register(flags, false)
	data := flags.String("data", ".demo", "directory of the demo's SQLite hot store and archive")
	sample := flags.String("sample", filepath.Join("testdata", "flights-sample.parquet"), "flights Parquet file to load")
	reload := flags.Bool("reload", false, "discard the demo's data and load it again")
	if err := parse(flags, args); err != nil {
		return err
	}
	cfg.tables = tableFlags{demoTable}
	if !cfg.sec.noAuth && cfg.sec.authUsers == "" && isLoopback(cfg.listen) {
		// The demo is for one machine: on loopback it serves without authentication, as if
		// --no-auth were given. Elsewhere it needs --auth-users (or an explicit --no-auth).
		cfg.sec.noAuth = true
	}
	cfg.store = "sqlite://" + filepath.Join(*data, "hot.db")
	cfg.archive = filepath.Join(*data, "archive")
	if err := cfg.validate(); err != nil {
		return err
	}
	setProfiling(&cfg)
	marker := filepath.Join(*data, "loaded")
	if _, err := os.Stat(marker); *reload || errors.Is(err, fs.ErrNotExist) {
		// A missing marker means no load finished: start from nothing so that a half-done
		// earlier attempt leaves no trace.
		if err := resetDemoDir(*data); err != nil {
			return err
		}
		if err := prepareDemo(ctx, &cfg, *sample, marker); err != nil {
			return err
		}
	}
	st, err := openStore(ctx, cfg.store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate demo store (try --reload): %w", err)
	}
	srv, tel, err := startServer(ctx, &cfg, st)
	if err != nil {
		return err
	}
	defer shutdownTelemetry(tel)
	printBanner(srv.Addr(), cfg.pushdown, cfg.store, cfg.archive, &cfg.sec)
	return srv.Wait(ctx)
}

// demoEntries are the files a demo directory holds.
var demoEntries = map[string]bool{"hot.db": true, "hot.db-wal": true, "hot.db-shm": true, "hot.db-journal": true, "archive": true, "loaded": true}

// resetDemoDir empties a demo directory. It refuses a directory holding anything a demo does
// not write, so that a mistyped --data never deletes someone's files.
func resetDemoDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !demoEntries[e.Name()] {
			return fmt.Errorf("--data %s is not a demo directory (it holds %q): choose an empty or new directory", dir, e.Name())
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// prepareDemo migrates a new store, loads the sample through the write fence and archives the
// first months, then writes the marker.
func prepareDemo(ctx context.Context, cfg *serveConfig, sample, marker string) error {
	if _, err := os.Stat(sample); err != nil {
		return fmt.Errorf("demo sample: %w (run from the repository root or pass --sample)", err)
	}
	st, err := openStore(ctx, cfg.store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	slog.Info("loading the flights sample", "file", sample)
	n, err := loadFile(ctx, st, demoTable, func() time.Time { return demoAsOf }, sample,
		load.Mapping{Partition: "origin", Time: "date", ID: "id", Value: []string{"delay", "distance", "destination"}})
	if err != nil {
		return err
	}
	slog.Info("archiving buckets", "ending_before", demoCutoff.Format(time.RFC3339))
	ac := defaultArchiveConfig()
	ac.archive, ac.before = cfg.archive, demoCutoff.Format(time.RFC3339)
	r, err := newArchiveRunner(ctx, st, ac)
	if err != nil {
		return err
	}
	defer r.close()
	sum, err := r.drain(ctx)
	if err != nil {
		return err
	}
	slog.Info("demo data ready", "records", n, "archived_buckets", sum.Published)
	return os.WriteFile(marker, []byte(fmt.Sprintf("records=%d archived_buckets=%d\n", n, sum.Published)), 0o644)
}

// printBanner tells a user how to connect, what to ask, and how to serve the same data with
// `flightsrv serve` (the demo table's persisted id differs from its name, and a definition
// without it would find no bucket).
func printBanner(addr string, pushdown bool, store, archive string, sec *securityConfig) {
	scheme, jdbcTLS, goTLS := "grpc", "useEncryption=false", ""
	if sec.tlsCert != "" {
		scheme, jdbcTLS, goTLS = "grpc+tls", "useEncryption=true&tlsRootCerts=CA.pem", " -tls-ca CA.pem"
	}
	authNote, jdbcUser, goUser, adbcUser := "without authentication (--no-auth)", "", "", ""
	if !sec.noAuth {
		authNote = "with authentication (users of " + sec.authUsers + ")"
		jdbcUser, goUser = "&user=NAME&password=PASSWORD", " -user NAME (password from FLIGHTSRV_PASSWORD)"
		adbcUser = ", db_kwargs={\"username\": NAME, \"password\": PASSWORD}"
	}
	secFlags := ""
	if sec.noAuth {
		secFlags = " --no-auth"
	} else {
		secFlags = " --auth-users " + sec.authUsers
		if sec.authKeyring != "" {
			secFlags += " --auth-keyring " + sec.authKeyring
		}
	}
	if sec.tlsCert != "" {
		secFlags += " --tls-cert " + sec.tlsCert + " --tls-key " + sec.tlsKey
		if sec.tlsClientCA != "" {
			secFlags += " --tls-client-ca " + sec.tlsClientCA
		}
	}
	fmt.Printf(`
flightsrv is serving Flight SQL on %[6]s://%[1]s  (pushdown %[2]v), %[7]s

Table flights: 300,000 real US flights of 2001 (origin airport = partition column "origin",
month buckets; January–March archived to Parquet, April to the end of the data on 2001-07-01
hot). Columns: origin, timestamp, id, value (JSON: delay, distance, destination).

Connect:
  Go example:   go run ./clients/go -addr %[1]s%[9]s%[10]s -origin ORD
  JDBC URL:     jdbc:arrow-flight-sql://%[1]s/?%[8]s%[11]s
                (on JDK 17 or later the JVM needs --add-opens=java.base/java.nio=ALL-UNNAMED,
                e.g. in DBeaver's dbeaver.ini; without it the driver hangs without a word)
  ADBC Python:  adbc_driver_flightsql.dbapi.connect("%[6]s://%[1]s"%[12]s, autocommit=True)

Example queries:
  SELECT COUNT(*) FROM flights WHERE origin = 'ORD'
    AND timestamp >= TIMESTAMPTZ '2001-03-15T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-04-15T00:00:00Z'
  SELECT timestamp, id, value FROM flights WHERE origin = 'SFO'
    AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z' ORDER BY timestamp, id LIMIT 10
  EXPLAIN SELECT COUNT(*) FROM flights WHERE origin = 'DFW'
    AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'

Serve the same data with your own flags:
  bin/flightsrv serve --store %[3]s --archive %[4]s \
    --table name=flights,id=%[5]s,partition=origin,strategy=month,window=12%[13]s

Press Ctrl-C to stop.
`, addr, pushdown, store, archive, demoTable.TableID, scheme, authNote, jdbcTLS, goTLS, goUser, jdbcUser, adbcUser, secFlags)
}
