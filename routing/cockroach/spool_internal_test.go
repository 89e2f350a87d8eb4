package cockroach

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// spoolSource yields recs in batches of 7 with their buckets (routing.BucketFor).
type spoolSource struct {
	recs    []routing.Record
	buckets map[string]*routing.BucketID
}

func (s *spoolSource) Next(context.Context) (routing.IngestBatch, error) {
	if len(s.recs) == 0 {
		return routing.IngestBatch{}, io.EOF
	}
	n := min(7, len(s.recs))
	b := routing.IngestBatch{Records: s.recs[:n]}
	for _, r := range b.Records {
		bk := routing.BucketFor("t", r.PartitionKey, routing.CalendarDayUTC, r.EventTime)
		if p := s.buckets[bk.CacheKey()]; p != nil {
			b.Buckets = append(b.Buckets, p)
		} else {
			s.buckets[bk.CacheKey()] = &bk
			b.Buckets = append(b.Buckets, &bk)
		}
	}
	s.recs = s.recs[n:]
	return b, nil
}

// TestSpoolSortsChunks checks the spool's chunks against an independent sort: 1,000 records
// of 12 partitions over four days in random order (then in time order), in chunks of 64 records (the first 8) and
// of at most 2,000 bytes, come back chunk by chunk as the request's consecutive records, each
// chunk in the primary key's order (partition, bucket key, time, id) with each record's
// position in the request, bucket and bytes, in both the records table's and the staging
// table's column shapes.
func TestSpoolSortsChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := randomRecords(1, 1000, 12, 4, 40)
	chunks := map[int]int{}
	check := func(recs []routing.Record, maxBytes int) {
		sp := newSpool("t", routing.CalendarDayUTC, 64)
		sp.maxBytes = maxBytes
		go sp.fill(ctx, ctx, &spoolSource{recs: slices.Clone(recs), buckets: map[string]*routing.BucketID{}})
		sp.wait()
		var next int64
		for i := 0; ; i++ {
			c, buckets, err := sp.chunk(ctx, i)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.first != next || c.n > int64(sp.limit(c.first)) || (maxBytes == spoolChunkBytes && c.n != min(int64(sp.limit(c.first)), 1000-c.first)) {
				t.Fatalf("maxBytes %d: chunk %d holds records [%d, %d), want from %d, at most %d", maxBytes, i, c.first, c.first+c.n, next, sp.limit(c.first))
			}
			// The chunk's records, sorted independently, with their positions.
			type want struct {
				pos int64
				r   routing.Record
				key string
			}
			var ws []want
			for p := c.first; p < c.first+c.n; p++ {
				r := recs[p]
				key, _, _ := routing.CalendarDayUTC.Bounds(r.EventTime)
				ws = append(ws, want{p, r, key})
			}
			slices.SortFunc(ws, func(a, b want) int {
				return cmp.Or(bytes.Compare(a.r.PartitionKey, b.r.PartitionKey), cmp.Compare(a.key, b.key),
					a.r.EventTime.Compare(b.r.EventTime), bytes.Compare(a.r.SortKey, b.r.SortKey))
			})
			for _, staging := range []bool{false, true} {
				rows := sp.rows(c, buckets, staging)
				k := 0
				for ; rows.Next(); k++ {
					v, _ := rows.Values()
					w := ws[k]
					got, exp := rowText(staging, v), wantText(staging, w.pos, w.r, w.key)
					if got != exp {
						t.Fatalf("maxBytes %d, chunk %d, row %d (staging %v): %s, want %s", maxBytes, i, k, staging, got, exp)
					}
				}
				if rows.Err() != nil || k != len(ws) {
					t.Fatalf("maxBytes %d, chunk %d: %d rows, %v; want %d", maxBytes, i, k, rows.Err(), len(ws))
				}
			}
			next += c.n
			chunks[maxBytes]++
		}
		sp.close()
		if next != 1000 {
			t.Fatalf("maxBytes %d: the chunks hold %d records, want 1000", maxBytes, next)
		}
	}
	for _, maxBytes := range []int{spoolChunkBytes, 2000} {
		check(recs, maxBytes)
	}
	if chunks[2000] <= chunks[spoolChunkBytes] {
		t.Fatalf("%d chunks of at most 2,000 bytes, %d of 64 records: no chunk was sealed for its bytes", chunks[2000], chunks[spoolChunkBytes])
	}
	// In time order, as files and clients mostly send (each bucket's run is in order already).
	inTime := slices.Clone(recs)
	slices.SortStableFunc(inTime, func(a, b routing.Record) int { return a.EventTime.Compare(b.EventTime) })
	check(inTime, spoolChunkBytes)
}

// TestSpoolMerges checks the merge of a request's chunks (spool.merged, the pipelined
// request's one COPY) against an independent sort of the whole request: 3,000 records of 40
// partitions over ten days in random order, then in time order, spooled in chunks of 64
// records (the first 8) or of at most 2,000 bytes, come back once each in the primary key's
// order (partition, bucket key, time, id) with their positions, buckets and bytes, in both
// column shapes; a request of one chunk and an empty one too.
func TestSpoolMerges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	recs := randomRecords(3, 3000, 40, 10, 60)
	inTime := slices.Clone(recs)
	slices.SortStableFunc(inTime, func(a, b routing.Record) int { return a.EventTime.Compare(b.EventTime) })
	for _, tc := range []struct {
		name     string
		recs     []routing.Record
		maxBytes int
		chunks   int // at least
	}{
		{"random order", recs, spoolChunkBytes, 47},
		{"random order, 2,000-byte chunks", recs, 2000, 48},
		{"time order", inTime, spoolChunkBytes, 47},
		{"one chunk", recs[:5], spoolChunkBytes, 1},
		{"empty", nil, spoolChunkBytes, 0},
	} {
		sp := newSpool("t", routing.CalendarDayUTC, 64)
		sp.maxBytes = tc.maxBytes
		go sp.fill(ctx, ctx, &spoolSource{recs: slices.Clone(tc.recs), buckets: map[string]*routing.BucketID{}})
		sp.wait()
		var (
			chunks  []spoolChunk
			buckets []*routing.BucketID
		)
		for i := 0; ; i++ {
			c, b, err := sp.chunk(ctx, i)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			chunks, buckets = append(chunks, c), b
		}
		if len(chunks) < tc.chunks {
			t.Fatalf("%s: %d chunks, want at least %d", tc.name, len(chunks), tc.chunks)
		}
		// The request's records, sorted independently, with their positions.
		var want []string
		for _, staging := range []bool{false, true} {
			want = want[:0]
			type rec struct {
				pos int64
				r   routing.Record
				key string
			}
			var ws []rec
			for p, r := range tc.recs {
				key, _, _ := routing.CalendarDayUTC.Bounds(r.EventTime)
				ws = append(ws, rec{int64(p), r, key})
			}
			slices.SortFunc(ws, func(a, b rec) int {
				return cmp.Or(bytes.Compare(a.r.PartitionKey, b.r.PartitionKey), cmp.Compare(a.key, b.key),
					a.r.EventTime.Compare(b.r.EventTime), bytes.Compare(a.r.SortKey, b.r.SortKey))
			})
			for _, w := range ws {
				want = append(want, wantText(staging, w.pos, w.r, w.key))
			}
			var got []string
			rows := sp.merged(chunks, buckets, staging)
			for rows.Next() {
				v, _ := rows.Values()
				got = append(got, rowText(staging, v))
			}
			if rows.Err() != nil || !slices.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("%s (staging %v): %d rows, %v; want %d; first difference at %d", tc.name, staging, len(got), rows.Err(), len(want), i)
			}
		}
		sp.close()
	}
}

// randomRecords returns n records of the given number of partitions over days days from
// 2024-05-01 in random order (seeded by seed), each with a unique sort key and a value of
// fewer than maxValue bytes.
func randomRecords(seed uint64, n, partitions, days, maxValue int) []routing.Record {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	day := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]routing.Record, n)
	for i := range recs {
		recs[i] = routing.Record{PartitionKey: fmt.Appendf(nil, "p%02d", rng.IntN(partitions)),
			EventTime: day.Add(time.Duration(rng.IntN(days*24*60)) * time.Minute), SortKey: fmt.Appendf(nil, "%d-%d", rng.IntN(1000), i),
			Value: bytes.Repeat([]byte{byte(i)}, rng.IntN(maxValue))}
	}
	return recs
}

// rowText is a spooled row's values (spoolRows or spoolMerge, of the staging table's columns
// when staging) as text, and wantText the text expected of record r at position pos of the
// request in bucket key.
func rowText(staging bool, v []any) string {
	if staging {
		return fmt.Sprintf("%s|%s|%s|%s|%x|%d", v[0], v[1], v[2].(time.Time).Format(time.RFC3339), v[3], v[4], v[5])
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%x", v[0], v[1], v[2], v[3].(time.Time).Format(time.RFC3339), v[4], v[5])
}

func wantText(staging bool, pos int64, r routing.Record, key string) string {
	if staging {
		return fmt.Sprintf("%s|%s|%s|%s|%x|%d", r.PartitionKey, key, r.EventTime.Format(time.RFC3339), r.SortKey, r.Value, pos)
	}
	return fmt.Sprintf("t|%s|%s|%s|%s|%x", r.PartitionKey, key, r.EventTime.Format(time.RFC3339), r.SortKey, r.Value)
}
