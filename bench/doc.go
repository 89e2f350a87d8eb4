// Package bench holds flightsrv's end-to-end benchmarks. It has no library code: everything is
// in _test.go files, plus testdata/duckcount.py, the DuckDB side of the comparison. Nothing
// may import this package; it may import any other package of the module.
//
// # Running
//
//	make bench                      # PostgreSQL cluster, .venv with duckdb, every variant, summary
//	make bench BENCHTIME=5s         # longer runs per variant (default 2s)
//
// `make bench` creates .venv (duckdb, pyarrow) when it cannot import them, starts a throwaway
// PostgreSQL cluster (scripts/with-postgres.sh) and runs
// `go test -run '^$' -bench . -benchtime $(BENCHTIME) ./bench/...`. It takes about 1.5 minutes
// on 2 cores (a 2 s BENCHTIME; about 10 s of it is set-up). Without make, the benchmarks start
// their own cluster through internal/pgtest:
//
//	go test -run '^$' -bench 'CountORD/tier=archive/range=full' -benchtime 2s ./bench/
//
// Environment: FLIGHTSRV_FLIGHTS_PARQUET overrides the source file (default
// ../shared/data/flights-3m.parquet relative to the repository root); FLIGHTSRV_BENCH_PYTHON
// names a Python with the duckdb module (default .venv/bin/python; without one the DuckDB
// rows are skipped and the reference count comes from arrow-go alone); FLIGHTSRV_TEST_PG_URL
// and FLIGHTSRV_TEST_PG_BINDIR as for internal/pgtest. CPU profiles work as usual
// (-cpuprofile cpu.out); set-up is in them too, so focus on query.(*Engine).Execute or the
// Flight handlers.
//
// # What BenchmarkCountORD measures
//
// The query is the seed's shape, COUNT(*) of one partition over a half-open time range, for
// ORD, the busiest origin of the file (166,341 flights): the whole history
// [2001-01-01, 2001-07-01), six month buckets, and a partial range [2001-02-10, 2001-05-20)
// that straddles two bucket boundaries (two whole buckets, two partial ones).
//
// Set-up, untimed: the whole file is read by internal/load (load.File, the real mapping and
// append path with its write fence; month buckets, a writable window of 12, clock
// 2001-07-31 as `flightsrv load --as-of` sets it) and only ORD's records are appended, into a
// fresh PostgreSQL database (routing/cockroach), followed by VACUUM ANALYZE, as autovacuum
// would eventually do (otherwise it may start during a measurement). The reference counts
// come from the source file, independently of the loader: arrow-go reading only the origin and
// date columns, and DuckDB over the file; both must agree, and every variant must return them,
// once before timing and in every timed iteration (a mismatch fails the benchmark).
//
// Sub-benchmarks are named tier=…/range=…/via=…[/pushdown=on|off]:
//
//   - tier=hot: all of ORD's buckets hot in PostgreSQL. Then archive.Archiver archives all six
//     buckets to Parquet payloads in a file:// bucket (default writer options: 16,384-row row
//     groups, 64 KiB pages, statistics and page index) and deletes the hot rows, and
//   - tier=archive: all buckets archived; routes come from the route cache after the first
//     query.
//   - via=flightsql: arrow-go's Flight SQL client against internal/server.Start on
//     127.0.0.1:0 (GetFlightInfo then DoGet): what a user sees.
//   - via=engine: query.Engine.Execute of the SQL text in process (parse, plan, execute), the
//     same engine without gRPC.
//   - pushdown=on|off: the server or engine flag; off runs COUNT(*) on the scan path, which reads
//     every record (value included) and counts them.
//   - via=direct-pgx (hot): the store asked directly over one pgx connection,
//     SELECT count(*) FROM pulpitum_v4_records WHERE table_id=$1 AND partition_key=$2 AND
//     event_time >= $3 AND event_time < $4 (prepared by pgx's statement cache).
//   - via=direct-duckdb (archive): DuckDB over the same six payload files,
//     SELECT count(*) FROM read_parquet([...]) WHERE event_time >= … AND event_time < …,
//     on one long-lived connection in a Python process fed one query per iteration; the time
//     is measured inside Python around execute+fetch (store-p50-ns/op), so the pipe is not
//     counted against DuckDB.
//
// Every variant runs its queries one at a time with b.Loop and b.ReportAllocs (allocations
// include both Flight SQL client and server, which share the process). Besides ns/op (mean),
// each reports p50-ns/op, the median iteration, which the summary uses.
//
// # Bytes
//
// Bytes are measured in a separate, untimed pass per variant, through a fresh engine whose
// hot store connects through a counting TCP proxy, so timed runs carry no instrumentation:
// one first query (fresh archive reader and route cache: manifests, footers and routes are
// fetched), one warm-up, then the mean of two steady-state queries.
//
//   - pg-recv-B/op (hot tier): PostgreSQL wire-protocol bytes received by flightsrv (server →
//     client, all of the protocol's messages for the query), counted by the proxy. For the scan
//     path it is dominated by the DataRow messages carrying every record's event_time, sort_key
//     and value; pushdown receives one row per bucket statement.
//   - obj-B/op and obj-cold-B/op (archive tier): routing.ReadStats.BytesRead, the bytes fetched
//     from object storage (manifests, footer tails, pages, whole payloads), per steady-state
//     query and for the first query. Whole-bucket counts are answered by the validated,
//     cached manifest's record count, so the steady-state pushdown reads nothing; the
//     comparison the targets use is therefore the first query's.
//   - file-B/op (DuckDB): the growth of the Python process's rchar (/proc/self/io) during the
//     query: bytes DuckDB read from the payload files.
//   - hot-rows/op: records returned by hot-store reads (routing.ReadStats.HotRows); the summary
//     also shows statements sent to the hot store (HotStatements).
//
// # Reading the summary
//
// After the sub-benchmark lines, BenchmarkCountORD prints (to stdout, once) a table of every
// variant (p50, mean, iterations, bytes per steady-state and first query, hot rows and
// statements), the ratios per range, tier and path — scan/pushdown latency, scan/pushdown
// bytes (steady state, first query in parentheses) and pushdown/direct latency — and the
// issue's targets for the whole-history count, each marked MET or MISSED with the margin:
//
//   - archive tier: pushdown ≥ 50× faster than the scan path (Flight SQL and engine paths);
//   - archive tier: pushdown reads ≥ 100× fewer bytes than the scan path (first query);
//   - each tier: pushdown latency within 1.5× of asking the store directly (PostgreSQL via
//     pgx for hot, DuckDB over the payload files for archive). The Flight SQL path pays two
//     gRPC round trips and SQL parsing that the direct query does not; the engine row isolates
//     them.
//
// Nothing here asserts speed: a missed target is printed, never a failure.
//
// Caveats when comparing runs: PostgreSQL, DuckDB and flightsrv share the machine's cores
// (on 2 cores the hot pushdown's four concurrent bucket counts and PostgreSQL's parallel
// sequential scan of the direct count compete for the same CPUs); the file:// archive has
// local-disk latency with a warm page cache, so object-store round trips (tens of ms on S3)
// are not in the archive figures — object reads per query are what carries over; the
// scan-path variants are slow (about 0.2–0.6 s), so they run only a few iterations.
package bench
