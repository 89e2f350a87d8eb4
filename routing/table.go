package routing

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/flightsrv/flightsrv/internal/panics"
)

// DefaultFanout is the default number of buckets read concurrently by one query (seed:
// "Bounded parallel bucket fan-out", initially 4).
const DefaultFanout = 4

// Options configures a DurableTable. Zero values take the defaults.
type Options struct {
	// Fanout bounds how many buckets one call reads concurrently (default DefaultFanout).
	Fanout int
	// Cache is the route cache shared by the tables of one process; nil disables it.
	Cache *RouteCache
	// Clock is the application clock used by the writable-window check (default time.Now).
	// Back-fill tools set it to the instant the data was current.
	Clock func() time.Time
	// Logger receives the damaged archived routes reads find (damage.go); nil uses
	// slog.Default().
	Logger *slog.Logger
	// DamageMemory is how long reads of an archived route found missing or damaged fail at
	// once with its error before the archive is read again (0: DamageMemory).
	DamageMemory time.Duration
}

// DurableTable is one routed table over a hot store and an archive reader: the Go form of the
// reference's DurableTable (docs/pulpitum-v4.md §3). It is safe for concurrent use.
type DurableTable struct {
	def     TableDef
	hot     HotStore
	archive ArchiveReader
	cache   *RouteCache
	fanout  int
	clock   func() time.Time
	damage  *damageLog
}

// NewDurableTable validates def and returns the table. archive may be nil only when no bucket
// of the table is ever archived; reads of an archived bucket then fail with ErrOperationFailed.
func NewDurableTable(def TableDef, hot HotStore, archive ArchiveReader, opts Options) (*DurableTable, error) {
	if err := def.Validate(); err != nil {
		return nil, err
	}
	if hot == nil {
		return nil, fmt.Errorf("routing: table needs a hot store")
	}
	if opts.Fanout <= 0 {
		opts.Fanout = DefaultFanout
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	damage := newDamageLog(def, opts.Logger, time.Now)
	if opts.DamageMemory > 0 {
		damage.memory = opts.DamageMemory
	}
	return &DurableTable{def: def, hot: hot, archive: archive, cache: opts.Cache, fanout: opts.Fanout, clock: opts.Clock,
		damage: damage}, nil
}

// Def returns the table definition.
func (t *DurableTable) Def() TableDef { return t.def }

// Partitions discovers the partitions of the table with a bucket intersecting r (the hot
// store's route rows, which include every archived bucket's; HotStore.Partitions), in byte
// order, at most limit (<= 0: no bound), each with its buckets that have a route row.
// Analytical reads, which pin no partition, read these and only these buckets.
func (t *DurableTable) Partitions(ctx context.Context, r TimeRange, limit int) ([]Partition, error) {
	return t.hot.Partitions(ctx, t.def.TableID, t.def.Strategy, r, limit)
}

// Partition is one partition found by discovery (HotStore.Partitions): its key and the keys
// (BucketID.Key) of its buckets with a route row intersecting the range discovered. Owned by
// the caller.
type Partition struct {
	Key        []byte
	BucketKeys []string
}

// BucketSet is a set of bucket keys (BucketID.Key) of one partition: the buckets with a route
// row that partition discovery found (Partition.Set). A bucket without a route row was never
// written and reads as empty (docs/pulpitum-v4.md §1.4), so a read may skip it. The nil set
// holds every bucket. Read-only once built; safe for concurrent readers.
type BucketSet map[string]struct{}

// Set returns the set of p's bucket keys (never nil: a partition without one holds none).
func (p Partition) Set() BucketSet {
	s := make(BucketSet, len(p.BucketKeys))
	for _, k := range p.BucketKeys {
		s[k] = struct{}{}
	}
	return s
}

// Filter returns the buckets of bs whose key s holds (all of them when s is nil), in their
// order, in a new slice.
func (s BucketSet) Filter(bs []BucketID) []BucketID {
	if s == nil {
		return slices.Clone(bs)
	}
	out := make([]BucketID, 0, min(len(bs), len(s)))
	for _, b := range bs {
		if _, ok := s[b.Key]; ok {
			out = append(out, b)
		}
	}
	return out
}

// PartitionBuckets returns, per partition of parts (parallel to it), the buckets of def
// intersecting r in bound order, less those present[i] does not hold when present is not nil
// (partition discovery's buckets with a route row, parallel to parts). A bucket's bounds and
// key depend only on the strategy and the time, so they are computed once for all the
// partitions.
func PartitionBuckets(def TableDef, parts [][]byte, present []BucketSet, r TimeRange) [][]BucketID {
	return PartitionBucketsIn(def, parts, present, []TimeRange{r})
}

// PartitionBucketsIn is PartitionBuckets of the union of the ranges rs (sorted by Start and
// disjoint): the buckets intersecting any of them, each once, in bound order — a read whose
// time filter is an OR of ranges reads only the buckets they cover.
func PartitionBucketsIn(def TableDef, parts [][]byte, present []BucketSet, rs []TimeRange) [][]BucketID {
	tmpl := BucketsForRanges(def.TableID, nil, def.Strategy, rs)
	out := make([][]BucketID, len(parts))
	for i, pk := range parts {
		var set BucketSet
		if present != nil {
			set = present[i]
		}
		bs := set.Filter(tmpl) // a copy: tmpl is every partition's
		for j := range bs {
			bs[j].PartitionKey = pk
		}
		out[i] = bs
	}
	return out
}

// AddDiscovered adds one discovery row (a partition key and one of its bucket keys, rows in
// partition key order) to out, as both hot stores' Partitions do. It reports false, leaving out
// unchanged, when the row would start a partition past limit (limit <= 0: no bound): the caller
// stops reading there. pk is copied only when it starts a partition.
func AddDiscovered(out []Partition, pk []byte, bucketKey string, limit int) ([]Partition, bool) {
	if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, pk) {
		out[n-1].BucketKeys = append(out[n-1].BucketKeys, bucketKey)
		return out, true
	}
	if limit > 0 && len(out) >= limit {
		return out, false
	}
	return append(out, Partition{Key: bytes.Clone(pk), BucketKeys: []string{bucketKey}}), true
}

// Fanout returns the table's bucket concurrency bound.
func (t *DurableTable) Fanout() int { return t.fanout }

// Buckets returns the buckets of partition pk intersecting r, ordered by bounds.
func (t *DurableTable) Buckets(pk []byte, r TimeRange) []BucketID {
	return BucketsForRange(t.def.TableID, pk, t.def.Strategy, r)
}

// archivedRoute returns the manifest key when b is known to be archived from the cache.
func (t *DurableTable) archivedRoute(b BucketID) (string, bool) { return t.cache.Archived(b) }

// ArchivedKey returns the manifest key of b's archived route when the route cache holds one
// (no store is asked): a hint, for a reader that would read b differently when it is archived
// (the executor's shredded-column cache); the read itself still routes through ScanBucket,
// whose reader reports the key it read (ArchivedBatchReader). Safe for concurrent use.
func (t *DurableTable) ArchivedKey(b BucketID) (string, bool) { return t.archivedRoute(b) }

// ReadBucket reads one bucket's records through its route, on the one read path of every
// store (ScanBucket: Arrow batches, the same route decision, damage memory and pins): at most
// req.Limit records inside req.Range strictly after req.After, in req's order. The tier says
// which tier answered. The records' byte slices are fresh and owned by the caller.
func (t *DurableTable) ReadBucket(ctx context.Context, b BucketID, req ReadRequest) ([]Record, Tier, error) {
	if req.Limit <= 0 {
		return nil, TierHot, nil
	}
	r, tier, err := t.ScanBucket(ctx, b, req.Batch())
	if err != nil {
		return nil, tier, err
	}
	defer r.Release()
	recs, err := ReadRecords(r, b.PartitionKey, req)
	return recs, tier, err
}

// Batch returns the batch read covering req: every column, req's range narrowed to the
// cursor's side of req.After (the rows at the cursor's own time are filtered by ReadRecords),
// and req's limit when no cursor filters rows.
func (req ReadRequest) Batch() BatchRequest {
	br := BatchRequest{Range: req.Range, Columns: AllColumns, Desc: req.Desc, Limit: int64(req.Limit)}
	if a := req.After; a != nil {
		br.Limit = -1
		if req.Desc {
			br.Range = br.Range.Intersect(TimeRange{Start: br.Range.Start, End: a.EventTime.Add(time.Microsecond)})
		} else {
			br.Range = br.Range.Intersect(TimeRange{Start: a.EventTime, End: br.Range.End})
		}
	}
	return br
}

// ReadRecords collects the records of r, a reader of every column (AllColumns) of one bucket
// of partition pk in req's order, strictly after req.After, at most req.Limit of them. The
// records' byte slices are fresh, each record's own. It returns r's error, or ErrOperationFailed when r's
// batches are not of AllColumns.
func ReadRecords(r BatchReader, pk []byte, req ReadRequest) ([]Record, error) {
	var out []Record
	for len(out) < req.Limit && r.Next() {
		rec := r.RecordBatch()
		if int(rec.NumCols()) != len(AllColumns) {
			return nil, fmt.Errorf("%w: read records: %d columns", ErrOperationFailed, rec.NumCols())
		}
		ts, ok1 := rec.Column(int(ColumnTimestamp)).(*array.Timestamp)
		ids, ok2 := rec.Column(int(ColumnID)).(*array.String)
		vals, ok3 := rec.Column(int(ColumnValue)).(*array.Binary)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%w: read records: unexpected column types", ErrOperationFailed)
		}
		for i := 0; i < int(rec.NumRows()) && len(out) < req.Limit; i++ {
			x := Record{EventTime: time.Unix(0, int64(ts.Value(i))).UTC(), SortKey: []byte(ids.Value(i)), Value: slices.Clone(vals.Value(i))}
			if x.Value == nil {
				x.Value = []byte{}
			}
			if !req.After.Admits(&x, req.Desc) {
				continue
			}
			out = append(out, x)
		}
	}
	SetPartitionKeys(out, pk)
	return out, r.Err()
}

// TierSource returns hot, archive or mixed according to which tiers answered a query's
// buckets (the seed's metric label); no bucket reports hot.
func TierSource(hot, archive int) string {
	switch {
	case archive > 0 && hot > 0:
		return "mixed"
	case archive > 0:
		return "archive"
	}
	return "hot"
}

// Query asks for one page of a partition's records (the reference's Query).
type Query struct {
	PartitionKey []byte
	Range        TimeRange
	After        *Cursor
	Limit        int
}

// Page is one page of records in (event_time, sort_key) order; Next is set when more records
// follow and is the cursor of the page's last record.
type Page struct {
	Records []Record
	Next    *Cursor
}

// QueryPage returns up to q.Limit records after q.After (docs/pulpitum-v4.md §3.2): every
// intersecting bucket is asked for Limit+1 records, up to Fanout at a time; the results are
// concatenated in bucket order (buckets never overlap in time, so this is the ordered merge),
// truncated to Limit, and Next is set when more than Limit records were gathered.
func (t *DurableTable) QueryPage(ctx context.Context, q Query) (Page, error) {
	if q.Range.Empty() {
		return Page{}, ErrInvalidTimeRange
	}
	if q.Limit <= 0 {
		return Page{Next: q.After}, nil
	}
	buckets := t.Buckets(q.PartitionKey, q.Range)
	parts := make([][]Record, len(buckets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.fanout)
	for i, b := range buckets {
		g.Go(func() (err error) {
			defer panics.Recover("bucket read", &err)
			recs, _, err := t.ReadBucket(gctx, b, ReadRequest{Range: q.Range, After: q.After, Limit: q.Limit + 1})
			parts[i] = recs
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return Page{}, err
	}
	all := slices.Concat(parts...)
	if len(all) <= q.Limit {
		return Page{Records: all}, nil
	}
	all = all[:q.Limit]
	return Page{Records: all, Next: CursorOf(&all[len(all)-1])}, nil
}

// NormalizeTime returns t in UTC truncated to microseconds, the precision both tiers store.
func NormalizeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// appendGroup is the records of one bucket in an Append.
type appendGroup struct {
	b    BucketID
	recs []Record
}

// groupForAppend checks recs against the write fence's record rules and the writable window
// and groups them by bucket, oldest bucket first; times are normalised in the copies it makes.
// Errors name the record's position in recs, never its values.
func (t *DurableTable) groupForAppend(recs []Record) ([]*appendGroup, error) {
	now := t.clock()
	var groups []*appendGroup
	byKey := map[string]*appendGroup{}
	windows := map[string][2]time.Time{}
	for i := range recs {
		r := recs[i]
		if len(r.PartitionKey) == 0 || len(r.SortKey) == 0 {
			return nil, fmt.Errorf("%w: record %d has an empty partition key or sort key", ErrInvalidRecord, i)
		}
		if err := t.def.checkValue(&r, int64(i)); err != nil {
			return nil, err
		}
		r.EventTime = NormalizeTime(r.EventTime)
		b := BucketFor(t.def.TableID, r.PartitionKey, t.def.Strategy, r.EventTime)
		w, ok := windows[string(r.PartitionKey)]
		if !ok {
			win := RecentBuckets(t.def.TableID, r.PartitionKey, t.def.Strategy, now, t.def.WritableBuckets)
			w = [2]time.Time{win[0].Start, win[len(win)-1].Start}
			windows[string(r.PartitionKey)] = w
		}
		if b.Start.Before(w[0]) || b.Start.After(w[1]) {
			return nil, fmt.Errorf("%w (record %d)", ErrOutsideWriteWindow, i)
		}
		k := b.CacheKey()
		g := byKey[k]
		if g == nil {
			g = &appendGroup{b: b}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.recs = append(g.recs, r)
	}
	slices.SortStableFunc(groups, func(a, b *appendGroup) int { return a.b.Start.Compare(b.b.Start) })
	return groups, nil
}

// CheckAppend runs Append's checks on recs (non-empty keys, the writable window at the
// application clock) without writing anything: loaders call it on a whole input before the
// first Append. It cannot foresee store-side refusals (a bucket no longer hot, a duplicate).
func (t *DurableTable) CheckAppend(recs []Record) error {
	_, err := t.groupForAppend(recs)
	return err
}

// Append appends records through the write fence. Each record's event time is normalised
// with NormalizeTime; every record must carry a non-empty partition key and sort key and fall
// into the writable window at the application clock (ErrOutsideWriteWindow; future buckets
// are rejected too). Records are grouped by bucket and each bucket's group is written in one
// transaction, oldest bucket first; all records are checked before anything is written, and
// an error stops at the failing bucket (earlier buckets stay written, as with the reference's
// one-record appends). It returns how many records were written. The slices of recs are not
// modified; times are normalised in a copy.
func (t *DurableTable) Append(ctx context.Context, recs []Record) (int, error) {
	groups, err := t.groupForAppend(recs)
	if err != nil {
		return 0, err
	}
	written := 0
	for _, g := range groups {
		if err := t.hot.Append(ctx, g.b, g.recs); err != nil {
			return written, err
		}
		written += len(g.recs)
	}
	return written, nil
}
