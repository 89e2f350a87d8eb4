// Package bench holds flightsrv's end-to-end benchmarks. It has no library code: everything is
// in _test.go files, plus testdata/duckcount.py, the DuckDB side of the comparisons. Nothing
// may import this package; it may import any other package of the module.
//
// The benchmarks, each printing a summary table (most with the targets of their issue):
//
//   - BenchmarkCountORD: COUNT(*) of the busiest airport's flights, pushdown on and off, per
//     tier, against the stores asked directly.
//   - BenchmarkScan: the ordered scan SELECT timestamp, id, value … ORDER BY timestamp, id of
//     the same flights at a Go Flight SQL client, side by side with the stores asked
//     directly, arrow-go's example SQLite Flight SQL server and a loopback Flight server, with
//     flightsrv's peak RSS; then a partition of 1.5M rows.
//   - BenchmarkWindow (window_test.go): window queries over ORD's half year (a running sum per
//     day over every flight, the top three delays of every day, days ranked by their flights
//     with their share of the total) through Flight SQL, hot and archived, side by side with
//     DuckDB running the same windows over the source file; every answer's count is checked.
//     Measured on the shared 2-core machine (3 iterations, p50): running sum per day 239 ms
//     hot, 208 ms archived (DuckDB over the 3M-row file 356 ms); top three 367 / 197 ms
//     (DuckDB 240 ms); ranked days 122 / 10 ms (DuckDB 82 ms; archived counts come from
//     manifests). A running sum over ORD in time order keeps the read's order (no sort, the
//     input batches passed through): scan/ops BenchmarkWindowRunningSum, 200,000 ordered
//     rows, 35 ms sorted, 20 ms presorted (best of three; the machine is noisy).
//   - BenchmarkADBCEndpoints (adbc_bench_test.go): ADBC (Python, testdata/adbcfetch.py) fetching
//     ORD's history (January–March archived, April–June hot) with one endpoint from one
//     `flightsrv serve`, and with six ordered endpoints (--multi-endpoint --endpoint-buckets 1)
//     served by three processes sharing the database, archive and keyring (the endpoints'
//     rotating locations put two on each; ADBC fetches them concurrently): rows/s and the time
//     to the first batch of each, every run checked against the reference row count.
//   - BenchmarkOTLPExport (sidebyside_test.go): ORD's archived ordered scan against `flightsrv
//     serve` processes with OTLP export off and on (traces and metrics over gRPC to an
//     in-process receiver, internal/testsupport/otlprecv), two of each by default
//     (FLIGHTSRV_OTLP_PROCESSES), round by round as BenchmarkSideBySide runs them: the p50 and
//     server CPU per row of each (during its queries, and with the background work they
//     leave), the overhead of export pooled over the processes and for each pair (issue 20's
//     target: under 2%), and the spans a query exports. Where export's cost went (the
//     allocation and CPU profiles and the GC cycles per query of
//     FLIGHTSRV_SIDE_BY_SIDE_PROFILE, 300–900 rounds): gocloud.dev started a span of its own
//     for every object-store call (12 of the 26 spans of a query); batches of 512 spans made
//     gRPC requests beyond its pooled 32 KiB buffers, each marshalled into a fresh 1 MiB one;
//     the SDK's trace-based exemplar filter offered every measurement under an exported span
//     to a reservoir per reader; under serve's 40 MiB memory limit the extra allocation made
//     the collector run more often, its recycled buffers then missing too. With the library's
//     spans not recorded, batches of 64 spans and exemplars off (internal/telemetry), then
//     every span's attributes set in one call at its end and counts of zero left out (86
//     attributes a query instead of 119): 14 spans a query; beside main's build in one run
//     (this tree then with the hand-off below; 200 rounds, load 6.6–10.6), export on allocated 395 KiB a query against off's 368 (main's
//     426 against 333), 0.09–0.11 GC cycles a query against 0.08–0.10, and every variant's
//     threads switched 294–315 times a query, export on or off. In a CPU profile of 900 rounds
//     OpenTelemetry's own code (starting and ending spans, the exporter's conversion) took
//     1.4% of the exporting server's CPU, and garbage collection with refilled buffers about
//     2% more than without export; under a 256 MiB memory limit (0.02 GC cycles a query) the
//     overhead read +3.6% all the same (three processes of each, 200 rounds, load 9.3–9.6).
//     A hand-off that gave ended spans to the SDK's batch processor 64 at a time (whose export
//     goroutine is otherwise woken for each span) was tried and dropped: beside this build
//     (two processes of each, 150 rounds, load 9.6–12.6) it read +2.3% against this build's
//     +0.4%, with no fewer context switches.
//     How the figure was made fair (the seventeen runs this paragraph reported before, median
//     +0.8% against main's +4.0%, were taken without these): the first untimed round, each
//     variant's coldest query, was counted in the figures; the server's CPU was read in
//     /proc's 10 ms ticks (now its CPU-time clock, exact between queries); with three or more
//     variants, reversing every other round left the middle ones never first or last, and
//     such a variant read several percent apart from the same build at either end (every
//     comparison of three or more variants before the rotation is void); and two or three
//     processes of one build, side by side, differ by 1–4% of server CPU per row, about what
//     export costs, so one pair cannot tell: the benchmark pools processes. With the harness fixed, two processes of each build side by side
//     (FLIGHTSRV_SIDE_BY_SIDE with off-main-1, on-main-1, off-1, on-1, off-main-2…, 150
//     rounds, load 9–11), export's overhead of server CPU per row: main +1.2, +4.1, +2.6,
//     −0.4%; this tree (then with the hand-off) +0.4, +2.8, +3.0, +3.8% — within each other's
//     noise. This tree, BenchmarkOTLPExport with three processes of each (200 rounds, load
//     8.0–11.3): +3.3, +4.2, +2.3, +2.0% (with background work +3.5, +4.6, +2.7, +3.1%;
//     pairs +0.5 to +8.2%), and with its defaults (two of each, load 6.4–8.3) +5.2% (pairs
//     +4.7, +5.8%): median +3.3%, issue 20's 2% not met on this machine.
//     Then one span per archived bucket instead of two (the archive read takes over its
//     fragment's span and ends it as pulpitum.archive.read, scan/fragspan.go), and
//     pulpitum.query.limit, pulpitum.archive.records and a false pushed_down left out of it:
//     8 spans and 68 attributes a query instead of 14 and 86. What export adds to a query's
//     allocations, counted exactly with no collection at all (FLIGHTSRV_SIDE_BY_SIDE with
//     GOGC=off and --go-memory-limit 2GiB in every variant, 60 rounds, beside main's build
//     9ff69a0, two runs): main +53 and +54 KiB (+601 and +428 objects) over 328–355 KiB,
//     this tree +31 and +34 KiB (+435 and +370 objects) over 341–378 KiB; what remains is
//     mostly the OTLP exporter's conversion of every attribute into protobuf messages (about
//     2.5 objects an attribute) and the SDK's span and snapshot. Server CPU per row, export's
//     overhead, on a machine shared with six other builds (load 7–26; two processes of one
//     build read up to 8% apart): BenchmarkOTLPExport with its defaults, in order, −1.2,
//     +1.8, −3.2, +3.3, +4.5, −0.1, +3.7, +0.9% (pairs −0.6/−1.9, +1.5/+2.2, −3.0/−3.3,
//     +2.5/+4.0, +0.0/+9.2, +0.6/−0.9, +2.3/+5.1, +0.6/+1.3; with background work −0.9, +2.4,
//     −2.2, +3.4, +5.0, −0.1, +3.4, +1.0%), median +1.4%; the last three, at the day's least
//     load (7.3–12.1), −0.1, +3.7, +0.9%; beside main's build in
//     one run (two processes of each, 150 rounds, load 15.5–25.7) this tree −0.9% (pairs +0.7,
//     −2.4; with background work +0.3%), main +1.7% (pairs +1.1, +2.3; +2.6%). The medians are
//     under issue 20's 2%, but at this load one run's spread is wider than the target: the
//     allocation counts above are the firmer measure. The merged tree (4a55569) on the machine
//     otherwise idle (load average 2–3), make bench BENCH='^BenchmarkOTLPExport$' four times
//     in a row: +0.1, +3.2, −1.3, −0.2% (pairs +0.4/−0.2, +5.3/+1.1, −1.2/−1.4, −0.8/+0.5;
//     with background work +0.1, +3.2, −1.4, −0.0%), median −0.1%; 8.0 spans a query.
//     internal/telemetry's BenchmarkBucketSpans prices an archived bucket's span alone
//     (export on: 2.2–2.5 KB and 9–13 allocations, were 4.6 KB and 32 for the two spans).
//   - BenchmarkAnalytical (analytical_test.go): issue 19's nine analytical queries (count(*),
//     GROUP BY origin, filters, groupings and aggregates of (value->>'delay')::int and
//     value->>'destination', a top 10, count(DISTINCT …)) over every partition of
//     January–June, archived on file://, through `flightsrv serve --analytical` (a child
//     process, its peak RSS reported) and arrow-go's Flight SQL client, side by side in the
//     same rounds with DuckDB (the Python helper) over the same archive payload files (origin
//     decoded from each payload's key, the value decoded to text and read with ->>) and over
//     the source Parquet's native columns; every answer checked against DuckDB's over the
//     payloads. Three of its queries are joins (issue 18): every flight against its origin's
//     average delay (a hash join), the flights to a busy origin (IN (SELECT …), a semi join),
//     origins joined to destinations. Measured on the shared 2-core machine (sample, 3
//     rounds, medians): 2.16 s, 442 ms and 1.80 s, DuckDB over the payloads 1.97 s, 1.12 s and
//     2.84 s (1.10×, 0.39×, 0.63×). One is numeric (issue 18): each origin's distances as
//     numeric(10,0) times 1.0375, summed exactly (decimal128) and rounded to cents; measured
//     (sample, 2 rounds, load average 10.5): 948 ms, DuckDB over the payloads 865 ms (1.10×);
//     with the shredded-column cache warm 733 ms, DuckDB over the native columns 74 ms (9.95×).
//     Over the 3M-row file (FLIGHTSRV_ANALYTICAL_FULL=1, fixture kept with
//     FLIGHTSRV_ANALYTICAL_DIR, 3 rounds; two runs at load average 9–13), the warm cache with
//     cached event times and ids, entries read without a copy and pooled grouping scratch:
//     within 3× DuckDB native for 9 and 7 of 12 queries (count WHERE delay > 60 148/161 ms
//     vs 88/53 ms; destination WHERE delay > 60 250/328 ms vs 53/93 ms; the numeric sum
//     8.9/9.0 s and the join against avg 19.5/11.3 s, bound by scan/ops' numeric kernels);
//     day bins 321/343 ms (0.65×/0.44×); peak RSS 102–124 MiB, 38–40 MiB anonymous and
//     53 MiB file pages at the end (the peak moves with the load: the collector falls behind).
//     After the numeric kernels' fast paths (scan/ops/numfast.go; the first run before numeric_cast
//     read string arrays in place), two runs at load average
//     5–7 beside main's build (FLIGHTSRV_ANALYTICAL_BASELINE, its own warm cache: bwarm÷native):
//     the numeric sum warm 925/519 ms against 4.69/3.12 s (4.33×/1.86× native, was
//     21.97×/11.23×), the join against avg 4.31/4.36 s against 9.39/6.96 s (6.69×/9.03×, was
//     14.59×/14.43×: its probe side still reads and parses every payload, the JSON filter sits
//     above the join, outside the fragments, so no read of it is shredded); 7 and 9 of 12
//     within 3×; destination WHERE delay > 60 unchanged (10.66×/10.39× against a DuckDB
//     native of 22 ms).
//     With pruning by the cached ranges and entries read by open/read/close alone (branch
//     warm19b), beside main's build (FLIGHTSRV_ANALYTICAL_BASELINE, its own warm cache), at load
//     average 10–13 (the machine shared with four other builds: DuckDB native took 88 ms for
//     count WHERE delay > 60, not 33 ms as at load 6, so the ratios to it read low): all 12
//     queries, 3 rounds, warm 157 ms against main's 169 ms for count WHERE delay > 60, 293
//     against 408 ms for destination WHERE delay > 60, the rest within the run's noise; 11 of
//     12 within 3× DuckDB native for both builds at that load (the join against avg 4.44× and
//     5.15×). The three furthest queries again, 5 rounds (FLIGHTSRV_ANALYTICAL_QUERIES='delay >
//     60|^join: delay'): 168 against 156 ms, 248 against 322 ms, 7.86 against 8.88 s. delay >
//     60 prunes 48 of the 1,338 buckets (the others all hold a later flight).
//     With column pruning across joins and the join's JSON expressions computed by the probe
//     side's fragments (scan/joinprune.go; branch join19), beside main's build, 3M rows, 3
//     rounds, load average 5–9 (FLIGHTSRV_ANALYTICAL_QUERIES='^join: delay|^semi join'): the
//     join against avg warm 2.60 s against 6.15 s (4.15× against 9.84× DuckDB native), the
//     semi join 791 ms against 3.25 s (0.72× against 2.98×); the sample, 5 rounds, load 8–11:
//     667 ms against 1.80 s (3.55× against 9.58×), 248 against 406 ms (4.02× against 6.59×).
//     With the hash join evaluating its residual on the pairs' columns it reads alone and
//     gathering only the columns read above it (none under a count), keys encoded without an
//     allocation a row (branch join19b): the warm join against avg took 0.80 s of server CPU a
//     query in a CPU profile (5 queries, /debug/pprof), main's build 1.83 s (the join 0.47 s
//     a query, 0.20 s after; the collector's share 28% before). Then with the join's pieces
//     pushed only where PostgreSQL evaluates them on every row (the cast of
//     (f.value->>'delay')::int > o.a on the pairs, its text field from the cache), 1.10 s a
//     query (the cast of 3M texts 0.10 s, the numeric comparison's int-to-numeric cast and
//     compare 0.21 s). Beside main's build, 3M rows, 3 rounds, load average 17–24 (DuckDB
//     native took 4.07 s for the join against avg, so the ratios to it read low): warm 1.34 s
//     against main's 4.56 s, the semi join 1.90 against 3.20 s; the step before the cast moved
//     (load 15–20) 1.13 against 3.69 s. Peak RSS 96–98 MiB (38–39 MiB anonymous, 52–53 MiB
//     file pages at the end), main's build 112–114 MiB (39 MiB anonymous, 68 MiB of file
//     pages: the baseline runs from the linker's file, not an installed copy).
//     With runs of buckets per fragment, filters that take only the columns a later stage
//     reads and shared all-null columns (branch warm19c; scan/fragments.go groupSize,
//     ops.FilterCols, ops.NullColumn), the server's CPU per warm query (its /proc/PID/stat
//     over 4–6 runs after one untimed, 3M rows, main's build 9ff69a0 and the branch's served
//     side by side, load average 14–16, where wall medians vary by 2×): count WHERE delay > 60
//     158/166 → 68/84 ms; destination WHERE delay > 60 252/292 → 144/180 ms; top 10 by delay
//     412/425 → 205/265 ms; avg(delay) by origin 100/142 → 86/92 ms; day bins 212/224 →
//     192/196 ms; the numeric sum 702–768 → 726–816 ms, the one query the runs cost (about
//     10–15%: 616–661 ms with runs of one, 875–902 against 965–1077 ms in a later pairing; its
//     time is scan/ops' decimal kernels and the collector). Two full runs (3 rounds, load
//     average 14–20, the machine shared with other benchmarks: every ratio to DuckDB moves by
//     2× between them) gave 12 of 12 warm queries within 3× DuckDB native in both and peak RSS
//     99 and 95 MiB for the warm server (37–39 MiB anonymous at the end; main's build, run
//     from the linker's file rather than an installed copy, 114 and 115 MiB with 68 MiB of
//     file pages).
//     The cold path (no shredded cache; branch cold19), profiled through serve --debug-listen:
//     under the default 40 MiB limit count(*) WHERE delay > 60 allocated 214 MB of heap a
//     query and ran 66 collections, 3.4 MB apart (the live heap is about 20 MB of the 40), which
//     with the preemptions they cause took about half of its CPU (with --go-memory-limit off
//     0.56 s against 1.0 s); the JSON scan took about a fifth, zstd a twentieth, the footers of
//     the buckets the footer cache does not keep a tenth. Scratch kept across collections
//     (internal/freelist), fused casts built without builders, ledger.Pool buffers unpadded,
//     the filter's unread documents not copied (ops.FilterSelect, since folded into warm19c's
//     ops.FilterCols), span columns and footer tails rounded to powers of two and recycled:
//     224–233 MB and 79 collections a query on main's build, 77–84 MB and 23–28 on this one
//     (server CPU 0.84–1.29 s against 1.41–1.68 s, load 17; heap and collections from /debug/pprof/heap?debug=1 before and after). With a 56 MiB
//     limit the same query ran 5 collections and 0.66 s of CPU against 1.0 s (41 → 56 MiB
//     anonymous): the limit is the largest lever left. All 13 queries, 2 rounds, beside main's
//     build (FLIGHTSRV_ANALYTICAL_BASELINE), load 10–15: count WHERE delay > 60 884 ms against
//     1.51 s (0.74× against 1.26× DuckDB over the payloads), day bins 1.42 against 1.53 s
//     (0.91×), destination WHERE delay > 60 1.23 against 1.38 s (1.10×), origin, destination
//     895 ms against 1.34 s (0.64×), count(DISTINCT) 977 ms against 1.40 s (0.79×), numeric
//     2.79 against 3.49 s, semi join 4.35 against 5.67 s (1.03×); origin, avg(delay) 1.74
//     against 1.71 s (1.53×) unchanged, the top 10 2.07 against 1.83 s (1.55×; slower in an
//     earlier run too, but alternated alone on fresh servers, load 9, 1.27–1.63 s against
//     1.64–2.46 s, 35 collections against 60); 7 of 13 within DuckDB over the payloads (main's
//     build: 4).
//     The branches join19b, compute19, warm19c, cold19, otlp20c, sql18i and sql18j merged
//     (4a55569), beside 9ff69a0's build in the same run, 3M rows, 2 rounds, on the machine
//     otherwise idle (load average 4 falling to 2): cold ÷ DuckDB over the payloads (target
//     ≤ 1×) count WHERE delay > 60 390 ms 1.01× (9ff69a0: 821 ms, 2.12×); origin, avg(delay)
//     472 ms 0.90× (1.69×); day bins 562 ms 0.94× (1.69×); destination WHERE delay > 60 817 ms
//     1.50× (2.54×); origin, destination 808 ms 1.48× (2.13×); top 10 648 ms 1.23× (2.45×);
//     count(DISTINCT) 460 ms 1.10× (1.72×); numeric 1.21 s 2.55× (2.70×); join against avg
//     2.31 s 2.53× (4.53×); semi join 1.20 s 1.80× (2.14×); origins to destinations 458 ms 0.76×
//     (1.27×): 5 of 13 met (9ff69a0: 2). Warm ÷ DuckDB native (target ≤ 3×): count WHERE
//     delay > 60 42 ms 2.30× (133 ms, 7.23×); destination WHERE delay > 60 162 ms 5.33×
//     (10.55×); numeric 457 ms 2.60× (3.12×); join against avg 1.16 s 3.62× (6.07×); the
//     others 0.41–1.30×: 10 of 12 met (9ff69a0: 8). Peak RSS 96 MiB cold and 101 MiB warm
//     (38–39 MiB anonymous, 52–53 MiB file pages at the end).
//     With a join residual's pieces that may fail computed by the probe side's fragments and
//     their errors deferred to the pairs (branch defer18; scan/ops/deferred.go, deferredPiece
//     in scan/joinprune.go): the warm join against avg reads (value->>'delay')::int4 typed from
//     the shredded-column cache and casts it to numeric in the fragments, where main's build
//     (730a83f) read the text field and cast 3M texts, then 3M integers to numeric, on the
//     pairs. Server CPU a query (/proc/PID/stat, both builds served side by side over the
//     3M-row fixture, warm caches, runs alternated after two untimed each): 1.21 s median
//     (1.00–1.51) against 1.55 s (1.15–1.73) over 8 runs at load average 9–11, 0.66 s
//     (0.55–0.77) against 0.75 s (0.64–0.93) over 10 runs at load 12–14; cold (no cache) 4.81 s
//     against 4.98 s over 5 runs at load 11–13. BenchmarkAnalytical
//     beside main's build (FLIGHTSRV_ANALYTICAL_FULL=1, FLIGHTSRV_ANALYTICAL_BASELINE, 3 rounds):
//     at load 11–15 warm 1.68 s against 3.11 s (1.23× against 2.29× DuckDB native, which took
//     1.36 s at that load), cold 5.55 against 6.56 s; at load 9–12 warm 1.15 against 1.12 s
//     (0.75× against 0.73×, DuckDB native 1.54 s), cold 5.43 against 4.39 s, the semi join warm
//     616 against 1061 ms: walls move by 2× between runs at this load, the CPU is the figure
//     to read.
//     The cold path again (branch cold19b), on the shared machine at load average 8–19, where wall
//     medians moved 2× between runs (count(DISTINCT) 1.18 s then 4.26 s): server CPU per query (the
//     process's clock around each query, medians of 3 rounds, main's build 730a83f and this one
//     served side by side, the order rotated every round) is the firmer measure. Casts now run on
//     the calling goroutine (scan/ops/synccast.go), charged to --query-cpu; they were about 1% of
//     the cold queries' CPU (the join's text-to-int parses, int-to-int casts), so no query moves by
//     them. ledger.Pool keeps the buffers of arrow-go's builders, which reserve a power of two of
//     elements and shrink to the rows built: resliced in place, each buffer went to the free list of
//     a smaller class than the next builder asks for. The numeric sum took 157 MB a query from the
//     heap and ran 80 collections, now 24 MB and 23; server CPU 1.74 and 2.06 s against 1.10 and
//     1.24 s in two pairings (1.87 against 1.38 s in a third). The JSON scanner reads strings eight
//     bytes at a time (specialBytes): a third less CPU in scanDoc over the flights' documents, which
//     took about 30% of a JSON query's CPU. The other queries' CPU stayed within the noise (two
//     pairings of the same builds differed by up to 30% on a query). Two full runs beside main's
//     build (2 rounds, load 12–15), cold ÷ DuckDB over the payloads, this build then main's: count
//     WHERE delay > 60 0.41×/0.65× and 0.55×/0.53×; destination WHERE delay > 60 1.12×/0.81× and
//     0.64×/0.89×; numeric 1.69×/2.05× and 1.36×/2.54×; the join against avg 1.07×/1.13× and
//     1.62×/1.61×; semi join 1.26×/1.34× and 1.34×/1.31×; 7 and 6 of 13 met (main's build 9 and 8:
//     by wall time at this load the two builds cannot be told apart but for the numeric sum); peak
//     RSS 98 MiB cold (38 MiB anonymous, 53 MiB file pages), main's build 102–108 MiB (its file
//     pages 57–62 MiB: it runs from the linker's file).
//     Where the cold queries' heap goes, and why neither footers nor the limit moved: count WHERE
//     delay > 60 allocates about 40 MB of Go heap a query (10 MB of it the pool's fresh buffers), 18
//     MB of it loading the ~1,000 Parquet footers the footer cache does not hold (about 18 KB each:
//     parquet-go's OpenFile 9 KB, the raw statistics, the object store's reader; 13–15% of the
//     query's CPU: reading 58%, parsing 34%, the digest 7%). A parsed footer holds about 8 KB of
//     pointer-rich heap; caching all 1,338 would add 11 MB to a live heap of about 22 MB under the
//     40 MiB limit, whose heap goal sat only 2–4 MB above the live heap during the query (gctrace
//     24→26→22 MB, 26 MB goal: the runtime's metadata and partly filled spans hold 14–18 MB of the
//     40), so the collector would run without pause (cmd/flightsrv/memlimit.go measured a 13 MiB
//     footer cache 2.5–3× slower); footers cached without their payload bytes would cost every
//     cached bucket a ranged read (on S3 a GET) and its digest check. The limit is the lever: CPU
//     per query with --go-memory-limit 40, 44 and 48 MiB side by side (3 rounds, load 13–18; the
//     first figures before the JSON scanner's change, the second, 40 and 44 MiB, after it) count
//     WHERE delay > 60 960/1050/1100 and 660/630 ms; origin, avg(delay) 880/840/850 and 690/730 ms;
//     destination WHERE delay > 60 1180/940/910 and 730/730 ms; top 10 1070/950/1000 and 970/820 ms;
//     numeric 1100/890/850 and 1240/930 ms; the join against avg 3590/2690/2040 and 3240/2690 ms;
//     semi join 2150/1420/1170 and 1590/1200 ms; 56 MiB in an earlier pairing about as 48. Peak RSS
//     of the copies (cp-installed, 52–55 MiB of file pages with three or four servers running): 40
//     MiB 91.9–98.2 MiB, 44 MiB 94.4–100.2 MiB, 48 MiB 98.1–101.1 MiB, 56 MiB 106.0 MiB: 44 MiB
//     takes 17–34% less CPU for the joins and the numeric sum, 0–20% for the others (the filters
//     within the noise), for 3–4 MiB more anonymous memory, which leaves the 100 MiB target no
//     margin on this kernel's file pages. The default stays 40 MiB (cmd/flightsrv/memlimit.go); the
//     trade is the operator's (--go-memory-limit).
//     On a quiet machine at last (a fresh 2-core machine, load average under 1 before the runs,
//     main at dac5a9e, 3M rows, two runs of 3 and 5 rounds, medians; DuckDB 2.0.1 with 2
//     threads, whose figures the load had inflated up to 100× before): cold ÷ DuckDB over the
//     payloads count WHERE delay > 60 445 ms 0.92–0.93×; origin, avg(delay) 493–544 ms
//     0.97–1.02×; day bins 500–545 ms 0.78–0.82×; destination WHERE delay > 60 457–494 ms
//     0.98–1.04×; origin, destination 588–616 ms 1.23–1.33×; top 10 596–654 ms 1.23–1.36×;
//     count(DISTINCT) 516–551 ms 1.14–1.15×; numeric 754–782 ms 1.57–1.62×; join against avg
//     1.90–2.07 s 1.96–2.13×; semi join 1.16–1.34 s 1.63–1.84×; origins to destinations 573 ms
//     0.78–0.81×: 6 of 13 met in both runs. Warm ÷ DuckDB native: 12 of 12 within 3× in both
//     (the furthest destination WHERE delay > 60 72 ms 2.95–2.96×, the join against avg 889–920
//     ms 2.76–2.83×, count WHERE delay > 60 39–40 ms 1.89–1.94×). Peak RSS 96–97 MiB cold and
//     warm (38–39 MiB anonymous, 52–53 MiB file pages at the end). Loading the 3M rows into
//     SQLite took 18 s and archiving 1,341 buckets 14 s; the whole run 2 minutes.
//     After the branches wire18, cold19c, float18, lim18, sub18, grp18, cast18 and join19c
//     merged (701d750), beside dac5a9e's build in the same rounds (FLIGHTSRV_ANALYTICAL_BASELINE,
//     5 rounds, load average 1.4–2.9): cold top 10 554 against 626 ms (1.16× against 1.30× DuckDB
//     over the payloads: the top-k keeps at most k rows of a batch), semi join 1.02 against
//     1.22 s (1.41× against 1.68×: the hash join's scratch reused), the others within 5% (5 of 13
//     within 1× in both, origin, avg(delay) at 1.02×); warm top 10 94 against 152 ms, semi join
//     328 against 457 ms, 12 of 12 within 3× native; peak RSS 96–97 MiB (the baseline, run from
//     the linker's file, 107–109 MiB). Server CPU is about 1.5 cores of the 2 through the cold
//     queries (count WHERE delay > 60: 664 ms of CPU in 445 ms): a core idles about a quarter
//     of the wall time. Probing the hash join on several goroutines was tried and measured
//     slower (12–25% more CPU: more batches in flight, more collections under the 40 MiB limit).
//     The join against avg partition by partition (join19d, scan/partjoin.go: one fragment per
//     partition, each bucket read once for the aggregate and the probe, the probe without the
//     partition key), NULL literals and a join's unused columns as slices of the shared
//     all-null columns, the join's scratch pooled, a run of consecutive left rows sliced
//     instead of gathered: server CPU per query from /proc beside main's build (8aaab12), each
//     serving the 3M-row fixture, 3 alternating rounds of 2 queries at load average 11–28 (the
//     machine shared): cold join against avg 1.74–1.89 against 2.69–2.89 s (−35%; 182 against
//     295 MB allocated a query), cold semi join 1.13–1.17 against 1.38–1.41 s (the probe side's
//     pruned columns no longer allocated), origins to destinations unchanged (775–865 against
//     825–845 ms); warm (--shred-cache, each its own) join against avg 560–570 against 735–775
//     ms, semi join 230–260 against 285–305 ms. BenchmarkAnalytical beside it (3 rounds, load
//     average 11–25, so the wall times are noise): the join against avg 0.75–0.98× DuckDB over
//     the payloads against main's 0.58–1.18×, warm 0.99–1.17 s against 2.06–2.37 s; peak RSS
//     93–95 MiB (main's build, run from the linker's file, 106–109 MiB).
//     Why a core idled (branch fan19; go tool trace of one cold count WHERE delay > 60 through
//     serve --debug-listen, main's build at 8aaab12): a grouped read (partial aggregate or
//     top-k over runs of 16 buckets, 84 fragments) started its next fragment only when the
//     coordinator consumed the head, so the head's three followers ended and waited while one
//     core ran it (fragments 4–6 ended 8 ms before the head, fragment 3, let fragment 7 start).
//     Now such a read keeps at most the fan-out running and up to four times it started ahead
//     of the one consumed (scan/fragments.go, groupedWindow), and its runs shrink towards the
//     end (135 fragments, the last single buckets). The machine was shared at load average
//     10–25 throughout, so wall times and CPU ÷ wall say nothing of idle cores (the server's
//     threads waited 1–10 s a query in the run queue); replaying the fragments' running times
//     from five traces of main's build on two ideal cores, its policy kept 1.75–1.84 cores busy
//     through the fragments and the window 1.91–2.00 (4–10% less wall). The planning before the
//     first fragment took 5–21 ms of a query in most traces (up to 120 ms at load 20), the
//     final aggregate and the answer nothing measurable. A --fanout of 2 took 3–9% less CPU than 4 (fewer buffers live, fewer
//     collections) in one pairing at load 24, within the noise; not changed, as only the fan-out
//     keeps the cores busy while fragments wait for their reads. Reads of a file:// archive go
//     straight to its files (archive/fileobjects.go): fileblob stat'ed every object and decoded
//     its .attrs sidecar on every read, the object store's share of a cold query's CPU 9.5%
//     (CPU profile) against 5.5% now. BenchmarkAnalytical beside main's build, all 13 queries, 3
//     rounds, load 20–25: server CPU per query (the new column) count WHERE delay > 60 696
//     against 820 ms, origin, avg(delay) 814/874, day bins 758/880, destination WHERE delay >
//     60 835/985, origin, destination 925/1103, top 10 904/888, count(DISTINCT) 801/901,
//     numeric 1095/1082, join against avg 2706/2908, semi join 1461/1550, origins to
//     destinations 766/812 ms (a 7-query run at load 12–15: 594/664, 670/773, 723/727,
//     704/838, 867/920, 790/906, 808/906 ms); warm 72/113 ms … 1266/1183 ms; peak RSS 98 MiB
//     cold, 99 warm (the baseline, run from the linker's file, 111–112 MiB). The footer cache
//     (archive.ReaderOptions.FooterCacheBytes, 10% of the Go memory limit: 4 MiB, about 300
//     footers, each holding its payload's last 64 KiB, the whole of a payload under that, 1,164
//     of the 1,341) was measured on and off, and footers cached without payload bytes (more
//     fit): origin, avg(delay) after a first cold count WHERE delay > 60 on a fresh server took
//     695/705/772 ms (on/off/without payload bytes) then 747/691/704 ms of CPU in a second
//     pairing, peak RSS 104–107 MiB for all (cp-installed copies): within the noise, the cache
//     neither helps nor hurts these queries under the 40 MiB limit.
//     Quiet again after those merges (load average under 3, 3M rows, 3 rounds, 96a4187 beside
//     8aaab12's build in the same rounds): cold ÷ DuckDB over the payloads 8 of 13 within 1×
//     (count WHERE delay > 60 0.90×, origin, avg(delay) 0.95×, day bins 0.74×, destination
//     0.98×, top 10 0.97×, origins to destinations 0.68×; over: origin, destination 1.16×,
//     count(DISTINCT) 1.01×, numeric 1.14×, join against avg 1.39× against the baseline's
//     1.82× (1.34 against 1.74 s), semi join 1.06× against 1.35× (758 against 961 ms)); server
//     CPU per query join against avg 1.88 against 2.53 s, semi join 1.05 against 1.34 s, count
//     WHERE delay > 60 588 against 644 ms, the others within ±5%; cores busy through a cold
//     query 1.39–1.63 for both builds; warm ÷ native 11 of 12 (destination WHERE delay > 60
//     3.10×, the baseline 3.07×); peak RSS 98 MiB (the baseline 102). A floor on the shrinking
//     runs (none below a quarter of the first) measured the same as without it.
//     Where the cold queries' collections come from (branch gc19; GODEBUG=gctrace=1 and
//     /debug/pprof over the 3M-row fixture, main at e5b5ffb): under the 40 MiB limit the heap
//     goal sat at 26 MB and the live heap after a collection at 22–23 MB, so a collection came
//     every 3–4 MB allocated; a cold query allocated 37–64 MB of Go heap besides the 240–400 MB
//     its buffers took from ledger.Pool's free lists (10–30 MB of them fresh, two thirds in
//     buffers of 192 KiB–1 MiB, mostly span columns), ran 9–40 collections, and the collector's
//     share of its CPU (gctrace's cpu fields over the process's CPU; they count stop-the-world
//     phases on every P, so they read high under load) was 18–47% in a pass at load 15, up to
//     100% at load 25. With nothing trimmed from ledger.Pool the fresh buffers fell to nothing
//     but the lists held 12–13 MB and the queries ran 43–90 collections and 40–75% more CPU
//     (load 13): a buffer kept idle through a cycle takes as much of the room as allocating it
//     again would, so the Pool's trim at every collection stays. So do the limit (peak RSS 96–98 MiB leaves no room to raise it) and
//     GOGC (the limit, not GOGC=100, sets every goal). Values the freelist package kept for good
//     (page scratch, zstd decoders, the JSON extraction's scratch, footer tails) are now
//     trimmed the same way; groupers' and joins' scratch moved from sync.Pools into such lists;
//     parquet-go's copy of each offset index is decoded only when one of its page readers is
//     opened (8,600 → 7,960 B and 93 → 69 allocations a footer, BenchmarkOpenFooter); one
//     schema per column list instead of one per bucket. Beside main's build at load 20–25
//     (servers alternated, gctrace): live heap after a collection 21.7 against 22.7 MB, the
//     seven queries' CPU 5.59–5.65 s against 6.04–6.11 s a pass; BenchmarkAnalytical beside it
//     (3 rounds, load 25–28: CPU ÷ wall 0.1–0.6, wall times are noise), server CPU per query
//     count WHERE delay > 60 800/818 ms, origin, avg(delay) 832/823, day bins 921/952,
//     destination WHERE delay > 60 805/912, origin, destination 967/1034, top 10 883/980,
//     count(DISTINCT) 924/956, numeric 1048/1093, join against avg 1997/2451, semi join
//     1205/1552, origins to destinations 858/957 ms; peak RSS 98 MiB cold, 96 warm.
//     Quiet after gc19 and join19e (hash-join probes in the probe side's fragments, keys
//     without pointers; load average 2–5, 3M rows, 3 rounds, 8ef6d75 beside 96a4187's build in
//     the same rounds): cold ÷ DuckDB over the payloads 8 of 13 within 1× (count WHERE delay >
//     60 0.89×, origin, avg(delay) 0.89×, day bins 0.68×, destination 0.97×, count(DISTINCT)
//     0.94× against 1.02×, origins to destinations 0.69×; over: origin, destination 1.15×
//     against 1.18×, top 10 1.03× against 1.06×, numeric 1.12× against 1.19×, join against avg
//     1.04× against 1.40× (1.02 against 1.38 s), semi join 1.12× against 1.17×); server CPU
//     per query join against avg 1.45 against 2.03 s, semi join 1.22 against 1.29 s, the
//     others 1–8% less (origin, avg(delay) 681 against 746 ms, numeric 820 against 879 ms)
//     but top 10 (812 against 779 ms); with the shredded-column cache warm the join against
//     avg took 326 against 604 ms; warm ÷ native 11 of 12 (destination WHERE delay > 60 3.21×,
//     the baseline 3.20×); peak RSS 96 MiB (the baseline 98).
//     Branch agg19f (the three cold queries over target; CPU profiles of the 3M-row fixture:
//     about a third of each query's CPU is the JSON scan, a fifth the archive's decode, 7–9%
//     the footers, 7–15% the collector): two group keys of text or fixed width take dense ids
//     per column and look the pair of ids up in an open-addressing table, text of up to 7 bytes
//     packed into an integer instead of a Go map's string hash (one text key too); ->> text
//     is built straight into exactly sized buffers instead of an Arrow builder; ->>'s casts to
//     int4 and int8 read an optional '-' and up to nine digits directly; the top-k's filter
//     against its k-th row compares one int32 or int64 key without a call per row; numeric
//     multiply's fast loop checks its operands' 19 digits from the words and the numeric
//     sum checks 38 digits only past 2^125; the scanner compares a member's key inline.
//     Beside main's build (ee82e05) in the same rounds, at load average 20–25 (other helpers'
//     benchmarks alongside: cores busy 0.2–0.7, wall times and their ÷payload are noise, server
//     CPU the figure that carries): all 13 queries, 3 rounds, server CPU per query origin,
//     destination 958/960 ms, top 10 994/963, numeric 995/1078, count WHERE delay > 60
//     658/662, origin, avg(delay) 705/736, day bins 758/868, count(DISTINCT) 873/965; six
//     queries, 5 rounds: origin, destination 722/845 ms, top 10 808/793, numeric 893/875,
//     origin, avg(delay) 825/826, destination WHERE delay > 60 693/691, count(DISTINCT)
//     744/786; four queries, 5 rounds, load 24–26: origin, destination 740/892 ms, top 10
//     806/876, numeric 915/977, count WHERE delay > 60 659/628. Alternating the two servers
//     by hand, 3 queries a turn: origin, destination 745 against 935 ms, then 893 against
//     1016 ms of CPU. So origin, destination takes 15–20% less CPU; top 10 and numeric move
//     by -8% to +3% between runs, within this load's noise (their changes were measured at
//     2–4% of their CPU each in profiles); the rest is unchanged within the noise. Not done:
//     the JSON scan itself (it must validate every document, as PostgreSQL's -> and ->>
//     parse all of one), a bound shared between fragments' top-ks (each fragment's first
//     batch still orders all its rows against a heap of k, the same per-row work as a
//     filter), and decoding timestamps only for the top-k's candidate rows (4–5% of top 10).
//     Aggregations over distributed joins in their fragments (branch semi19): the count above
//     the semi join and above the join against avg ran at the coordinator after the joins'
//     fragments had handed it every joined row (batches of NULL columns, the rows counted);
//     now an aggregation directly above a join probed in its fragments or run partition by
//     partition aggregates partially in each fragment, a probe's fragment running a run of
//     buckets as a routed aggregate's does, and the coordinator combines one row per fragment
//     (scan/joinagg.go; the three runs below were measured with the partition-wise join's
//     fragments running runs of up to 14 partitions too, which the branch then dropped: e2e's
//     three airports never made such a run, and one partition a fragment took 8–19% less CPU
//     for the join against avg, below). A run's buckets are probed as they are read: coalescing
//     a run of small buckets' batches first (ops.Rebatch) copied most of the semi join's rows
//     and took back most of the gain (server CPU 1.02–1.25 s against 0.78–0.99 s without it).
//     The residual of the join against avg, the delay cast to numeric against the origin's
//     average, is cast and compared over whole arrays in one loop when every row is the fast
//     path's (scan/ops/numbulk.go: numeric_cast 0.42 → 0.34 s and numeric_cmp 0.48 → 0.25 s of
//     CPU over five queries); a join's last probed key and the JSON extraction's scanner no
//     longer hold a pointer the collector's write barrier records at every row while a
//     collection runs (the write barrier was 9% of the semi join's profile, half of it the
//     scanner's). The semi join's build side is answered from the buckets' manifests
//     (StoreAggregate), so it decodes no payload and there is nothing for the two sides to
//     share; the join against avg already reads each bucket once for both sides (join19d's
//     shared read: its build side is an aggregate grouped by the partition column). Server
//     CPU per query from /proc beside main's build (ee82e05), 3M-row fixture, alternating
//     rounds of 3 at load 12–18: semi join 0.78–0.99 s against 1.33–1.45 s (count(DISTINCT
//     destination), which extracts the same field, 0.83–0.91 s), join against avg 1.53–1.68 s
//     against 1.75–2.01 s. BenchmarkAnalytical beside main's build, 3 rounds, in two runs at
//     load average 16–27 (cores busy through a cold query 0.2–0.6, DuckDB over the payloads
//     2–5 times its quiet times: the wall times and their ratios are noise): server CPU per
//     query semi join 1.12 and 0.92 s against 1.50 and 1.35 s (−25%, −32%), join against avg
//     1.62 and 1.58 s against 1.98 and 1.85 s (−19%, −14%), the other eleven −19% to +5%
//     (origin, avg(delay) +0.3% and +5%, count WHERE delay > 60 −5% and +0.3%); warm, semi join 218/198 against 253/232 ms,
//     join against avg 483/424 against 492/477 ms; peak RSS 102 MiB in both runs (39 MiB
//     anonymous at the end, as main's build; the baseline, run from the linker's file,
//     112–115 MiB), the lead's quiet run of main 96 MiB: to be measured again quietly. A third
//     run at load 10–24: semi join 0.91 against 1.16 s, join against avg 1.54 against 1.66 s,
//     the others −8% to +8% (origin, avg(delay) 869 against 803 ms, +0.3% and +5% in the first
//     two); peak RSS 104 MiB (38 MiB anonymous at the end). Beside main's build and that one
//     after it (one partition a fragment), 3 alternating rounds of 3 queries at load 14–16:
//     join against avg 1.17–1.32 s against 1.52–1.65 s (runs of partitions 1.41–1.52 s), origin,
//     avg(delay) 706–760 against 730–753 ms (runs 713–733), semi join 0.81–0.87 against
//     1.12–1.16 s. Wall ÷ DuckDB over the payloads is still to be measured on a quiet machine
//     (the lead's quiet run of main: semi join 1.12× at 1.22 s of CPU, join against avg 1.04× at
//     1.45 s).
//     Quiet after agg19f and semi19 (83cc8ad beside ee82e05's build in the same rounds, 3M rows,
//     3 rounds, load average under 2.5; then 83cc8ad alone, 5 rounds, load under 2): cold ÷
//     DuckDB over the payloads 10 of 13 within 1× in both runs (count WHERE delay > 60
//     0.81×/0.83×, origin, avg(delay) 0.88×/1.00×, day bins 0.66×/0.71×, count(DISTINCT)
//     0.92×/0.96×, join against avg 0.91×/0.88× (the baseline 1.31×), semi join 0.79×/0.75×
//     (the baseline 1.07×), origins to destinations 0.72×/0.64×); over or at it: origin,
//     destination 1.02×/1.05× (the baseline 1.16×), top 10 1.08×/1.04× (1.17×), numeric
//     1.00×/1.12× (1.07×), destination WHERE delay > 60 1.04×/0.90× (0.99×). Server CPU per
//     query against the baseline's in the same rounds: origin, destination 717/895 ms, top 10
//     814/955, numeric 857/991, count(DISTINCT) 788/929, join against avg 1.69/2.45 s, semi
//     join 1.01/1.28 s, the rest within ±4%. Warm ÷ native 11 and 12 of 12 (destination WHERE
//     delay > 60 3.18× and 2.80× against a DuckDB native of 25–30 ms). Peak RSS 94–97 MiB cold
//     and warm (39–40 MiB anonymous, 53 MiB file pages at the end), under the 100 MiB target;
//     the baseline's 111–115 MiB.
//     The JSON scan of the cold path (branch cold19g; CPU profiles of main's build 83cc8ad over
//     the 3M-row fixture: the extraction 36% of the four queries over target, the archive's
//     decode 20%, the footers 10%): jsonScanner.top reads a top-level member's key, a string or
//     integer value and the punctuation between them in their plain forms with the position in
//     a local, falling back to member, value, str and number for anything else, and the
//     extraction stores each document in its stack scanner itself (scanSet: scanDoc's store
//     through a pointer took a write barrier a row while a collection ran). scan/ops'
//     BenchmarkScanDoc (the thread's CPU time, which moves less than the wall under load): 82
//     → 63 ns a flights document. Server CPU per query (/proc/PID/stat around each query, main's
//     build and this one served side by side, alternating rounds of 2 queries, medians of 6):
//     at load average 25–27 count WHERE delay > 60 695 → 580 ms, origin, destination 775 →
//     700, top 10 740 → 745, numeric 830 → 810, destination WHERE delay > 60 680 → 660; a
//     first pairing at load 14–16 (4 each) 650–740 → 550–640, 740–850 → 630–710, 760–920 →
//     690–800, 810–1010 → 730–820, 660–800 → 620–690 ms. BenchmarkAnalytical beside main's
//     build (3 rounds, load 16–20, cores busy 0.45–0.85: walls and their ratios are noise),
//     server CPU per query, this build then main's: count WHERE delay > 60 582/629 ms,
//     origin, avg(delay) 688/766, day bins 784/724, destination WHERE delay > 60 686/764,
//     origin, destination 787/790, top 10 842/848, count(DISTINCT) 829/798, numeric 825/923,
//     join against avg 1705/1565, semi join 973/1139, origins to destinations 748/864; 13 of
//     13 cold and 12 of 12 warm met at that load (DuckDB slowed most); peak RSS 97 MiB cold
//     (38 MiB anonymous, 54 MiB file pages). The five cold queries alone
//     (FLIGHTSRV_ANALYTICAL_QUERIES, 3 rounds, load 19–21): server CPU count WHERE delay > 60
//     557/586 ms, destination WHERE delay > 60 587/695, origin, destination 637/697, top 10
//     655/749, numeric 717/828 (−5% to −16%); peak RSS 92 MiB. Wall ÷ DuckDB over the payloads
//     is still to be measured quietly. Two readings of the profiles: runtime.asyncPreempt's 11–13% of flat
//     samples in /debug/pprof is not CPU spent preempting (perf record of the same queries
//     shows no such share; perf stat counted 940 signals in 12 s of queries, and
//     GODEBUG=asyncpreemptoff=1 moved no query's CPU beyond the noise at load 14), every such
//     sample on asyncPreempt's first instruction, so it is where pprof's samples land, not
//     work to remove; and perf puts the collector's marking at about a fifth of the numeric
//     query's CPU (tryDeferToSpanScan alone 7.7%).
//     The warm destination WHERE delay > 60 (branch warm19h; 3.18×/2.80× DuckDB native in the
//     quiet runs above; a warm profile at load 12, about 87 ms of CPU a query: the cache's Get
//     27% — opening, reading and checking 1,338 entries, about 33 MB — the filter 23%, the
//     collector 16%, the grouping about 3 ms): comparisons of two integers of one type run
//     through the float comparisons' loops instead of an arrow-go kernel call a batch (scan/ops
//     BenchmarkIntCompare 11 → 7 µs a batch of CPU), literals of fixed-width types are
//     converted once at compile time (→ 5 µs), a filter gathers fixed-width, boolean, string
//     and binary columns with gather.go's copies instead of arrow-go's take
//     (BenchmarkFilterDropNulls 21 → 16 µs), and an entry's all-ASCII text column skips the
//     per-value UTF-8 checks (its CRC and every other check kept). Server CPU per warm query
//     beside main's build in the same rounds (3 runs of 5 rounds, load 17–28, walls noise):
//     destination WHERE delay > 60 105/131, 87/107, 95/110 ms; count WHERE delay > 60 64/59,
//     55/54, 61/57 ms; alternating the two builds on one warm cache (20 queries × 3 rounds,
//     /proc): 77–80 against 86–96 ms and 39–44 against 44–49 ms; peak RSS 90–93 MiB (the
//     baseline 105). Left: the whole text column (about 21 MB) is read and checked while 5% of
//     the rows pass; text of few distinct values kept dictionary-encoded in the cache, grouped
//     by its codes, is the step that would remove it (a new entry format). The warm ratio to
//     DuckDB native is still to be measured quietly.
//     After cold19g and warm19h merged (1629a0b beside ee82e05's build, 3 rounds, load average
//     1.2–2.6; then alone, 5 rounds, load 2.7–2.8): cold ÷ DuckDB over the payloads 13 of 13
//     within 1× in the first run (origin, destination 0.98×, top 10 0.92×, numeric 0.96×,
//     count(DISTINCT) 0.89×, destination WHERE delay > 60 0.85×; the baseline 7 of 13 in the
//     same rounds), 9 of 13 in the second (origin, destination 1.07×, top 10 1.04×,
//     count(DISTINCT) 1.02×, numeric 1.15×): the four stay within 15% of DuckDB either side of
//     1× from run to run. Server CPU per cold query against the baseline's in the same rounds:
//     count WHERE delay > 60 629/760 ms, origin, avg(delay) 636/920, day bins 674/1003,
//     destination WHERE delay > 60 653/836, origin, destination 818/978, top 10 899/1084,
//     count(DISTINCT) 674/777, numeric 766/979, join against avg 1.62/2.53 s, semi join
//     0.88/1.62 s. Warm ÷ native 12 of 12 in both (destination WHERE delay > 60 2.93× and
//     2.50×, its warm CPU 109 ms); peak RSS 95–97 MiB cold and warm.
//     After AND/OR short-circuiting and WHERE conjuncts applied by one operator
//     (scan/ops/logic.go, FilterAll), beside the build before it (248c189,
//     FLIGHTSRV_ANALYTICAL_BASELINE; 3M rows, 3 rounds, load 4–6 from two other sessions):
//     cold the same or faster in every query (count WHERE delay > 60 477/475 ms, origin
//     avg(delay) 580/593, top 10 641/831, join against avg 1.08/1.32 s, the rest within
//     ±10%), warm likewise (38/42 ms, 80/81, 93/97); 13 of 13 within 1× DuckDB over the
//     payloads, 12 of 12 warm within 3× native; peak RSS 94 MiB (baseline 114).
//     It prints the medians and the ratios to DuckDB over the payloads (target ≤ 1×),
//     and those of the same build with a warm shredded-column cache (--shred-cache, filled by
//     the untimed first round) to DuckDB over the native columns (target ≤ 3×), and each
//     server's peak RSS (VmHWM) with its anonymous and file-backed parts at the end. The
//     servers run a copy of the build written in 32 KiB writes, as an installation writes it
//     (installed): Linux 6.18 keeps a file in page-cache folios as large as the writes that
//     filled it and maps a folio whole into a process that touches any page of it, and go's
//     linker writes its output through a shared mapping, held as 2 MiB folios mapped as huge
//     pages. Measured on an idle `serve` (3M-row fixture, load 10–15): the linker's file
//     64–68 MiB of file pages (FilePmdMapped 48–57 MiB), a copy in 1 MiB writes 65 MiB, a copy
//     in 32 KiB or 4 KiB writes or by cp 37–38 MiB; `-ldflags=-s -w` (no symbol table, no
//     DWARF, 71 MB instead of 102 MB on disk) changes nothing resident (66 MiB from the
//     linker's file): neither is mapped. After issue 19's queries a copied server held about
//     54 MiB of file pages (.text 25 MiB, .rodata and .gopclntab 28 MiB) and 41 MiB
//     anonymous (the Go heap under the default 40 MiB soft limit: HeapInuse 28 MiB, 16 MiB of
//     it live); a 56 MiB --go-memory-limit cut the warm queries' CPU by 20–45% for 8 MiB more
//     anonymous memory. madvise cannot lower the file part: MADV_RANDOM keeps the whole-folio
//     mappings, and MADV_DONTNEED on the executable's relocated read-only pages crashed
//     the process.
//     The committed 300,000-row sample by default (about 3 minutes); FLIGHTSRV_ANALYTICAL_FULL=1
//     runs the whole 3M-row file; FLIGHTSRV_ANALYTICAL_BASELINE=BINARY measures another build
//     in the same rounds (before/after), cold and with its own warm cache; FLIGHTSRV_ANALYTICAL_ROUNDS (default 3);
//     FLIGHTSRV_ANALYTICAL_QUERIES (a regular expression) runs only the queries whose names match;
//     FLIGHTSRV_ANALYTICAL_DIR keeps the loaded and archived fixture for a later run.
//   - BenchmarkAnalyticalHot (hotagg_test.go): issue 19's seven aggregate queries with every
//     bucket hot: the same sample (FLIGHTSRV_ANALYTICAL_FULL=1: the whole file) loaded into the
//     PostgreSQL store (month buckets, nothing archived), through `flightsrv serve --analytical`
//     with pushdown on (hot buckets' filters and partial aggregates run by PostgreSQL, up to 64
//     buckets a statement: scan/hotagg.go) and off, beside PostgreSQL computing the same
//     aggregate directly over the records table (one statement, jsonb as the issue spells it,
//     its default parallel workers); every answer's size checked against PostgreSQL's. It
//     prints the medians and the ratio on÷PostgreSQL (target ≤ 1.2×). The load is followed by
//     vacuumAnalyze (vacuum_test.go): the benchmark's PostgreSQL commits asynchronously, and a
//     VACUUM before the WAL writer's flush marked no page all-visible, so every index-only scan
//     visited the heap for each row (Heap Fetches equal to the rows). Measured on the shared
//     2-core machine (FLIGHTSRV_ANALYTICAL_ROUNDS=5, 300,000 rows, 1,332 buckets), two runs at
//     load 10–12 and 11–15, on÷PostgreSQL: count(*) 0.96× and 0.79× (83 / 87 ms, 128 / 163 ms),
//     origin count 0.79× and 0.61×, count WHERE delay > 60 1.10× and 1.15×, origin avg(delay)
//     1.01× and 0.59×, day sum(distance) 0.75× and 0.48×, destination WHERE delay > 60 0.68×
//     and 0.78×, origin × destination 0.60× and 0.61×: seven of seven within 1.2×. Runs on
//     this machine vary by 2× from one to the next. FLIGHTSRV_ANALYTICAL_BASELINE=BINARY serves
//     another build too (pushdown on), in the same rounds: beside the build whose statement
//     read members through a json_to_record function scan and counts 16 buckets a statement,
//     this tree took 0.46–0.75× the time of the JSON queries and 0.68–0.94× of the counts.
//     Until `flightsrv serve` handed the server the store adapter itself (openedStore.adapter,
//     cmd/flightsrv/stores.go), it never used the row-aggregate port: earlier figures measured
//     through it are of per-bucket key-only counts and row reads.
//     On a quiet machine (load average under 1, main at 8aaab12, 9 rounds) 5 of 7 met:
//     count(*) 1.70× (40.6 against 23.8 ms), count WHERE delay > 60 1.25×, origin count 0.85×,
//     origin avg(delay) 1.01×, day sum(distance) 0.70×, destination 1.04×, origin × destination
//     0.88× (5 rounds: 1.79× and 1.27× for the two misses): PostgreSQL's parallel workers have
//     both cores only on a quiet machine, so the runs under load flattered the ratios.
//     Where count(*)'s time goes (quiet: 40.6 ms against PostgreSQL's 23.8): not a fixed cost
//     (a count over an empty second takes 4.3 ms, 2 ms of backend CPU) but CPU on both cores.
//     Per query, in CPU time (flightsrv's threads and every backend, from /proc's schedstat;
//     load 10–20): main's build 76 ms (PostgreSQL 62, flightsrv 14), PostgreSQL's direct count
//     30 ms serial (a sequential scan; two workers spread it). Of the backends' time, run as
//     one statement over the 1,332 buckets: 33 ms the index-only scan of the 300,000 entries
//     (the range's count alone by that index costs as much), 17 ms the 1,332 rescans with five
//     keys checked an entry, 5 ms the routes; then 6.5 ms planning and binding 21 statements
//     of 64 buckets. One statement for all buckets saves the 6.5 ms but runs on one core; the
//     routes by hash join cost more than by index at 64 buckets. The statement's changes here
//     (routing/cockroach/rowagg.go: an archived bucket's rows skipped by a NULL key rather than
//     a Result node every row passes; a lone JSON member extracted in one level; date_bin for
//     bins of fixed width, where date_trunc's zone form broke every instant down in its zone;
//     sums of int4 read as int8, not numeric; answers scanned into pgtype's value types), CPU
//     a query beside main's build (six rounds, load 20–27): count(*) 67 against 76 ms, origin
//     count 69 / 71, count WHERE delay > 60 300 / 309, origin avg(delay) 319 / 322, day
//     sum(distance) 396 / 536 (flightsrv's part 49 / 71), destination WHERE delay > 60
//     504 / 512, origin × destination 379 / 412 (PostgreSQL's direct queries, serial: 30, 74,
//     232, 304, 385, 250, 302 ms). Wall times at that load moved by ±25% between runs
//     (on÷PostgreSQL of count(*) 0.98×, 1.70×, 1.20× in three runs). Measured and left: jsonb (one member: 231
//     ms against json's 198 over the sample, and it rewrites numbers' text); grouping all
//     buckets' rows in one hash aggregate instead of one a bucket (day bins: 370 against 356
//     ms). Two members (destination WHERE delay > 60) parse each document three times (json_in,
//     then each ->>): 477 ms of backend CPU against 223 for shipping the rows, whose JSON
//     flightsrv reads in 260 ms.
//     Quiet again after those changes (load under 1, main at e5b5ffb, 5 rounds): 5 of 7 met,
//     count(*) 1.48× (38.8 against 26.2 ms), count WHERE delay > 60 1.21× (156 / 129), origin
//     count 0.80×, origin avg(delay) 0.96×, day sum(distance) 0.53× (205 / 386), destination
//     WHERE delay > 60 1.04×, origin × destination 0.84×.
//     Quiet once more (load 0.04 before it, main at ce4e73d, 5 rounds, 32 s in all): 5 of 7,
//     count(*) 1.54× (39.3 against 25.4 ms), count WHERE delay > 60 1.21× (158.4 / 130.8),
//     origin count 0.79×, origin avg(delay) 0.97×, day sum(distance) 0.55×, destination WHERE
//     delay > 60 1.02×, origin × destination 0.78×: unchanged, as nothing on this path changed.
//     Where the per-bucket count's backend time goes (perf over the 1,332 buckets' statements):
//     nocache_index_getattr 18%, _bt_checkkeys 8%, index_deform_tuple 7%, memcmp 6%, texteq
//     and FunctionCall2Coll 7%: PostgreSQL 15's B-tree checks every key column of every entry,
//     each found again past the variable-width columns before it. Measured and left (backend
//     CPU of the 21 statements, one connection, load 8–14): one index range a partition, its
//     buckets told apart by GROUP BY bucket_key, 78 ms against 58 (the grouping compares text
//     a row); the same range counted whole 67–75; the per-bucket statement without the
//     event_time keys 47–51, with them as a filter 55; a parallel sequential scan grouped by
//     (partition_key, bucket_key), 75 ms serial against 38 for its plain count (hashing a bytea
//     and a text a row). So a count(*) alone over every partition (the analytical mode) now
//     goes to PostgreSQL as one request answered merged (routing.RowAggregate.Summed,
//     routing/cockroach/rowagg.go "Summed counts"): the table's count over the range, a
//     parallel sequential scan as PostgreSQL's own, less the records of route rows in the range
//     not asked or archived, with the asked buckets' routes, in one snapshot; a table with hot
//     records outside the range keeps the per-bucket requests (ErrNotSummed). As statements
//     (one connection, load 10–12): 56.6 and 56.5 ms against PostgreSQL's direct count's 58.2
//     and 62.5, 30–31 ms of PostgreSQL CPU against 33–48. CPU a query, /proc, 40 queries in
//     three alternations with main's build (load about 10): PostgreSQL 48–50 ms and flightsrv
//     5–6 against 57–61 and 13–15. BenchmarkAnalyticalHot beside main's build at e6d3da5
//     (FLIGHTSRV_ANALYTICAL_BASELINE), three runs at load 10–14, count(*) on÷PostgreSQL
//     1.01× (65.7 / 65.1 ms, 5 rounds), 0.99× (89.9 / 90.7, 5 rounds), 1.15× (56.4 / 49.2,
//     15 rounds); on÷main 0.91×, 1.13×, 0.85×; CPU a query 69.6, 78.3, 65.8 ms against main's
//     78.0, 90.3, 81.8 and PostgreSQL's 43.9, 49.1, 51.5 (its parallel workers' part in 10 ms
//     ticks). Seven of seven within 1.2× in both 5-round runs (the other queries unchanged:
//     on÷main 0.90–1.14×). Not measured quiet: the machine stayed at load 9–17; a quiet run
//     is what tells whether count(*) meets 1.2× (PostgreSQL's 26 ms, plus about 5 ms of ours
//     beside its count: discovery, routes, two round trips). count(*) WHERE delay > 60 is still
//     asked bucket by bucket: one statement over the range (the member extracted once a row
//     under OFFSET 0) costs PostgreSQL about what its direct jsonb count does (258 against
//     275–297 ms) but OFFSET 0 keeps it off parallel workers, and without it the member is
//     parsed once for the filter and once for the guard.
//     Quiet (load under 1 before it, main at cd722f7 beside e6d3da5's build, 9 rounds): 5 of
//     7, count(*) 1.32× (36.4 against 27.6 ms; 0.90× e6d3da5's), count WHERE delay > 60
//     1.20×. Two changes since (routing/cockroach/rowagg.go): the summed count names no
//     bucket when the asked ones hold every hot route row in the range (sqlSummedAll: the
//     keys' arrays and their join cost PostgreSQL as much as the count's distance from its
//     own; in psql 46.4 ms against the keyed statement's 53.0 and the plain count's 45.7),
//     and on PostgreSQL 15 the guard of a cast member only casts it (222 ms against 237 for
//     one member over the sample, as without a guard). Beside cd722f7's build in the same
//     rounds: 15 rounds at load 3–4, count(*) 1.22× (36.0 / 29.4 ms), 0.96× cd722f7's;
//     count WHERE delay > 60 1.21×, 1.02×; then quiet again (load 1.2 at its start, 9
//     rounds, all seven queries): 6 of 7, count(*) 1.37× (41.9 / 30.6 ms, 0.94× cd722f7's),
//     count WHERE delay > 60 1.15× (CPU a query 373 against cd722f7's 391 ms), origin
//     avg(delay) 0.92× (0.84× cd722f7's), the others 0.59–1.12×. Where count(*)'s remaining
//     time goes (quiet, this tree): the statement itself within about 1 ms of PostgreSQL's
//     count; GetFlightInfo 2.4–3.4 ms (binding, discovery's statement of 0.75 ms and its
//     1,332 route rows, the endpoint); DoGet binds the statement again and starts 1.8–2.9 ms
//     after discovery's answer; flightsrv's CPU about 4.5 ms a query. Left: the second
//     binding (a plan kept from GetFlightInfo for DoGet) and discovery for a summed count.
//   - BenchmarkIngest (ingest_bench_test.go): writes of the first FLIGHTSRV_INGEST_ROWS rows
//     (default 300,000; `make bench-ingest-3m` writes all 3,000,000) of the flights file in the
//     wide shape, side by side in one run: Flight SQL bulk ingest through ADBC (Python
//     `adbc_ingest`, testdata/adbcingest.py) and through arrow-go's client into `flightsrv
//     serve` over PostgreSQL and over SQLite, with the server's peak RSS; the `flightsrv load`
//     command over a Parquet file of the same rows (its peak RSS too); pgx COPY of the same
//     records into a plain table without index (the yardstick) and straight into
//     pulpitum_v4_records (its five-column primary key and foreign key, no fence: what the
//     schema costs any writer), and into a table identical to it but for the foreign key, in
//     the file's order and in the primary key's order (the best COPY under the schema's
//     primary key). Every run's stored rows are counted; the summary gives each rate against
//     the plain COPY, the records table's and the sorted primary key's, and the CPU time per row of flightsrv's process and of
//     PostgreSQL's processes (the children of its postmaster, from /proc) in the best run,
//     figures a busy machine disturbs far less than rows/s. FLIGHTSRV_INGEST_BASELINE=/path/to/flightsrv
//     adds the PostgreSQL variants of another build (store=postgres/via=adbc-baseline,
//     flightsql-baseline, load-baseline), each run next to this tree's: before/after side by
//     side. The stores' own write port is measured by
//     routing/sqlite and routing/cockroach BenchmarkAppendStream (rows/s and CPU per record,
//     PostgreSQL's backend included), which show where the time goes: on PostgreSQL 15 a
//     record of the one merged COPY costs its backend about 2.1 µs of CPU and flightsrv 0.89
//     (the staged moves with the foreign key's per-row check cost 9–11 µs, the check about 5
//     of them), against 0.4–0.6 µs for a plain table (docs/architecture.md, the write path).
//
// # Running
//
//	make bench                      # PostgreSQL cluster, .venv with duckdb, every variant, summaries
//	make bench BENCHTIME=5s         # longer runs per variant (default 2s)
//
// `make bench` creates .venv (duckdb, pyarrow) when it cannot import them, starts a throwaway
// PostgreSQL cluster (scripts/with-postgres.sh) and runs
// `go test -run '^$' -bench . -benchtime $(BENCHTIME) ./bench/...`. It takes 3 to 5
// minutes on 2 cores with a 2 s BENCHTIME (3m14s and 4m47s on a busy machine, compiling
// included): about a minute for the count benchmark, the rest for the scan benchmark, of which
// about a minute is set-up (loading ORD, building the two server binaries, loading and
// archiving the 1.5M-row partition). The first run on a fresh machine also compiles the two
// binaries' dependencies (the pure-Go SQLite among them: about a minute more). Without make,
// the benchmarks start their own cluster through internal/testsupport/pgtest:
//
//	go test -run '^$' -bench 'CountORD/tier=archive/range=full' -benchtime 2s ./bench/
//	go test -run '^$' -bench 'Scan/ORD/state=archive' -benchtime 2s ./bench/
//
// A sub-benchmark filter skips the other variants but not the set-up between them (BenchmarkScan
// always loads ORD and archives it in two steps; the large partition and the example server
// are set up only when selected).
//
// Environment: FLIGHTSRV_FLIGHTS_PARQUET overrides the source file (default
// ../shared/data/flights-3m.parquet relative to the repository root); FLIGHTSRV_BENCH_PYTHON
// names a Python with the duckdb module (default .venv/bin/python; without one the DuckDB
// rows are skipped and the reference count comes from arrow-go alone); FLIGHTSRV_TEST_PG_URL
// and FLIGHTSRV_TEST_PG_BINDIR as for internal/testsupport/pgtest. CPU profiles work as usual
// (-cpuprofile cpu.out); set-up is in them too, so focus on query.(*Engine).Execute or the
// Flight handlers. BenchmarkScan's via=process variants run flightsrv in a child process,
// which the profile does not see: profile via=inproc, the same server in the benchmark's
// process.
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
//   - via=flightsql: arrow-go's Flight SQL client against server.Start on
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
//
// # What BenchmarkScan measures
//
// The query is the ordered scan of one partition's whole history,
//
//	SELECT timestamp, id, value FROM flights WHERE origin = 'ORD'
//	AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-07-01T00:00:00Z'
//	ORDER BY timestamp, id
//
// 166,341 rows of timestamp[ns, UTC], utf8 and binary (the value, compact JSON of about 60
// bytes). Every variant is read by the same client code where there is a client: arrow-go's
// flight/flightsql client, GetFlightInfo then DoGet of every endpoint in order, every row
// touched (timestamps summed, id and value lengths summed, (timestamp, id) order checked; about
// 3 ms of a 166,341-row scan). Set-up, untimed: ORD is loaded as for BenchmarkCountORD (same
// fixture, a fresh database), then its rows are read directly from PostgreSQL into 8,192-row
// Arrow batches: the reference (their count must equal the source's, counted by arrow-go and
// DuckDB) and the payload of the peers below. Every variant must return the reference's row
// count, timestamps, id and value bytes in order (DuckDB: its row count), once before timing —
// the warm-up: routes, manifests and footers are fetched — and in every timed iteration; a
// mismatch fails the benchmark.
//
// Sub-benchmarks, in the order they run:
//
//   - ORD/state=hot: all six month buckets hot in PostgreSQL. Then archive.Archiver archives
//     January–March (as for BenchmarkCountORD: Parquet payloads on file://, hot rows deleted,
//     VACUUM ANALYZE) for
//   - ORD/state=mixed: January–March archived, April–June hot; then April–June, for
//   - ORD/state=archive: all six archived.
//   - via=process (each state): `flightsrv serve --store postgres://… --archive file://…
//     --table name=flights,…,partition=origin,strategy=month --listen 127.0.0.1:0`, built from
//     ./cmd/flightsrv into a temporary directory, a fresh child process per state (default
//     fan-out, pushdown on, which the scan does not use). Besides rows/s it reports the
//     process's peak RSS: VmHWM of /proc/PID/status after the timed runs (peak-RSS-MiB), and
//     its RSS before the first query; and its CPU time (user and system, the process's
//     CPU-time clock: testproc.ReadCPU) over the timed runs per row returned
//     (server-cpu-ns/row, the summary's CPU/row): what a row costs the server whatever else
//     runs on the machine, where rows/s moves with the machine's load. The child is stopped by its pid (SIGINT, then SIGKILL).
//   - via=inproc (each state): server.Start in the benchmark's process, the same
//     client; for CPU profiles (allocations are client's and server's together).
//   - via=direct-pgx (hot): PostgreSQL asked directly over one pgx connection,
//     SELECT event_time, sort_key, value FROM pulpitum_v4_records WHERE table_id=$1 AND
//     partition_key=$2 AND event_time >= $3 AND event_time < $4 ORDER BY event_time, sort_key
//     (prepared by pgx's statement cache), scanned (time.Time and pgtype.DriverBytes, no copy
//     before the builders) into Arrow builders of the result's shape, 8,192-row batches,
//     touched like the client's: the rate a hand-written Go reader of the hot store reaches.
//   - via=direct-duckdb (archive): DuckDB over the six payload files,
//     SELECT event_time, sort_key, value FROM read_parquet([...]) WHERE event_time >= … AND
//     event_time < … ORDER BY event_time, sort_key, fetched whole as a pyarrow Table
//     (con.sql(…).to_arrow_table()) in the helper process; timed inside Python around execute
//     and fetch (store-p50-ns/op), checked by row count.
//   - ORD/peer=sqlite-example: arrow-go's example Flight SQL server
//     (arrow/flight/flightsql/example/cmd/sqlite_flightsql_server at the go.mod version, built
//     from the module cache, unmodified: in-memory SQLite) as a child process with its peak
//     RSS. It is loaded through its own Flight SQL interface with the reference rows into
//     flights(origin TEXT, timestamp INTEGER, id TEXT, value BLOB, PRIMARY KEY (origin,
//     timestamp, id)) WITHOUT ROWID, as multi-row INSERT literals (its parameter binding
//     releases string and binary scalars before reading them, so bound rows would arrive
//     empty); it maps no SQLite type to an Arrow timestamp, so timestamps are INTEGER
//     nanoseconds, bounds are written as such, and the client reads them as int64. It streams
//     1,024-row batches.
//   - ORD/peer=loopback: the ceiling. An in-process Flight SQL server on 127.0.0.1 whose DoGet
//     streams the reference batches from memory (arrow-go's StreamChunksFromReader) to the
//     same client: gRPC, Arrow IPC and the client's touching, with no store behind them.
//   - large/state=mixed/via=process: a partition of 1,536,193 rows, 9.2 times ORD's, in a
//     database and archive of their own: table flights_by_punctuality, partition column
//     punctuality derived from the sign of the delay (early < 0, on-time, late > 0; the early
//     flights). load.File reads the whole file with delay mapped as the partition; the
//     records of the early class pass the table's CheckAppend, the first of each bucket goes
//     through the durable append path (bucket metadata, write fence) and the rest are copied
//     into pulpitum_v4_records with COPY on two connections while the loader converts the
//     next batch (the durable path's INSERTs take over a minute for 1.5M rows on 2 cores;
//     this takes about 30 s). January–March archived, April–June hot; one query through a fresh
//     flightsrv process, for its peak RSS: does it grow with the rows of a partition?
//
// Every variant reports rows/s, the rows over the p50 of its timed iterations (DuckDB: of the
// time inside Python), and p50-ns/op; ns/op is the mean.
//
// # Reading the scan summary
//
// After the sub-benchmark lines, BenchmarkScan prints (to stdout) a table of every variant —
// p50, mean, iterations, rows/s, rows/s as a share of the loopback ceiling, peak and idle RSS
// of the server processes — the ratios between them, and the targets for flightsrv as
// a process, each marked met or not met:
//
//   - archived buckets: ≥ 5,000,000 rows/s at the client;
//   - archived buckets: ≥ 10× arrow-go's example SQLite server's rate;
//   - hot buckets: ≥ the direct pgx reader's rate;
//   - peak RSS < 100 MiB serving ORD's history (each state) and serving the 1.5M-row
//     partition.
//
// Nothing here asserts speed or memory: a target not met is printed, never a failure. The
// ratios are what carries over between runs: on a busy 2-core machine every figure moves,
// the client, the servers, PostgreSQL and DuckDB all share the cores, and the loopback
// ceiling (about 3.5M–7M rows/s here) bounds what any Flight server can show this client.
// idle RSS shows what a process holds before its first query (flightsrv: about 55–65 MiB,
// most of it before serving anything).
//
// # Where flightsrv's resident memory goes
//
// Peak RSS (VmHWM) counts two different things; /proc/PID/smaps_rollup (Anonymous vs the rest)
// or RssAnon and RssFile in /proc/PID/status split them:
//
//   - The executable's own pages, file-backed and clean: about 26 MiB of text and 32 MiB of
//     read-only data (rodata 8.5 MiB, pclntab 24 MiB), of which 45–60 MiB are resident at idle
//     already: package init functions touch code all over the text, and on this kernel (Linux
//     6.18, ext4) the page cache holds the freshly linked binary in large folios (up to 2 MiB,
//     FilePmdMapped in smaps) that are mapped whole on first touch. The same binary copied with
//     4 KiB writes shows about 32 MiB file-backed at idle. These pages are shared page cache,
//     not memory the process allocated, and they vary between runs with the page cache's
//     state; no setting of the server changes them, a smaller binary (fewer dependencies) does.
//   - Anonymous memory, the Go runtime's: about 6 MiB at idle (a 3.5 MiB heap and the
//     runtime's metadata), and during an ordered scan the batches in flight (about 20 MiB live
//     for ORD, up to 30 MiB for the 1.5M-row partition: the executor's per-bucket buffers and
//     archive decode spans) plus what the collector lets accumulate. Without a memory limit
//     the heap grows to twice the live set and freed pages are returned lazily: 45–60 MiB
//     anonymous for ORD, about 70 MiB for the large partition. `flightsrv serve` sets a soft
//     limit (--go-memory-limit, default 40 MiB plus 32 MiB per concurrent query stream), which
//     keeps it at 33–38 MiB; the peak is then the executable's pages plus about 38 MiB. The
//     batches' buffers come from a recycling allocator (scan/ledger.Pool): buffers released
//     once written to the wire are decoded into again, so the scan allocates well under a MiB
//     per query in steady state instead of its whole result (fetched payload bytes and the
//     IPC offsets included), and the collector runs about once every three queries instead
//     of several times per query. The recycled buffers wait in free lists bounded to two
//     fifths of the memory limit (ORD's scan keeps 7–9 MB in flight, its lists settle at
//     11–13 MB) and trimmed of what a whole collection cycle left unused; the earlier
//     sync.Pools were emptied by the frequent collections near the limit, which cost about a
//     fifth of the archived scan's throughput.
//
// `flightsrv serve --debug-listen 127.0.0.1:6060` serves Go's profiles
// (/debug/pprof/heap?gc=1 for the live heap); GODEBUG=gctrace=1 prints the live heap after
// every collection. Comparing builds, compare RssAnon: RssFile moves with the page cache.
package bench
