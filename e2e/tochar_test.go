package e2e

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestToCharIntervalAsPostgres: to_char of intervals (PostgreSQL's interval_to_char: hours
// past a day, negative fields, the date fields computed from the interval's years, months and
// days), of constants and of differences of the flights' timestamps, is PostgreSQL's text; a
// field an interval has not (a month's name) is PostgreSQL's error (22007).
func TestToCharIntervalAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	cl := clients[0].c
	compared := 0
	for _, q := range []string{
		"SELECT to_char(INTERVAL '1 year 3 mons 5 days 07:08:09.123456', 'YYYY-MM-DD HH24:MI:SS.US'), to_char(-INTERVAL '1 year 3 mons 5 days 07:08:09.123456', 'FMYYYY FMMM HH12 AM SSSS RM'), " +
			"to_char(INTERVAL '100 hours', 'HH24 \"h\" DDD J IW IYYY CC Y,YYY')",
		"SELECT id, to_char(timestamp - TIMESTAMPTZ '2001-03-30', 'DD \"d\" HH24:MI:SS'), to_char(TIMESTAMPTZ '2001-03-30' - timestamp, 'FMDD HH12 am SSSS') " +
			"FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03' ORDER BY id LIMIT 20",
	} {
		want, kinds := pgTexts(t, ctx, pg, q)
		compared += compareNumericRows(t, ctx, cl, q, want, kinds)
	}
	q := "SELECT to_char(INTERVAL '1 day', 'Mon')"
	if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "invalid format specification for an interval value") {
		t.Errorf("%s: %v, want PostgreSQL's error", q, err)
	}
	t.Logf("%d rows compared with PostgreSQL's", compared)
}
