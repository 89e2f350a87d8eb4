package pgtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable holding the URL of an existing server to use instead
// of starting one.
const EnvURL = "FLIGHTSRV_TEST_PG_URL"

// EnvBinDir names the environment variable that may point at the directory holding initdb and
// postgres; it is searched before every other location.
const EnvBinDir = "FLIGHTSRV_TEST_PG_BINDIR"

// startTimeout bounds initdb plus server start-up.
const startTimeout = 60 * time.Second

// Server is a running PostgreSQL server shared by the tests of one test binary. Its methods are
// safe for concurrent use.
type Server struct {
	// URL is the URL of the server's maintenance database (postgres), for example
	// postgres://postgres@127.0.0.1:41234/postgres?sslmode=disable.
	URL string

	external bool   // URL came from EnvURL: nothing to stop
	dir      string // temporary directory holding data/ and the socket; empty when external
	bin      string // directory of the server binaries
	port     int
	pid      int // postmaster pid
	done     chan struct{}
	waitErr  error // exit status of the launcher, valid after done is closed
	seq      atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

var (
	shared    *Server
	sharedErr error
	startOnce sync.Once
)

// Start returns the server shared by this test binary, starting it on first use. It fails tb
// (tb.Fatal) with a descriptive message when no server can be used. Start may be called from
// any number of tests, concurrently; the server lives until [Main] stops it (or, without Main,
// until the test process exits, when the server receives SIGTERM).
func Start(tb testing.TB) *Server {
	tb.Helper()
	startOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		tb.Fatalf("pgtest: %v", sharedErr)
	}
	return shared
}

// Main runs the tests of m and then stops the shared server if one was started, and exits with
// the tests' exit code. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop server: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// NewDatabase creates a new, empty database on the server and returns its URL. Databases on a
// server started by pgtest are discarded with the server; on an external server (EnvURL) the
// database is dropped when tb's cleanup runs, so pools opened on it must be closed by cleanups
// registered after this call.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("flightsrv_test_%d_%d", os.Getpid(), s.seq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		tb.Fatalf("pgtest: connect to maintenance database: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	if s.external {
		tb.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, s.URL)
			if err != nil {
				tb.Logf("pgtest: drop database: %v", err)
				return
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
				tb.Logf("pgtest: drop database: %v", err)
			}
		})
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		tb.Fatalf("pgtest: parse server URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// Stop stops a server started by pgtest (fast shutdown by SIGINT to the postmaster pid, then
// SIGQUIT and SIGKILL if it does not exit in time) and removes its directory. It is a no-op for
// an external server and idempotent.
func (s *Server) Stop() error {
	if s.external {
		return nil
	}
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	if err := s.halt(); err != nil {
		return err
	}
	return os.RemoveAll(s.dir)
}

// halt stops the postmaster (SIGINT, a fast shutdown that ends every connection; then SIGQUIT
// and SIGKILL if it does not exit in time) and keeps its data directory.
func (s *Server) halt() error {
	var errs []error
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, 20 * time.Second}, {syscall.SIGQUIT, 5 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		if err := syscall.Kill(s.pid, step.sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal postmaster: %w", err))
		}
		select {
		case <-s.done:
			return errors.Join(errs...)
		case <-time.After(step.wait):
		}
	}
	return errors.Join(append(errs, fmt.Errorf("postmaster %d did not exit", s.pid))...)
}

func start() (*Server, error) {
	if u := os.Getenv(EnvURL); u != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", EnvURL, err)
		}
		_ = conn.Close(ctx)
		return &Server{URL: u, external: true}, nil
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		s, err := launch(bin)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// versionedBinDirs is the glob of the Debian PostgreSQL server binary directories; a variable
// for tests.
var versionedBinDirs = "/usr/lib/postgresql/*/bin"

// findBinDir returns a directory holding both initdb and postgres.
func findBinDir() (string, error) {
	var candidates []string
	if d := os.Getenv(EnvBinDir); d != "" {
		candidates = append(candidates, d)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	if dirs, _ := filepath.Glob(versionedBinDirs); len(dirs) > 0 {
		sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
		candidates = append(candidates, dirs...)
	}
	for _, d := range candidates {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
		if q, err := exec.LookPath("postgres"); err == nil {
			// initdb finds postgres next to itself; resolve symlinks to the real directory.
			if real, err := filepath.EvalSymlinks(q); err == nil {
				return filepath.Dir(real), nil
			}
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, postgres) found in $%s, `pg_config --bindir`, "+
		"/usr/lib/postgresql/*/bin or PATH: install the Debian package postgresql (apt-get install postgresql), "+
		"or set %s to the URL of a server whose user may CREATE DATABASE", EnvBinDir, EnvURL)
}

func pgVersion(dir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
	return v
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// launch creates a cluster in a new temporary directory and starts postgres on a free port.
func launch(bin string) (s *Server, err error) {
	dir, err := os.MkdirTemp("", "flightsrv-pg-")
	if err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	asRoot := os.Geteuid() == 0
	if asRoot {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the postgres OS user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("chown temporary directory: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := (&Server{bin: bin}).command("initdb", "-D", data, "--auth=trust", "--username=postgres", "--encoding=UTF8",
		"--locale=C", "--no-sync")
	initdb.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, tail(out))
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s = &Server{
		URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		dir: dir, bin: bin, port: port,
	}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s, nil
}

// command returns the command running the server binary name with args, as the postgres OS
// user when the test runs as root.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(s.bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

// run starts postgres on s's data directory and port, and waits until it accepts connections.
func (s *Server) run() error {
	data := filepath.Join(s.dir, "data")
	logPath := filepath.Join(s.dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	defer logFile.Close()
	cmd := s.command("postgres", "-D", data, "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=64MB")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// If the test process dies without stopping the server, the kernel signals the launcher
	// (runuser forwards SIGTERM to postgres, a smart shutdown that completes once the dead
	// process's connections are gone).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	s.pid, s.done = cmd.Process.Pid, done
	go func() { s.waitErr = cmd.Wait(); close(done) }()
	if err := s.waitReady(data); err != nil {
		_ = s.halt()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("%w: %s", err, tail(log))
	}
	return nil
}

// waitReady waits for a successful connection and then records the real postmaster pid from
// postmaster.pid (under runuser the launcher's pid is not the server's).
func (s *Server) waitReady(data string) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited during start-up: %v", s.waitErr)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL)
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			break
		}
		cancel()
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after %v: %w", startTimeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f, err := os.Open(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return fmt.Errorf("read postmaster.pid: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && pid > 0 {
			s.pid = pid
			return nil
		}
	}
	return errors.New("postmaster.pid holds no pid")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last lines of a command's output for error messages.
func tail(b []byte) string {
	const max = 2000
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
