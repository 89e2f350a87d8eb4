package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// airportWord finds any loaded partition value, or its hex form (object keys carry it), in a
// log line or message.
var airportWord = regexp.MustCompile(`\b(ORD|SFO|BOS)\b|4f5244|53464f|424f53|archives/`)

// damageServer starts a server with a fresh archive reader (no cached manifest, footer or
// payload check) whose first request fetches tailBytes of a payload's end, logging JSON to
// the returned buffer.
func damageServer(t *testing.T, e *env, tailBytes int64) (*server.Server, *logBuffer) {
	t.Helper()
	reader, err := archive.NewReader(e.bucket, archive.ReaderOptions{TailBytes: tailBytes})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: reader, Pushdown: true,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv, logs
}

// archivedBucket returns the manifest key and payload key of an archived bucket of the e2e
// table.
func archivedBucket(t *testing.T, e *env, origin string, month time.Time) (b routing.BucketID, manifestKey, payloadKey string) {
	t.Helper()
	ctx := context.Background()
	b = routing.BucketFor(flightsTable.TableID, []byte(origin), flightsTable.Strategy, month)
	route, err := e.store.Route(ctx, b)
	if err != nil || route.State != routing.StateArchived {
		t.Fatalf("%s %s: route %+v, %v", origin, month, route, err)
	}
	data, err := e.bucket.ReadAll(ctx, route.ManifestKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := archive.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return b, route.ManifestKey, m.PayloadKey
}

// bucketQueries are a whole-bucket COUNT(*) (answered by the archive's partial-aggregate port)
// and a scan of every column of the same bucket.
func bucketQueries(origin string, month time.Time) (count, scan string) {
	from, to := month, month.AddDate(0, 1, 0)
	where := fmt.Sprintf("origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
		origin, from.Format(time.RFC3339), to.Format(time.RFC3339))
	return "SELECT COUNT(*) FROM flights WHERE " + where, "SELECT * FROM flights WHERE " + where + " ORDER BY timestamp, id"
}

// wantDataLoss fails unless err is DATA_LOSS with the fixed message, free of partition values
// and keys.
func wantDataLoss(t *testing.T, what string, err error) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.DataLoss || st.Message() != "archived data this query reads is missing or damaged; the server log names the route" {
		t.Fatalf("%s: %v, want DATA_LOSS", what, err)
	}
}

// wantDamageLine fails unless the log names the route (its opaque id) with reason, and
// nothing in it holds a partition value or a key.
func wantDamageLine(t *testing.T, logs *logBuffer, manifestKey, reason string) {
	t.Helper()
	if airportWord.MatchString(logs.String()) {
		t.Errorf("log holds a partition value or key:\n%s", logs)
	}
	for _, l := range logs.lines(t, "archived route damaged: reads of it fail with DATA_LOSS") {
		if l["route"] == routing.RouteID(manifestKey) && l["reason"] == reason && l["table"] == "flights" {
			return
		}
	}
	t.Errorf("no damage line for route %s reason %q:\n%s", routing.RouteID(manifestKey), reason, logs)
}

// TestDamagedArchiveFailsCountAndScanAlike is the user trial's finding: after an archived
// payload is deleted, truncated or has one byte changed, a whole-bucket COUNT(*) (which the
// manifest's record_count could answer) and a scan of the same bucket both fail with
// DATA_LOSS, each on a server that never read the bucket before; the log names the route by
// its opaque id and the failed check, the flightsrv.archive.read_errors counter counts the
// check, and no message or log line holds a partition value or a key. Damage inside the
// payload (a byte of its pages or its footer, or of a JSON payload) is found only by the reads
// that decode it: a whole-bucket count checks the payload's existence and size, not its bytes,
// so it answers (exactly) until a scan finds the damage, and fails after.
func TestDamagedArchiveFailsCountAndScanAlike(t *testing.T) {
	metrics := recordMetrics(t)
	e := newEnv(t)
	ctx := context.Background()
	feb, mar := ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")

	for _, c := range []struct {
		name, origin string
		month        time.Time
		damage       func(data []byte) []byte
		reason       string
	}{
		{"deleted", "ORD", feb, nil, "object not found"},
		{"truncated", "ORD", mar, func(d []byte) []byte { return d[:len(d)/2] }, "payload length mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, manifestKey, payloadKey := archivedBucket(t, e, c.origin, c.month)
			if c.damage == nil {
				if err := e.bucket.Delete(ctx, payloadKey); err != nil {
					t.Fatal(err)
				}
			} else {
				data, err := e.bucket.ReadAll(ctx, payloadKey)
				if err != nil {
					t.Fatal(err)
				}
				if err := e.bucket.WriteAll(ctx, payloadKey, c.damage(data), nil); err != nil {
					t.Fatal(err)
				}
			}
			count, scan := bucketQueries(c.origin, c.month)
			for _, q := range []string{count, scan} {
				srv, logs := damageServer(t, e, 0)
				_, err := run(ctx, dial(t, srv), q)
				wantDataLoss(t, q[:16], err)
				wantDamageLine(t, logs, manifestKey, c.reason)
			}
		})
	}

	// Damage a whole-bucket count cannot see without reading the payload's bytes: a byte inside
	// the compressed pages of a Parquet payload (read in pages, or whole with its footer when
	// the footer's read covers it: then its digest is checked), a byte of its footer, and a
	// byte of a JSON payload.
	for _, c := range []struct {
		name, origin string
		month        time.Time
		tailBytes    int64 // the reader's footer read (large: the payload arrives whole)
		at           func(n int) int
		reason       string
	}{
		{"data page byte changed", "SFO", feb, 1 << 10, func(n int) int { return n / 3 }, "payload could not be decoded"},
		{"byte changed, payload read whole", "SFO", mar, 64 << 20, func(n int) int { return n / 2 }, "payload digest mismatch"},
		// The footer's length (4 bytes before the closing magic).
		{"footer byte changed", "BOS", mar, 1 << 10, func(n int) int { return n - 6 }, "payload could not be decoded"},
		{"JSON payload byte changed", "BOS", ts("2001-01-01T00:00:00Z"), 1 << 10, func(n int) int { return n / 3 }, "payload digest mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, manifestKey, payloadKey := archivedBucket(t, e, c.origin, c.month)
			data, err := e.bucket.ReadAll(ctx, payloadKey)
			if err != nil {
				t.Fatal(err)
			}
			data[c.at(len(data))] ^= 0x5a
			if err := e.bucket.WriteAll(ctx, payloadKey, data, nil); err != nil {
				t.Fatal(err)
			}
			srv, logs := damageServer(t, e, c.tailBytes)
			cl := dial(t, srv)
			count, scan := bucketQueries(c.origin, c.month)
			if got, want := scalarCount(t, mustRun(t, cl, count)), int64(len(expected(e.sample, c.origin, c.month, c.month.AddDate(0, 1, 0)))); got != want {
				t.Fatalf("count before the scan: %d, want %d", got, want)
			}
			_, err = run(ctx, cl, scan)
			wantDataLoss(t, "scan", err)
			wantDamageLine(t, logs, manifestKey, c.reason)
			_, err = run(ctx, cl, count)
			wantDataLoss(t, "count after the scan", err)
		})
	}

	var rm metricdata.ResourceMetrics
	if err := metrics.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "flightsrv.archive.read_errors" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if dp.Attributes.Len() != 1 {
					t.Errorf("read error labels %v", dp.Attributes.ToSlice())
				}
				r, _ := dp.Attributes.Value("reason")
				got[r.AsString()] += dp.Value
			}
		}
	}
	// Each damage is found once per server that read it: two servers each for a deleted or
	// truncated payload, one for the damage only a scan finds (the count after it is refused
	// from memory, not read again).
	want := map[string]int64{"object not found": 2, "payload length mismatch": 2, "payload digest mismatch": 2, "payload could not be decoded": 2}
	for r, n := range want {
		if got[r] != n {
			t.Errorf("read errors %q = %d, want %d (all: %v)", r, got[r], n, got)
		}
	}
}

// TestRestoredPayloadAnswersAfterDamageMemory (issue 20: "a payload restored byte-identical
// kept answering DATA_LOSS for minutes despite --damage-memory 1ms"): an archived payload is
// deleted, truncated, or has a byte of its pages, its footer or its JSON changed; a scan of
// its bucket answers DATA_LOSS; the payload's original bytes are put back; once the damage
// memory (here 50 ms) has passed, the same server, with the same archive reader and its
// caches, answers the scan and a whole-bucket count exactly as the sample says.
func TestRestoredPayloadAnswersAfterDamageMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const memory = 50 * time.Millisecond
	for _, c := range []struct {
		name, origin string
		month        time.Time
		tailBytes    int64
		damage       func(d []byte) []byte // nil: deleted
	}{
		{"deleted", "ORD", ts("2001-02-01T00:00:00Z"), 1 << 10, nil},
		{"truncated", "ORD", ts("2001-03-01T00:00:00Z"), 1 << 10, func(d []byte) []byte { return d[:len(d)/2] }},
		{"data page byte changed", "SFO", ts("2001-02-01T00:00:00Z"), 1 << 10, func(d []byte) []byte { d[len(d)/3] ^= 0x5a; return d }},
		{"byte changed, payload read whole", "SFO", ts("2001-03-01T00:00:00Z"), 64 << 20, func(d []byte) []byte { d[len(d)/2] ^= 0x5a; return d }},
		{"footer byte changed", "BOS", ts("2001-03-01T00:00:00Z"), 1 << 10, func(d []byte) []byte { d[len(d)-6] ^= 0x5a; return d }},
		{"JSON payload byte changed", "BOS", ts("2001-01-01T00:00:00Z"), 1 << 10, func(d []byte) []byte { d[len(d)/3] ^= 0x5a; return d }},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, payloadKey := archivedBucket(t, e, c.origin, c.month)
			original, err := e.bucket.ReadAll(ctx, payloadKey)
			if err != nil {
				t.Fatal(err)
			}
			reader, err := archive.NewReader(e.bucket, archive.ReaderOptions{TailBytes: c.tailBytes})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: reader,
				Pushdown: true, DamageMemory: memory, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			cl := dial(t, srv)
			count, _ := bucketQueries(c.origin, c.month)
			scan := fmt.Sprintf("SELECT timestamp, id, value FROM flights WHERE origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s' ORDER BY timestamp, id",
				c.origin, c.month.Format(time.RFC3339), c.month.AddDate(0, 1, 0).Format(time.RFC3339))
			want := expected(e.sample, c.origin, c.month, c.month.AddDate(0, 1, 0))
			if c.damage == nil {
				err = e.bucket.Delete(ctx, payloadKey)
			} else {
				err = e.bucket.WriteAll(ctx, payloadKey, c.damage(bytes.Clone(original)), nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = run(ctx, cl, scan)
			wantDataLoss(t, "scan of the damaged payload", err)
			if err := e.bucket.WriteAll(ctx, payloadKey, original, nil); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * memory)
			res, err := run(ctx, cl, scan)
			if err != nil {
				t.Fatalf("scan after the restore and the damage memory: %v", err)
			}
			if got := rowsOf(t, res, c.origin); !slices.Equal(got, want) {
				t.Fatalf("scan after the restore: %d rows, want the sample's %d", len(got), len(want))
			}
			if got := scalarCount(t, mustRun(t, cl, count)); got != int64(len(want)) {
				t.Fatalf("count after the restore: %d, want %d", got, len(want))
			}
		})
	}
}
