package server

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/syncbuf"
)

// panicking is a Flight service whose GetFlightInfo and DoGet panic with a value that holds
// "secret" (standing for a plan's bytes or a partition value) when the descriptor or ticket
// says "boom", and answer otherwise.
type panicking struct {
	flight.BaseFlightServer
}

func (*panicking) GetFlightInfo(_ context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if string(d.Cmd) == "boom" {
		var m map[string]int
		m["secret"]++ // a nil-map write: a runtime error
	}
	return &flight.FlightInfo{FlightDescriptor: d}, nil
}

func (*panicking) DoGet(t *flight.Ticket, _ flight.FlightService_DoGetServer) error {
	if string(t.Ticket) == "boom" {
		panic("secret partition ORD")
	}
	return nil
}

// TestRecoveringInterceptors: a panic in a unary or a streaming call, through a real gRPC
// server with the server's interceptors, answers that call INTERNAL with a value-free message,
// leaves one error line with the stack (the panic's type, a runtime error's text, never
// another panic value's), counts flightsrv.panics.recovered by RPC, and the server goes on
// answering calls on the same connection.
func TestRecoveringInterceptors(t *testing.T) {
	var logs syncbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	reader := sdkmetric.NewManualReader()
	prevMP := otel.GetMeterProvider()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	defer otel.SetMeterProvider(prevMP)

	srv := grpc.NewServer(recovering()...)
	flight.RegisterFlightServiceServer(srv, &panicking{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cl := flight.NewFlightServiceClient(conn)
	ctx := context.Background()

	for round := range 2 {
		_, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("boom")})
		if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "secret") {
			t.Fatalf("round %d: GetFlightInfo that panics: %v, want a value-free INTERNAL", round, err)
		}
		if _, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte("fine")}); err != nil {
			t.Fatalf("round %d: GetFlightInfo after a panic: %v", round, err)
		}
		st, err := cl.DoGet(ctx, &flight.Ticket{Ticket: []byte("boom")})
		if err == nil {
			_, err = st.Recv()
		}
		if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "secret") {
			t.Fatalf("round %d: DoGet that panics: %v, want a value-free INTERNAL", round, err)
		}
	}
	out := logs.String()
	if strings.Contains(out, "secret partition") {
		t.Errorf("a panic value that is no runtime error was logged:\n%s", out)
	}
	for _, want := range []string{"where=GetFlightInfo", "where=DoGet", "panic_type=string", "assignment to entry in nil map", "goroutine "} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=ERROR"); n != 4 {
		t.Errorf("%d error lines for 4 panics:\n%s", n, out)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "flightsrv.panics.recovered" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				where, _ := dp.Attributes.Value("where")
				counts[where.AsString()] += dp.Value
			}
		}
	}
	if counts["GetFlightInfo"] != 2 || counts["DoGet"] != 2 {
		t.Errorf("flightsrv.panics.recovered = %v, want GetFlightInfo 2 and DoGet 2", counts)
	}
}

// TestSelfLocation: the advertised location of the replica listening on an address is the one
// naming that address, or, listening on every interface, the only one with its port.
func TestSelfLocation(t *testing.T) {
	adv := []string{"grpc+tcp://10.0.0.1:32010", "grpc+tls://10.0.0.2:32010", "grpc+tcp://10.0.0.3:4000"}
	for listen, want := range map[string]string{
		"10.0.0.2:32010": adv[1], "10.0.0.3:4000": adv[2], "0.0.0.0:4000": adv[2], ":4000": adv[2],
		"0.0.0.0:32010":  "", // two replicas advertise that port
		"10.0.0.9:32010": "", "bad": "",
	} {
		if got := selfLocation(listen, adv); got != want {
			t.Errorf("selfLocation(%q) = %q, want %q", listen, got, want)
		}
	}
}
