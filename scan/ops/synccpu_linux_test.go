//go:build linux

package ops

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// processCPU is the CPU time (user and system) the test process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKernelCPUIsCharged (issue 16, --query-cpu): the kernels a query's operators call run on
// the goroutine whose CPU time the ledger measures (ledger.CPUTimer), so their CPU time is
// charged. A stretch of comparisons and filters over a batch of 524,288 rows and five columns
// (integers, doubles, decimals, strings) through the wrapper is
// charged most of what the process spent meanwhile; the same stretch through arrow-go's calls,
// whose kernels run on goroutines of their own, is charged less than half of it (checked too,
// so that the test can fail).
func TestKernelCPUIsCharged(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(16, 19))
	const n = 1 << 19
	x := randArray(r, mem, arrow.PrimitiveTypes.Int64, n, 5)
	defer x.Release()
	cols := []arrow.Array{x, randArray(r, mem, arrow.BinaryTypes.String, n, 5), randArray(r, mem, arrow.PrimitiveTypes.Float64, n, 5),
		randArray(r, mem, &arrow.Decimal128Type{Precision: 20, Scale: 2}, n, 5), randArray(r, mem, arrow.BinaryTypes.String, n, 5)}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: fmt.Sprint("c", i), Type: c.DataType(), Nullable: true}
	}
	b := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, n)
	defer b.Release()
	releaseArrays(cols[1:])
	ctx := compute.WithAllocator(context.Background(), mem)
	checkCharged(t, func(lib bool) {
		for range 6 {
			filterGreater(t, ctx, lib, x, b)
		}
	})
}

// checkCharged runs work(true), a stretch of arrow-go's own calls, and work(false), the same
// through the wrappers, each under a ledger's CPU timer, and fails unless the library's is
// charged less than half of what the process spent meanwhile (else the test cannot tell) and
// the wrappers' at least half (the process's other threads, the garbage collector and the
// test runner, spend some of it).
func checkCharged(t *testing.T, work func(lib bool)) {
	t.Helper()
	stretch := func(lib bool) (charged, spent time.Duration) {
		l := ledger.New(nil, 0)
		l.SetCPULimit(time.Hour)
		p0 := processCPU()
		tm := l.StartCPU()
		work(lib)
		if err := tm.Stop(l); err != nil {
			t.Fatal(err)
		}
		return l.CPU(), processCPU() - p0
	}
	c, p := stretch(true)
	t.Logf("arrow-go's calls: charged %v of the %v the process spent", c, p)
	if c*2 >= p {
		t.Fatal("the test cannot tell")
	}
	c, p = stretch(false)
	t.Logf("the wrappers' calls: charged %v of the %v the process spent", c, p)
	if c*2 < p {
		t.Error("the wrappers' calls were not charged")
	}
}

// TestCastCPUIsCharged is TestKernelCPUIsCharged for casts (castDatum): a stretch of casts of
// 131,072 integers to text, the text back to int64 and the integers to decimal128 is charged
// most of what the process spent meanwhile; the same stretch through compute.CastDatum is
// charged less than half of it (checked too, so that the test can fail).
func TestCastCPUIsCharged(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(18, 16))
	x := randArray(r, mem, arrow.PrimitiveTypes.Int32, 1<<17, 5)
	defer x.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	checkCharged(t, func(lib bool) {
		for range 6 {
			castTwice(t, ctx, lib, x)
		}
	})
}
