//go:build !race

package scan_test

// raceEnabled is set when the race detector is on (see race_on_test.go).
const raceEnabled = false
