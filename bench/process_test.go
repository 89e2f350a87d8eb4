package bench

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// exampleServerPkg is arrow-go's example SQLite Flight SQL server command, built from the
// module cache at the version go.mod requires.
const exampleServerPkg = "github.com/apache/arrow-go/v18/arrow/flight/flightsql/example/cmd/sqlite_flightsql_server"

// binaries are the server programs the scan benchmarks run as child processes
// (testproc.Process: started and stopped by their pid, their memory and CPU time read from
// /proc).
type binaries struct {
	flightsrv string // ./cmd/flightsrv
	example   string // arrow-go's sqlite_flightsql_server
}

// buildBinaries builds flightsrv and arrow-go's example server into dir with one `go build`
// (so at the module's dependency versions).
func buildBinaries(b *testing.B, dir string) binaries {
	b.Helper()
	bins := testproc.Build(b, dir, testproc.Flightsrv, exampleServerPkg)
	return binaries{flightsrv: bins[0], example: filepath.Join(dir, "sqlite_flightsql_server")}
}

// Ready lines of the children: flightsrv's slog line and the example server's banner.
var (
	flightsrvReady = regexp.MustCompile(`msg="serving Flight SQL" addr=(\S+)`)
	exampleReady   = regexp.MustCompile(`Starting SQLite Flight SQL Server on (\S+)`)
)
