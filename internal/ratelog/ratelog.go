// Package ratelog writes log lines about events a client can cause at will (a refused
// sign-in, a refused TLS handshake) at a bounded rate, so that an operator sees them and a
// client cannot flood the log: at most Burst lines, refilled at PerSecond lines a second; the
// lines left out are counted and reported (suppressed=N) on the next line written.
package ratelog

import (
	"log/slog"
	"sync"
	"time"
)

// Limiter writes at a bounded rate to a logger. Safe for concurrent use.
type Limiter struct {
	log        *slog.Logger
	perSecond  float64
	burst      float64
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	suppressed int64
	now        func() time.Time
}

// New returns a limiter writing to log (nil: slog.Default() at each line) at most burst
// lines at once and perSecond lines a second on average.
func New(log *slog.Logger, perSecond float64, burst int) *Limiter {
	return &Limiter{log: log, perSecond: perSecond, burst: float64(burst), tokens: float64(burst), now: time.Now}
}

// Warn writes msg with args at warning level unless the rate is spent; it reports whether it
// wrote. A written line carries suppressed=N when N lines were left out since the last one.
func (l *Limiter) Warn(msg string, args ...any) bool {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.perSecond)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		l.mu.Unlock()
		return false
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed", n)
	}
	log := l.log
	if log == nil {
		log = slog.Default()
	}
	log.Warn(msg, args...)
	return true
}
