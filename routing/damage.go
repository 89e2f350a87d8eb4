package routing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ErrArchiveDamaged matches the errors of an archive read whose published route's objects are
// missing or fail validation (the archive package's ErrObjectNotFound and validation errors):
// data was lost, and retrying will not bring it back. The Flight SQL boundary reports it as
// DATA_LOSS.
var ErrArchiveDamaged = errors.New("routing: archived data is missing or damaged")

// DamageReason is implemented by archive errors that match ErrArchiveDamaged: Reason returns a
// fixed phrase naming the failed check ("object not found", "payload digest mismatch"…), never
// a key or a value. It labels the archive read-error metric and the damage log line.
type DamageReason interface{ Reason() string }

// DamageMemory is how long a table remembers an archived route found damaged by default
// (Options.DamageMemory; serve --damage-memory): reads of the route within it fail at once with
// the same error, whatever path they take (a whole-bucket count the manifest could answer, a
// scan), so that the paths cannot disagree. After it, the next read tries the archive again
// (an operator may have restored the objects): it is also how long a restored bucket may keep
// answering DATA_LOSS.
const DamageMemory = 5 * time.Minute

// maxDamagedRoutes bounds the damaged routes a table remembers.
const maxDamagedRoutes = 1024

// RouteID returns the opaque id of the archived route whose manifest key is manifestKey, the
// only name logs give an archived bucket: the first 16 hex digits of the manifest's SHA-256,
// which its content-addressed key carries (manifest-<sha256>.json, docs/pulpitum-v4.md
// §1.5) — an operator finds the bucket with `find <archive> -name 'manifest-<id>*'` — or, for
// a key of another form, of the key's SHA-256. It reveals no partition value, bucket key or
// object key.
func RouteID(manifestKey string) string {
	base := path.Base(manifestKey)
	if d, ok := strings.CutPrefix(base, "manifest-"); ok && len(d) >= 16 && isHex(d[:16]) {
		return strings.ToLower(d[:16]) // no copy when already lower case
	}
	sum := sha256.Sum256([]byte(manifestKey))
	return hex.EncodeToString(sum[:8])
}

// isHex reports whether s is hexadecimal digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// damageLog remembers a table's damaged archived routes, reports each one found (a log line
// naming the route's opaque id and the failed check, and the flightsrv.archive.read_errors
// counter labelled by reason) and refuses reads of a remembered route. Safe for concurrent
// use.
type damageLog struct {
	table    TableDef
	log      *slog.Logger
	counter  metric.Int64Counter
	now      func() time.Time
	memory   time.Duration // how long a damaged route is remembered (DamageMemory by default)
	mu       sync.Mutex
	damaged  map[string]damagedRoute // by manifest key
	earliest []string                // keys in the order they were added (bounds the map)
	// remembered is len(damaged), so that check takes no lock while no route is remembered
	// (every read of an archived bucket checks).
	remembered atomic.Int64
}

type damagedRoute struct {
	err   error
	until time.Time
}

func newDamageLog(def TableDef, log *slog.Logger, now func() time.Time) *damageLog {
	if log == nil {
		log = slog.Default()
	}
	// A failure to create the instrument leaves a no-op one: reads must not fail for it.
	counter, _ := otel.Meter("flightsrv").Int64Counter("flightsrv.archive.read_errors",
		metric.WithDescription("Reads of archived buckets that found the route's objects missing or damaged, by the failed check (reason)."))
	return &damageLog{table: def, log: log, counter: counter, now: now, memory: DamageMemory, damaged: map[string]damagedRoute{}}
}

// check returns the remembered error of a damaged route, or nil.
func (d *damageLog) check(manifestKey string) error {
	if d.remembered.Load() == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.damaged[manifestKey]
	if !ok || !d.now().Before(r.until) {
		return nil
	}
	return r.err
}

// note reports err of a read of the route at manifestKey when it is damage, and returns err.
func (d *damageLog) note(ctx context.Context, manifestKey string, err error) error {
	if err == nil || !errors.Is(err, ErrArchiveDamaged) {
		return err
	}
	reason := "damaged"
	var dr DamageReason
	if errors.As(err, &dr) && dr.Reason() != "" {
		reason = dr.Reason()
	}
	d.counter.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
	d.mu.Lock()
	_, known := d.damaged[manifestKey]
	if !known {
		d.earliest = append(d.earliest, manifestKey)
		for len(d.earliest) > maxDamagedRoutes {
			delete(d.damaged, d.earliest[0])
			d.earliest = d.earliest[1:]
		}
	}
	d.damaged[manifestKey] = damagedRoute{err: err, until: d.now().Add(d.memory)}
	d.remembered.Store(int64(len(d.damaged)))
	d.mu.Unlock()
	attrs := []slog.Attr{
		slog.String("route", RouteID(manifestKey)),
		slog.String("table", d.table.Name),
		slog.String("strategy", d.table.Strategy.String()),
		slog.String("reason", reason),
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	d.log.LogAttrs(ctx, slog.LevelError, "archived route damaged: reads of it fail with DATA_LOSS", attrs...)
	return err
}

// watch returns r, whose error at the end of the stream is noted as a read of manifestKey.
func (d *damageLog) watch(ctx context.Context, manifestKey string, r BatchReader) BatchReader {
	return &damageWatch{BatchReader: r, ctx: ctx, d: d, key: manifestKey}
}

// damageWatch notes the error its reader ends with (once).
type damageWatch struct {
	BatchReader
	ctx   context.Context
	d     *damageLog
	key   string
	noted bool
}

// ManifestKey is the archived route's manifest key (ArchivedBatchReader).
func (w *damageWatch) ManifestKey() string { return w.key }

func (w *damageWatch) Err() error {
	err := w.BatchReader.Err()
	if err != nil && !w.noted {
		w.noted = true
		w.d.note(w.ctx, w.key, err)
	}
	return err
}
