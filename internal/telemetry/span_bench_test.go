package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/internal/testsupport/otlprecv"
)

// BenchmarkBucketSpans measures what a query's per-bucket spans cost under Setup's providers:
// one op is a bucket's two spans as the scan makes them (a flightsrv.fragment span with its 3
// attributes and its child pulpitum.archive.read with 8, as an archived bucket read without
// pruning has them, each span's set in one call at its end), with OTLP export off (not
// recorded) and on (recorded, handed over and batched, exported over gRPC to a receiver in
// this process).
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
			frag, read := otel.Tracer("scan"), otel.Tracer("archive")
			b.ReportAllocs()
			for b.Loop() {
				ctx, fs := frag.Start(parent, "flightsrv.fragment")
				_, rs := read.Start(ctx, "pulpitum.archive.read", trace.WithSpanKind(trace.SpanKindClient))
				rs.SetAttributes(attribute.String("pulpitum.archive.operation", "read_batches"), attribute.Int64("pulpitum.query.limit", -1),
					attribute.String("pulpitum.archive.format", "parquet"), attribute.Int64("flightsrv.read.row_groups", 3),
					attribute.Int64("flightsrv.read.pages", 12), attribute.Int64("pulpitum.archive.bytes_read", 1<<20),
					attribute.Int64("pulpitum.archive.object_reads", 3), attribute.Int("pulpitum.archive.records", 27000))
				rs.End()
				fs.SetAttributes(attribute.String("flightsrv.fragment.tier", "archive"), attribute.Bool("flightsrv.fragment.pushed_down", false),
					attribute.Int64("flightsrv.fragment.rows", 27000))
				fs.End()
			}
		})
	}
}
