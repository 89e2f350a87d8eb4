package ops

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSpecialBytes: the first byte specialBytes marks in a word of eight document bytes is
// the first byte strSpecial marks (none marked when there is none), for every byte value at
// every position among bytes that are not special, for each pair of byte values at two
// positions, and for a million random words.
func TestSpecialBytes(t *testing.T) {
	first := func(w uint64) int {
		for k := range 8 {
			if strSpecial[byte(w>>(8*k))] {
				return k
			}
		}
		return 8
	}
	check := func(w uint64) {
		t.Helper()
		got := 8
		if m := specialBytes(w); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := first(w); got != want {
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], w)
			t.Fatalf("% x: first special byte %d, specialBytes says %d", b, want, got)
		}
	}
	plain := binary.LittleEndian.Uint64([]byte("abcdefgh"))
	for k := range 8 {
		for c := range 256 {
			check(plain&^(0xff<<(8*k)) | uint64(c)<<(8*k))
		}
	}
	for c1 := range 256 {
		for c2 := range 256 {
			for _, pos := range [][2]int{{0, 1}, {2, 5}, {6, 7}} {
				w := plain &^ (0xff<<(8*pos[0]) | 0xff<<(8*pos[1]))
				check(w | uint64(c1)<<(8*pos[0]) | uint64(c2)<<(8*pos[1]))
			}
		}
	}
	r := rand.New(rand.NewPCG(8, 19))
	for range 1_000_000 {
		check(r.Uint64())
	}
}

// BenchmarkScanDoc measures scanDoc alone over documents shaped as the flights payloads
// BenchmarkAnalytical reads ({"delay":-3,"distance":599,"destination":"SFO"}: the loader's
// encoding of the sample's columns), asking for the members of the issue 19 queries that read
// two (delay, destination), per document. cpu-ns/doc is the benchmark goroutine's thread CPU
// time (getrusage RUSAGE_THREAD), which on a shared machine moves less than the wall time.
func BenchmarkScanDoc(b *testing.B) {
	r := rand.New(rand.NewPCG(19, 7))
	airports := []string{"SFO", "LAX", "ORD", "JFK", "ATL", "DFW", "DEN", "SEA"}
	docs := make([][]byte, 4096)
	for i := range docs {
		d := []byte(`{"delay":`)
		d = strconv.AppendInt(d, int64(r.IntN(300)-20), 10)
		d = append(d, `,"distance":`...)
		d = strconv.AppendInt(d, int64(r.IntN(2500)+50), 10)
		d = append(d, `,"destination":"`...)
		d = append(d, airports[r.IntN(len(airports))]...)
		docs[i] = append(d, `"}`...)
	}
	keys := []string{"delay", "destination"}
	out := make([]jsonSpan, len(keys))
	var sc jsonScanner
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(rusageThread, &before)
	n := 0
	for b.Loop() {
		for _, d := range docs {
			if _, st := sc.scanDoc(d, keys, out); st != docOK {
				b.Fatal(st)
			}
		}
		n += len(docs)
	}
	_ = syscall.Getrusage(rusageThread, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/doc")
}

// rusageThread is Linux's RUSAGE_THREAD: getrusage of the calling thread alone.
const rusageThread = 1
