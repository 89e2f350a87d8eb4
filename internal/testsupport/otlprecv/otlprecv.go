// Package otlprecv is test support: an OTLP receiver that records the spans and metrics
// exported to it, served over real gRPC (the OpenTelemetry collector's trace and metrics
// services, go.opentelemetry.io/proto/otlp) and over HTTP with protobuf bodies (POST
// /v1/traces and /v1/metrics, gzip-encoded or not), on 127.0.0.1. It stands in for an
// OpenTelemetry Collector, which is too heavy to build on the test machines: what a
// flightsrv process exports reaches it through the official exporters, unchanged.
package otlprecv

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// Transport names how a signal arrived.
const (
	GRPC = "grpc"
	HTTP = "http"
)

// Span is one span received: the resource's service.instance.id, the transport, its ids
// (hex), name, attributes (rendered as text) and linked span ids.
type Span struct {
	Instance, Transport           string
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Attrs                         map[string]string
	Links                         []string // "traceid/spanid"
}

// Metric is one metric received: the resource's service.instance.id, the transport and the
// metric's name.
type Metric struct {
	Instance, Transport, Name string
}

// Receiver records what it receives. Safe for concurrent use.
type Receiver struct {
	// GRPCAddr is host:port of the gRPC services; HTTPURL the base URL of the HTTP ones
	// (http://host:port, the paths /v1/traces and /v1/metrics below it).
	GRPCAddr, HTTPURL string

	mu      sync.Mutex
	spans   []Span
	metrics []Metric
}

// Start serves a receiver until tb's cleanup.
func Start(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer()
	colltrace.RegisterTraceServiceServer(gs, traceService{r: r})
	collmetrics.RegisterMetricsServiceServer(gs, metricsService{r: r})
	go func() { _ = gs.Serve(gl) }()
	tb.Cleanup(gs.Stop)
	r.GRPCAddr = gl.Addr().String()

	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in colltrace.ExportTraceServiceRequest
		if !readBody(w, req, &in) {
			return
		}
		r.addSpans(HTTP, &in)
		writeBody(w, &colltrace.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in collmetrics.ExportMetricsServiceRequest
		if !readBody(w, req, &in) {
			return
		}
		r.addMetrics(HTTP, &in)
		writeBody(w, &collmetrics.ExportMetricsServiceResponse{})
	})
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(hl) }()
	tb.Cleanup(func() { _ = hs.Close() })
	r.HTTPURL = "http://" + hl.Addr().String()
	return r
}

// readBody decodes a protobuf request body (gzip-encoded or not); false after answering 400.
func readBody(w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err == nil {
		err = proto.Unmarshal(b, m)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeBody(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

type traceService struct {
	colltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, in *colltrace.ExportTraceServiceRequest) (*colltrace.ExportTraceServiceResponse, error) {
	s.r.addSpans(GRPC, in)
	return &colltrace.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	collmetrics.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(_ context.Context, in *collmetrics.ExportMetricsServiceRequest) (*collmetrics.ExportMetricsServiceResponse, error) {
	s.r.addMetrics(GRPC, in)
	return &collmetrics.ExportMetricsServiceResponse{}, nil
}

// instance returns a resource's service.instance.id.
func instance(res *resourcepb.Resource) string {
	for _, kv := range res.GetAttributes() {
		if kv.GetKey() == "service.instance.id" {
			return text(kv.GetValue())
		}
	}
	return ""
}

// text renders an attribute value: a string as it is, a number or boolean in Go's
// formatting, anything else in protobuf's text form.
func text(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return prototext.Format(v)
}

func (r *Receiver) addSpans(transport string, in *colltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range in.GetResourceSpans() {
		inst := instance(rs.GetResource())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, kv := range sp.GetAttributes() {
					attrs[kv.GetKey()] = text(kv.GetValue())
				}
				var links []string
				for _, l := range sp.GetLinks() {
					links = append(links, hex.EncodeToString(l.GetTraceId())+"/"+hex.EncodeToString(l.GetSpanId()))
				}
				r.spans = append(r.spans, Span{Instance: inst, Transport: transport, TraceID: hex.EncodeToString(sp.GetTraceId()),
					SpanID: hex.EncodeToString(sp.GetSpanId()), ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()),
					Name: sp.GetName(), Attrs: attrs, Links: links})
			}
		}
	}
}

func (r *Receiver) addMetrics(transport string, in *collmetrics.ExportMetricsServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rm := range in.GetResourceMetrics() {
		inst := instance(rm.GetResource())
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				r.metrics = append(r.metrics, Metric{Instance: inst, Transport: transport, Name: m.GetName()})
			}
		}
	}
}

// Spans returns a copy of the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Metrics returns a copy of the metrics received so far.
func (r *Receiver) Metrics() []Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Metric(nil), r.metrics...)
}
