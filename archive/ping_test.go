package archive

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

// TestPing: a reader of a file:// archive answers Ping before it read anything and once it
// read a manifest, and fails it once the archive directory has moved away (health checking
// must then report the archive down).
func TestPing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "archive")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bkt, err := blob.OpenBucket(ctx, "file://"+dir+"?metadata=skip")
	if err != nil {
		t.Fatal(err)
	}
	defer bkt.Close()
	r, err := NewReader(bkt, ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("empty archive: %v", err)
	}
	w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix})
	if err != nil {
		t.Fatal(err)
	}
	b := testBucket("ping", routing.CalendarMonthUTC, time.Date(2024, 2, 10, 0, 0, 0, 0, time.UTC))
	key, err := w.Put(ctx, b, 1, genRecords(rand.New(rand.NewPCG(1, 2)), b, 10))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: 100}); err != nil {
		t.Fatal(err)
	}
	if err := r.Ping(ctx); err != nil {
		t.Fatalf("after a read: %v", err)
	}
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := r.Ping(ctx); err == nil {
		t.Fatal("Ping succeeds with the archive directory moved away")
	}
}
