package archive

import (
	"encoding/json"
	"errors"
	"math"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// JSON payload (docs/pulpitum-v4.md §1.5): a JSON array of
// {"partition_key":[u8…],"event_time":"RFC 3339","sort_key":[u8…],"value":[u8…]}, written
// compactly in that field order, times in chrono's AutoSi form (see appendRFC3339).

// encodeJSONPayload serialises recs exactly as the reference's serde_json::to_vec does.
func encodeJSONPayload(recs []routing.Record) []byte {
	size := 2
	for i := range recs {
		size += 80 + 4*(len(recs[i].PartitionKey)+len(recs[i].SortKey)+len(recs[i].Value))
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i := range recs {
		r := &recs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"partition_key":`...)
		b = appendByteArray(b, r.PartitionKey)
		b = append(b, `,"event_time":"`...)
		b = appendRFC3339(b, r.EventTime)
		b = append(b, `","sort_key":`...)
		b = appendByteArray(b, r.SortKey)
		b = append(b, `,"value":`...)
		b = appendByteArray(b, r.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

// jsonBytes decodes serde's Vec<u8> form (an array of integers 0–255).
type jsonBytes []byte

func (j *jsonBytes) UnmarshalJSON(raw []byte) error {
	v, err := parseByteArray(raw)
	*j = v
	return err
}

// jsonTime decodes chrono's DateTime<Utc> form.
type jsonTime time.Time

func (j *jsonTime) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	t, err := parseRFC3339(s)
	*j = jsonTime(t)
	return err
}

type jsonRecord struct {
	PartitionKey *jsonBytes `json:"partition_key"`
	EventTime    *jsonTime  `json:"event_time"`
	SortKey      *jsonBytes `json:"sort_key"`
	Value        *jsonBytes `json:"value"`
}

// decodeJSONPayload decodes a JSON payload; every record must carry all four fields (unknown
// fields are ignored, as serde does). Failures are ErrPayloadDecode. The common compact form is
// parsed by a dedicated scanner; anything it does not recognise (escapes, unknown fields, odd
// spacing it cannot follow) is decoded again by encoding/json, so the scanner only ever
// accepts what the general decoder accepts too.
func decodeJSONPayload(data []byte) ([]routing.Record, error) {
	if recs, ok := scanJSONPayload(data); ok {
		return recs, nil
	}
	return decodeJSONPayloadStd(data)
}

// decodeJSONPayloadStd is decodeJSONPayload with encoding/json, without scanJSONPayload's
// fast path (which must agree with it: FuzzJSONPayload).
func decodeJSONPayloadStd(data []byte) ([]routing.Record, error) {
	var raw []jsonRecord
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, ErrPayloadDecode
	}
	recs := make([]routing.Record, len(raw))
	for i := range raw {
		r := &raw[i]
		if r.PartitionKey == nil || r.EventTime == nil || r.SortKey == nil || r.Value == nil {
			return nil, ErrPayloadDecode
		}
		recs[i] = routing.Record{
			PartitionKey: []byte(*r.PartitionKey),
			EventTime:    time.Time(*r.EventTime),
			SortKey:      []byte(*r.SortKey),
			Value:        []byte(*r.Value),
		}
	}
	return recs, nil
}

// validateRecords is the reference reader's step 6 (and the writer's pre-check): every record
// has the bucket's partition key and an event time in [start, end) (ErrRecordOutsideBucket),
// and no record sorts after its successor by (event_time, sort_key) with bytewise sort keys
// (ErrRecordsUnsorted; equal neighbours pass, as in the reference).
func validateRecords(b routing.BucketID, recs []routing.Record) error {
	for i := range recs {
		r := &recs[i]
		if string(r.PartitionKey) != string(b.PartitionKey) || !b.Range().Contains(r.EventTime) {
			return ErrRecordOutsideBucket
		}
	}
	for i := 1; i < len(recs); i++ {
		if routing.Compare(recs[i-1].EventTime, recs[i-1].SortKey, recs[i].EventTime, recs[i].SortKey) > 0 {
			return ErrRecordsUnsorted
		}
	}
	return nil
}

// Limits of a nanosecond timestamp in an int64 (1677-09-21 to 2262-04-11).
var (
	minNanoTime = time.Unix(0, math.MinInt64).UTC()
	maxNanoTime = time.Unix(0, math.MaxInt64).UTC()
)

var errTimeNotNanos = errors.New("archive: event time cannot be represented as nanoseconds since the epoch")

// rangeIndex returns the index span of sorted recs whose event times lie in r.
func rangeIndex(recs []routing.Record, r routing.TimeRange) (int, int) {
	lo := searchTime(recs, r.Start)
	hi := searchTime(recs, r.End)
	return lo, max(hi, lo)
}

// searchTime returns the first index whose event time is not before t.
func searchTime(recs []routing.Record, t time.Time) int {
	i, j := 0, len(recs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if recs[h].EventTime.Before(t) {
			i = h + 1
		} else {
			j = h
		}
	}
	return i
}

// scanJSONPayload is the fast path of decodeJSONPayload. It reports ok=false as soon as the
// input leaves the shape it handles: an array of objects with exactly the four known fields,
// byte arrays of plain integers and event times without escapes.
func scanJSONPayload(data []byte) (recs []routing.Record, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return []routing.Record{}, skipSpace(data, i+1) == len(data)
	}
	recs = make([]routing.Record, 0, len(data)/128)
	for {
		var rec routing.Record
		var seen uint8
		if i >= len(data) || data[i] != '{' {
			return nil, false
		}
		i = skipSpace(data, i+1)
		for {
			if i >= len(data) || data[i] != '"' {
				return nil, false
			}
			end := i + 1
			for end < len(data) && data[end] != '"' && data[end] != '\\' {
				end++
			}
			if end >= len(data) || data[end] != '"' {
				return nil, false
			}
			name := data[i+1 : end]
			i = skipSpace(data, end+1)
			if i >= len(data) || data[i] != ':' {
				return nil, false
			}
			i = skipSpace(data, i+1)
			var bit uint8
			switch string(name) {
			case "partition_key":
				bit = 1
				rec.PartitionKey, i, ok = scanByteArray(data, i)
			case "event_time":
				bit = 2
				rec.EventTime, i, ok = scanTime(data, i)
			case "sort_key":
				bit = 4
				rec.SortKey, i, ok = scanByteArray(data, i)
			case "value":
				bit = 8
				rec.Value, i, ok = scanByteArray(data, i)
			default:
				return nil, false
			}
			if !ok || seen&bit != 0 {
				return nil, false
			}
			seen |= bit
			i = skipSpace(data, i)
			if i >= len(data) {
				return nil, false
			}
			if data[i] == ',' {
				i = skipSpace(data, i+1)
				continue
			}
			if data[i] != '}' || seen != 15 {
				return nil, false
			}
			i = skipSpace(data, i+1)
			break
		}
		recs = append(recs, rec)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return recs, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// scanByteArray scans a JSON array of integers 0–255 starting at data[i].
func scanByteArray(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '[' {
		return nil, i, false
	}
	end := i + 1
	for end < len(data) && data[end] != ']' {
		end++
	}
	if end >= len(data) {
		return nil, i, false
	}
	v, err := parseByteArray(data[i : end+1])
	return v, end + 1, err == nil
}

// scanTime scans an escape-free JSON string holding an RFC 3339 time starting at data[i].
func scanTime(data []byte, i int) (time.Time, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return time.Time{}, i, false
	}
	end := i + 1
	for end < len(data) && data[end] != '"' && data[end] != '\\' && data[end] >= 0x20 {
		end++
	}
	if end >= len(data) || data[end] != '"' {
		return time.Time{}, i, false
	}
	t, err := parseRFC3339(string(data[i+1 : end]))
	return t, end + 1, err == nil
}
