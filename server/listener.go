package server

import (
	"context"
	"net"
	"sync"
	"syscall"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/flightsrv/flightsrv/internal/ratelog"
)

// trackingListener is the gRPC listener: it remembers the connections it accepted so that the
// end of a drain, or Close, can cut them. A graceful stop waits for every call, and a call
// blocked sending to a client that stopped reading (HTTP/2 flow control) only returns when its
// connection goes; arrow-go's flight.Server exposes no hard stop, so the server closes the
// connections itself. It also holds at most max connections open (Config.MaxConns; 0: no
// bound), at most perIP of them from one IP address (Config.MaxConnsPerIP; 0: no bound): one
// accepted beyond either is closed at once, so that clients opening connections cannot take
// the file descriptors the stores need (trial 33 G2), nor one host every place (trial 34 S4).
// Safe for concurrent use.
type trackingListener struct {
	net.Listener
	max, perIP int
	log        *ratelog.Limiter
	refused    metric.Int64Counter
	mu         sync.Mutex
	conns      map[*trackedConn]struct{}
	byIP       map[string]int // open connections per remote IP
	closed     bool           // closeConns was called: later connections are closed at once
}

// newTrackingListener tracks ln's connections, at most max open (0: no bound) and perIP from
// one IP (0: no bound), logging refusals to log (nil: none).
func newTrackingListener(ln net.Listener, max, perIP int, log *ratelog.Limiter) *trackingListener {
	l := &trackingListener{Listener: ln, max: max, perIP: perIP, log: log, conns: map[*trackedConn]struct{}{}, byIP: map[string]int{}}
	l.refused, _ = otel.Meter("flightsrv").Int64Counter("flightsrv.connections.refused", metric.WithUnit("{connection}"),
		metric.WithDescription("Client connections closed as they were accepted because --max-conns were open."))
	_, _ = otel.Meter("flightsrv").Int64ObservableGauge("flightsrv.connections.open", metric.WithUnit("{connection}"),
		metric.WithDescription("Client connections open."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(l.open()))
			return nil
		}))
	return l
}

func (l *trackingListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, l: l}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			_ = c.Close()
			return tc, nil // gRPC sees a connection that fails at once
		}
		tc.ip = remoteIP(c)
		flag, bound := "", 0
		switch {
		case l.max > 0 && len(l.conns) >= l.max:
			flag, bound = "--max-conns", l.max
		case l.perIP > 0 && l.byIP[tc.ip] >= l.perIP:
			flag, bound = "--max-conns-per-ip", l.perIP
		}
		if flag != "" {
			l.mu.Unlock()
			_ = c.Close()
			if l.refused != nil {
				l.refused.Add(context.Background(), 1)
			}
			if l.log != nil {
				l.log.Warn("closed a new client connection: "+flag+" connections are open", "bound", bound)
			}
			continue
		}
		l.conns[tc] = struct{}{}
		l.byIP[tc.ip]++
		l.mu.Unlock()
		return tc, nil
	}
}

// open returns the number of connections open.
func (l *trackingListener) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// DefaultMaxConns returns Config.MaxConns's default for the process's file descriptor limit
// (RLIMIT_NOFILE, which Go raises to its hard limit at start): the limit less 1,024 kept for
// the stores (database connections, archive objects, the SQLite files) and logs, at most
// 10,000 (about 25 KiB of memory each), or half of a limit under 2,048; 10,000 when the limit
// cannot be read.
func DefaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 10000
	}
	if rl.Cur < 2048 {
		return max(16, int(rl.Cur/2))
	}
	return int(min(10000, rl.Cur-1024))
}

// closeConns closes every accepted connection, and every later one as it is accepted.
func (l *trackingListener) closeConns() {
	l.mu.Lock()
	conns := l.conns
	l.conns = map[*trackedConn]struct{}{}
	l.byIP = map[string]int{}
	l.closed = true
	l.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// trackedConn leaves its listener's set when closed.
type trackedConn struct {
	net.Conn
	l    *trackingListener
	ip   string // the remote IP address, as counted in l.byIP
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		if _, ok := c.l.conns[c]; ok {
			delete(c.l.conns, c)
			if c.l.byIP[c.ip]--; c.l.byIP[c.ip] <= 0 {
				delete(c.l.byIP, c.ip)
			}
		}
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// remoteIP is c's remote IP address without its port (the whole address when it has none).
func remoteIP(c net.Conn) string {
	addr := c.RemoteAddr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// closeRemote closes the accepted connection whose remote address is remote (a stream's
// peer address), if any, and reports whether there was one.
func (l *trackingListener) closeRemote(remote string) bool {
	l.mu.Lock()
	var found *trackedConn
	for c := range l.conns {
		if c.RemoteAddr().String() == remote {
			found = c
			break
		}
	}
	l.mu.Unlock()
	if found == nil {
		return false
	}
	_ = found.Close()
	return true
}
