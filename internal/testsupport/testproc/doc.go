// Package testproc is test support for the tests and benchmarks that run servers as child
// processes (e2e's replicas and load test, bench's flightsrv, arrow-go example server and
// replicas): free loopback ports, a keyring file the processes share, building the binaries,
// starting a process and stopping it by its own pid (never by name), and its memory and CPU
// time from /proc.
//
// Every helper that can fail takes a testing.TB and fails it; a started process is stopped at
// the test's cleanup. This package is test support: production code must not import it.
package testproc
