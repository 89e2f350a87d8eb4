package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Default soft memory limit of serve and demo (--go-memory-limit auto): 40 MiB of Go runtime
// memory, plus 32 MiB for every query stream in flight beyond the first, those together at
// most --total-query-memory (server.Config.GoMemoryLimit).
//
// Measured with bench's ordered scans on 2 busy cores: ORD's history keeps about 20 MiB live
// (the executor's per-bucket batches and archive decode spans), the 1.5M-row partition up to
// 30 MiB. With no limit the heap grows to twice that and freed pages are returned lazily: the
// process held 45–60 MiB of anonymous memory for ORD and about 70 MiB for the large
// partition; with this limit 33–38 MiB, at the same rows/s within the run-to-run noise (a
// 36 MiB limit halved the rows/s of archived buckets). The executable's own pages (about
// 60 MiB resident on Linux 6.18, see bench/doc.go) come on top; no limit governs them.
const (
	defaultMemoryLimit          = 40 << 20
	defaultMemoryLimitPerStream = 32 << 20
)

// memoryLimitFlag is --go-memory-limit: "auto", "off", or a size with GOMEMLIMIT's syntax (an
// integer with an optional unit B, KiB, MiB, GiB or TiB).
type memoryLimitFlag struct {
	auto  bool
	bytes int64 // when not auto; math.MaxInt64 for off
}

func (f *memoryLimitFlag) String() string {
	switch {
	case f == nil || f.auto:
		return "auto"
	case f.bytes == math.MaxInt64:
		return "off"
	}
	return strconv.FormatInt(f.bytes, 10)
}

func (f *memoryLimitFlag) Set(s string) error {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto":
		*f = memoryLimitFlag{auto: true}
		return nil
	case "off", "none":
		*f = memoryLimitFlag{bytes: math.MaxInt64}
		return nil
	}
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	if n == 0 {
		n = math.MaxInt64 // no limit (GOMEMLIMIT=0 would make the collector run continuously)
	}
	*f = memoryLimitFlag{bytes: n}
	return nil
}

// limits returns the server's MemoryLimit and MemoryLimitPerStream for the flag. auto defers
// to GOMEMLIMIT when the environment sets it (the runtime has applied it already).
func (f *memoryLimitFlag) limits() (base, perStream int64) {
	if !f.auto {
		return f.bytes, 0
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		return 0, 0
	}
	return defaultMemoryLimit, defaultMemoryLimitPerStream
}

// footerShare is the part of the Go memory limit the archive reader's cache of Parquet footers
// may hold (archive.ReaderOptions.FooterCacheBytes). The cached footers are live, pointer-rich
// heap the collector marks on every cycle, and under the limit the cycles come faster the less
// room is left: measured with bench's BenchmarkAnalytical fixture (1,332 archived buckets of
// about 5 KB, footers of about 13 KB each) under the default 40 MiB limit, the default cache
// (1,024 footers, about 13 MiB) made issue 19's queries 2.5–3 times slower than no cache at
// all, a cache of 256 footers (about 3.4 MiB) ran them at the uncached speed.
const footerShare = 0.1

// footerCacheBytes returns the footer cache's bound for the Go memory limit base (bytes, as
// limits returns it): footerShare of it, or of the runtime's limit (GOMEMLIMIT) when base is
// 0; 0 (the archive package's default) when no limit applies.
func footerCacheBytes(base int64) int64 {
	if base == 0 {
		base = debug.SetMemoryLimit(-1)
	}
	if base <= 0 || base == math.MaxInt64 {
		return 0
	}
	return max(int64(float64(base)*footerShare), 1)
}

// parseSize parses a byte count with GOMEMLIMIT's syntax: a non-negative integer with an
// optional unit B, KiB, MiB, GiB or TiB.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRight(t, "BKMGTiib")
	unit := t[len(num):]
	shift, ok := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unit must be B, KiB, MiB, GiB or TiB", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: not a non-negative integer with a unit", s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}
