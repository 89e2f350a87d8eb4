package routing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrPinMismatch is returned by a read of a bucket whose plan was pinned to an archived
// generation (WithPins) when the bucket no longer routes to that generation's manifest: the
// plan would read other data than it was planned against. Callers plan again. The error
// names no bucket, partition or object key.
var ErrPinMismatch = errors.New("routing: an archived bucket no longer holds the generation the plan was pinned to")

// Pin is what a plan knew of one archived bucket when it was made: the bucket's start (UTC;
// with the partition and the table's strategy it names the bucket), the generation of its
// published archive (from the manifest key, -1 when the key carries none) and the archived
// route's opaque id (RouteID: a digest of the manifest, which identifies the archive without
// revealing its object key; keys are content- and generation-addressed,
// docs/pulpitum-v4.md §1.5).
type Pin struct {
	Partition  []byte
	Start      int64 // bucket start, Unix nanoseconds UTC
	Generation int64
	Route      string
}

// PinOf returns the pin of bucket b archived under manifestKey.
func PinOf(b BucketID, manifestKey string) Pin {
	return Pin{Partition: b.PartitionKey, Start: b.Start.UnixNano(), Generation: ManifestGeneration(manifestKey), Route: RouteID(manifestKey)}
}

// ManifestGeneration returns the generation n of a generation-addressed manifest key (a path
// element "generation-{n}"), or -1 when the key has none.
func ManifestGeneration(key string) int64 {
	for el := range strings.SplitSeq(key, "/") {
		if s, ok := strings.CutPrefix(el, "generation-"); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}

// Pins is the set of archived buckets a plan is pinned to, keyed by partition and bucket
// start. A read under WithPins of a pinned bucket must find the bucket archived under the
// pinned manifest, or fails with ErrPinMismatch; buckets not pinned (hot at planning) are read
// at serving time, one snapshot per bucket. Immutable once built; safe for concurrent use.
type Pins struct {
	m map[pinKey]string // route ids
}

type pinKey struct {
	partition string
	start     int64
}

// NewPins returns the set of pins ps.
func NewPins(ps []Pin) *Pins {
	m := make(map[pinKey]string, len(ps))
	for _, p := range ps {
		m[pinKey{string(p.Partition), p.Start}] = p.Route
	}
	return &Pins{m: m}
}

// Len returns the number of pinned buckets.
func (p *Pins) Len() int {
	if p == nil {
		return 0
	}
	return len(p.m)
}

func (p *Pins) lookup(b BucketID) (string, bool) {
	if p == nil {
		return "", false
	}
	d, ok := p.m[pinKey{string(b.PartitionKey), b.Start.UnixNano()}]
	return d, ok
}

type pinsKey struct{}

// WithPins returns a context under which the bucket reads of DurableTable (ScanBucket,
// AggregateBucket) check pins: see Pins.
func WithPins(ctx context.Context, p *Pins) context.Context {
	return context.WithValue(ctx, pinsKey{}, p)
}

func pinsFrom(ctx context.Context) *Pins {
	p, _ := ctx.Value(pinsKey{}).(*Pins)
	return p
}

// checkPin checks the route the read of b is about to follow against the pins of ctx:
// archivedKey is the manifest key of an archived route, "" for a hot one; route is its
// RouteID when the caller knows it ("": computed here).
func checkPin(ctx context.Context, b BucketID, archivedKey, route string) error {
	want, ok := pinsFrom(ctx).lookup(b)
	if !ok {
		return nil
	}
	if archivedKey == "" {
		return ErrPinMismatch
	}
	if route == "" {
		route = RouteID(archivedKey)
	}
	if route != want {
		return ErrPinMismatch
	}
	return nil
}

// CachedPin returns the pin of b when the route cache knows it archived (no store is asked):
// PinOf of its manifest key, without parsing the key again.
func (t *DurableTable) CachedPin(b BucketID) (Pin, bool) {
	e, ok := t.cache.archived(b)
	if !ok {
		return Pin{}, false
	}
	return Pin{Partition: b.PartitionKey, Start: b.Start.UnixNano(), Generation: e.generation, Route: e.route}, true
}

// ResolveRoute returns b's route: from the route cache when it is known archived (the
// generation then comes from the manifest key), otherwise from the hot store (an archived
// answer is cached). Planners call it to pin archived buckets (PinOf).
func (t *DurableTable) ResolveRoute(ctx context.Context, b BucketID) (Route, error) {
	if e, ok := t.cache.archived(b); ok {
		return Route{State: StateArchived, ManifestKey: e.manifestKey, Generation: e.generation}, nil
	}
	r, err := t.hot.Route(ctx, b)
	if err != nil {
		return Route{}, fmt.Errorf("resolve route: %w", err)
	}
	if r.State == StateArchived {
		t.cache.PutArchived(b, r.ManifestKey)
	}
	return r, nil
}
