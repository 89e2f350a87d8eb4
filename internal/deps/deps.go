// Package deps pins the module's third-party dependencies while packages are being written.
package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow/compute/exprs"
	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/parquet-go/parquet-go"
	_ "github.com/pganalyze/pg_query_go/v6"
	_ "github.com/substrait-io/substrait-go/v8/plan"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/exporters/prometheus"
	_ "go.opentelemetry.io/otel/sdk/metric"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "gocloud.dev/blob/fileblob"
	_ "golang.org/x/sync/errgroup"
	_ "modernc.org/sqlite"
)
