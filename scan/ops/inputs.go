package ops

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// input is what compiling any expression over one input schema needs, built once per schema
// rather than per expression: a projection of n expressions over n columns (a wide select
// list, a wide join's output) then compiles in O(n), not O(n²) (two 400-column derived tables
// joined took half a minute and 1.7 GB to plan). Read-only once built.
type input struct {
	// anon is the schema with fields named c0, c1… (exprs matches columns by name), all
	// nullable.
	anon *arrow.Schema
	// empty is a batch of anon without rows, on which Compile type-checks an expression: a
	// zero-length array per column, from Go's allocator (nothing to release).
	empty arrow.RecordBatch
	// none marks no column (a Column's refs), never written.
	none []bool
}

// inputs caches input by schema, for the few schemas being compiled over at a time: up to
// inputsKept of them, the oldest dropped first. Keyed by pointer: one *arrow.Schema is one
// operator's input, the same for all its expressions; an equal schema elsewhere only builds
// its own input.
var inputs struct {
	sync.Mutex
	by    map[*arrow.Schema]*input
	order []*arrow.Schema
}

const inputsKept = 8

// inputOf returns the input of schema in (cached in inputs).
func inputOf(in *arrow.Schema) *input {
	inputs.Lock()
	x, ok := inputs.by[in]
	inputs.Unlock()
	if ok {
		return x
	}
	fields := make([]arrow.Field, in.NumFields())
	cols := make([]arrow.Array, len(fields))
	for i := range fields {
		fields[i] = arrow.Field{Name: fmt.Sprintf("c%d", i), Type: in.Field(i).Type, Nullable: true}
		cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, fields[i].Type, 0)
	}
	x = &input{anon: arrow.NewSchema(fields, nil), none: make([]bool, len(fields))}
	x.empty = array.NewRecordBatch(x.anon, cols, 0)
	for _, a := range cols {
		a.Release()
	}
	inputs.Lock()
	defer inputs.Unlock()
	if y, ok := inputs.by[in]; ok {
		return y // built meanwhile by another compilation
	}
	if inputs.by == nil {
		inputs.by = map[*arrow.Schema]*input{}
	}
	if len(inputs.order) == inputsKept {
		delete(inputs.by, inputs.order[0])
		inputs.order = append(inputs.order[:0], inputs.order[1:]...)
	}
	inputs.by[in] = x
	inputs.order = append(inputs.order, in)
	return x
}
