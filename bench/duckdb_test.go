package bench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// EnvPython names the environment variable that may point at a Python interpreter with the
// duckdb module; the default is the repository's .venv/bin/python (created by `make bench`).
const EnvPython = "FLIGHTSRV_BENCH_PYTHON"

// duckDB is a long-lived Python process running testdata/duckcount.py: one DuckDB connection
// that answers count queries and Arrow fetches over Parquet files, one JSON line per request.
// Not safe for
// concurrent use (the benchmarks ask it one query at a time).
type duckDB struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	out     *bufio.Reader
	version string
	threads string
	mu      sync.Mutex
}

// duckAnswer is one query's answer: the count, the execution time measured inside Python, and
// the bytes the process read (rchar; -1 when unknown).
type duckAnswer struct {
	Count int64  `json:"count"`
	NS    int64  `json:"ns"`
	RChar int64  `json:"rchar"`
	Error string `json:"error"`
}

func pythonPath() string {
	if p := os.Getenv(EnvPython); p != "" {
		return p
	}
	return filepath.Join(repoRoot(), ".venv", "bin", "python")
}

// startDuckDB starts the helper; it returns an error saying what is missing when Python or
// its duckdb module is not there.
func startDuckDB() (*duckDB, error) {
	py := pythonPath()
	if _, err := os.Stat(py); err != nil {
		return nil, fmt.Errorf("no Python at %s (set %s, or run `make bench`, which creates .venv with duckdb and pyarrow)", py, EnvPython)
	}
	cmd := exec.Command(py, filepath.Join(repoRoot(), "bench", "testdata", "duckcount.py"))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", py, err)
	}
	d := &duckDB{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := d.out.ReadBytes('\n')
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("duckdb helper did not start (is the duckdb module installed for %s?): %w", py, err)
	}
	var hello struct {
		Ready   bool   `json:"ready"`
		Version string `json:"duckdb"`
		Threads any    `json:"threads"`
	}
	if err := json.Unmarshal(line, &hello); err != nil || !hello.Ready {
		d.Close()
		return nil, fmt.Errorf("duckdb helper: unexpected greeting %q", line)
	}
	d.version, d.threads = hello.Version, fmt.Sprint(hello.Threads)
	return d, nil
}

// Query runs sql with params and returns DuckDB's answer: the first column of the first row.
func (d *duckDB) Query(sql string, params ...any) (duckAnswer, error) {
	return d.ask(map[string]any{"sql": sql, "params": params})
}

// QueryArrow runs sql and fetches the whole result as an Arrow table; the answer's count is
// the table's row count and its time covers execute and fetch.
func (d *duckDB) QueryArrow(sql string) (duckAnswer, error) {
	return d.ask(map[string]any{"sql": sql, "fetch": "arrow"})
}

func (d *duckDB) ask(request map[string]any) (duckAnswer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	req, err := json.Marshal(request)
	if err != nil {
		return duckAnswer{}, err
	}
	if _, err := d.stdin.Write(append(req, '\n')); err != nil {
		return duckAnswer{}, fmt.Errorf("duckdb helper: %w", err)
	}
	line, err := d.out.ReadBytes('\n')
	if err != nil {
		return duckAnswer{}, fmt.Errorf("duckdb helper: %w", err)
	}
	var a duckAnswer
	if err := json.Unmarshal(line, &a); err != nil {
		return duckAnswer{}, fmt.Errorf("duckdb helper: answer %q: %w", line, err)
	}
	if a.Error != "" {
		return a, errors.New("duckdb: " + a.Error)
	}
	return a, nil
}

// Close ends the helper (end of input, then a kill of this process id after 5 s).
func (d *duckDB) Close() {
	d.stdin.Close()
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
	}
}
