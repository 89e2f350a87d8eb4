package ops

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/internal/freelist"
	"github.com/flightsrv/flightsrv/scan/ledger"
)

// JoinType is the kind of a hash join (docs/architecture.md, "The executor and its
// fragments"): which unmatched rows are kept, and what a row of the output holds.
type JoinType int

const (
	// JoinInner keeps the matching pairs.
	JoinInner JoinType = iota
	// JoinLeft keeps the matching pairs and every left row without a match, NULL-extended.
	JoinLeft
	// JoinRight keeps the matching pairs and every right row without a match, NULL-extended.
	JoinRight
	// JoinFull keeps the pairs and the unmatched rows of both sides.
	JoinFull
	// JoinSemi keeps the left rows with at least one match, once each; the output is the
	// left columns only.
	JoinSemi
	// JoinAnti keeps the left rows without a match; the output is the left columns only.
	JoinAnti
	// JoinSingle is JoinLeft for a scalar subquery: a left row matching more than one right
	// row is PostgreSQL's cardinality error (SQLSTATE 21000).
	JoinSingle
)

var joinNames = [...]string{"inner", "left", "right", "full", "semi", "anti", "single"}

// String names the join type as EXPLAIN prints it (inner, left, right, full, semi, anti,
// single).
func (t JoinType) String() string {
	if t < 0 || int(t) >= len(joinNames) {
		return fmt.Sprintf("join(%d)", int(t))
	}
	return joinNames[t]
}

// JoinSpec describes a hash join of a left (probe) and a right (build) input.
type JoinSpec struct {
	Type JoinType
	// LeftKeys and RightKeys are the equi-join keys, pairwise of one Arrow type that
	// JoinKeyType accepts, compiled over the left and the right input's schema. A row with a
	// NULL key matches nothing (SQL's equality). With no key every pair is a candidate (a
	// nested loop over the buffered right side).
	LeftKeys, RightKeys []*Expr
	// Residual are boolean conjuncts over JoinInputSchema (left columns then right
	// columns), evaluated on each candidate pair after the key match: a pair matches when
	// every one is true.
	Residual []*Expr
	// NullSafe, when not empty, holds one flag per key: a flagged key matches NULL to NULL
	// (IS NOT DISTINCT FROM) instead of matching nothing.
	NullSafe []bool
	// NullAware makes a JoinAnti the anti join of NOT IN over one key: when the right side
	// has a row, a left row whose key is NULL, or any left row when a right key is NULL, is
	// not kept (NOT IN is then NULL or false, PostgreSQL's three-valued answer).
	NullAware bool
	// Unused, when not empty, holds one flag per column of the output (JoinSchema): a flagged
	// column is read by nothing above the join, whose values in the output are therefore not
	// specified: the join emits NULLs of its type instead of gathering them, but passes a
	// left batch whose rows all stay (semi and anti joins) as it is. The lowering sets it from
	// the columns the plan above reads (scan/joinprune.go).
	Unused []bool
}

// JoinKeyType reports whether values of dt can be equi-join keys: integers, floats (every
// NaN one value, -0 = 0, as PostgreSQL's float equality), booleans, dates, timestamps,
// decimal128, strings and binaries.
func JoinKeyType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16,
		arrow.UINT32, arrow.UINT64, arrow.FLOAT32, arrow.FLOAT64, arrow.BOOL, arrow.DATE32,
		arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64, arrow.DECIMAL128, arrow.STRING, arrow.BINARY,
		arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// JoinInputSchema is the schema a join's Residual is compiled over: the left input's fields
// then the right input's, all nullable.
func JoinInputSchema(left, right *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, 0, left.NumFields()+right.NumFields())
	for _, s := range []*arrow.Schema{left, right} {
		for _, f := range s.Fields() {
			f.Nullable = true
			fields = append(fields, f)
		}
	}
	return arrow.NewSchema(fields, nil)
}

// JoinSchema is the output schema of a join of type t: JoinInputSchema, or the left
// input's schema for semi and anti joins.
func JoinSchema(left, right *arrow.Schema, t JoinType) *arrow.Schema {
	if t == JoinSemi || t == JoinAnti {
		return left
	}
	return JoinInputSchema(left, right)
}

// ErrSubqueryRows is the error of a scalar subquery answering more than one row for one
// outer row (JoinSingle), PostgreSQL's message (SQLSTATE 21000, cardinality_violation).
var ErrSubqueryRows = &DataError{Code: "21000", Msg: "more than one row returned by a subquery used as an expression"}

// joinRowBytes is what one buffered right row costs on the Go heap beyond its batch: its
// reference, its hash chain link, its matched flag and a share of the hash map's entry.
const joinRowBytes = 64

// HashJoin joins left and right as spec says. The right input is read whole first and
// buffered (its batches retained, already counted by mem when they were allocated through
// it) with a hash table over its keys, whose Go-heap cost (joinRowBytes a row plus the key
// bytes) is claimed from mem (ledger.Ledger.Claim); past the query's limit the reader fails
// with an error wrapping ledger.ErrMemoryLimit. The left input is then streamed batch by
// batch: candidate pairs are produced at most MaxBatchRows at a time (a key matching many
// rows, or a join without keys, never materialises more); the residual is evaluated on the
// pairs' values of the columns it reads alone, then the columns the output uses (those not
// flagged in spec.Unused) are gathered for the pairs that pass; unmatched rows are emitted
// NULL-extended as the type asks, right rows at the end. The output's row order is not
// specified (SQL's). It takes ownership of both inputs; the expressions stay shared. Not safe
// for concurrent use; ctx is checked once per batch.
func HashJoin(ctx context.Context, left, right array.RecordReader, spec JoinSpec, mem *ledger.Ledger) array.RecordReader {
	schema := JoinSchema(left.Schema(), right.Schema(), spec.Type)
	if err := checkJoinSpec(left.Schema(), right.Schema(), spec); err != nil {
		right.Release()
		return errStream(schema, err, left)
	}
	j := &joiner{ctx: ctx, spec: spec, mem: mem, l: &owned{r: left}, r: &owned{r: right},
		lschema: left.Schema(), rschema: right.Schema(), schema: schema,
		inSchema:  JoinInputSchema(left.Schema(), right.Schema()),
		joinTable: &joinTable{head: map[string]int32{}, mem: mem}, ownTable: true}
	j.init()
	return newStream(schema, j.pull, j.close)
}

// JoinTable is a hash join's right (build) side read whole, buffered and indexed once
// (BuildJoinTable), then probed by several left inputs (HashJoinProbe), each on its own
// goroutine if it likes: once built the table is only read. The inner, left, semi, anti and
// single joins of a left input split into parts (a routed read's fragments,
// scan/fragjoin.go) are the union of each part's join with the whole right side, in the
// parts' order; a right or full join's unmatched right rows depend on every part, so those
// two types are not built so. The table's batches and its hash table's claim stay under the
// ledger until Release, which the caller calls once every probe has ended.
type JoinTable struct {
	t    *joinTable
	spec JoinSpec
	// The probes' schemas and the columns their residual and their consumer read (joiner's
	// fields of the same names), computed once for them all.
	lschema, rschema, schema, inSchema *arrow.Schema
	resCols, outCols                   []bool
	// scratches keeps the probes' scratches between them (joinScratch).
	scratches *freelist.List[*joinScratch]
}

// BuildJoinTable reads right whole and indexes it as HashJoin does before its first probe,
// for the probes of left inputs of schema left under spec (of type JoinInner, JoinLeft,
// JoinSemi, JoinAnti or JoinSingle). It takes ownership of right. Errors: right's, an
// evaluation's of the right keys, the ledger's past the query's limit (wrapping
// ledger.ErrMemoryLimit), or a spec HashJoin would refuse.
func BuildJoinTable(ctx context.Context, left *arrow.Schema, right array.RecordReader, spec JoinSpec, mem *ledger.Ledger) (*JoinTable, error) {
	if t := spec.Type; t == JoinRight || t == JoinFull {
		right.Release()
		return nil, fmt.Errorf("ops: join: a %s join's table is not shared", t)
	}
	if err := checkJoinSpec(left, right.Schema(), spec); err != nil {
		right.Release()
		return nil, err
	}
	rs := right.Schema()
	j := &joiner{ctx: ctx, spec: spec, mem: mem, l: &owned{}, r: &owned{r: right},
		lschema: left, rschema: rs, schema: JoinSchema(left, rs, spec.Type), inSchema: JoinInputSchema(left, rs),
		joinTable: &joinTable{head: map[string]int32{}, mem: mem}}
	j.init()
	err := j.build()
	if err == nil {
		for _, b := range j.rbatches {
			for _, c := range b.Columns() {
				settleNulls(c.Data())
			}
		}
	}
	t := &JoinTable{t: j.joinTable, spec: spec, lschema: left, rschema: rs, schema: j.schema, inSchema: j.inSchema, resCols: j.resCols, outCols: j.outCols,
		scratches: freelist.New[*joinScratch](probeScratches, 0)}
	j.close()
	if err != nil {
		t.t.release()
		return nil, err
	}
	return t, nil
}

// settleNulls computes the null counts arrow-go computes on first use and caches in an
// array's data (array.NullN: a write), of d, its children and its dictionary, so that the
// concurrent probes of a JoinTable, gathering its columns, only read them.
func settleNulls(d arrow.ArrayData) {
	a := array.MakeFromData(d)
	a.NullN()
	a.Release()
	for _, c := range d.Children() {
		settleNulls(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		settleNulls(d.Dictionary())
	}
}

// Rows is the number of right rows the table holds.
func (t *JoinTable) Rows() int { return len(t.t.rrefs) }

// Release releases the table's batches and gives back its claim; no probe may run after it.
func (t *JoinTable) Release() { t.t.release() }

// HashJoinProbe is HashJoin of left with the right side t holds: left streamed batch by
// batch, probing t, which it only reads (probes of one table may run concurrently). It takes
// ownership of left (whose schema must be the table's left schema), not of t. Not safe for
// concurrent use; ctx is checked once per batch.
func HashJoinProbe(ctx context.Context, left array.RecordReader, t *JoinTable, mem *ledger.Ledger) array.RecordReader {
	if !sameTypes(left.Schema(), t.lschema) {
		return errStream(t.schema, errors.New("ops: join: a probe of another schema than its table's"), left)
	}
	j := &joiner{ctx: ctx, spec: t.spec, mem: mem, l: &owned{r: left}, r: &owned{},
		lschema: t.lschema, rschema: t.rschema, schema: t.schema, inSchema: t.inSchema,
		resCols: t.resCols, outCols: t.outCols, joinTable: t.t, built: true, scratches: t.scratches}
	j.takeScratch()
	return newStream(t.schema, j.pull, j.close)
}

// init takes j's scratch and marks the columns its residual and its consumer read.
func (j *joiner) init() {
	j.takeScratch()
	n := j.inSchema.NumFields()
	j.resCols, j.outCols = make([]bool, n), make([]bool, n)
	for _, c := range j.spec.Residual {
		if c.bare >= 0 {
			j.resCols[c.bare] = true
		}
		for i, read := range c.refs {
			j.resCols[i] = j.resCols[i] || read
		}
	}
	for i := range j.schema.NumFields() {
		j.outCols[i] = len(j.spec.Unused) == 0 || !j.spec.Unused[i]
	}
}

func checkJoinSpec(l, r *arrow.Schema, spec JoinSpec) error {
	if len(spec.LeftKeys) != len(spec.RightKeys) || (len(spec.NullSafe) > 0 && len(spec.NullSafe) != len(spec.LeftKeys)) {
		return errors.New("ops: join: key lists of different lengths")
	}
	for i := range spec.LeftKeys {
		lk, rk := spec.LeftKeys[i], spec.RightKeys[i]
		if lk == nil || rk == nil || !sameTypes(l, lk.Schema()) || !sameTypes(r, rk.Schema()) {
			return fmt.Errorf("ops: join: key %d is nil or compiled for another schema", i)
		}
		if !arrow.TypeEqual(lk.Type(), rk.Type()) || !JoinKeyType(lk.Type()) {
			return fmt.Errorf("ops: join: key %d of types %s and %s", i, lk.Type(), rk.Type())
		}
	}
	for _, c := range spec.Residual {
		if c == nil || c.Type().ID() != arrow.BOOL || !sameTypes(JoinInputSchema(l, r), c.Schema()) {
			return errors.New("ops: join: residual not boolean or compiled for another schema")
		}
	}
	if spec.NullAware && (spec.Type != JoinAnti || len(spec.LeftKeys) != 1) {
		return errors.New("ops: join: a null-aware join is an anti join on one key")
	}
	if n := len(spec.Unused); n > 0 && n != JoinSchema(l, r, spec.Type).NumFields() {
		return fmt.Errorf("ops: join: %d unused flags for %d output columns", n, JoinSchema(l, r, spec.Type).NumFields())
	}
	return nil
}

// joinTable is a hash join's buffered right side: its batches (then a one-row all-NULL
// batch), each column's arrays across them (rparts), the reference of each row, its hash
// chain link and whether it matched (right and full joins alone write rmatched). head maps a
// key to its chain's slot in heads, which holds the chain's first row (the last one added).
// Once built it is only read, but for rmatched.
type joinTable struct {
	rbatches []arrow.RecordBatch
	rparts   [][]arrow.Array
	rrefs    []rowRef
	next     []int32
	head     map[string]int32
	heads    []int32
	rmatched []bool
	rnull    int32 // the index of the all-NULL batch among rbatches
	rNullKey bool  // some right row has a NULL key
	claimed  int64
	mem      *ledger.Ledger
}

// release releases the table's batches and gives back its claim.
func (t *joinTable) release() {
	for _, b := range t.rbatches {
		b.Release()
	}
	t.rbatches, t.rparts = nil, nil
	if t.claimed > 0 {
		t.mem.Unclaim(t.claimed)
		t.claimed = 0
	}
}

type joiner struct {
	ctx  context.Context
	spec JoinSpec
	mem  *ledger.Ledger
	l, r *owned

	lschema, rschema, schema, inSchema *arrow.Schema
	// resCols marks the columns of inSchema the residual reads, outCols those of the output
	// (schema, a prefix of inSchema) the consumer reads; nulls caches an all-NULL array per
	// column of inSchema, sliced for the columns not gathered.
	resCols, outCols []bool
	nulls            []arrow.Array

	built bool
	// The buffered right side, built by this joiner (ownTable) or shared (JoinTable).
	*joinTable
	ownTable bool
	// scratches, when set, is the shared table's list of its probes' scratches.
	scratches *freelist.List[*joinScratch]

	// The left batch being probed, its number of keys (one a row: evalKeys, key) and the
	// walk's position.
	cur   arrow.RecordBatch
	lnull arrow.RecordBatch // one all-NULL left row, for right rows without a match
	nkeys int
	row   int
	chain int32 // the next candidate of row's chain (-1: take the row's head)
	// The last key looked up in the current batch (where it is in keyBuf: no pointer, which
	// the collector's write barrier would record at every row) and its chain's head: a routed
	// read's rows come a partition at a time, so a key often repeats the previous row's.
	lastStart, lastEnd int32
	lastHead           int32
	lastOK             bool
	lmatched           []int32
	pending            []arrow.RecordBatch
	tail               int // the next right row to check for the unmatched tail
	done               bool

	// Scratch reused from batch to batch: encoded keys and where each row's starts and ends
	// in keyBuf (an end of -1: a NULL key), candidate pairs, their references and the
	// residual's verdicts. None holds a pointer, so that the collector need not scan them.
	keyBuf             []byte
	keyStarts, keyEnds []int32
	lp, rp             []int32
	lrefs              []rowRef
	prefs              []rowRef
	pass               []bool
	// repeats are, per column of inSchema, the last right row gathered repeated
	// (rightColumn), released at close.
	repeats []repeatedRow
	// keep and nullRefs are the left tail's kept rows and their all-NULL right rows.
	keep     []rowRef
	nullRefs []rowRef
}

// joinScratch is a joiner's scratch (see its fields), kept in joinScratchList between joins:
// a partition-wise join (scan/partjoin.go) runs a join per partition, hundreds a query, and
// each growing its own scratch to a batch's rows was most of what the join allocated. The
// probes of a shared table (JoinTable: one per fragment of a routed read, a thousand a query)
// keep theirs in the table's own free list instead: a sync.Pool is emptied by every two
// collections, which at the server's soft memory limit come every few MB allocated, so that
// most probes found it empty (a semi join over 1,338 buckets allocated 70% more than with one
// probe at the coordinator), while a process-wide free list would hold its scratches between
// queries, as live heap under the same limit (more collections for every query).
type joinScratch struct {
	keyBuf                               []byte
	keyStarts, keyEnds, lp, rp, lmatched []int32
	lrefs, prefs, keep, nullRefs         []rowRef
	pass                                 []bool
}

// size is what s's buffers take, in bytes.
func (s *joinScratch) size() int {
	return cap(s.keyBuf) + (cap(s.keyStarts)+cap(s.keyEnds)+cap(s.lp)+cap(s.rp)+cap(s.lmatched))*4 +
		(cap(s.lrefs)+cap(s.prefs)+cap(s.keep)+cap(s.nullRefs))*8 + cap(s.pass)
}

// joinScratchList keeps joins' scratch across garbage collections (internal/freelist): in a
// sync.Pool, which every two collections empty, it was mostly made anew under serve's default
// memory limit, where a cold query collects every few megabytes. What it holds is live heap,
// so it keeps a few, and none larger than its byte bound.
var joinScratchList = freelist.New[*joinScratch](8, 4<<20)

// probeScratches is how many scratches a JoinTable keeps for its probes: one per probe
// running at once under the default fan-out (routing.DefaultFanout), and as many ended.
const probeScratches = 8

// takeScratch gives j a scratch from its table's list (JoinTable's probes) or the shared free
// list (or a new, empty one).
func (j *joiner) takeScratch() {
	var s *joinScratch
	if j.scratches != nil {
		s, _ = j.scratches.Get()
	}
	if s == nil {
		if s, _ = joinScratchList.Get(); s == nil {
			s = new(joinScratch)
		}
	}
	j.keyBuf, j.keyStarts, j.keyEnds, j.lp, j.rp, j.lmatched = s.keyBuf[:0], s.keyStarts[:0], s.keyEnds[:0], s.lp[:0], s.rp[:0], s.lmatched[:0]
	j.lrefs, j.prefs, j.keep, j.nullRefs, j.pass = s.lrefs[:0], s.prefs[:0], s.keep[:0], s.nullRefs[:0], s.pass[:0]
}

// putScratch returns j's scratch to the free list (once: close).
func (j *joiner) putScratch() {
	s := &joinScratch{keyBuf: j.keyBuf[:0], keyStarts: j.keyStarts[:0], keyEnds: j.keyEnds[:0], lp: j.lp[:0], rp: j.rp[:0], lmatched: j.lmatched[:0],
		lrefs: j.lrefs[:0], prefs: j.prefs[:0], keep: j.keep[:0], nullRefs: j.nullRefs[:0], pass: j.pass[:0]}
	// An empty scratch would take the place of one worth keeping.
	if n := s.size(); n > 0 && (j.scratches == nil || !j.scratches.Put(s, n)) {
		joinScratchList.Put(s, n)
	}
	j.keyBuf, j.keyStarts, j.keyEnds, j.lp, j.rp, j.lmatched = nil, nil, nil, nil, nil, nil
	j.lrefs, j.prefs, j.keep, j.nullRefs, j.pass = nil, nil, nil, nil, nil
}

func (j *joiner) close() {
	j.l.release()
	j.r.release()
	if j.keyEnds != nil || j.lp != nil || j.lrefs != nil {
		j.putScratch()
	}
	if j.ownTable {
		j.joinTable.release()
	}
	for _, b := range j.pending {
		b.Release()
	}
	j.pending = nil
	releaseArrays(j.nulls)
	clear(j.nulls)
	for _, r := range j.repeats {
		if r.a != nil {
			r.a.Release()
		}
	}
	j.repeats = nil
	if j.cur != nil {
		j.cur.Release()
		j.cur = nil
	}
	if j.lnull != nil {
		j.lnull.Release()
		j.lnull = nil
	}
}

// claim claims n more bytes of the hash table.
func (j *joiner) claim(n int64) error {
	if err := j.mem.Claim(n); err != nil {
		return fmt.Errorf("ops: join: %w", err)
	}
	j.claimed += n
	return nil
}

// evalKeys evaluates key expressions on b and encodes each row's key into j.keyBuf (a
// null-safe key encodes NULL as a 0 byte, a value as a 1 byte then the value), where key
// finds it until the next call; it returns the number of rows.
func (j *joiner) evalKeys(keys []*Expr, b arrow.RecordBatch) (int, error) {
	n := int(b.NumRows())
	starts := slices.Grow(j.keyStarts[:0], n)[:n]
	ends := slices.Grow(j.keyEnds[:0], n)[:n]
	j.keyStarts, j.keyEnds = starts, ends
	if len(keys) == 0 {
		clear(starts)
		clear(ends)
		return n, nil
	}
	cols := make([]arrow.Array, len(keys))
	defer releaseArrays(cols)
	for i, k := range keys {
		a, err := k.Eval(j.ctx, b, j.mem)
		if err != nil {
			return 0, err
		}
		cols[i] = a
	}
	buf := j.keyBuf[:0]
	if buf == nil {
		buf = make([]byte, 0, 1024)
	}
	last := len(cols) - 1
	for r := range n {
		mark := len(buf)
		null := false
		for i, c := range cols {
			safe := len(j.spec.NullSafe) > 0 && j.spec.NullSafe[i]
			if c.IsNull(r) {
				if safe {
					buf = append(buf, 0)
					continue
				}
				null = true
				break
			}
			if safe {
				buf = append(buf, 1)
			}
			buf = appendKey(buf, c, r, i < last)
		}
		if null {
			buf = buf[:mark]
			starts[r], ends[r] = 0, -1
			continue
		}
		if len(buf) > math.MaxInt32 {
			return 0, errors.New("ops: join: a batch's keys exceed 2 GiB")
		}
		starts[r], ends[r] = int32(mark), int32(len(buf))
	}
	j.keyBuf = buf
	return n, nil
}

// key returns row r's key of the last evalKeys (a slice of keyBuf, empty for a join without
// keys), ok false when it is NULL.
func (j *joiner) key(r int) (k []byte, ok bool) {
	e := j.keyEnds[r]
	if e < 0 {
		return nil, false
	}
	return j.keyBuf[j.keyStarts[r]:e:e], true
}

// appendKey appends row r of a (valid, of a JoinKeyType) to buf, such that two values of one
// type are equal exactly when their encodings are: the value's bytes for integers, dates,
// timestamps and decimals, a float's normalised bits, a boolean's byte, a string's or binary's
// bytes, preceded by their length when delimit is set (a key that is not the last of its row:
// the last one needs no delimiter, the row's end is its end).
func appendKey(buf []byte, a arrow.Array, r int, delimit bool) []byte {
	switch c := a.(type) {
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(buf, normF64(float64(c.Value(r))))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(buf, normF64(c.Value(r)))
	case *array.Boolean:
		if c.Value(r) {
			return append(buf, 1)
		}
		return append(buf, 0)
	case interface{ Value(int) string }: // string, large string
		v := c.Value(r)
		if delimit {
			buf = binary.AppendUvarint(buf, uint64(len(v)))
		}
		return append(buf, v...)
	case interface{ Value(int) []byte }: // binary, large binary
		v := c.Value(r)
		if delimit {
			buf = binary.AppendUvarint(buf, uint64(len(v)))
		}
		return append(buf, v...)
	}
	fw, ok := a.DataType().(arrow.FixedWidthDataType)
	if !ok || fw.BitWidth()%8 != 0 {
		panic("ops: join key of type " + a.DataType().String()) // checkJoinSpec refused it
	}
	w := fw.BitWidth() / 8
	data := a.Data()
	off := (data.Offset() + r) * w
	return append(buf, data.Buffers()[1].Bytes()[off:off+w]...)
}

// normF64 is a float's key: every NaN one pattern, -0 folded into 0.
func normF64(x float64) uint64 {
	if x != x {
		return 0x7ff8000000000000
	}
	if x == 0 {
		return 0
	}
	return math.Float64bits(x)
}

// build reads the right input whole and indexes its keys.
func (j *joiner) build() error {
	for j.r.r.Next() {
		if err := ctxErr(j.ctx); err != nil {
			return err
		}
		b := j.r.r.RecordBatch()
		if b.NumRows() == 0 {
			continue
		}
		b.Retain()
		bi := int32(len(j.rbatches))
		j.rbatches = append(j.rbatches, b)
		n, err := j.evalKeys(j.spec.RightKeys, b)
		if err != nil {
			return err
		}
		var cost int64
		for r := range n {
			k, valid := j.key(r)
			id := int32(len(j.rrefs))
			if len(j.rrefs) >= math.MaxInt32-1 {
				return errors.New("ops: join: more rows than one join can buffer")
			}
			j.rrefs = append(j.rrefs, rowRef{b: bi, r: int32(r)})
			link := int32(-1)
			if !valid {
				j.rNullKey = true
			} else {
				// The lookup converts without copying; only a new key is stored as a string.
				if h, ok := j.head[string(k)]; ok {
					link, j.heads[h] = j.heads[h], id
				} else {
					j.head[string(k)] = int32(len(j.heads))
					j.heads = append(j.heads, id)
					cost += int64(len(k))
				}
			}
			j.next = append(j.next, link)
			cost += joinRowBytes
		}
		if err := j.claim(cost); err != nil {
			return err
		}
		if err := j.mem.Check(); err != nil {
			return fmt.Errorf("ops: join: %w", err)
		}
	}
	if err := j.r.r.Err(); err != nil {
		return err
	}
	j.r.release()
	if t := j.spec.Type; t == JoinRight || t == JoinFull {
		j.rmatched = make([]bool, len(j.rrefs))
	}
	nb, err := nullBatch(j.rschema, j.mem)
	if err != nil {
		return err
	}
	j.rnull = int32(len(j.rbatches))
	j.rbatches = append(j.rbatches, nb)
	j.rparts = make([][]arrow.Array, j.rschema.NumFields())
	for c := range j.rparts {
		j.rparts[c] = make([]arrow.Array, len(j.rbatches))
		for i, b := range j.rbatches {
			j.rparts[c][i] = b.Column(c)
		}
	}
	if j.spec.Type == JoinRight || j.spec.Type == JoinFull {
		if j.lnull, err = nullBatch(j.lschema, j.mem); err != nil {
			return err
		}
	}
	return nil
}

// nullBatch is one row of schema, every column NULL.
func nullBatch(schema *arrow.Schema, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(allocator(mem), f.Type, 1)
	}
	defer releaseArrays(cols)
	return array.NewRecordBatch(schema, cols, 1), nil
}

func (j *joiner) pull() (arrow.RecordBatch, error) {
	if !j.built {
		j.built = true
		if err := j.build(); err != nil {
			return nil, err
		}
	}
	for {
		if len(j.pending) > 0 {
			b := j.pending[0]
			j.pending = j.pending[1:]
			return b, nil
		}
		if j.done {
			return nil, nil
		}
		if err := ctxErr(j.ctx); err != nil {
			return nil, err
		}
		if j.cur == nil {
			if j.l.r == nil || !j.l.r.Next() {
				if j.l.r != nil {
					if err := j.l.r.Err(); err != nil {
						return nil, err
					}
					j.l.release()
				}
				if err := j.rightTail(); err != nil {
					return nil, err
				}
				if j.tail >= len(j.rrefs) {
					j.done = true
				}
				continue
			}
			b := j.l.r.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			b.Retain()
			j.cur = b
			n, err := j.evalKeys(j.spec.LeftKeys, b)
			if err != nil {
				return nil, err
			}
			j.nkeys, j.row, j.chain, j.lastOK = n, 0, -1, false
			j.lmatched = slices.Grow(j.lmatched[:0], n)[:n]
			clear(j.lmatched)
		}
		if err := j.probe(); err != nil {
			return nil, err
		}
	}
}

// probe produces the next chunk of candidate pairs of the current left batch, or, once its
// rows are walked, its unmatched (or semi-joined) rows.
func (j *joiner) probe() error {
	t := j.spec.Type
	needPairs := len(j.spec.Residual) > 0 || (t != JoinSemi && t != JoinAnti)
	n := j.nkeys
	if !needPairs {
		// Semi and anti joins without a residual: a row matches when its chain exists.
		for r := range n {
			if j.keyEnds[r] >= 0 && j.candidates(r) >= 0 {
				j.lmatched[r] = 1
			}
		}
		j.row = n
	}
	lp, rp := j.lp[:0], j.rp[:0]
	for j.row < n && len(lp) < MaxBatchRows {
		if j.keyEnds[j.row] < 0 { // a NULL key matches nothing
			j.row++
			j.chain = -1
			continue
		}
		c := j.chain
		if c < 0 {
			c = j.candidates(j.row)
		}
		for c >= 0 && len(lp) < MaxBatchRows {
			lp = append(lp, int32(j.row))
			rp = append(rp, c)
			c = j.nextCandidate(c)
		}
		if c >= 0 {
			j.chain = c
			break
		}
		j.row++
		j.chain = -1
	}
	j.lp, j.rp = lp, rp
	if len(lp) > 0 {
		if err := j.pairs(lp, rp); err != nil {
			return err
		}
		if j.row < n {
			return nil
		}
	}
	if j.row < n {
		return nil
	}
	// The batch is walked: its unmatched rows.
	if err := j.leftTail(); err != nil {
		return err
	}
	j.cur.Release()
	j.cur = nil
	return nil
}

// candidates returns the first right row the key of row r of the current left batch may
// match (-1: none); that key is not NULL.
func (j *joiner) candidates(r int) int32 {
	if len(j.spec.LeftKeys) == 0 {
		if len(j.rrefs) == 0 {
			return -1
		}
		return 0
	}
	start, end := j.keyStarts[r], j.keyEnds[r]
	k := j.keyBuf[start:end]
	if j.lastOK && string(k) == string(j.keyBuf[j.lastStart:j.lastEnd]) {
		return j.lastHead
	}
	h := int32(-1)
	if x, ok := j.head[string(k)]; ok {
		h = j.heads[x]
	}
	j.lastStart, j.lastEnd, j.lastHead, j.lastOK = start, end, h, true
	return h
}

func (j *joiner) nextCandidate(c int32) int32 {
	if len(j.spec.LeftKeys) == 0 {
		if int(c)+1 < len(j.rrefs) {
			return c + 1
		}
		return -1
	}
	return j.next[c]
}

// batch assembles a batch of schema (inSchema, or the left input's for a semi or anti join's
// output) whose left columns hold rows lrefs of lsrcs and whose right columns rows rrefs of
// the buffered right side. Only the columns want marks (indexes of inSchema) are gathered,
// or taken from have (a batch of inSchema over the same rows, where haveCols marks its
// gathered columns); the others are all-NULL.
func (j *joiner) batch(schema *arrow.Schema, want []bool, lsrcs []arrow.RecordBatch, lrefs, rrefs []rowRef, have arrow.RecordBatch, haveCols []bool) (arrow.RecordBatch, error) {
	n := len(lrefs)
	nl := j.lschema.NumFields()
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(lsrcs))
	for c := range cols {
		var err error
		switch {
		case !want[c]:
			cols[c] = j.nullColumn(c, n)
		case have != nil && haveCols[c]:
			cols[c] = have.Column(c)
			cols[c].Retain()
		case c < nl:
			for i, s := range lsrcs {
				parts[i] = s.Column(c)
			}
			cols[c], err = gatherColumn(j.ctx, schema.Field(c).Type, parts, lrefs, allocator(j.mem))
		default:
			cols[c], err = j.rightColumn(c, schema.Field(c).Type, rrefs)
		}
		if err != nil {
			releaseArrays(cols)
			return nil, fmt.Errorf("ops: join: gather: %w", err)
		}
	}
	b := array.NewRecordBatch(schema, cols, int64(n))
	releaseArrays(cols)
	return b, nil
}

// rightColumn gathers the rows rrefs of the buffered right side's column c of inSchema (of
// type dt). A run of one right row repeated (every left row of a batch paired with the same
// right row: a partition-wise join against an aggregate's one row per partition) is a slice of
// the same row repeated, kept for the join's life and made again only for another row or
// more rows: the join against avg gathered that row's value once per left row of every batch.
func (j *joiner) rightColumn(c int, dt arrow.DataType, rrefs []rowRef) (arrow.Array, error) {
	n := len(rrefs)
	if n < 2 || slices.ContainsFunc(rrefs[1:], func(r rowRef) bool { return r != rrefs[0] }) {
		return gatherColumn(j.ctx, dt, j.rparts[c-j.lschema.NumFields()], rrefs, allocator(j.mem))
	}
	if j.repeats == nil {
		j.repeats = make([]repeatedRow, j.inSchema.NumFields())
	}
	rep := &j.repeats[c]
	if rep.a == nil || rep.ref != rrefs[0] || rep.a.Len() < n {
		a, err := gatherColumn(j.ctx, dt, j.rparts[c-j.lschema.NumFields()], rrefs, allocator(j.mem))
		if err != nil {
			return nil, err
		}
		if rep.a != nil {
			rep.a.Release()
		}
		rep.ref, rep.a = rrefs[0], a
	}
	return array.NewSlice(rep.a, 0, int64(n)), nil
}

// repeatedRow is one right row of a column repeated (joiner.rightColumn).
type repeatedRow struct {
	ref rowRef
	a   arrow.Array
}

// nullColumn returns n NULLs of column c of inSchema: a slice, from offset 0, of an array
// kept for the join's life (grown when n exceeds it), or up to MaxBatchRows rows of the
// process-wide all-null column of its type (NullColumn), which costs a join nothing (a
// partition-wise join runs one joiner per partition, scan/partjoin.go).
func (j *joiner) nullColumn(c, n int) arrow.Array {
	if n <= MaxBatchRows {
		return NullColumn(allocator(j.mem), j.inSchema.Field(c).Type, n)
	}
	if j.nulls == nil {
		j.nulls = make([]arrow.Array, j.inSchema.NumFields())
	}
	if a := j.nulls[c]; a == nil || a.Len() < n {
		if a != nil {
			a.Release()
		}
		j.nulls[c] = array.MakeArrayOfNull(allocator(j.mem), j.inSchema.Field(c).Type, n)
	}
	return array.NewSlice(j.nulls[c], 0, int64(n))
}

// pairs evaluates candidate pairs (left rows lp of the current batch, right rows rp) and
// queues the matching ones.
func (j *joiner) pairs(lp, rp []int32) error {
	lrefs, rrefs := j.lrefs[:0], j.prefs[:0]
	for i := range lp {
		lrefs = append(lrefs, rowRef{b: 0, r: lp[i]})
		rrefs = append(rrefs, j.rrefs[rp[i]])
	}
	j.lrefs, j.prefs = lrefs, rrefs
	cur := []arrow.RecordBatch{j.cur}
	pass, rb, err := j.residual(cur, lrefs, rrefs)
	if err != nil {
		return err
	}
	if rb != nil {
		defer rb.Release()
	}
	t := j.spec.Type
	kept := 0
	for i := range lp {
		if pass != nil && !pass[i] {
			continue
		}
		j.lmatched[lp[i]]++
		if t == JoinSingle && j.lmatched[lp[i]] > 1 {
			return ErrSubqueryRows
		}
		if t == JoinRight || t == JoinFull {
			j.rmatched[rp[i]] = true // never a shared table's (JoinTable)
		}
		lrefs[kept], rrefs[kept] = lrefs[i], rrefs[i]
		kept++
	}
	if t == JoinSemi || t == JoinAnti || kept == 0 {
		return nil
	}
	if kept < len(lp) {
		rb = nil // its rows are not the output's
	}
	b, err := j.batch(j.inSchema, j.outCols, cur, lrefs[:kept], rrefs[:kept], rb, j.resCols)
	if err != nil {
		return err
	}
	j.pending = append(j.pending, b)
	return nil
}

// residual evaluates the residual conjuncts on the candidate pairs (left rows lrefs of lsrcs,
// right rows rrefs), gathering only the columns they read: nil when there are none, else
// whether each pair passes (every conjunct true; scratch valid until the next call) and the
// batch of the gathered columns, which the caller releases.
func (j *joiner) residual(lsrcs []arrow.RecordBatch, lrefs, rrefs []rowRef) ([]bool, arrow.RecordBatch, error) {
	if len(j.spec.Residual) == 0 {
		return nil, nil, nil
	}
	b, err := j.batch(j.inSchema, j.resCols, lsrcs, lrefs, rrefs, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	n := len(lrefs)
	pass := slices.Grow(j.pass[:0], n)[:n]
	j.pass = pass
	for i := range pass {
		pass[i] = true
	}
	if err := conjunctsPass(j.ctx, b, j.spec.Residual, pass, j.mem); err != nil {
		b.Release()
		return nil, nil, err
	}
	return pass, b, nil
}

// leftTail queues the rows of the walked left batch the join type keeps beyond its pairs.
// The rows' references are built in scratch reused from batch to batch (j.keep, j.nullRefs);
// a semi or anti join keeping every row of the batch passes it as it is.
func (j *joiner) leftTail() error {
	keep := j.keep[:0]
	switch j.spec.Type {
	case JoinLeft, JoinFull, JoinSingle:
		for r, m := range j.lmatched {
			if m == 0 {
				keep = append(keep, rowRef{b: 0, r: int32(r)})
			}
		}
		j.keep = keep
		if len(keep) == 0 {
			return nil
		}
		rrefs := slices.Grow(j.nullRefs[:0], len(keep))[:len(keep)]
		j.nullRefs = rrefs
		for i := range rrefs {
			rrefs[i] = rowRef{b: j.rnull}
		}
		b, err := j.batch(j.inSchema, j.outCols, []arrow.RecordBatch{j.cur}, keep, rrefs, nil, nil)
		if err != nil {
			return err
		}
		j.pending = append(j.pending, b)
		return nil
	case JoinSemi:
		if !slices.Contains(j.lmatched, 0) {
			return j.keepAll()
		}
		for r, m := range j.lmatched {
			if m > 0 {
				keep = append(keep, rowRef{b: 0, r: int32(r)})
			}
		}
	case JoinAnti:
		nullAware := j.spec.NullAware && len(j.rrefs) > 0
		if nullAware && j.rNullKey {
			return nil // x NOT IN (…, NULL, …) is never true
		}
		for r, m := range j.lmatched {
			if m == 0 && !(nullAware && j.keyEnds[r] < 0) {
				keep = append(keep, rowRef{b: 0, r: int32(r)})
			}
		}
	default:
		return nil
	}
	j.keep = keep
	if len(keep) == 0 {
		return nil
	}
	if len(keep) == len(j.lmatched) {
		return j.keepAll()
	}
	b, err := j.batch(j.lschema, j.outCols, []arrow.RecordBatch{j.cur}, keep, nil, nil, nil)
	if err != nil {
		return err
	}
	j.pending = append(j.pending, b)
	return nil
}

// keepAll queues the walked left batch whole (a semi or anti join keeping its every row).
func (j *joiner) keepAll() error {
	j.cur.Retain()
	j.pending = append(j.pending, j.cur)
	return nil
}

// rightTail queues the next chunk of right rows without a match, NULL-extended on the left,
// for right and full joins.
func (j *joiner) rightTail() error {
	if t := j.spec.Type; t != JoinRight && t != JoinFull {
		j.tail = len(j.rrefs)
		return nil
	}
	var lrefs, rrefs []rowRef
	for j.tail < len(j.rrefs) && len(rrefs) < MaxBatchRows {
		if !j.rmatched[j.tail] {
			lrefs = append(lrefs, rowRef{})
			rrefs = append(rrefs, j.rrefs[j.tail])
		}
		j.tail++
	}
	if len(rrefs) == 0 {
		return nil
	}
	b, err := j.batch(j.inSchema, j.outCols, []arrow.RecordBatch{j.lnull}, lrefs, rrefs, nil, nil)
	if err != nil {
		return err
	}
	j.pending = append(j.pending, b)
	return nil
}
