package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// EnvPython names the environment variable that may point at a Python interpreter with the
// duckdb module; the default is the repository's .venv/bin/python (created by `make bench`).
const EnvPython = "FLIGHTSRV_BENCH_PYTHON"

// duckDB is a long-lived Python process running testdata/duckcount.py: one DuckDB connection
// that answers count queries and Arrow fetches over Parquet files, one JSON line per request.
// Not safe for
// concurrent use (the benchmarks ask it one query at a time).
type duckDB struct {
	*pyHelper
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
	h, line, err := startPyHelper("duckdb helper", "duckcount.py", "creates .venv with duckdb and pyarrow")
	if err != nil {
		return nil, err
	}
	var hello struct {
		Ready   bool   `json:"ready"`
		Version string `json:"duckdb"`
		Threads any    `json:"threads"`
	}
	if err := json.Unmarshal(line, &hello); err != nil || !hello.Ready {
		h.Close()
		return nil, fmt.Errorf("duckdb helper: unexpected greeting %q", line)
	}
	return &duckDB{pyHelper: h, version: hello.Version, threads: fmt.Sprint(hello.Threads)}, nil
}

// Query runs sql with params and returns DuckDB's answer: the first column of the first row.
func (d *duckDB) Query(sql string, params ...any) (duckAnswer, error) {
	return d.query(map[string]any{"sql": sql, "params": params})
}

// QueryArrow runs sql and fetches the whole result as an Arrow table; the answer's count is
// the table's row count and its time covers execute and fetch.
func (d *duckDB) QueryArrow(sql string) (duckAnswer, error) {
	return d.query(map[string]any{"sql": sql, "fetch": "arrow"})
}

func (d *duckDB) query(request map[string]any) (duckAnswer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var a duckAnswer
	if err := d.ask(request, &a); err != nil {
		return duckAnswer{}, err
	}
	if a.Error != "" {
		return a, errors.New("duckdb: " + a.Error)
	}
	return a, nil
}
