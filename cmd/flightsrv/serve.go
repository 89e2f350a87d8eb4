package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/flightsql"
	"github.com/flightsrv/flightsrv/internal/setting"
	"github.com/flightsrv/flightsrv/internal/telemetry"
	"github.com/flightsrv/flightsrv/query"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/shred"
	"github.com/flightsrv/flightsrv/server"
	"github.com/flightsrv/flightsrv/substrait"
)

// serveConfig holds the flags of serve (and demo, which serves the same way).
type serveConfig struct {
	listen          string
	store           string
	archive         string
	tables          tableFlags
	pushdown        bool
	sqliteRowAggs   bool
	fanout          int
	maxBuckets      int
	maxParts        int
	queryMemory     int64
	totalMemory     int64
	routeCache      int
	payloadCheck    time.Duration
	damageMemory    time.Duration
	ticketTTL       time.Duration
	queryMaxRows    int64
	queryCPU        time.Duration
	stallTimeout    time.Duration
	contendedStall  time.Duration
	maxConnStreams  int
	maxConns        int
	maxConnsPerIP   int
	requestWait     time.Duration
	putIdleTimeout  time.Duration
	connIdleTimeout time.Duration
	multiEndpoint   bool
	endpointBkts    int
	maxEndpoints    int
	advertise       string
	peers           string
	peerCA          string
	pollTTL         time.Duration
	queryConns      int
	queryConnWait   time.Duration
	pollMemory      int64
	metricsListen   string
	debugListen     string
	memoryLimit     memoryLimitFlag
	migrate         bool
	sec             securityConfig
	maxQueries      int
	maxQueued       int
	maxPollQueries  int
	analytical      bool
	analyticalParts int
	queueWait       time.Duration
	queryTimeout    time.Duration
	drainTimeout    time.Duration
	healthInterval  time.Duration
	otlp            telemetry.Export
	logStatements   bool
	shredCache      string
	shredCacheSize  int64
}

// defaultShredCacheSize is --shred-cache-size's default: 1 GiB.
const defaultShredCacheSize = 1 << 30

func (c *serveConfig) register(fs *flag.FlagSet, withStore bool) {
	fs.StringVar(&c.listen, "listen", "127.0.0.1:32010", "Flight SQL listen address host:port")
	if withStore {
		fs.StringVar(&c.store, "store", "sqlite://flightsrv.db", "hot store: postgres://… (CockroachDB or PostgreSQL) or sqlite://PATH")
		fs.StringVar(&c.archive, "archive", "flightsrv-archive", "archive location: a gocloud.dev/blob URL (file:///dir, s3://…) or a directory")
		fs.BoolVar(&c.migrate, "migrate", false, "apply schema migrations at start-up (otherwise only validate the schema)")
	}
	fs.BoolVar(&c.pushdown, "pushdown", true, "push COUNT(*) and MIN/MAX(timestamp) down to the stores, and hot buckets' filters and partial aggregates down to PostgreSQL (false: every query runs on the scan path)")
	fs.BoolVar(&c.sqliteRowAggs, "sqlite-row-aggregates", false, "on an SQLite store, run hot buckets' filters and partial aggregates as SQLite statements too (off: the executor reads their rows, measured 12–41× faster in process; PostgreSQL and CockroachDB stores always run them when --pushdown is on)")
	fs.IntVar(&c.fanout, "fanout", routing.DefaultFanout, "buckets read concurrently per query (0: the default)")
	fs.IntVar(&c.maxBuckets, "max-buckets", query.DefaultMaxBuckets, "buckets one query's time range may span (RESOURCE_EXHAUSTED beyond; 0: the default; negative: no bound)")
	fs.IntVar(&c.maxParts, "max-partitions", substrait.DefaultMaxPartitions, "partitions one routed read may list with IN or = ANY (INVALID_ARGUMENT beyond; 0: the default)")
	fs.BoolVar(&c.analytical, "analytical", false, "analytical mode on for every session: a query may read a table without pinning its partitions (every partition of its range, discovered from the stores); sessions may turn it off, or on without this flag, with the session option analytical")
	fs.IntVar(&c.analyticalParts, "analytical-max-partitions", query.DefaultAnalyticalMaxPartitions, "partitions one analytical read may discover in its range (RESOURCE_EXHAUSTED beyond; 0: the default; negative: no bound)")
	fs.Int64Var(&c.queryMemory, "query-memory", query.DefaultQueryMemory, "bytes one query's batches may hold on the scan path (RESOURCE_EXHAUSTED beyond; 0: the default; negative: no bound)")
	fs.DurationVar(&c.queryCPU, "query-cpu", query.DefaultQueryCPU, "CPU time one query's fragments and coordinator may use in all, measured per batch (RESOURCE_EXHAUSTED beyond; 0: the default; negative, e.g. -1s: no bound)")
	fs.Int64Var(&c.totalMemory, "total-query-memory", query.DefaultTotalMemory, "bytes all queries' batches may hold together (RESOURCE_EXHAUSTED for the query whose next batch would pass it; 0: the default; negative: no bound)")
	fs.Int64Var(&c.queryMaxRows, "query-max-rows", query.DefaultMaxRows, "rows one query's bucket fragments may produce: rows read after filters, or partial-aggregate rows, with the rows its set-returning functions produce (RESOURCE_EXHAUSTED beyond; 0: the default; negative: no bound)")
	fs.DurationVar(&c.connIdleTimeout, "conn-idle-timeout", server.DefaultConnIdleTimeout, "how long a client connection may stay open with no call in flight before the server closes it (GOAWAY; clients reconnect at their next call; 0: the default; negative, e.g. -1s: no bound)")
	fs.DurationVar(&c.putIdleTimeout, "put-idle-timeout", server.DefaultPutIdleTimeout, "how long a write's stream (DoPut: ingest, update and parameter batches) may wait for the client's next message before the write is abandoned, storing nothing (DEADLINE_EXCEEDED; frees its locks; 0: the default; negative, e.g. -1s: no bound)")
	fs.DurationVar(&c.contendedStall, "contended-stall-timeout", server.DefaultContendedStallTimeout, "how long a client may go without reading a result stream (its sends waiting 90% of the time, under 256 KiB/s) while it (its user, else its connection) holds more than its share of the query slots and another client waits for one, or while a waiting client runs nothing, before its connection is closed (0: the default; negative, e.g. -1s: only --stall-timeout applies)")
	fs.DurationVar(&c.requestWait, "request-wait", server.DefaultRequestWait, "how long a call may wait for its request message (a DoGet's ticket, an action) before it ends with DEADLINE_EXCEEDED (0: the default; negative, e.g. -1s: no bound)")
	fs.IntVar(&c.maxConnsPerIP, "max-conns-per-ip", 0, "client connections open at once from one IP address (0: the default, a quarter of --max-conns; negative: unbounded; behind a proxy every client is its address)")
	fs.IntVar(&c.maxConns, "max-conns", 0, "client connections open at once; one beyond is closed as it is accepted (0: the default, from the file descriptor limit less 1,024 for the stores, at most 10,000; negative: unbounded)")
	fs.IntVar(&c.maxConnStreams, "max-conn-streams", server.DefaultMaxConnStreams, "calls in flight on one client connection (HTTP/2 MAX_CONCURRENT_STREAMS; clients queue the others; 0: the default; negative: unbounded)")
	fs.DurationVar(&c.stallTimeout, "stall-timeout", server.DefaultStallTimeout, "how long one message of a result stream may wait for a client that stopped reading before its connection is closed (frees the query's slot; 0: the default; negative, e.g. -1s: no bound)")
	fs.IntVar(&c.routeCache, "route-cache", routing.DefaultRouteCacheEntries, "archived routes cached per process (0: the default; negative: no cache)")
	fs.DurationVar(&c.payloadCheck, "payload-check-interval", archive.DefaultPayloadCheckInterval, "how long a check that an archived bucket's payload exists with the size its manifest recorded is trusted: one stat (HEAD) per archived bucket read per interval (0: the default; negative, e.g. -1s: every read checks)")
	fs.DurationVar(&c.damageMemory, "damage-memory", routing.DamageMemory, "how long reads of an archived bucket found missing or damaged answer DATA_LOSS at once before the archive is read again (also how long restored objects may go unseen; 0: the default)")
	fs.DurationVar(&c.ticketTTL, "ticket-ttl", flightsql.DefaultTicketTTL, "how long a ticket may be fetched after GetFlightInfo or RenewFlightEndpoint (FAILED_PRECONDITION beyond, with --auth-clock-skew of leeway; 0: the default)")
	fs.BoolVar(&c.multiEndpoint, "multi-endpoint", false, "answer row-returning queries over several buckets with ordered endpoints, one per group of buckets, unless the session chooses (session option endpoints=single|multiple; default: one endpoint)")
	fs.IntVar(&c.endpointBkts, "endpoint-buckets", query.DefaultEndpointBuckets, "buckets one endpoint of a multi-endpoint result reads at most (0: the default)")
	fs.IntVar(&c.maxEndpoints, "max-endpoints", query.DefaultMaxEndpoints, "endpoints one result may have (groups of buckets grow beyond it; 0: the default)")
	fs.StringVar(&c.advertise, "advertise", "", "comma-separated addresses (host:port, or grpc+tcp:// / grpc+tls:// URIs) of the replicas serving this address, put into every endpoint's locations (default: none; never a wildcard address)")
	fs.StringVar(&c.peers, "peers", "", "comma-separated addresses (host:port, or grpc+tcp:// / grpc+tls:// URIs) of the replicas a CancelFlightInfo is forwarded to, so that it stops the query's streams and poll on every replica (default: the --advertise addresses)")
	fs.StringVar(&c.peerCA, "peer-ca", "", "PEM CA certificates that verify grpc+tls peers (default: the system's roots); with --tls-cert, this server's certificate is the client certificate it presents to them")
	fs.DurationVar(&c.pollTTL, "poll-ttl", flightsql.DefaultPollTTL, "how long a PollFlightInfo query and its results are kept without being polled (0: the default)")
	fs.Int64Var(&c.pollMemory, "poll-memory", flightsql.DefaultPollMemory, "bytes of result batches all PollFlightInfo queries may keep together; results beyond it are executed when fetched (0: the default; negative: none kept)")
	fs.IntVar(&c.queryConns, "query-connections", 0, "hot-store connections queries may use together, so that appends and the archiver always have the rest of the pool; a query read waits --query-connection-wait for one, then the query is UNAVAILABLE (0: the pool's size minus 4 for PostgreSQL/CockroachDB, no cap for SQLite; negative: no cap)")
	fs.DurationVar(&c.queryConnWait, "query-connection-wait", server.DefaultQueryConnectionWait, "how long a query read waits for one of the --query-connections (0: the default)")
	fs.StringVar(&c.metricsListen, "metrics-listen", "", "serve Prometheus metrics at http://ADDR/metrics (default: off)")
	fs.StringVar(&c.otlp.Endpoint, "otlp-endpoint", "", "export traces and metrics over OTLP to this URL (http://collector:4317 for grpc, http://collector:4318 for http/protobuf); overrides OTEL_EXPORTER_OTLP_ENDPOINT and its per-signal forms (default: those variables; none set: no export)")
	fs.StringVar(&c.otlp.Protocol, "otlp-protocol", "", "OTLP transport: grpc or http/protobuf; overrides OTEL_EXPORTER_OTLP_PROTOCOL and its per-signal forms (default: those variables, else http/protobuf)")
	fs.BoolVar(&c.logStatements, "log-statements", false, "put the SQL text of queries into their log lines and into flightsrv.queries (it may hold literal values: partitions, parameters; default: never, only the statement kind)")
	fs.StringVar(&c.debugListen, "debug-listen", "", "serve Go runtime profiles at http://ADDR/debug/pprof/ (default: off; bind to loopback)")
	fs.IntVar(&c.maxQueries, "max-queries", server.DefaultMaxQueries, "queries executing at once; more wait in a queue (UNAVAILABLE beyond it; 0: the default)")
	fs.IntVar(&c.maxQueued, "max-queued", server.DefaultMaxQueued, "queries waiting for a slot beyond --max-queries (0: the default; negative: none wait)")
	fs.DurationVar(&c.queueWait, "queue-wait", server.DefaultQueueWait, "how long a query waits for a slot before UNAVAILABLE (0: the default)")
	fs.IntVar(&c.maxPollQueries, "max-poll-queries", 0, "of the --max-queries slots, those PollFlightInfo queries may hold at once; more polls wait in their own queue until --poll-ttl (0: the default, half of --max-queries, at least 1)")
	fs.DurationVar(&c.queryTimeout, "query-timeout", server.DefaultQueryTimeout, "wall time one query's stream may take (DEADLINE_EXCEEDED beyond; 0: the default; negative, e.g. -1s: no bound)")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", server.DefaultDrainTimeout, "on SIGTERM or SIGINT: how long running queries may finish before they are cancelled (new ones are refused at once; 0: the default; negative, e.g. -1s: cancel at once)")
	fs.DurationVar(&c.healthInterval, "health-interval", server.DefaultHealthInterval, "how often the hot store and the archive are probed for gRPC health checking: health answers NOT_SERVING within one interval of either failing, SERVING again after (0: the default)")
	fs.StringVar(&c.shredCache, "shred-cache", "", "directory of the shredded-column cache: the typed columns of the JSON fields queries read from archived buckets, kept in one file per bucket holding every field read from it, so that later queries read them instead of parsing the documents (default: off; see docs/running.md)")
	c.shredCacheSize = defaultShredCacheSize
	fs.Func("shred-cache-size", "bytes the --shred-cache directory may hold, least recently used buckets' files out beyond (GOMEMLIMIT's syntax, e.g. 512MiB; default 1GiB)", func(v string) error {
		n, err := parseSize(v)
		if err != nil {
			return err
		}
		if n <= 0 {
			return fmt.Errorf("size %q: must be positive", v)
		}
		c.shredCacheSize = n
		return nil
	})
	c.memoryLimit = memoryLimitFlag{auto: true}
	c.sec.register(fs)
	fs.Var(&c.memoryLimit, "go-memory-limit", "soft limit on the Go runtime's memory (not the queries' own limits, --query-memory and --total-query-memory): SIZE (e.g. 256MiB, GOMEMLIMIT's syntax), off, or auto: 40MiB plus 32MiB per query stream beyond the first (at most --total-query-memory more), or GOMEMLIMIT when set")
	fs.Var(&c.memoryLimit, "memory-limit", "deprecated name of --go-memory-limit")
	for _, f := range c.mustNotBeNegative() {
		if fl := fs.Lookup(strings.TrimPrefix(f.flag, "--")); fl != nil {
			fl.Usage = offHelp(fl.Usage)
		}
	}
}

// offHelp adds to a flag's help that a negative value is refused: the setting cannot be off.
func offHelp(usage string) string {
	if i := strings.LastIndex(usage, ")"); i == len(usage)-1 {
		return usage[:i] + "; negative: refused, it cannot be off)"
	}
	return usage + " (negative: refused, it cannot be off)"
}

func (c *serveConfig) validate() error {
	if _, _, err := net.SplitHostPort(c.listen); err != nil {
		return fmt.Errorf("--listen %q: %w", c.listen, err)
	}
	if err := c.refuseNegative(); err != nil {
		return err
	}
	if _, err := c.locations(); err != nil {
		return err
	}
	if _, err := c.peerURIs(); err != nil {
		return err
	}
	if len(c.tables) == 0 {
		return fmt.Errorf("no table configured (--table name=…,partition=…,strategy=…)")
	}
	if err := c.otlp.Validate(); err != nil {
		return err
	}
	return c.sec.validate()
}

// mustNotBeNegative are the serve settings that cannot be off (internal/setting's convention:
// 0 is the default, and a negative value would turn them off), with their flags; the
// registered help of each says so (offHelp).
func (c *serveConfig) mustNotBeNegative() []struct {
	flag     string
	negative bool
} {
	return []struct {
		flag     string
		negative bool
	}{
		{"--fanout", c.fanout < 0}, {"--max-partitions", c.maxParts < 0},
		{"--max-queries", c.maxQueries < 0}, {"--queue-wait", c.queueWait < 0}, {"--max-poll-queries", c.maxPollQueries < 0},
		{"--poll-ttl", c.pollTTL < 0}, {"--query-connection-wait", c.queryConnWait < 0},
		{"--ticket-ttl", c.ticketTTL < 0}, {"--endpoint-buckets", c.endpointBkts < 0}, {"--max-endpoints", c.maxEndpoints < 0},
		{"--damage-memory", c.damageMemory < 0}, {"--health-interval", c.healthInterval < 0},
	}
}

// refuseNegative names the first setting given a negative value that cannot be off.
func (c *serveConfig) refuseNegative() error {
	for _, f := range c.mustNotBeNegative() {
		if f.negative {
			return fmt.Errorf("%s must not be negative: it cannot be turned off (0: the default)", f.flag)
		}
	}
	return nil
}

func cmdServe(ctx context.Context, args []string) error {
	var cfg serveConfig
	fs := newFlags("serve")
	cfg.register(fs, true)
	fs.Var(&cfg.tables, "table", "routed table, repeatable: name=N[,id=TABLE_ID][,partition=COL][,strategy=year|month|day][,window=N][,value=json|bytes] (default: name=messages,partition=channel_id,strategy=year,window=2,value=json; value=json refuses writes of a value that is not JSON)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if len(cfg.tables) == 0 {
		_ = cfg.tables.Set("name=messages,partition=channel_id,strategy=year,window=2")
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	setProfiling(&cfg)
	st, err := openStoreWith(ctx, cfg.store, cfg.sqliteRowAggs)
	if err != nil {
		return err
	}
	defer st.Close()
	if cfg.migrate {
		if err := st.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := st.Validate(ctx); err != nil {
		return fmt.Errorf("validate schema (run `flightsrv migrate` or pass --migrate): %w", err)
	}
	if err := checkTables(ctx, st, cfg.tables); err != nil {
		return err
	}
	srv, tel, err := startServer(ctx, &cfg, st)
	if err != nil {
		return err
	}
	defer shutdownTelemetry(tel)
	slog.Info("serving Flight SQL", "addr", srv.Addr(), "store", st.kind, "tables", len(cfg.tables), "pushdown", cfg.pushdown,
		"tls", cfg.sec.tlsCert != "", "mtls", cfg.sec.tlsClientCA != "", "auth", !cfg.sec.noAuth)
	return srv.Wait(ctx)
}

// shutdownTelemetry flushes what the telemetry holds (spans and metrics not yet exported) for
// at most five seconds: a collector that is down must not hold the process's exit.
func shutdownTelemetry(tel *telemetry.Telemetry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tel.Shutdown(ctx)
}

// setProfiling turns the runtime's heap profiling off unless the debug endpoint, the only
// reader of heap profiles in a flightsrv process, is served: sampled allocations keep records
// and a stack hash table (about 1.5 MiB) for nothing. For the serve and demo commands only.
func setProfiling(cfg *serveConfig) {
	if cfg.debugListen == "" {
		runtime.MemProfileRate = 0
	}
}

// startServer opens the archive and starts serving.
func startServer(ctx context.Context, cfg *serveConfig, st *openedStore) (*server.Server, *telemetry.Telemetry, error) {
	bucket, err := openArchive(ctx, cfg.archive)
	if err != nil {
		return nil, nil, err
	}
	memLimit, memPerStream := cfg.memoryLimit.limits()
	reader, err := archive.NewReader(bucket, archive.ReaderOptions{PayloadCheckInterval: cfg.payloadCheck, FooterCacheBytes: footerCacheBytes(memLimit),
		FileDir: archiveFileDir(cfg.archive)})
	if err != nil {
		return nil, nil, err
	}
	var shreds *shred.Cache
	if cfg.shredCache != "" {
		if shreds, err = shred.Open(cfg.shredCache, cfg.shredCacheSize); err != nil {
			return nil, nil, fmt.Errorf("--shred-cache: %w", err)
		}
		shred.RegisterMetrics(shreds)
	}
	tel, err := telemetry.Setup(ctx, telemetry.Service{Version: version, Instance: cfg.listen}, cfg.otlp)
	if err != nil {
		return nil, nil, err
	}
	if tel.Traces || tel.Metrics {
		slog.Info("exporting telemetry over OTLP", "traces", tel.Traces, "metrics", tel.Metrics)
	}
	ring, authn, tlsCfg, err := cfg.sec.build(cfg.listen)
	if err != nil {
		return nil, nil, err
	}
	if cfg.sec.authKeyring != "" && ring != nil {
		go watchKeyring(ctx, cfg.sec.authKeyring, ring, keyringPoll)
	}
	locations, err := cfg.locations()
	if err != nil {
		return nil, nil, err
	}
	peers, err := cfg.peerURIs()
	if err != nil {
		return nil, nil, err
	}
	peerTLS, err := cfg.peerTLS()
	if err != nil {
		return nil, nil, err
	}
	srv, err := server.Start(ctx, server.Config{
		Auth: authn, TLS: tlsCfg,
		Listen: cfg.listen, Tables: cfg.tables, Hot: st.adapter(), Archive: reader,
		Pushdown: cfg.pushdown, ShredCache: shreds, Fanout: cfg.fanout, MaxBuckets: cfg.maxBuckets, MaxPartitions: cfg.maxParts, Analytical: cfg.analytical, AnalyticalMaxPartitions: cfg.analyticalParts, QueryMemory: cfg.queryMemory, TotalQueryMemory: cfg.totalMemory, QueryMaxRows: cfg.queryMaxRows, QueryCPU: cfg.queryCPU, StallTimeout: cfg.stallTimeout, ContendedStallTimeout: cfg.contendedStall, MaxConnStreams: cfg.maxConnStreams, MaxConns: cfg.maxConns, MaxConnsPerIP: cfg.maxConnsPerIP, RequestWait: cfg.requestWait, PutIdleTimeout: cfg.putIdleTimeout, ConnIdleTimeout: cfg.connIdleTimeout, RouteCacheEntries: cfg.routeCache, DamageMemory: cfg.damageMemory,
		Keyring: ring, TicketTTL: cfg.ticketTTL, MultiEndpoint: cfg.multiEndpoint, EndpointBuckets: cfg.endpointBkts, MaxEndpoints: cfg.maxEndpoints, Advertise: locations,
		Peers: peers, PeerTLS: peerTLS, PollTTL: cfg.pollTTL, PollMemory: cfg.pollMemory,
		QueryConnections: cfg.queryConns, QueryConnectionWait: cfg.queryConnWait,
		MetricsListen: cfg.metricsListen, MetricsHandler: tel.Handler(), DebugListen: cfg.debugListen,
		GoMemoryLimit: memLimit, GoMemoryLimitPerStream: memPerStream, Version: version, LogStatements: cfg.logStatements, Admins: cfg.sec.adminList(),
		MaxQueries: cfg.maxQueries, MaxQueued: cfg.maxQueued, MaxPollQueries: cfg.maxPollQueries, QueueWait: cfg.queueWait, QueryTimeout: cfg.queryTimeout, DrainTimeout: cfg.drainTimeout,
		HealthInterval: cfg.healthInterval,
	})
	if err != nil {
		tel.Shutdown(context.Background())
		return nil, nil, err
	}
	return srv, tel, nil
}

// locations returns the URIs of --advertise: host:port gets the scheme grpc+tls:// when
// serving TLS, grpc+tcp:// otherwise. A wildcard or empty host is refused: clients cannot
// connect to a bind address.
func (c *serveConfig) locations() ([]string, error) { return c.uris("--advertise", c.advertise) }

// peerURIs returns the URIs of --peers (as locations reads them), or --advertise's when
// --peers is not given.
func (c *serveConfig) peerURIs() ([]string, error) {
	if strings.TrimSpace(c.peers) == "" {
		return c.locations()
	}
	return c.uris("--peers", c.peers)
}

// uris parses the comma-separated addresses of flag (value list).
func (c *serveConfig) uris(flag, list string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		uri := a
		if !strings.Contains(a, "://") {
			scheme := "grpc+tcp://"
			if c.sec.tlsCert != "" {
				scheme = "grpc+tls://"
			}
			uri = scheme + a
		}
		u, err := url.Parse(uri)
		if err != nil || (u.Scheme != "grpc+tcp" && u.Scheme != "grpc+tls" && u.Scheme != "grpc") || u.Port() == "" {
			return nil, fmt.Errorf("%s %q: want host:port or grpc+tcp://host:port (grpc+tls:// with TLS)", flag, a)
		}
		if h := u.Hostname(); h == "" || net.ParseIP(h) != nil && net.ParseIP(h).IsUnspecified() {
			return nil, fmt.Errorf("%s %q: a wildcard address is no address clients can connect to", flag, a)
		}
		out = append(out, uri)
	}
	return out, nil
}

// peerTLS returns the client TLS configuration for grpc+tls peers: --peer-ca's roots (the
// system's without it) and, when serving TLS, this server's certificate as the client
// certificate (peers requiring mutual TLS accept it when their --tls-client-ca signed it).
func (c *serveConfig) peerTLS() (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.peerCA != "" {
		pem, err := setting.ReadFile(c.peerCA)
		if err != nil {
			return nil, fmt.Errorf("--peer-ca: %w", err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--peer-ca %s holds no PEM certificate", c.peerCA)
		}
	}
	if c.sec.tlsCert != "" {
		cert, err := loadKeyPair(c.sec.tlsCert, c.sec.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// checkTables refuses table definitions that contradict what the store holds, because each
// would start and answer every query with nothing: a strategy other than the one persisted for
// the table id (bucket keys would match no stored bucket), or a table id of which the store
// holds no bucket while it holds ids no --table serves (the id= was probably forgotten: a
// table's id defaults to its name). The message says what differs and how to fix it.
func checkTables(ctx context.Context, catalog routing.TableCatalog, tables []routing.TableDef) error {
	stored, err := catalog.StoredTables(ctx)
	if err != nil {
		return fmt.Errorf("list the tables the store holds: %w", err)
	}
	held := map[string][]routing.Strategy{}
	for _, st := range stored {
		held[st.TableID] = append(held[st.TableID], st.Strategy)
	}
	served := map[string]bool{}
	for _, d := range tables {
		served[d.TableID] = true
	}
	var unserved []string
	for _, st := range stored {
		if !served[st.TableID] {
			unserved = append(unserved, fmt.Sprintf("%q (%s)", st.TableID, shortStrategy(st.Strategy)))
		}
	}
	for _, d := range tables {
		strategies, ok := held[d.TableID]
		if !ok {
			if len(unserved) > 0 {
				return fmt.Errorf("table %s: the store holds no bucket of table id %q, but it holds table ids that no --table serves: %s; give the table's id with id= in --table (the id defaults to the name)",
					d.Name, d.TableID, strings.Join(unserved, ", "))
			}
			continue
		}
		for _, st := range strategies {
			if st != d.Strategy {
				return fmt.Errorf("table %s: --table says strategy=%s, but the store holds %s buckets of table id %q; a table id's strategy cannot change (fix strategy= in --table)",
					d.Name, shortStrategy(d.Strategy), shortStrategy(st), d.TableID)
			}
		}
	}
	return nil
}

// shortStrategy returns the --table spelling of a strategy (year, month, day).
func shortStrategy(s routing.Strategy) string {
	return strings.TrimSuffix(strings.TrimPrefix(s.String(), "calendar_"), "_utc")
}

// tableByName returns the configured table named name (case-insensitive).
func tableByName(tables []routing.TableDef, name string) (routing.TableDef, error) {
	for _, t := range tables {
		if strings.EqualFold(t.Name, name) {
			return t, nil
		}
	}
	return routing.TableDef{}, fmt.Errorf("table %q is not configured", name)
}
