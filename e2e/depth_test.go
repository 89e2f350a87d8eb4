package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestLongChainsAsPostgres: sums of thousands of products of casts and chains of thousands of
// additions answer PostgreSQL's values (the depth check counts a sum of products as deep as
// the sum, not one level per cast and product); a chain deeper than PostgreSQL's stack allows
// (54001) is refused 54001 here too.
func TestLongChainsAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	cl := dial(t, e.on)
	products := func(n int) string {
		terms := make([]string, n)
		for i := range terms {
			terms[i] = fmt.Sprintf("(%d.5)::float8 * 1.25::float8", i)
		}
		return "SELECT (" + strings.Join(terms, " + ") + ")::text"
	}
	ones := func(n int) string { return "SELECT (1" + strings.Repeat(" + 1", n) + ")::text" }
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText, products(2500), products(4000), ones(4000))...)
	for _, q := range []string{products(5000), ones(5000)} {
		var pgErr *pgconn.PgError
		if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != "54001" {
			t.Fatalf("PostgreSQL %.60s…: %v, want 54001", q, err)
		}
		_, err := run(ctx, cl, q)
		st := status.Convert(err)
		state := ""
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				state = info.GetMetadata()["sqlstate"]
			}
		}
		if st.Code() != codes.InvalidArgument || state != "54001" || !strings.Contains(st.Message(), "statement too complex") {
			t.Errorf("%.60s…: %v (SQLSTATE %q), want 54001 statement too complex", q, err, state)
		}
	}
}
