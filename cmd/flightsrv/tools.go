package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/routing"
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
	if err := st.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate: %w", err)
	}
	fmt.Println("schema is up to date")
	return nil
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
	st, err := openStore(ctx, c.store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate schema (run `flightsrv migrate` first): %w", err)
	}
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
	stats, err := load.File(ctx, t, file, m)
	if err != nil {
		if errors.Is(err, routing.ErrOutsideWriteWindow) {
			err = fmt.Errorf("%w (the window is the table's last %d buckets at the application clock; back-fill history with --as-of)", err, def.WritableBuckets)
		}
		return stats.Appended, fmt.Errorf("%d records appended before the error: %w", stats.Appended, err)
	}
	slog.Info("load finished", "records", stats.Appended, "elapsed", time.Since(start).Round(time.Millisecond))
	return stats.Appended, nil
}

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

// archiveConfig holds the flags of archive.
type archiveConfig struct {
	store, archive, prefix, format, before string
	lease, retry                           time.Duration
}

func cmdArchive(ctx context.Context, args []string) error {
	var c archiveConfig
	fs := newFlags("archive")
	fs.StringVar(&c.store, "store", "sqlite://flightsrv.db", "hot store: postgres://… or sqlite://PATH")
	fs.StringVar(&c.archive, "archive", "flightsrv-archive", "archive location: a gocloud.dev/blob URL or a directory")
	fs.StringVar(&c.prefix, "prefix", "archives", "object-key prefix of new archives")
	fs.StringVar(&c.format, "format", "parquet", "payload format of new archives: parquet or json")
	fs.StringVar(&c.before, "before", "", "archive buckets ending at or before this instant, RFC 3339 (default: Jan 1 of the previous UTC year)")
	fs.DurationVar(&c.lease, "lease", archive.DefaultLease, "archive lease")
	fs.DurationVar(&c.retry, "retry", archive.DefaultRetry, "delay before a failed bucket is retried")
	if err := parse(fs, args); err != nil {
		return err
	}
	cutoff := time.Date(time.Now().UTC().Year()-1, 1, 1, 0, 0, 0, 0, time.UTC)
	if c.before != "" {
		t, err := parseInstant(c.before)
		if err != nil {
			return fmt.Errorf("--before: %w", err)
		}
		cutoff = t
	}
	if cutoff.After(time.Now()) {
		return fmt.Errorf("--before %s is in the future: it would archive buckets that are still being written", cutoff.Format(time.RFC3339))
	}
	st, err := openStore(ctx, c.store)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate schema (run `flightsrv migrate` first): %w", err)
	}
	sum, err := archiveBefore(ctx, st, c, cutoff)
	fmt.Printf("archived %d buckets, cleaned %d\n", sum.Published, sum.Cleaned)
	return err
}

// archiveBefore runs archiver cycles until no due work is left.
func archiveBefore(ctx context.Context, st *openedStore, c archiveConfig, cutoff time.Time) (archive.RunSummary, error) {
	var total archive.RunSummary
	format, err := archive.ParseFormat(c.format)
	if err != nil {
		return total, err
	}
	bucket, err := openArchive(ctx, c.archive)
	if err != nil {
		return total, err
	}
	defer bucket.Close()
	w, err := archive.NewWriter(bucket, archive.WriterOptions{Prefix: c.prefix, Format: format})
	if err != nil {
		return total, err
	}
	a, err := archive.NewArchiver(st, w, st, archive.ArchiverOptions{Lease: c.lease, Retry: c.retry})
	if err != nil {
		return total, err
	}
	for {
		sum, err := a.RunOnce(ctx, cutoff)
		total.Discovered += sum.Discovered
		total.Claimed += sum.Claimed
		total.Skipped += sum.Skipped
		total.Published += sum.Published
		total.Cleaned += sum.Cleaned
		if err != nil {
			return total, fmt.Errorf("archive cycle: %w", err)
		}
		if sum.Discovered == 0 || sum.Published+sum.Cleaned == 0 {
			return total, nil
		}
	}
}
