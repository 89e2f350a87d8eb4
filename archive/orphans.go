package archive

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

// DefaultOrphanDelay is the default safety delay before an unpublished object may be deleted.
const DefaultOrphanDelay = 24 * time.Hour

// OrphanCollector deletes payloads and manifests that were written but never published: the
// uploads of attempts that were deferred, aborted, taken over after their lease expired, or
// killed between upload and publication. The reference never deletes them
// (docs/pulpitum-v4.md §4.2, fencing summary); this collector is our addition.
//
// It only considers objects under its prefix whose keys have the generation-addressed form of
// §1.5 ({prefix}/{hex table}/{hex partition}/{hex bucket key}/generation-{n}/records-….{json|
// parquet} or manifest-….json) and that are older than the safety delay, and deletes such an
// object only when, at a read of the bucket's route made just before:
//
//   - the route is archived and the object is neither its manifest nor that manifest's
//     payload (archived is terminal: nothing else can ever be published), or
//   - the route is archiving and the object's generation is below the route's (a later claim
//     has taken a higher generation, so no session of the object's generation can publish:
//     every owner-conditioned statement checks the generation), or
//   - the route is hot and the object's generation is at most the route's (publication needs
//     the archiving state, which only a claim brings back, with a higher generation).
//
// Objects of an archiving route's current generation, or of a higher one (a claim racing the
// read), are kept, as are objects of buckets never claimed and every key of another form.
// An OrphanCollector is safe for concurrent use with archivers and readers.
type OrphanCollector struct {
	store  objectStore
	bucket *blob.Bucket
	routes RouteReader
	prefix string
	delay  time.Duration
	now    func() time.Time
	log    *slog.Logger
}

// OrphanOptions configures an OrphanCollector.
type OrphanOptions struct {
	// Prefix is the archive's key prefix (the Writer's); required.
	Prefix string
	// Delay is the safety delay: objects modified less than Delay ago are kept (default
	// DefaultOrphanDelay). It must exceed the longest upload-to-publish time of an archiver.
	Delay time.Duration
	// OperationTimeout bounds each object operation (default 30 s).
	OperationTimeout time.Duration
	// Now is the clock compared with object modification times (default time.Now).
	Now func() time.Time
	// Logger receives one line per deleted object count and per failure, without keys
	// (default slog.Default()).
	Logger *slog.Logger
}

// OrphanSummary counts what one collection did.
type OrphanSummary struct {
	Scanned int // objects listed under the prefix
	Deleted int // orphans deleted
	Kept    int // generation-addressed objects kept: referenced, in flight, or younger than the delay
}

// NewOrphanCollector returns a collector of bucket's orphans, reading routes with routes.
func NewOrphanCollector(bucket *blob.Bucket, routes RouteReader, opts OrphanOptions) (*OrphanCollector, error) {
	if bucket == nil || routes == nil {
		return nil, errors.New("archive: orphan collector needs a bucket and a route reader")
	}
	opts.Prefix = strings.Trim(opts.Prefix, "/")
	if opts.Prefix == "" {
		return nil, errors.New("archive: orphan collector needs the archive's key prefix")
	}
	if opts.Delay <= 0 {
		opts.Delay = DefaultOrphanDelay
	}
	if opts.OperationTimeout <= 0 {
		opts.OperationTimeout = DefaultOperationTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &OrphanCollector{store: objectStore{bucket: bucket, timeout: opts.OperationTimeout}, bucket: bucket,
		routes: routes, prefix: opts.Prefix, delay: opts.Delay, now: opts.Now, log: opts.Logger}, nil
}

// objectKeyRE matches the generation-addressed keys of §1.5 after the prefix.
var objectKeyRE = regexp.MustCompile(`^([0-9a-f]+)/([0-9a-f]+)/([0-9a-f]+)/generation-([0-9]+)/(?:records-[0-9a-f]{64}\.(?:json|parquet)|manifest-[0-9a-f]{64}\.json)$`)

// candidate is a listed object of one bucket.
type candidate struct {
	key string
	gen int64
	mod time.Time
}

// Collect lists the prefix once and deletes the orphans it finds (see OrphanCollector). It
// stops at the first listing, route or manifest read failure of the store or the archive and
// returns it with what was done; a failed delete is logged and counted as kept.
func (c *OrphanCollector) Collect(ctx context.Context) (OrphanSummary, error) {
	var sum OrphanSummary
	groups := map[string][]candidate{}
	var order []string
	it := c.bucket.List(&blob.ListOptions{Prefix: c.prefix + "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, objectError(ctx, err)
		}
		if obj.IsDir {
			continue
		}
		sum.Scanned++
		m := objectKeyRE.FindStringSubmatch(strings.TrimPrefix(obj.Key, c.prefix+"/"))
		if m == nil {
			continue
		}
		gen, err := strconv.ParseInt(m[4], 10, 64)
		if err != nil {
			continue
		}
		dir := strings.Join(m[1:4], "/")
		if _, ok := groups[dir]; !ok {
			order = append(order, dir)
		}
		groups[dir] = append(groups[dir], candidate{key: obj.Key, gen: gen, mod: obj.ModTime})
	}
	cutoff := c.now().Add(-c.delay)
	for _, dir := range order {
		var old []candidate
		for _, o := range groups[dir] {
			if o.mod.Before(cutoff) {
				old = append(old, o)
			}
		}
		sum.Kept += len(groups[dir]) - len(old)
		if len(old) == 0 {
			continue
		}
		b, ok := bucketOfDir(dir)
		if !ok {
			sum.Kept += len(old)
			continue
		}
		keep, err := c.referenced(ctx, b)
		if err != nil {
			return sum, err
		}
		for _, o := range old {
			if keep(o) {
				sum.Kept++
				continue
			}
			if err := c.delete(ctx, o.key); err != nil {
				c.log.WarnContext(ctx, "archive orphan delete failed", "err", err)
				sum.Kept++
				continue
			}
			sum.Deleted++
		}
	}
	if sum.Deleted > 0 {
		c.log.InfoContext(ctx, "archive orphans deleted", "deleted", sum.Deleted, "scanned", sum.Scanned)
	}
	return sum, nil
}

// referenced reads b's route and returns the predicate of objects to keep.
func (c *OrphanCollector) referenced(ctx context.Context, b routing.BucketID) (func(candidate) bool, error) {
	route, err := c.routes.Route(ctx, b)
	if err != nil {
		return nil, err
	}
	switch route.State {
	case routing.StateArchived:
		data, err := c.store.readAll(ctx, route.ManifestKey, nil)
		if err != nil {
			return nil, err
		}
		m, err := ParseManifest(data)
		if err != nil {
			return nil, err
		}
		return func(o candidate) bool { return o.key == route.ManifestKey || o.key == m.PayloadKey }, nil
	case routing.StateHot:
		// No session of the route's generation or below can publish (publication needs the
		// archiving state, which only a claim, with a higher generation, brings back). A
		// bucket never claimed (no row: generation 0) has no objects of ours.
		return func(o candidate) bool { return route.Generation == 0 || o.gen > route.Generation }, nil
	}
	// Archiving: the current generation's session may still publish.
	return func(o candidate) bool { return o.gen >= route.Generation }, nil
}

func (c *OrphanCollector) delete(ctx context.Context, key string) error {
	opCtx, cancel := context.WithTimeout(ctx, c.store.timeout)
	defer cancel()
	return objectError(ctx, c.bucket.Delete(opCtx, key))
}

// bucketOfDir decodes a bucket's object directory (hex table id / hex partition key / hex
// bucket key) into its BucketID, deriving the strategy and bounds from the bucket key.
func bucketOfDir(dir string) (routing.BucketID, bool) {
	parts := strings.Split(dir, "/")
	if len(parts) != 3 {
		return routing.BucketID{}, false
	}
	var raw [3][]byte
	for i, p := range parts {
		b, err := hex.DecodeString(p)
		if err != nil {
			return routing.BucketID{}, false
		}
		raw[i] = b
	}
	key := string(raw[2])
	kind, stamp, ok := strings.Cut(key, ":")
	if !ok {
		return routing.BucketID{}, false
	}
	var (
		s      routing.Strategy
		layout string
	)
	switch kind {
	case "year":
		s, layout = routing.CalendarYearUTC, "2006"
	case "month":
		s, layout = routing.CalendarMonthUTC, "2006-01"
	case "day":
		s, layout = routing.CalendarDayUTC, "2006-01-02"
	default:
		return routing.BucketID{}, false
	}
	at, err := time.Parse(layout, stamp)
	if err != nil {
		return routing.BucketID{}, false
	}
	b := routing.BucketFor(string(raw[0]), raw[1], s, at)
	if b.Key != key || b.Validate() != nil {
		return routing.BucketID{}, false
	}
	return b, true
}
