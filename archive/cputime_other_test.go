//go:build !unix

package archive

import "time"

// processCPU is unavailable here: benchmarks report no CPU metrics.
func processCPU() (time.Duration, bool) { return 0, false }
