package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// statusSQLState returns the SQLSTATE a refusal carries (its google.rpc.ErrorInfo of domain
// flightsrv, metadata sqlstate), or "".
func statusSQLState(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == "flightsrv" {
			return info.GetMetadata()["sqlstate"]
		}
	}
	return ""
}

// TestDatetimeInputAsPostgres: date and timestamp text that PostgreSQL refuses — casts of
// constants to date, timestamp and timestamp with time zone, a routed bound compared with a
// string, text computed per row cast to a timestamp — is refused with PostgreSQL's SQLSTATE
// (22007 invalid input syntax, 22008 a field out of range, 22009 a zone offset out of range)
// and its message up to the quoted text, which flightsrv leaves out; text PostgreSQL reads in
// a form flightsrv does not (a special value, a month name) is refused by name
// (UNIMPLEMENTED, 0A000), never read otherwise.
func TestDatetimeInputAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	from, to := time.Date(2001, 3, 31, 0, 0, 0, 0, time.UTC), time.Date(2001, 4, 2, 0, 0, 0, 0, time.UTC)
	pgFlights(t, ctx, pg, e.sample, []string{"ORD"}, from, to)
	cl := dial(t, e.on)
	const ord = " FROM flights o WHERE o.origin = 'ORD' AND o.timestamp >= '2001-03-31' AND o.timestamp < '2001-04-02'"
	for q, state := range map[string]string{
		"SELECT '2001-13-45'::timestamp":                                               "22008",
		"SELECT '2001-13-45'::timestamptz":                                             "22008",
		"SELECT '2001-13-45'::date":                                                    "22008",
		"SELECT DATE '2001-02-30'":                                                     "22008",
		"SELECT '2001-02-28 25:00'::timestamp":                                         "22008",
		"SELECT '2001-02-28 23:59:61'::timestamptz":                                    "22008",
		"SELECT '0000-01-01'::date":                                                    "22008",
		"SELECT 'garbage'::timestamp":                                                  "22007",
		"SELECT 'garbage'::timestamptz":                                                "22007",
		"SELECT 'garbage'::date":                                                       "22007",
		"SELECT ''::timestamp":                                                         "22007",
		"SELECT '2001-13-45x'::timestamp":                                              "22007",
		"SELECT '2001-01-01 10:00+16'::timestamptz":                                    "22009",
		"SELECT '2001-01-01 10:00 +02:60'::timestamptz":                                "22009",
		"SELECT o.id" + ord + " AND o.timestamp >= 'garbage'":                          "22007",
		"SELECT o.id" + ord + " AND o.timestamp >= '2001-13-45'":                       "22008",
		"SELECT count(*)" + ord + " AND o.timestamp < TIMESTAMP '2001-04-01 24:00:01'": "22008",
		// Text computed per row (not a constant): the cast kernel's refusal. (A cast of such
		// text to date is not covered: arrow-go v18.8 has no cast of utf8 to date32, INTERNAL.)
		"SELECT (o.value->>'destination')::timestamptz" + ord: "22007",
		"SELECT (o.value->>'destination')::timestamp" + ord:   "22007",
	} {
		var pgErr *pgconn.PgError
		if _, err := pgTextRowsErr(ctx, pg, q); !errors.As(err, &pgErr) || pgErr.Code != state {
			t.Errorf("PostgreSQL %s: %v, want SQLSTATE %s", q, err, state)
			continue
		}
		_, err := run(ctx, cl, q)
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.InvalidArgument || msg == "" || !strings.HasPrefix(pgErr.Message, msg) || statusSQLState(err) != state {
			t.Errorf("%s: %v (SQLSTATE %q), want INVALID_ARGUMENT %s with PostgreSQL's %q", q, err, statusSQLState(err), state, pgErr.Message)
		}
		if strings.Contains(msg, "2001-13") || strings.Contains(msg, "garbage") {
			t.Errorf("%s: the refusal quotes the text: %q", q, msg)
		}
	}

	// PostgreSQL reads these; flightsrv refuses them by name.
	for _, q := range []string{"SELECT 'yesterday'::timestamptz", "SELECT '2001-01-05 10:00 CET'::timestamptz", "SELECT o.id" + ord + " AND o.timestamp < 'infinity'"} {
		if _, err := pgTextRowsErr(ctx, pg, q); err != nil {
			t.Errorf("PostgreSQL %s: %v", q, err)
		}
		if _, err := run(ctx, cl, q); status.Code(err) != codes.Unimplemented || statusSQLState(err) != "0A000" {
			t.Errorf("%s: %v (SQLSTATE %q), want UNIMPLEMENTED 0A000", q, err, statusSQLState(err))
		}
	}
	// And answer these as PostgreSQL does: 24:00:00 and a leap second are the next day.
	n := comparePG(t, ctx, pg, map[string]*flightsql.Client{"on": cl}, nonEmptyTyped(
		"SELECT '2001-01-01 24:00:00'::timestamp AS a, '2001-01-01 23:59:60'::timestamptz AS b, '2001-01-01T24:00'::timestamptz AS c")...)
	t.Logf("%d rows equal to PostgreSQL's", n)
}
