package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Default soft memory limit of serve and demo (--go-memory-limit auto): 40 MiB of Go runtime
// memory, plus 32 MiB for every query stream in flight beyond the first.
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
