// Command flightsql-demo is the Go example client of flightsrv and a compatibility check for
// arrow-go's Flight SQL client: it asks the server for the number of flights leaving one
// airport in a time range (COUNT(*), answered by pushdown) and prints that airport's first
// flights in (timestamp, id) order, using a prepared statement with bound parameters.
//
//	go run ./clients/go -addr 127.0.0.1:32010 -origin ORD
//
// Against a server with authentication and TLS, give the user (the password comes from
// FLIGHTSRV_PASSWORD) and the CA of the server's certificate (and, for mutual TLS, a client
// certificate and key):
//
//	FLIGHTSRV_PASSWORD=… go run ./clients/go -addr HOST:PORT -user analyst -tls-ca ca.pem \
//	    [-tls-cert client.pem -tls-key client-key.pem]
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

func main() {
	addr := flag.String("addr", envOr("FLIGHTSRV_LISTEN", "127.0.0.1:32010"), "server address host:port")
	table := flag.String("table", "flights", "routed table")
	partCol := flag.String("partition-column", "origin", "the table's partition column")
	origin := flag.String("origin", "ORD", "partition value (origin airport)")
	from := flag.String("from", "2001-01-01T00:00:00Z", "range start, RFC 3339, inclusive")
	to := flag.String("to", "2001-08-01T00:00:00Z", "range end, RFC 3339, exclusive")
	n := flag.Int("n", 10, "how many flights to print")
	user := flag.String("user", "", "user name (password from FLIGHTSRV_PASSWORD): Basic handshake, then the bearer token it returns")
	tlsCA := flag.String("tls-ca", "", "PEM CA certificates: connect over TLS and verify the server with them")
	tlsCert := flag.String("tls-cert", "", "PEM client certificate for mutual TLS (with -tls-key)")
	tlsKey := flag.String("tls-key", "", "PEM private key of -tls-cert")
	flag.Parse()
	start, err := time.Parse(time.RFC3339, *from)
	if err != nil {
		log.Fatalf("-from: %v", err)
	}
	end, err := time.Parse(time.RFC3339, *to)
	if err != nil {
		log.Fatalf("-to: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	creds, err := transport(*tlsCA, *tlsCert, *tlsKey)
	if err != nil {
		log.Fatal(err)
	}
	cl, err := flightsql.NewClient(*addr, nil, nil, grpc.WithTransportCredentials(creds))
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	if *user != "" {
		// The handshake answers a bearer token; the returned context sends it on every call.
		if ctx, err = cl.Client.AuthenticateBasicToken(ctx, *user, os.Getenv("FLIGHTSRV_PASSWORD")); err != nil {
			log.Fatalf("sign in: %v", err)
		}
	}

	where := fmt.Sprintf("%s = $1 AND timestamp >= $2 AND timestamp < $3", *partCol)
	count, err := query(ctx, cl, fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE %s", *table, where), *origin, start, end)
	if err != nil {
		log.Fatalf("count: %v", err)
	}
	fmt.Printf("COUNT(*) of %s rows with partition %s in [%s, %s): %s\n", *table, *origin, *from, *to, count[0][0])
	rows, err := query(ctx, cl, fmt.Sprintf("SELECT timestamp, id, value FROM %s WHERE %s ORDER BY timestamp, id LIMIT %d", *table, where, *n), *origin, start, end)
	if err != nil {
		log.Fatalf("records: %v", err)
	}
	fmt.Printf("first %d flights:\n", len(rows))
	for _, r := range rows {
		fmt.Printf("  %s  %s  %s\n", r[0], r[1], r[2])
	}
}

// query prepares sql, binds (origin, start, end) as utf8 and timestamp[us, UTC] parameters,
// executes it and returns every row rendered as text.
func query(ctx context.Context, cl *flightsql.Client, sql, origin string, start, end time.Time) ([][]string, error) {
	stmt, err := cl.Prepare(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer stmt.Close(ctx)
	mem := memory.DefaultAllocator
	tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "p1", Type: arrow.BinaryTypes.String}, {Name: "p2", Type: tsType}, {Name: "p3", Type: tsType}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(origin)
	b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(start.UnixMicro()))
	b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(end.UnixMicro()))
	params := b.NewRecordBatch()
	defer params.Release()
	stmt.SetParameters(params)
	info, err := stmt.Execute(ctx)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return nil, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := range int(rec.NumRows()) {
				row := make([]string, rec.NumCols())
				for c := range row {
					col := rec.Column(c)
					if bin, ok := col.(*array.Binary); ok {
						row[c] = string(bin.Value(i))
					} else if ts, ok := col.(*array.Timestamp); ok {
						row[c] = ts.Value(i).ToTime(col.DataType().(*arrow.TimestampType).Unit).UTC().Format(time.RFC3339)
					} else {
						row[c] = col.ValueStr(i)
					}
				}
				out = append(out, row)
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// transport returns plaintext credentials without a CA, else TLS verifying the server with the
// CA file's certificates, presenting the client certificate when one is given.
func transport(caFile, certFile, keyFile string) (credentials.TransportCredentials, error) {
	if caFile == "" {
		return insecure.NewCredentials(), nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
