package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

// TestDiscoveryCacheSeesEveryCommit asks Partitions repeatedly while the database changes
// through the same store, through a second store on the same file (as a `load` in another
// process would) and through a metadata row alone: every answer equals the discovery statement's
// at that moment, and an unchanged database is answered without a statement.
func TestDiscoveryCacheSeesEveryCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hot.db")
	a, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	r := routing.TimeRange{Start: day, End: day.AddDate(0, 0, 10)}
	appendTo := func(s *sqlite.Store, pk string, d int) {
		t.Helper()
		bk := routing.BucketFor("t", []byte(pk), routing.CalendarDayUTC, day.AddDate(0, 0, d))
		rec := routing.Record{PartitionKey: []byte(pk), EventTime: bk.Start.Add(time.Minute), SortKey: []byte("k"), Value: []byte(`{}`)}
		if err := s.Append(ctx, bk, []routing.Record{rec}); err != nil {
			t.Fatal(err)
		}
	}
	// discover returns the answer as "partition[bucket keys]" strings and the statements it sent.
	discover := func() ([]string, int64) {
		t.Helper()
		var st routing.ReadStats
		ps, err := a.Partitions(routing.WithReadStats(ctx, &st), "t", routing.CalendarDayUTC, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s%v", p.Key, p.BucketKeys))
		}
		return out, st.HotStatements.Load()
	}
	expect := func(step string, statements int64, want ...string) {
		t.Helper()
		got, n := discover()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: discovered %v, want %v", step, got, want)
		}
		if n != statements {
			t.Fatalf("%s: %d statements, want %d", step, n, statements)
		}
	}
	expect("empty", 1)
	expect("empty again", 0)
	appendTo(a, "p1", 0)
	expect("after the store's own append", 1, "p1[day:2024-03-01]")
	expect("unchanged", 0, "p1[day:2024-03-01]")
	// A caller may replace what its answer holds without changing the next one's.
	ps, err := a.Partitions(ctx, "t", routing.CalendarDayUTC, r, 0)
	if err != nil {
		t.Fatal(err)
	}
	ps[0].BucketKeys = append(ps[0].BucketKeys, "x")
	ps[0] = routing.Partition{Key: []byte("y")}
	expect("after a caller changed its answer", 0, "p1[day:2024-03-01]")

	appendTo(b, "p2", 1)
	expect("after another store's append", 1, "p1[day:2024-03-01]", "p2[day:2024-03-02]")
	appendTo(b, "p1", 2)
	expect("after a new bucket of a known partition", 1, "p1[day:2024-03-01 day:2024-03-03]", "p2[day:2024-03-02]")
	// A route row alone (no record) is a bucket too.
	if _, err := b.DB().ExecContext(ctx, `INSERT INTO pulpitum_v4_bucket_metadata
		(table_id, partition_key, bucket_key, bucket_strategy, bucket_start, bucket_end)
		VALUES ('t', CAST('p3' AS BLOB), 'day:2024-03-04', 'calendar_day_utc', ?, ?)`,
		day.AddDate(0, 0, 3).UnixMicro(), day.AddDate(0, 0, 4).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	expect("after a metadata row", 1, "p1[day:2024-03-01 day:2024-03-03]", "p2[day:2024-03-02]", "p3[day:2024-03-04]")
	if _, err := b.DB().ExecContext(ctx, `DELETE FROM pulpitum_v4_bucket_metadata WHERE partition_key = CAST('p3' AS BLOB)`); err != nil {
		t.Fatal(err)
	}
	expect("after deleting it", 1, "p1[day:2024-03-01 day:2024-03-03]", "p2[day:2024-03-02]")
	// Another range is another question.
	got, err := a.Partitions(ctx, "t", routing.CalendarDayUTC, routing.TimeRange{Start: day.AddDate(0, 0, 1), End: day.AddDate(0, 0, 2)}, 0)
	if err != nil || len(got) != 1 || string(got[0].Key) != "p2" {
		t.Fatalf("one day: %v, %v", got, err)
	}
	// So is a limit.
	got, err = a.Partitions(ctx, "t", routing.CalendarDayUTC, r, 1)
	if err != nil || len(got) != 1 || string(got[0].Key) != "p1" {
		t.Fatalf("limit 1: %v, %v", got, err)
	}
	expect("the whole range again", 0, "p1[day:2024-03-01 day:2024-03-03]", "p2[day:2024-03-02]")
}
