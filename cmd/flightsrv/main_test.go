package main

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
)

func TestParseTable(t *testing.T) {
	d, err := parseTable("name=Messages,partition=Channel_ID")
	if err != nil {
		t.Fatal(err)
	}
	want := routing.TableDef{Name: "messages", TableID: "messages", PartitionColumn: "channel_id", Strategy: routing.CalendarYearUTC, WritableBuckets: 2, JSONValues: true}
	if d != want {
		t.Fatalf("got %+v", d)
	}
	d, err = parseTable("name=flights,id=x.y,partition=origin,strategy=calendar_month_utc,window=12")
	if err != nil || d.Strategy != routing.CalendarMonthUTC || d.WritableBuckets != 12 || d.TableID != "x.y" {
		t.Fatalf("got %+v %v", d, err)
	}
	if d, err := parseTable("name=t,value=bytes"); err != nil || d.JSONValues {
		t.Fatalf("value=bytes: %+v %v", d, err)
	}
	for _, bad := range []string{"partition=x", "name=t,strategy=week", "name=t,window=0", "name=t,window=x", "name=t,color=red", "name", "name=t,partition=timestamp", "name=t,value=text"} {
		if _, err := parseTable(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var tf tableFlags
	if err := tf.Set("name=a;name=b,partition=p"); err != nil || len(tf) != 2 || tf[1].PartitionColumn != "p" {
		t.Fatalf("multi: %+v %v", tf, err)
	}
	if d, _ := parseTable(formatTable(demoTable)); d != demoTable {
		t.Fatalf("format/parse round trip: %+v", d)
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	t.Setenv("FLIGHTSRV_LISTEN", "127.0.0.1:1234")
	var cfg serveConfig
	fs := newFlags("serve")
	cfg.register(fs, true)
	if err := parse(fs, nil); err != nil || cfg.listen != "127.0.0.1:1234" {
		t.Fatalf("env default: %q %v", cfg.listen, err)
	}
	if err := parse(fs, []string{"--listen", "127.0.0.1:9"}); err != nil || cfg.listen != "127.0.0.1:9" {
		t.Fatalf("flag over env: %q %v", cfg.listen, err)
	}
	if err := parse(fs, []string{"stray"}); err == nil {
		t.Fatal("stray argument accepted")
	}
}

// TestDemo runs the demo's preparation (load the committed sample into SQLite through the
// write fence, archive January–March) and serves it, then counts one airport through a real
// Flight SQL client: the README's main job, in miniature.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 300,000 records")
	}
	dir := t.TempDir()
	cfg := serveConfig{listen: "127.0.0.1:0", tables: tableFlags{demoTable}, pushdown: true, fanout: 4, sec: securityConfig{noAuth: true},
		store: "sqlite://" + filepath.Join(dir, "hot.db"), archive: filepath.Join(dir, "archive")}
	ctx := context.Background()
	marker := filepath.Join(dir, "loaded")
	if err := prepareDemo(ctx, &cfg, filepath.Join("..", "..", "testdata", "flights-sample.parquet"), marker); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err != nil || string(b) == "" {
		t.Fatalf("marker: %q %v", b, err)
	}
	st, err := openStore(ctx, cfg.store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, tel, err := startServer(ctx, &cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	defer srv.Close()
	cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	count := func(q string) int64 {
		n, err := queryCount(ctx, cl, q)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// 16,569 ORD flights in the sample (DuckDB: SELECT count(*) FROM 'testdata/flights-sample.parquet' WHERE origin = 'ORD').
	if n := count("SELECT COUNT(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'"); n != 16569 {
		t.Fatalf("ORD count %d, want 16569", n)
	}
	// Archived buckets really are archived: the route of ORD's January bucket.
	jan := routing.BucketFor(demoTable.TableID, []byte("ORD"), demoTable.Strategy, time.Date(2001, 1, 5, 0, 0, 0, 0, time.UTC))
	if r, err := st.Route(ctx, jan); err != nil || r.State != routing.StateArchived {
		t.Fatalf("January route %+v %v", r, err)
	}
	apr := routing.BucketFor(demoTable.TableID, []byte("ORD"), demoTable.Strategy, time.Date(2001, 4, 5, 0, 0, 0, 0, time.UTC))
	if r, err := st.Route(ctx, apr); err != nil || r.State != routing.StateHot {
		t.Fatalf("April route %+v %v", r, err)
	}
	t.Run("database/sql time parameters", func(t *testing.T) { testDatabaseSQLTimes(t, srv.Addr()) })
	t.Run("partition flags", func(t *testing.T) { testPartitionFlags(t, st, cfg) })
	t.Run("secured", func(t *testing.T) { testSecuredServe(t, st, cfg.archive) })
}

func TestResetDemoDirRefusesForeignFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := resetDemoDir(dir); err == nil {
		t.Fatal("a directory with foreign files was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatalf("foreign file gone: %v", err)
	}
	demo := t.TempDir()
	for _, f := range []string{"hot.db", "hot.db-wal"} {
		os.WriteFile(filepath.Join(demo, f), nil, 0o644)
	}
	os.Mkdir(filepath.Join(demo, "archive"), 0o755)
	if err := resetDemoDir(demo); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(demo); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
	if err := resetDemoDir(filepath.Join(demo, "new")); err != nil {
		t.Fatalf("missing directory: %v", err)
	}
}

func TestParseInstant(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2001-04-01":                time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC),
		"2001-04-01T02:00:00+02:00": time.Date(2001, 4, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := parseInstant(in); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := parseInstant("yesterday"); err == nil {
		t.Error("garbage accepted")
	}
}

func TestMemoryLimitFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64 // -1: an error
	}{
		{"41943040", 40 << 20}, {"40MiB", 40 << 20}, {"2GiB", 2 << 30}, {"512KiB", 512 << 10},
		{"100B", 100}, {"1TiB", 1 << 40}, {"0", math.MaxInt64}, {"off", math.MaxInt64},
		{"40MB", -1}, {"-1", -1}, {"MiB", -1}, {"1.5GiB", -1}, {"9000000TiB", -1},
	} {
		var f memoryLimitFlag
		err := f.Set(c.in)
		switch {
		case c.want < 0 && err == nil:
			t.Errorf("%q accepted as %d", c.in, f.bytes)
		case c.want >= 0 && (err != nil || f.auto || f.bytes != c.want):
			t.Errorf("%q: %+v, %v; want %d", c.in, f, err, c.want)
		}
	}
	var f memoryLimitFlag
	if err := f.Set("auto"); err != nil || !f.auto || f.String() != "auto" {
		t.Fatalf("auto: %+v %v", f, err)
	}
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	if base, per := f.limits(); base != defaultMemoryLimit || per != defaultMemoryLimitPerStream {
		t.Fatalf("auto limits %d, %d", base, per)
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	if base, per := f.limits(); base != 0 || per != 0 {
		t.Fatalf("auto with GOMEMLIMIT set: %d, %d (the runtime's limit must stay)", base, per)
	}
	_ = f.Set("64MiB")
	if base, per := f.limits(); base != 64<<20 || per != 0 {
		t.Fatalf("fixed limits %d, %d", base, per)
	}
	// The footer cache gets a tenth of the limit; none applies: the archive's default (0).
	for _, c := range []struct{ base, want int64 }{{40 << 20, 4 << 20}, {64 << 20, 6710886}, {math.MaxInt64, 0}} {
		if got := footerCacheBytes(c.base); got != c.want {
			t.Errorf("footerCacheBytes(%d) = %d, want %d", c.base, got, c.want)
		}
	}
	prev := debug.SetMemoryLimit(100 << 20)
	if got := footerCacheBytes(0); got != 10<<20 {
		t.Errorf("footerCacheBytes under a runtime limit of 100 MiB = %d, want %d", got, 10<<20)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := footerCacheBytes(0); got != 0 {
		t.Errorf("footerCacheBytes with no runtime limit = %d, want 0", got)
	}
	debug.SetMemoryLimit(prev)

	var cfg serveConfig
	fs := newFlags("serve")
	cfg.register(fs, true)
	if err := parse(fs, []string{"--go-memory-limit", "128MiB"}); err != nil || cfg.memoryLimit.bytes != 128<<20 {
		t.Fatalf("flag: %+v %v", cfg.memoryLimit, err)
	}
	t.Setenv("FLIGHTSRV_GO_MEMORY_LIMIT", "off")
	cfg = serveConfig{}
	fs = newFlags("serve")
	cfg.register(fs, true)
	if err := parse(fs, nil); err != nil || cfg.memoryLimit.String() != "off" {
		t.Fatalf("environment: %+v %v", cfg.memoryLimit, err)
	}
}

// testPartitionFlags: --max-partitions, --analytical and --analytical-max-partitions, given
// as command-line flags, reach the queries of a server over the demo's data.
func testPartitionFlags(t *testing.T, st *openedStore, base serveConfig) {
	ctx := context.Background()
	serve := func(args ...string) *flightsql.Client {
		t.Helper()
		var cfg serveConfig
		fs := newFlags("serve")
		cfg.register(fs, true)
		args = append([]string{"--listen", "127.0.0.1:0", "--no-auth", "--store", base.store, "--archive", base.archive}, args...)
		if err := parse(fs, args); err != nil {
			t.Fatal(err)
		}
		cfg.tables = tableFlags{demoTable} // --table is registered by serve's own flag set
		return serveForTest(t, &cfg, st)
	}
	count := func(cl *flightsql.Client, q string) (int64, error) { return queryCount(ctx, cl, q) }
	const year = " AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'"
	three := "SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS')" + year
	four := "SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS', 'ATL')" + year
	everyOrigin := "SELECT count(*) FROM flights WHERE timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'"

	cl := serve("--max-partitions", "3", "--analytical", "--analytical-max-partitions", "228")
	// DuckDB over the sample: ORD 16,569 + SFO 6,003 + BOS 6,588 flights; 300,000 in all from
	// 228 airports.
	if n, err := count(cl, three); err != nil || n != 29160 {
		t.Fatalf("three partitions under --max-partitions 3: %d %v", n, err)
	}
	if _, err := count(cl, four); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "flights lists 4 partitions, more than this server's limit of 3 (--max-partitions)") {
		t.Fatalf("four partitions under --max-partitions 3: %v", err)
	}
	if n, err := count(cl, everyOrigin); err != nil || n != 300000 {
		t.Fatalf("every partition under --analytical: %d %v", n, err)
	}

	cl = serve("--analytical-max-partitions", "227")
	if _, err := count(cl, everyOrigin); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "session option analytical = on") {
		t.Fatalf("without --analytical: %v", err)
	}
	if n, err := count(cl, four); err != nil || n <= 29160 {
		t.Fatalf("four partitions under the default --max-partitions: %d %v", n, err)
	}
	cl = serve("--analytical", "--analytical-max-partitions", "227")
	if _, err := count(cl, everyOrigin); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "more than 227 partitions") {
		t.Fatalf("228 partitions under --analytical-max-partitions 227: %v", err)
	}
}

// TestUsageArgumentNames: every serve flag's usage names its argument as Go's flag package
// prints it in --help (a back-quoted word in the usage is taken as the argument's name, so a
// quoted command there would print as the argument).
func TestUsageArgumentNames(t *testing.T) {
	var cfg serveConfig
	fs := newFlags("serve")
	cfg.register(fs, true)
	want := map[string]string{"auth-users": "FILE", "auth-keyring": "FILE", "keyring": "FILE"}
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		if w, ok := want[f.Name]; ok && name != w {
			t.Errorf("--%s prints its argument as %q, want %q", f.Name, name, w)
		}
		if strings.ContainsAny(name, " /") {
			t.Errorf("--%s prints its argument as %q", f.Name, name)
		}
	})
}

// queryCount runs q, whose first column is an int64, through cl and returns its first value.
func queryCount(ctx context.Context, cl *flightsql.Client, q string) (int64, error) {
	info, err := cl.Execute(ctx, q)
	if err != nil {
		return 0, err
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	if !rdr.Next() {
		return 0, rdr.Err()
	}
	return rdr.RecordBatch().Column(0).(*array.Int64).Value(0), nil
}
