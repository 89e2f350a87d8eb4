package aggregate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// BatchRows is the most rows an output batch holds.
const BatchRows = 8192

// New returns a reader that aggregates in according to s in mode.
//
// For Single and Partial, in yields raw rows and orig must be in.Schema() (same field types).
// For Final, in yields batches of PartialSchema(orig, s) (the concatenated outputs of Partial
// readers, in any number, including none) and orig is the original input schema. The reader's
// schema is OutputSchema(orig, s) for Single and Final, PartialSchema(orig, s) for Partial.
//
// The reader consumes all of in on its first Next, checking ctx before every batch and
// mem.Check() plus the estimated Go heap of its hash table and accumulators after every batch
// (a query over its limit fails with an error wrapping ledger.ErrMemoryLimit), then emits one
// row per group, in order of the groups' first appearance in in, in batches of at most
// BatchRows rows. An ungrouped aggregation emits exactly one row (also in Partial mode, also
// over no input); a grouped one over no input emits none. Errors (spec errors aside) arrive
// through Err, prefixed "aggregate: ": ctx's error, in's error, the memory limit,
// ErrSumOverflow.
//
// Every buffer of the output batches, and the group keys kept while consuming, are allocated
// from mem (nil: an unlimited ledger over the default allocator). The reader owns in and
// releases it once consumed, on an error, or when the reader is released; New releases it too
// when it returns an error. Each batch returned by RecordBatch is valid until the next call to
// Next or Release; Retain it to keep it. The reader keeps ctx for its first Next (a
// RecordReader's Next takes none). It is not safe for concurrent use, except Retain and
// Release.
func New(ctx context.Context, in array.RecordReader, orig *arrow.Schema, s Spec, mode Mode, mem *ledger.Ledger) (array.RecordReader, error) {
	if in == nil {
		return nil, errors.New("aggregate: nil input reader")
	}
	r, err := newReader(ctx, in, orig, s, mode, mem)
	if err != nil {
		in.Release()
		return nil, err
	}
	return r, nil
}

func newReader(ctx context.Context, in array.RecordReader, orig *arrow.Schema, s Spec, mode Mode, mem *ledger.Ledger) (*reader, error) {
	ms, err := validate(orig, s)
	if err != nil {
		return nil, err
	}
	if mem == nil {
		mem = ledger.New(nil, 0)
	}
	r := &reader{ctx: ctx, in: in, mem: mem, mode: mode, grouped: len(s.Groups) > 0}
	r.refs.Store(1)
	var want *arrow.Schema
	switch mode {
	case Single, Partial:
		want = orig
		if mode == Partial {
			r.schema, err = PartialSchema(orig, s)
		} else {
			r.schema, err = OutputSchema(orig, s)
		}
	case Final:
		r.schema, err = OutputSchema(orig, s)
		if err == nil {
			want, err = PartialSchema(orig, s)
		}
	default:
		return nil, fmt.Errorf("aggregate: unknown mode %d", uint8(mode))
	}
	if err != nil {
		return nil, err
	}
	if err := sameTypes(in.Schema(), want); err != nil {
		return nil, fmt.Errorf("aggregate: %s input: %w", mode, err)
	}

	next := len(s.Groups) // Final: the first state column
	for _, m := range ms {
		mm := measure{resolved: m, acc: newAccumulator(m, mode == Partial), arg: m.Arg, filter: m.Filter}
		n := len(stateFields(m))
		mm.state = [2]int{next, next + n}
		next += n
		r.measures = append(r.measures, mm)
	}
	if r.grouped {
		types := make([]arrow.DataType, len(s.Groups))
		cols := make([]int, len(s.Groups))
		for i, g := range s.Groups {
			types[i] = orig.Field(g).Type
			cols[i] = g
			if mode == Final {
				cols[i] = i
			}
		}
		r.grp = newGrouper(mem, types, cols)
	}
	return r, nil
}

// sameTypes checks that got has want's field types, in order.
func sameTypes(got, want *arrow.Schema) error {
	if got.NumFields() != want.NumFields() {
		return fmt.Errorf("schema has %d fields, want %d (%s)", got.NumFields(), want.NumFields(), want)
	}
	for i := range want.NumFields() {
		if !arrow.TypeEqual(got.Field(i).Type, want.Field(i).Type) {
			return fmt.Errorf("field %d %q is %s, want %s", i, got.Field(i).Name, got.Field(i).Type, want.Field(i).Type)
		}
	}
	return nil
}

type measure struct {
	resolved
	acc    accumulator
	arg    int    // Single/Partial: argument column (unused for count(*))
	filter int    // Single/Partial: filter column, -1 none
	state  [2]int // Final: the state columns [from, to)
	mask   []bool
}

type reader struct {
	refs atomic.Int64
	ctx  context.Context // for the first Next only; see New

	in       array.RecordReader // nil once released
	mem      *ledger.Ledger
	mode     Mode
	schema   *arrow.Schema
	grouped  bool
	measures []measure
	grp      *grouper
	ngroups  int

	consumed bool
	done     bool
	err      error
	keys     []arrow.Array
	next     int // next group to emit
	cur      arrow.RecordBatch
}

func (r *reader) Schema() *arrow.Schema { return r.schema }

func (r *reader) Retain() { r.refs.Add(1) }

func (r *reader) Release() {
	if r.refs.Add(-1) == 0 {
		if r.cur != nil {
			r.cur.Release()
			r.cur = nil
		}
		r.free()
	}
}

func (r *reader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record returns RecordBatch().
//
// Deprecated: use RecordBatch.
func (r *reader) Record() arrow.RecordBatch { return r.cur }

func (r *reader) Err() error { return r.err }

func (r *reader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.err != nil || r.done {
		return false
	}
	if !r.consumed {
		r.consumed = true
		err := r.consume()
		r.releaseInput()
		if err != nil {
			r.fail(err)
			return false
		}
		if r.grp != nil {
			r.keys = r.grp.keyArrays()
		}
	}
	if r.next >= r.ngroups {
		r.done = true
		r.free()
		return false
	}
	if err := r.ctx.Err(); err != nil {
		r.fail(fmt.Errorf("aggregate: %w", err))
		return false
	}
	rec, err := r.emit(r.next, min(r.next+BatchRows, r.ngroups))
	if err != nil {
		r.fail(err)
		return false
	}
	r.cur = rec
	r.next += int(rec.NumRows())
	return true
}

func (r *reader) fail(err error) {
	r.err = err
	r.free()
}

func (r *reader) releaseInput() {
	if r.in != nil {
		r.in.Release()
		r.in = nil
	}
}

// free releases everything but the current batch.
func (r *reader) free() {
	r.releaseInput()
	if r.grp != nil {
		r.grp.release()
		r.grp = nil
	}
	for _, k := range r.keys {
		k.Release()
	}
	r.keys = nil
	r.measures = nil
}

func (r *reader) consume() error {
	if !r.grouped {
		r.ngroups = 1
		for i := range r.measures {
			r.measures[i].acc.grow(1)
		}
	}
	for {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("aggregate: %w", err)
		}
		if !r.in.Next() {
			break
		}
		rec := r.in.RecordBatch()
		if err := r.add(rec); err != nil {
			return err
		}
		if err := r.checkMemory(); err != nil {
			return err
		}
	}
	if err := r.in.Err(); err != nil {
		return fmt.Errorf("aggregate: read input: %w", err)
	}
	return nil
}

// add aggregates one input batch.
func (r *reader) add(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	var gids []uint32
	if r.grouped {
		gids = r.grp.gidsFor(n)
		r.grp.lookup(rec, gids)
		if r.grp.n != r.ngroups {
			r.ngroups = r.grp.n
			for i := range r.measures {
				r.measures[i].acc.grow(r.ngroups)
			}
		}
	} else {
		gids = zeroGids(n)
	}
	cols := rec.Columns()
	for i := range r.measures {
		m := &r.measures[i]
		if r.mode == Final {
			if err := m.acc.merge(cols[m.state[0]:m.state[1]], gids); err != nil {
				return err
			}
			continue
		}
		var arg arrow.Array
		var filter *array.Boolean
		if m.Func != CountStar {
			arg = cols[m.arg]
		}
		if m.filter >= 0 {
			filter = cols[m.filter].(*array.Boolean)
		}
		if m.Func.isRegression() {
			x := cols[m.Arg2]
			mask := pairMask(arg, x, filter, m.mask)
			if mask != nil {
				m.mask = mask
			}
			if err := m.acc.(*regrAcc).updatePair(arg, x, gids, mask); err != nil {
				return err
			}
			continue
		}
		maskArg := arg
		if m.Func == ArrayAgg {
			maskArg = nil // array_agg keeps NULL values
		}
		mask := rowMask(maskArg, filter, m.mask)
		if mask != nil {
			m.mask = mask
		}
		if len(m.Keys) > 0 {
			keys := make([]arrow.Array, len(m.Keys))
			for k, key := range m.Keys {
				keys[k] = cols[key.Arg]
			}
			if err := m.acc.(*arrayAggAcc).updateKeyed(arg, keys, gids, mask); err != nil {
				return err
			}
			continue
		}
		if err := m.acc.update(arg, gids, mask); err != nil {
			return err
		}
	}
	return nil
}

// zeros holds group ids that are all 0 (an ungrouped batch's), shared read-only by every
// reader: accumulators only read group ids. It grows to the longest batch seen.
var zeros atomic.Pointer[[]uint32]

// zeroGids returns n group ids 0, not to be written.
func zeroGids(n int) []uint32 {
	if z := zeros.Load(); z != nil && len(*z) >= n {
		return (*z)[:n]
	}
	z := make([]uint32, max(n, BatchRows))
	zeros.Store(&z)
	return z[:n]
}

// heapBytes estimates the Go heap held by the hash table and the accumulators.
func (r *reader) heapBytes() int64 {
	var h int64
	if r.grp != nil {
		h += r.grp.heapBytes()
	}
	for _, m := range r.measures {
		h += m.acc.heapBytes() + int64(cap(m.mask))
	}
	return h
}

// checkMemory fails when the ledger is over its limit, or would be with the Go heap this
// reader holds.
func (r *reader) checkMemory() error {
	if err := r.mem.Check(); err != nil {
		return fmt.Errorf("aggregate: %w", err)
	}
	if lim := r.mem.Limit(); lim > 0 && r.heapBytes()+r.mem.Bytes() > lim {
		return fmt.Errorf("aggregate: %w", ledger.LimitError(lim))
	}
	return nil
}

// emit builds the output batch of groups lo..hi-1.
func (r *reader) emit(lo, hi int) (arrow.RecordBatch, error) {
	var alloc memory.Allocator = r.mem
	cols := make([]arrow.Array, 0, r.schema.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, k := range r.keys {
		cols = append(cols, array.NewSlice(k, int64(lo), int64(hi)))
	}
	for _, m := range r.measures {
		if r.mode == Partial {
			st, err := m.acc.state(alloc, lo, hi)
			cols = append(cols, st...)
			if err != nil {
				release()
				return nil, err
			}
			continue
		}
		res, err := m.acc.result(alloc, lo, hi)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, res)
	}
	rec := array.NewRecordBatch(r.schema, cols, int64(hi-lo))
	release()
	return rec, nil
}
