package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pgQuote writes s as a PostgreSQL string constant (standard_conforming_strings: backslashes
// are themselves): the form of a parameter of type unknown, which PostgreSQL reads with the
// input function of the type the statement gives it, as it reads a quoted constant.
func pgQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// compareTextParam checks that q (one `?`) with its parameter bound as Arrow utf8 text s
// answers through each client what PostgreSQL answers for pgQ with `?` replaced by s quoted
// (a parameter of type unknown is read as the constant is): the same text, or its error as
// INVALID_ARGUMENT with its SQLSTATE and message prefixed "parameter $1: ".
func compareTextParam(ctx context.Context, t *testing.T, pg *pgx.Conn, clients []namedClient, q, pgQ, s string) {
	t.Helper()
	want, pgErr := pgAnswerN(ctx, pg, "SELECT v::text FROM ("+strings.Replace(pgQ, "?", pgQuote(s), 1)+") q")
	for _, cl := range clients {
		name := fmt.Sprintf("%s: %s with %q", cl.name, q, s)
		got, err := boundAnswerN(ctx, cl.c, q, nil, s)
		switch {
		case pgErr != nil:
			st := status.Convert(err)
			if err == nil || st.Code() != codes.InvalidArgument || sqlstateOf(err) != pgErr.Code || !strings.HasPrefix(pgErr.Message, strings.TrimPrefix(st.Message(), "parameter $1: ")) {
				t.Errorf("%s: %v %v, want INVALID_ARGUMENT %s %q as PostgreSQL", name, got, err, pgErr.Code, pgErr.Message)
			}
		case err != nil:
			t.Errorf("%s: %v, want %q as PostgreSQL", name, err, want)
		case got != want:
			t.Errorf("%s: %q, want PostgreSQL's %q", name, got, want)
		}
	}
}

// TestTextParametersAsPostgres (trial26 W5–W7): a parameter bound as Arrow utf8 text is read as
// PostgreSQL reads the same text sent as a parameter of type unknown, by the input function of
// the type the statement gives it — as flightsrv reads the constant: ?::bytea by byteain (hex
// and escape formats, its 22023/22P02 refusals), ?::timestamp by timestamp_in, a written zone
// ignored, ?::timestamptz with the zone, fractions of a second rounded to microseconds.
func TestTextParametersAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, c := range []struct {
		q    string
		vals []string
	}{
		{"SELECT (?::bytea)::text AS v", []string{`\x0102`, `a\\b`, `\001\002`, `\x01zz`, `\x012`, `a\b`, `hi`}},
		{"SELECT length(?::bytea) AS v", []string{`\x0102`, `\001\002`}},
		{"SELECT md5(CAST(? AS bytea)) AS v", []string{`\x0102`}},
		{"SELECT ?::bytea = '\\x0102'::bytea AS v", []string{`\x0102`, `\x0103`}},
		{"SELECT convert_from(?::bytea, 'UTF8') AS v", []string{`\x6869`, `\xfffe`, `\xc3`, `\xeda080`, `\x610062`}},
		{"SELECT (?::timestamp)::text AS v", []string{"2001-04-01 10:00:00+05:30", "2001-04-01 10:00:00-08", "2001-04-01 10:00:00.9999999", "2001-04-01 10:00:00.1234565"}},
		{"SELECT (?::timestamp = timestamp '2001-04-01 10:00') AS v", []string{"2001-04-01 10:00:00-08", "2001-04-01 09:59:59.9999996"}},
		{"SELECT (?::timestamptz)::text AS v", []string{"2001-04-01 10:00:00.123456789+00", "2001-04-01 10:00:00.123456789+05:30", "2001-04-01 23:59:59.9999999Z"}},
		{"SELECT (?::date)::text AS v", []string{"2001-04-01", "2001-02-30"}},
	} {
		for _, s := range c.vals {
			compareTextParam(ctx, t, pg, clients, c.q, c.q, s)
		}
	}
	// Text parameters as the route's bounds: read as the constants are.
	const w = "SELECT count(*) AS v FROM flights WHERE origin = 'ORD' AND "
	for _, c := range []struct{ q, s string }{
		{w + "timestamp > ? AND timestamp < '2001-04-01 06:00'", "2001-04-01 05:58:59.9999999"},
		{w + "timestamp >= ?::timestamp AND timestamp < '2001-04-02 05:00'", "2001-04-01 00:00+05"},
		{w + "timestamp >= '2001-03-31' AND timestamp < ?::timestamp", "2001-04-02 00:00+05"},
	} {
		compareTextParam(ctx, t, pg, clients, c.q, c.q, c.s)
	}
}

// TestConvertFromInvalidUTF8AsPostgres (trial26 I1): convert_from of bytes that are not UTF-8,
// or that hold a NUL, is PostgreSQL's 22021 "invalid byte sequence for encoding "UTF8"" (its
// message goes on to name the bytes; ours stops before them), not INTERNAL: of a constant, of
// a VALUES column and of a parameter bound as Arrow binary.
func TestConvertFromInvalidUTF8AsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const msg = `invalid byte sequence for encoding "UTF8"`
	for _, q := range []string{
		`SELECT convert_from('\xfffe'::bytea, 'UTF8') AS v`,
		`SELECT convert_from('\xc3'::bytea, 'UTF8') AS v`,
		`SELECT convert_from('\xeda080'::bytea, 'UTF8') AS v`,
		`SELECT convert_from('\x610062'::bytea, 'UTF8') AS v`,
		`SELECT convert_from(b, 'UTF8') AS v FROM (VALUES ('\xfffe'::bytea)) t(b)`,
		`SELECT convert_from(b, 'UTF8') AS v FROM (VALUES ('\x6869'::bytea), ('\x610062'::bytea)) t(b)`,
		`SELECT convert_from(b, 'UTF8') AS v FROM (VALUES ('\x6869'::bytea)) t(b)`,
	} {
		want, pgErr := pgAnswerN(ctx, pg, "SELECT string_agg(v, ',') FROM ("+q+") q")
		for _, cl := range clients {
			res, err := run(ctx, cl.c, q)
			if res != nil {
				res.release()
			}
			switch {
			case pgErr != nil:
				if err == nil || status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != pgErr.Code || status.Convert(err).Message() != msg || !strings.HasPrefix(pgErr.Message, msg) {
					t.Errorf("%s: %s: %v, want INVALID_ARGUMENT %s %q", cl.name, q, err, pgErr.Code, pgErr.Message)
				}
			case err != nil:
				t.Errorf("%s: %s: %v, want PostgreSQL's %q", cl.name, q, err, want)
			}
		}
	}
	for _, b := range [][]byte{{0xff, 0xfe}, {'a', 0, 'b'}, []byte("hi")} {
		var want string
		pgErr := pg.QueryRow(ctx, "SELECT convert_from($1::bytea, 'UTF8')", b).Scan(&want)
		for _, cl := range clients {
			got, err := boundAnswerN(ctx, cl.c, "SELECT convert_from(?::bytea, 'UTF8') AS v", nil, b)
			if pgErr != nil {
				if err == nil || status.Code(err) != codes.InvalidArgument || sqlstateOf(err) != "22021" {
					t.Errorf("%s: convert_from of %x: %v %v, want 22021 (PostgreSQL: %v)", cl.name, b, got, err, pgErr)
				}
			} else if err != nil || got != want {
				t.Errorf("%s: convert_from of %x: %v %v, want %q", cl.name, b, got, err, want)
			}
		}
	}
}

// TestTimestampFractionsAsPostgres (trial26 W6): timestamp text with more than six fractional
// digits is rounded to microseconds as PostgreSQL rounds it (half to even of the double, a
// whole second carried), in constants, in text cast per row and in the route's bounds.
func TestTimestampFractionsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const w = " FROM flights WHERE origin = 'ORD' AND "
	for _, q := range []string{
		"SELECT count(*)::text AS v" + w + "timestamp > '2001-04-01 05:58:59.9999999' AND timestamp < '2001-04-01 06:00'",
		"SELECT count(*)::text AS v" + w + "timestamp >= '2001-04-01' AND timestamp < '2001-04-02' AND timestamp = '2001-04-01 05:58:59.9999996'",
		"SELECT (timestamptz '2001-04-01 05:58:59.9999996+00' = timestamptz '2001-04-01 05:59:00+00')::text AS v",
		"SELECT date_trunc('second', timestamp '2001-04-01 10:00:00.9999999')::text AS v",
		"SELECT extract(microseconds from timestamp '2001-04-01 10:00:00.0000009')::text AS v",
		"SELECT (timestamptz '2001-04-01 10:00:00.123456789+00')::text AS v",
		"SELECT ('2001-04-01 10:00:00.9999999'::timestamp)::text AS v",
		"SELECT ('2001-04-01 10:00:60.5'::timestamp)::text AS v",
		"SELECT ('2001-04-01 10:00:00.0000025'::timestamp)::text AS v",
		"SELECT (s::timestamptz)::text AS v FROM (VALUES ('2001-04-01 10:00:00.123456789+05:30')) t(s)",
		"SELECT (s::timestamp)::text AS v FROM (VALUES ('2001-04-01 23:59:59.9999995')) t(s)",
	} {
		want, pgErr := pgAnswerN(ctx, pg, q)
		if pgErr != nil {
			t.Fatalf("PostgreSQL: %s: %v", q, pgErr)
		}
		for _, cl := range clients {
			res, err := run(ctx, cl.c, q)
			if err != nil {
				t.Errorf("%s: %s: %v, want %q", cl.name, q, err, want)
				continue
			}
			got := render(res)
			res.release()
			if len(got) != 1 || got[0] != want {
				t.Errorf("%s: %s: %q, want PostgreSQL's %q", cl.name, q, got, want)
			}
		}
	}
}

// TestBoundSchemaAsDeclared (trial26 I2): the batches of a statement executed with bound
// parameters have the schema the FlightInfo of the bound statement declares (ADBC's driver
// refuses anything else: "endpoint 0 returned inconsistent schema"), and answer what
// PostgreSQL answers with the parameter of the bound type: a parameter cast to varchar(n), a
// parameter bound as Arrow int8 (smallint) or float32 (real) in arithmetic.
func TestBoundSchemaAsDeclared(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, c := range []struct {
		q, pgQ string
		v      any
	}{
		{"SELECT ?::varchar(3) AS v", "SELECT $1::varchar(3)::text", "abcdef"},
		{"SELECT CAST(? AS varchar(10)) AS v", "SELECT CAST($1 AS varchar(10))::text", "abc"},
		{"SELECT ? * 2 AS v", "SELECT ($1::smallint * 2)::text", int8(-128)},
		{"SELECT ? / 3 AS v", "SELECT ($1::real / 3)::text", float32(1)},
	} {
		want, pgErr := pgAnswerN(ctx, pg, c.pgQ, c.v)
		if pgErr != nil {
			t.Fatalf("PostgreSQL %s: %v", c.pgQ, pgErr)
		}
		for _, cl := range clients {
			got, err := boundAnswerN(ctx, cl.c, c.q, nil, c.v)
			if err != nil || got != want {
				t.Errorf("%s: %s with %v: %v %v, want PostgreSQL's %q", cl.name, c.q, c.v, got, err, want)
			}
		}
	}
}

// TestBoundParameterOperatorsAsPostgres (trial26's wrong errors): a parameter bound as Arrow
// int64 or float64 is a bigint or double precision operand, as PostgreSQL types a parameter
// its client declares (psycopg sends an int as int8): -? answers the negation, not "could not
// determine the type"; ?::boolean of a bigint is PostgreSQL's 42846 (there is no bigint →
// boolean cast), not true.
func TestBoundParameterOperatorsAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	for _, c := range []struct {
		q, pgQ string
		v      any
	}{
		{"SELECT -? AS v", "SELECT (-$1::bigint)::text", int64(7)},
		{"SELECT - ? + 1 AS v", "SELECT (- $1::bigint + 1)::text", int64(7)},
		{"SELECT -? AS v", "SELECT (-$1::float8)::text", float64(2.5)},
		{"SELECT ?::boolean AS v", "SELECT ($1::bigint::boolean)::text", int64(1)},
	} {
		want, pgErr := pgAnswerN(ctx, pg, c.pgQ, c.v)
		for _, cl := range clients {
			got, err := boundAnswerN(ctx, cl.c, c.q, nil, c.v)
			if pgErr != nil {
				st := status.Convert(err)
				if err == nil || st.Code() != codes.InvalidArgument || sqlstateOf(err) != pgErr.Code || st.Message() != pgErr.Message {
					t.Errorf("%s: %s with %v: %v %v, want INVALID_ARGUMENT %s %q", cl.name, c.q, c.v, got, err, pgErr.Code, pgErr.Message)
				}
			} else if err != nil || got != want {
				t.Errorf("%s: %s with %v: %v %v, want PostgreSQL's %q", cl.name, c.q, c.v, got, err, want)
			}
		}
	}
	// An untyped operand is PostgreSQL's 42725: several prefix - operators take unknown.
	for _, cl := range clients {
		_, err := run(ctx, cl.c, "SELECT -'7'")
		if st := status.Convert(err); st.Code() != codes.InvalidArgument || sqlstateOf(err) != "42725" || st.Message() != "operator is not unique: - unknown" {
			t.Errorf("%s: SELECT -'7': %v, want 42725", cl.name, err)
		}
	}
}
