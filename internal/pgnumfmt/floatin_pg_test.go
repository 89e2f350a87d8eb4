package pgnumfmt

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

// TestFloatInAsPostgres: FloatIn reads every text as PostgreSQL 15's float8in and float4in do
// (the same value, bit for bit, or an error of the same SQLSTATE): white space, signs,
// exponents, NaN and infinities in their spellings, hexadecimal, values past the range or
// rounding to zero, denormals, and texts that are no number.
func TestFloatInAsPostgres(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	inputs := []string{"0", "1.5", " 1.5 ", "\t-2e3\n", "+7", "-0", "0.1", "1e-5", ".5", "5.", "1e", "e5", "1.2.3", "1,5", "1_000", "",
		" ", "NaN", "nan", "-NaN", "Infinity", "-Infinity", "+infinity", "inf", "-INF", "infinit", "Infinityx", "0x10", "0x1p4", "-0x1.8p1",
		"0x", "0xg", "1e40", "-1e40", "1e-50", "1e-45", "1e-40", "3.4028235e38", "3.4028236e38", "1e308", "1e309", "1e-320", "1e-330",
		"0e-999", "0.000", "123456789012345678901234567890", "--1", "+-1", "1e+5", "1e-+5", "1 2", "0.1e1", "1E2", "abc", "1.5x", "0x1P-2"}
	for _, typ := range []struct {
		name string
		bits int
	}{{"float8", 64}, {"real", 32}} {
		for _, in := range inputs {
			var want float64
			var pgErr *pgconn.PgError
			err := conn.QueryRow(ctx, "SELECT $1::"+typ.name+"::float8", in).Scan(&want)
			if err != nil && !errors.As(err, &pgErr) {
				t.Fatal(err)
			}
			got, gotErr := FloatIn(in, typ.bits)
			var e *Error
			switch {
			case pgErr != nil:
				if !errors.As(gotErr, &e) || e.Code != pgErr.Code {
					t.Errorf("%s %q: %v, %v; PostgreSQL %s %s", typ.name, in, got, gotErr, pgErr.Code, pgErr.Message)
				}
			case gotErr != nil:
				t.Errorf("%s %q: %v; PostgreSQL %v", typ.name, in, gotErr, want)
			case math.IsNaN(got) || math.IsNaN(want):
				if !math.IsNaN(got) || !math.IsNaN(want) {
					t.Errorf("%s %q: %v; PostgreSQL %v", typ.name, in, got, want)
				}
			case typ.bits == 32 && float64(float32(got)) != want, typ.bits == 64 && math.Float64bits(got) != math.Float64bits(want):
				t.Errorf("%s %q: %v; PostgreSQL %v", typ.name, in, got, want)
			}
		}
	}
}
