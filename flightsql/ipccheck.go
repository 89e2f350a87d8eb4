package flightsql

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
)

// A client's DoPut stream is decoded by arrow-go's IPC reader, which trusts the lengths an
// IPC message's flatbuffer header declares: a schema message of a few hundred bytes that
// claims billions of fields, or a compressed buffer that claims a terabyte uncompressed, makes
// it allocate that much, and the process dies of it (a fatal out-of-memory error, which no
// recover catches). checkIPCMessage walks the header first, bounds-checking every table,
// vector and string the reader will read and every count it will allocate by: whatever it
// lets through, the reader allocates in proportion to the message's own bytes.

// errIPCMessage refuses a DoPut message whose header or body is malformed or declares more
// than it holds. It names nothing of the message.
var errIPCMessage = status.Error(codes.InvalidArgument, "the DoPut stream holds a malformed Arrow IPC message")

// Bounds of a DoPut message beyond its own bytes: the fields of a schema (nested ones
// included) and the uncompressed size of one compressed buffer. Parameters are one row of a
// statement's parameters, at most MaxBindingBytes. A schema's fields are as many as
// PostgreSQL's parameters can be (65535, the count of its protocol's Bind message: ADBC binds
// one column per parameter); each costs the reader a Field of its own, a few hundred bytes.
const (
	maxIPCFields           = 65535
	maxIPCUncompressedSize = 4 * MaxBindingBytes
)

// errTooManyFields is the refusal of a DoPut schema of more than maxIPCFields fields: more
// parameters than PostgreSQL takes, its program_limit_exceeded (54000).
var errTooManyFields = querylog.Refusal(codes.InvalidArgument, fmt.Sprintf("the parameters are more than %d columns: at most %d parameters are taken, as in PostgreSQL", maxIPCFields, maxIPCFields), "", "54000")

// errFieldCount is checkField's error past maxIPCFields fields.
var errFieldCount = errors.New("flightsql: too many fields")

// Tables and fields of Arrow's Message.fbs that the reader reads (field numbers, 0-based).
const (
	msgHeaderType = 1 // Message.header_type (MessageHeader union tag)
	msgHeader     = 2 // Message.header
	msgMetadata   = 4 // Message.custom_metadata

	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3

	schemaFields   = 1
	schemaMetadata = 2
	schemaFeatures = 3

	fieldName       = 0
	fieldTypeType   = 2
	fieldType       = 3
	fieldDictionary = 4
	fieldChildren   = 5
	fieldMetadata   = 6

	typeUnion      = 14 // Type union tag of Union
	unionTypeIDs   = 1
	dictIndexType  = 1
	dictBatchData  = 1
	batchNodes     = 1
	batchBuffers   = 2
	batchCompress  = 3
	batchVariadics = 4
)

// fbuf is a flatbuffer whose every read is bounds-checked.
type fbuf []byte

var errFlatbuffer = errors.New("flightsql: malformed flatbuffer")

func (b fbuf) u32(at int) (int, error) {
	if at < 0 || at+4 > len(b) {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint32(b[at:])), nil
}

func (b fbuf) u16(at int) (int, error) {
	if at < 0 || at+2 > len(b) {
		return 0, errFlatbuffer
	}
	return int(binary.LittleEndian.Uint16(b[at:])), nil
}

// field returns the absolute position of field i of the table at pos, or 0 when absent.
func (b fbuf) field(pos, i int) (int, error) {
	if pos < 0 || pos+4 > len(b) {
		return 0, errFlatbuffer
	}
	vt := pos - int(int32(binary.LittleEndian.Uint32(b[pos:])))
	size, err := b.u16(vt)
	if err != nil {
		return 0, err
	}
	if 4+2*i >= size { // as flatbuffers' Table.Offset: present when inside the vtable
		return 0, nil
	}
	off, err := b.u16(vt + 4 + 2*i)
	if err != nil || off == 0 {
		return 0, err
	}
	if pos+off >= len(b) {
		return 0, errFlatbuffer
	}
	return pos + off, nil
}

// table returns the position of the table field i of the table at pos refers to (0: absent).
func (b fbuf) table(pos, i int) (int, error) {
	at, err := b.field(pos, i)
	if err != nil || at == 0 {
		return 0, err
	}
	off, err := b.u32(at)
	if err != nil {
		return 0, err
	}
	t := at + off
	if t+4 > len(b) {
		return 0, errFlatbuffer
	}
	return t, nil
}

// vector returns the position of the first element and the length of the vector field i of
// the table at pos (elements of elem bytes), after checking it lies inside b (0, 0: absent).
func (b fbuf) vector(pos, i, elem int) (start, n int, err error) {
	at, err := b.field(pos, i)
	if err != nil || at == 0 {
		return 0, 0, err
	}
	off, err := b.u32(at)
	if err != nil {
		return 0, 0, err
	}
	n, err = b.u32(at + off)
	if err != nil {
		return 0, 0, err
	}
	start = at + off + 4
	if n > (len(b)-start)/elem {
		return 0, 0, errFlatbuffer
	}
	return start, n, nil
}

// tables checks the vector of tables field i of the table at pos and calls fn with each.
func (b fbuf) tables(pos, i int, fn func(t int) error) error {
	start, n, err := b.vector(pos, i, 4)
	if err != nil {
		return err
	}
	for k := range n {
		at := start + 4*k
		off, err := b.u32(at)
		if err != nil {
			return err
		}
		if at+off+4 > len(b) {
			return errFlatbuffer
		}
		if err := fn(at + off); err != nil {
			return err
		}
	}
	return nil
}

// keyValues checks a custom_metadata vector (KeyValue tables of two strings).
func (b fbuf) keyValues(pos, i int) error {
	return b.tables(pos, i, func(t int) error {
		for _, f := range []int{0, 1} {
			if _, _, err := b.vector(t, f, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkField checks a Field table and its children, counting fields in *count.
func (b fbuf) checkField(pos int, count *int, depth int) error {
	if *count++; *count > maxIPCFields {
		return errFieldCount
	}
	if depth > 64 {
		return errFlatbuffer
	}
	if _, _, err := b.vector(pos, fieldName, 1); err != nil {
		return err
	}
	tt, err := b.field(pos, fieldTypeType)
	if err != nil {
		return err
	}
	typ, err := b.table(pos, fieldType)
	if err != nil {
		return err
	}
	if tt != 0 && b[tt] == typeUnion && typ != 0 {
		if _, _, err := b.vector(typ, unionTypeIDs, 4); err != nil {
			return err
		}
	}
	if dict, err := b.table(pos, fieldDictionary); err != nil {
		return err
	} else if dict != 0 {
		if _, err := b.table(dict, dictIndexType); err != nil {
			return err
		}
	}
	if err := b.keyValues(pos, fieldMetadata); err != nil {
		return err
	}
	return b.tables(pos, fieldChildren, func(t int) error { return b.checkField(t, count, depth+1) })
}

// checkBatch checks a RecordBatch table against the message body: its nodes, buffers and
// variadic counts lie inside the header, every buffer inside the body, and a compressed
// buffer's declared uncompressed size is bounded.
func (b fbuf) checkBatch(pos int, body []byte) error {
	if _, _, err := b.vector(pos, batchNodes, 16); err != nil {
		return err
	}
	if _, _, err := b.vector(pos, batchVariadics, 8); err != nil {
		return err
	}
	compressed, err := b.table(pos, batchCompress)
	if err != nil {
		return err
	}
	start, n, err := b.vector(pos, batchBuffers, 16)
	if err != nil {
		return err
	}
	for k := range n {
		off := int64(binary.LittleEndian.Uint64(b[start+16*k:]))
		size := int64(binary.LittleEndian.Uint64(b[start+16*k+8:]))
		if off < 0 || size < 0 || off > int64(len(body)) || size > int64(len(body))-off {
			return errFlatbuffer
		}
		if compressed != 0 && size >= 8 {
			if u := int64(binary.LittleEndian.Uint64(body[off:])); u != -1 && (u < 0 || u > maxIPCUncompressedSize) {
				return errFlatbuffer
			}
		}
	}
	return nil
}

// checkIPCMessage checks an Arrow IPC message (its flatbuffer header and its body) before
// arrow-go's reader decodes it: see the comment at the top of this file. An empty header is
// left to the reader (the end of the stream).
func checkIPCMessage(header, body []byte) error {
	if len(header) == 0 {
		return nil
	}
	b := fbuf(header)
	root, err := b.u32(0)
	if err != nil || root+4 > len(b) {
		return errIPCMessage
	}
	if err := b.keyValues(root, msgMetadata); err != nil {
		return errIPCMessage
	}
	tag, err := b.field(root, msgHeaderType)
	if err != nil || tag == 0 {
		return errIPCMessage
	}
	hdr, err := b.table(root, msgHeader)
	if err != nil || hdr == 0 {
		return errIPCMessage
	}
	switch b[tag] {
	case headerSchema:
		count := 0
		err = b.tables(hdr, schemaFields, func(t int) error { return b.checkField(t, &count, 0) })
		if err == nil {
			err = b.keyValues(hdr, schemaMetadata)
		}
		if err == nil {
			_, _, err = b.vector(hdr, schemaFeatures, 8)
		}
	case headerRecordBatch:
		err = b.checkBatch(hdr, body)
	case headerDictionaryBatch:
		var data int
		if data, err = b.table(hdr, dictBatchData); err == nil && data != 0 {
			err = b.checkBatch(data, body)
		}
	default:
		err = errFlatbuffer // tensors are no parameters
	}
	if errors.Is(err, errFieldCount) {
		return errTooManyFields
	}
	if err != nil {
		return errIPCMessage
	}
	return nil
}

// checkedPutStream is a DoPut stream whose every message is checked (checkIPCMessage) before
// the reader sees it: a malformed one ends the stream with errIPCMessage.
type checkedPutStream struct {
	flight.FlightService_DoPutServer
}

func (s checkedPutStream) Recv() (*flight.FlightData, error) {
	fd, err := s.FlightService_DoPutServer.Recv()
	if err != nil {
		return fd, err
	}
	if err := checkIPCMessage(fd.GetDataHeader(), fd.GetDataBody()); err != nil {
		return nil, err
	}
	return fd, nil
}

// CheckedPutStream returns stream with every message the client sends checked before arrow-go's
// IPC reader decodes it: a message whose header declares more than it holds (fields, vectors,
// buffers, a compressed buffer's size beyond four times MaxBindingBytes) ends the call with
// INVALID_ARGUMENT instead of taking the process's memory. The server's DoPut passes its
// stream through it.
func CheckedPutStream(stream flight.FlightService_DoPutServer) flight.FlightService_DoPutServer {
	return checkedPutStream{stream}
}

// SplitIPCStream splits the bytes of an Arrow IPC stream into the FlightData messages a DoPut
// of it sends (each message's flatbuffer header and body; desc, when set, on the first), reading
// only the framing and each header's body length, never the messages themselves: it replays a
// recorded stream, malformed ones included, as a client would send it (the e2e and fuzz tests
// send fuzzing's DoPut crashers with it). ok is false for bytes that do not frame (a body past
// the end, a negative length): a client cannot send those, gRPC frames every message.
func SplitIPCStream(raw []byte, desc *flight.FlightDescriptor) (msgs []*flight.FlightData, ok bool) {
	for len(raw) >= 8 && binary.LittleEndian.Uint32(raw) == 0xFFFFFFFF {
		n := int(binary.LittleEndian.Uint32(raw[4:]))
		if n == 0 {
			break
		}
		if n < 0 || n > len(raw)-8 {
			return nil, false
		}
		hdr := raw[8 : 8+n]
		raw = raw[8+n:]
		bodyLen, ok := messageBodyLength(hdr)
		if !ok || bodyLen > int64(len(raw)) {
			return nil, false
		}
		fd := &flight.FlightData{DataHeader: hdr, DataBody: raw[:bodyLen]}
		raw = raw[bodyLen:]
		if len(msgs) == 0 {
			fd.FlightDescriptor = desc
		}
		msgs = append(msgs, fd)
	}
	return msgs, len(msgs) > 0
}

// messageBodyLength reads Message.bodyLength (field 3, a long) of a Message flatbuffer.
func messageBodyLength(hdr []byte) (int64, bool) {
	b := fbuf(hdr)
	root, err := b.u32(0)
	if err != nil {
		return 0, false
	}
	at, err := b.field(root, 3)
	if err != nil || at+8 > len(b) {
		return 0, false
	}
	if at == 0 {
		return 0, true
	}
	n := int64(binary.LittleEndian.Uint64(b[at:]))
	return n, n >= 0
}
