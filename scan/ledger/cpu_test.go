package ledger

import (
	"errors"
	goruntime "runtime"
	"testing"
	"time"
)

// TestCPUTimer: a stretch of work is charged its thread's CPU time (a busy loop of 20 ms of
// wall time is charged at least a few ms, a 20 ms sleep next to nothing); past the limit the
// charge is a *CPULimitExceededError naming it; without a limit nothing is measured.
func TestCPUTimer(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("the thread CPU clock is read on Linux only")
	}
	l := New(nil, 0)
	l.SetCPULimit(time.Hour)
	tm := l.StartCPU()
	// Busy until the (locked) thread has run 20 ms, however loaded the machine is.
	for t0 := threadCPU(); threadCPU()-t0 < int64(20*time.Millisecond); {
	}
	if err := tm.Stop(l); err != nil {
		t.Fatal(err)
	}
	busy := l.CPU()
	if busy < 20*time.Millisecond || busy > time.Second {
		t.Errorf("20 ms of busy work was charged %v", busy)
	}
	tm = l.StartCPU()
	time.Sleep(20 * time.Millisecond)
	if err := tm.Stop(l); err != nil {
		t.Fatal(err)
	}
	if slept := l.CPU() - busy; slept > 5*time.Millisecond {
		t.Errorf("a 20 ms sleep was charged %v", slept)
	}

	l.SetCPULimit(l.CPU() + time.Millisecond)
	err := l.ChargeCPU(2 * time.Millisecond)
	var ce *CPULimitExceededError
	if !errors.Is(err, ErrCPULimit) || !errors.As(err, &ce) || ce.Limit != l.CPU()-time.Millisecond {
		t.Errorf("charge past the limit: %v", err)
	}

	free := New(nil, 0)
	tm = free.StartCPU()
	for start := time.Now(); time.Since(start) < 5*time.Millisecond; {
	}
	if err := tm.Stop(free); err != nil || free.CPU() != 0 {
		t.Errorf("without a limit: charged %v, %v", free.CPU(), err)
	}
}
