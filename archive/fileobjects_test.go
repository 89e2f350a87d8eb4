package archive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

// TestFileKey: the keys the archive writes are read directly; anything fileblob would escape
// or refuse, or that could leave the directory, goes through gocloud.
func TestFileKey(t *testing.T) {
	b := testBucket("chan-\x00é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
	for _, k := range []string{
		PayloadKey(testPrefix, b, 3, sha256Hex([]byte("x")), FormatParquet),
		PayloadKey("a/b", b, -1, sha256Hex([]byte("x")), FormatJSON),
		ManifestKey(testPrefix, b, 3, sha256Hex([]byte("y"))),
	} {
		if !fileKey(k) {
			t.Errorf("fileKey(%q) = false, want true", k)
		}
	}
	for _, k := range []string{
		"", "/abs", "a//b", "a/", "../x", "a/../b", "a/./b", ".", "..", "a/b.attrs", "a\\b", "a b",
		"a/\x00", "a/é", "a/%2e%2e", "a/b?c", "0../0",
	} {
		if fileKey(k) {
			t.Errorf("fileKey(%q) = true, want false", k)
		}
	}
}

// TestFileDirReads: a reader with FileDir answers as one reading through fileblob — every
// read and count equal to the brute-force answer — without fileblob's sidecar (a damaged
// .attrs file fails fileblob's reads and not the direct ones), and a truncated, missing or
// replaced payload fails both with the same error.
func TestFileDirReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	bkt, err := blob.OpenBucket(ctx, "file://"+dir) // sidecars written, as by default
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bkt.Close() })
	w, err := NewWriter(bkt, WriterOptions{Prefix: testPrefix, Format: FormatParquet, RowGroupRows: 97, PageBufferBytes: 256})
	if err != nil {
		t.Fatal(err)
	}
	b := testBucket("chan-\x00é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
	rng := newRand(19)
	recs := genRecords(rng, b, 2500)
	key, err := w.Put(ctx, b, 3, recs)
	if err != nil {
		t.Fatal(err)
	}
	open := func(fileDir string) *Reader {
		// A small tail forces ranged reads; every read checks the payload's size.
		r, err := NewReader(bkt, ReaderOptions{TailBytes: 1024, CoalesceGapBytes: 64, PayloadCheckInterval: -1, FileDir: fileDir})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := NewReader(bkt, ReaderOptions{FileDir: filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("NewReader with a missing FileDir: no error")
	}
	times := eventTimes(recs)
	direct := open(dir)
	for k := 0; k < 60; k++ {
		req := routing.ReadRequest{Range: randomRange(rng, b, times), Limit: 1 + rng.IntN(3000), Desc: rng.IntN(2) == 0}
		got, err := readRecords(direct, ctx, key, b, req)
		if err != nil {
			t.Fatalf("Read(%+v): %v", req, err)
		}
		sameRecords(t, "Read", got, bruteRead(recs, b, req))
		n, err := countRecords(ctx, direct, key, b, req.Range)
		if err != nil || n != bruteCount(times, req.Range.Intersect(b.Range())) {
			t.Fatalf("Count(%v) = %d, %v; want %d", req.Range, n, err, bruteCount(times, req.Range.Intersect(b.Range())))
		}
	}
	payloads, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(bucketDir(testPrefix, b, 3)), "records-*.parquet"))
	if err != nil || len(payloads) != 1 {
		t.Fatalf("payload files %q (%v)", payloads, err)
	}
	payload := payloads[0]
	whole := routing.ReadRequest{Range: b.Range(), Limit: 1 << 30}

	// A damaged sidecar: fileblob cannot read the payload, the direct reader does not look.
	if err := os.WriteFile(payload+".attrs", []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRecords(open(""), ctx, key, b, whole); err == nil {
		t.Fatal("fileblob read a payload whose .attrs sidecar is damaged: the test proves nothing")
	}
	got, err := readRecords(open(dir), ctx, key, b, whole)
	if err != nil {
		t.Fatalf("direct read with a damaged sidecar: %v", err)
	}
	sameRecords(t, "Read", got, bruteRead(recs, b, whole))
	if err := os.Remove(payload + ".attrs"); err != nil {
		t.Fatal(err)
	}

	// The same failures through both, on fresh readers (no cached footer).
	raw, err := os.ReadFile(payload)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string) {
		t.Helper()
		_, viaBlob := readRecords(open(""), ctx, key, b, whole)
		_, viaFile := readRecords(open(dir), ctx, key, b, whole)
		if viaBlob == nil || viaFile == nil || viaBlob.Error() != viaFile.Error() {
			t.Fatalf("%s: fileblob's read fails with %v, the direct one with %v", what, viaBlob, viaFile)
		}
		t.Logf("%s: %v", what, viaFile)
	}
	// A payload cut after a read trusted its size: the ranged reads find it short.
	cutAfter := func(fileDir string) error {
		t.Helper()
		if err := os.WriteFile(payload, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(bkt, ReaderOptions{TailBytes: 1024, CoalesceGapBytes: 64, PayloadCheckInterval: time.Hour, FooterCacheEntries: -1, FileDir: fileDir})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readRecords(r, ctx, key, b, whole); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(payload, raw[:len(raw)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = readRecords(r, ctx, key, b, whole)
		return err
	}
	viaBlob, viaFile := cutAfter(""), cutAfter(dir)
	if viaBlob == nil || viaFile == nil || viaBlob.Error() != viaFile.Error() {
		t.Fatalf("payload cut after its size was trusted: fileblob's read fails with %v, the direct one with %v", viaBlob, viaFile)
	}
	t.Logf("payload cut after its size was trusted: %v", viaFile)
	for _, damage := range []struct {
		what string
		do   func() error
	}{
		{"truncated payload", func() error { return os.WriteFile(payload, raw[:len(raw)-100], 0o644) }},
		{"payload cut to its first bytes", func() error { return os.WriteFile(payload, raw[:10], 0o644) }},
		{"missing payload", func() error { return nil }}, // removed below
		{"a directory at the payload's key", func() error { return os.Mkdir(payload, 0o755) }},
	} {
		_ = os.RemoveAll(payload)
		if err := damage.do(); err != nil {
			t.Fatal(err)
		}
		same(damage.what)
	}
}
