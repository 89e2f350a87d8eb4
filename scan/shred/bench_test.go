package shred

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkGetBucket is a warm read of one bucket's two fields as issue 19's analytical
// queries read them (`->"delay":int4` and `->"destination":text`, 2,240 rows: the 3M-row
// fixture's mean bucket), the text column's values three-letter airport codes (ASCII) or
// codes with a non-ASCII name among them.
func BenchmarkGetBucket(b *testing.B) {
	const rows = 2240
	for _, tc := range []struct {
		name  string
		names []string
	}{
		{"ascii", []string{"ORD", "ATL", "DFW", "LAX", "SFO", "JFK", "DEN"}},
		{"utf8", []string{"ORD", "Zürich", "ATL", "東京", "DFW"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := Open(b.TempDir(), 1<<30)
			if err != nil {
				b.Fatal(err)
			}
			ib := array.NewInt32Builder(memory.DefaultAllocator)
			sb := array.NewStringBuilder(memory.DefaultAllocator)
			for i := range rows {
				ib.Append(int32(i*37%400 - 60))
				sb.Append(tc.names[i*13%len(tc.names)])
			}
			delay, dest := ib.NewArray(), sb.NewArray()
			ib.Release()
			sb.Release()
			defer delay.Release()
			defer dest.Release()
			const buckets = 16
			for k := range buckets {
				if err := c.Put(fmt.Sprint("bucket ", k), []string{`->"delay":int4`, `->"destination":text`}, []arrow.Array{delay, dest}, memory.DefaultAllocator); err != nil {
					b.Fatal(err)
				}
			}
			fields := []Field{{`->"delay":int4`, arrow.PrimitiveTypes.Int32}, {`->"destination":text`, arrow.BinaryTypes.String}}
			b.SetBytes(int64(rows * (4 + 4 + 3)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cols, ok := c.Get(fmt.Sprint("bucket ", i%buckets), fields, memory.DefaultAllocator)
				if !ok {
					b.Fatal("miss")
				}
				releaseAll(cols)
			}
		})
	}
}
