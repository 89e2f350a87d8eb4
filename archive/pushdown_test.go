package archive

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// TestPushdownIO checks that statistics answer instead of data: counts of ranges made of whole
// row groups or pages fetch nothing once footer and manifest are cached, a straddling page is
// fetched alone, and a small partial read fetches one coalesced span.
func TestPushdownIO(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := make([]routing.Record, 1000)
	for i := range recs {
		recs[i] = routing.Record{
			PartitionKey: []byte("general"),
			EventTime:    b.Start.Add(time.Duration(i) * time.Minute),
			SortKey:      fmt.Appendf(nil, "k%04d", i),
			Value:        make([]byte, 100),
		}
	}
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, RowGroupRows: 100, PageBufferBytes: 256})
	key, err := w.Put(ctx, b, 1, recs)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := ParseManifest(mustRead(t, bkt, key))
	r, _ := NewReader(bkt, ReaderOptions{TailBytes: 1024})
	at := func(i int) time.Time { return recs[i].EventTime }

	count := func(rng routing.TimeRange) (uint64, *routing.ReadStats) {
		t.Helper()
		st := &routing.ReadStats{}
		n, err := countRecords(routing.WithReadStats(ctx, st), r, key, b, rng)
		if err != nil {
			t.Fatal(err)
		}
		return n, st
	}
	n, cold := count(routing.TimeRange{Start: at(150), End: at(300)})
	if n != 150 || cold.ObjectReads.Load() > 6 { // manifest, payload check, tail, rest of the footer, page index, one page
		t.Fatalf("cold count = %d with %d object reads", n, cold.ObjectReads.Load())
	}
	n, st := count(b.Range())
	if n != 1000 || st.ObjectReads.Load() != 0 {
		t.Fatalf("whole-bucket count = %d with %d object reads, want 1000 from the manifest", n, st.ObjectReads.Load())
	}
	n, st = count(routing.TimeRange{Start: at(100), End: at(300)})
	if n != 200 || st.ObjectReads.Load() != 0 {
		t.Fatalf("count of two whole row groups = %d with %d object reads, want 200 from statistics", n, st.ObjectReads.Load())
	}
	n, st = count(routing.TimeRange{Start: at(150), End: at(300)})
	if n != 150 || st.ObjectReads.Load() != 1 || st.BytesRead.Load() > 8<<10+1024 {
		t.Fatalf("count with one straddling page = %d with %d reads of %d bytes, want one page", n, st.ObjectReads.Load(), st.BytesRead.Load())
	}

	st = &routing.ReadStats{}
	got, err := readRecords(r, routing.WithReadStats(ctx, st), key, b, routing.ReadRequest{
		Range: b.Range(), After: routing.CursorOf(&recs[499]), Limit: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "read after cursor", got, recs[500:505])
	// At most three requests: the cursor's own page at the end of row group 4 (ties at the
	// cursor's time are candidates), row group 5, whose column chunks come in one coalesced
	// request, and the next span, which the batch reader may fetch before the five records
	// are taken and the reader released.
	if st.ObjectReads.Load() > 3 || uint64(st.BytesRead.Load()) > m.PayloadBytes/4 {
		t.Fatalf("partial read: %d reads of %d bytes (payload %d)", st.ObjectReads.Load(), st.BytesRead.Load(), m.PayloadBytes)
	}
}

func TestWriterProtocol(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(3), b, 50)
	for _, f := range formats {
		w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: f})
		r, _ := NewReader(bkt, ReaderOptions{})

		// An existing object with other content under the payload key is never overwritten.
		payload := encodeFormat(t, f, recs, DefaultRowGroupRows)
		if f == FormatParquet {
			p, err := encodeParquetPayload(recs, DefaultRowGroupRows, DefaultPageBufferBytes)
			if err != nil {
				t.Fatal(err)
			}
			payload = p
		}
		pkey := PayloadKey(testPrefix, b, 2, sha256Hex(payload), f)
		if err := bkt.WriteAll(ctx, pkey, []byte("squatter"), nil); err != nil {
			t.Fatal(err)
		}
		_, err := w.Put(ctx, b, 2, recs)
		requireOnly(t, f.String()+": existing object", err, ErrObjectExists, b)
		if got := mustRead(t, bkt, pkey); string(got) != "squatter" {
			t.Fatalf("existing object was overwritten")
		}

		// Inputs are checked before anything is written.
		unsorted := append([]routing.Record{recs[1], recs[0]}, recs[2:]...)
		_, err = w.Put(ctx, b, 3, unsorted)
		requireOnly(t, "unsorted input", err, ErrRecordsUnsorted, b)
		foreign := append([]routing.Record(nil), recs...)
		foreign[3].PartitionKey = []byte("other")
		_, err = w.Put(ctx, b, 3, foreign)
		requireOnly(t, "foreign input", err, ErrRecordOutsideBucket, b)
		if _, err := w.Put(ctx, b, -1, recs); !errors.Is(err, ErrInvalidBucket) {
			t.Fatalf("negative generation: %v", err)
		}

		// An empty bucket archives and reads back empty.
		key, err := w.Put(ctx, b, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := countRecords(ctx, r, key, b, routing.TimeRange{Start: b.Start, End: b.Start.Add(time.Hour)}); err != nil || n != 0 {
			t.Fatalf("%s: empty count = %d, %v", f, n, err)
		}
		if got, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: 10}); err != nil || len(got) != 0 {
			t.Fatalf("%s: empty read = %v, %v", f, got, err)
		}
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarDayUTC, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC))
	w, _ := NewWriter(bkt, WriterOptions{Prefix: testPrefix})
	key, err := w.Put(context.Background(), b, 1, genRecords(newRand(4), b, 10))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(bkt, ReaderOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a canceled context: %v", err)
	}
	if _, err := w.Put(ctx, b, 2, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put with a canceled context: %v", err)
	}
}

func mustRead(t *testing.T, bkt interface {
	ReadAll(context.Context, string) ([]byte, error)
}, key string) []byte {
	t.Helper()
	data, err := bkt.ReadAll(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
