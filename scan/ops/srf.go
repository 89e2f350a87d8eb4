package ops

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Set-returning functions over rows (PostgreSQL 15's ProjectSet and its function scans over
// a LATERAL reference): ProjectSet calls each of its functions on every input row and emits,
// per input row, as many rows as the longest call yields, the input row's columns repeated,
// each call's columns beside them (NULL where a call yields fewer rows than another: PostgreSQL
// 10's zipping of the set-returning functions of one select list, and of ROWS FROM), and the
// row's ordinality (1, 2, … within the input row) when asked. An input row for which no call
// yields a row yields none, or, for an outer ProjectSet (LEFT JOIN LATERAL … ON true), one row
// of NULLs, its ordinality NULL too.
//
// The functions (SetFuncOutputs names their columns' types):
//
//   - json_each, json_each_text, jsonb_each, jsonb_each_text (document): each member of the
//     object as (key text, value); the value json (its bytes as written, inner whitespace
//     kept) or jsonb (its canonical text), or text for the _text forms (a string unescaped, a
//     JSON null SQL NULL, other values their JSON text). json keeps the document's order and
//     duplicate keys; a jsonb document is already in jsonb's canonical text (keys sorted, the
//     last of duplicates kept), so its members come in that order.
//   - json_array_elements[_text], jsonb_array_elements[_text] (document): each element.
//   - json_object_keys, jsonb_object_keys (document): each key, text.
//   - generate_series (start, stop[, step]) of int32 or int64: start, start+step, … while
//     not past stop; a zero step is PostgreSQL's 22023 "step size cannot equal zero"; a NULL
//     argument yields no row.
//   - generate_series (start, stop, step) of two timestamps of one Arrow type and a
//     month_day_nano interval: PostgreSQL's generate_series_timestamp[tz] in a UTC session,
//     each value the previous one plus step as timestamp_add_interval adds it (the months on
//     the calendar, so January 31 + 1 month is February 28, then March 28; the days as 24
//     hours), while not past stop (the end included). The step's direction, and a zero step
//     (22023 "step size cannot equal zero"), are PostgreSQL's interval_cmp against a zero
//     interval: a month as 30 days, a day as 24 hours ('1 mon -30 days' is zero). A next value
//     outside the int64 nanoseconds of Arrow's timestamps is past any stop, so it ends the
//     series. A NULL argument yields no row.
//   - unnest (element, …): the row's arguments in order (unnest(ARRAY[a, b]) of each row).
//
// A NULL document yields no row. A document of the wrong kind is PostgreSQL's 22023 with the
// message its PostgreSQL function gives (json_each of an array "cannot deconstruct an array
// as an object", jsonb_each "cannot call jsonb_each on a non-object", …); a document that is
// not JSON, or holds \u0000 in a string, is the JSON scanner's error (jsonscan.go). PostgreSQL's
// json_array_elements (not _text) answers over a \u0000 escape, which it does not unescape;
// here it is 22P05 as for the other functions.

// SetCall is one set-returning function call of ProjectSet: its name (one of
// SetFuncOutputs') and its arguments, compiled for ProjectSet's input schema.
type SetCall struct {
	Name string
	Args []*Expr
	// Empty marks unnest of an empty array (ARRAY[]::t[]), which yields no row: its one
	// argument, a NULL of t, only types its column.
	Empty bool
}

// jsonSetFuncs maps the JSON set-returning functions to what they read and yield.
var jsonSetFuncs = map[string]struct {
	mode  jsonSetMode
	jsonb bool
	text  bool
}{
	"json_each": {modeEach, false, false}, "json_each_text": {modeEach, false, true},
	"jsonb_each": {modeEach, true, false}, "jsonb_each_text": {modeEach, true, true},
	"json_array_elements": {modeElements, false, false}, "json_array_elements_text": {modeElements, false, true},
	"jsonb_array_elements": {modeElements, true, false}, "jsonb_array_elements_text": {modeElements, true, true},
	"json_object_keys": {modeKeys, false, true}, "jsonb_object_keys": {modeKeys, true, true},
}

type jsonSetMode uint8

const (
	modeEach jsonSetMode = iota
	modeElements
	modeKeys
)

// SetFuncOutputs returns the Arrow types of the columns the set-returning function name
// yields for arguments of types args (json and jsonb documents are binary or string; text
// results are string, json and jsonb results binary), or an error for a name or arguments it
// does not take.
func SetFuncOutputs(name string, args []arrow.DataType) ([]arrow.DataType, error) {
	if f, ok := jsonSetFuncs[name]; ok {
		if len(args) != 1 || !isText(args[0]) {
			return nil, fmt.Errorf("ops: %s takes one document", name)
		}
		val := arrow.DataType(arrow.BinaryTypes.Binary)
		if f.text {
			val = arrow.BinaryTypes.String
		}
		if f.mode == modeEach {
			return []arrow.DataType{arrow.BinaryTypes.String, val}, nil
		}
		return []arrow.DataType{val}, nil
	}
	switch name {
	case "generate_series":
		if len(args) < 2 || len(args) > 3 {
			return nil, fmt.Errorf("ops: generate_series takes 2 or 3 arguments")
		}
		if args[0].ID() == arrow.TIMESTAMP {
			if len(args) != 3 || !arrow.TypeEqual(args[1], args[0]) || args[2].ID() != arrow.INTERVAL_MONTH_DAY_NANO {
				return nil, fmt.Errorf("ops: generate_series of %v", args)
			}
			return []arrow.DataType{args[0]}, nil
		}
		for _, a := range args {
			if !arrow.TypeEqual(a, args[0]) || a.ID() != arrow.INT32 && a.ID() != arrow.INT64 {
				return nil, fmt.Errorf("ops: generate_series of %v", args)
			}
		}
		return []arrow.DataType{args[0]}, nil
	case "unnest":
		if len(args) == 0 {
			return nil, fmt.Errorf("ops: unnest of no element")
		}
		for _, a := range args {
			if !arrow.TypeEqual(a, args[0]) {
				return nil, fmt.Errorf("ops: unnest of elements of different types %v", args)
			}
		}
		return []arrow.DataType{args[0]}, nil
	}
	return nil, fmt.Errorf("ops: unknown set-returning function %s", name)
}

// setGen produces the rows of one call for the input rows of a batch.
type setGen interface {
	// start begins the rows of input row i of the batch whose arguments are args.
	start(args []arrow.Array, i int) error
	// more reports whether the current input row has another row.
	more() bool
	// next appends that row's values.
	next() error
	// null appends NULLs.
	null()
	// finish returns the columns appended since the last finish; the arguments of the rows
	// appended must still be those start was given.
	finish(ctx context.Context) ([]arrow.Array, error)
	// added is the bytes of the values appended since the last finish (an estimate).
	added() int64
	release()
}

func newSetGen(name string, types []arrow.DataType, mem memory.Allocator) setGen {
	if f, ok := jsonSetFuncs[name]; ok {
		g := &jsonGen{name: name, mode: f.mode, jsonb: f.jsonb, text: f.text}
		for _, t := range types {
			g.out = append(g.out, array.NewBuilder(mem, t))
		}
		return g
	}
	switch name {
	case "generate_series":
		if tt, ok := types[0].(*arrow.TimestampType); ok {
			return &timeSeriesGen{b: array.NewTimestampBuilder(mem, tt)}
		}
		return &seriesGen{b: array.NewBuilder(mem, types[0]), wide: types[0].ID() == arrow.INT64}
	}
	return &unnestGen{typ: types[0], mem: mem}
}

// ProjectSet returns a reader of in's columns followed by the columns of each call (their
// SetFuncOutputs types) and, when ordinality, an int64 ordinality, under schema (whose fields
// must be those), with the semantics described above. It takes ownership of in; the calls'
// expressions stay shared. Batches hold at most MaxBatchRows rows and are cut near
// MaxBatchBytes of produced values; the values are allocated from mem, which is checked after
// every row produced (past its limit the reader fails with its ErrMemoryLimit error), so a
// large document or a long series is bounded by the query's memory limit; the rows produced
// count against mem's row limit (Ledger.AddRows, per batch: past it the reader fails with
// its *ledger.RowLimitExceededError), so a long series that holds little memory (counted, say) is bounded too.
func ProjectSet(ctx context.Context, in array.RecordReader, calls []SetCall, ordinality, outer bool, schema *arrow.Schema, mem *ledger.Ledger) array.RecordReader {
	alloc := allocator(mem)
	nIn := in.Schema().NumFields()
	gens := make([]setGen, len(calls))
	at := nIn
	for i, c := range calls {
		types := make([]arrow.DataType, len(c.Args))
		for k, a := range c.Args {
			if !sameTypes(in.Schema(), a.Schema()) {
				return errStream(schema, fmt.Errorf("ops: project set: an argument of %s is compiled for another schema", c.Name), in)
			}
			types[k] = a.Type()
		}
		out, err := SetFuncOutputs(c.Name, types)
		if err != nil {
			return errStream(schema, err, in)
		}
		for k, t := range out {
			if at+k >= schema.NumFields() || !arrow.TypeEqual(schema.Field(at+k).Type, t) {
				return errStream(schema, fmt.Errorf("ops: project set: schema does not match %s's columns", c.Name), in)
			}
		}
		at += len(out)
		switch {
		case c.Empty && (c.Name != "unnest" || len(c.Args) != 1):
			return errStream(schema, fmt.Errorf("ops: project set: an empty %s of %d arguments", c.Name, len(c.Args)), in)
		case c.Empty:
			gens[i] = &emptyGen{b: array.NewBuilder(alloc, out[0])}
		default:
			gens[i] = newSetGen(c.Name, out, alloc)
		}
	}
	if want := at + btoi(ordinality); schema.NumFields() != want {
		return errStream(schema, fmt.Errorf("ops: project set: schema of %d columns for %d", schema.NumFields(), want), in)
	}
	o := &owned{r: in}
	var (
		cur      arrow.RecordBatch
		args     [][]arrow.Array // per call, its arguments over cur
		row      int             // the input row being expanded, -1 before the first
		inRow    bool
		ord      int64
		refs     []rowRef // the input row of each row produced since the last flush
		ords     = array.NewInt64Builder(alloc)
		rowBytes int64 // the bytes of the input row being expanded, repeated per row produced
		inBytes  int64 // the bytes of the input rows repeated since the last flush
	)
	dropArgs := func() {
		for _, as := range args {
			releaseArrays(as)
		}
		args = nil
	}
	drop := func() {
		dropArgs()
		if cur != nil {
			cur.Release()
			cur = nil
		}
	}
	flush := func() (arrow.RecordBatch, error) {
		if len(refs) == 0 {
			return nil, nil
		}
		// One input row may yield rows without end (generate_series to a far stop): the
		// query's cancellation is checked per batch produced.
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		// Its rows count against the query's row limit (--query-max-rows), as the rows its
		// fragments read: a series of 2.9e13 rows ran until cancelled.
		if err := mem.AddRows(int64(len(refs))); err != nil {
			return nil, fmt.Errorf("ops: project set: %w", err)
		}
		// The repeated input columns are claimed before they are built.
		claim := inBytes
		inBytes = 0
		if err := mem.Claim(claim); err != nil {
			return nil, fmt.Errorf("ops: project set: %w", err)
		}
		defer mem.Unclaim(claim)
		cols := make([]arrow.Array, 0, schema.NumFields())
		for c := range nIn {
			a, err := gatherColumn(ctx, schema.Field(c).Type, []arrow.Array{cur.Column(c)}, refs, alloc)
			if err != nil {
				releaseArrays(cols)
				return nil, fmt.Errorf("ops: project set: %w", err)
			}
			cols = append(cols, a)
		}
		for _, g := range gens {
			as, err := g.finish(ctx)
			if err != nil {
				releaseArrays(cols)
				return nil, fmt.Errorf("ops: project set: %w", err)
			}
			cols = append(cols, as...)
		}
		if ordinality {
			cols = append(cols, ords.NewArray())
		} else {
			ords.Release()
			ords = array.NewInt64Builder(alloc)
		}
		b := array.NewRecordBatch(schema, cols, int64(len(refs)))
		releaseArrays(cols)
		refs = refs[:0]
		return b, nil
	}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		for {
			if cur == nil {
				b, err := o.next(ctx)
				if b == nil {
					return nil, err
				}
				cur, row, inRow = b, -1, false
				for _, c := range calls {
					as := make([]arrow.Array, len(c.Args))
					for k, e := range c.Args {
						a, err := e.Eval(ctx, cur, mem)
						if err != nil {
							args = append(args, as)
							drop()
							return nil, err
						}
						as[k] = a
					}
					args = append(args, as)
				}
			}
			if !inRow {
				row++
				if row == int(cur.NumRows()) {
					out, err := flush()
					drop()
					if err != nil || out != nil {
						return out, err
					}
					continue
				}
				for i, g := range gens {
					if err := g.start(args[i], row); err != nil {
						return nil, err
					}
				}
				inRow, ord = true, 0
				rowBytes = batchRowBytes(cur.Columns(), row)
			}
			some := false
			for _, g := range gens {
				some = some || g.more()
			}
			if !some {
				inRow = false
				if !outer || ord > 0 {
					continue
				}
				for _, g := range gens {
					g.null()
				}
				ords.AppendNull()
			} else {
				for _, g := range gens {
					if !g.more() {
						g.null()
					} else if err := g.next(); err != nil {
						return nil, err
					}
				}
				ord++
				ords.Append(ord)
			}
			refs = append(refs, rowRef{r: int32(row)})
			inBytes += rowBytes
			if err := mem.Check(); err != nil {
				return nil, fmt.Errorf("ops: project set: %w", err)
			}
			produced := inBytes
			for _, g := range gens {
				produced += g.added()
			}
			if len(refs) >= MaxBatchRows || produced >= MaxBatchBytes {
				return flush()
			}
		}
	}, func() {
		drop()
		for _, g := range gens {
			if g != nil {
				g.release()
			}
		}
		ords.Release()
		o.release()
	})
}

// batchRowBytes is the bytes row i of cols takes: its variable-width values and eight bytes
// a column.
func batchRowBytes(cols []arrow.Array, i int) int64 {
	return varBytes(cols, i, i+1) + 8*int64(len(cols))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// jsonGen produces the rows of a JSON set-returning function.
type jsonGen struct {
	name        string
	mode        jsonSetMode
	jsonb, text bool
	out         []array.Builder // key then value (each), value (elements), key (keys)
	sc          jsonScanner
	cur         memberCursor
	buf         []byte
	bytes       int64
}

func (g *jsonGen) start(args []arrow.Array, i int) error {
	g.cur = memberCursor{done: true}
	docs, ok := asTexts(args[0])
	if !ok {
		return fmt.Errorf("ops: %s of %s", g.name, args[0].DataType())
	}
	if docs.IsNull(i) {
		return nil
	}
	doc := docs.ValueBytes(i)
	kind, st := g.sc.scanDoc(doc, nil, nil)
	if err := st.err(); err != nil {
		return err
	}
	if msg := g.wrongKind(kind); msg != "" {
		return &DataError{Code: "22023", Msg: msg}
	}
	g.cur = newMemberCursor(doc, docSpan(doc, kind))
	return nil
}

// wrongKind is PostgreSQL's message for a document of kind the function does not take ("" if
// it takes it).
func (g *jsonGen) wrongKind(kind jsonKind) string {
	switch g.mode {
	case modeEach:
		switch {
		case kind == jObject:
			return ""
		case g.jsonb:
			return "cannot call " + g.name + " on a non-object"
		case kind == jArray:
			return "cannot deconstruct an array as an object"
		}
		return "cannot deconstruct a scalar"
	case modeElements:
		switch {
		case kind == jArray:
			return ""
		case g.jsonb && kind == jObject:
			return "cannot extract elements from an object"
		case g.jsonb:
			return "cannot extract elements from a scalar"
		case kind == jObject:
			return "cannot call " + g.name + " on a non-array"
		}
		return "cannot call " + g.name + " on a scalar"
	}
	switch kind {
	case jObject:
		return ""
	case jArray:
		return "cannot call " + g.name + " on an array"
	}
	return "cannot call " + g.name + " on a scalar"
}

func (g *jsonGen) more() bool { return !g.cur.done }

func (g *jsonGen) next() error {
	key, esc, val, ok := g.cur.next()
	if !ok {
		g.null()
		return nil
	}
	doc := g.cur.doc
	out := g.out
	g.bytes += int64(len(key)+val.end-val.start) + 16
	if g.mode != modeElements {
		kb := out[0].(*array.StringBuilder)
		if esc {
			g.buf, _ = unescape(g.buf[:0], key)
			kb.BinaryBuilder.Append(g.buf)
		} else {
			kb.BinaryBuilder.Append(key)
		}
		out = out[1:]
		if g.mode == modeKeys {
			return nil
		}
	}
	raw := doc[val.start:val.end]
	if !g.text {
		out[0].(*array.BinaryBuilder).Append(raw)
		return nil
	}
	vb := out[0].(*array.StringBuilder)
	switch val.kind {
	case jNull:
		vb.AppendNull()
	case jString:
		vb.BinaryBuilder.Append(raw[1 : len(raw)-1])
	case jStringEsc:
		g.buf, _ = unescape(g.buf[:0], raw[1:len(raw)-1])
		vb.BinaryBuilder.Append(g.buf)
	default:
		vb.BinaryBuilder.Append(raw)
	}
	return nil
}

func (g *jsonGen) null() {
	g.bytes += 16
	for _, b := range g.out {
		b.AppendNull()
	}
}

func (g *jsonGen) added() int64 { return g.bytes }

func (g *jsonGen) finish(context.Context) ([]arrow.Array, error) {
	g.bytes = 0
	as := make([]arrow.Array, len(g.out))
	for i, b := range g.out {
		as[i] = b.NewArray()
	}
	return as, nil
}

func (g *jsonGen) release() {
	for _, b := range g.out {
		b.Release()
	}
}

// memberCursor steps through the members of a validated object, or the elements of a
// validated array, one at a time (forEach's walk, resumable).
type memberCursor struct {
	doc  []byte
	v    jsonSpan
	s    jsonScanner
	done bool
}

func newMemberCursor(doc []byte, v jsonSpan) memberCursor {
	c := memberCursor{doc: doc, v: v, s: jsonScanner{doc: doc[:v.end], i: v.start + 1}}
	c.s.ws()
	c.done = c.s.i >= v.end-1
	return c
}

// next returns the next member (key bytes between its quotes, whether they hold escapes,
// value) or element (nil key); the cursor must not be done. ok is false, and the cursor done,
// where the value does not scan (never in a validated value).
func (c *memberCursor) next() (key []byte, escaped bool, val jsonSpan, ok bool) {
	s := &c.s
	if c.v.kind == jObject {
		ks := s.i
		kind, _ := s.member()
		key, escaped = c.doc[ks+1:s.i-1], kind == jStringEsc
		s.ws()
		s.i++ // ':'
		s.ws()
	}
	vs := s.i
	kind, ok := s.value()
	if !ok {
		c.done = true
		return key, escaped, jsonSpan{}, false
	}
	val = jsonSpan{start: vs, end: s.i, kind: kind}
	s.ws()
	if s.i >= c.v.end-1 || c.doc[s.i] != ',' {
		c.done = true
	} else {
		s.i++
		s.ws()
	}
	return key, escaped, val, true
}

// seriesGen produces generate_series of integers.
type seriesGen struct {
	b               array.Builder
	wide            bool
	cur, stop, step int64
	done            bool
}

func seriesArg(a arrow.Array, i int) (int64, bool) {
	if a.IsNull(i) {
		return 0, false
	}
	switch x := a.(type) {
	case *array.Int32:
		return int64(x.Value(i)), true
	case *array.Int64:
		return x.Value(i), true
	}
	return 0, false
}

func (g *seriesGen) start(args []arrow.Array, i int) error {
	g.done = true
	vals := [3]int64{0, 0, 1}
	for k, a := range args {
		v, ok := seriesArg(a, i)
		if !ok {
			return nil
		}
		vals[k] = v
	}
	if vals[2] == 0 {
		return &DataError{Code: "22023", Msg: "step size cannot equal zero"}
	}
	g.cur, g.stop, g.step = vals[0], vals[1], vals[2]
	g.done = g.step > 0 && g.cur > g.stop || g.step < 0 && g.cur < g.stop
	return nil
}

func (g *seriesGen) more() bool { return !g.done }

func (g *seriesGen) next() error {
	if g.wide {
		g.b.(*array.Int64Builder).Append(g.cur)
	} else {
		g.b.(*array.Int32Builder).Append(int32(g.cur))
	}
	lim := int64(math.MaxInt64)
	if !g.wide {
		lim = math.MaxInt32
	}
	// The next value would overflow the type: PostgreSQL stops there.
	if g.step > 0 && g.cur > lim-g.step || g.step < 0 && g.cur < -lim-1-g.step {
		g.done = true
		return nil
	}
	g.cur += g.step
	g.done = g.step > 0 && g.cur > g.stop || g.step < 0 && g.cur < g.stop
	return nil
}

func (g *seriesGen) null() { g.b.AppendNull() }

func (g *seriesGen) added() int64 { return int64(g.b.Len()) * 8 }

func (g *seriesGen) finish(context.Context) ([]arrow.Array, error) {
	return []arrow.Array{g.b.NewArray()}, nil
}

func (g *seriesGen) release() { g.b.Release() }

// timeSeriesGen produces generate_series of timestamps with an interval step.
type timeSeriesGen struct {
	b         *array.TimestampBuilder
	cur, stop time.Time
	step      arrow.MonthDayNanoInterval
	up, done  bool
}

func (g *timeSeriesGen) start(args []arrow.Array, i int) error {
	g.done = true
	if args[0].IsNull(i) || args[1].IsNull(i) || args[2].IsNull(i) {
		return nil
	}
	start, err := timesAt(args[0])
	if err != nil {
		return err
	}
	stop, err := timesAt(args[1])
	if err != nil {
		return err
	}
	iv, ok := args[2].(*array.MonthDayNanoInterval)
	if !ok {
		return fmt.Errorf("ops: generate_series step of %s", args[2].DataType())
	}
	g.step = iv.Value(i)
	// interval_cmp's span: months of 30 days, days of 24 hours (exact: it passes int64).
	span := new(big.Int).Mul(big.NewInt(int64(g.step.Months)*30+int64(g.step.Days)), big.NewInt(nsPerDay))
	span.Add(span, big.NewInt(g.step.Nanoseconds))
	if span.Sign() == 0 {
		return &DataError{Code: "22023", Msg: "step size cannot equal zero"}
	}
	g.cur, g.stop, g.up = start(i), stop(i), span.Sign() > 0
	g.done = g.past()
	return nil
}

// past reports whether the current value is past stop in the step's direction.
func (g *timeSeriesGen) past() bool {
	if g.up {
		return g.cur.After(g.stop)
	}
	return g.cur.Before(g.stop)
}

func (g *timeSeriesGen) more() bool { return !g.done }

func (g *timeSeriesGen) next() error {
	v, err := arrow.TimestampFromTime(g.cur, g.b.Type().(*arrow.TimestampType).Unit)
	if err != nil {
		return err
	}
	g.b.Append(v)
	next, ok := addInterval(g.cur, g.step)
	// A next value outside int64 nanoseconds is past the stop, which is inside them; one
	// equal to the current value (from March 1, '1 mon -31 days') repeats forever, as in
	// PostgreSQL, until the query is cancelled.
	g.cur = next
	g.done = !ok || g.past()
	return nil
}

func (g *timeSeriesGen) null() { g.b.AppendNull() }

func (g *timeSeriesGen) added() int64 { return int64(g.b.Len()) * 8 }

func (g *timeSeriesGen) finish(context.Context) ([]arrow.Array, error) {
	return []arrow.Array{g.b.NewArray()}, nil
}

func (g *timeSeriesGen) release() { g.b.Release() }

// emptyGen is unnest of an empty array: no row, a NULL beside another call's rows.
type emptyGen struct{ b array.Builder }

func (g *emptyGen) start([]arrow.Array, int) error { return nil }
func (g *emptyGen) more() bool                     { return false }
func (g *emptyGen) next() error                    { return nil }
func (g *emptyGen) null()                          { g.b.AppendNull() }
func (g *emptyGen) added() int64                   { return int64(g.b.Len()) * 8 }
func (g *emptyGen) release()                       { g.b.Release() }

func (g *emptyGen) finish(context.Context) ([]arrow.Array, error) {
	return []arrow.Array{g.b.NewArray()}, nil
}

// unnestGen produces unnest of each row's elements: the rows it produced are references into
// the element arrays (and a NULL), gathered when the batch is finished.
type unnestGen struct {
	typ   arrow.DataType
	mem   memory.Allocator
	parts []arrow.Array // the element arrays of the batch, then one NULL
	k, i  int
	refs  []rowRef
	bytes int64
}

func (g *unnestGen) start(args []arrow.Array, i int) error {
	if len(g.parts) != len(args)+1 || len(g.parts) > 0 && g.parts[0] != args[0] {
		g.release()
		g.parts = append(g.parts[:0], args...)
		nb := array.NewBuilder(g.mem, g.typ)
		nb.AppendNull()
		g.parts = append(g.parts, nb.NewArray())
		nb.Release()
	}
	g.k, g.i = 0, i
	return nil
}

func (g *unnestGen) more() bool { return g.k < len(g.parts)-1 }

func (g *unnestGen) next() error {
	g.refs = append(g.refs, rowRef{b: int32(g.k), r: int32(g.i)})
	g.bytes += colVarBytes(g.parts[g.k], g.i, g.i+1) + 8
	g.k++
	return nil
}

func (g *unnestGen) null() {
	g.refs = append(g.refs, rowRef{b: int32(len(g.parts) - 1)})
	g.bytes += 8
}

func (g *unnestGen) added() int64 { return g.bytes }

func (g *unnestGen) finish(ctx context.Context) ([]arrow.Array, error) {
	a, err := gatherColumn(ctx, g.typ, g.parts, g.refs, g.mem)
	g.refs, g.bytes = g.refs[:0], 0
	if err != nil {
		return nil, err
	}
	return []arrow.Array{a}, nil
}

func (g *unnestGen) release() {
	if n := len(g.parts); n > 0 {
		g.parts[n-1].Release()
	}
	g.parts = g.parts[:0]
}
