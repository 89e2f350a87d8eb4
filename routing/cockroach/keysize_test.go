package cockroach_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/cockroach"
)

// TestKeysAtTheLimit: a record whose partition key and id take routing.MaxKeyBytes together
// (with a table id and bucket key of ordinary length) is stored and read back by PostgreSQL,
// whose primary key index holds entries of at most 2,704 bytes; one byte more is
// ErrInvalidRecord before any statement (trial 32 F6: 54000 from the index, INTERNAL).
func TestKeysAtTheLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := migrated(t, cockroach.Config{})
	start := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	// Keys that do not compress: PostgreSQL compresses long index entries that repeat.
	pks := []byte(strings.Repeat("p", 1024))
	for i := range pks {
		pks[i] = byte('A' + (i*104729+i/13)%26)
	}
	ids := []byte(strings.Repeat("i", routing.MaxKeyBytes-len(pks)))
	for i := range ids {
		ids[i] = byte('a' + (i*7919+i/26)%26)
	}
	b := routing.BucketFor("flightsrv.test.a-table-id-of-some-length", pks, routing.CalendarMonthUTC, start)
	r := routing.Record{PartitionKey: pks, EventTime: start.Add(time.Hour), SortKey: ids, Value: []byte("{}")}
	if err := s.Append(ctx, b, []routing.Record{r}); err != nil {
		t.Fatalf("keys of %d bytes: %v", routing.MaxKeyBytes, err)
	}
	var n int
	if err := s.Pool().QueryRow(ctx, "SELECT count(*) FROM pulpitum_v4_records WHERE sort_key = $1", ids).Scan(&n); err != nil || n != 1 {
		t.Fatalf("stored %d records (%v), want 1", n, err)
	}
	r.SortKey = append(ids, 'x')
	r.EventTime = start.Add(2 * time.Hour)
	if err := s.Append(ctx, b, []routing.Record{r}); !errors.Is(err, routing.ErrInvalidRecord) {
		t.Fatalf("keys of %d bytes: %v, want ErrInvalidRecord", routing.MaxKeyBytes+1, err)
	}
}
