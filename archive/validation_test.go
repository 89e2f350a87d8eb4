package archive

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/flightsrv/flightsrv/routing"
)

var allSentinels = []error{
	ErrManifestKeyDigest, ErrManifestDigest, ErrManifestDecode, ErrManifestVersion, ErrSchemaVersion,
	ErrEmptyPayloadKey, ErrClusteringKey, ErrFormat, ErrBucketMismatch, ErrPayloadLength,
	ErrPayloadDigest, ErrRecordCount, ErrRecordOutsideBucket, ErrRecordsUnsorted, ErrPayloadSchema,
	ErrPayloadDecode, ErrObjectNotFound, ErrObjectExists, ErrObjectTimeout, ErrObjectStoreUnavailable,
	ErrManifestMismatch,
}

// requireOnly checks that err is want and no other sentinel, and that its text names no
// object key or partition value.
func requireOnly(t *testing.T, what string, err, want error, b routing.BucketID) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
	for _, s := range allSentinels {
		if s != want && errors.Is(err, s) {
			t.Fatalf("%s: error %v also matches %v", what, err, s)
		}
	}
	var ve *ValidationError
	if errors.As(want, &ve) && !errors.Is(err, ErrValidation) {
		t.Fatalf("%s: %v does not match ErrValidation", what, err)
	}
	if !errors.Is(err, routing.ErrOperationFailed) {
		t.Fatalf("%s: %v does not match routing.ErrOperationFailed", what, err)
	}
	msg := err.Error()
	if strings.Contains(msg, testPrefix) || strings.Contains(msg, hex.EncodeToString(b.PartitionKey)) ||
		strings.Contains(msg, string(b.PartitionKey)) || strings.Contains(msg, b.Key) {
		t.Fatalf("%s: error text leaks a key: %q", what, msg)
	}
}

// publishRaw stores payload and a manifest describing it (after mutate) under the reference's
// keys, bypassing the Writer's checks, and returns the manifest key.
func publishRaw(t *testing.T, bkt *blob.Bucket, b routing.BucketID, f Format, payload []byte, n int, mutate func(*Manifest)) string {
	t.Helper()
	ctx := context.Background()
	digest := sha256Hex(payload)
	m := &Manifest{
		Version: 4, Format: f, SchemaVersion: 2, Bucket: b, Generation: 1,
		PayloadKey: PayloadKey(testPrefix, b, 1, digest, f), RecordCount: uint64(n),
		PayloadBytes: uint64(len(payload)), SHA256: digest, ClusteringKey: clusteringKey,
	}
	if err := bkt.WriteAll(ctx, m.PayloadKey, payload, nil); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(m)
	}
	body, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	key := ManifestKey(testPrefix, b, 1, sha256Hex(body))
	if err := bkt.WriteAll(ctx, key, body, nil); err != nil {
		t.Fatal(err)
	}
	return key
}

func encodeFormat(t *testing.T, f Format, recs []routing.Record, rowGroupRows int) []byte {
	t.Helper()
	if f == FormatJSON {
		return encodeJSONPayload(recs)
	}
	p, err := encodeParquetPayload(recs, rowGroupRows, 256)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidationFailures gives every check of the reference reader its own failure and
// checks that each surfaces as its own sentinel, through Read (partial and whole), Count and
// Verify, for both formats.
func TestValidationFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := testBucket("general", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	other := testBucket("other", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	recs := []routing.Record{
		{PartitionKey: []byte("general"), EventTime: b.Start, SortKey: []byte("a"), Value: []byte("1")},
		{PartitionKey: []byte("general"), EventTime: b.Start.Add(time.Hour), SortKey: []byte("b"), Value: []byte("2")},
		{PartitionKey: []byte("general"), EventTime: b.Start.Add(2 * time.Hour), SortKey: []byte("c"), Value: []byte("3")},
	}
	partial := routing.ReadRequest{Range: routing.TimeRange{Start: b.Start, End: b.Start.Add(90 * time.Minute)}, Limit: 10}
	whole := routing.ReadRequest{Range: b.Range(), Limit: 10}
	partialRange := partial.Range

	for _, f := range formats {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			bkt := openTestBucket(t)
			r, err := NewReader(bkt, ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			good := encodeFormat(t, f, recs, 2)
			goodKey := publishRaw(t, bkt, b, f, good, len(recs), nil)

			// Step 1: the manifest's bytes against its key.
			body, err := bkt.ReadAll(ctx, goodKey)
			if err != nil {
				t.Fatal(err)
			}
			tampered := bytes.Replace(body, []byte(`"record_count":3`), []byte(`"record_count":2`), 1)
			tamperedKey := strings.Replace(goodKey, "generation-1", "generation-9", 1)
			if err := bkt.WriteAll(ctx, tamperedKey, tampered, nil); err != nil {
				t.Fatal(err)
			}
			badDigestKey := testPrefix + "/x/manifest-1234.json"
			if err := bkt.WriteAll(ctx, badDigestKey, body, nil); err != nil {
				t.Fatal(err)
			}
			legacyKey := testPrefix + "/x/legacy-manifest.json"
			if err := bkt.WriteAll(ctx, legacyKey, body, nil); err != nil {
				t.Fatal(err)
			}
			formatKey := strings.Replace(goodKey, "generation-1", "generation-8", 1)
			formatBody := bytes.Replace(body, []byte(`"format":"`+f.String()+`"`), []byte(`"format":"avro"`), 1)
			formatKey = formatKey[:strings.LastIndex(formatKey, "manifest-")] + "manifest-" + sha256Hex(formatBody) + ".json"
			if err := bkt.WriteAll(ctx, formatKey, formatBody, nil); err != nil {
				t.Fatal(err)
			}

			unsorted := []routing.Record{recs[1], recs[0], recs[2]}
			outsideTime := append([]routing.Record(nil), recs...)
			outsideTime[2].EventTime = b.End
			outsidePK := append([]routing.Record(nil), recs...)
			outsidePK[0].PartitionKey = []byte("intruder")
			flipped := append([]byte(nil), good...)
			flipped[len(flipped)/2] ^= 0x55

			cases := []struct {
				name string
				key  string
				b    routing.BucketID
				want error
				// which calls must fail (a partial Parquet read trusts the footer; see doc.go; a
				// whole count checks the payload's existence and size, not its bytes)
				readPartial, readWhole, countPartial, countWhole, verify bool
			}{
				{"tampered manifest", tamperedKey, b, ErrManifestDigest, true, true, true, true, true},
				{"invalid key digest", badDigestKey, b, ErrManifestKeyDigest, true, true, true, true, true},
				{"wrong version", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.Version = 3 }), b, ErrManifestVersion, true, true, true, true, true},
				{"wrong schema version", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.SchemaVersion = 1 }), b, ErrSchemaVersion, true, true, true, true, true},
				{"empty payload key", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.PayloadKey = "" }), b, ErrEmptyPayloadKey, true, true, true, true, true},
				{"wrong clustering key", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.ClusteringKey = []string{"sort_key", "event_time"} }), b, ErrClusteringKey, true, true, true, true, true},
				{"unknown format", formatKey, b, ErrFormat, true, true, true, true, true},
				{"wrong bucket", goodKey, other, ErrBucketMismatch, true, true, true, true, true},
				{"wrong bucket bounds", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.Bucket.End = m.Bucket.End.Add(time.Second) }), b, ErrBucketMismatch, true, true, true, true, true},
				{"wrong payload length", publishRaw(t, bkt, b, f, good, 3, func(m *Manifest) { m.PayloadBytes++ }), b, ErrPayloadLength, true, true, true, true, true},
				{"wrong payload digest", publishRaw(t, bkt, b, f, flipped, 3, func(m *Manifest) { m.SHA256 = sha256Hex(good) }), b, ErrPayloadDigest, true, true, true, false, true},
				{"wrong record count", publishRaw(t, bkt, b, f, good, 4, nil), b, ErrRecordCount, true, true, true, false, true},
				{"unsorted records", publishRaw(t, bkt, b, f, encodeFormat(t, f, unsorted, 3), 3, nil), b, ErrRecordsUnsorted, true, true, f == FormatJSON, false, true},
				{"record after the bucket", publishRaw(t, bkt, b, f, encodeFormat(t, f, outsideTime, 3), 3, nil), b, ErrRecordOutsideBucket, true, true, true, false, true},
				{"record of another partition", publishRaw(t, bkt, b, f, encodeFormat(t, f, outsidePK, 3), 3, nil), b, ErrRecordOutsideBucket, true, true, f == FormatJSON, false, true},
			}
			for _, c := range cases {
				_, err := readRecords(r, ctx, c.key, c.b, partial)
				if c.readPartial {
					requireOnly(t, c.name+": partial read", err, c.want, c.b)
				} else if err != nil {
					t.Fatalf("%s: partial read: %v", c.name, err)
				}
				_, err = readRecords(r, ctx, c.key, c.b, whole)
				if c.readWhole {
					requireOnly(t, c.name+": whole read", err, c.want, c.b)
				}
				_, err = countRecords(ctx, r, c.key, c.b, partialRange)
				if c.countPartial {
					requireOnly(t, c.name+": partial count", err, c.want, c.b)
				}
				_, err = countRecords(ctx, r, c.key, c.b, c.b.Range())
				if c.countWhole {
					requireOnly(t, c.name+": whole count", err, c.want, c.b)
				} else if err != nil {
					t.Fatalf("%s: whole count answered by the manifest: %v", c.name, err)
				}
				requireOnly(t, c.name+": verify", r.Verify(ctx, c.key, c.b), c.want, c.b)
			}

			// A legacy key without a digest in its name skips the digest check, as in the reference.
			if n, err := countRecords(ctx, r, legacyKey, b, b.Range()); err != nil || n != 3 {
				t.Fatalf("legacy manifest key: Count = %d, %v", n, err)
			}
			// A missing object is reported without its key.
			_, err = readRecords(r, ctx, testPrefix+"/x/manifest-"+strings.Repeat("0", 64)+".json", b, whole)
			requireOnly(t, "missing manifest", err, ErrObjectNotFound, b)
		})
	}
}

// TestDigestTradeOff pins the documented trade-off: a partial Parquet read of a payload larger
// than the tail trusts the footer and does not hash the payload; a whole-bucket read, Verify
// and VerifyFully do.
func TestDigestTradeOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bkt := openTestBucket(t)
	b := testBucket("general", routing.CalendarYearUTC, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC))
	recs := genRecords(newRand(5), b, 2000)
	good := encodeFormat(t, FormatParquet, recs, 500)
	// Corrupt one byte of a value page in the last row group but keep the size, and claim the
	// good digest: only hashing can tell.
	bad := append([]byte(nil), good...)
	ft, _, err := newFooterFromBytes(good, 8<<10)
	if err != nil {
		t.Fatal(err)
	}
	_, end := chunkBounds(&ft.file.Metadata().RowGroups[3].Columns[colValue])
	bad[end-3] ^= 0xff
	key := publishRaw(t, bkt, b, FormatParquet, bad, len(recs), func(m *Manifest) { m.SHA256 = sha256Hex(good) })
	early := routing.TimeRange{Start: b.Start, End: recs[100].EventTime}

	lazy, _ := NewReader(bkt, ReaderOptions{TailBytes: 4096})
	got, err := readRecords(lazy, ctx, key, b, routing.ReadRequest{Range: early, Limit: 50})
	if err != nil {
		t.Fatalf("partial read of an untouched row group: %v", err)
	}
	sameRecords(t, "partial read", got, bruteRead(recs, b, routing.ReadRequest{Range: early, Limit: 50}))
	if n, err := countRecords(ctx, lazy, key, b, early); err != nil || n != bruteCount(eventTimes(recs), early) {
		t.Fatalf("partial count = %d, %v", n, err)
	}
	// A whole read decodes the damaged page: the read path refuses it as undecodable (only
	// Verify and VerifyFully hash the whole payload).
	_, err = readRecords(lazy, ctx, key, b, routing.ReadRequest{Range: b.Range(), Limit: len(recs)})
	requireOnly(t, "whole read", err, ErrPayloadDecode, b)
	requireOnly(t, "verify", lazy.Verify(ctx, key, b), ErrPayloadDigest, b)

	strict, _ := NewReader(bkt, ReaderOptions{VerifyFully: true})
	_, err = readRecords(strict, ctx, key, b, routing.ReadRequest{Range: early, Limit: 50})
	requireOnly(t, "verify-fully read", err, ErrPayloadDigest, b)
	_, err = countRecords(ctx, strict, key, b, early)
	requireOnly(t, "verify-fully count", err, ErrPayloadDigest, b)
}
