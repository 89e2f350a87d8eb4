package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/flightsrv/flightsrv/routing"
)

// AppendStream writes a whole write request behind the write fence (routing.HotStore;
// docs/pulpitum-v4.md §3.1) in one IMMEDIATE transaction: the strategy is checked
// (routing.ErrStrategyMismatch); as src's records stream, each bucket seen for the first time
// gets its metadata row if absent and must be hot (routing.ErrBucketReadOnly), and every record
// is inserted with one prepared statement (a routing.DuplicateRecordError naming the record's
// position on an existing or repeated (event_time, sort_key)). The transaction holds SQLite's write lock while the client
// sends: other writers (appends, the archiver) wait for it up to their busy timeout. It
// returns the records stored: all of them, or 0 with nothing written (src's errors
// unchanged). Memory: one batch of src. Other errors as for Append.
func (s *Store) AppendStream(ctx context.Context, tableID string, strategy routing.Strategy, src routing.IngestSource) (int64, error) {
	const op = "ingest"
	var stored int64
	err := s.inTx(ctx, op, func(ctx context.Context, tx *sql.Tx) error {
		stored = 0
		if err := s.fenceTable(ctx, tx, tableID, strategy); err != nil {
			return err
		}
		insert, err := tx.PrepareContext(ctx, sqlInsertRecord)
		if err != nil {
			return err
		}
		defer insert.Close()
		seen := map[*routing.BucketID]struct{}{}
		for {
			batch, err := src.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return keep(err)
			}
			for i := range batch.Records {
				b := batch.Buckets[i]
				if _, ok := seen[b]; !ok {
					if b.TableID != tableID || b.Strategy != strategy {
						return keep(fmt.Errorf("%w: a record's bucket is not of the request's table", routing.ErrInvalidRecord))
					}
					if err := s.fenceBucket(ctx, tx, *b); err != nil {
						return err
					}
					seen[b] = struct{}{}
				}
				if err := s.insertRecord(ctx, insert, *b, &batch.Records[i]); err != nil {
					if errors.Is(err, routing.ErrDuplicateRecord) {
						return keep(&routing.DuplicateRecordError{Record: stored})
					}
					return err
				}
				stored++
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return stored, nil
}
