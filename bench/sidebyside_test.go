package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/testsupport/otlprecv"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// BenchmarkSideBySide compares flightsrv builds (or flags, or environments) on ORD's archived
// ordered scan, the query of BenchmarkScan's archive/process variant: every variant is a
// `flightsrv serve` child process over the same database and archive, and each round runs
// the scan once against every variant in turn (each round from the next variant on, and in
// reverse order every other round), so that the machine's drift (ours are shared and noisy)
// and the order's effects fall on all of them alike. It is skipped
// unless FLIGHTSRV_SIDE_BY_SIDE lists the variants, separated by ';', each
// NAME=[VAR=VALUE ...] BINARY [FLAG ...]: environment variables for the child, the binary
// ('.' is the one built from this tree) and flags added to serve's; {otlp} in a variant
// stands for the gRPC endpoint URL (http://127.0.0.1:PORT) of an OTLP receiver in this
// process (internal/testsupport/otlprecv), e.g. `on=. --otlp-endpoint {otlp} --otlp-protocol
// grpc`. FLIGHTSRV_SIDE_BY_SIDE_ROUNDS sets the timed rounds (default 40, after
// sideWarmRounds untimed ones). For each variant it prints the p50 of a query and its rows/s,
// the server process's CPU time per row (its CPU-time clock, testproc.ReadCPU: exact while
// the server is idle, so between two queries) during its own queries and over all the timed
// rounds (which adds what a query leaves to the background: garbage collection, a batch of
// spans exported later), this process's — the client's — CPU per row (getrusage), the
// server's peak RSS (VmHWM) with its anonymous and file-backed parts, and its threads' context
// switches per query over all the timed rounds (contextSwitches). With
// FLIGHTSRV_SIDE_BY_SIDE_PROFILE=DIR, every variant also serves pprof (--debug-listen on a
// free loopback port): its CPU profile over the timed rounds (their length estimated from the
// last untimed one) and its allocation profile are written to DIR/NAME.cpu.pprof and
// DIR/NAME.allocs.pprof, for `go tool pprof -diff_base`, and its garbage collections, bytes
// and objects allocated per query are printed, with its live heap and the memory its runtime
// holds after a forced collection at the end; profiling costs the variants alike, but sets
// Go's heap-profile sampling on (serve leaves it off without --debug-listen). With GOGC=off
// and a large --go-memory-limit in every variant (no collection, so no buffer pool trimmed
// by one) the bytes and objects a query allocates are nearly exact from run to run. make
// bench-side-by-side runs it; start two or three processes of each variant to see how much
// processes of the same build differ.
func BenchmarkSideBySide(b *testing.B) {
	spec := os.Getenv("FLIGHTSRV_SIDE_BY_SIDE")
	if spec == "" {
		b.Skip("FLIGHTSRV_SIDE_BY_SIDE is not set")
	}
	rounds := 40
	if s := os.Getenv("FLIGHTSRV_SIDE_BY_SIDE_ROUNDS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			b.Fatalf("FLIGHTSRV_SIDE_BY_SIDE_ROUNDS=%q: want a positive number", s)
		}
	}
	if strings.Contains(spec, otlpPlaceholder) {
		spec = strings.ReplaceAll(spec, otlpPlaceholder, "http://"+otlprecv.Start(b).GRPCAddr)
	}
	sideBySide(b, spec, rounds)
	for b.Loop() {
	}
}

// sideWarmRounds is how many untimed rounds sideBySide runs before the timed ones: each
// variant's caches (the archive's footers, the statement cache, gRPC's buffer pools) and, with
// OTLP export, its exporter's connection and first batches are warm when timing starts, and
// the heap has grown to its steady size under serve's memory limit.
const sideWarmRounds = 10

// otlpPlaceholder stands for an OTLP receiver's endpoint in FLIGHTSRV_SIDE_BY_SIDE.
const otlpPlaceholder = "{otlp}"

// sideResult is one variant's measure in sideBySide: the p50 of a query and the server's CPU
// time per row.
type sideResult struct {
	name      string
	p50       time.Duration
	cpuPerRow float64 // ns, during the variant's own queries
	allPerRow float64 // ns, over all the timed rounds (background work included)
}

// sideBySide runs BenchmarkSideBySide's comparison of the variants of spec (its syntax) over
// rounds timed rounds, prints a line per variant and returns their measures in spec's order.
func sideBySide(b *testing.B, spec string, rounds int) []sideResult {
	sc := newScanSuite(b)
	sc.archiveAll(b)
	t := flightsTable
	sql := scanSQL(t.Name, t.PartitionColumn, airport, fullRange)
	type variant struct {
		name           string
		proc           *testproc.Process
		run            scanFunc
		lat            []time.Duration
		server, client time.Duration // CPU over the timed rounds
		gc0, gc1       goMemStats    // before and after the timed rounds, when profiled
		live           goMemStats    // after them and a forced collection, when profiled
		all            time.Duration // server CPU from the first timed round to the last's end
		switches       int64         // the server's context switches over the timed rounds
	}
	var vs []*variant
	profDir := os.Getenv("FLIGHTSRV_SIDE_BY_SIDE_PROFILE")
	var debugAddrs []string
	for _, v := range strings.Split(spec, ";") {
		name, rest, _ := strings.Cut(strings.TrimSpace(v), "=")
		f := strings.Fields(rest)
		var env []string
		for len(f) > 0 && strings.Contains(f[0], "=") {
			env, f = append(env, f[0]), f[1:]
		}
		if name == "" || len(f) == 0 {
			b.Fatalf("FLIGHTSRV_SIDE_BY_SIDE variant %q: want NAME=[VAR=VALUE ...] BINARY [FLAG ...]", v)
		}
		bin := f[0]
		if bin == "." {
			bin = sc.bins.flightsrv
		}
		args := append([]string{"serve", "--store", sc.url, "--archive", "file://" + sc.dir,
			"--table", fmt.Sprintf("name=%s,id=%s,partition=%s,strategy=month,window=%d", t.Name, t.TableID, t.PartitionColumn, t.WritableBuckets),
			"--listen", "127.0.0.1:0", "--no-auth"}, f[1:]...)
		if profDir != "" {
			debug := testproc.FreePorts(b, 1)[0]
			debugAddrs = append(debugAddrs, debug)
			args = append(args, "--debug-listen", debug)
		}
		if len(env) > 0 {
			// env(1) execs the binary: the process keeps env's pid, which /proc is read by.
			args = append(append(env, bin), args...)
			bin = "/usr/bin/env"
		}
		proc, addr := testproc.StartReady(b, name, flightsrvReady, bin, args...)
		vs = append(vs, &variant{name: name, proc: proc, run: flightScan(sc.client(b, addr), sql)})
	}
	var warm time.Duration
	var profiles sync.WaitGroup
	for r := -sideWarmRounds; r < rounds; r++ {
		if r == 0 {
			for _, v := range vs {
				s, err := v.proc.CPU()
				if err != nil {
					b.Fatal(err)
				}
				v.all = -s
				v.switches = -contextSwitches(v.proc.Pid())
			}
		}
		if r == 0 && profDir != "" {
			for i, v := range vs {
				v.gc0 = memStats(b, debugAddrs[i], false)
			}
			// The timed rounds last about rounds times the last untimed one.
			secs := max(1, int(warm.Seconds()*float64(rounds)+0.5))
			for i, v := range vs {
				profiles.Go(func() { cpuProfile(b, debugAddrs[i], secs, filepath.Join(profDir, v.name+".cpu.pprof")) })
			}
		}
		for i := range vs {
			// Round r runs the variants from the (r/2)th on, in reverse on odd rounds: over
			// 2×len(vs) rounds every variant runs in every position and after each of its
			// neighbours alike (with only odd rounds reversed, a middle variant of three or
			// more never ran first or last, and read several percent apart from the same
			// build at either end).
			k := ((r/2)%len(vs) + len(vs) + i) % len(vs)
			if r%2 != 0 {
				k = len(vs) - 1 - k
			}
			v := vs[k]
			s0, err := v.proc.CPU()
			if err != nil {
				b.Fatal(err)
			}
			c0 := selfCPU()
			t0 := time.Now()
			got, _, err := v.run(sc.ctx)
			d := time.Since(t0)
			c1 := selfCPU()
			s1, cerr := v.proc.CPU()
			if err != nil || cerr != nil {
				b.Fatalf("%s: %v %v", v.name, err, cerr)
			}
			if err := sc.ref.check(got); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			switch {
			case r == -1:
				warm += d
			case r >= 0:
				v.lat = append(v.lat, d)
				v.server += s1 - s0
				v.client += c1 - c0
			}
		}
	}
	for _, v := range vs {
		s, err := v.proc.CPU()
		if err != nil {
			b.Fatal(err)
		}
		v.all += s
		v.switches += contextSwitches(v.proc.Pid())
	}
	if profDir != "" {
		for i, v := range vs {
			v.gc1 = memStats(b, debugAddrs[i], false)
		}
		for i, v := range vs {
			v.live = memStats(b, debugAddrs[i], true)
		}
	}
	profiles.Wait()
	for i, v := range vs {
		if profDir != "" {
			// gc=1: a heap profile holds the allocations up to the last completed collection,
			// none at all under GOGC=off (which counts a query's allocations without the pools
			// emptied by collections).
			fetchProfile(b, debugAddrs[i], "allocs?gc=1", filepath.Join(profDir, v.name+".allocs.pprof"))
		}
	}
	rows := float64(int64(rounds) * sc.ref.rows)
	var out []sideResult
	for _, v := range vs {
		p50 := median(v.lat)
		mem, err := v.proc.Memory()
		if err != nil {
			b.Fatal(err)
		}
		anon, file := rssParts(v.proc.Pid())
		fmt.Printf("side-by-side %-12s p50 %6.1f ms  %5.2fM rows/s  server CPU %5.1f ns/row (%5.1f with background)  client CPU %5.1f ns/row  peak RSS %5.1f MiB (now %.1f anon + %.1f file)  %.0f context switches a query\n",
			v.name, float64(p50.Microseconds())/1e3, float64(sc.ref.rows)/p50.Seconds()/1e6,
			float64(v.server.Nanoseconds())/rows, float64(v.all.Nanoseconds())/rows, float64(v.client.Nanoseconds())/rows,
			float64(mem.HWM)/(1<<20), anon, file, float64(v.switches)/float64(rounds))
		if profDir != "" {
			fmt.Printf("side-by-side %-12s per query: %.2f GC cycles, %.0f KiB allocated in %.0f objects\n", v.name,
				float64(v.gc1.numGC-v.gc0.numGC)/float64(rounds), float64(v.gc1.totalAlloc-v.gc0.totalAlloc)/float64(rounds)/1024,
				float64(v.gc1.mallocs-v.gc0.mallocs)/float64(rounds))
			fmt.Printf("side-by-side %-12s after a forced collection: %.2f MiB live heap, %.2f MiB held by the runtime\n", v.name,
				float64(v.live.heapAlloc)/(1<<20), float64(v.live.held)/(1<<20))
		}
		out = append(out, sideResult{name: v.name, p50: p50, cpuPerRow: float64(v.server.Nanoseconds()) / rows, allPerRow: float64(v.all.Nanoseconds()) / rows})
	}
	return out
}

// cpuProfile writes the CPU profile of secs seconds that the pprof server at addr takes to
// file; errors are logged (a profile is an aid, not a measure).
func cpuProfile(b *testing.B, addr string, secs int, file string) {
	fetchProfile(b, addr, fmt.Sprintf("profile?seconds=%d", secs), file)
}

// goMemStats is what sideBySide reads of a process's runtime.MemStats: its garbage
// collections, bytes and objects allocated so far, its heap objects' bytes (HeapAlloc), and
// the memory its soft limit counts (Sys less HeapReleased: heap, stacks and the runtime's
// own structures).
type goMemStats struct{ numGC, totalAlloc, mallocs, heapAlloc, held uint64 }

// memStats reads the goMemStats of the process serving pprof at addr (the "# NumGC = N"
// lines of /debug/pprof/heap?debug=1), after a forced collection when gc is set (heapAlloc is
// then the live heap); zero after logging an error.
func memStats(b *testing.B, addr string, gc bool) goMemStats {
	q := ""
	if gc {
		q = "&gc=1"
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1" + q)
	if err != nil {
		b.Logf("memory statistics of %s: %v", addr, err)
		return goMemStats{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m goMemStats
	var sys, released uint64
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "# "), " = "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			switch k {
			case "NumGC":
				m.numGC = n
			case "TotalAlloc":
				m.totalAlloc = n
			case "Mallocs":
				m.mallocs = n
			case "HeapAlloc":
				m.heapAlloc = n
			case "Sys":
				sys = n
			case "HeapReleased":
				released = n
			}
		}
	}
	m.held = sys - released
	return m
}

// fetchProfile writes the profile /debug/pprof/WHAT of the pprof server at addr to file;
// errors are logged (a profile is an aid, not a measure).
func fetchProfile(b *testing.B, addr, what, file string) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s", addr, what))
	if err != nil {
		b.Logf("profile %s of %s: %v", what, addr, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Logf("profile %s of %s: %s", what, addr, resp.Status)
		return
	}
	raw, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(file, raw, 0o644)
	}
	if err != nil {
		b.Logf("profile %s of %s: %v", what, addr, err)
		return
	}
	fmt.Printf("side-by-side profile %s\n", file)
}

// BenchmarkOTLPExport (issue 20) measures what exporting telemetry over OTLP costs: ORD's
// archived ordered scan (BenchmarkSideBySide's query) against `flightsrv serve` processes of
// this tree, some without export and as many exporting traces and metrics over OTLP/gRPC to a
// receiver in this process (internal/testsupport/otlprecv, recording what arrives), round by
// round. FLIGHTSRV_OTLP_PROCESSES sets how many processes of each (default 2): processes of
// one build side by side differ by 1–4% of server CPU per row, about what export costs
// (bench/doc.go), and the figure pools them.
// It prints every process's line, the overhead of export on the p50 and on the server's CPU
// per row (during the queries, and with their background work: target under 2%), pooled and
// for each pair, and the spans a query exported, and fails if no span of the scan arrived.
// FLIGHTSRV_OTLP_ROUNDS sets the rounds (default 200, after sideWarmRounds untimed: about 20 s
// with two processes of each; with fewer the swings of a shared machine outweigh the
// difference, bench/doc.go). The exporting servers run with OTEL_BSP_SCHEDULE_DELAY=1000, so
// that spans arrive within the benchmark.
func BenchmarkOTLPExport(b *testing.B) {
	rounds, procs := 200, 2
	for _, e := range []struct {
		name string
		n    *int
	}{{"FLIGHTSRV_OTLP_ROUNDS", &rounds}, {"FLIGHTSRV_OTLP_PROCESSES", &procs}} {
		if s := os.Getenv(e.name); s != "" {
			var err error
			if *e.n, err = strconv.Atoi(s); err != nil || *e.n < 1 {
				b.Fatalf("%s=%q: want a positive number", e.name, s)
			}
		}
	}
	recv := otlprecv.Start(b)
	var spec []string
	for i := 1; i <= procs; i++ {
		spec = append(spec, fmt.Sprintf("export-off-%d=.", i),
			fmt.Sprintf("export-on-%d=OTEL_BSP_SCHEDULE_DELAY=1000 . --otlp-endpoint http://%s --otlp-protocol grpc", i, recv.GRPCAddr))
	}
	res := sideBySide(b, strings.Join(spec, ";"), rounds)
	var off, on sideResult
	var pairs []string
	for i := 0; i+1 < len(res); i += 2 {
		f, n := res[i], res[i+1]
		pairs = append(pairs, fmt.Sprintf("%+.1f%%", 100*(n.cpuPerRow/f.cpuPerRow-1)))
		off.p50, on.p50 = off.p50+f.p50, on.p50+n.p50
		off.cpuPerRow, on.cpuPerRow = off.cpuPerRow+f.cpuPerRow, on.cpuPerRow+n.cpuPerRow
		off.allPerRow, on.allPerRow = off.allPerRow+f.allPerRow, on.allPerRow+n.allPerRow
	}
	fmt.Printf("OTLP export overhead: p50 %+.1f%%, server CPU per row %+.1f%% (pairs %s), with background work %+.1f%% (target under 2%%)\n",
		100*(on.p50.Seconds()/off.p50.Seconds()-1), 100*(on.cpuPerRow/off.cpuPerRow-1), strings.Join(pairs, ", "), 100*(on.allPerRow/off.allPerRow-1))
	deadline := time.Now().Add(10 * time.Second)
	for !hasDoGetSpan(recv.Spans()) {
		if time.Now().After(deadline) {
			b.Fatal("no DoGet span reached the OTLP receiver")
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("OTLP spans per query: %s\n", spansPerQuery(recv.Spans()))
	for b.Loop() {
	}
}

// hasDoGetSpan reports whether spans hold a DoGet call's.
func hasDoGetSpan(spans []otlprecv.Span) bool {
	for _, s := range spans {
		if strings.HasSuffix(s.Name, "/DoGet") {
			return true
		}
	}
	return false
}

// spansPerQuery renders how many spans of each name spans hold per DoGet span (one a query
// in BenchmarkOTLPExport), with their mean number of attributes, by decreasing count; the
// spans still in the exporter's queue are not counted.
func spansPerQuery(spans []otlprecv.Span) string {
	n, attrs := map[string]int{}, map[string]int{}
	queries := 0
	for _, s := range spans {
		n[s.Name]++
		attrs[s.Name] += len(s.Attrs)
		if strings.HasSuffix(s.Name, "/DoGet") {
			queries++
		}
	}
	names := slices.SortedFunc(maps.Keys(n), func(a, b string) int { return cmp.Or(n[b]-n[a], strings.Compare(a, b)) })
	var out []string
	total := 0
	for _, name := range names {
		total += n[name]
		out = append(out, fmt.Sprintf("%s %.1f of %.0f attributes", name, float64(n[name])/float64(queries), float64(attrs[name])/float64(n[name])))
	}
	return fmt.Sprintf("%.1f (%s)", float64(total)/float64(queries), strings.Join(out, ", "))
}

// contextSwitches returns the context switches (voluntary and not) of process pid's threads
// so far, from /proc/PID/task/*/status (threads that have exited are not counted; the Go
// runtime seldom ends one); 0 when unreadable. A thread parks and is woken again for every
// switch it makes voluntarily: the count is the process's wake-ups, exactly.
func contextSwitches(pid int) int64 {
	dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, f := range dirs {
		st, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// selfCPU returns this process's CPU time (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssParts returns a process's resident anonymous and file-backed memory in MiB (RssAnon and
// RssFile of /proc/PID/status; zero when unreadable).
func rssParts(pid int) (anon, file float64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	st, _ := io.ReadAll(f)
	for _, l := range strings.Split(string(st), "\n") {
		k, v, _ := strings.Cut(l, ":")
		fs := strings.Fields(v)
		if len(fs) == 0 {
			continue
		}
		kb, _ := strconv.ParseFloat(fs[0], 64)
		switch k {
		case "RssAnon":
			anon = kb / 1024
		case "RssFile":
			file = kb / 1024
		}
	}
	return anon, file
}
