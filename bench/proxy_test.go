package bench

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// countingProxy is a TCP proxy on 127.0.0.1 that forwards every connection to one upstream
// address and counts the bytes it relays in each direction. The benchmarks put it between a
// measuring store and PostgreSQL to learn how many bytes PostgreSQL sent for a query: wire
// bytes of the PostgreSQL protocol (RowDescription, DataRow, CommandComplete, ReadyForQuery…),
// not row payloads. Timed runs never go through it.
type countingProxy struct {
	ln       net.Listener
	upstream string
	down     atomic.Int64 // upstream → client (what the client received)
	up       atomic.Int64 // client → upstream
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	closed   bool
}

// startProxy starts a proxy to upstream (host:port); Close stops it.
func startProxy(upstream string) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's listen address.
func (p *countingProxy) Addr() string { return p.ln.Addr().String() }

// Reset zeroes both counters.
func (p *countingProxy) Reset() { p.down.Store(0); p.up.Store(0) }

// Counts returns the bytes relayed downstream (received by clients) and upstream since the
// last Reset.
func (p *countingProxy) Counts() (down, up int64) { return p.down.Load(), p.up.Load() }

func (p *countingProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *countingProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			c.Close()
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.relay(c)
		}()
	}
}

func (p *countingProxy) relay(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	if !p.track(server) {
		server.Close()
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, n *atomic.Int64) {
		_, _ = io.Copy(countingWriter{dst, n}, src)
		// Half-close is not needed by the PostgreSQL protocol: closing both ends ends the
		// other copy too.
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(server, client, &p.up)
	go pipe(client, server, &p.down)
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// Close stops accepting, closes every relayed connection and waits for the relays.
func (p *countingProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// proxiedURL returns the PostgreSQL URL u with its host:port replaced by addr.
func proxiedURL(u, addr string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	pu.Host = addr
	return pu.String(), nil
}

// TestCountingProxy checks the byte accounting the hot-tier figures rely on.
func TestCountingProxy(t *testing.T) {
	t.Parallel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 10)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		_, _ = c.Write(append(buf, buf...)) // answers twice what it got
	}()
	p, err := startProxy(echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 20)
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if down, up := p.Counts(); down != 20 || up != 10 {
		t.Fatalf("counted %d bytes down and %d up, want 20 and 10", down, up)
	}
	if u, err := proxiedURL("postgres://postgres@127.0.0.1:5432/db?sslmode=disable", "127.0.0.1:9"); err != nil ||
		u != "postgres://postgres@127.0.0.1:9/db?sslmode=disable" {
		t.Fatalf("proxiedURL = %q, %v", u, err)
	}
}
