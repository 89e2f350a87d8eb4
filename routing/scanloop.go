package routing

import (
	"context"
	"fmt"
)

// ScanRows is the open result of a hot store's scan statement (pgx.Rows, *sql.Rows): the
// part the shared row loop uses.
type ScanRows interface {
	Next() bool
	Err() error
}

// ScanContextCheckRows is how often, in rows, the hot stores' scan readers check their
// statement's context between rows (house style: checkContextEveryNIterations).
const ScanContextCheckRows = 4096

// ScanLoop is the row loop of a hot store's ScanRange reader, shared by both adapters: it is
// embedded next to ScanReaderState and remembers a row read but left for the next batch.
type ScanLoop struct {
	pending bool // the current row was read but belongs to the next batch
	seen    int  // data rows read
}

// Fill reads the rows of a scan statement into r's batch builder until a batch is full or the
// rows end, and reports whether a batch is ready in r.Cur (adding its rows to stats'
// HotRows when stats is not nil); false with r.Err() nil is the end. ctx is the statement's
// context, checked first and every ScanContextCheckRows rows. For each new row, onRow decodes
// it into the adapter's scratch; appendRow then appends it to r.BB, or reports full (nothing
// appended) when the batch has no room for it: the row stays pending and starts the next
// batch. At the end of the rows the statement is stopped (r's stop). Errors of rows and of
// the context go through classify; errors of onRow and appendRow end the read as they are.
// The caller has dropped the previous batch (DropCurrent) and checked the statement is open.
func (l *ScanLoop) Fill(ctx context.Context, r *ScanReaderState, rows ScanRows, stats *ReadStats, classify func(error) error,
	onRow func() error, appendRow func() (full bool, err error)) bool {
	if err := ctx.Err(); err != nil {
		return r.Fail(classify(err))
	}
	for {
		if !l.pending {
			if !rows.Next() {
				err := rows.Err()
				r.stop()
				if err != nil {
					return r.Fail(classify(err))
				}
				break
			}
			l.seen++
			if l.seen%ScanContextCheckRows == 0 {
				if err := ctx.Err(); err != nil {
					return r.Fail(classify(err))
				}
			}
			if err := onRow(); err != nil {
				return r.Fail(err)
			}
			l.pending = true
		}
		full, err := appendRow()
		if err != nil {
			return r.Fail(err)
		}
		if full {
			break
		}
		l.pending = false
	}
	r.Cur = r.BB.Flush()
	if r.Cur == nil {
		return false
	}
	if stats != nil {
		stats.HotRows.Add(r.Cur.NumRows())
	}
	return true
}

// EndArchivedScan ends a scan statement whose route row said archived: the records' arm of
// the statement must be empty. It stops the statement (stop) and returns nil, or an error
// wrapping ErrOperationFailed when hot rows came back, or rows' error through classify.
func EndArchivedScan(rows ScanRows, stop func(), classify func(error) error) error {
	more := rows.Next()
	err := rows.Err()
	stop()
	switch {
	case more:
		return fmt.Errorf("%w: scan bucket range: archived bucket returned hot rows", ErrOperationFailed)
	case err != nil:
		return classify(err)
	}
	return nil
}
