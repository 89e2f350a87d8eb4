package pgtest_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestDatabasesAreIsolated(t *testing.T) {
	srv := pgtest.Start(t)
	if again := pgtest.Start(t); again != srv {
		t.Fatal("Start returned a second server in the same test binary")
	}
	a, b := srv.NewDatabase(t), srv.NewDatabase(t)
	if a == b {
		t.Fatalf("NewDatabase returned the same URL twice: %s", a)
	}
	ua, err := url.Parse(a)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)

	if _, err := ca.Exec(ctx, "CREATE TABLE only_in_a (x BIGINT)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := cb.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("table created in database a is visible in database b")
	}
	var dbName string
	if err := ca.QueryRow(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	if "/"+dbName != ua.Path {
		t.Fatalf("connected to %q, URL path is %q", dbName, ua.Path)
	}
	var version string
	if err := ca.QueryRow(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("server version %s at %s", version, srv.URL)
}

// TestOwnServerHaltsAndResumes: a server of the test's own refuses connections once halted and
// serves the same data on the same URL once resumed.
func TestOwnServerHaltsAndResumes(t *testing.T) {
	srv := pgtest.StartOwn(t)
	if srv == pgtest.Start(t) {
		t.Fatal("StartOwn returned the shared server")
	}
	db := srv.NewDatabase(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE kept (x BIGINT); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	srv.Halt(t)
	if err := c.Ping(ctx); err == nil {
		t.Fatal("a connection opened before Halt still answers")
	}
	if c2, err := pgx.Connect(ctx, db); err == nil {
		c2.Close(ctx)
		t.Fatal("a halted server accepted a connection")
	}
	srv.Resume(t)
	c3, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close(ctx)
	var x int64
	if err := c3.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil || x != 42 {
		t.Fatalf("after Resume: %d %v, want 42", x, err)
	}
}
