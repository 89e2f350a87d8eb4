package testproc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/auth"
)

// FreePorts returns n distinct free "127.0.0.1:port" addresses. They are released before
// use (processes that advertise each other's addresses need them chosen first), so a process
// started on one may, rarely, find it taken: callers that care retry with new ports.
func FreePorts(tb testing.TB, n int) []string {
	tb.Helper()
	out := make([]string, 0, n)
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// WriteKeyring writes a keyring file (flightsrv's --keyring) of one new key with id keyID
// into a temporary directory of tb, mode 0600, and returns its path.
func WriteKeyring(tb testing.TB, keyID string) string {
	tb.Helper()
	key, err := auth.GenerateKey(keyID)
	if err != nil {
		tb.Fatal(err)
	}
	ring, err := auth.NewKeyring(key.ID, []auth.Key{key})
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := ring.MarshalJSON()
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(tb.TempDir(), "keyring.json")
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Flightsrv is the import path of flightsrv's command, for Build.
const Flightsrv = "github.com/flightsrv/flightsrv/cmd/flightsrv"

// Build builds the commands pkgs (import paths) with one `go build -o dir/` run in the test's
// directory, so at the versions this module's go.mod requires, and returns their binaries'
// paths in order (dir joined with each path's last element).
func Build(tb testing.TB, dir string, pkgs ...string) []string {
	tb.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		if gobin, err = exec.LookPath("go"); err != nil {
			tb.Fatal("no go command to build the servers with")
		}
	}
	start := time.Now()
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)
	if out, err := exec.Command(gobin, args...).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	tb.Logf("built %s in %s", strings.Join(pkgs, " "), time.Since(start).Round(100*time.Millisecond))
	bins := make([]string, len(pkgs))
	for i, p := range pkgs {
		bins[i] = filepath.Join(dir, path.Base(p))
	}
	return bins
}

// BuildFlightsrv builds flightsrv into a temporary directory of tb and returns its path.
func BuildFlightsrv(tb testing.TB) string {
	tb.Helper()
	return Build(tb, tb.TempDir(), Flightsrv)[0]
}

// Process is a child process of a test. Its stdout and stderr are drained into a bounded tail
// (so a chatty process never blocks on a full pipe), shown by Output. Its methods are safe for
// concurrent use.
type Process struct {
	name  string
	cmd   *exec.Cmd
	tail  *tailBuffer
	lines chan string // lines matching the ready pattern (first submatch), while unread
	done  chan struct{}
	err   error // Wait's result, once done is closed
	once  sync.Once
}

// Start starts bin with args as process name and returns it; it is stopped (Stop) at tb's
// cleanup. Its environment is the test's without FLIGHTSRV_* variables, which flightsrv
// would read as flag defaults: it runs with the flags given and its defaults for the rest.
// When ready is not nil, the first submatch of the lines matching it (an address the process
// reports, say) are kept for Ready.
func Start(tb testing.TB, name string, ready *regexp.Regexp, bin string, args ...string) *Process {
	tb.Helper()
	p := &Process{name: name, cmd: exec.Command(bin, args...), tail: &tailBuffer{max: 16 << 10},
		lines: make(chan string, 16), done: make(chan struct{})}
	p.cmd.Env = childEnv()
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	tb.Cleanup(p.Stop)
	var drained sync.WaitGroup
	for _, r := range []io.Reader{stdout, stderr} {
		drained.Add(1)
		go func() {
			defer drained.Done()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				line := sc.Text()
				p.tail.WriteLine(line)
				if ready == nil {
					continue
				}
				if m := ready.FindStringSubmatch(line); len(m) > 1 {
					select {
					case p.lines <- m[1]:
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, r)
		}()
	}
	go func() {
		drained.Wait()
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// StartReady is Start followed by Ready: it returns the process and the first submatch of its
// first line matching ready, failing tb when the process exits first or reports nothing
// within a minute.
func StartReady(tb testing.TB, name string, ready *regexp.Regexp, bin string, args ...string) (*Process, string) {
	tb.Helper()
	p := Start(tb, name, ready, bin, args...)
	s, err := p.Ready(time.Minute)
	if err != nil {
		tb.Fatal(err)
	}
	return p, s
}

// Ready waits up to d for a line matching Start's ready pattern and returns its first
// submatch; the error says whether the process exited first (with its output) or d passed.
func (p *Process) Ready(d time.Duration) (string, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case s := <-p.lines:
		return s, nil
	case <-p.done:
		select {
		case s := <-p.lines:
			return s, nil
		default:
		}
		return "", fmt.Errorf("%s exited before serving (%v):\n%s", p.name, p.err, p.Output())
	case <-timer.C:
		return "", fmt.Errorf("%s did not report its address within %s:\n%s", p.name, d, p.Output())
	}
}

// Pid returns the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited returns a channel closed once the process has exited and its output is drained.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Alive fails tb when the process has exited.
func (p *Process) Alive(tb testing.TB) {
	tb.Helper()
	select {
	case <-p.done:
		tb.Fatalf("%s exited (%v):\n%s", p.name, p.err, p.Output())
	default:
	}
}

// Output returns the last 16 KiB of the process's stdout and stderr lines.
func (p *Process) Output() string { return p.tail.String() }

// Stop ends the process: SIGINT to its pid, then SIGKILL to the same pid after 10 s; it
// returns once the process has exited. Calling it again does nothing.
func (p *Process) Stop() { p.end(syscall.SIGINT, 10*time.Second) }

// Kill ends the process with SIGKILL to its pid and returns once it has exited. Calling it
// again, or after Stop, does nothing.
func (p *Process) Kill() { p.end(syscall.SIGKILL, 0) }

func (p *Process) end(sig syscall.Signal, grace time.Duration) {
	p.once.Do(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = p.cmd.Process.Signal(sig)
		if grace > 0 {
			select {
			case <-p.done:
				return
			case <-time.After(grace):
				_ = p.cmd.Process.Kill()
			}
		}
		<-p.done
	})
}

// Memory reads the process's VmHWM and VmRSS (ReadMemory).
func (p *Process) Memory() (Memory, error) { return ReadMemory(p.Pid()) }

// CPU returns the CPU time the process has used so far (ReadCPU).
func (p *Process) CPU() (time.Duration, error) { return ReadCPU(p.Pid()) }

// childEnv is the test's environment without FLIGHTSRV_* variables.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLIGHTSRV_") {
			env = append(env, kv)
		}
	}
	return env
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
