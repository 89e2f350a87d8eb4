package archive

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flightsrv/flightsrv/routing"
)

// Format is a payload encoding. The zero value is FormatParquet, the default for new archives
// written by flightsrv; readers always use the format recorded in the manifest.
type Format uint8

const (
	// FormatParquet is the Parquet record envelope v2 (docs/pulpitum-v4.md §1.5).
	FormatParquet Format = iota
	// FormatJSON is the JSON array of records written by the reference by default.
	FormatJSON
)

// String returns the manifest spelling and file extension: "parquet" or "json".
func (f Format) String() string {
	if f == FormatJSON {
		return "json"
	}
	return "parquet"
}

// ParseFormat accepts "json" or "parquet", case-insensitively and ignoring surrounding space
// (the reference's ARCHIVE_FORMAT parsing).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "json":
		return FormatJSON, nil
	case "parquet":
		return FormatParquet, nil
	}
	return 0, errors.New("archive: unsupported archive format; supported formats: json, parquet")
}

// Manifest version and record schema version of docs/pulpitum-v4.md §1.5.
const (
	ManifestVersion     = 4
	RecordSchemaVersion = 2
)

var clusteringKey = []string{"event_time", "sort_key"}

// Manifest is a v4 archive manifest: the immutable description of one payload that a published
// bucket's metadata row points to. Generation is -1 when the manifest's generation is null
// (archives written without a generation).
type Manifest struct {
	Version       uint32
	Format        Format
	SchemaVersion uint32
	Bucket        routing.BucketID
	Generation    int64
	PayloadKey    string
	RecordCount   uint64
	PayloadBytes  uint64
	SHA256        string
	ClusteringKey []string
}

// Equal reports whether two manifests are identical field for field.
func (m *Manifest) Equal(o *Manifest) bool {
	return m.Version == o.Version && m.Format == o.Format && m.SchemaVersion == o.SchemaVersion &&
		m.Bucket.Equal(o.Bucket) && m.Generation == o.Generation && m.PayloadKey == o.PayloadKey &&
		m.RecordCount == o.RecordCount && m.PayloadBytes == o.PayloadBytes && m.SHA256 == o.SHA256 &&
		slices.Equal(m.ClusteringKey, o.ClusteringKey)
}

// MarshalJSON returns the manifest as the reference writes it: compact JSON, fields in the
// order version, format, schema_version, bucket{table_id, partition_key, strategy, key, start,
// end}, generation, payload_key, record_count, payload_bytes, sha256, clustering_key. The
// manifest key's digest is the SHA-256 of exactly these bytes.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	if !utf8.ValidString(m.Bucket.TableID) || !utf8.ValidString(m.Bucket.Key) || !utf8.ValidString(m.PayloadKey) {
		return nil, errors.New("archive: manifest strings must be valid UTF-8")
	}
	if !m.Bucket.Strategy.Valid() {
		return nil, routing.ErrUnknownStrategy
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"version":`...)
	b = strconv.AppendUint(b, uint64(m.Version), 10)
	b = append(b, `,"format":`...)
	b = appendJSONString(b, m.Format.String())
	b = append(b, `,"schema_version":`...)
	b = strconv.AppendUint(b, uint64(m.SchemaVersion), 10)
	b = append(b, `,"bucket":{"table_id":`...)
	b = appendJSONString(b, m.Bucket.TableID)
	b = append(b, `,"partition_key":`...)
	b = appendByteArray(b, m.Bucket.PartitionKey)
	b = append(b, `,"strategy":`...)
	b = appendJSONString(b, m.Bucket.Strategy.String())
	b = append(b, `,"key":`...)
	b = appendJSONString(b, m.Bucket.Key)
	b = append(b, `,"start":"`...)
	b = appendRFC3339(b, m.Bucket.Start)
	b = append(b, `","end":"`...)
	b = appendRFC3339(b, m.Bucket.End)
	b = append(b, `"},"generation":`...)
	if m.Generation < 0 {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, m.Generation, 10)
	}
	b = append(b, `,"payload_key":`...)
	b = appendJSONString(b, m.PayloadKey)
	b = append(b, `,"record_count":`...)
	b = strconv.AppendUint(b, m.RecordCount, 10)
	b = append(b, `,"payload_bytes":`...)
	b = strconv.AppendUint(b, m.PayloadBytes, 10)
	b = append(b, `,"sha256":`...)
	b = appendJSONString(b, m.SHA256)
	b = append(b, `,"clustering_key":[`...)
	for i, k := range m.ClusteringKey {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
	}
	b = append(b, "]}"...)
	return b, nil
}

// ParseManifest decodes manifest bytes with the reference's strictness: every field except
// generation is required and non-null, integer fields take non-negative integers only, names
// are case-sensitive, duplicates are rejected and unknown fields are ignored (so that fields
// added later keep old readers working). A format other than json/parquet yields ErrFormat;
// any other decoding failure ErrManifestDecode. ParseManifest does not run Validate.
func ParseManifest(data []byte) (*Manifest, error) {
	obj, err := decodeObject(data)
	if err != nil {
		return nil, ErrManifestDecode
	}
	m := &Manifest{Generation: -1}
	u32 := func(name string) (uint32, error) {
		v, err := decodeUint(obj[name], math.MaxUint32)
		return uint32(v), err
	}
	var errs []error
	var e error
	m.Version, e = u32("version")
	errs = append(errs, e)
	format, e := decodeString(obj["format"])
	errs = append(errs, e)
	m.SchemaVersion, e = u32("schema_version")
	errs = append(errs, e)
	m.Bucket, e = parseBucket(obj["bucket"])
	errs = append(errs, e)
	if !isNull(obj["generation"]) {
		g, e := decodeUint(obj["generation"], math.MaxInt64)
		errs = append(errs, e)
		m.Generation = int64(g)
	}
	m.PayloadKey, e = decodeString(obj["payload_key"])
	errs = append(errs, e)
	m.RecordCount, e = decodeUint(obj["record_count"], math.MaxUint64)
	errs = append(errs, e)
	m.PayloadBytes, e = decodeUint(obj["payload_bytes"], math.MaxUint64)
	errs = append(errs, e)
	m.SHA256, e = decodeString(obj["sha256"])
	errs = append(errs, e)
	if isNull(obj["clustering_key"]) {
		errs = append(errs, errors.New("missing clustering key"))
	} else {
		var raw []json.RawMessage
		if err := json.Unmarshal(obj["clustering_key"], &raw); err != nil {
			errs = append(errs, err)
		}
		m.ClusteringKey = make([]string, 0, len(raw))
		for _, r := range raw {
			s, e := decodeString(r)
			errs = append(errs, e)
			m.ClusteringKey = append(m.ClusteringKey, s)
		}
	}
	if errors.Join(errs...) != nil {
		return nil, ErrManifestDecode
	}
	switch format {
	case "json":
		m.Format = FormatJSON
	case "parquet":
		m.Format = FormatParquet
	default:
		return nil, ErrFormat
	}
	return m, nil
}

func parseBucket(raw json.RawMessage) (routing.BucketID, error) {
	var b routing.BucketID
	if isNull(raw) {
		return b, errors.New("missing bucket")
	}
	obj, err := decodeObject(raw)
	if err != nil {
		return b, err
	}
	var errs []error
	var e error
	b.TableID, e = decodeString(obj["table_id"])
	errs = append(errs, e)
	if isNull(obj["partition_key"]) {
		errs = append(errs, errors.New("missing partition key"))
	} else {
		b.PartitionKey, e = parseByteArray(obj["partition_key"])
		errs = append(errs, e)
	}
	strategy, e := decodeString(obj["strategy"])
	errs = append(errs, e)
	switch strategy {
	case "calendar_year_utc", "calendar_month_utc", "calendar_day_utc":
		b.Strategy, _ = routing.ParseStrategy(strategy)
	default:
		errs = append(errs, routing.ErrUnknownStrategy)
	}
	b.Key, e = decodeString(obj["key"])
	errs = append(errs, e)
	if strings.TrimSpace(b.Key) == "" {
		errs = append(errs, errors.New("blank bucket key"))
	}
	b.Start, e = decodeTime(obj["start"])
	errs = append(errs, e)
	b.End, e = decodeTime(obj["end"])
	errs = append(errs, e)
	return b, errors.Join(errs...)
}

// decodeTime decodes a required RFC 3339 string (chrono's DateTime<Utc> serde form).
func decodeTime(raw json.RawMessage) (time.Time, error) {
	s, err := decodeString(raw)
	if err != nil {
		return time.Time{}, err
	}
	return parseRFC3339(s)
}

// Validate runs the manifest checks of the reference reader's step 2, in its order: version 4
// (ErrManifestVersion), schema_version 2 (ErrSchemaVersion), a non-empty payload key
// (ErrEmptyPayloadKey), clustering key exactly ["event_time","sort_key"] (ErrClusteringKey).
func (m *Manifest) Validate() error {
	switch {
	case m.Version != ManifestVersion:
		return ErrManifestVersion
	case m.SchemaVersion != RecordSchemaVersion:
		return ErrSchemaVersion
	case m.PayloadKey == "":
		return ErrEmptyPayloadKey
	case !slices.Equal(m.ClusteringKey, clusteringKey):
		return ErrClusteringKey
	}
	return nil
}
