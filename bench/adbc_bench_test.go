package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// adbcHelper is a long-lived Python process running testdata/adbcfetch.py: ADBC's Flight SQL
// driver fetching whole results, one JSON line per request. Not safe for concurrent use.
type adbcHelper struct{ *pyHelper }

// adbcAnswer is one fetch's answer: rows and batches read, the time to the first batch and to
// the end of the stream (measured in Python), or an error.
type adbcAnswer struct {
	Rows    int64  `json:"rows"`
	Batches int64  `json:"batches"`
	FirstNS int64  `json:"first_ns"`
	NS      int64  `json:"ns"`
	Error   string `json:"error"`
}

// startADBC starts the helper; it returns an error saying what is missing when Python or the
// adbc_driver_flightsql module is not there.
func startADBC() (*adbcHelper, error) {
	h, err := startADBCScript("ADBC helper", "adbcfetch.py")
	if err != nil {
		return nil, err
	}
	return &adbcHelper{h}, nil
}

// startADBCScript starts testdata/script, a helper using ADBC's Flight SQL driver that greets
// with {"ready": true, …}; the error, named name, says what is missing when Python or the
// adbc_driver_flightsql module is not there.
func startADBCScript(name, script string) (*pyHelper, error) {
	h, line, err := startPyHelper(name, script, "installs ADBC's Flight SQL driver into .venv")
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(line), `"ready": true`) {
		h.Close()
		return nil, fmt.Errorf("%s: unexpected greeting %q (is adbc_driver_flightsql installed?)", name, line)
	}
	return h, nil
}

// Fetch runs sql at uri and reads the whole result.
func (h *adbcHelper) Fetch(uri, sql string) (adbcAnswer, error) {
	var a adbcAnswer
	if err := h.ask(map[string]string{"uri": uri, "sql": sql}, &a); err != nil {
		return a, err
	}
	if a.Error != "" {
		return a, fmt.Errorf("ADBC: %s", a.Error)
	}
	return a, nil
}

// adbcVariant is one way of serving ORD's history to ADBC.
type adbcVariant struct {
	name      string
	uri       string // where ADBC connects
	endpoints int    // endpoints of the FlightInfo
	replicas  int    // distinct first locations of the endpoints (1 without locations)
	runs      int
	rows      int64
	first, ns []time.Duration
}

// BenchmarkADBCEndpoints (issue 10): ADBC (Python, the Go Flight SQL driver underneath)
// fetching ORD's full history (the ordered scan SELECT timestamp, id, value … ORDER BY
// timestamp, id over six month buckets: January–March archived, April–June hot) with one
// endpoint from one `flightsrv serve` process, and with six ordered endpoints (one per
// bucket: --multi-endpoint --endpoint-buckets 1) served by three processes sharing the
// database, the archive directory and the keyring, each advertising the three addresses (the
// endpoints' first locations rotate, so each replica serves two; ADBC fetches endpoints
// concurrently). It reports rows/s and the time to the first batch of each, and prints a
// summary. Every run must return the reference count of rows.
func BenchmarkADBCEndpoints(b *testing.B) {
	h, err := startADBC()
	if err != nil {
		b.Skipf("ADBC comparison skipped: %v", err)
	}
	defer h.Close()
	s := newSuite(b)
	s.archiveBefore(b, mixedCutoff)
	bins := buildBinaries(b, b.TempDir())
	keyring := testproc.WriteKeyring(b, "bench-1")
	table := fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", flightsTable.Name, flightsTable.TableID, flightsTable.PartitionColumn, flightsTable.WritableBuckets)
	serve := func(name, listen string, extra ...string) string {
		args := append([]string{"serve", "--store", s.url, "--archive", "file://" + s.dir, "--table", table, "--no-auth", "--keyring", keyring,
			"--listen", listen}, extra...)
		_, addr := testproc.StartReady(b, name, flightsrvReady, bins.flightsrv, args...)
		return addr
	}
	single := serve("flightsrv serve (one endpoint)", "127.0.0.1:0")
	addrs := testproc.FreePorts(b, 3)
	var advertise []string
	for _, a := range addrs {
		advertise = append(advertise, "grpc+tcp://"+a)
	}
	for i, a := range addrs {
		serve(fmt.Sprintf("flightsrv serve (replica %d of 3)", i+1), a, "--multi-endpoint", "--endpoint-buckets", "1", "--advertise", strings.Join(advertise, ","))
	}
	sql := scanSQL(flightsTable.Name, flightsTable.PartitionColumn, airport, fullRange)
	variants := []*adbcVariant{
		{name: "endpoints=1", uri: "grpc://" + single},
		{name: "endpoints=6/replicas=3", uri: "grpc://" + addrs[0]},
	}
	for _, v := range variants {
		v.endpoints, v.replicas = endpointSpread(b, strings.TrimPrefix(v.uri, "grpc://"), sql)
		// Warm up (connections, route caches, the archive's footers) and check the answer.
		if a, err := h.Fetch(v.uri, sql); err != nil || a.Rows != s.total {
			b.Fatalf("%s: %d rows, want %d (%v)", v.name, a.Rows, s.total, err)
		}
		b.Run(v.name, func(b *testing.B) {
			var first, total time.Duration
			n := 0
			for b.Loop() {
				a, err := h.Fetch(v.uri, sql)
				if err != nil || a.Rows != s.total {
					b.Fatalf("%d rows, want %d (%v)", a.Rows, s.total, err)
				}
				v.first, v.ns = append(v.first, time.Duration(a.FirstNS)), append(v.ns, time.Duration(a.NS))
				first, total = first+time.Duration(a.FirstNS), total+time.Duration(a.NS)
				n++
			}
			v.runs, v.rows = v.runs+n, s.total
			b.ReportMetric(float64(s.total)*float64(n)/total.Seconds(), "rows/s")
			b.ReportMetric(float64(first.Milliseconds())/float64(n), "ms/first-batch")
		})
	}
	printADBCSummary(os.Stdout, variants)
}

// endpointSpread asks addr for the FlightInfo of sql with arrow-go's client and returns its
// number of endpoints and of distinct first locations (1 when the endpoints have none).
func endpointSpread(b *testing.B, addr, sql string) (endpoints, replicas int) {
	b.Helper()
	cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	info, err := cl.Execute(context.Background(), sql)
	if err != nil {
		b.Fatal(err)
	}
	first := map[string]bool{}
	for _, ep := range info.Endpoint {
		if len(ep.Location) > 0 {
			first[ep.Location[0].Uri] = true
		}
	}
	return len(info.Endpoint), max(1, len(first))
}

// printADBCSummary prints one line per variant: median time, rows/s and median time to the
// first batch, and the multi-endpoint variant's ratios to the single endpoint.
func printADBCSummary(w io.Writer, vs []*adbcVariant) {
	fmt.Fprintf(w, "\nADBC (Python) fetching %s's history, %d rows (January–March archived, April–June hot)\n", airport, vs[0].rows)
	fmt.Fprintf(w, "%-24s %9s %8s %5s %12s %12s %16s\n", "variant", "endpoints", "replicas", "runs", "median", "rows/s", "first batch")
	for _, v := range vs {
		if v.runs == 0 {
			continue
		}
		med, firstMed := median(v.ns), median(v.first)
		fmt.Fprintf(w, "%-24s %9d %8d %5d %12s %12.0f %16s\n", v.name, v.endpoints, v.replicas, v.runs, med.Round(time.Millisecond),
			float64(v.rows)/med.Seconds(), firstMed.Round(100*time.Microsecond))
	}
	if len(vs) == 2 && vs[0].runs > 0 && vs[1].runs > 0 {
		fmt.Fprintf(w, "several endpoints / one: time %.2fx, time to first batch %.2fx\n",
			median(vs[1].ns).Seconds()/median(vs[0].ns).Seconds(), median(vs[1].first).Seconds()/median(vs[0].first).Seconds())
	}
}
