package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// memoryAttackLimit is the --query-memory and --total-query-memory of TestMemoryAttacks'
// server: 64 MiB for one query and for all of them together.
const memoryAttackLimit = 64 << 20

// memoryAttackOverhead is what the server process may hold beyond --query-memory: the Go
// runtime and the binary's mapped text and data, pgx's connections, the substrait extension
// collection loaded by the first statement, gRPC's per-stream buffers and the IPC encoder's
// copy of the batch being sent (one per stream), the garbage the collector has not yet
// returned (the server runs with the default --go-memory-limit auto: a soft limit of 40 MiB
// plus 32 MiB per stream in flight, at most --total-query-memory more), and the parse tree of
// the statement being planned (about 30 MB for the 200 KB statement of 50,000 columns, before
// such a select list was refused; one at a time). Measured with this test, the ordinary ordered scan of ORD (the control case) peaks
// at 81 to 91 MiB: 170 MiB leaves it and four attackers' stream buffers room (176 to 179 MiB
// measured for four 1 MB literals when this bound was 150 MiB; 193 to 209 MiB on 2026-12-07
// for main's build and the one before it alike, 214.8 MiB once in CI on a loaded machine;
// 186 to 215 MiB before the soft limit's growth stopped at --total-query-memory), but not a
// query's batches past the limit (1,285 MiB before issue 16's fix). What grew is not the
// code: on 2026-12-07 issue 16's own commit (1480271) peaked at 233 and 235 MiB for four 1 MB
// literals, main's 3e6cb18 at 198 to 205. Of such a peak (a heap profile and /proc status
// sampled every 100 ms) about 72 MiB are the binary's mapped pages (RssFile), about 100 MiB
// the Go heap in use (the four queries' batches within --total-query-memory, gRPC's buffers
// of the batches being sent, garbage under the soft limit), the rest the runtime's and the C
// parser's; the copies of the literal outside the batches (the statement's parse tree, the
// signed ticket opened at each DoGet, the log record) are a few MB of short-lived garbage.
const memoryAttackOverhead = 170 << 20

// memoryWatchdog is the resident set at which TestMemoryAttacks kills its server rather than
// let it take the machine (before issue 16 the 1 MB literal reached 10.6 GB).
const memoryWatchdog = 2 << 30

// memoryAttack is one query of TestMemoryAttacks and what its rows must hold.
type memoryAttack struct {
	name    string
	query   string
	literal string // the value of every column after the first, "" when the columns repeat id
	columns int    // output columns
	// readBytes is how many bytes of string values the client reads before it cancels the
	// query (0: the whole answer): the 1 MB literal's answer holds 16.5 GB.
	readBytes int64
	// from and to, when set, narrow the answer to ORD's flights of [from, to) (every one of
	// them once); else it is all of ORD's flights of the test's range.
	from, to time.Time
	// answered requires a lone client to read the whole answer: the attack must not be
	// refused (one that costs little to plan and run). Beside others it may be refused for
	// the total query memory, as any query may.
	answered bool
}

// memoryAttacks are the queries of issue 16 over ORD's 16,569 flights of 2001.
func memoryAttacks() []memoryAttack {
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-02'"
	lit := func(n float64) string { return strings.Repeat("x", int(n)) }
	// The widest select list PostgreSQL takes (50,000 columns, the attack of issue 16, are
	// 54011 before the statement is planned: TestTargetListLimitAsPostgres).
	wide := make([]string, 1664)
	for i := range wide {
		wide[i] = "id"
	}
	return []memoryAttack{
		{name: "literal 1 MB", query: "SELECT id, '" + lit(1e6) + "'" + where, literal: lit(1e6), columns: 2, readBytes: 256 << 20},
		{name: "literal 100 KB", query: "SELECT id, '" + lit(1e5) + "'" + where, literal: lit(1e5), columns: 2, readBytes: 256 << 20},
		{name: "1,664 columns", query: "SELECT " + strings.Join(wide, ", ") + where, columns: 1664, readBytes: 256 << 20},
		// A value the statement sizes with a small input is claimed before it is built: every
		// client is refused (before, each built 900 MB for its first row whatever the limit).
		{name: "repeat 900 MB", query: "SELECT id, repeat('x', 900000000)" + where, literal: "(refused)", columns: 2},
		{name: "lpad 200 M characters", query: "SELECT id, lpad(id, 200000000)" + where, literal: "(refused)", columns: 2},
		// Two 400-column derived tables joined, 800 computed columns in all (each id || '',
		// the row's id): binding and lowering cost time and memory quadratic in the width
		// (tens of seconds and GBs of RSS before; 2×832 columns took 5 minutes and 6.5 GB); now
		// tens of MB, so the server answers it within the bound of RSS. One day's flights
		// (each id once: the join is on the unique id). 2×832 columns answer too, but their
		// batches need more than the 64 MiB of --query-memory.
		{name: "join of two 400-column tables", query: wideJoin(400, "2001-03-01", "2001-03-02"), columns: 800,
			from: ts("2001-03-01T00:00:00Z"), to: ts("2001-03-02T00:00:00Z"), answered: true},
	}
}

// wideJoin is a join on id of two derived tables each of n columns computed as id and the
// empty string concatenated (a1…an, b1…bn) over ORD's flights of [from, to): 2n columns,
// every one the row's id.
func wideJoin(n int, from, to string) string {
	arm := func(p string) string {
		cols := make([]string, n)
		for i := range cols {
			cols[i] = fmt.Sprintf("id || '' AS %s%d", p, i+1)
		}
		return "SELECT " + strings.Join(cols, ", ") + " FROM flights WHERE origin = 'ORD' AND timestamp >= '" + from + "' AND timestamp < '" + to + "'"
	}
	return "SELECT * FROM (" + arm("a") + ") a JOIN (" + arm("b") + ") b ON a.a1 = b.b1"
}

// attackOutcome is what one client got: rows and string bytes read, and the error that ended
// the stream (nil when it was read to the end or cancelled after readBytes).
type attackOutcome struct {
	rows, bytes int64
	complete    bool
	err         error
}

// runAttack runs a on cl, checking every row it reads (the first column an id of ORD's flights
// in the range, each once; the others the literal, or the id again), until the answer ends or
// a.readBytes were read.
func runAttack(ctx context.Context, cl *flightsql.Client, a memoryAttack, ids map[string]bool) attackOutcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out attackOutcome
	info, err := cl.Execute(ctx, a.query)
	if err != nil {
		out.err = err
		return out
	}
	seen := map[string]bool{}
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			out.err = err
			return out
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			if int(rec.NumCols()) != a.columns {
				rdr.Release()
				out.err = fmt.Errorf("a batch of %d columns, want %d", rec.NumCols(), a.columns)
				return out
			}
			first, ok := rec.Column(0).(*array.String)
			if !ok {
				rdr.Release()
				out.err = fmt.Errorf("column 0 is %s, not utf8", rec.Column(0).DataType())
				return out
			}
			for c := 1; c < a.columns; c++ {
				col, ok := rec.Column(c).(*array.String)
				if !ok {
					rdr.Release()
					out.err = fmt.Errorf("column %d is %s, not utf8", c, rec.Column(c).DataType())
					return out
				}
				for i := range col.Len() {
					want := a.literal
					if want == "" {
						want = first.Value(i)
					}
					if col.IsNull(i) || col.Value(i) != want {
						rdr.Release()
						out.err = fmt.Errorf("row %d, column %d: not the expected value", out.rows+int64(i), c)
						return out
					}
				}
				out.bytes += strBytes(col)
			}
			for i := range first.Len() {
				id := first.Value(i)
				if !ids[id] || seen[id] {
					rdr.Release()
					out.err = fmt.Errorf("row %d: an id not in the range, or repeated", out.rows+int64(i))
					return out
				}
				seen[id] = true
			}
			out.rows += rec.NumRows()
			out.bytes += strBytes(first)
			if a.readBytes > 0 && out.bytes >= a.readBytes {
				rdr.Release()
				return out
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			out.err = err
			return out
		}
	}
	out.complete = true
	if out.rows != int64(len(ids)) {
		out.err = fmt.Errorf("%d rows, want %d", out.rows, len(ids))
	}
	return out
}

// strBytes returns the bytes of a's values.
func strBytes(a *array.String) int64 {
	o := a.ValueOffsets()
	return int64(o[len(o)-1] - o[0])
}

// watchRSS samples pid's resident set every 10 ms until stop is closed and kills the process
// (kill) when it passes memoryWatchdog; it returns the largest VmRSS seen and whether it
// killed.
func watchRSS(pid int, kill func(), stop <-chan struct{}) (peak func() (int64, bool)) {
	var max atomic.Int64
	var killed atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			m, err := testproc.ReadMemory(pid)
			if err != nil {
				return
			}
			if m.RSS > max.Load() {
				max.Store(m.RSS)
			}
			if m.RSS > memoryWatchdog {
				killed.Store(true)
				kill()
				return
			}
		}
	}()
	return func() (int64, bool) { <-done; return max.Load(), killed.Load() }
}

// TestMemoryAttacks (issue 16): the queries that took the server past its memory — a 1 MB
// and a 100 KB string literal projected over ORD's 16,569 flights, and 1,664 columns of id,
// and values sized by a small input (repeat('x', 900000000), lpad to 200 million characters) —
// each alone and four at once, against a `flightsrv serve` process started afresh per case
// with --query-memory and --total-query-memory of 64 MiB. Each client either reads correct rows
// (up to the attack's readBytes, then cancels) or is refused with RESOURCE_EXHAUSTED naming
// the limit in bytes (its own or the total); the process's peak RSS (VmHWM) stays under
// --query-memory plus memoryAttackOverhead. The ordinary ordered scan of ORD is the control
// case, and it runs again and again beside each four attackers, always answering in full (a
// query within its share of the total is never refused for the others' memory). Peak figures
// are logged; a watchdog kills a server passing 2 GiB (before issue 16's
// fix the 1 MB literal and the 50,000 columns passed it within 3 and 17 seconds, four 100 KB
// literals peaked at 1,285 MiB).
func TestMemoryAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	e := newEnv(t)
	bin := testproc.BuildFlightsrv(t)
	keyring := testproc.WriteKeyring(t, "e2e-memory")
	from, to := ts("2001-01-01T00:00:00Z"), ts("2001-07-02T00:00:00Z")
	ids := map[string]bool{}
	for _, f := range expected(e.sample, "ORD", from, to) {
		ids[f.id] = true
	}
	if len(ids) != 16569 {
		t.Fatalf("the sample has %d ORD flights in the range, the issue counted 16,569", len(ids))
	}
	control := memoryAttack{name: "ordered scan (control)", columns: 1,
		query: "SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-02' ORDER BY timestamp, id"}
	limitText := fmt.Sprintf("memory limit of %d bytes", memoryAttackLimit)
	for _, a := range append([]memoryAttack{control}, memoryAttacks()...) {
		for _, clients := range []int{1, 4} {
			if a.query == control.query && clients > 1 {
				continue
			}
			name := fmt.Sprintf("%s ×%d", a.name, clients)
			want := ids
			if !a.from.IsZero() {
				want = map[string]bool{}
				for _, f := range expected(e.sample, "ORD", a.from, a.to) {
					want[f.id] = true
				}
			}
			t.Run(name, func(t *testing.T) {
				rep := startReplicas(t, e, bin, keyring, 1, "--query-memory", fmt.Sprint(memoryAttackLimit),
					"--total-query-memory", fmt.Sprint(memoryAttackLimit), "--go-memory-limit", "auto")[0]
				defer rep.proc.Stop()
				stop := make(chan struct{})
				peakRSS := watchRSS(rep.proc.Pid(), rep.kill, stop)
				start := time.Now()
				outs := make([]attackOutcome, clients)
				var wg sync.WaitGroup
				for c := range clients {
					cl, err := flightsql.NewClient(rep.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
						grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(16<<20)))
					if err != nil {
						t.Fatal(err)
					}
					defer cl.Close()
					wg.Add(1)
					go func() {
						defer wg.Done()
						ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
						defer cancel()
						outs[c] = runAttack(ctx, cl, a, want)
					}()
				}
				// Beside four attackers, an ordinary query (the control, a few KB of batches,
				// within its share of the total) runs again and again and always answers.
				var controls []attackOutcome
				controlDone := make(chan struct{})
				attackersDone := make(chan struct{})
				if clients > 1 {
					ccl, err := flightsql.NewClient(rep.addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
					if err != nil {
						t.Fatal(err)
					}
					defer ccl.Close()
					go func() {
						defer close(controlDone)
						for {
							ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
							controls = append(controls, runAttack(ctx, ccl, control, ids))
							cancel()
							select {
							case <-attackersDone:
								return
							default:
							}
						}
					}()
				} else {
					close(controlDone)
				}
				wg.Wait()
				close(attackersDone)
				<-controlDone
				for i, o := range controls {
					if o.err != nil || !o.complete {
						t.Errorf("%s: the ordinary query beside the attackers, run %d: %d rows, %v", name, i+1, o.rows, o.err)
					}
				}
				if len(controls) > 0 {
					t.Logf("%s: the ordinary query answered %d times beside the attackers", name, len(controls))
				}
				elapsed := time.Since(start)
				mem, memErr := rep.proc.Memory()
				close(stop)
				sampled, killed := peakRSS()
				if killed {
					t.Fatalf("%s: the server passed %d MiB of RSS and was killed (peak sampled %.0f MiB, %s)", name, memoryWatchdog>>20, float64(sampled)/(1<<20), elapsed.Round(time.Millisecond))
				}
				if memErr != nil {
					t.Fatalf("%s: the server is gone: %v\n%s", name, memErr, rep.proc.Output())
				}
				for c, o := range outs {
					switch {
					case a.answered && clients == 1 && (o.err != nil || !o.complete):
						t.Errorf("%s: client %d: %d rows (complete: %v), not the whole answer: %v", name, c, o.rows, o.complete, o.err)
					case o.err == nil:
						t.Logf("%s: client %d read %d rows, %.1f MiB (complete: %v)", name, c, o.rows, float64(o.bytes)/(1<<20), o.complete)
					case status.Code(o.err) == codes.ResourceExhausted && strings.Contains(o.err.Error(), limitText):
						t.Logf("%s: client %d refused after %d rows: %v", name, c, o.rows, status.Convert(o.err).Message())
					default:
						var se interface{ GRPCStatus() *status.Status }
						if errors.As(o.err, &se) {
							t.Errorf("%s: client %d: %s after %d rows", name, c, se.GRPCStatus().Code(), o.rows)
						}
						t.Errorf("%s: client %d: %v", name, c, o.err)
					}
				}
				t.Logf("%s: server peak RSS %.1f MiB (VmHWM; sampled VmRSS peak %.1f MiB) in %s; bound %d MiB", name,
					float64(mem.HWM)/(1<<20), float64(sampled)/(1<<20), elapsed.Round(time.Millisecond), (memoryAttackLimit+memoryAttackOverhead)>>20)
				if mem.HWM > memoryAttackLimit+memoryAttackOverhead {
					t.Errorf("%s: server peak RSS %.1f MiB, want under --query-memory %d MiB + %d MiB", name,
						float64(mem.HWM)/(1<<20), memoryAttackLimit>>20, memoryAttackOverhead>>20)
				}
			})
		}
	}
}
