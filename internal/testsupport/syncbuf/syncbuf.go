// Package syncbuf is test support: a log destination that the server's goroutines may write
// while a test reads it.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is a strings.Builder behind a mutex. The zero value is ready; safe for concurrent
// use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
