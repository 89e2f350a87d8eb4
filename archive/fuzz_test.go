package archive

// Fuzz targets of the archive's outside input, the objects of a bucket another process
// wrote: manifests (FuzzManifest), JSON payloads (FuzzJSONPayload), Parquet payloads' footers
// and pages through every read path (FuzzParquetPayload), and DELTA_LENGTH_BYTE_ARRAY pages
// (FuzzDeltaLength), and the file:// direct reader's key mapping (FuzzFileKey). Seed corpora: testdata/fuzz/<target> (Go's layout), plus the seeds
// f.Add gives below.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/encoding/delta"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/memblob" // mem:// buckets

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
)

// FuzzManifest parses bytes as a manifest: a failure is ErrManifestDecode or ErrFormat; a
// manifest parsed writes back (MarshalJSON) into bytes that parse to an equal manifest and
// write back to the same bytes.
func FuzzManifest(f *testing.F) {
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	m := &Manifest{Version: 4, Format: FormatParquet, SchemaVersion: 2, Bucket: b, Generation: 1,
		PayloadKey: PayloadKey(testPrefix, b, 1, sha256Hex(nil), FormatParquet), RecordCount: 3,
		PayloadBytes: 100, SHA256: sha256Hex(nil), ClusteringKey: clusteringKey}
	body, err := m.MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	m.Generation, m.Format, m.Bucket.PartitionKey = -1, FormatJSON, []byte{0, 0xff, '"'}
	if body, err = m.MarshalJSON(); err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`{"version":4,"format":"avro"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Add()
		m, err := ParseManifest(data)
		if err != nil {
			if !errors.Is(err, ErrManifestDecode) && !errors.Is(err, ErrFormat) {
				t.Fatalf("ParseManifest: %v, want ErrManifestDecode or ErrFormat", err)
			}
			return
		}
		_ = m.Validate()
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("a parsed manifest does not write back: %v", err)
		}
		m2, err := ParseManifest(out)
		if err != nil {
			t.Fatalf("the manifest written back does not parse: %v\n%s", err, out)
		}
		if !m.Equal(m2) {
			t.Fatalf("round trip: %+v, want %+v", m2, m)
		}
		if out2, err := m2.MarshalJSON(); err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("the manifest writes back as\n%s\nthen\n%s (%v)", out, out2, err)
		}
	})
}

// sameRecordList reports whether a and b hold the same records (event times compared as
// instants, nil and empty byte slices equal).
func sameRecordList(a, b []routing.Record) bool {
	return slices.EqualFunc(a, b, func(x, y routing.Record) bool {
		return bytes.Equal(x.PartitionKey, y.PartitionKey) && x.EventTime.Equal(y.EventTime) &&
			bytes.Equal(x.SortKey, y.SortKey) && bytes.Equal(x.Value, y.Value)
	})
}

// FuzzJSONPayload decodes bytes as a JSON payload: a failure is ErrPayloadDecode; the fast
// scanner (scanJSONPayload), when it accepts the bytes, agrees with encoding/json's decoding
// (decodeJSONPayload's fallback); and records decoded encode (encodeJSONPayload) into a
// payload that decodes to the same records.
func FuzzJSONPayload(f *testing.F) {
	b := testBucket("general", routing.CalendarMonthUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	f.Add(encodeJSONPayload(genRecords(newRand(1), b, 5)))
	f.Add(encodeJSONPayload([]routing.Record{{PartitionKey: []byte{0, 0xff}, EventTime: b.Start.Add(time.Nanosecond), SortKey: []byte(`"\`), Value: nil}}))
	f.Add([]byte(`[{"partition_key":[1,2],"event_time":"2024-05-01T00:00:00.5+02:00","sort_key":[],"value":[255]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Add()
		recs, err := decodeJSONPayload(data)
		if err != nil {
			if !errors.Is(err, ErrPayloadDecode) {
				t.Fatalf("decode: %v, want ErrPayloadDecode", err)
			}
			if _, ok := scanJSONPayload(data); ok {
				t.Fatal("the scanner accepts a payload the decoder refuses")
			}
			return
		}
		if fast, ok := scanJSONPayload(data); ok {
			slow, err := decodeJSONPayloadStd(data)
			if err != nil || !sameRecordList(fast, slow) {
				t.Fatalf("the scanner decodes %d records, encoding/json %d (%v)", len(fast), len(slow), err)
			}
		}
		again, err := decodeJSONPayload(encodeJSONPayload(recs))
		if err != nil || !sameRecordList(recs, again) {
			t.Fatalf("round trip: %d records, then %d (%v)", len(recs), len(again), err)
		}
	})
}

// parquetErrors are the errors a read of a damaged Parquet payload may end with.
var parquetErrors = []error{ErrPayloadDecode, ErrPayloadSchema, ErrRecordOutsideBucket, ErrRecordsUnsorted, ErrKeyNotUTF8, ErrRecordCount, ErrPayloadDigest, ErrPayloadLength}

// requirePayloadError fails unless err is one of parquetErrors (and so a routing failure)
// whose text names no object key and no partition value.
func requirePayloadError(t *testing.T, what string, err error, b routing.BucketID) {
	t.Helper()
	ok := false
	for _, e := range parquetErrors {
		ok = ok || errors.Is(err, e)
	}
	if !ok || !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("%s: %v, want a payload sentinel", what, err)
	}
	if msg := err.Error(); strings.Contains(msg, testPrefix) || strings.Contains(msg, string(b.PartitionKey)) || strings.Contains(msg, b.Key) {
		t.Fatalf("%s: error text leaks a key: %q", what, msg)
	}
}

// FuzzParquetPayload stores bytes as a bucket's Parquet payload, with a manifest whose size,
// digest and record count agree with them, and reads it every way the server does: the whole
// decode of Verify (decodeParquetPayload), Read and ReadBatches over the whole bucket and over
// a part (ascending and descending), and the partial-aggregate port (Aggregate). Every failure
// is a payload sentinel naming no key; no Arrow buffer is left allocated; and a payload that
// decodes whole into a valid bucket (validateRecords) reads back the same records through
// ReadBatches over the whole bucket.
func FuzzParquetPayload(f *testing.F) {
	b := testBucket("fuzz", routing.CalendarMonthUTC, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	for i, shape := range []struct{ n, groupRows, pageBytes int }{{40, 16, 256}, {5, 5, 64}, {1, 1, 1024}, {0, 1, 256}} {
		p, err := encodeParquetPayload(genRecords(newRand(uint64(i)), b, shape.n), shape.groupRows, shape.pageBytes)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p, uint16(100), uint16(20000), i%2 == 1)
	}
	ctx := context.Background()
	bkt, err := blob.OpenBucket(ctx, "mem://")
	if err != nil {
		f.Fatal(err)
	}
	defer bkt.Close()
	// A small tail, so that footers are fetched with ranged reads as from an object store.
	r, err := NewReader(bkt, ReaderOptions{TailBytes: 64, PayloadCheckInterval: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, lo, hi uint16, desc bool) {
		fuzzcount.Add()
		whole, werr := decodeParquetPayload(ctx, data, b, 0)
		if werr != nil {
			requirePayloadError(t, "whole decode", werr, b)
		}
		n := len(whole)
		if werr != nil {
			if ft, _, err := newFooterFromBytes(data, 0); err == nil {
				n = int(max(0, ft.numRows))
			}
		}
		key := publishRaw(t, bkt, b, FormatParquet, data, n, nil)
		span := b.End.Sub(b.Start)
		part := routing.TimeRange{Start: b.Start.Add(span * time.Duration(lo) / 65536), End: b.Start.Add(span * time.Duration(hi) / 65536)}
		for _, rng := range []routing.TimeRange{b.Range(), part} {
			req := routing.BatchRequest{Range: rng, Columns: routing.AllColumns, Desc: desc, Limit: -1}
			got := readBatches(t, ctx, r, key, b, req)
			if got.err != nil {
				requirePayloadError(t, "ReadBatches", got.err, b)
			} else if rng == b.Range() && werr == nil && validateRecords(b, whole) == nil {
				want := project(whole, req.Columns)
				if desc {
					want = reversedRecords(want)
				}
				sameProjected(t, "ReadBatches of the whole bucket", got.recs, want)
			}
			if _, err := readRecords(r, ctx, key, b, routing.ReadRequest{Range: rng, Limit: 1000, Desc: desc}); err != nil {
				requirePayloadError(t, "Read", err, b)
			}
			bin := routing.Binning{Unit: routing.TruncDay}
			for _, req := range []routing.AggregateRequest{{Range: rng, Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}}, {Range: rng, Bin: &bin, Measures: []routing.Measure{routing.CountStar}}} {
				if _, err := aggregateGroups(ctx, r, key, b, req); err != nil && !errors.Is(err, routing.ErrNoAggregate) {
					requirePayloadError(t, "Aggregate", err, b)
				}
			}
		}
	})
}

// FuzzDeltaLength decodes bytes as a DELTA_LENGTH_BYTE_ARRAY page: decodeDeltaLength either
// refuses them with errDeltaLength or decodes exactly what parquet-go's own decoder (the
// reference) decodes.
func FuzzDeltaLength(f *testing.F) {
	var enc delta.LengthByteArrayEncoding
	for _, vals := range [][]string{{}, {"a"}, {"", "bb", "ccc"}, {strings.Repeat("x", 300), "", "y"}} {
		var data []byte
		offs := []uint32{0}
		for _, v := range vals {
			data = append(data, v...)
			offs = append(offs, uint32(len(data)))
		}
		page, err := enc.EncodeByteArray(nil, data, offs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(page)
		f.Add(append(page, "trailing"...))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		fuzzcount.Add()
		vals, _, offs, err := decodeDeltaLength(page, nil, nil)
		if err != nil {
			if !errors.Is(err, errDeltaLength) {
				t.Fatalf("refused with %v, want errDeltaLength", err)
			}
			return
		}
		wantVals, wantOffs, werr := enc.DecodeByteArray(nil, slices.Clone(page), nil)
		if len(wantOffs) == 0 {
			wantOffs = []uint32{0}
		}
		if werr != nil || !bytes.Equal(vals, wantVals) || !slices.Equal(offs, wantOffs) {
			t.Fatalf("decoded %d values (%d bytes) where parquet-go gives %d (%d bytes, %v)", len(offs)-1, len(vals), len(wantOffs)-1, len(wantVals), werr)
		}
	})
}

// FuzzFileKey feeds object keys to the file:// direct reader's key mapping (fileobjects.go):
// a key fileKey accepts maps to a file strictly inside the bucket's directory, at the path
// gocloud's fileblob gives it (filepath.Join of the directory and the unescaped key), and
// an object written there through fileblob reads back through fileObjects with the same
// bytes and size (ranged reads included); a key fileKey refuses goes through gocloud, so
// only acceptance is checked for it.
func FuzzFileKey(f *testing.F) {
	b := testBucket("chan-\x00é", routing.CalendarDayUTC, time.Date(2025, 3, 9, 5, 0, 0, 0, time.UTC))
	for _, k := range []string{
		PayloadKey(testPrefix, b, 3, sha256Hex([]byte("x")), FormatParquet),
		ManifestKey(testPrefix, b, 3, sha256Hex([]byte("y"))),
		"a/b", "..", "a/../b", "a//b", "/abs", "a\\b", "a/b.attrs", "x/.attrs/y", "a/\x00", "ab/-_.9",
	} {
		f.Add(k, int64(0), int64(-1))
	}
	dir := f.TempDir()
	bkt, err := blob.OpenBucket(context.Background(), "file://"+dir)
	if err != nil {
		f.Fatal(err)
	}
	defer bkt.Close()
	d, err := newFileObjects(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, key string, off, n int64) {
		fuzzcount.Add()
		if !fileKey(key) {
			return
		}
		p := d.path(key)
		rel, err := filepath.Rel(d.dir, p)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			t.Fatalf("fileKey(%q) accepted, but its file %q is not inside %q (rel %q, %v)", key, p, d.dir, rel, err)
		}
		if want := filepath.Join(d.dir, key); p != want {
			t.Fatalf("path(%q) = %q, fileblob's %q", key, p, want)
		}
		ctx := context.Background()
		body := []byte("object " + key)
		if err := bkt.WriteAll(ctx, key, body, nil); err != nil {
			return // a file where this key needs a directory, or the reverse: fileblob refuses too
		}
		defer bkt.Delete(ctx, key)
		size, err := d.size(key)
		if err != nil || size != int64(len(body)) {
			t.Fatalf("size(%q) = %d, %v; fileblob wrote %d bytes", key, size, err, len(body))
		}
		off = max(0, off%int64(len(body)+2))
		if n >= 0 {
			n %= int64(len(body) + 2)
		} else {
			n = -1
		}
		want, err := bkt.NewRangeReader(ctx, key, off, n, nil)
		if err != nil {
			return // fileblob refuses the range (an offset past the end): nothing to compare
		}
		wantBytes, werr := io.ReadAll(want)
		want.Close()
		r, err := d.openRange(key, off, n)
		if err != nil {
			t.Fatalf("openRange(%q, %d, %d): %v; fileblob read it", key, off, n, err)
		}
		got, gerr := io.ReadAll(r)
		r.Close()
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, wantBytes) || r.Size() != size {
			t.Fatalf("openRange(%q, %d, %d) = %q (%v), size %d; fileblob %q (%v), size %d", key, off, n, got, gerr, r.Size(), wantBytes, werr, size)
		}
	})
}
