package server

import (
	"net"
	"sync"
)

// trackingListener is the gRPC listener: it remembers the connections it accepted so that the
// end of a drain, or Close, can cut them. A graceful stop waits for every call, and a call
// blocked sending to a client that stopped reading (HTTP/2 flow control) only returns when its
// connection goes; arrow-go's flight.Server exposes no hard stop, so the server closes the
// connections itself. Safe for concurrent use.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool // closeConns was called: later connections are closed at once
}

func newTrackingListener(ln net.Listener) *trackingListener {
	return &trackingListener{Listener: ln, conns: map[*trackedConn]struct{}{}}
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		_ = c.Close()
		return tc, nil // gRPC sees a connection that fails at once
	}
	l.conns[tc] = struct{}{}
	return tc, nil
}

// closeConns closes every accepted connection, and every later one as it is accepted.
func (l *trackingListener) closeConns() {
	l.mu.Lock()
	conns := l.conns
	l.conns = map[*trackedConn]struct{}{}
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
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
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
