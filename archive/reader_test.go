package archive

import (
	"context"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

var formats = []Format{FormatParquet, FormatJSON}

func TestPutReadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			bkt := openTestBucket(t)
			w, err := NewWriter(bkt, WriterOptions{Prefix: "/" + testPrefix + "/", Format: f, RowGroupRows: 100, PageBufferBytes: 512})
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bkt, ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 2, 10, 0, 0, 0, 0, time.UTC))
			recs := genRecords(rand.New(rand.NewPCG(1, uint64(f))), b, 1000)
			key, err := w.Put(ctx, b, 7, recs)
			if err != nil {
				t.Fatal(err)
			}
			pattern := `^archives/746573742d7461626c65/67656e6572616c/6d6f6e74683a323032342d3032/generation-7/manifest-[0-9a-f]{64}\.json$`
			if !regexp.MustCompile(pattern).MatchString(key) {
				t.Fatalf("manifest key %q does not match %s", key, pattern)
			}
			again, err := w.Put(ctx, b, 7, recs)
			if err != nil || again != key {
				t.Fatalf("repeated Put = %q, %v; want the same key %q", again, err, key)
			}
			got, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: 1 << 30})
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, "whole bucket", got, recs)
			n, err := countRecords(ctx, r, key, b, b.Range())
			if err != nil || n != uint64(len(recs)) {
				t.Fatalf("Count(whole) = %d, %v; want %d", n, err, len(recs))
			}
			if err := r.Verify(ctx, key, b); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			// The payload key in the manifest follows the reference layout too.
			m, err := r.manifest(ctx, key, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			ppattern := `^archives/746573742d7461626c65/67656e6572616c/6d6f6e74683a323032342d3032/generation-7/records-` + m.SHA256 + `\.` + f.String() + `$`
			if !regexp.MustCompile(ppattern).MatchString(m.PayloadKey) {
				t.Fatalf("payload key %q does not match %s", m.PayloadKey, ppattern)
			}
		})
	}
}

// TestReadAndCountMatchBruteForce compares Read and Count with a brute-force evaluation over
// many random requests, for both formats, several row-group layouts and VerifyFully.
func TestReadAndCountMatchBruteForce(t *testing.T) {
	t.Parallel()
	type layout struct {
		name   string
		format Format
		rows   int // rows per row group
		page   int // page buffer bytes
		verify bool
	}
	layouts := []layout{
		{"parquet-small-groups-small-pages", FormatParquet, 97, 256, false},
		{"parquet-one-group", FormatParquet, 1 << 20, 1024, false},
		{"parquet-default", FormatParquet, 0, 0, false},
		{"parquet-verify-fully", FormatParquet, 64, 512, true},
		{"json", FormatJSON, 0, 0, false},
	}
	for i, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(42, uint64(i)))
			bkt := openTestBucket(t)
			w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: l.format, RowGroupRows: l.rows, PageBufferBytes: l.page})
			if err != nil {
				t.Fatal(err)
			}
			// A small tail forces real ranged reads even for this small payload.
			r, err := NewReader(bkt, ReaderOptions{VerifyFully: l.verify, TailBytes: 1024, CoalesceGapBytes: 64})
			if err != nil {
				t.Fatal(err)
			}
			b := testBucket("chan-\x00é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
			recs := genRecords(rng, b, 2500)
			key, err := w.Put(ctx, b, 3, recs)
			if err != nil {
				t.Fatal(err)
			}
			times := eventTimes(recs)
			for k := 0; k < 300; k++ {
				rg := randomRange(rng, b, times)
				if k == 0 {
					rg = b.Range()
				}
				want := bruteCount(times, rg.Intersect(b.Range()))
				got, err := countRecords(ctx, r, key, b, rg)
				if err != nil {
					t.Fatalf("Count(%v): %v", rg, err)
				}
				if got != want {
					t.Fatalf("Count([%v, %v)) = %d, want %d", rg.Start, rg.End, got, want)
				}
			}
			for k := 0; k < 200; k++ {
				req := routing.ReadRequest{Range: randomRange(rng, b, times), Limit: 1 + rng.IntN(300), Desc: rng.IntN(2) == 0}
				switch rng.IntN(4) {
				case 0:
					req.Limit = 1 << 30
				case 1:
					req.Range = b.Range()
				}
				if rng.IntN(2) == 0 {
					c := recs[rng.IntN(len(recs))]
					req.After = &routing.Cursor{EventTime: c.EventTime, SortKey: c.SortKey}
					if rng.IntN(3) == 0 {
						req.After.SortKey = append(append([]byte(nil), c.SortKey...), 0)
					}
				}
				want := bruteRead(recs, b, req)
				got, err := readRecords(r, ctx, key, b, req)
				if err != nil {
					t.Fatalf("Read(%+v): %v", req, err)
				}
				sameRecords(t, "Read", got, want)
			}
		})
	}
}
