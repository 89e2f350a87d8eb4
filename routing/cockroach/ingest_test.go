package cockroach_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
	"github.com/flightsrv/flightsrv/routing/storetest"
)

// TestIngestPipelined runs the conformance test of whole write requests with PostgreSQL's
// pipelined requests spooled four records a chunk: each of its refusals (duplicates, a bucket
// being archived, a source failing, a record outside the window) then comes after several
// chunks were fenced (their buckets' metadata rows created and locked) inside the request's
// transaction, or in the merged COPY of many chunks, and must still store nothing.
func TestIngestPipelined(t *testing.T) {
	cockroach.SetIngestChunkRows(t, 4)
	storetest.RunIngest(t, func(t *testing.T) storetest.Store { return migrated(t, cockroach.Config{MaxConns: 4}) })
}

// moveCounter is a pgx.QueryTracer and pgx.CopyFromTracer counting, for a pipelined
// request, the chunks fenced (moves: each statement that locked the metadata rows of a
// chunk's new buckets, counted when it ends without error; the chunk's records wait in the
// spool for the request's one COPY) and the COPYs into pulpitum_v4_records begun (copies).
type moveCounter struct{ moves, copies atomic.Int64 }

type lockStatement struct{}

func (m *moveCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, lockStatement{}, strings.Contains(d.SQL, "FOR SHARE OF m"))
}

func (m *moveCounter) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if lock, _ := ctx.Value(lockStatement{}).(bool); lock && d.Err == nil {
		m.moves.Add(1)
	}
}

func (m *moveCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	if slices.Equal(d.TableName, pgx.Identifier{"pulpitum_v4_records"}) {
		m.copies.Add(1)
	}
	return ctx
}

func (m *moveCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// afterMoves is a routing.RecordSource yielding head's batches, then waiting until moves has
// counted at least two fenced chunks of the request, then yielding tail's batches and failing
// with fail (when set).
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
				return nil, errors.New("test: the store fenced no chunk while the source was read")
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
// a request whose first chunks were fenced (their buckets' metadata rows created and locked
// inside its transaction) and which then fails — its client breaks off, it repeats one of its
// own records, it repeats a stored record — leaves the tables exactly as before (rows and
// metadata rows counted with SQL), and a duplicate is named by its position; then the same
// rows without the fault are all stored, by one COPY of the merged chunks per attempt.
func TestIngestFailsAfterMoves(t *testing.T) {
	cockroach.SetIngestChunkRows(t, 4)
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
			t.Fatalf("%s: %d chunks fenced before the fault, want at least 2", tc.name, moved)
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
	// 40001; the retry fences every spooled chunk again (more chunks fenced than the request
	// has: each of its chunks brings a new bucket) and stores each record once, in one COPY.
	bump := func() error {
		_, err := s.Pool().Exec(ctx, `UPDATE pulpitum_v4_bucket_metadata SET bucket_end = bucket_end WHERE partition_key = 'p7'`)
		return err
	}
	p7 := batch(7)[:2]
	src := &afterMoves{head: head(), tail: [][]routing.Record{batch(3), batch(4), p7}, moves: mc, base: mc.moves.Load(), then: bump}
	copies := mc.copies.Load()
	if n, err := table.Ingest(ctx, src); err != nil || n != 22 {
		t.Fatalf("ingest with a serialization failure = %d, %v; want 22", n, err)
	}
	// Chunks of 4 after a first chunk of 1 (SetIngestChunkRows): 22 records make 7 chunks.
	if moved := mc.moves.Load() - src.base; moved <= 7 {
		t.Fatalf("%d chunks fenced for a request of 7 chunks: no retry was seen", moved)
	}
	if c := mc.copies.Load() - copies; c != 1 {
		t.Fatalf("%d COPYs into pulpitum_v4_records, want 1 (the retried attempt's; the first failed before its COPY)", c)
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

// TestIngestForeignKeyCheck checks when a pipelined request omits the foreign key's per-row
// check (its COPYs bracketed by SET LOCAL session_replication_role) and that the rows it
// stores satisfy the foreign key anyway: as a superuser it omits it; as a role that may not
// set session_replication_role it does not, and does once SET is granted on the parameter;
// with a trigger of the deployment's on pulpitum_v4_records it does not, and the trigger sees
// every row. Finally PostgreSQL validates the foreign key against every stored row (the
// constraint dropped and added again), which an orphan row makes it refuse.
func TestIngestForeignKeyCheck(t *testing.T) {
	cockroach.SetIngestChunkRows(t, 4)
	ctx := context.Background()
	srv := pgtest.Start(t)
	dbURL := srv.NewDatabase(t)
	adminRec := &recorder{}
	admin := migrated(t, cockroach.Config{URL: dbURL, Tracer: adminRec})
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Pool().Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	role := fmt.Sprintf("flightsrv_ingest_fk_%d", os.Getpid())
	exec(`CREATE ROLE ` + role + ` LOGIN`)
	t.Cleanup(func() {
		_, _ = admin.Pool().Exec(ctx, `DROP OWNED BY `+role)
		_, _ = admin.Pool().Exec(ctx, `DROP ROLE `+role)
	})
	exec(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ` + role)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	roleRec := &recorder{}
	asRole := openStore(t, cockroach.Config{URL: u.String(), Tracer: roleRec})

	now := time.Date(2024, 5, 10, 12, 0, 0, 0, time.UTC)
	def := routing.TableDef{Name: "fk", TableID: "t.fk", PartitionColumn: "p", Strategy: routing.CalendarDayUTC, WritableBuckets: 5}
	var total int64
	// ingest writes 10 records of three partitions (three chunks) through st, and says
	// whether the request set session_replication_role.
	ingest := func(name string, st *cockroach.Store, rec *recorder) bool {
		t.Helper()
		table, err := routing.NewDurableTable(def, st, nil, routing.Options{Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		var recs []routing.Record
		for k := range 10 {
			recs = append(recs, routing.Record{PartitionKey: fmt.Appendf(nil, "p%d", k%3), EventTime: now.Add(-time.Duration(k) * time.Hour),
				SortKey: fmt.Appendf(nil, "%s-%d", name, k), Value: []byte(`{}`)})
		}
		rec.take()
		if n, err := table.Ingest(ctx, &afterMovesSlice{recs: recs}); err != nil || n != 10 {
			t.Fatalf("%s: ingest = %d, %v; want 10", name, n, err)
		}
		total += 10
		return slices.ContainsFunc(rec.take(), func(s string) bool { return strings.HasPrefix(s, "SET LOCAL session_replication_role = replica") })
	}
	if !ingest("superuser", admin, adminRec) {
		t.Fatal("superuser: the foreign key's check was not omitted")
	}
	if ingest("role", asRole, roleRec) {
		t.Fatal("role without SET on session_replication_role: the check was omitted")
	}
	exec(`GRANT SET ON PARAMETER session_replication_role TO ` + role)
	if !ingest("granted", asRole, roleRec) {
		t.Fatal("role granted SET on session_replication_role: the check was not omitted")
	}
	exec(`CREATE TABLE ingest_audit (n INT)`)
	exec(`CREATE FUNCTION ingest_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ingest_audit VALUES (1); RETURN NULL; END $$`)
	exec(`CREATE TRIGGER ingest_audit AFTER INSERT ON pulpitum_v4_records FOR EACH ROW EXECUTE FUNCTION ingest_audit()`)
	if ingest("trigger", admin, adminRec) {
		t.Fatal("with a trigger of the deployment's: the check was omitted")
	}
	var audited, stored int64
	if err := admin.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM ingest_audit), (SELECT count(*) FROM pulpitum_v4_records)`).Scan(&audited, &stored); err != nil {
		t.Fatal(err)
	}
	if audited != 10 || stored != total {
		t.Fatalf("the trigger saw %d rows (want 10); %d rows stored (want %d)", audited, stored, total)
	}
	exec(`DROP TRIGGER ingest_audit ON pulpitum_v4_records`)
	const refk = `ALTER TABLE pulpitum_v4_records DROP CONSTRAINT pulpitum_v4_records_bucket_fk,
ADD CONSTRAINT pulpitum_v4_records_bucket_fk FOREIGN KEY (table_id, partition_key, bucket_key)
	REFERENCES pulpitum_v4_bucket_metadata (table_id, partition_key, bucket_key)`
	exec(refk)
	// The control: an orphan row, written with the triggers off, fails the same validation.
	tx, err := admin.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO pulpitum_v4_records VALUES ('t.fk', 'p9', 'day:2024-05-10', now(), 'x', '{}')`); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	if _, err := tx.Exec(ctx, refk); !errors.As(err, &pgErr) || pgErr.Code != "23503" {
		t.Fatalf("validating the foreign key over an orphan row: %v, want SQLSTATE 23503", err)
	}
}
