package query

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// specCases are fragments as Fragments plans them, and edges of every field.
func specCases() []fragmentSpec {
	return []fragmentSpec{
		{},
		{Now: 1_733_000_000_000_000_000},
		{Window: &[2]int64{-5, math.MaxInt64}, Now: -1},
		{Window: &[2]int64{math.MinInt64, 0}},
		{Now: 7, Pins: []pinSpec{
			{Partition: []byte("ORD"), Start: 978_307_200_000_000_000, Generation: 0, Route: "0123456789abcdef"},
			{Partition: []byte("ORD"), Start: 980_985_600_000_000_000, Generation: 12, Route: "fedcba9876543210"},
			{Partition: []byte{0, 0xff, 'b'}, Start: math.MinInt64, Generation: -1, Route: "not-hex-at-all"},
			{Partition: []byte{0, 0xff, 'b'}, Start: math.MaxInt64, Generation: math.MaxInt64 - 1, Route: "0123456789ABCDEF"},
			{Partition: []byte{}, Start: 0, Generation: 3, Route: ""},
			{Partition: []byte("ORD"), Start: 1, Generation: 1, Route: "0123456789abcde"},
		}},
	}
}

// normal gives a decoded spec the shape of the encoded one (an empty partition or pin list
// and nil are the same bytes).
func normal(s fragmentSpec) fragmentSpec {
	if len(s.Pins) == 0 {
		s.Pins = nil
	}
	for i := range s.Pins {
		if len(s.Pins[i].Partition) == 0 {
			s.Pins[i].Partition = []byte{}
		}
	}
	return s
}

func TestFragmentSpecRoundTrip(t *testing.T) {
	for i, want := range specCases() {
		b := encodeSpec(want)
		got, err := decodeSpec(b)
		if err != nil {
			t.Fatalf("case %d: decode: %v", i, err)
		}
		if !reflect.DeepEqual(normal(got), normal(want)) {
			t.Errorf("case %d: decoded %+v, want %+v", i, got, want)
		}
		// Every strict prefix and any trailing byte is refused.
		for n := range len(b) {
			if _, err := decodeSpec(b[:n]); err == nil {
				t.Errorf("case %d: a prefix of %d of %d bytes decoded", i, n, len(b))
			}
		}
		if _, err := decodeSpec(append(b[:len(b):len(b)], 0)); err == nil {
			t.Errorf("case %d: a trailing byte decoded", i)
		}
		// The JSON form of earlier releases is still read.
		js, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		old, err := decodeSpec(js)
		if err != nil || !reflect.DeepEqual(normal(old), normal(want)) {
			t.Errorf("case %d: JSON form decoded %+v, %v; want %+v", i, old, err, want)
		}
	}
}

// TestFragmentSpecSize checks the point of the binary form: an analytical query pinning 229
// partitions × 6 archived month buckets fits in a fraction of its JSON form.
func TestFragmentSpecSize(t *testing.T) {
	var spec fragmentSpec
	spec.Now = 1_733_000_000_000_000_000
	for p := range 229 {
		for m := range 6 {
			spec.Pins = append(spec.Pins, pinSpec{Partition: []byte{'A' + byte(p%26), 'A' + byte(p/26), 'X'},
				Start: 978_307_200_000_000_000 + int64(m)*2_678_400_000_000_000, Generation: 0, Route: "0123456789abcdef"})
		}
	}
	js, _ := json.Marshal(spec)
	bin := encodeSpec(spec)
	if len(bin)*3 > len(js) {
		t.Errorf("binary spec %d bytes, JSON %d: expected under a third", len(bin), len(js))
	}
	t.Logf("1,374 pins: binary %d bytes, JSON %d bytes", len(bin), len(js))
}

// FuzzFragmentSpec decodes arbitrary ticket specs: never a panic, and whatever decodes
// re-encodes to a spec that decodes equal (the binary form is canonical up to grouping).
func FuzzFragmentSpec(f *testing.F) {
	for _, s := range specCases() {
		f.Add(encodeSpec(s))
		js, _ := json.Marshal(s)
		f.Add(js)
	}
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzcount.Add()
		spec, err := decodeSpec(b)
		if err != nil {
			return
		}
		again, err := decodeSpec(encodeSpec(spec))
		if err != nil {
			t.Fatalf("re-encoded spec refused: %v", err)
		}
		if !reflect.DeepEqual(normal(again), normal(spec)) {
			t.Fatalf("re-encoded spec decoded %+v, want %+v", again, spec)
		}
	})
}
