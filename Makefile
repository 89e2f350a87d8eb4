# flightsrv — see README.md. Every target works on a fresh machine with Go, git and make:
# missing system pieces (a C compiler for pg_query_go's cgo, PostgreSQL server binaries for
# the tests) are installed from Debian's packages when absent.
GO      ?= go
BIN     := bin/flightsrv
LISTEN  ?= $(or $(FLIGHTSRV_LISTEN),127.0.0.1:32010)

.PHONY: all build demo test test-clients client-tools vet fuzz fuzz-short bench bench-ingest-3m bench-side-by-side bench-venv soak load test-ingest-1m tools clean

all: build

# tools makes sure cgo has a C compiler (pg_query_go is cgo).
tools:
	@command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || { \
	  echo "installing a C compiler (gcc) for cgo"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev; }

build: tools
	$(GO) build -o $(BIN) ./cmd/flightsrv

# demo: the main job — the server on the embedded SQLite store, loaded with the committed
# sample of real 2001 US flights (Jan–Mar archived to Parquet, Apr–Jul hot), on $(LISTEN).
demo: build
	./$(BIN) demo --data .demo --listen $(LISTEN)

vet: tools
	$(GO) vet ./...

# test: every test, against a throwaway PostgreSQL cluster on 127.0.0.1, then every fuzz
# target for a short budget (fuzz-short), then the clients.
test: tools vet
	scripts/with-postgres.sh $(GO) test -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory fuzz-short
	$(MAKE) --no-print-directory test-clients

# fuzz: every Go fuzz target (scripts/fuzz.sh lists them: SQL, Substrait plans, DoPut
# parameters, handles and tickets, sessions, Flight SQL commands, authorization headers,
# manifests, JSON and Parquet payloads, JSON operators, the hot row-aggregate statement), one
# after the other, FUZZTIME each, with FUZZ_PARALLEL workers (default 1); it prints the
# executions of each. A crasher is
# written to the package's testdata/fuzz/FuzzXxx: fix it and commit the file. fuzz-short is
# make test's run: FUZZTIME_SHORT each, about two and a half minutes on 2 cores once the
# instrumented build is cached (the first run builds for minutes).
FUZZTIME ?= 1m
FUZZTIME_SHORT ?= 8s
FUZZ_PARALLEL ?= 1
fuzz: tools
	FUZZTIME=$(FUZZTIME) FUZZ_PARALLEL=$(FUZZ_PARALLEL) GO=$(GO) scripts/fuzz.sh

fuzz-short: tools
	FUZZTIME=$(FUZZTIME_SHORT) FUZZ_PARALLEL=$(FUZZ_PARALLEL) GO=$(GO) scripts/fuzz.sh

# test-clients: the example clients, which are also compatibility checks with real drivers —
# Python (ADBC's Flight SQL driver and pyarrow.flight, checked against DuckDB reading the sample;
# with the producers' suite: Substrait plans made by DataFusion, isthmus and ibis-substrait)
# and Java (the Arrow Flight SQL JDBC driver, JUnit 5) — against one `flightsrv demo` on a free
# 127.0.0.1 port and `flightsrv serve`s over its data (TLS, mutual TLS, and TLS with 3 s tokens
# for the token-renewal tests, all with authentication), stopped by their pids. Both suites run even when the first fails. The venv is
# .venv (pinned by clients/python/requirements.txt); Maven caches the driver in ~/.m2 on first
# use and needs no network afterwards. The generators' suite (clients/python/test_generators.py:
# SQL from SQLAlchemy's PostgreSQL dialect as Superset builds it, ibis, Grafana's macros and
# Metabase's shapes) compares each answer with PostgreSQL's, so the suites run under
# scripts/with-postgres.sh. About a minute on 2 cores once the caches are warm.
test-clients: build client-tools .venv/.clients-requirements .venv-ibis/.requirements clients/isthmus/target/classpath.txt
	PYTHONDONTWRITEBYTECODE=1 scripts/with-postgres.sh .venv/bin/python clients/python/flightsrv_server.py --bin $(BIN) -- \
	  bash -c 'rc=0; .venv/bin/python -m pytest -q clients/python || rc=$$?; \
	    (cd clients/java && mvn -q -B test) || rc=$$?; \
	    for v in $(JDBC_OLDER); do (cd clients/java && mvn -q -B test -Dflight-sql-jdbc.version=$$v \
	      -Dtest=MetadataJdbcTest,TimeParamsJdbcTest,DriverQuirksJdbcTest -Dsurefire.failIfNoSpecifiedTests=false) || rc=$$?; done; exit $$rc'

# JDBC_OLDER are the older Arrow Flight SQL JDBC drivers (Maven Central) whose DatabaseMetaData
# test (MetadataJdbcTest: their SqlInfo enums know fewer ids than 18.3.0's), time parameters
# (TimeParamsJdbcTest, in an America/Chicago and a UTC JVM) and known driver bugs
# (DriverQuirksJdbcTest) run too.
JDBC_OLDER ?= 15.0.2 16.1.0

.venv/.clients-requirements: clients/python/requirements.txt
	test -x .venv/bin/python || python3 -m venv .venv
	.venv/bin/python -m pip install -q --disable-pip-version-check -r clients/python/requirements.txt
	touch $@

# .venv-ibis holds ibis-substrait for the producers' suite (clients/python/test_producers.py,
# which runs clients/python/ibis_plans.py in it): its ibis and substrait versions conflict with
# .venv's.
.venv-ibis/.requirements: clients/python/requirements-ibis.txt
	test -x .venv-ibis/bin/python || python3 -m venv .venv-ibis
	.venv-ibis/bin/python -m pip install -q --disable-pip-version-check -r clients/python/requirements-ibis.txt
	touch $@

# The classpath of clients/isthmus's PlanWriter (Substrait Java's isthmus, from Maven Central
# once, then ~/.m2), which the producers' suite runs to make isthmus's plans from SQL.
clients/isthmus/target/classpath.txt: clients/isthmus/pom.xml $(wildcard clients/isthmus/src/main/java/io/flightsrv/isthmus/*.java)
	cd clients/isthmus && mvn -q -B compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt

# client-tools makes sure Python's venv module, a JDK and Maven are there for test-clients.
client-tools:
	@python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || { \
	  echo "installing python3 and python3-venv"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 python3-venv; }
	@{ command -v mvn && command -v javac; } >/dev/null 2>&1 || { \
	  echo "installing Maven and a JDK"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven default-jdk-headless; }

# bench: COUNT(*) over ORD's whole history (and a partial range) on the hot tier (PostgreSQL)
# and the archive tier (Parquet), pushdown on and off, against the stores asked directly
# (pgx, DuckDB); then the ordered scan of ORD's history (SELECT timestamp, id, value … ORDER BY
# timestamp, id) at a Go Flight SQL client from hot, mixed and archived buckets through
# flightsrv as a child process (with its peak RSS) and in process, side by side with pgx and
# DuckDB asked directly, arrow-go's example SQLite Flight SQL server and a loopback Flight
# server (the ceiling), and a 1.5M-row partition; then ADBC (Python) fetching ORD's history with
# one endpoint and with six endpoints served by three replicas, with the time to first batch; then
# writes: 300,000 rows ingested through ADBC (Python adbc_ingest) and arrow-go's Flight SQL
# client into PostgreSQL and SQLite and by the `flightsrv load` command (each with flightsrv's
# peak RSS), beside pgx COPY of the same rows into a plain table, into pulpitum_v4_records and
# into a table with its primary key alone, in the file's and in the key's order (FLIGHTSRV_INGEST_ROWS changes the count; make bench-ingest-3m writes all 3M;
# FLIGHTSRV_INGEST_BASELINE=/path/to/flightsrv measures another build's PostgreSQL ingest beside this tree's). Each prints a summary table with ratios and
# its issue's targets (see bench/doc.go). Reads ../shared/data/flights-3m.parquet (override:
# FLIGHTSRV_FLIGHTS_PARQUET). BENCHTIME is the time each variant is run for; slow variants
# (0.2–1 s a query) still run at least twice. About an hour on 2 cores. BENCH selects benchmarks
# by name (a go test -bench pattern), e.g. make bench BENCH='^BenchmarkGroupedCount$$'.
BENCHTIME ?= 2s
BENCH ?= .
bench: tools bench-venv
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -timeout 90m ./bench/... ./scan/

# bench-ingest-3m: BenchmarkIngest alone over all 3,000,000 rows of the flights file (ADBC and
# arrow-go bulk ingest into PostgreSQL and SQLite, `flightsrv load`, pgx COPY into a plain table,
# into pulpitum_v4_records and into a table with its primary key alone), one run of each, with flightsrv's peak RSS while ingesting
# (issue 21's target: under 150 MiB). 6.5 minutes on a quiet 2-core machine, 17 on a busy one.
INGEST_ROWS_3M ?= 3000000
bench-ingest-3m: tools bench-venv
	FLIGHTSRV_INGEST_ROWS=$(INGEST_ROWS_3M) scripts/with-postgres.sh $(GO) test -run '^$$' -bench '^BenchmarkIngest$$' -benchtime 1x -timeout 90m ./bench/

# bench-side-by-side compares flightsrv builds on ORD's archived ordered scan, round by round
# (BenchmarkSideBySide in bench/sidebyside_test.go): SIDE_BY_SIDE lists the variants, e.g.
#   make bench-side-by-side SIDE_BY_SIDE='old=/tmp/flightsrv-old;new=.;new-nofanout=. --fanout 1'
# ('.' is the build of this tree; VAR=VALUE words before the binary set its environment).
SIDE_BY_SIDE ?= a=.;b=.
SIDE_BY_SIDE_ROUNDS ?= 40
bench-side-by-side: tools bench-venv
	FLIGHTSRV_SIDE_BY_SIDE='$(SIDE_BY_SIDE)' FLIGHTSRV_SIDE_BY_SIDE_ROUNDS=$(SIDE_BY_SIDE_ROUNDS) \
	  scripts/with-postgres.sh $(GO) test -run '^$$' -bench '^BenchmarkSideBySide$$' -benchtime 1x -timeout 30m ./bench/

# bench-venv creates .venv with duckdb and pyarrow for the DuckDB comparison, and ADBC's
# Flight SQL driver (the version clients/python pins) for the endpoint benchmark, only when the
# modules are not importable from it already.
# Debian's python3 lacks the venv module until python3-venv is installed.
bench-venv:
	@.venv/bin/python -c 'import duckdb, pyarrow, adbc_driver_flightsql.dbapi' >/dev/null 2>&1 || { \
	  echo "creating .venv with duckdb, pyarrow and ADBC's Flight SQL driver"; \
	  python3 -c 'import ensurepip' >/dev/null 2>&1 || { \
	    echo "installing python3-venv"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; }; \
	  python3 -m venv .venv && .venv/bin/pip install -q duckdb pyarrow \
	    $$(grep -E '^adbc-driver-(flightsql|manager)==' clients/python/requirements.txt); }

# soak: the archival fault tests at length (make test runs short budgets of both): 200 SIGKILL
# trials of the archiver process over each hot store (SQLite, and PostgreSQL through the
# CockroachDB adapter), then 20 runs of the competing-runner and stale-worker tests under random
# faults and of write requests racing the archiver, against SQLite and PostgreSQL. About 10 minutes on 2 cores.
KILL_TRIALS ?= 200
soak: tools
	FLIGHTSRV_KILL_TRIALS=$(KILL_TRIALS) scripts/with-postgres.sh $(GO) test -count=1 -timeout 60m -run 'TestArchiverSurvivesSIGKILL' -v ./cmd/flightsrv/
	scripts/with-postgres.sh $(GO) test -count=20 -timeout 60m -run 'TestCompetingRunnersUnderRandomFaults|TestStaleWorkerIsFenced|TestIngestRacesArchiver' ./archive/archivefault/

# test-ingest-1m: the issue's full-size ADBC bulk ingest (make test-clients ingests 200,000
# rows): `adbc_ingest` append and create_append of 1,000,000 wide rows each into the ingest
# server's SQLite store (clients/python/test_ingest.py, INGEST_TEST_ROWS), every row read back
# through queries and compared with what was sent; prints each ingest's rows/s (measured: 24,274
# and 32,924 rows/s). About three minutes on 2 cores.
INGEST_TEST_ROWS ?= 1000000
test-ingest-1m: build client-tools .venv/.clients-requirements
	FLIGHTSRV_INGEST_TEST_ROWS=$(INGEST_TEST_ROWS) PYTHONDONTWRITEBYTECODE=1 .venv/bin/python clients/python/flightsrv_server.py --bin $(BIN) -- \
	  .venv/bin/python -m pytest -q -s clients/python/test_ingest.py -k 'test_adbc_ingest and not refuses and not bad_row'

# load: the load test at length (make test runs it for 3 s): 64 concurrent clients for
# LOAD_DURATION against one `flightsrv serve` process with --max-queries 4, --max-queued 8 and
# --queue-wait 1s, looping over ORD's ordered scan, COUNT(*), a poll and GetTables while
# appends run; every request succeeds or gets admission control's UNAVAILABLE naming the limit,
# none hangs; it reports the requests (polls included) by outcome and the server's peak RSS, and checks that its goroutines and PostgreSQL
# connections return to their baseline. About three minutes on 2 cores.
LOAD_DURATION ?= 60s
load: tools
	FLIGHTSRV_LOAD_DURATION=$(LOAD_DURATION) scripts/with-postgres.sh $(GO) test -count=1 -timeout 30m -run '^TestLoad$$' -v ./e2e/

clean:
	rm -rf bin .demo
