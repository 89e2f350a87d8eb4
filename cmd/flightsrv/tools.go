package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	store, file, table, partition, timeCol, id, value, asOf string
	tables                                                  tableFlags
}

func cmdLoad(ctx context.Context, args []string) error {
	var c loadConfig
	fs := newFlags("load")
	fs.StringVar(&c.store, "store", "sqlite://flightsrv.db", "hot store: postgres://… or sqlite://PATH")
	fs.Var(&c.tables, "table", "routed table definition, repeatable (see serve)")
	fs.StringVar(&c.table, "into", "", "name of the table to load into (default: the only configured table)")
	fs.StringVar(&c.file, "file", "", "source file, .parquet or .csv")
	fs.StringVar(&c.partition, "partition", "", "source column holding the partition value")
	fs.StringVar(&c.timeCol, "time", "", "source column holding the event time (zone-less values are UTC)")
	fs.StringVar(&c.id, "id", "", "source column holding the stable row id (default: the zero-padded source row number)")
	fs.StringVar(&c.value, "value", "", "comma-separated source columns encoded as the JSON value (default: all other columns)")
	fs.StringVar(&c.asOf, "as-of", "", "application clock for the writable-window check, RFC 3339 (default: now); set it to back-fill history")
	if err := parse(fs, args); err != nil {
		return err
	}
	if c.file == "" || c.partition == "" || c.timeCol == "" {
		return fmt.Errorf("load needs --file, --partition and --time")
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
	slog.Info("loading", "store", st.kind, "table", def.Name)
	n, err := loadFile(ctx, st, def, clock, c.file, load.Mapping{Partition: c.partition, Time: c.timeCol, ID: c.id, Value: splitList(c.value)})
	if err != nil {
		return err
	}
	fmt.Printf("loaded %d records into %s\n", n, def.Name)
	return nil
}

func loadFile(ctx context.Context, st routing.HotStore, def routing.TableDef, clock func() time.Time, file string, m load.Mapping) (int64, error) {
	t, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: clock})
	if err != nil {
		return 0, err
	}
	start := time.Now()
	last := start
	m.Progress = func(s load.Stats) {
		if now := time.Now(); now.Sub(last) >= loadProgressEvery {
			last = now
			slog.Info("load progress", "records", s.Read, "records_per_s", int64(float64(s.Read)/now.Sub(start).Seconds()))
		}
	}
	stats, err := load.File(ctx, t, file, m)
	if err != nil {
		if errors.Is(err, routing.ErrOutsideWriteWindow) {
			err = fmt.Errorf("%w (the window is the table's last %d buckets at the application clock; back-fill history with --as-of)", err, def.WritableBuckets)
		}
		if stats.Appended == 0 {
			return 0, err
		}
		return stats.Appended, fmt.Errorf("%d records appended before the error: %w", stats.Appended, err)
	}
	elapsed := time.Since(start)
	slog.Info("load finished", "records", stats.Appended, "elapsed", elapsed.Round(time.Millisecond),
		"records_per_s", int64(float64(stats.Appended)/max(elapsed.Seconds(), 1e-3)))
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
