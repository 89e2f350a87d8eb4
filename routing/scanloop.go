package routing

import (
	"context"
	"fmt"
	"time"
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

// RouteRecords collects the rows of a hot store's ReadRange statement, which returns the
// bucket's route on every row and a record on the rows that have one (docs/pulpitum-v4.md
// §3.2: a CTE for the route, a LEFT JOIN LATERAL for the hot rows). The zero value is ready.
type RouteRecords struct {
	route Route
	seen  bool
	recs  []Record
}

// Add takes one row: route decodes its route columns (called for the first row only); hasRecord
// says whether the row holds a record, eventTime, sortKey and value being its columns (a nil
// value is an empty one). A record of an archived bucket is an error wrapping
// ErrOperationFailed (op names the operation).
func (c *RouteRecords) Add(op string, route func() (Route, error), hasRecord bool, eventTime time.Time, sortKey, value []byte) error {
	if !c.seen {
		r, err := route()
		if err != nil {
			return err
		}
		c.route, c.seen = r, true
	}
	if !hasRecord {
		return nil
	}
	if c.route.State == StateArchived {
		return fmt.Errorf("%w: %s: archived bucket returned hot rows", ErrOperationFailed, op)
	}
	if value == nil {
		value = []byte{}
	}
	c.recs = append(c.recs, Record{EventTime: eventTime, SortKey: sortKey, Value: value})
	return nil
}

// Done returns the route and the records, whose partition key is set to pk; a statement that
// returned no row is an error wrapping ErrOperationFailed.
func (c *RouteRecords) Done(op string, pk []byte) (Route, []Record, error) {
	if !c.seen {
		return Route{}, nil, fmt.Errorf("%w: %s: no route row", ErrOperationFailed, op)
	}
	SetPartitionKeys(c.recs, pk)
	return c.route, c.recs, nil
}
