package layering

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/flightsrv/flightsrv/"

// testSupport are the packages only tests may import.
var testSupport = []string{"routing/storetest", "internal/testsupport/", "internal/tablecheck", "archive/archivefault", "e2e", "bench", "clients/", "internal/tools/"}

// forbidden lists, per package, the flightsrv packages it must not depend on, directly or
// not, and the outside modules it must not import itself (docs/architecture.md's table).
var forbidden = map[string][]string{
	"routing":           {module + "scan", module + "substrait", module + "query", module + "flightsql", module + "server", module + "archive", module + "routing/cockroach", module + "routing/sqlite", "github.com/apache/arrow-go/v18/arrow/flight", "github.com/jackc/pgx", "modernc.org/sqlite", "github.com/substrait-io"},
	"substrait":         {module + "scan", module + "query", module + "flightsql", module + "server", module + "archive", module + "routing/cockroach", module + "routing/sqlite", "google.golang.org/grpc", "github.com/apache/arrow-go/v18/arrow/flight"},
	"pushdown":          {module + "scan", module + "query", module + "flightsql", module + "archive", module + "routing/cockroach", module + "routing/sqlite", "google.golang.org/grpc", "github.com/apache/arrow-go/v18/arrow/flight"},
	"scan":              {module + "query", module + "flightsql", module + "server", module + "routing/cockroach", module + "routing/sqlite", "github.com/apache/arrow-go/v18/arrow/flight", "github.com/jackc/pgx", "modernc.org/sqlite"},
	"scan/ops":          {module + "routing", module + "substrait", module + "query", "github.com/apache/arrow-go/v18/arrow/flight"},
	"scan/aggregate":    {module + "routing", "github.com/apache/arrow-go/v18/arrow/flight"},
	"scan/ledger":       {module + "routing", "github.com/apache/arrow-go/v18/arrow/flight"},
	"query":             {module + "flightsql", module + "server", module + "archive", module + "routing/cockroach", module + "routing/sqlite"},
	"flightsql":         {module + "server", module + "archive", module + "routing/cockroach", module + "routing/sqlite"},
	"archive":           {module + "scan", module + "substrait", module + "query", module + "flightsql", module + "server", module + "routing/cockroach", module + "routing/sqlite", "github.com/jackc/pgx", "modernc.org/sqlite"},
	"routing/cockroach": {module + "archive", module + "substrait", module + "scan", module + "query", module + "flightsql", module + "server", "github.com/apache/arrow-go/v18/arrow/flight"},
	"routing/sqlite":    {module + "archive", module + "substrait", module + "scan", module + "query", module + "flightsql", module + "server", "github.com/apache/arrow-go/v18/arrow/flight"},
	"routing/migration": {module + "routing/cockroach", module + "routing/sqlite", "github.com/jackc/pgx", "modernc.org/sqlite"},
	"internal/session":  {module},
	"internal/calendar": {module},
	"internal/freelist": {module},
	"internal/setting":  {module},
	"internal/exprs":    {module},
}

// TestLayering lists every production package's dependencies (go list -deps, test files left
// out) and fails on an import against the layering or of test support.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}{{range .Imports}} ={{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg, deps := strings.TrimPrefix(f[0], module), f[1:]
		if isTestSupport(pkg) || strings.HasPrefix(pkg, "internal/layering") {
			continue
		}
		checked++
		for _, d := range deps {
			direct := strings.HasPrefix(d, "=")
			d = strings.TrimPrefix(d, "=")
			rel, ours := strings.CutPrefix(d, module)
			if ours && isTestSupport(rel) {
				t.Errorf("%s depends on test support %s", pkg, rel)
			}
			if !ours && !direct {
				continue // outside modules: only the package's own imports count
			}
			for _, bad := range forbidden[pkg] {
				if matches(d, bad) {
					t.Errorf("%s depends on %s, against docs/architecture.md's layering", pkg, d)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d packages: go list gave too few", checked)
	}
}

// matches reports whether package d is bad or under it (bad ending in "/": under it only).
func matches(d, bad string) bool {
	if strings.HasSuffix(bad, "/") {
		return strings.HasPrefix(d, bad)
	}
	return d == bad || strings.HasPrefix(d, bad+"/")
}

func isTestSupport(pkg string) bool {
	for _, p := range testSupport {
		if pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
			return true
		}
	}
	return false
}
