package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestBCDateTextAsPostgres: dates before 1 AD cast to text read as PostgreSQL's date_out
// writes them with DateStyle ISO: the BC year, there being no year 0 (astronomical year -43
// is "0044-03-15 BC"; it was "-0043-03-15").
func TestBCDateTextAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		// flightsrv reads no BC date input: the dates are 1 AD less k days. (Its timestamps,
		// nanoseconds since 1970 in 64 bits, begin in 1677; ops.TestTimestampTextMatchesPostgres
		// checks the text of earlier ones.)
		`SELECT k, d::text, (d + 366)::text, d < '0001-01-01' FROM (SELECT k, '0001-01-01'::date - k AS d FROM (VALUES (0), (1), (365), (366), (16000), (365000), (1721423)) v(k)) t ORDER BY k`,
		`SELECT ('0001-01-01'::date - 1)::text, ('0001-01-01'::date - 16000)::text, 'x' || ('0001-01-01'::date - 1)`,
	)...)
}

// TestNumericNaNInfinityAsPostgres: text cast to numeric per row when a value is NaN or an
// infinity, which PostgreSQL's numeric holds and flightsrv's decimal128 cannot: NaN and an
// infinity cast to unconstrained numeric (under round(…, n)) are refused by name (UNIMPLEMENTED 0A000; it was
// INVALID_ARGUMENT 22003), an infinity cast to numeric(p,s) is PostgreSQL's own 22003
// "numeric field overflow", and a NaN with a sign is not a number (22P02), as on PostgreSQL.
func TestNumericNaNInfinityAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	for q, msg := range map[string]string{
		`SELECT round(x::numeric, 2) FROM (VALUES ('1.5'), ('NaN')) v(x)`:       "numeric NaN is not supported",
		`SELECT x::numeric(10,2) FROM (VALUES ('1.5'), (' nan ')) v(x)`:         "numeric NaN is not supported",
		`SELECT round(x::numeric, 1) FROM (VALUES ('1.5'), ('-Infinity')) v(x)`: "numeric infinity is not supported",
		`SELECT trunc(x::numeric, 0) + 1 FROM (VALUES ('inf')) v(x)`:            "numeric infinity is not supported",
		`SELECT round(x::numeric, 3) FROM (VALUES ('Infinity'::float8)) v(x)`:   "numeric infinity is not supported",
		`SELECT x::numeric(10,2) FROM (VALUES ('NaN'::float8)) v(x)`:            "numeric NaN is not supported",
		`SELECT 'NaN'::numeric`:       "numeric NaN is not supported",
		`SELECT '-Infinity'::numeric`: "numeric infinity is not supported",
	} {
		if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		_, err := run(ctx, cl, q)
		if st := status.Convert(err); st.Code() != codes.Unimplemented || st.Message() != msg || sqlstateOf(err) != "0A000" {
			t.Errorf("%s: %v %s, want UNIMPLEMENTED 0A000 %q", q, err, sqlstateOf(err), msg)
		}
	}
	for q, code := range map[string]string{
		`SELECT x::numeric(10,2) FROM (VALUES ('1.5'), ('Infinity')) v(x)`: "22003",
		`SELECT x::numeric(38,0) FROM (VALUES ('-inf')) v(x)`:              "22003",
		`SELECT x::numeric(10,2) FROM (VALUES ('Infinity'::float8)) v(x)`:  "22003",
		`SELECT 'Infinity'::numeric(10,2)`:                                 "22003",
		`SELECT round(x::numeric, 2) FROM (VALUES ('+NaN')) v(x)`:          "22P02",
		`SELECT x::numeric(10,2) FROM (VALUES ('--inf')) v(x)`:             "22P02",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, code)
	}
}

// TestWideDecimalBesideFloatAsPostgres: a decimal constant past the 38 digits of flightsrv's
// numeric in a list resolved to one type (VALUES columns, CASE results, COALESCE,
// GREATEST/LEAST, IN lists, width_bucket's operand and bounds) beside a double precision or real value is read as that float type, as
// PostgreSQL's resolution casts it (it was 22003 "flightsrv's numeric holds 38 digits"); past
// the float type's range it is PostgreSQL's 22003, and without a float beside it stays 22003.
func TestWideDecimalBesideFloatAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		`SELECT x::text, x / 3 FROM (VALUES (1e200::float8), (1e200), (-1e300), (1.5)) v(x) ORDER BY x`,
		`SELECT x::text, y FROM (VALUES (1e200, 'a'), (2.5::float8, 'b'), (1e-300, 'c')) v(x, y) ORDER BY y`,
		`SELECT n, (CASE WHEN n = 1 THEN 1e300 WHEN n = 2 THEN x ELSE -1e250 END)::text, coalesce(NULL, 1e200, x)::text, coalesce(x, 1e200)::text, `+
			`greatest(x, 1e300)::text, least(-1e300, x)::text FROM (VALUES (1, 1.5::float8), (2, NULL), (3, 'Infinity')) v(n, x) ORDER BY n`,
		`SELECT x::text, x IN (1e300, 2), x NOT IN (-1e300, 1.5), x IN (1e300, 1.5) FROM (VALUES (1.5::float8), ('Infinity'), (1e300)) v(x) ORDER BY x`,
		// PostgreSQL's width_bucket_float8 of bounds whose difference overflows is its own
		// -2147483648 (an integer overflow of its arithmetic), matched as it answers.
		`SELECT x::text, width_bucket(x, -1e308, 1e308, 10), width_bucket(x, 0, 1e300, 4) FROM (VALUES (0::float8), (1e299), (5e300)) v(x) ORDER BY x`,
		`SELECT width_bucket(0::float8, -1e308, 1e308, 10)`,
	)...)
	for _, q := range []string{
		`SELECT x FROM (VALUES (1e400), (1.0::float8)) v(x)`,
		`SELECT x FROM (VALUES (1.5::real), (1e200)) v(x)`, // real's, not double precision's
		`SELECT x FROM (VALUES (1e39), (1.5::real)) v(x)`,
		`SELECT coalesce(1e400, 1.5::float8)`,
		`SELECT x FROM (VALUES (1e-330), (2.5::float8)) v(x)`,
	} {
		var pe *pgconn.PgError
		if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pe) || pe.Code != "22003" {
			t.Errorf("PostgreSQL %s: %v, want 22003", q, err)
		}
		_, err := run(ctx, cl, q)
		if status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "22003" {
			t.Errorf("%s: %v %s, want INVALID_ARGUMENT 22003", q, err, sqlstateOf(err))
		}
	}
	// Without a float beside it the constant is a numeric, past flightsrv's 38 digits (which
	// PostgreSQL's numeric holds).
	for _, q := range []string{
		`SELECT x FROM (VALUES (1e200), (1.5)) v(x)`,
		`SELECT CASE WHEN x > 0 THEN 1e200 ELSE 1 END FROM (VALUES (1)) v(x)`,
	} {
		_, err := run(ctx, cl, q)
		if status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "22003" || !strings.Contains(status.Convert(err).Message(), "holds 38 digits") {
			t.Errorf("%s: %v %s, want INVALID_ARGUMENT 22003 flightsrv's numeric holds 38 digits", q, err, sqlstateOf(err))
		}
	}
}
