package load

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
)

type collect struct{ recs []routing.Record }

func (c *collect) Append(_ context.Context, recs []routing.Record) (int, error) {
	c.recs = append(c.recs, recs...)
	return len(recs), nil
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCSV(t *testing.T) {
	p := writeFile(t, "f.csv", "when,airport,delay,note\n"+
		"2001-01-01 05:57:00,ORD,-1,\"a, b\"\n"+
		"2001-02-03T04:05:06.789+02:00,SFO,3,x\n")
	var c collect
	st, err := File(context.Background(), &c, p, Mapping{Partition: "airport", Time: "when"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != 2 || st.Appended != 2 || len(c.recs) != 2 {
		t.Fatalf("stats %+v, %d records", st, len(c.recs))
	}
	r0, r1 := c.recs[0], c.recs[1]
	if string(r0.PartitionKey) != "ORD" || !r0.EventTime.Equal(time.Date(2001, 1, 1, 5, 57, 0, 0, time.UTC)) || string(r0.SortKey) != "0000000000" {
		t.Fatalf("record 0: %s %s %s", r0.PartitionKey, r0.EventTime, r0.SortKey)
	}
	if got := string(r0.Value); got != `{"delay":"-1","note":"a, b"}` {
		t.Fatalf("value 0: %s", got)
	}
	if !r1.EventTime.Equal(time.Date(2001, 2, 3, 2, 5, 6, 789000000, time.UTC)) || string(r1.SortKey) != "0000000001" {
		t.Fatalf("record 1: %s %s", r1.EventTime, r1.SortKey)
	}
}

func TestParquetSample(t *testing.T) {
	var c collect
	st, err := File(context.Background(), &c, filepath.Join("..", "..", "testdata", "flights-sample.parquet"),
		Mapping{Partition: "origin", Time: "date", ID: "id", Value: []string{"delay", "distance", "destination"}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Appended != 300000 {
		t.Fatalf("appended %d", st.Appended)
	}
	// The sample's first row is the source file's row 0: a zone-less wall-clock time read as UTC.
	r := c.recs[0]
	if string(r.SortKey) != "0000000000" || r.EventTime.Location() != time.UTC || !strings.HasPrefix(string(r.Value), `{"delay":`) {
		t.Fatalf("first record %s %s %s", r.SortKey, r.EventTime, r.Value)
	}
}

func TestMappingErrors(t *testing.T) {
	p := writeFile(t, "f.csv", "when,airport\n2001-01-01,ORD\n")
	ctx := context.Background()
	for name, m := range map[string]Mapping{
		"missing partition column": {Partition: "nope", Time: "when"},
		"missing time column":      {Partition: "airport", Time: "nope"},
		"missing id column":        {Partition: "airport", Time: "when", ID: "nope"},
		"missing value column":     {Partition: "airport", Time: "when", Value: []string{"nope"}},
		"no partition":             {Time: "when"},
	} {
		if _, err := File(ctx, &collect{}, p, m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := File(ctx, &collect{}, writeFile(t, "f.txt", "x"), Mapping{Partition: "a", Time: "b"}); err == nil {
		t.Error("unsupported extension accepted")
	}
	bad := writeFile(t, "bad.csv", "when,airport\nyesterday,ORD\n")
	if _, err := File(ctx, &collect{}, bad, Mapping{Partition: "airport", Time: "when"}); err == nil || strings.Contains(err.Error(), "ORD") {
		t.Errorf("bad time: %v", err)
	}
}

// TestBadRowWritesNothing: with a real durable table as the appender, a record outside the
// writable window in the last row stops the load before the first row is written.
func TestBadRowWritesNothing(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "hot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	def := routing.TableDef{Name: "t", TableID: "t", PartitionColumn: "p", Strategy: routing.CalendarMonthUTC, WritableBuckets: 3}
	now := time.Date(2001, 3, 15, 0, 0, 0, 0, time.UTC)
	tbl, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	body.WriteString("when,airport\n")
	for i := range BatchSize + 10 { // two batches: the bad row is in the second
		fmt.Fprintf(&body, "2001-02-%02d 10:00:%02d,ORD\n", 1+i%28, i%60)
	}
	body.WriteString("1990-01-01 00:00:00,ORD\n")
	p := writeFile(t, "f.csv", body.String())
	_, err = File(ctx, tbl, p, Mapping{Partition: "airport", Time: "when"})
	if !errors.Is(err, routing.ErrOutsideWriteWindow) || !strings.Contains(err.Error(), "nothing was written") || !strings.Contains(err.Error(), fmt.Sprintf("rows %d to %d", BatchSize, BatchSize+10)) {
		t.Fatalf("error %v", err)
	}
	all := routing.TimeRange{Start: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)}
	if recs, err := tbl.QueryPage(ctx, routing.Query{PartitionKey: []byte("ORD"), Range: all, Limit: 1}); err != nil || len(recs.Records) != 0 {
		t.Fatalf("%d records written (%v)", len(recs.Records), err)
	}
	// The corrected file loads completely.
	good := writeFile(t, "g.csv", strings.TrimSuffix(body.String(), "1990-01-01 00:00:00,ORD\n"))
	stats, err := File(ctx, tbl, good, Mapping{Partition: "airport", Time: "when"})
	if err != nil || stats.Appended != BatchSize+10 {
		t.Fatalf("corrected load: %+v %v", stats, err)
	}
}
