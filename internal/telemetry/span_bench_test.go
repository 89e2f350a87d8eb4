package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"

	"github.com/flightsrv/flightsrv/internal/testsupport/otlprecv"
)

// BenchmarkBucketSpans measures what a query's per-bucket spans cost under Setup's providers:
// one op is an archived bucket's span as the scan makes it (a flightsrv.fragment span adopted
// by the bucket's archive read, scan/fragspan.go, and so ended as pulpitum.archive.read with
// the 8 attributes of an archived Parquet bucket read without a limit or pruning, set in one
// call at its end), with OTLP export off (not recorded) and on (recorded, handed over and
// batched, exported over gRPC to a receiver in this process).
func BenchmarkBucketSpans(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "export=off"
		exp := Export{}
		if on {
			name = "export=on"
			exp = Export{Endpoint: "http://" + otlprecv.Start(b).GRPCAddr, Protocol: ProtocolGRPC}
		}
		b.Run(name, func(b *testing.B) {
			prevM, prevT := otel.GetMeterProvider(), otel.GetTracerProvider()
			defer func() { otel.SetMeterProvider(prevM); otel.SetTracerProvider(prevT) }()
			tel, err := Setup(context.Background(), Service{Version: "bench"}, exp)
			if err != nil {
				b.Fatal(err)
			}
			defer tel.Shutdown(context.Background())
			parent, call := otel.Tracer("call").Start(context.Background(), "arrow.flight.protocol.FlightService/DoGet")
			defer call.End()
			frag := otel.Tracer("scan")
			b.ReportAllocs()
			for b.Loop() {
				_, fs := frag.Start(parent, "flightsrv.fragment")
				if fs.IsRecording() {
					fs.SetName("pulpitum.archive.read")
					fs.SetAttributes(attribute.String("pulpitum.archive.operation", "read_batches"), attribute.String("pulpitum.archive.format", "parquet"),
						attribute.Int64("flightsrv.read.row_groups", 3), attribute.Int64("flightsrv.read.pages", 12),
						attribute.Int64("pulpitum.archive.bytes_read", 1<<20), attribute.Int64("pulpitum.archive.object_reads", 3),
						attribute.String("flightsrv.fragment.tier", "archive"), attribute.Int64("flightsrv.fragment.rows", 27000))
				}
				fs.End()
			}
		})
	}
}
