package ledger

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"time"
)

// ErrCPULimit is wrapped by the error of a query whose operators used more CPU time than its
// limit (SetCPULimit): the CPU-time bound that stands beside the wall-time one (issue 16, "a
// query's CPU time is bounded as its wall time is").
var ErrCPULimit = errors.New("ledger: query CPU time limit exceeded")

// CPULimitExceededError is the error of a query past its CPU time limit; it matches
// ErrCPULimit with errors.Is. It carries the limit and nothing of the data; the protocol
// boundary (package flightsql) words it for the client.
type CPULimitExceededError struct {
	Limit time.Duration
}

func (e *CPULimitExceededError) Error() string {
	return fmt.Sprintf("%s: limit of %s", ErrCPULimit.Error(), e.Limit)
}

// Is reports whether target is ErrCPULimit.
func (e *CPULimitExceededError) Is(target error) bool { return target == ErrCPULimit }

// cpuBudget is a ledger's CPU time: the limit (ns, <= 0: none) and what was charged.
type cpuBudget struct {
	limit int64
	used  atomic.Int64
}

// SetCPULimit bounds the CPU time the query's measured work may use in all (<= 0: no bound,
// and CPUTimer measures nothing). Call it before the fragments start.
func (l *Ledger) SetCPULimit(d time.Duration) { l.cpu.limit = int64(d) }

// CPULimited reports whether the ledger has a CPU time limit, that is whether the query's
// work should be measured with StartCPU.
func (l *Ledger) CPULimited() bool { return l.cpu.limit > 0 }

// CPU returns the CPU time charged so far.
func (l *Ledger) CPU() time.Duration { return time.Duration(l.cpu.used.Load()) }

// ChargeCPU adds d to the query's CPU time; past the limit it returns a
// *CPULimitExceededError (every later charge does too).
func (l *Ledger) ChargeCPU(d time.Duration) error {
	if used := l.cpu.used.Add(int64(d)); l.cpu.limit > 0 && used > l.cpu.limit {
		return &CPULimitExceededError{Limit: time.Duration(l.cpu.limit)}
	}
	return nil
}

// CPUTimer measures the CPU time of one stretch of work on the calling goroutine: StartCPU
// locks the goroutine to its OS thread and reads the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID), Stop reads it again and unlocks. The thread's clock does not run
// while the goroutine blocks (I/O, a channel), so only the work is counted. Where the clock
// cannot be read (another OS) the timer measures nothing. Not for concurrent use; a stretch
// must start and stop on the same goroutine.
type CPUTimer struct {
	start int64 // ns; < 0: not measuring
}

// StartCPU starts measuring when l has a CPU limit; otherwise the timer measures nothing and
// costs nothing.
func (l *Ledger) StartCPU() CPUTimer {
	if l.cpu.limit <= 0 {
		return CPUTimer{start: -1}
	}
	goruntime.LockOSThread()
	t := threadCPU()
	if t < 0 {
		goruntime.UnlockOSThread()
	}
	return CPUTimer{start: t}
}

// Stop ends the stretch and charges its CPU time to l (ChargeCPU's error past the limit).
func (t CPUTimer) Stop(l *Ledger) error {
	if t.start < 0 {
		return nil
	}
	end := threadCPU()
	goruntime.UnlockOSThread()
	if end < t.start {
		return nil
	}
	return l.ChargeCPU(time.Duration(end - t.start))
}
