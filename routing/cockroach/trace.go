package cockroach

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/flightsrv/flightsrv/routing"
)

// stmtInfo describes one of the store's statements for its span (docs/pulpitum-v4.md §6.1).
type stmtInfo struct {
	name       string // span name and db.query.summary
	operation  string // db.operation.name
	collection string // db.collection.name
}

// statements maps the exact text of every statement the store sends to its description. It
// is filled by register during package initialisation and read-only afterwards.
var statements = map[string]stmtInfo{}

// register records sql under the given span name, operation and collection and returns sql.
func register(name, operation, collection, sql string) string {
	statements[sql] = stmtInfo{name: name, operation: operation, collection: collection}
	return sql
}

// describe returns the description of sql; transaction control statements sent by pgx and
// unknown statements get a name from their first word.
func describe(sql string) stmtInfo {
	if info, ok := statements[sql]; ok {
		return info
	}
	word, _, _ := strings.Cut(strings.TrimSpace(sql), " ")
	word = strings.ToUpper(word)
	if word == "" {
		word = "OTHER"
	}
	return stmtInfo{name: word, operation: word}
}

func staticAttributes(database, host string, port uint16) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("db.system.name", "cockroachdb"),
		attribute.String("db.namespace", database),
		attribute.String("server.address", host),
		attribute.Int("server.port", int(port)),
	}
}

// statementTracer is installed on every pool connection. For each statement it counts one hot
// statement into the context's routing.ReadStats, starts a client span named after the
// statement (attributes: db.system.name, db.namespace, db.operation.name, db.collection.name,
// db.query.summary, the parameterised db.query.text, server.address/port; never parameter
// values) and forwards to the configured tracer.
type statementTracer struct {
	next   pgx.QueryTracer
	tracer trace.Tracer
	attrs  []attribute.KeyValue
}

type spanKey struct{}

var (
	_ pgx.QueryTracer    = (*statementTracer)(nil)
	_ pgx.PrepareTracer  = (*statementTracer)(nil)
	_ pgx.ConnectTracer  = (*statementTracer)(nil)
	_ pgx.CopyFromTracer = (*statementTracer)(nil)
)

// TraceQueryStart implements pgx.QueryTracer.
func (t *statementTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	routing.StatsFrom(ctx).AddHotStatement()
	info := describe(data.SQL)
	attrs := append(make([]attribute.KeyValue, 0, len(t.attrs)+4), t.attrs...)
	attrs = append(attrs,
		attribute.String("db.operation.name", info.operation),
		attribute.String("db.query.summary", info.name),
		attribute.String("db.query.text", data.SQL),
	)
	if info.collection != "" {
		attrs = append(attrs, attribute.String("db.collection.name", info.collection))
	}
	ctx, span := t.tracer.Start(ctx, info.name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	ctx = context.WithValue(ctx, spanKey{}, span)
	if t.next != nil {
		ctx = t.next.TraceQueryStart(ctx, conn, data)
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *statementTracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if t.next != nil {
		t.next.TraceQueryEnd(ctx, conn, data)
	}
	span, ok := ctx.Value(spanKey{}).(trace.Span)
	if !ok {
		return
	}
	if data.Err != nil {
		recordError(span, data.Err)
	} else if data.CommandTag.Select() {
		span.SetAttributes(attribute.Int64("db.response.returned_rows", data.CommandTag.RowsAffected()))
	}
	span.End()
}

// TracePrepareStart implements pgx.PrepareTracer by forwarding to the configured tracer.
func (t *statementTracer) TracePrepareStart(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareStartData) context.Context {
	if next, ok := t.next.(pgx.PrepareTracer); ok {
		return next.TracePrepareStart(ctx, conn, data)
	}
	return ctx
}

// TracePrepareEnd implements pgx.PrepareTracer by forwarding to the configured tracer.
func (t *statementTracer) TracePrepareEnd(ctx context.Context, conn *pgx.Conn, data pgx.TracePrepareEndData) {
	if next, ok := t.next.(pgx.PrepareTracer); ok {
		next.TracePrepareEnd(ctx, conn, data)
	}
}

// TraceCopyFromStart implements pgx.CopyFromTracer by forwarding to the configured tracer.
func (t *statementTracer) TraceCopyFromStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromStartData) context.Context {
	if next, ok := t.next.(pgx.CopyFromTracer); ok {
		return next.TraceCopyFromStart(ctx, conn, data)
	}
	return ctx
}

// TraceCopyFromEnd implements pgx.CopyFromTracer by forwarding to the configured tracer.
func (t *statementTracer) TraceCopyFromEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceCopyFromEndData) {
	if next, ok := t.next.(pgx.CopyFromTracer); ok {
		next.TraceCopyFromEnd(ctx, conn, data)
	}
}

// TraceConnectStart implements pgx.ConnectTracer by forwarding to the configured tracer.
func (t *statementTracer) TraceConnectStart(ctx context.Context, data pgx.TraceConnectStartData) context.Context {
	if next, ok := t.next.(pgx.ConnectTracer); ok {
		return next.TraceConnectStart(ctx, data)
	}
	return ctx
}

// TraceConnectEnd implements pgx.ConnectTracer by forwarding to the configured tracer.
func (t *statementTracer) TraceConnectEnd(ctx context.Context, data pgx.TraceConnectEndData) {
	if next, ok := t.next.(pgx.ConnectTracer); ok {
		next.TraceConnectEnd(ctx, data)
	}
}

// startSpan starts an internal span of the store (schema migration and validation).
func (s *Store) startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, name, trace.WithAttributes(attribute.String("db.system.name", "cockroachdb")))
}

// recordError marks span failed with a value-free description: the SQLSTATE for database
// errors, the error's type otherwise.
func recordError(span trace.Span, err error) {
	if err == nil {
		return
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		span.SetAttributes(attribute.String("db.response.status_code", pgErr.Code))
		span.SetStatus(codes.Error, "SQLSTATE "+pgErr.Code)
		return
	}
	span.SetStatus(codes.Error, "statement failed")
}
