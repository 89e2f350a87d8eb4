package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// pyHelper is a long-lived Python process running one script of testdata/ that reads one JSON
// request per line on stdin and answers one JSON line on stdout (the DuckDB and ADBC helpers).
// Not safe for concurrent use.
type pyHelper struct {
	name  string // for errors: "duckdb helper", "ADBC helper"
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startPyHelper starts testdata/script under pythonPath() and returns it with its first line
// (the greeting, which the caller checks). missing says how to install what the script needs;
// the error names it when Python is absent or the script does not greet.
func startPyHelper(name, script, missing string) (*pyHelper, []byte, error) {
	py := pythonPath()
	if _, err := os.Stat(py); err != nil {
		return nil, nil, fmt.Errorf("no Python at %s (set %s, or run `make bench`, which %s)", py, EnvPython, missing)
	}
	cmd := exec.Command(py, filepath.Join(repoRoot(), "bench", "testdata", script))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", py, err)
	}
	h := &pyHelper{name: name, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := h.out.ReadBytes('\n')
	if err != nil {
		h.Close()
		return nil, nil, fmt.Errorf("%s did not start (run `make bench`, which %s; Python %s): %w", name, missing, py, err)
	}
	return h, line, nil
}

// ask sends request as one JSON line and decodes the answer line into answer.
func (h *pyHelper) ask(request, answer any) error {
	req, err := json.Marshal(request)
	if err != nil {
		return err
	}
	if _, err := h.stdin.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	line, err := h.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("%s: %w", h.name, err)
	}
	if err := json.Unmarshal(line, answer); err != nil {
		return fmt.Errorf("%s: answer %q: %w", h.name, line, err)
	}
	return nil
}

// Close ends the helper (end of input, then a kill of this process id after 10 s) and reaps it.
func (h *pyHelper) Close() {
	h.stdin.Close()
	done := make(chan struct{})
	go func() { _ = h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-done
	}
}
