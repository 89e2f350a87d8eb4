package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/internal/tablecheck"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// envRunMain makes the test binary run main() with the JSON-encoded arguments it holds: the
// kill test's child processes are the real command, in a separate process.
const envRunMain = "FLIGHTSRV_TEST_RUN_MAIN"

// envKillTrials sets the number of SIGKILL trials (default 6; make soak runs many more).
const envKillTrials = "FLIGHTSRV_KILL_TRIALS"

func TestMain(m *testing.M) {
	if raw := os.Getenv(envRunMain); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Args = append([]string{"flightsrv"}, args...)
		main()
		os.Exit(0)
	}
	pgtest.Main(m)
}

// startMain starts `flightsrv args…` as a child process (this test binary running main).
func startMain(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRunMain+"="+string(raw))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// kill stops a child by its process id with SIGKILL and reaps it.
func kill(cmd *exec.Cmd) {
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// killStore is what the SIGKILL test needs of a hot-store adapter: reads, the archival state
// (Status) and its migrations.
type killStore interface {
	routing.HotStore
	routing.ArchiveStateStore
	Migrate(ctx context.Context) error
}

// TestArchiverSurvivesSIGKILL runs `flightsrv archive --loop` as a separate process over a
// hot store (the embedded SQLite store, and PostgreSQL through the CockroachDB adapter) and a
// file:// archive, kills it with SIGKILL at a random instant, restarts it, over many trials,
// and then lets a last process finish: every eligible bucket must end archived under a
// manifest that validates, with its hot rows deleted, and every record must be read exactly
// once (counts and ordered scans equal to the records appended).
func TestArchiverSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts archiver processes")
	}
	t.Parallel()
	const countArchived = `SELECT count(*) FROM pulpitum_v4_bucket_metadata WHERE state = 'archived'`
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		dbPath := filepath.Join(t.TempDir(), "hot.db")
		st, err := sqlite.Open(context.Background(), sqlite.Config{Path: dbPath})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		killTrials(t, st, "sqlite://"+dbPath, func(ctx context.Context) (n int, err error) {
			return n, st.DB().QueryRowContext(ctx, countArchived).Scan(&n)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := pgtest.Start(t).NewDatabase(t)
		st, err := cockroach.Open(context.Background(), cockroach.Config{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		killTrials(t, st, url, func(ctx context.Context) (n int, err error) {
			return n, st.Pool().QueryRow(ctx, countArchived).Scan(&n)
		})
	})
}

// killTrials is TestArchiverSurvivesSIGKILL over one store, whose archiver processes get
// --store storeURL; archivedCount counts the archived buckets.
func killTrials(t *testing.T, st killStore, storeURL string, archivedCount func(context.Context) (int, error)) {
	trials := 6
	if v := os.Getenv(envKillTrials); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q", envKillTrials, v)
		}
		trials = n
	}
	ctx := context.Background()
	archiveDir := filepath.Join(t.TempDir(), "archive")
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	bucket, err := openArchive(ctx, archiveDir)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	reader, err := archive.NewReader(bucket, archive.ReaderOptions{VerifyFully: true})
	if err != nil {
		t.Fatal(err)
	}
	def := routing.TableDef{Name: "flights", TableID: "flights", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 12}
	asOf := time.Date(2001, 4, 20, 0, 0, 0, 0, time.UTC)
	table, err := routing.NewDurableTable(def, st, reader, routing.Options{Clock: func() time.Time { return asOf }})
	if err != nil {
		t.Fatal(err)
	}
	// Partitions × Jan–Apr 2001: January to March are eligible (3 buckets per partition, at
	// least 4 per trial), April stays hot.
	want := map[string][]routing.Record{}
	var parts []string
	var eligible []routing.BucketID
	for p := range max(16, 2*trials) {
		pk := fmt.Sprintf("P%02d", p)
		parts = append(parts, pk)
		for m := 1; m <= 4; m++ {
			start := time.Date(2001, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
			recs := make([]routing.Record, 60)
			for i := range recs {
				recs[i] = routing.Record{PartitionKey: []byte(pk), EventTime: start.Add(time.Duration(i*10301+p) * time.Second),
					SortKey: fmt.Appendf(nil, "%02d-%04d", m, i), Value: fmt.Appendf(nil, `{"m":%d,"i":%d}`, m, i)}
			}
			if _, err := table.Append(ctx, recs); err != nil {
				t.Fatal(err)
			}
			want[pk] = append(want[pk], recs...)
			if m < 4 {
				eligible = append(eligible, routing.BucketFor(def.TableID, []byte(pk), def.Strategy, start))
			}
		}
	}
	args := []string{"archive", "--store", storeURL, "--archive", archiveDir, "--before", "2001-04-01T00:00:00Z",
		"--loop", "--interval", "20ms", "--lease", "1s", "--renew", "250ms", "--retry", "20ms"}
	progress := func() (archived, cleaned int) {
		for _, b := range eligible {
			s, err := st.Status(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if s.State == routing.StateArchived {
				archived++
				if s.HotDeleted {
					cleaned++
				}
			}
		}
		return archived, cleaned
	}
	done := func() bool { _, c := progress(); return c == len(eligible) }
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d trials", seed, trials)
	rng := rand.New(rand.NewPCG(seed, 3))
	// Each trial kills the process at a random point of its work: once a random number of
	// further buckets (1 to 4) has been published, after a random 0–25 ms more, so kills land
	// in every phase (claim, snapshot, upload, publish, delete, renewal, between cycles).
	archivedNow := func() int {
		n, err := archivedCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := 0; i < trials && !done(); i++ {
		target := min(archivedNow()+1+rng.IntN(4), len(eligible))
		cmd := startMain(t, args...)
		for deadline := time.Now().Add(time.Minute); archivedNow() < target; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				kill(cmd)
				t.Fatalf("trial %d: no progress within a minute", i)
			}
		}
		time.Sleep(time.Duration(rng.IntN(25)) * time.Millisecond)
		kill(cmd)
		a, c := progress()
		t.Logf("trial %d: killed; %d of %d buckets archived, %d cleaned", i, a, len(eligible), c)
	}
	// A last process finishes the work (leases of killed workers expire after 1 s).
	cmd := startMain(t, args...)
	for deadline := time.Now().Add(2 * time.Minute); !done(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			kill(cmd)
			t.Fatal("the archiver did not finish within 2 minutes")
		}
	}
	kill(cmd)

	for _, b := range eligible {
		s, err := st.Status(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := reader.Verify(ctx, s.ManifestKey, b); err != nil {
			t.Fatalf("bucket %s/%s: %v", b.PartitionKey, b.Key, err)
		}
	}
	whole := routing.TimeRange{Start: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2001, 5, 1, 0, 0, 0, 0, time.UTC)}
	for _, pk := range parts {
		recs := want[pk]
		slices.SortFunc(recs, func(a, b routing.Record) int { return routing.Compare(a.EventTime, a.SortKey, b.EventTime, b.SortKey) })
		n, hot, archived, err := tablecheck.Count(ctx, table, []byte(pk), whole)
		if err != nil || n != uint64(len(recs)) || archived != 3 || hot != 1 {
			t.Fatalf("count %s = %d (%d hot, %d archived buckets), %v; want %d (3 archived buckets, 1 hot)", pk, n, hot, archived, err, len(recs))
		}
		page, err := table.QueryPage(ctx, routing.Query{PartitionKey: []byte(pk), Range: whole, Limit: 10000})
		if err != nil || len(page.Records) != len(recs) {
			t.Fatalf("scan %s: %d records, %v; want %d", pk, len(page.Records), err, len(recs))
		}
		for i, r := range page.Records {
			if !r.EventTime.Equal(recs[i].EventTime) || string(r.SortKey) != string(recs[i].SortKey) || string(r.Value) != string(recs[i].Value) {
				t.Fatalf("scan %s: record %d = %s %s, want %s %s", pk, i, r.EventTime, r.SortKey, recs[i].EventTime, recs[i].SortKey)
			}
		}
	}
}
