package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/flightsrv/flightsrv/routing"
)

// Object keys follow docs/pulpitum-v4.md §1.5 exactly:
//
//	{prefix}/{hex(table_id)}/{hex(partition_key)}/{hex(bucket_key)}[/generation-{n}]/records-{sha256}.{json|parquet}
//	{prefix}/{hex(table_id)}/{hex(partition_key)}/{hex(bucket_key)}[/generation-{n}]/manifest-{sha256}.json
//
// Each segment is the lowercase hex of the raw bytes; the prefix has its slashes trimmed. The
// digests are lowercase hex SHA-256 of the payload bytes and of the manifest's JSON bytes.

// bucketDir returns the object directory of b (with the generation segment when gen >= 0).
func bucketDir(prefix string, b routing.BucketID, gen int64) string {
	var sb strings.Builder
	sb.WriteString(strings.Trim(prefix, "/"))
	sb.WriteByte('/')
	sb.WriteString(hex.EncodeToString([]byte(b.TableID)))
	sb.WriteByte('/')
	sb.WriteString(hex.EncodeToString(b.PartitionKey))
	sb.WriteByte('/')
	sb.WriteString(hex.EncodeToString([]byte(b.Key)))
	if gen >= 0 {
		sb.WriteString("/generation-")
		sb.WriteString(strconv.FormatInt(gen, 10))
	}
	return sb.String()
}

// PayloadKey returns the content-addressed payload key of b's generation gen (no generation
// segment when gen < 0) for a payload whose SHA-256 is digest (lowercase hex) in format f.
func PayloadKey(prefix string, b routing.BucketID, gen int64, digest string, f Format) string {
	return bucketDir(prefix, b, gen) + "/records-" + digest + "." + f.String()
}

// ManifestKey returns the content-addressed manifest key of b's generation gen (no generation
// segment when gen < 0) for manifest bytes whose SHA-256 is digest (lowercase hex).
func ManifestKey(prefix string, b routing.BucketID, gen int64, digest string) string {
	return bucketDir(prefix, b, gen) + "/manifest-" + digest + ".json"
}

// sha256Hex returns the lowercase hex SHA-256 of p.
func sha256Hex(p []byte) string {
	sum := sha256.Sum256(p)
	return hex.EncodeToString(sum[:])
}

// manifestKeyDigest returns the digest named by a manifest key's file name, following the
// reference: a file name of the form manifest-<d>.json must carry 64 hex digits
// (ErrManifestKeyDigest otherwise); any other file name carries no digest (legacy keys),
// and ok is false.
func manifestKeyDigest(key string) (digest string, ok bool, err error) {
	name := key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		name = key[i+1:]
	}
	d, found := strings.CutPrefix(name, "manifest-")
	if !found {
		return "", false, nil
	}
	d, found = strings.CutSuffix(d, ".json")
	if !found {
		return "", false, nil
	}
	if len(d) != 64 {
		return "", false, ErrManifestKeyDigest
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false, ErrManifestKeyDigest
		}
	}
	return d, true, nil
}

// Key limits of object stores. A file-system store (gocloud's file://) maps each '/'-separated
// segment of a key to a file or directory name, which POSIX file systems bound to NAME_MAX =
// 255 bytes; S3, GCS and Azure bound the whole key to 1,024 bytes. A partition value of 128
// bytes or more has a hex segment beyond 255 bytes.
const (
	DefaultMaxKeySegmentBytes = 255
	DefaultMaxKeyBytes        = 1024
)

// KeyLimitError reports that a bucket's object key exceeds the archive's key limits, so the
// bucket cannot be stored under the reference's key scheme (docs/pulpitum-v4.md §1.5). It
// names which part is too long and by how much, never the key or the value. It matches
// routing.ErrOperationFailed. The failure is permanent for the bucket under these limits.
type KeyLimitError struct {
	// Part is "table id", "partition key", "bucket key" or "object key" (the whole key).
	Part string
	// Bytes is the length of the part's key segment (hex: twice the raw length), or of the
	// whole key; Limit the bound it exceeds.
	Bytes, Limit int
}

// Error implements error.
func (e *KeyLimitError) Error() string {
	if e.Part == "object key" {
		return fmt.Sprintf("archive: the bucket's object key would be %d bytes, beyond the archive's limit of %d bytes: this bucket cannot be archived under the key scheme", e.Bytes, e.Limit)
	}
	return fmt.Sprintf("archive: the %s's object-key segment would be %d bytes (hex of %d bytes), beyond the archive's limit of %d bytes per segment: this bucket cannot be archived under the key scheme",
		e.Part, e.Bytes, e.Bytes/2, e.Limit)
}

// Is reports whether target is routing.ErrOperationFailed.
func (e *KeyLimitError) Is(target error) bool { return target == routing.ErrOperationFailed }

// checkKeyLimits returns a *KeyLimitError when one of b's hex segments is longer than maxSegment
// bytes or key (the longest key of the bucket's generation) is longer than maxKey bytes.
func checkKeyLimits(b routing.BucketID, key string, maxSegment, maxKey int) error {
	for _, p := range []struct {
		part string
		n    int
	}{{"table id", len(b.TableID)}, {"partition key", len(b.PartitionKey)}, {"bucket key", len(b.Key)}} {
		if 2*p.n > maxSegment {
			return &KeyLimitError{Part: p.part, Bytes: 2 * p.n, Limit: maxSegment}
		}
	}
	if len(key) > maxKey {
		return &KeyLimitError{Part: "object key", Bytes: len(key), Limit: maxKey}
	}
	return nil
}
