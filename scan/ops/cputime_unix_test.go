//go:build unix

package ops_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used: benchmarks report rows
// per CPU second too, which a loaded machine does not skew as it skews wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
