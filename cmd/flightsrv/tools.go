package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/migration"
)

func cmdMigrate(ctx context.Context, args []string) error {
	fs := newFlags("migrate")
	store := fs.String("store", "sqlite://flightsrv.db", "hot store: postgres://… or sqlite://PATH")
	if err := parse(fs, args); err != nil {
		return err
	}
	st, err := openStore(ctx, *store)
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.ApplyMigrations(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s store: %w", st.kind, err)
	}
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	fmt.Print(migrationReport(st.kind, applied))
	return nil
}

// migrationReport says what migrate did: each migration applied, or that there was none.
func migrationReport(kind string, applied []migration.Migration) string {
	if len(applied) == 0 {
		return fmt.Sprintf("%s schema already up to date: no migration applied\n", kind)
	}
	var b strings.Builder
	for _, m := range applied {
		fmt.Fprintf(&b, "applied migration %d %s (sha256 %s)\n", m.Version, m.Name, m.Checksum()[:12])
	}
	fmt.Fprintf(&b, "%s schema is up to date (%d migration(s) applied)\n", kind, len(applied))
	return b.String()
}

// loadConfig holds the flags of load.
type loadConfig struct {
	store, table, partition, timeCol, id, value, asOf string
	files                                             fileFlags
	tables                                            tableFlags
}

// fileFlags is load's repeatable --file: paths or glob patterns (filepath.Match syntax),
// several in one value separated by commas.
type fileFlags []string

func (f *fileFlags) String() string { return strings.Join(*f, ",") }

func (f *fileFlags) Set(v string) error {
	*f = append(*f, splitList(v)...)
	return nil
}

// expandFiles returns the files patterns name, in order: a pattern with glob characters
// stands for its matches in lexical order (none is an error), any other for itself; a file
// named twice is loaded once.
func expandFiles(patterns []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		names := []string{p}
		if strings.ContainsAny(p, "*?[") {
			m, err := filepath.Glob(p)
			if err != nil {
				return nil, fmt.Errorf("--file %s: %w", p, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("--file %s matches no file", p)
			}
			names = m // lexical order
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func cmdLoad(ctx context.Context, args []string) error {
	var c loadConfig
	fs := newFlags("load")
	fs.StringVar(&c.store, "store", "sqlite://flightsrv.db", "hot store: postgres://… or sqlite://PATH")
	fs.Var(&c.tables, "table", "routed table definition, repeatable (see serve)")
	fs.StringVar(&c.table, "into", "", "name of the table to load into (default: the only configured table)")
	fs.Var(&c.files, "file", "source file, .parquet or .csv, or a glob pattern (quote it); repeatable or comma-separated. Each file is one all-or-nothing request; a file already loaded is skipped, a partly loaded one refused")
	fs.StringVar(&c.partition, "partition", "", "source column holding the partition value")
	fs.StringVar(&c.timeCol, "time", "", "source column holding the event time (zone-less values are UTC)")
	fs.StringVar(&c.id, "id", "", "source column holding the stable row id (default: the zero-padded source row number)")
	fs.StringVar(&c.value, "value", "", "comma-separated source columns encoded as the JSON value (default: all other columns)")
	fs.StringVar(&c.asOf, "as-of", "", "application clock for the writable-window check, RFC 3339 (default: now); set it to back-fill history")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(c.files) == 0 || c.partition == "" || c.timeCol == "" {
		return fmt.Errorf("load needs --file, --partition and --time")
	}
	files, err := expandFiles(c.files)
	if err != nil {
		return err
	}
	def, err := pickTable(c.tables, c.table)
	if err != nil {
		return err
	}
	clock := time.Now
	if c.asOf != "" {
		at, err := parseInstant(c.asOf)
		if err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
		clock = func() time.Time { return at }
	}
	st, err := openValidated(ctx, c.store)
	if err != nil {
		return err
	}
	defer st.Close()
	slog.Info("loading", "store", st.kind, "table", def.Name, "files", len(files))
	t, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: clock})
	if err != nil {
		return err
	}
	m := load.Mapping{Partition: c.partition, Time: c.timeCol, ID: c.id, Value: splitList(c.value)}
	var total int64
	var loaded, skipped int
	for _, f := range files {
		stats, out, err := loadResumable(ctx, t, f, m)
		if err != nil {
			fmt.Printf("loaded %d records into %s from %d file(s), %d skipped as already loaded; stopped at %s\n", total, def.Name, loaded, skipped, f)
			return fmt.Errorf("%s: %w", f, windowHint(err, def))
		}
		if out == load.Skipped {
			skipped++
			fmt.Printf("%s: already loaded (%d records), skipped\n", f, stats.Read)
			continue
		}
		loaded++
		total += stats.Appended
		fmt.Printf("%s: loaded %d records\n", f, stats.Appended)
	}
	if len(files) == 1 && skipped == 0 {
		fmt.Printf("loaded %d records into %s\n", total, def.Name)
		return nil
	}
	fmt.Printf("loaded %d records into %s from %d file(s), %d skipped as already loaded\n", total, def.Name, loaded, skipped)
	return nil
}

// loadResumable loads one file of load's list with load.Resumable, logging its progress every
// loadProgressEvery and a finished line.
func loadResumable(ctx context.Context, t *routing.DurableTable, file string, m load.Mapping) (load.Stats, load.Outcome, error) {
	start := time.Now()
	m.Progress = progressLogger(start)
	stats, out, err := load.Resumable(ctx, t, file, m)
	if err == nil && out == load.Loaded {
		logFinished(start, stats.Appended)
	}
	return stats, out, err
}

// progressLogger returns a load.Mapping.Progress that logs a progress line every
// loadProgressEvery since start.
func progressLogger(start time.Time) func(load.Stats) {
	last := start
	return func(s load.Stats) {
		if now := time.Now(); now.Sub(last) >= loadProgressEvery {
			last = now
			slog.Info("load progress", "records", s.Read, "records_per_s", int64(float64(s.Read)/now.Sub(start).Seconds()))
		}
	}
}

// logFinished logs load's finished line for n records written since start.
func logFinished(start time.Time, n int64) {
	elapsed := time.Since(start)
	slog.Info("load finished", "records", n, "elapsed", elapsed.Round(time.Millisecond),
		"records_per_s", int64(float64(n)/max(elapsed.Seconds(), 1e-3)))
}

// windowHint adds to a refusal for a record outside the writable window how the window is
// defined and how to back-fill.
func windowHint(err error, def routing.TableDef) error {
	if errors.Is(err, routing.ErrOutsideWriteWindow) {
		return fmt.Errorf("%w (the window is the table's last %d buckets at the application clock; back-fill history with --as-of)", err, def.WritableBuckets)
	}
	return err
}

func loadFile(ctx context.Context, st routing.HotStore, def routing.TableDef, clock func() time.Time, file string, m load.Mapping) (int64, error) {
	t, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: clock})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	m.Progress = progressLogger(start)
	stats, err := load.File(ctx, t, file, m)
	if err != nil {
		err = windowHint(err, def)
		if stats.Appended == 0 {
			return 0, err
		}
		return stats.Appended, fmt.Errorf("%d records appended before the error: %w", stats.Appended, err)
	}
	logFinished(start, stats.Appended)
	return stats.Appended, nil
}

// loadProgressEvery is the period of load's progress lines.
const loadProgressEvery = 5 * time.Second

func pickTable(tables tableFlags, name string) (routing.TableDef, error) {
	switch {
	case name != "":
		return tableByName(tables, name)
	case len(tables) == 1:
		return tables[0], nil
	case len(tables) == 0:
		return routing.TableDef{}, fmt.Errorf("no table configured (--table …)")
	}
	return routing.TableDef{}, fmt.Errorf("several tables configured: name one with --into")
}

// parseInstant parses an RFC 3339 instant or a date (YYYY-MM-DD, midnight UTC).
func parseInstant(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 instant (2001-04-01T00:00:00Z) nor a date (2001-04-01)", s)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
