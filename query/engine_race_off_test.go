//go:build !race

package query_test

// engRace is set under the race detector (see engine_race_on_test.go).
const engRace = false
