package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// unreadConn is a raw HTTP/2 client connection that announces a zero flow-control window for
// its streams and never reads their data (trial 33 G1's attack): the server can send nothing
// on them, so a query stream it opens blocks on its first window and holds its slot.
type unreadConn struct {
	c    net.Conn
	fr   *http2.Framer
	next uint32 // next stream id
	done chan struct{}
	// ended receives the grpc-status of each stream the server ended (its trailers).
	ended chan string
}

// dialUnread connects to addr, sends the client preface with SETTINGS_INITIAL_WINDOW_SIZE 0
// and answers the server's SETTINGS; done is closed once the server ends the connection (a
// GOAWAY or the socket's end).
func dialUnread(t *testing.T, addr string) *unreadConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	u := &unreadConn{c: c, fr: http2.NewFramer(c, c), next: 1, done: make(chan struct{}), ended: make(chan string, 1024)}
	u.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := u.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	acks := make(chan struct{}, 4)
	go func() {
		defer close(u.done)
		for {
			f, err := u.fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					acks <- struct{}{}
				}
			case *http2.MetaHeadersFrame:
				if f.StreamEnded() {
					u.ended <- f.PseudoValue("status") + " grpc-status " + headerValue(f, "grpc-status")
				}
			case *http2.GoAwayFrame:
				return
			}
		}
	}()
	select {
	case <-acks:
	case <-time.After(10 * time.Second):
		t.Fatal("no SETTINGS from the server")
	}
	if err := u.fr.WriteSettingsAck(); err != nil {
		t.Fatal(err)
	}
	return u
}

// headerValue is the value of f's field name ("" without one).
func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.Fields {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}

// grant lets the server send n more bytes on each of streams (and on the connection).
func (u *unreadConn) grant(t *testing.T, n uint32, streams ...uint32) {
	if err := u.fr.WriteWindowUpdate(0, n*uint32(len(streams))); err != nil {
		return // the connection is gone: the caller sees done
	}
	for _, id := range streams {
		_ = u.fr.WriteWindowUpdate(id, n)
	}
}

// doGet opens a DoGet stream of ticket on u (one HEADERS and one DATA frame: the request
// message, which the server's window of 64 KiB admits).
func (u *unreadConn) doGet(t *testing.T, ticket []byte) {
	t.Helper()
	var hdr bytes.Buffer
	enc := hpack.NewEncoder(&hdr)
	for _, kv := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/arrow.flight.protocol.FlightService/DoGet"},
		{":authority", u.c.RemoteAddr().String()}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	msg, err := proto.Marshal(&flight.Ticket{Ticket: ticket})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 5+len(msg))
	binary.BigEndian.PutUint32(body[1:], uint32(len(msg)))
	copy(body[5:], msg)
	id := u.next
	u.next += 2
	if err := u.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hdr.Bytes(), EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if err := u.fr.WriteData(id, true, body); err != nil {
		t.Fatal(err)
	}
}

// contendedServer starts a server over a new env with two query slots, queued places (0: the
// default), waits of an hour but contendedStall (--contended-stall-timeout), and returns the
// env, the server and a ticket of ordScan (far more than a flow-control window).
func contendedServer(t *testing.T, queued int, contendedStall time.Duration) (*env, *server.Server, []byte) {
	t.Helper()
	e := newEnv(t)
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, MaxQueries: 2, MaxQueued: queued, QueueWait: time.Hour, StallTimeout: time.Hour,
		ContendedStallTimeout: contendedStall,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	info, err := dial(t, srv).Execute(context.Background(), ordScan)
	if err != nil {
		t.Fatal(err)
	}
	return e, srv, info.Endpoint[0].Ticket.Ticket
}

// TestOneClientCannotHoldEverySlot (trial 33 G1): one connection that opens many result
// streams and never reads them holds every query slot and fills the queue; another client's
// query then takes the place of one of its waiters, and once the stalled streams have waited
// --contended-stall-timeout the server closes the hogging connection, whose slots go to the
// waiting client, which gets its right answer — long before --stall-timeout (an hour here).
// Before, the other client was refused UNAVAILABLE ("too many queries") until --stall-timeout.
func TestOneClientCannotHoldEverySlot(t *testing.T) {
	e, srv, ticket := contendedServer(t, 4, 300*time.Millisecond)
	ctx := context.Background()
	hog := dialUnread(t, srv.Addr())
	for range 20 { // 2 run, 4 wait, the others are refused
		hog.doGet(t, ticket)
	}
	for range 14 { // the admission is full once the others are refused
		select {
		case <-hog.ended:
		case <-time.After(30 * time.Second):
			t.Fatal("the streams beyond the slots and the queue were not refused")
		}
	}
	from, to := ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")
	res, err := run(ctx, dial(t, srv), countSQL("BOS", from, to))
	if err != nil {
		t.Fatalf("a query beside a client that holds every slot and never reads: %v", err)
	}
	defer res.release()
	if n, want := scalarCount(t, res), int64(len(expected(e.sample, "BOS", from, to))); n != want {
		t.Fatalf("count %d, want %d", n, want)
	}
	select {
	case <-hog.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hogging connection is still open")
	}
}

// TestSteadyReaderKeepsItsSlots (trial 35): a client holding every slot that reads its streams
// at a steady pace — slower than the server sends, so its sends wait on it, but far above the
// 256 KiB/s floor (here 2.4 MB/s a stream, window updates every 20 ms) — is not reclaimed
// while another client waits: its streams end with status OK, and the waiting client is
// answered. (Results go as pre-encoded messages, which admission once counted as 0 bytes:
// every reader slower than the server looked like one that stopped, and was cut.)
func TestSteadyReaderKeepsItsSlots(t *testing.T) {
	_, srv, ticket := contendedServer(t, 0, 100*time.Millisecond)
	ctx := context.Background()
	reader := dialUnread(t, srv.Addr())
	reader.doGet(t, ticket) // stream 1
	reader.doGet(t, ticket) // stream 3
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				reader.grant(t, 48<<10, 1, 3)
			}
		}
	}()
	waiting := make(chan error, 1)
	go func() {
		res, err := run(ctx, dial(t, srv), countSQL("BOS", ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")))
		if err == nil {
			res.release()
		}
		waiting <- err
	}()
	for range 2 {
		select {
		case st := <-reader.ended:
			if !strings.HasSuffix(st, "grpc-status 0") {
				t.Fatalf("a steady reader's stream ended with %q", st)
			}
		case <-reader.done:
			t.Fatal("the steady reader's connection was closed (reclaimed)")
		case <-time.After(time.Minute):
			t.Fatal("the steady reader's streams did not end")
		}
	}
	if err := <-waiting; err != nil {
		t.Fatalf("the waiting client: %v", err)
	}
}
