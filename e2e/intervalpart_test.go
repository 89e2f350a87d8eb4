package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
)

// TestExtractIntervalAsPostgres: extract(field FROM interval) (numeric) and date_part(field,
// interval) (double precision) answer PostgreSQL 15's values and text (interval_part_common:
// hours past a day, truncation toward zero of negative fields, months % 12, years of the
// months), of constants and of intervals computed per row, pushdown on and off; a field an
// interval has not (dow, week) is refused by name, as PostgreSQL refuses it (0A000).
func TestExtractIntervalAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	ivs := "('1 year 2 mons 3 days 04:05:06.789012'), ('-1 year -2 mons -3 days -04:05:06.789012'), ('100 hours 30 minutes'), ('-90 seconds'), " +
		"('27 mons'), ('-7 mons'), ('12345 years'), ('0'), ('00:00:00.000001'), ('-00:00:59.5'), ('1 day -1 sec'), (NULL)"
	fields := []string{"microseconds", "milliseconds", "second", "minute", "hour", "day", "month", "quarter", "year", "decade", "century",
		"millennium", "epoch", "hours", "mins", "msec", "usec", "y", "mon", "millennia"}
	for name, c := range map[string]*flightsql.Client{"pushdown on": dial(t, e.on), "pushdown off": dial(t, e.off)} {
		for _, f := range fields {
			q := "SELECT x, extract(" + f + " FROM x::interval)::text, date_part('" + f + "', x::interval)::text FROM (VALUES " + ivs + ") v(x) ORDER BY 1"
			t.Run(name+" "+f, func(t *testing.T) { castAsPostgres(t, ctx, c, pg, q) })
		}
		castAsPostgres(t, ctx, c, pg, "SELECT extract(hour FROM interval '25 hours')::text, extract(second FROM interval '1.5 seconds')::text, date_part('minute', interval '-61 minutes')::text")
		for _, f := range []string{"dow", "week", "doy", "julian"} {
			q := "SELECT extract(" + f + " FROM interval '1 day')"
			if _, err := pgTextRowsErr(ctx, pg, q); err == nil || !strings.Contains(err.Error(), "0A000") {
				t.Errorf("PostgreSQL %s: %v, want 0A000", q, err)
			}
			refusedAs(t, ctx, c, codes.Unimplemented, map[string]string{q: "from an interval"})
		}
	}
}
