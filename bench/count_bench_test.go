package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/load"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/server"
)

// Tiers and paths of the benchmark matrix.
const (
	tierHot     = "hot"
	tierArchive = "archive"

	viaFlight = "flightsql"  // arrow-go Flight SQL client → server on 127.0.0.1:0
	viaEngine = "engine"     // query.Engine.Execute of the SQL text, in process
	viaPG     = "direct-pgx" // one pgx connection, the count asked of PostgreSQL directly
	viaDuck   = "direct-duckdb"
)

// queryFunc runs one count and returns it; inner is the store's own execution time when it is
// measured apart from the call (DuckDB, timed inside Python), else 0.
type queryFunc func(ctx context.Context) (n int64, inner time.Duration, err error)

// figures are what one query reads, from the untimed measurement pass of a variant.
type figures struct {
	measured bool
	// Object storage (routing.ReadStats.BytesRead and ObjectReads): per query with warm
	// caches, and for the first query of a fresh archive reader and route cache.
	obj, objReads, coldObj, coldObjReads float64
	// PostgreSQL wire bytes received by flightsrv (server → client, through the counting
	// proxy) and sent, per warm query, and received by the first (cold) query.
	pgRecv, pgSent, coldPGRecv float64
	// Hot-store statements and rows returned (routing.ReadStats), per warm query.
	hotStmts, hotRows float64
	// DuckDB: bytes read from the payload files (rchar), warm and first query.
	fileRead, coldFileRead float64
}

// result is one variant's measurement.
type result struct {
	n         int
	mean, p50 time.Duration
	inner     time.Duration // DuckDB: p50 of the time measured inside Python
	fig       figures
}

// latency is the figure the summary compares: the p50 of the time measured inside the store
// for DuckDB (the pipe to Python is not DuckDB's), the p50 of the call otherwise.
func (r *result) latency() time.Duration {
	if r.inner > 0 {
		return r.inner
	}
	return r.p50
}

func key(tier string, r countRange, via string, pushdown bool) string {
	k := tier + "/" + r.name + "/" + via
	if via == viaFlight || via == viaEngine {
		k += fmt.Sprintf("/%v", pushdown)
	}
	return k
}

// suite is one loaded deployment and everything the variants share.
type suite struct {
	ctx       context.Context
	url       string
	store     *cockroach.Store // timed runs
	proxy     *countingProxy
	pgProxy   string           // URL of the database through the proxy
	mstore    *cockroach.Store // measurement runs, through the proxy
	dir       string
	bucket    *blob.Bucket
	duck      *duckDB // nil when Python or duckdb is missing
	duckErr   error
	source    string
	ref       map[string]int64 // reference count by range name
	total     int64            // ORD rows in the source
	loaded    load.Stats
	loadTime  time.Duration
	pgVersion string
	archTime  time.Duration
	payloads  []string // archive payload files of ORD's archived buckets, in bucket order
	payBytes  int64
	archived  int // ORD buckets archived so far (a prefix of fullRange's buckets)
	measures  map[string]figures
	results   map[string]*result
}

// BenchmarkCountORD measures COUNT(*) over ORD's flights, the whole history and a partial
// range, on the hot tier (PostgreSQL) and then on the archive tier (Parquet on file://), with
// pushdown on and off, through Flight SQL and the engine, and the same counts asked of the
// stores directly; it prints a summary table with ratios and the targets. See doc.go.
func BenchmarkCountORD(b *testing.B) {
	s := newSuite(b)
	b.Run("tier=hot", func(b *testing.B) { s.runTier(b, tierHot) })
	s.archiveAll(b)
	b.Run("tier=archive", func(b *testing.B) { s.runTier(b, tierArchive) })
	s.printSummary(os.Stdout)
}

func newSuite(b *testing.B) *suite {
	b.Helper()
	ctx := context.Background()
	s := &suite{ctx: ctx, source: flightsPath(), measures: map[string]figures{}, results: map[string]*result{}}
	if _, err := os.Stat(s.source); err != nil {
		b.Fatalf("flights file: %v (set %s)", err, EnvFlights)
	}

	// The independent reference: arrow-go over the source's origin and date columns, and
	// DuckDB over the source file when available; they must agree.
	ref, total, err := arrowReference(ctx, s.source, benchRanges)
	if err != nil {
		b.Fatalf("reference count: %v", err)
	}
	s.ref, s.total = ref, total
	if s.duck, s.duckErr = startDuckDB(); s.duckErr != nil {
		b.Logf("DuckDB comparisons skipped: %v", s.duckErr)
	} else {
		b.Cleanup(s.duck.Close)
		for _, r := range benchRanges {
			n, err := duckReference(s.duck, s.source, r)
			if err != nil {
				b.Fatal(err)
			}
			if n != s.ref[r.name] {
				b.Fatalf("reference counts disagree for %s %s: DuckDB %d, arrow-go %d", airport, r, n, s.ref[r.name])
			}
		}
	}
	if s.ref[fullRange.name] != s.total {
		b.Fatalf("the full range holds %d of %s's %d flights", s.ref[fullRange.name], airport, s.total)
	}

	// PostgreSQL: one database, the store for timed runs, and a second store on the same
	// database through the counting proxy for the byte measurements.
	s.store, s.url = pgtest.Start(b).NewStore(b)
	u, err := url.Parse(s.url)
	if err != nil {
		b.Fatal(err)
	}
	if s.proxy, err = startProxy(u.Host); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.proxy.Close() })
	if s.pgProxy, err = proxiedURL(s.url, s.proxy.Addr()); err != nil {
		b.Fatal(err)
	}
	if s.mstore, err = cockroach.Open(ctx, cockroach.Config{URL: s.pgProxy}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.mstore.Close)

	start := time.Now()
	if s.loaded, err = loadORD(ctx, s.store, s.source); err != nil {
		b.Fatalf("load: %v", err)
	}
	s.loadTime = time.Since(start)
	if s.loaded.Appended != s.total {
		b.Fatalf("loaded %d flights of %s, the source holds %d", s.loaded.Appended, airport, s.total)
	}
	// A steady state for the planner and index-only scans, as autovacuum would leave it
	// (otherwise autovacuum may start in the middle of a measurement).
	if err := vacuumAnalyze(ctx, s.store.Pool()); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
	if err := s.store.Pool().QueryRow(ctx, "SHOW server_version").Scan(&s.pgVersion); err != nil {
		b.Fatal(err)
	}

	s.dir = b.TempDir()
	if s.bucket, err = blob.OpenBucket(ctx, "file://"+filepath.ToSlash(s.dir)); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.bucket.Close() })
	return s
}

// archiveAll archives every ORD bucket with the archiver (claim → snapshot → upload → verify
// → publish → cleanup) and lists the payload files.
func (s *suite) archiveAll(b *testing.B) { s.archiveBefore(b, fullRange.to) }

// archiveBefore archives every hot bucket of the suite's database that ends by cutoff (a
// bucket boundary inside or at the end of fullRange) with the archiver, checks that each of
// ORD's buckets before cutoff is archived with its hot rows deleted and that no hot row before
// cutoff is left, and appends the new payload files to s.payloads (in bucket order). Called
// with an April cutoff and then with fullRange.to, it takes the table from hot through the
// mixed state (January–March archived, April–June hot) to all archived.
func (s *suite) archiveBefore(b *testing.B, cutoff time.Time) {
	b.Helper()
	ctx := s.ctx
	start := time.Now()
	w, err := archive.NewWriter(s.bucket, archive.WriterOptions{Prefix: "archives"})
	if err != nil {
		b.Fatal(err)
	}
	a, err := archive.NewArchiver(s.store, w, s.store, archive.ArchiverOptions{Logger: discardLogger})
	if err != nil {
		b.Fatal(err)
	}
	buckets := routing.BucketsForRange(flightsTable.TableID, []byte(airport), flightsTable.Strategy,
		routing.TimeRange{Start: fullRange.from, End: cutoff})
	fresh := buckets[s.archived:]
	sum, err := a.RunOnce(ctx, cutoff)
	if err != nil {
		b.Fatalf("archive: %v", err)
	}
	s.archTime += time.Since(start)
	if sum.Published != len(fresh) || sum.Cleaned != len(fresh) {
		b.Fatalf("archived %+v, want %d buckets published and cleaned", sum, len(fresh))
	}
	for _, bk := range fresh {
		route, err := s.store.Route(ctx, bk)
		if err != nil {
			b.Fatal(err)
		}
		if route.State != routing.StateArchived || !route.HotDeleted {
			b.Fatalf("bucket %s: route %+v after archiving", bk.Key, route)
		}
		raw, err := s.bucket.ReadAll(ctx, route.ManifestKey)
		if err != nil {
			b.Fatal(err)
		}
		m, err := archive.ParseManifest(raw)
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(s.dir, filepath.FromSlash(m.PayloadKey))
		st, err := os.Stat(p)
		if err != nil || uint64(st.Size()) != m.PayloadBytes {
			b.Fatalf("payload file of bucket %s: %v (size %v, manifest %d)", bk.Key, err, st, m.PayloadBytes)
		}
		s.payloads = append(s.payloads, p)
		s.payBytes += st.Size()
	}
	s.archived = len(buckets)
	var left int64
	if err := s.store.Pool().QueryRow(ctx, "SELECT count(*) FROM pulpitum_v4_records WHERE event_time < $1", cutoff).Scan(&left); err != nil || left != 0 {
		b.Fatalf("%d hot rows before %s left after archiving (%v)", left, cutoff.Format(time.DateOnly), err)
	}
	// The cleanup deleted hot rows: vacuum now rather than let autovacuum compete for the CPU
	// during the measurements that follow.
	if err := vacuumAnalyze(ctx, s.store.Pool()); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
}

// deployment is one serving assembly of a tier: a Flight SQL server and an engine per pushdown
// setting, each over the timed store with its own archive reader and route cache.
type deployment struct {
	flight map[bool]*flightsql.Client
	engine map[bool]*query.Engine
}

func (s *suite) deploy(b *testing.B) *deployment {
	b.Helper()
	d := &deployment{flight: map[bool]*flightsql.Client{}, engine: map[bool]*query.Engine{}}
	for _, pushdown := range []bool{true, false} {
		srv, err := server.Start(s.ctx, server.Config{
			Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: s.store,
			Archive: s.newReader(b), Pushdown: pushdown, Logger: discardLogger,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cl.Close() })
		d.flight[pushdown] = cl
		d.engine[pushdown] = s.newEngine(b, s.store, s.newReader(b), pushdown)
	}
	return d
}

func (s *suite) newReader(b *testing.B) *archive.Reader {
	r, err := archive.NewReader(s.bucket, archive.ReaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// newEngine builds the engine as server does: one table with a route cache.
func (s *suite) newEngine(b *testing.B, hot routing.HotStore, r routing.ArchiveReader, pushdown bool) *query.Engine {
	t, err := routing.NewDurableTable(flightsTable, hot, r, routing.Options{Cache: routing.NewRouteCache(routing.DefaultRouteCacheEntries)})
	if err != nil {
		b.Fatal(err)
	}
	e, err := query.New([]*routing.DurableTable{t}, query.Options{Pushdown: pushdown})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// runTier runs every variant of a tier, both ranges.
func (s *suite) runTier(b *testing.B, tier string) {
	d := s.deploy(b)
	for _, r := range benchRanges {
		b.Run("range="+r.name, func(b *testing.B) {
			for _, via := range []string{viaFlight, viaEngine} {
				b.Run("via="+via, func(b *testing.B) {
					for _, pushdown := range []bool{true, false} {
						name := "pushdown=off"
						if pushdown {
							name = "pushdown=on"
						}
						b.Run(name, func(b *testing.B) {
							run := engineQuery(d.engine[pushdown], countSQL(r))
							if via == viaFlight {
								run = flightQuery(d.flight[pushdown], countSQL(r))
							}
							fig := s.measureRouted(b, tier, r, pushdown)
							s.bench(b, key(tier, r, via, pushdown), r, run, fig)
						})
					}
				})
			}
			if tier == tierHot {
				b.Run("via="+viaPG, func(b *testing.B) {
					conn := s.pgConn(b, s.url)
					s.bench(b, key(tier, r, viaPG, false), r, pgQuery(conn, r), s.measurePG(b, r))
				})
				return
			}
			b.Run("via="+viaDuck, func(b *testing.B) {
				if s.duck == nil {
					b.Skipf("no DuckDB: %v", s.duckErr)
				}
				run, fig := s.duckVariant(b, r)
				s.bench(b, key(tier, r, viaDuck, false), r, run, fig)
			})
		})
	}
}

// bench checks that run answers the reference count, then times it with b.Loop and reports
// latency percentiles and the measured bytes.
func (s *suite) bench(b *testing.B, k string, r countRange, run queryFunc, fig figures) {
	want := s.ref[r.name]
	if n, _, err := run(s.ctx); err != nil || n != want {
		b.Fatalf("%s %s: count %d (%v), reference %d", airport, r, n, err, want)
	}
	b.ReportAllocs()
	lat := make([]time.Duration, 0, 256)
	var inner []time.Duration
	for b.Loop() {
		t0 := time.Now()
		n, in, err := run(s.ctx)
		lat = append(lat, time.Since(t0))
		if err != nil || n != want {
			b.Fatalf("%s %s: count %d (%v), reference %d", airport, r, n, err, want)
		}
		if in > 0 {
			inner = append(inner, in)
		}
	}
	res := &result{n: len(lat), mean: mean(lat), p50: median(lat), fig: fig}
	b.ReportMetric(float64(res.p50.Nanoseconds()), "p50-ns/op")
	if len(inner) > 0 {
		res.inner = median(inner)
		b.ReportMetric(float64(res.inner.Nanoseconds()), "store-p50-ns/op")
	}
	if fig.measured {
		switch {
		case fig.fileRead > 0 || fig.coldFileRead > 0:
			b.ReportMetric(fig.fileRead, "file-B/op")
			b.ReportMetric(fig.coldFileRead, "file-cold-B/op")
		default:
			b.ReportMetric(fig.obj, "obj-B/op")
			b.ReportMetric(fig.coldObj, "obj-cold-B/op")
			b.ReportMetric(fig.pgRecv, "pg-recv-B/op")
			b.ReportMetric(fig.hotRows, "hot-rows/op")
		}
	}
	s.results[k] = res
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	c := slices.Clone(d)
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// flightQuery runs sql through the Flight SQL client: GetFlightInfo, then DoGet of every
// endpoint, summing the count column.
func flightQuery(cl *flightsql.Client, sql string) queryFunc {
	return func(ctx context.Context) (int64, time.Duration, error) {
		info, err := cl.Execute(ctx, sql)
		if err != nil {
			return 0, 0, err
		}
		var n, rows int64
		for _, ep := range info.Endpoint {
			rdr, err := cl.DoGet(ctx, ep.Ticket)
			if err != nil {
				return 0, 0, err
			}
			c, r, err := sumCount(rdr)
			rdr.Release()
			if err != nil {
				return 0, 0, err
			}
			n, rows = n+c, rows+r
		}
		if rows != 1 {
			return 0, 0, fmt.Errorf("count query returned %d rows", rows)
		}
		return n, 0, nil
	}
}

// engineQuery runs sql through the engine in process.
func engineQuery(e *query.Engine, sql string) queryFunc {
	return func(ctx context.Context) (int64, time.Duration, error) {
		rdr, err := e.Execute(ctx, sql, nil, nil)
		if err != nil {
			return 0, 0, err
		}
		defer rdr.Release()
		n, rows, err := sumCount(rdr)
		if err == nil && rows != 1 {
			err = fmt.Errorf("count query returned %d rows", rows)
		}
		return n, 0, err
	}
}

// batchReader is what a Flight DoGet stream and an engine result have in common.
type batchReader interface {
	Next() bool
	RecordBatch() arrow.RecordBatch
	Err() error
}

// sumCount reads a one-column INT64 result.
func sumCount(rdr batchReader) (n, rows int64, err error) {
	for rdr.Next() {
		rec := rdr.RecordBatch()
		col, ok := rec.Column(0).(*array.Int64)
		if !ok {
			return 0, 0, fmt.Errorf("count column is %s", rec.Column(0).DataType())
		}
		for i := range col.Len() {
			n += col.Value(i)
			rows++
		}
	}
	return n, rows, rdr.Err()
}

func (s *suite) pgConn(b *testing.B, u string) *pgx.Conn {
	conn, err := pgx.Connect(s.ctx, u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgQuery asks PostgreSQL for the count directly (extended protocol, statement cached by pgx
// after the first call, as the store's own statements are).
func pgQuery(conn *pgx.Conn, r countRange) queryFunc {
	return func(ctx context.Context) (int64, time.Duration, error) {
		var n int64
		err := conn.QueryRow(ctx, directPGSQL, flightsTable.TableID, []byte(airport), r.from, r.to).Scan(&n)
		return n, 0, err
	}
}

// duckVariant returns the DuckDB query over the payload files and its byte figures (rchar of
// the first query, and of a later one).
func (s *suite) duckVariant(b *testing.B, r countRange) (queryFunc, figures) {
	sql := duckPayloadSQL(s.payloads, r)
	first, err := s.duck.Query(sql)
	if err != nil {
		b.Fatal(err)
	}
	var warm int64
	for range 2 {
		a, err := s.duck.Query(sql)
		if err != nil {
			b.Fatal(err)
		}
		warm = a.RChar
	}
	run := func(context.Context) (int64, time.Duration, error) {
		a, err := s.duck.Query(sql)
		return a.Count, time.Duration(a.NS), err
	}
	return run, figures{measured: true, fileRead: float64(warm), coldFileRead: float64(first.RChar)}
}

// measureRouted measures what one routed count reads, through a fresh engine on the proxied
// store: a cold query (new archive reader and route cache: manifests, footers and routes are
// fetched), one warm-up, then the average of two warm queries. The same figures serve the
// Flight SQL and engine paths, which share everything below the engine.
func (s *suite) measureRouted(b *testing.B, tier string, r countRange, pushdown bool) figures {
	k := fmt.Sprintf("%s/%s/%v", tier, r.name, pushdown)
	if f, ok := s.measures[k]; ok {
		return f
	}
	run := engineQuery(s.newEngine(b, s.mstore, s.newReader(b), pushdown), countSQL(r))
	once := func() (*routing.ReadStats, int64, int64) {
		st := &routing.ReadStats{}
		s.proxy.Reset()
		n, _, err := run(routing.WithReadStats(s.ctx, st))
		if err != nil || n != s.ref[r.name] {
			b.Fatalf("measure %s: count %d (%v), reference %d", k, n, err, s.ref[r.name])
		}
		down, up := s.proxy.Counts()
		return st, down, up
	}
	var f figures
	cold, coldDown, _ := once()
	f.coldObj, f.coldObjReads, f.coldPGRecv = float64(cold.BytesRead.Load()), float64(cold.ObjectReads.Load()), float64(coldDown)
	once()
	const warm = 2
	for range warm {
		st, down, up := once()
		f.obj += float64(st.BytesRead.Load()) / warm
		f.objReads += float64(st.ObjectReads.Load()) / warm
		f.pgRecv += float64(down) / warm
		f.pgSent += float64(up) / warm
		f.hotStmts += float64(st.HotStatements.Load()) / warm
		f.hotRows += float64(st.HotRows.Load()) / warm
	}
	f.measured = true
	s.measures[k] = f
	return f
}

// measurePG measures the wire bytes of the direct PostgreSQL count through the proxy.
func (s *suite) measurePG(b *testing.B, r countRange) figures {
	conn := s.pgConn(b, s.pgProxy)
	run := pgQuery(conn, r)
	var f figures
	for i := range 3 {
		s.proxy.Reset()
		if n, _, err := run(s.ctx); err != nil || n != s.ref[r.name] {
			b.Fatalf("measure direct count: %d (%v), reference %d", n, err, s.ref[r.name])
		}
		down, up := s.proxy.Counts()
		switch i {
		case 0:
			f.coldPGRecv = float64(down)
		case 2:
			f.pgRecv, f.pgSent = float64(down), float64(up)
		}
	}
	f.hotStmts, f.measured = 1, true
	return f
}
