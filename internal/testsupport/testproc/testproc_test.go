package testproc

import (
	"os"
	"regexp"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestParseProc(t *testing.T) {
	t.Parallel()
	m, err := ParseMemory([]byte("Name:\tx\nVmPeak:\t  900 kB\nVmHWM:\t   2048 kB\nVmRSS:\t    1024 kB\n"))
	if err != nil || m.HWM != 2<<20 || m.RSS != 1<<20 {
		t.Fatalf("parse: %+v, %v", m, err)
	}
	if _, err := ParseMemory([]byte("VmHWM:\t2 MB\nVmRSS:\t1 kB\n")); err == nil {
		t.Fatal("a unit other than kB parsed")
	}
	if d, err := ParseCPU([]byte("42 (a b) S 1 1 1 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 9 0")); err != nil || d != 2810*time.Millisecond {
		t.Fatalf("parse stat: %v, %v", d, err)
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	// The CPU clock reads this process's CPU time to the nanosecond, as getrusage does,
	// and never less than /proc's ticks.
	before := selfRusage()
	cpu, err := ReadCPU(os.Getpid())
	after := selfRusage()
	if err != nil || cpu < before || cpu > after+time.Millisecond {
		t.Fatalf("own CPU %v (%v), getrusage %v to %v", cpu, err, before, after)
	}
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if ticks, err := ParseCPU(raw); err != nil || ticks > cpu+10*time.Millisecond {
		t.Fatalf("own CPU %v, /proc ticks %v (%v)", cpu, ticks, err)
	}
	own, err := ReadMemory(os.Getpid())
	if err != nil || own.HWM < own.RSS || own.RSS <= 0 {
		t.Fatalf("own memory: %+v, %v", own, err)
	}
}

func TestFreePorts(t *testing.T) {
	t.Parallel()
	ports := FreePorts(t, 5)
	if len(ports) != 5 || len(slices.Compact(slices.Sorted(slices.Values(ports)))) != 5 {
		t.Fatalf("ports %v, want 5 distinct", ports)
	}
}

// TestProcess: Ready returns the reported address; Stop sends SIGINT (the shell's trap answers
// it); Kill ends a process that ignores SIGINT; an exit before the ready line is an error
// holding the output.
func TestProcess(t *testing.T) {
	t.Parallel()
	ready := regexp.MustCompile(`listening on (\S+)`)
	p, addr := StartReady(t, "sh", ready, "/bin/sh", "-c", `trap 'echo stopping; exit 0' INT; echo starting >&2; echo listening on 127.0.0.1:4242; while :; do sleep 0.1; done`)
	if addr != "127.0.0.1:4242" {
		t.Fatalf("address %q", addr)
	}
	if m, err := p.Memory(); err != nil || m.RSS <= 0 {
		t.Fatalf("memory %+v, %v", m, err)
	}
	p.Alive(t)
	p.Stop()
	if ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Exited() || ws.ExitStatus() != 0 {
		t.Fatalf("after Stop: %v, want exit 0 from the INT trap", p.cmd.ProcessState)
	}
	if out := p.Output(); out != "starting\nlistening on 127.0.0.1:4242\nstopping\n" && out != "listening on 127.0.0.1:4242\nstarting\nstopping\n" {
		t.Fatalf("output %q", out)
	}

	q := Start(t, "sh", nil, "/bin/sh", "-c", `trap '' INT; while :; do sleep 0.1; done`)
	q.Kill()
	if ws := q.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("after Kill: %v", q.cmd.ProcessState)
	}
	q.Stop() // does nothing

	r := Start(t, "sh", ready, "/bin/sh", "-c", `echo no such thing; exit 3`)
	if _, err := r.Ready(time.Minute); err == nil || !regexp.MustCompile(`exited before serving \(exit status 3\):\nno such thing`).MatchString(err.Error()) {
		t.Fatalf("exit before ready: %v", err)
	}
}

// selfRusage returns this process's CPU time (user and system) from getrusage.
func selfRusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
