package ops

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// sharedNullRows is the length of the process-wide all-null columns NullColumn slices: the
// executor's batch row cap (routing.MaxBatchRows).
const sharedNullRows = 8192

// sharedNulls holds one all-null column of sharedNullRows rows per type, by fingerprint,
// allocated from Go's heap once and never released.
var sharedNulls sync.Map

// NullColumn returns an all-null column of n rows of type dt, owned by the caller (release
// it). Up to sharedNullRows rows it is a slice of a process-wide column of that type, shared by
// every caller and never written: a column that nothing reads (FilterCols' columns left out,
// the shredded read's placeholder of the documents it does not read, scan's shredded.go)
// then costs no buffer of its own. Longer columns are allocated from mem. Safe for concurrent
// use.
func NullColumn(mem memory.Allocator, dt arrow.DataType, n int) arrow.Array {
	if n > sharedNullRows {
		return array.MakeArrayOfNull(mem, dt, n)
	}
	key := dt.Fingerprint()
	a, ok := sharedNulls.Load(key)
	if !ok {
		a, _ = sharedNulls.LoadOrStore(key, array.MakeArrayOfNull(memory.DefaultAllocator, dt, sharedNullRows))
	}
	return array.NewSlice(a.(arrow.Array), 0, int64(n))
}
