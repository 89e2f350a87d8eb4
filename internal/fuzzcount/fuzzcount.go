// Package fuzzcount counts the inputs a fuzz target runs, for scripts/fuzz.sh's summary.
//
// go test -fuzz reports the executions its workers returned to the coordinator, and a worker
// returns its count only when it finds new coverage or a failure: the executions since its
// last report are not counted when the fuzzing time ends, which can be nearly all of them (a
// minute of fuzzing reported as 5 executions). Each fuzz function calls Add once per input;
// when FLIGHTSRV_FUZZ_COUNT names a file prefix, the process writes its count to
// PREFIX.PID every half second and scripts/fuzz.sh sums the files of the run's processes.
// Without the variable Add only increments a counter. Nothing here runs in the server.
package fuzzcount

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

var (
	count atomic.Int64
	once  sync.Once
)

// Add counts one input. Safe for concurrent use.
func Add() {
	count.Add(1)
	once.Do(start)
}

// start writes the count to $FLIGHTSRV_FUZZ_COUNT.<pid> every half second, when set.
func start() {
	prefix := os.Getenv("FLIGHTSRV_FUZZ_COUNT")
	if prefix == "" {
		return
	}
	path := prefix + "." + strconv.Itoa(os.Getpid())
	go func() {
		for range time.Tick(500 * time.Millisecond) {
			_ = os.WriteFile(path, strconv.AppendInt(nil, count.Load(), 10), 0o644)
		}
	}()
}
