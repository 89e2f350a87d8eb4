package ledger

import "golang.org/x/sys/unix"

// threadCPU returns the calling thread's CPU time in ns, or -1 when it cannot be read.
func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return -1
	}
	return ts.Nano()
}
