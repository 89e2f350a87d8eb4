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
