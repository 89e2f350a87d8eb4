package e2e

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
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
	// ended receives one value per stream the server ended (its trailers: a refusal here).
	ended chan struct{}
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
	u := &unreadConn{c: c, fr: http2.NewFramer(c, c), next: 1, done: make(chan struct{}), ended: make(chan struct{}, 1024)}
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
			case *http2.HeadersFrame:
				if f.StreamEnded() {
					u.ended <- struct{}{}
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

// TestOneClientCannotHoldEverySlot (trial 33 G1): one connection that opens many result
// streams and never reads them holds every query slot and fills the queue; another client's
// query then takes the place of one of its waiters, and once the stalled streams have waited
// --contended-stall-timeout the server closes the hogging connection, whose slots go to the
// waiting client, which gets its right answer — long before --stall-timeout (an hour here).
// Before, the other client was refused UNAVAILABLE ("too many queries") until --stall-timeout.
func TestOneClientCannotHoldEverySlot(t *testing.T) {
	e := newEnv(t)
	srv, err := server.Start(context.Background(), server.Config{
		Listen: "127.0.0.1:0", Tables: []routing.TableDef{flightsTable}, Hot: e.store, Archive: e.reader,
		Pushdown: true, MaxQueries: 2, MaxQueued: 4, QueueWait: time.Hour, StallTimeout: time.Hour,
		ContendedStallTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := context.Background()
	cl := dial(t, srv)
	info, err := cl.Execute(ctx, ordScan)
	if err != nil {
		t.Fatal(err)
	}
	hog := dialUnread(t, srv.Addr())
	for range 20 { // 2 run, 4 wait, the others are refused
		hog.doGet(t, info.Endpoint[0].Ticket.Ticket)
	}
	for range 14 { // the admission is full once the others are refused
		select {
		case <-hog.ended:
		case <-time.After(30 * time.Second):
			t.Fatal("the streams beyond the slots and the queue were not refused")
		}
	}
	from, to := ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")
	res, err := run(ctx, cl, countSQL("BOS", from, to))
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
