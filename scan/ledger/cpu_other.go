//go:build !linux

package ledger

// threadCPU returns -1: the thread's CPU clock is read on Linux only, so elsewhere a CPU
// limit measures nothing.
func threadCPU() int64 { return -1 }
