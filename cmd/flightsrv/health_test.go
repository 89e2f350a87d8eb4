package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/server"
)

// TestHealthProbesTheStore: the store serve opens (openStore's wrapper) is probed by the
// health reporter: when its PostgreSQL database goes away the server answers NOT_SERVING
// within a probe interval, and SERVING again once the database is back (the wrapper used to
// hide the adapter's Ping, and health said SERVING while every hot query failed).
func TestHealthProbesTheStore(t *testing.T) {
	ctx := context.Background()
	st, dbURL := openMigratedPG(t)
	if _, ok := any(st).(routing.Pinger); !ok {
		t.Fatal("the opened store does not expose the adapter's Ping")
	}
	srv, err := server.Start(ctx, server.Config{Listen: "127.0.0.1:0", Hot: st, HealthInterval: 100 * time.Millisecond,
		Tables: []routing.TableDef{{Name: "flights", TableID: "t", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	conn, err := grpc.NewClient(srv.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	waitFor := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			res, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
			if err == nil && res.GetStatus() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("health: %v %v, want %s", res.GetStatus(), err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(healthpb.HealthCheckResponse_SERVING)

	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin := *u
	admin.Path = "/postgres"
	ac, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close(ctx)
	if _, err := ac.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	waitFor(healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := ac.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	waitFor(healthpb.HealthCheckResponse_SERVING)
}
