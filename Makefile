# flightsrv — see README.md. Every target works on a fresh machine with Go, git and make:
# missing system pieces (a C compiler for pg_query_go's cgo, PostgreSQL server binaries for
# the tests) are installed from Debian's packages when absent.
GO      ?= go
BIN     := bin/flightsrv
LISTEN  ?= $(or $(FLIGHTSRV_LISTEN),127.0.0.1:32010)

.PHONY: all build demo test vet bench tools clean

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

# test: every test, against a throwaway PostgreSQL cluster on 127.0.0.1.
test: tools vet
	scripts/with-postgres.sh $(GO) test -count=1 -timeout 30m ./...

bench: tools
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench . -benchtime 3x -timeout 60m ./bench/...

clean:
	rm -rf bin .demo
