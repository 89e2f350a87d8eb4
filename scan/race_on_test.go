//go:build race

package scan_test

// raceEnabled is set when the race detector is on: the SQLite engine (C translated to Go)
// then runs tens of times slower, so the tests over the large cap partitions run a reduced
// set of cases (every case still runs without -race).
const raceEnabled = true
