package ops

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/freelist"
	"github.com/flightsrv/flightsrv/internal/pgnumfmt"
)

// JSON fields read column-at-a-time. A JSON function of URNPostgres whose document is a
// top-level input column and whose keys are constants (value->>'delay', value#>>'{a,b}',
// value->0), and a cast of such a ->> or #>> to int4, int8 or float8 ((value->>'delay')::int)
// or numeric (numeric_cast of the text: (value->>'distance')::numeric(10,0), and the casts of
// round and trunc), compile to a jsonFieldNode. Evaluating one extracts, in one pass over the batch's column,
// every field that the operator's expressions read from that column (Project registers those
// of all its expressions, Filter those of its predicate; jsonShare), straight into Arrow
// arrays: text without intermediate Go strings, and the casts fused, parsing the field's bytes
// into int32, int64, float64 or decimal128 as the cast of the text computed per row reads it
// (int4in, int8in and float8in: pgnumfmt.IntIn and FloatIn, textcast.go; numeric_in and the
// cast's rounding: textNumeric, numeric.go), with the same errors. Every document is scanned
// once per batch and operator however many fields and expressions read it (jsonscan.go).
// Other JSON calls (keys computed per row, a document that is itself an expression) keep the
// per-row kernel of sqlfuncs.go, which uses the same scanner.

// jsonOut is what a jsonField yields.
type jsonOut uint8

const (
	outJSON    jsonOut = iota // -> and #>: the value's JSON text (binary)
	outText                   // ->> and #>>: text (utf8)
	outInt32                  // (->>)::int4
	outInt64                  // (->>)::int8
	outFloat                  // (->>)::float8
	outNumeric                // numeric_cast(mode, places, precision, ->>)
)

// jsonField is one JSON access with constant keys over top-level input column col.
type jsonField struct {
	col   int
	steps []jsonStep
	path  bool // #> and #>>: text keys index arrays
	out   jsonOut
	num   rounding // outNumeric's cast
}

// pathKey identifies the value a field reads, whatever it yields.
func (f *jsonField) pathKey() string {
	k := fmt.Sprintf("%d/%t", f.col, f.path)
	for _, s := range f.steps {
		if s.idx {
			k += fmt.Sprintf("/#%d", s.index)
		} else {
			k += "/" + strconv.Quote(s.key)
		}
	}
	return k
}

func (f *jsonField) outKey() string { return fmt.Sprintf("%s>%s", f.pathKey(), f.outName()) }

// outName names what f yields: json, text, int4, int8, float8 or numeric(mode,places,precision).
func (f *jsonField) outName() string {
	if f.out == outNumeric {
		return fmt.Sprintf("numeric(%s,%d,%d)", f.num.mode, f.num.places, f.num.prec)
	}
	return [...]string{outJSON: "json", outText: "text", outInt32: "int4", outInt64: "int8", outFloat: "float8"}[f.out]
}

func (f *jsonField) typ() arrow.DataType {
	switch f.out {
	case outText:
		return arrow.BinaryTypes.String
	case outInt32:
		return arrow.PrimitiveTypes.Int32
	case outInt64:
		return arrow.PrimitiveTypes.Int64
	case outFloat:
		return arrow.PrimitiveTypes.Float64
	case outNumeric:
		return numericOut(f.num.s)
	}
	return arrow.BinaryTypes.Binary
}

// jsonFieldOf returns the jsonField of f when f is a JSON function over a top-level text or
// binary column with constant, non-null keys.
func (c *compiler) jsonFieldOf(e expr.Expression) (*jsonField, bool) {
	f, ok := e.(*expr.ScalarFunction)
	if !ok || !isJSONCall(f) || f.NArgs() < 2 {
		return nil, false
	}
	jf := &jsonField{}
	switch f.Name() {
	case "json_get":
	case "json_get_text":
		jf.out = outText
	case "json_path":
		jf.path = true
	case "json_path_text":
		jf.path, jf.out = true, outText
	default:
		return nil, false
	}
	if !jf.path && f.NArgs() != 2 {
		return nil, false
	}
	ref, ok := f.Arg(0).(*expr.FieldReference)
	if !ok || ref.Root != expr.RootReference {
		return nil, false
	}
	sf, ok := ref.Reference.(*expr.StructFieldRef)
	if !ok || sf.Child != nil {
		return nil, false
	}
	if c.shred != nil {
		c.shred.inField = true
	}
	n, err := c.column(ref, int(sf.Field))
	if c.shred != nil {
		c.shred.inField = false
	}
	if err != nil || !isText(c.in.Field(int(sf.Field)).Type) {
		return nil, false
	}
	jf.col = int(n.(colNode))
	for i := 1; i < f.NArgs(); i++ {
		switch k := f.Arg(i).(type) {
		case *expr.PrimitiveLiteral[string]:
			jf.steps = append(jf.steps, jsonStep{key: k.Value})
		case *expr.PrimitiveLiteral[int64]:
			if jf.path {
				return nil, false
			}
			jf.steps = append(jf.steps, jsonStep{index: k.Value, idx: true})
		case *expr.PrimitiveLiteral[int32]:
			if jf.path {
				return nil, false
			}
			jf.steps = append(jf.steps, jsonStep{index: int64(k.Value), idx: true})
		default:
			return nil, false
		}
	}
	return jf, true
}

// fusedCast returns the jsonField of cast v when it casts a ->> or #>> field to int4, int8 or
// float8.
func (c *compiler) fusedCast(v *expr.Cast) (*jsonField, bool) {
	if v.FailureBehavior == types.BehaviorReturnNil {
		return nil, false
	}
	jf, ok := c.jsonFieldOf(v.Input)
	if !ok || jf.out != outText {
		return nil, false
	}
	to, _, err := arrowTypeOf(v.Type, c.ext)
	if err != nil {
		return nil, false
	}
	switch to.ID() {
	case arrow.INT32:
		jf.out = outInt32
	case arrow.INT64:
		jf.out = outInt64
	case arrow.FLOAT64:
		jf.out = outFloat
	default:
		return nil, false
	}
	return jf, true
}

// fusedNumeric returns the jsonField of f when f is numeric_cast(mode, places, precision) of a
// ->> or #>> field.
func (c *compiler) fusedNumeric(f *expr.ScalarFunction) (*jsonField, bool) {
	if f.ID().URN != URNPostgres || f.Name() != "numeric_cast" || f.NArgs() != 4 {
		return nil, false
	}
	enums := make([]string, 3)
	for i := range enums {
		e, ok := f.Arg(i).(types.Enum)
		if !ok {
			return nil, false
		}
		enums[i] = string(e)
	}
	rd, err := roundingOf(enums)
	x, ok := f.Arg(3).(expr.Expression)
	if err != nil || !ok {
		return nil, false
	}
	jf, ok := c.jsonFieldOf(x)
	if !ok || jf.out != outText {
		return nil, false
	}
	jf.out, jf.num = outNumeric, rd
	return jf, true
}

// jsonFieldNode evaluates a jsonField through the evaluation's jsonShare.
type jsonFieldNode struct{ f *jsonField }

func (n *jsonFieldNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	ev, _ := ctx.Value(jsonEvalKey{}).(*jsonEval)
	col := b.Column(n.f.col)
	var sh *jsonShare
	if ev != nil && ev.anon == b {
		// The rows of the batch Eval was given: its own column, which the operator's other
		// expressions read too.
		col, sh = ev.orig[n.f.col], ev.share
	} else {
		// A subset of them (a CASE branch's rows), or a type check.
		sh = newJSONShare()
		defer sh.reset()
	}
	a, err := sh.get(compute.GetAllocator(ctx), col, n.f)
	if err != nil {
		return nil, fmt.Errorf("ops: %s: %w", n.f.fnName(), err)
	}
	defer a.Release()
	return compute.NewDatum(a), nil
}

func (f *jsonField) fnName() string {
	switch {
	case f.out == outNumeric:
		return "numeric_cast"
	case f.path && f.out == outJSON:
		return "json_path"
	case f.path:
		return "json_path_text"
	case f.out == outJSON:
		return "json_get"
	}
	return "json_get_text"
}

// jsonEvalKey keys an Eval call's *jsonEval in its context.
type jsonEvalKey struct{}

// jsonEval is what an Eval call's jsonFieldNodes share: the batch the tree sees (anon), the
// columns it was made of as the caller gave them (orig: the share keys its extractions by
// them, so expressions of one operator find each other's) and the share.
type jsonEval struct {
	anon  arrow.RecordBatch
	orig  []arrow.Array
	share *jsonShare
}

// jsonShareKey keys an operator's *jsonShare in the context it evaluates its expressions
// with (WithJSONShare).
type jsonShareKey struct{}

// withJSONShare returns ctx carrying sh for the Eval calls of one operator's expressions on
// one batch; the operator resets sh once they all ran.
func withJSONShare(ctx context.Context, sh *jsonShare) context.Context {
	return context.WithValue(ctx, jsonShareKey{}, sh)
}

// jsonShare holds the JSON fields extracted from the columns of one batch, for the
// expressions of one operator: every field registered (want) for a column is extracted in
// the first pass over it, and each output array built once. It is owned by one goroutine; its
// arrays are released by reset.
type jsonShare struct {
	wanted map[int][]*jsonField // registered fields by column
	cols   []*jsonColumn
	scan   jsonScanner
	// Scratch of the extractions, lent by free lists shared by every query's operators (a
	// fragment's operators live for one bucket: a list of their own would start empty each
	// time).
	spanBufs   scratch[jsonSpan]
	statusBufs scratch[docStatus]
	// deferred are the evaluations of deferred expressions (deferred.go), by expression and
	// batch.
	deferred map[deferKey]*deferred
}

// The free lists of the extractions' scratch slices, kept across garbage collections
// (internal/freelist): a batch's spans of one path are at most routing's 8,192 rows of 24
// bytes (192 KiB), its statuses 8 KiB.
var (
	spanList   = freelist.New[*[]jsonSpan](16, 2<<20)
	statusList = freelist.New[*[]docStatus](16, 256<<10)
)

// scratch lends slices from a free list; giveBack returns every slice lent since the last one.
type scratch[T any] struct{ used []*[]T }

// get returns a slice of n elements whose content the caller overwrites, from list.
func (s *scratch[T]) get(list *freelist.List[*[]T], n int) []T {
	p, ok := list.Get()
	if !ok || cap(*p) < n {
		p = &[]T{}
		*p = make([]T, n)
	}
	*p = (*p)[:n]
	s.used = append(s.used, p)
	return *p
}

// giveBack returns every slice lent to list.
func (s *scratch[T]) giveBack(list *freelist.List[*[]T]) {
	var zero T
	for _, p := range s.used {
		list.Put(p, cap(*p)*int(unsafe.Sizeof(zero)))
	}
	clear(s.used)
	s.used = s.used[:0]
}

func newJSONShare() *jsonShare { return &jsonShare{wanted: map[int][]*jsonField{}} }

// want registers the fields of e.
func (sh *jsonShare) want(e *Expr) {
	for _, f := range e.jsonFields {
		sh.wanted[f.col] = append(sh.wanted[f.col], f)
	}
}

// reset releases what sh holds (the arrays it built; its callers hold their own references).
func (sh *jsonShare) reset() {
	for _, c := range sh.cols {
		for _, a := range c.outs {
			a.Release()
		}
		c.col.Release()
	}
	sh.cols = sh.cols[:0]
	for k, d := range sh.deferred {
		d.vals.Release()
		delete(sh.deferred, k)
	}
	sh.spanBufs.giveBack(spanList)
	sh.statusBufs.giveBack(statusList)
}

// jsonColumn is one column's extraction: the document statuses and, per path, each row's
// value.
type jsonColumn struct {
	col    arrow.Array // retained
	docs   docReader
	status []docStatus
	spans  map[string][]jsonSpan // by pathKey
	outs   map[string]arrow.Array
}

// get returns (retained) field f's array over column col.
func (sh *jsonShare) get(mem memory.Allocator, col arrow.Array, f *jsonField) (arrow.Array, error) {
	var jc *jsonColumn
	for _, c := range sh.cols {
		if c.col == col {
			jc = c
			break
		}
	}
	if jc == nil {
		docs, ok := docsOf(col)
		if !ok {
			return nil, fmt.Errorf("document is %s, not text", col.DataType())
		}
		col.Retain()
		jc = &jsonColumn{col: col, docs: docs, spans: map[string][]jsonSpan{}, outs: map[string]arrow.Array{}}
		sh.cols = append(sh.cols, jc)
		fields := append([]*jsonField{f}, sh.wanted[f.col]...)
		sh.extract(jc, fields)
	} else if _, ok := jc.spans[f.pathKey()]; !ok {
		sh.extract(jc, []*jsonField{f})
	}
	if a, ok := jc.outs[f.outKey()]; ok {
		a.Retain()
		return a, nil
	}
	a, err := jc.build(mem, f)
	if err != nil {
		return nil, err
	}
	jc.outs[f.outKey()] = a
	a.Retain()
	return a, nil
}

// extract scans jc's documents once for the paths of fields not extracted yet.
func (sh *jsonShare) extract(jc *jsonColumn, fields []*jsonField) {
	var paths []*jsonField
	var keys []string
	keyAt := map[string]int{}
	for _, f := range fields {
		pk := f.pathKey()
		if _, done := jc.spans[pk]; done {
			continue
		}
		jc.spans[pk] = nil
		paths = append(paths, f)
		if st := f.steps[0]; !st.idx {
			if _, ok := keyAt[st.key]; !ok {
				keyAt[st.key] = len(keys)
				keys = append(keys, st.key)
			}
		}
	}
	if len(paths) == 0 {
		return
	}
	n := jc.col.Len()
	fresh := jc.status == nil
	if fresh {
		jc.status = sh.statusBufs.get(statusList, n)
	}
	spans := make([][]jsonSpan, len(paths))
	first := make([]int, len(paths)) // the index in keys of each path's first key, -1: none
	for p, f := range paths {
		spans[p] = sh.spanBufs.get(spanList, n)
		first[p] = -1
		if !f.steps[0].idx {
			first[p] = keyAt[f.steps[0].key]
		}
	}
	top := make([]jsonSpan, len(keys))
	nulls := jc.col.NullN() > 0
	// The scanner on the stack: scanDoc stores each document (a pointer) in it, which in the
	// heap the collector's write barrier records at every row while a collection runs.
	sc := sh.scan
	defer func() { sh.scan.stack = sc.stack[:0] }()
	for i := range n {
		if nulls && jc.col.IsNull(i) {
			jc.status[i] = docNull
			continue
		}
		doc := jc.docs.at(i)
		sc.doc = doc
		kind, st := sc.scanSet(keys, top)
		jc.status[i] = st
		if st != docOK {
			continue
		}
		whole := docSpan(doc, kind)
		for p, f := range paths {
			v := whole
			steps := f.steps
			if kind == jObject && first[p] >= 0 {
				v = top[first[p]]
				steps = steps[1:]
			}
			for _, stp := range steps {
				if v.kind == jAbsent {
					break
				}
				v = walk(doc, v, stp, f.path)
			}
			spans[p][i] = v
		}
	}
	for p, f := range paths {
		jc.spans[f.pathKey()] = spans[p]
	}
}

// build makes field f's array from jc's extraction: first the first document that is not
// JSON fails it (as the per-row kernel fails before a cast sees its text), then each row's
// value is converted.
func (jc *jsonColumn) build(mem memory.Allocator, f *jsonField) (arrow.Array, error) {
	for _, st := range jc.status {
		if err := st.err(); err != nil {
			return nil, err
		}
	}
	spans := jc.spans[f.pathKey()]
	n := jc.col.Len()
	var scratch []byte
	// text returns row i's ->> text (valid until the next call), false for SQL NULL.
	text := func(i int) ([]byte, bool) {
		if jc.status[i] != docOK {
			return nil, false
		}
		var t []byte
		var ok bool
		t, ok = spanText(jc.docs.at(i), spans[i], scratch[:0])
		if spans[i].kind == jStringEsc {
			scratch = t
		}
		return t, ok
	}
	switch f.out {
	case outJSON:
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		defer b.Release()
		b.Reserve(n)
		for i := range n {
			v := spans[i]
			if jc.status[i] != docOK || v.kind == jAbsent {
				b.AppendNull()
				continue
			}
			b.Append(jc.docs.at(i)[v.start:v.end])
		}
		return b.NewArray(), nil
	case outText:
		return buildText(mem, jc, text)
	case outInt32:
		return buildNumbers(mem, jc, spans, arrow.PrimitiveTypes.Int32, func(t []byte) (int32, error) {
			if v, ok := shortInt(t); ok {
				return int32(v), nil
			}
			v, err := pgnumfmt.IntIn(unsafeString(t), 32)
			return int32(v), err
		})
	case outInt64:
		return buildNumbers(mem, jc, spans, arrow.PrimitiveTypes.Int64, func(t []byte) (int64, error) {
			if v, ok := shortInt(t); ok {
				return v, nil
			}
			return pgnumfmt.IntIn(unsafeString(t), 64)
		})
	case outFloat:
		return buildNumbers(mem, jc, spans, arrow.PrimitiveTypes.Float64, func(t []byte) (float64, error) {
			return pgnumfmt.FloatIn(unsafeString(t), 64)
		})
	case outNumeric:
		return buildNumbers(mem, jc, spans, f.typ(), func(t []byte) (decimal128.Num, error) {
			return textNumeric(t, f.num)
		})
	}
	return nil, fmt.Errorf("unknown output %d", f.out)
}

// buildNumbers builds a fused cast's array (type to: int32, int64, float64 or decimal128) from the
// extraction's spans straight into Arrow buffers of exactly the batch's rows from mem: each
// row's ->> text parsed by parse, NULL for a SQL NULL document and a JSON null or absent
// field; the validity bitmap is made at the first NULL only. The first text that does not
// parse fails it with parse's error (PostgreSQL's SQLSTATE, inputError), as the per-row cast of the text does.
// Unlike an Arrow builder it calls no closure per row to get the text and rounds no buffer up
// to a power of two (docs/architecture.md, decision 3: the cast is fused).
func buildNumbers[T int32 | int64 | float64 | decimal128.Num](mem memory.Allocator, jc *jsonColumn, spans []jsonSpan, to arrow.DataType, parse func([]byte) (T, error)) (arrow.Array, error) {
	n := jc.col.Len()
	var zero T
	width := int(unsafe.Sizeof(zero))
	vals := memory.NewResizableBuffer(mem)
	defer vals.Release()
	vals.Resize(n * width)
	out := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(vals.Bytes()))), n)
	var valid *memory.Buffer
	defer func() {
		if valid != nil {
			valid.Release()
		}
	}()
	var bits []byte
	nulls := 0
	var scratch []byte
	for i := range n {
		v := spans[i]
		if jc.status[i] != docOK || v.kind == jAbsent || v.kind == jNull {
			if valid == nil {
				valid = memory.NewResizableBuffer(mem)
				valid.Resize(int(bitutil.BytesForBits(int64(n))))
				bits = valid.Bytes()
				bitutil.SetBitsTo(bits, 0, int64(i), true)
			}
			out[i] = zero
			nulls++
			continue
		}
		doc := jc.docs.at(i)
		var t []byte
		switch v.kind {
		case jString:
			t = doc[v.start+1 : v.end-1]
		case jStringEsc:
			scratch, _ = unescape(scratch[:0], doc[v.start+1:v.end-1])
			t = scratch
		default:
			t = doc[v.start:v.end]
		}
		x, err := parse(t)
		if err != nil {
			return nil, inputError(err)
		}
		out[i] = x
		if bits != nil {
			bitutil.SetBit(bits, i)
		}
	}
	var validBuf *memory.Buffer
	if nulls > 0 {
		validBuf = valid
	}
	data := array.NewData(to, n, []*memory.Buffer{validBuf, vals}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// buildText builds a ->> or #>> field's utf8 array from the extraction's spans: row i's text
// is text(i), NULL where text answers false. A first pass sizes the values, so the offsets
// and the values go straight into buffers of exactly the batch's rows and bytes from mem
// (an Arrow builder's Append checks capacity and grows its buffers row by row: 7% of the CPU
// of BenchmarkAnalytical's origin, destination, count(*) GROUP BY 1, 2); the validity bitmap
// is made at the first NULL only. A batch whose text outgrows utf8's int32 offsets is refused
// as an Arrow builder refuses it.
func buildText(mem memory.Allocator, jc *jsonColumn, text func(int) ([]byte, bool)) (arrow.Array, error) {
	n := jc.col.Len()
	total := 0
	for i := range n {
		if t, ok := text(i); ok {
			total += len(t)
		}
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("ops: JSON field text of %d bytes exceeds utf8's offsets", total)
	}
	offBuf := memory.NewResizableBuffer(mem)
	defer offBuf.Release()
	offBuf.Resize((n + 1) * 4)
	offs := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(offBuf.Bytes()))), n+1)
	dataBuf := memory.NewResizableBuffer(mem)
	defer dataBuf.Release()
	dataBuf.Resize(total)
	data := dataBuf.Bytes()
	var valid *memory.Buffer
	defer func() {
		if valid != nil {
			valid.Release()
		}
	}()
	var bits []byte
	nulls, at := 0, 0
	for i := range n {
		offs[i] = int32(at)
		t, ok := text(i)
		if !ok {
			if valid == nil {
				valid = memory.NewResizableBuffer(mem)
				valid.Resize(int(bitutil.BytesForBits(int64(n))))
				bits = valid.Bytes()
				bitutil.SetBitsTo(bits, 0, int64(i), true)
			}
			nulls++
			continue
		}
		at += copy(data[at:], t)
		if bits != nil {
			bitutil.SetBit(bits, i)
		}
	}
	offs[n] = int32(at)
	var validBuf *memory.Buffer
	if nulls > 0 {
		validBuf = valid
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{validBuf, offBuf, dataBuf}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// shortInt reads t when it is an optional '-' and one to nine ASCII digits, nothing else: the
// common JSON integer, whose value int4in and int8in (pgnumfmt.IntIn) read the same and which
// fits int32 whatever its digits; false for any other text, which IntIn reads (whitespace,
// '+', range errors, syntax errors).
func shortInt(t []byte) (int64, bool) {
	d := t
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 9 {
		return 0, false
	}
	var v int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if len(d) < len(t) {
		v = -v
	}
	return v, true
}

// unsafeString views b as a string for a call that does not keep it.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// docReader reads row i's document bytes of a utf8, large_utf8, binary or large_binary
// array without copying: its offsets (from the array's own offset on) index data, the
// whole values buffer.
type docReader struct {
	data  []byte
	off32 []int32
	off64 []int64
}

func (d *docReader) at(i int) []byte {
	if d.off32 != nil {
		return d.data[d.off32[i]:d.off32[i+1]]
	}
	return d.data[d.off64[i]:d.off64[i+1]]
}

func docsOf(a arrow.Array) (docReader, bool) {
	var data []byte
	if bufs := a.Data().Buffers(); len(bufs) > 2 && bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	switch v := a.(type) {
	case *array.Binary:
		return docReader{data: data, off32: v.ValueOffsets()}, true
	case *array.String:
		return docReader{data: data, off32: v.ValueOffsets()}, true
	case *array.LargeBinary:
		return docReader{data: data, off64: v.ValueOffsets()}, true
	case *array.LargeString:
		return docReader{data: data, off64: v.ValueOffsets()}, true
	}
	return docReader{}, false
}

// unsafeBytes views s as bytes that are only read.
func unsafeBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// jsonFieldNode returns the node of field jf, registered with the expression's fields.
func (c *compiler) jsonFieldNode(jf *jsonField) node {
	if sh := c.shred; sh != nil && jf.col == sh.col {
		at, ok := sh.at[ShredField{jf}.Key()]
		if !ok && sh.err == nil {
			sh.err = fmt.Errorf("ops: compile: JSON field %s has no shredded column", ShredField{jf}.Key())
		}
		if ok {
			sh.used = append(sh.used, at)
		}
		return colNode(at)
	}
	c.jsonFields = append(c.jsonFields, jf)
	return &jsonFieldNode{f: jf}
}

// spanText returns the ->> text of value v of doc: a string's unescaped text (appended to
// scratch when it holds escapes, else doc's own bytes), any other value's JSON text as
// written; false for JSON null and an absent value (SQL NULL).
func spanText(doc []byte, v jsonSpan, scratch []byte) ([]byte, bool) {
	switch v.kind {
	case jAbsent, jNull:
		return nil, false
	case jString:
		return doc[v.start+1 : v.end-1], true
	case jStringEsc:
		t, _ := unescape(scratch, doc[v.start+1:v.end-1])
		return t, true
	}
	return doc[v.start:v.end], true
}
