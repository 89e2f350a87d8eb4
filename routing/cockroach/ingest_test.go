package cockroach_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestIngestPipelined runs the conformance test of whole write requests with PostgreSQL's
// pipelined requests moved four records at a time: each of its refusals (duplicates, a bucket
// being archived, a source failing, a record outside the window) then comes after several
// moves inside the request's transaction, and must still store nothing.
func TestIngestPipelined(t *testing.T) {
	cockroach.SetIngestMoveRows(t, 4)
	storetest.RunIngest(t, func(t *testing.T) storetest.Store { return migrated(t, cockroach.Config{MaxConns: 4}) })
}

// moveCounter is a pgx.QueryTracer and pgx.CopyFromTracer counting the pipelined moves
// completed: each is one COPY into pulpitum_v4_records, counted when it ends without error.
type moveCounter struct{ moves atomic.Int64 }

func (m *moveCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (m *moveCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

type moveTable struct{}

func (m *moveCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	return context.WithValue(ctx, moveTable{}, slices.Equal(d.TableName, pgx.Identifier{"pulpitum_v4_records"}))
}

func (m *moveCounter) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromEndData) {
	if records, _ := ctx.Value(moveTable{}).(bool); records && d.Err == nil {
		m.moves.Add(1)
	}
}

// afterMoves is a routing.RecordSource yielding head's batches, then waiting until moves has
// counted at least two moves of the request, then yielding tail's batches and failing with
// fail (when set).
type afterMoves struct {
	head, tail [][]routing.Record
	moves      *moveCounter
	base       int64
	fail       error
	waited     bool
	// then, when set, runs once the moves are counted, before the tail is yielded.
	then func() error
}

func (a *afterMoves) Next(ctx context.Context) ([]routing.Record, error) {
	if len(a.head) > 0 {
		b := a.head[0]
		a.head = a.head[1:]
		return b, nil
	}
	if !a.waited {
		a.waited = true
		deadline := time.Now().Add(30 * time.Second)
		for a.moves.moves.Load()-a.base < 2 {
			if time.Now().After(deadline) {
				return nil, errors.New("test: the store moved nothing while the source was read")
			}
			time.Sleep(5 * time.Millisecond)
		}
		if a.then != nil {
			if err := a.then(); err != nil {
				return nil, err
			}
		}
	}
	if len(a.tail) > 0 {
		b := a.tail[0]
		a.tail = a.tail[1:]
		return b, nil
	}
	if a.fail != nil {
		return nil, a.fail
	}
	return nil, io.EOF
}

// TestIngestFailsAfterMoves checks the all-or-nothing rule where pipelining could break it:
// a request whose first chunks were moved into pulpitum_v4_records (inside its transaction)
// and which then fails — its client breaks off, it repeats one of its own records, it
// repeats a stored record — leaves the tables exactly as before (rows and metadata rows
// counted with SQL), and a duplicate is named by its position; then the same rows without the
// fault are all stored.
func TestIngestFailsAfterMoves(t *testing.T) {
	cockroach.SetIngestMoveRows(t, 4)
	mc := &moveCounter{}
	s := migrated(t, cockroach.Config{MaxConns: 4, Tracer: mc})
	ctx := context.Background()
	now := time.Date(2024, 5, 10, 12, 0, 0, 0, time.UTC)
	def := routing.TableDef{Name: "moves", TableID: "t.moves", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 5}
	table, err := routing.NewDurableTable(def, s, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 5, 9, 0, 0, 0, 0, time.UTC)
	// batch i: four records of partition p<i> (a bucket of its own), ids i-0 … i-3, values of
	// 30,000 bytes or so (a chunk of the spool then goes to its file in several writes).
	batch := func(i int) []routing.Record {
		out := make([]routing.Record, 4)
		for k := range out {
			out[k] = routing.Record{PartitionKey: fmt.Appendf(nil, "p%d", i), EventTime: day.Add(time.Duration(k) * time.Minute),
				SortKey: fmt.Appendf(nil, "%d-%d", i, k), Value: fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", 30000+i*100+k))}
		}
		return out
	}
	stored := routing.Record{PartitionKey: []byte("p7"), EventTime: day.Add(2 * time.Minute), SortKey: []byte("7-2"), Value: []byte(`{}`)}
	if n, err := table.Ingest(ctx, &afterMovesSlice{recs: []routing.Record{stored}}); err != nil || n != 1 {
		t.Fatalf("storing one record: %d, %v", n, err)
	}
	counts := func() (records, buckets int64) {
		t.Helper()
		if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM pulpitum_v4_records), (SELECT count(*) FROM pulpitum_v4_bucket_metadata)`).Scan(&records, &buckets); err != nil {
			t.Fatal(err)
		}
		return records, buckets
	}
	r0, b0 := counts()
	head := func() [][]routing.Record { return [][]routing.Record{batch(0), batch(1), batch(2)} }
	errGone := errors.New("test: the client went away")
	for _, tc := range []struct {
		name   string
		src    *afterMoves
		target error
		dupAt  int64
	}{
		{"client gone", &afterMoves{head: head(), tail: [][]routing.Record{batch(3)}, fail: errGone}, errGone, -1},
		{"duplicate inside the request", &afterMoves{head: head(), tail: [][]routing.Record{batch(3), {batch(1)[2]}}}, routing.ErrDuplicateRecord, 16},
		{"duplicate of a stored record", &afterMoves{head: head(), tail: [][]routing.Record{batch(3), batch(4), batch(7)}}, routing.ErrDuplicateRecord, 22},
	} {
		tc.src.moves, tc.src.base = mc, mc.moves.Load()
		n, err := table.Ingest(ctx, tc.src)
		if !errors.Is(err, tc.target) || n != 0 {
			t.Fatalf("%s: ingest = %d, %v; want 0, %v", tc.name, n, err, tc.target)
		}
		if moved := mc.moves.Load() - tc.src.base; moved < 2 {
			t.Fatalf("%s: %d moves before the fault, want at least 2", tc.name, moved)
		}
		var dup *routing.DuplicateRecordError
		if tc.dupAt >= 0 && (!errors.As(err, &dup) || dup.Record != tc.dupAt) {
			t.Fatalf("%s: %v, want the duplicate named as record %d", tc.name, err, tc.dupAt)
		}
		if r, b := counts(); r != r0 || b != b0 {
			t.Fatalf("%s: %d records and %d metadata rows after the refusal, want %d and %d", tc.name, r, b, r0, b0)
		}
	}
	// The request succeeds after a serialization failure met after its first moves: its tail
	// touches p7's bucket, whose metadata row another transaction updates (a new version, the
	// state unchanged) after the request's snapshot, so creating or locking it fails with
	// 40001; the retry copies every spooled record again (more moves than chunks) and stores
	// each once.
	bump := func() error {
		_, err := s.Pool().Exec(ctx, `UPDATE pulpitum_v4_bucket_metadata SET bucket_end = bucket_end WHERE partition_key = 'p7'`)
		return err
	}
	p7 := batch(7)[:2]
	src := &afterMoves{head: head(), tail: [][]routing.Record{batch(3), batch(4), p7}, moves: mc, base: mc.moves.Load(), then: bump}
	if n, err := table.Ingest(ctx, src); err != nil || n != 22 {
		t.Fatalf("ingest with a serialization failure = %d, %v; want 22", n, err)
	}
	// Chunks of 4 after a first chunk of 1 (SetIngestMoveRows): 22 records make 7 chunks.
	if moved := mc.moves.Load() - src.base; moved <= 7 {
		t.Fatalf("%d moves for a request of 7 chunks: no retry was seen", moved)
	}
	if r, b := counts(); r != r0+22 || b != b0+5 {
		t.Fatalf("%d records and %d metadata rows after the ingest, want %d and %d", r, b, r0+22, b0+5)
	}
	// Every stored value is the one sent, byte for byte (through the spool's file).
	var want, got []string
	for _, recs := range append(head(), batch(3), batch(4), p7[:2], []routing.Record{stored}) {
		for _, r := range recs {
			want = append(want, fmt.Sprintf("%s/%s/%s/%x", r.PartitionKey, r.EventTime.Format(time.RFC3339), r.SortKey, sha256.Sum256(r.Value)))
		}
	}
	rows, err := s.Pool().Query(ctx, `SELECT partition_key, event_time, sort_key, value FROM pulpitum_v4_records ORDER BY partition_key, event_time, sort_key`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pk, sk, v []byte
		var at time.Time
		if err := rows.Scan(&pk, &at, &sk, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s/%s/%s/%x", pk, at.UTC().Format(time.RFC3339), sk, sha256.Sum256(v)))
	}
	if rows.Err() != nil || !slices.Equal(got, want) {
		t.Fatalf("stored records differ from those sent (%v):\n got %q\nwant %q", rows.Err(), got, want)
	}
}

// afterMovesSlice is a routing.RecordSource of one batch.
type afterMovesSlice struct {
	recs []routing.Record
	done bool
}

func (a *afterMovesSlice) Next(context.Context) ([]routing.Record, error) {
	if a.done {
		return nil, io.EOF
	}
	a.done = true
	return a.recs, nil
}
