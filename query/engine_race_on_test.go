//go:build race

package query_test

// engRace is set under the race detector: SQLite (C translated to Go) then runs tens of times
// slower, so the engine tests run a reduced set of ranges (every case runs without -race).
const engRace = true
