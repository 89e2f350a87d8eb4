package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exampleServerPkg is arrow-go's example SQLite Flight SQL server command, built from the
// module cache at the version go.mod requires.
const exampleServerPkg = "github.com/apache/arrow-go/v18/arrow/flight/flightsql/example/cmd/sqlite_flightsql_server"

// binaries are the server programs the scan benchmarks run as child processes.
type binaries struct {
	flightsrv string // ./cmd/flightsrv
	example   string // arrow-go's sqlite_flightsql_server
}

// buildBinaries builds flightsrv and arrow-go's example server into dir with one `go build`
// run from the repository root (so at the module's dependency versions).
func buildBinaries(b *testing.B, dir string) binaries {
	b.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	start := time.Now()
	cmd := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), "./cmd/flightsrv", exampleServerPkg)
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/flightsrv %s: %v\n%s", exampleServerPkg, err, out)
	}
	b.Logf("built flightsrv and the example server in %s", time.Since(start).Round(100*time.Millisecond))
	return binaries{flightsrv: filepath.Join(dir, "flightsrv"), example: filepath.Join(dir, "sqlite_flightsql_server")}
}

// child is a server running as a child process of the benchmark. Its output is drained into
// a bounded tail (so a chatty child never blocks on a full pipe) and shown when it fails.
type child struct {
	name string
	cmd  *exec.Cmd
	tail *tailBuffer
	done chan struct{}
	err  error // Wait's result, once done is closed
}

// startChild starts bin with args and waits (up to a minute) for a line of its stdout or
// stderr matching ready, whose first submatch is the address it listens on. The child is
// stopped by its pid at cleanup.
func startChild(b *testing.B, name string, ready *regexp.Regexp, bin string, args ...string) (*child, string) {
	b.Helper()
	c := &child{name: name, cmd: exec.Command(bin, args...), tail: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	c.cmd.Env = childEnv()
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", name, err)
	}
	b.Cleanup(c.stop)
	addr := make(chan string, 2)
	var drained sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		drained.Add(1)
		go func() {
			defer drained.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				line := sc.Text()
				c.tail.WriteLine(line)
				if m := ready.FindStringSubmatch(line); m != nil {
					select {
					case addr <- m[1]:
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, r)
		}()
	}
	go func() {
		drained.Wait()
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	select {
	case a := <-addr:
		return c, a
	case <-c.done:
		b.Fatalf("%s exited before serving (%v):\n%s", name, c.err, c.tail)
	case <-time.After(time.Minute):
		b.Fatalf("%s did not report its address within a minute:\n%s", name, c.tail)
	}
	return nil, ""
}

// childEnv is the benchmark's environment without FLIGHTSRV_* variables, which flightsrv
// would read as flag defaults (FLIGHTSRV_LISTEN, FLIGHTSRV_FANOUT, …): the children run with
// the flags the benchmark passes and flightsrv's defaults for the rest.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLIGHTSRV_") {
			env = append(env, kv)
		}
	}
	return env
}

// stop ends the child: SIGINT to its pid, then SIGKILL to the same pid after 10 s.
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// alive fails the benchmark when the child has exited.
func (c *child) alive(b *testing.B) {
	select {
	case <-c.done:
		b.Fatalf("%s exited (%v):\n%s", c.name, c.err, c.tail)
	default:
	}
}

// procMemory is a process's resident set from /proc/PID/status, in bytes.
type procMemory struct {
	hwm int64 // VmHWM: peak resident set since the process started
	rss int64 // VmRSS: resident set now
}

// memory reads the child's VmHWM and VmRSS.
func (c *child) memory() (procMemory, error) {
	return readProcMemory(c.cmd.Process.Pid)
}

func readProcMemory(pid int) (procMemory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	return parseProcMemory(raw)
}

func parseProcMemory(status []byte) (procMemory, error) {
	var m procMemory
	for _, line := range bytes.Split(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(k) {
		case "VmHWM":
			dst = &m.hwm
		case "VmRSS":
			dst = &m.rss
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
	if m.hwm == 0 || m.rss == 0 {
		return m, errors.New("/proc status: no VmHWM or VmRSS line")
	}
	return m, nil
}

// cpu returns the CPU time the child has used so far (user and system, every thread), from
// utime and stime of /proc/PID/stat, in clock ticks of 10 ms (Linux's USER_HZ is 100).
func (c *child) cpu() (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return parseProcCPU(raw)
}

func parseProcCPU(stat []byte) (time.Duration, error) {
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

// tailBuffer keeps the last max bytes of the lines written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) WriteLine(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(append(t.buf, line...), '\n')
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// Ready lines of the children: flightsrv's slog line and the example server's banner.
var (
	flightsrvReady = regexp.MustCompile(`msg="serving Flight SQL" addr=(\S+)`)
	exampleReady   = regexp.MustCompile(`Starting SQLite Flight SQL Server on (\S+)`)
)

// TestParseProcMemory checks the /proc status parser on a real process (this one) and a
// sample.
func TestParseProcMemory(t *testing.T) {
	t.Parallel()
	m, err := parseProcMemory([]byte("Name:\tx\nVmPeak:\t  900 kB\nVmHWM:\t   2048 kB\nVmRSS:\t    1024 kB\n"))
	if err != nil || m.hwm != 2<<20 || m.rss != 1<<20 {
		t.Fatalf("parse: %+v, %v", m, err)
	}
	if d, err := parseProcCPU([]byte("42 (a b) S 1 1 1 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 9 0")); err != nil || d != 2810*time.Millisecond {
		t.Fatalf("parse stat: %v, %v", d, err)
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	own, err := readProcMemory(os.Getpid())
	if err != nil || own.hwm < own.rss || own.rss <= 0 {
		t.Fatalf("own memory: %+v, %v", own, err)
	}
}
