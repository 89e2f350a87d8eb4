package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
)

// insertParams builds one parameter batch of evs for `INSERT … VALUES ($1, $2, $3, $4)`:
// channel, timestamp[us, UTC], id and the value text.
func insertParams(evs []event) arrow.RecordBatch {
	schema := arrow.NewSchema([]arrow.Field{{Name: "$1", Type: arrow.BinaryTypes.String}, {Name: "$2", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: "$3", Type: arrow.BinaryTypes.String}, {Name: "$4", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, e := range evs {
		b.Field(0).(*array.StringBuilder).Append(e.channel)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(e.at.UnixMicro()))
		b.Field(2).(*array.StringBuilder).Append(e.id)
		b.Field(3).(*array.StringBuilder).Append(e.want())
	}
	return b.NewRecordBatch()
}

// literalInsert is an INSERT of evs as literal VALUES rows, columns in an order of its own.
func literalInsert(evs []event) string {
	rows := make([]string, len(evs))
	for i, e := range evs {
		rows[i] = fmt.Sprintf("('%s', '%s', TIMESTAMPTZ '%s', '%s')", e.id, e.want(), e.at.Format(time.RFC3339Nano), e.channel)
	}
	return "INSERT INTO events (id, value, timestamp, channel) VALUES " + strings.Join(rows, ", ")
}

// TestInsert runs INSERT over Flight SQL against the assembled server over PostgreSQL and
// SQLite: literal rows through database/sql's ExecContext (CommandStatementUpdate), one row per
// ExecContext with arguments (a prepared update), a prepared INSERT executed with one parameter
// batch of 1,000 rows (IsUpdate true, the count exact), an INSERT sent as a query (executed at
// GetFlightInfo, no endpoint); a bad row in a parameter batch and a duplicate store nothing;
// UPDATE, DELETE, INSERT … SELECT and ON CONFLICT are UNIMPLEMENTED by name. Every row is read
// back through queries and compared with what was sent.
func TestInsert(t *testing.T) {
	for _, store := range []string{"postgres", "sqlite"} {
		t.Run(store, func(t *testing.T) {
			srv := eventsServer(t, store)
			cl := dial(t, srv)
			ctx := context.Background()
			now := time.Now().UTC()
			rng := rand.New(rand.NewPCG(21, uint64(now.UnixNano())))
			db, err := sql.Open("flightsql", "flightsql://"+srv.Addr()+"?timeout=30s")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var stored []event

			lit := makeEvents(rng, 5, "lit", now)
			res, err := db.ExecContext(ctx, literalInsert(lit))
			if err != nil {
				t.Fatal(err)
			}
			if n, err := res.RowsAffected(); err != nil || n != int64(len(lit)) {
				t.Fatalf("literal INSERT affected %d, %v; want %d", n, err, len(lit))
			}
			stored = append(stored, lit...)

			args := makeEvents(rng, 4, "arg", now)
			for _, e := range args {
				res, err := db.ExecContext(ctx, "INSERT INTO events VALUES ($1, $2, $3, $4)", e.channel, e.at, e.id, e.want())
				if err != nil {
					t.Fatal(err)
				}
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					t.Fatalf("INSERT with arguments affected %d, %v", n, err)
				}
			}
			stored = append(stored, args...)

			stmt, err := cl.Prepare(ctx, "INSERT INTO events (channel, timestamp, id, value) VALUES (?, ?, ?, ?)")
			if err != nil {
				t.Fatal(err)
			}
			defer stmt.Close(ctx)
			if u, ok := stmt.IsUpdate(); !ok || !u {
				t.Fatalf("prepared INSERT: is_update = %v (set %v)", u, ok)
			}
			batch := makeEvents(rng, 1000, "batch", now)
			params := insertParams(batch)
			stmt.SetParameters(params)
			params.Release()
			if n, err := stmt.ExecuteUpdate(ctx); err != nil || n != int64(len(batch)) {
				t.Fatalf("prepared INSERT of a 1,000-row batch = %d, %v", n, err)
			}
			stored = append(stored, batch...)

			asQuery := makeEvents(rng, 2, "query", now)
			info, err := cl.Execute(ctx, literalInsert(asQuery))
			if err != nil || len(info.Endpoint) != 0 {
				t.Fatalf("INSERT as a query: %v endpoints, %v", len(info.GetEndpoint()), err)
			}
			stored = append(stored, asQuery...)
			sameEvents(t, "after the inserts", readEvents(t, cl, now), stored)

			// Refused: a bad row in the middle of a batch, a duplicate; nothing of either stored.
			bad := makeEvents(rng, 1000, "bad", now)
			bad[500].at = now.Add(96 * time.Hour).Truncate(time.Microsecond)
			params = insertParams(bad)
			stmt.SetParameters(params)
			params.Release()
			_, err = stmt.ExecuteUpdate(ctx)
			wantCode(t, "a batch with a row outside the window", err, codes.InvalidArgument, "record 500")
			params = insertParams(append(makeEvents(rng, 10, "dup", now), batch[7]))
			stmt.SetParameters(params)
			params.Release()
			_, err = stmt.ExecuteUpdate(ctx)
			wantCode(t, "a batch with a stored row", err, codes.AlreadyExists, "row 10 of the request")
			// A literal row whose value is not JSON (the table's values are: JSONValues).
			nj := makeEvents(rng, 3, "nj", now)
			text := strings.Replace(literalInsert(nj), nj[2].want(), "secret not json", 1)
			_, err = db.ExecContext(ctx, text)
			if err == nil || !strings.Contains(err.Error(), "record 2's value is not JSON") || strings.Contains(err.Error(), "secret") {
				t.Fatalf("INSERT of a value that is not JSON: %v", err)
			}
			for sqlText, want := range map[string]string{
				"UPDATE events SET value = 'x' WHERE channel = 'alpha'": "UPDATE",
				"DELETE FROM events WHERE channel = 'alpha'":            "DELETE",
				"INSERT INTO events SELECT * FROM events WHERE channel = 'alpha' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'": "INSERT … SELECT",
				literalInsert(makeEvents(rng, 1, "conflict", now)) + " ON CONFLICT DO NOTHING":                                               "ON CONFLICT",
			} {
				_, err := cl.ExecuteUpdate(ctx, sqlText)
				wantCode(t, want, err, codes.Unimplemented, want)
			}
			_, err = cl.ExecuteUpdate(ctx, "SELECT count(*) FROM events WHERE channel = 'alpha' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'")
			wantCode(t, "a query as an update", err, codes.InvalidArgument, "is a query")
			sameEvents(t, "after the refused inserts", readEvents(t, cl, now), stored)
		})
	}
}
