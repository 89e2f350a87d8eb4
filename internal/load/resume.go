package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// ErrPartlyLoaded is returned by Resumable for a file some of whose records are stored and
// some not (rows deleted since it was loaded, or another file holding some of its rows): the
// load of such a file is refused before anything is written, naming the first bucket that
// conflicts.
var ErrPartlyLoaded = errors.New("load: the file is partly loaded")

// Outcome says what Resumable did with a file.
type Outcome int

const (
	// Loaded: the file was written, all of it, in one request.
	Loaded Outcome = iota
	// Skipped: the file was already loaded (see Resumable's rule); nothing was written.
	Skipped
)

// Resumable loads the file at path into t like File (one all-or-nothing request), unless it is
// already loaded, so that a load of many files started again goes on where it stopped. The
// rule, cheap next to the load itself (a point read, then one count per bucket the file
// touches, never a lookup per row):
//
//   - The file's first record (partition, time, id) is looked up. Absent: the file is loaded.
//     If that request is refused because some record is already stored
//     (routing.ErrDuplicateRecord), the file is surveyed as below and refused as partly
//     loaded.
//   - Present: the file is read once more without writing (the survey): for every bucket its
//     records fall into, their number and time span. Each bucket is then counted in the table
//     within that span (routing.DurableTable.CountBucket: hot or archived). If every bucket
//     holds at least the file's number of records there, and the last record is stored too,
//     the file is already loaded and is skipped (Outcome Skipped, Stats.Read the records
//     surveyed, Stats.Appended 0).
//   - Otherwise the file is refused with ErrPartlyLoaded naming the first bucket, in the
//     order the file reaches them, that holds fewer of the span's records than the file has,
//     by its bucket key and the file's first row in it (counted from 0), never a value.
//
// Since `load` writes a file all or nothing, a file is either wholly stored or absent, and the
// rule tells the two apart. Counting stands in for comparing keys: it cannot see a record
// deleted from a span that records of another file fill as well (files whose rows interleave
// in time within one partition); the first and last records are compared by key.
func Resumable(ctx context.Context, t *routing.DurableTable, path string, m Mapping) (Stats, Outcome, error) {
	first, err := firstRecord(ctx, path, m)
	if err != nil {
		return Stats{}, Loaded, err
	}
	if first == nil { // an empty file: nothing to load or to skip
		st, err := File(ctx, t, path, m)
		return st, Loaded, err
	}
	stored, err := isStored(ctx, t, *first)
	if err != nil {
		return Stats{}, Loaded, err
	}
	if !stored {
		st, err := File(ctx, t, path, m)
		if err != nil && errors.Is(err, routing.ErrDuplicateRecord) {
			sv, serr := survey(ctx, t, path, m)
			if serr != nil {
				return st, Loaded, errors.Join(err, serr)
			}
			return st, Loaded, sv.refusal(ctx, t, err)
		}
		return st, Loaded, err
	}
	sv, err := survey(ctx, t, path, m)
	if err != nil {
		return Stats{}, Loaded, err
	}
	if err := sv.refusal(ctx, t, nil); err != nil {
		return Stats{Read: sv.rows}, Loaded, err
	}
	return Stats{Read: sv.rows}, Skipped, nil
}

// firstRecord returns the file's first record, or nil when it has none.
func firstRecord(ctx context.Context, path string, m Mapping) (*routing.Record, error) {
	src, conv, err := openConverted(ctx, path, surveyMapping(m))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	fs := &fileSource{src: src, conv: conv}
	recs, err := fs.Next(ctx)
	if err == io.EOF || (err == nil && len(recs) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := recs[0]
	return &r, nil
}

// surveyMapping is m for reading keys only: the value encodes the time column alone (the
// survey and the probes never look at values) and progress is not reported.
func surveyMapping(m Mapping) Mapping {
	m.Payload, m.Value, m.Progress = "", []string{m.Time}, nil
	return m
}

// openConverted opens the source file at path with a converter for m.
func openConverted(ctx context.Context, path string, m Mapping) (recordSource, *Converter, error) {
	src, err := openSource(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	conv, err := NewConverter(src.Schema(), m)
	if err != nil {
		src.Close()
		return nil, nil, err
	}
	return src, conv, nil
}

// isStored reports whether t holds a record with r's partition key, event time (to the
// microsecond) and id.
func isStored(ctx context.Context, t *routing.DurableTable, r routing.Record) (bool, error) {
	at := routing.NormalizeTime(r.EventTime)
	q := routing.Query{PartitionKey: r.PartitionKey, Range: routing.TimeRange{Start: at, End: at.Add(time.Microsecond)}, Limit: 1000}
	for {
		page, err := t.QueryPage(ctx, q)
		if err != nil {
			return false, err
		}
		for _, s := range page.Records {
			if bytes.Equal(s.SortKey, r.SortKey) {
				return true, nil
			}
		}
		if page.Next == nil {
			return false, nil
		}
		q.After = page.Next
	}
}

// bucketSpan is what the survey knows of one bucket: the file's records in it, their time span
// and the file's first row in it.
type bucketSpan struct {
	b        routing.BucketID
	n        uint64
	lo, hi   time.Time
	firstRow int64
}

// fileSurvey is the per-bucket summary of a file (survey).
type fileSurvey struct {
	spans []*bucketSpan // in the order the file reaches them
	first routing.Record
	last  routing.Record
	rows  int64
}

// survey reads the file at path without writing and summarises its records by bucket of t.
func survey(ctx context.Context, t *routing.DurableTable, path string, m Mapping) (*fileSurvey, error) {
	src, conv, err := openConverted(ctx, path, surveyMapping(m))
	if err != nil {
		return nil, err
	}
	defer src.Close()
	def := t.Def()
	fs := &fileSource{src: src, conv: conv}
	sv := &fileSurvey{}
	byKey := map[string]*bucketSpan{}
	var cur *bucketSpan
	for {
		recs, err := fs.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range recs {
			r := &recs[i]
			at := routing.NormalizeTime(r.EventTime)
			if cur == nil || !bytes.Equal(cur.b.PartitionKey, r.PartitionKey) || !cur.b.Range().Contains(at) {
				b := routing.BucketFor(def.TableID, r.PartitionKey, def.Strategy, at)
				if cur = byKey[b.CacheKey()]; cur == nil {
					b.PartitionKey = bytes.Clone(b.PartitionKey)
					cur = &bucketSpan{b: b, lo: at, hi: at, firstRow: sv.rows}
					byKey[b.CacheKey()] = cur
					sv.spans = append(sv.spans, cur)
				}
			}
			cur.n++
			if at.Before(cur.lo) {
				cur.lo = at
			}
			if at.After(cur.hi) {
				cur.hi = at
			}
			if sv.rows == 0 {
				sv.first = routing.Record{PartitionKey: r.PartitionKey, EventTime: at, SortKey: r.SortKey}
			}
			sv.rows++
		}
		l := recs[len(recs)-1]
		sv.last = routing.Record{PartitionKey: l.PartitionKey, EventTime: l.EventTime, SortKey: l.SortKey}
	}
	return sv, nil
}

// refusal checks the survey against t: nil when every bucket holds at least the file's records
// in their span and the first and last records are stored (the file is loaded), otherwise
// ErrPartlyLoaded naming the first bucket that falls short (joined with cause, the refusal of
// the load that found a stored record, when there was one).
func (sv *fileSurvey) refusal(ctx context.Context, t *routing.DurableTable, cause error) error {
	if sv.rows == 0 {
		return cause
	}
	for _, s := range sv.spans {
		c, _, err := t.CountBucket(ctx, s.b, routing.TimeRange{Start: s.lo, End: s.hi.Add(time.Microsecond)})
		if err != nil {
			return err
		}
		if c < s.n {
			return sv.partly(s, fmt.Sprintf("holds %d of the file's %d records in their time span", c, s.n), cause)
		}
	}
	for _, r := range []routing.Record{sv.first, sv.last} {
		ok, err := isStored(ctx, t, r)
		if err != nil {
			return err
		}
		if !ok {
			for _, s := range sv.spans {
				if bytes.Equal(s.b.PartitionKey, r.PartitionKey) && s.b.Range().Contains(r.EventTime) {
					return sv.partly(s, "lacks the file's first or last record", cause)
				}
			}
		}
	}
	return cause
}

// partly is ErrPartlyLoaded for bucket s (its key and the file's first row in it, no value).
func (sv *fileSurvey) partly(s *bucketSpan, why string, cause error) error {
	err := fmt.Errorf("%w: bucket %s (the bucket of the file's row %d) %s; nothing was written (delete the file's rows that remain, or load the missing rows from another file)",
		ErrPartlyLoaded, s.b.Key, s.firstRow, why)
	if cause != nil {
		return fmt.Errorf("%w (the load was refused: %w)", err, cause)
	}
	return err
}
