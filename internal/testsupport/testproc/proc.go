package testproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Memory is a process's resident set from /proc/PID/status, in bytes.
type Memory struct {
	HWM int64 // VmHWM: the peak resident set since the process started
	RSS int64 // VmRSS: the resident set now
	// Anon and File split RSS (RssAnon, RssFile; 0 where the kernel does not report them):
	// anonymous memory (the Go heap, stacks, C allocations) and file-backed pages (the
	// executable's, mostly). The kernel keeps no peak of either.
	Anon, File int64
}

// ReadMemory reads process pid's VmHWM and VmRSS from /proc/PID/status (Linux).
func ReadMemory(pid int) (Memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, err
	}
	return ParseMemory(raw)
}

// ParseMemory reads the VmHWM, VmRSS, RssAnon and RssFile lines ("VmHWM:   2048 kB") of a
// /proc/PID/status text; an error when VmHWM or VmRSS is missing or a line is not in kB.
func ParseMemory(status []byte) (Memory, error) {
	var m Memory
	for _, line := range bytes.Split(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(k) {
		case "VmHWM":
			dst = &m.HWM
		case "VmRSS":
			dst = &m.RSS
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		default:
			continue
		}
		f := strings.Fields(string(v))
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("/proc status: unexpected %s line %q", k, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("/proc status: %s: %w", k, err)
		}
		*dst = n << 10
	}
	if m.HWM == 0 || m.RSS == 0 {
		return m, errors.New("/proc status: no VmHWM or VmRSS line")
	}
	return m, nil
}

// ReadCPU returns the CPU time process pid has used so far (user and system, every thread,
// those that have exited included) in nanoseconds: the process's CPU-time clock
// (clock_gettime of the clock clock_getcpuclockid(3) names, which Linux lets any process read
// for another). Read from another process, that clock holds each thread's run time as of its
// last scheduler tick or context switch: exact for a process whose threads are all asleep
// (a server between two queries), at most a tick behind for each running thread. Where the
// clock cannot be read it falls back to utime and stime of /proc/PID/stat, counted in whole
// clock ticks of 10 ms (Linux's USER_HZ is 100): a query of a few milliseconds then reads as
// 0 or 10 ms, and a side-by-side figure needs many more rounds to average the ticks out.
func ReadCPU(pid int) (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(processCPUClock(pid), &ts); err == nil {
		return time.Duration(ts.Nano()), nil
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseCPU(raw)
}

// ParseCPU reads utime and stime (fields 14 and 15) of a /proc/PID/stat text.
func ParseCPU(stat []byte) (time.Duration, error) {
	// The command name (field 2) is in parentheses and may hold spaces: fields are counted
	// from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// processCPUClock returns the clock id of process pid's CPU time, as glibc's
// clock_getcpuclockid makes it: the pid's complement shifted left by 3, with the
// CPUCLOCK_SCHED type (2, run time in nanoseconds) and without the per-thread bit (4).
func processCPUClock(pid int) int32 {
	return int32(^uint32(pid)<<3 | 2)
}
