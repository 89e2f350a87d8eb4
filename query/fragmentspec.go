package query

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
)

// A fragment's spec travels in its ticket (signed by flightsql) and is decoded on every DoGet:
// an analytical query over every partition pins a thousand archived buckets or more, so the
// form is compact and cheap to read. Binary, all integers varints (encoding/binary):
//
//	0x01                      version
//	flags                     bit 0: a window follows; bit 1: a planning instant follows
//	[window start, end]       zig-zag varints, Unix ns UTC
//	[now]                     zig-zag varint, Unix ns UTC
//	partitions                uvarint: the number of partition groups, then for each:
//	  key length, key bytes   uvarint and the partition key
//	  pins                    uvarint: the number of pins of the partition, then for each:
//	    start                 zig-zag varint: the first pin's start, then the delta from the previous pin's
//	    generation + 1        uvarint (a manifest key without a generation is -1, stored 0)
//	    route                 a tag byte: 0 then 8 bytes (a 16-digit lowercase hex id, its bytes),
//	                          or 1 then uvarint length and the id's bytes (any other id)
//
// Pins of one partition are grouped (fragmentOf lists them partition by partition); a
// partition may appear in more than one group. The JSON form of earlier releases (a '{'
// first byte, fragmentSpec's tags) is still read, so a ticket planned by an older replica
// is served by a newer one.
const specVersion = 1

const (
	specWindow = 1 << iota
	specNow
)

// maxSpecCount bounds any count read from a spec: a count larger than the bytes left cannot
// be honest (every element takes at least one byte), so a forged ticket cannot make the
// decoder allocate more than its own length.
func maxSpecCount(n uint64, left int) bool { return n <= uint64(left) }

// encodeSpec returns the binary form of spec.
func encodeSpec(spec fragmentSpec) []byte {
	b := make([]byte, 0, 32+len(spec.Pins)*16)
	flags := byte(0)
	if spec.Window != nil {
		flags |= specWindow
	}
	if spec.Now != 0 {
		flags |= specNow
	}
	b = append(b, specVersion, flags)
	if spec.Window != nil {
		b = binary.AppendVarint(b, spec.Window[0])
		b = binary.AppendVarint(b, spec.Window[1])
	}
	if spec.Now != 0 {
		b = binary.AppendVarint(b, spec.Now)
	}
	// Group consecutive pins of one partition: runs[k] is the index where the k-th run starts.
	var runs []int
	for i, p := range spec.Pins {
		if i == 0 || !bytes.Equal(p.Partition, spec.Pins[i-1].Partition) {
			runs = append(runs, i)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(runs)))
	for k, at := range runs {
		end := len(spec.Pins)
		if k+1 < len(runs) {
			end = runs[k+1]
		}
		g := spec.Pins[at:end]
		b = binary.AppendUvarint(b, uint64(len(g[0].Partition)))
		b = append(b, g[0].Partition...)
		b = binary.AppendUvarint(b, uint64(len(g)))
		prev := int64(0)
		for _, p := range g {
			b = binary.AppendVarint(b, p.Start-prev) // wraps for extreme starts; the decoder wraps back
			prev = p.Start
			b = binary.AppendUvarint(b, uint64(p.Generation+1))
			if raw, ok := hexRoute(p.Route); ok {
				b = append(b, 0)
				b = append(b, raw[:]...)
			} else {
				b = append(b, 1)
				b = binary.AppendUvarint(b, uint64(len(p.Route)))
				b = append(b, p.Route...)
			}
		}
	}
	return b
}

// hexRoute returns the 8 bytes of a route id of 16 lowercase hex digits (routing.RouteID's form).
func hexRoute(route string) (raw [8]byte, ok bool) {
	if len(route) != 16 {
		return raw, false
	}
	for i := 0; i < 16; i++ {
		if c := route[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return raw, false
		}
	}
	_, err := hex.Decode(raw[:], []byte(route))
	return raw, err == nil
}

// errSpec is any malformed spec; callers answer ErrBadFragment.
var errSpec = errors.New("query: malformed fragment spec")

// decodeSpec reads a spec in the binary form (or the JSON form of earlier releases). A
// malformed spec (truncated, trailing bytes, an unknown version or flag, a count larger than
// the bytes left) is errSpec; it never panics, and allocates at most in proportion to b.
func decodeSpec(b []byte) (fragmentSpec, error) {
	var spec fragmentSpec
	if len(b) > 0 && b[0] == '{' {
		if json.Unmarshal(b, &spec) != nil {
			return fragmentSpec{}, errSpec
		}
		return spec, nil
	}
	d := specDecoder{b: b}
	if d.byte() != specVersion {
		return fragmentSpec{}, errSpec
	}
	flags := d.byte()
	if flags&^(specWindow|specNow) != 0 {
		return fragmentSpec{}, errSpec
	}
	if flags&specWindow != 0 {
		spec.Window = &[2]int64{d.varint(), d.varint()}
	}
	if flags&specNow != 0 {
		spec.Now = d.varint()
	}
	groups := d.count()
	for range groups {
		part := d.bytes(d.count())
		n := d.count()
		if d.err != nil {
			break
		}
		if spec.Pins == nil {
			// A pin with an 8-byte route takes at least 11 bytes: room for the usual ones.
			spec.Pins = make([]pinSpec, 0, max(n, len(d.b)/11))
		}
		start := int64(0)
		for range n {
			start += d.varint()
			gen := d.uvarint()
			if gen > math.MaxInt64 {
				d.err = errSpec
			}
			p := pinSpec{Partition: part, Start: start, Generation: int64(gen) - 1}
			switch d.byte() {
			case 0:
				p.Route = hex.EncodeToString(d.bytes(8))
			case 1:
				p.Route = string(d.bytes(d.count()))
			default:
				d.err = errSpec
			}
			if d.err != nil {
				break
			}
			spec.Pins = append(spec.Pins, p)
		}
	}
	if d.err != nil || len(d.b) != 0 {
		return fragmentSpec{}, errSpec
	}
	return spec, nil
}

// specDecoder reads a binary spec; the first error sticks and every later read returns zero.
type specDecoder struct {
	b   []byte
	err error
}

func (d *specDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errSpec
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *specDecoder) uvarint() uint64 { return nextVarint(d, binary.Uvarint) }

func (d *specDecoder) varint() int64 { return nextVarint(d, binary.Varint) }

// nextVarint reads one varint with read (binary.Uvarint or binary.Varint).
func nextVarint[T uint64 | int64](d *specDecoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err = errSpec
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a uvarint count, at most the bytes left (maxSpecCount).
func (d *specDecoder) count() int {
	n := d.uvarint()
	if d.err == nil && !maxSpecCount(n, len(d.b)) {
		d.err = errSpec
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

// bytes returns the next n bytes (sharing b's memory).
func (d *specDecoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errSpec
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}
