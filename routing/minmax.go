package routing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// Extremes says which of MIN(timestamp) and MAX(timestamp) a DurableTable.MinMax call must
// answer.
type Extremes uint8

const (
	// WantMin asks for the earliest event time in the range.
	WantMin Extremes = 1 << iota
	// WantMax asks for the latest event time in the range.
	WantMax
	// WantMinMax asks for both.
	WantMinMax = WantMin | WantMax
)

// ArchiveMinMaxer is the optional MIN/MAX capability of an ArchiveReader, checked with a type
// assertion (as database/sql checks its optional driver interfaces). archive.Reader
// implements it: trusted Parquet statistics answer for row groups and pages fully inside r,
// and only the event_time values of straddling ones are decoded.
//
// An ArchiveReader without it still answers DurableTable.MinMax, through two Read calls with
// a limit of one record (ascending, then descending).
type ArchiveMinMaxer interface {
	// MinMax returns the number of records of the archived bucket b inside r and their least
	// and greatest event times (UTC; zero times when count is 0), without building records.
	// It validates the manifest against b as Read does. Safe for concurrent use.
	MinMax(ctx context.Context, manifestKey string, b BucketID, r TimeRange) (count uint64, minTime, maxTime time.Time, err error)
}

// BucketMinMax is one bucket's MIN/MAX answer: when Found, Min and Max are the least and
// greatest event times (UTC) of the bucket's records inside the asked range.
type BucketMinMax struct {
	Found    bool
	Min, Max time.Time
}

// MinMaxBucket returns the least and greatest event times of b's records inside r through the
// same route decision and route cache as ReadBucket and CountBucket: a cached archived route
// goes straight to the archive; otherwise one hot-store statement returns route and answer from
// one snapshot, and an archived answer is cached and asked of the archive. It returns times
// only, never records. The returned tier says which tier answered.
func (t *DurableTable) MinMaxBucket(ctx context.Context, b BucketID, r TimeRange) (BucketMinMax, Tier, error) {
	r = r.Intersect(b.Range())
	if r.Empty() {
		return BucketMinMax{}, TierHot, nil
	}
	if key, ok := t.archivedRoute(b); ok {
		m, err := t.minMaxArchive(ctx, key, b, r)
		return m, TierArchive, err
	}
	route, found, lo, hi, err := t.hot.MinMaxRange(ctx, b, r)
	if err != nil {
		return BucketMinMax{}, TierHot, err
	}
	if route.State == StateArchived {
		t.cache.PutArchived(b, route.ManifestKey)
		m, err := t.minMaxArchive(ctx, route.ManifestKey, b, r)
		return m, TierArchive, err
	}
	m, err := checkedMinMax(found, lo, hi, r)
	return m, TierHot, err
}

// minMaxArchive asks the archive for b's extremes inside r: through ArchiveMinMaxer when the
// reader has it, otherwise through two one-record reads.
func (t *DurableTable) minMaxArchive(ctx context.Context, key string, b BucketID, r TimeRange) (BucketMinMax, error) {
	if t.archive == nil {
		return BucketMinMax{}, fmt.Errorf("%w: no archive reader configured", ErrOperationFailed)
	}
	if mm, ok := t.archive.(ArchiveMinMaxer); ok {
		n, lo, hi, err := mm.MinMax(ctx, key, b, r)
		if err != nil {
			return BucketMinMax{}, err
		}
		return checkedMinMax(n > 0, lo, hi, r)
	}
	first, err := t.readArchive(ctx, key, b, ReadRequest{Range: r, Limit: 1})
	if err != nil || len(first) == 0 {
		return BucketMinMax{}, err
	}
	last, err := t.readArchive(ctx, key, b, ReadRequest{Range: r, Limit: 1, Desc: true})
	if err != nil {
		return BucketMinMax{}, err
	}
	if len(last) == 0 {
		return BucketMinMax{}, fmt.Errorf("%w: archive read found a first record but no last one", ErrOperationFailed)
	}
	return checkedMinMax(true, first[0].EventTime, last[0].EventTime, r)
}

// checkedMinMax builds a bucket answer after checking that it is one: both times inside r and
// in order. A store or archive answering otherwise is broken, and its answer is not used.
func checkedMinMax(found bool, lo, hi time.Time, r TimeRange) (BucketMinMax, error) {
	if !found {
		return BucketMinMax{}, nil
	}
	if !r.Contains(lo) || !r.Contains(hi) || hi.Before(lo) {
		return BucketMinMax{}, fmt.Errorf("%w: min/max answer outside the requested range", ErrOperationFailed)
	}
	return BucketMinMax{Found: true, Min: lo.UTC(), Max: hi.UTC()}, nil
}

// MinMaxResult describes a MinMax call. When Found, Min (if asked) and Max (if asked) are the
// earliest and latest event times of the partition's records in the range; Found is false
// when the range holds no record (SQL NULL). Buckets is the number of buckets in the range,
// Probed how many of them were asked, and HotBuckets and ArchiveBuckets split the probed ones
// by the tier that answered.
type MinMaxResult struct {
	Found          bool
	Min, Max       time.Time
	Buckets        int
	Probed         int
	HotBuckets     int
	ArchiveBuckets int
}

// Source returns hot, archive or mixed according to which tiers answered the probes (the
// seed's metric label); no probe reports hot.
func (m MinMaxResult) Source() string {
	return CountResult{HotBuckets: m.HotBuckets, ArchiveBuckets: m.ArchiveBuckets}.Source()
}

// errNoExtremes is returned by MinMax when want asks for neither extreme.
var errNoExtremes = errors.New("routing: min/max call asks for neither MIN nor MAX")

// MinMax is the durable-table MIN/MAX(timestamp) port (the aggregate-pushdown seed's next
// candidates after COUNT(*)): it partitions the finite range r into buckets and walks them in
// time order — ascending for MIN, descending for MAX, from both ends at once when both are
// asked — and stops a walk at the first bucket that has a record in r (seed: "walks buckets
// in time order and stops at the first bucket that answers"). Each bucket is asked through
// MinMaxBucket (same route decision and cache as reads), which returns times only.
//
// Bounded fan-out: the first round asks one bucket per walk; every following round asks
// twice as many buckets ahead per walk as the one before, up to the table's Fanout, all
// buckets of a round concurrently (at most Fanout at a time). Answers are taken in walk
// order, so a bucket counts only when every bucket before it in its walk is empty; at most
// Fanout-1 buckets past the answering one are asked in vain, and a range whose first bucket
// answers costs exactly one probe per walk. The two walks never ask the same bucket: when
// they meet, the bucket where one stopped answers the other too.
//
// Each bucket is observed in its own snapshot, exactly as for Count and record reads (no
// cross-bucket snapshot). Any bucket error fails the call.
func (t *DurableTable) MinMax(ctx context.Context, pk []byte, r TimeRange, want Extremes) (MinMaxResult, error) {
	if r.Empty() {
		return MinMaxResult{}, ErrInvalidTimeRange
	}
	if want&WantMinMax == 0 {
		return MinMaxResult{}, errNoExtremes
	}
	buckets := t.Buckets(pk, r)
	n := len(buckets)
	res := MinMaxResult{Buckets: n}
	var (
		answers = make([]BucketMinMax, n)
		probed  = make([]bool, n)
		// lo..hi are the buckets not probed yet: the walks only ever take buckets from the
		// two ends of this interval, so it stays contiguous.
		lo, hi = 0, n - 1
		// front: every bucket before it is known empty; back: every bucket after it is.
		front, back  = 0, n - 1
		minAt, maxAt = -1, -1
		minDone      = want&WantMin == 0
		maxDone      = want&WantMax == 0
		window       = 1
	)
	for {
		for !minDone && front < n && probed[front] {
			if answers[front].Found {
				minAt, minDone = front, true
			} else {
				front++
			}
		}
		if front == n {
			minDone = true
		}
		for !maxDone && back >= 0 && probed[back] {
			if answers[back].Found {
				maxAt, maxDone = back, true
			} else {
				back--
			}
		}
		if back < 0 {
			maxDone = true
		}
		if minDone && maxDone {
			break
		}
		var next []int
		if !minDone {
			for i := lo; i <= hi && len(next) < window; i++ {
				next = append(next, i)
			}
			lo += len(next)
		}
		if !maxDone {
			k := 0
			for i := hi; i >= lo && k < window; i-- {
				next = append(next, i)
				k++
			}
			hi -= k
		}
		if err := t.probeMinMax(ctx, buckets, r, next, answers, probed, &res); err != nil {
			return MinMaxResult{}, err
		}
		window = min(2*window, t.fanout)
	}
	if minAt >= 0 {
		res.Found, res.Min = true, answers[minAt].Min
	}
	if maxAt >= 0 {
		res.Found, res.Max = true, answers[maxAt].Max
	}
	return res, nil
}

// probeMinMax asks the buckets at indexes idx concurrently (at most Fanout at a time) and
// records their answers.
func (t *DurableTable) probeMinMax(ctx context.Context, buckets []BucketID, r TimeRange, idx []int, answers []BucketMinMax, probed []bool, res *MinMaxResult) error {
	tiers := make([]Tier, len(idx))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.fanout)
	for j, i := range idx {
		g.Go(func() error {
			m, tier, err := t.MinMaxBucket(gctx, buckets[i], r)
			answers[i], tiers[j] = m, tier
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for j, i := range idx {
		probed[i] = true
		res.Probed++
		if tiers[j] == TierArchive {
			res.ArchiveBuckets++
		} else {
			res.HotBuckets++
		}
	}
	return nil
}
