package e2e

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// extractFields are the fields extract takes of a timestamp (scan/ops' extract kernel).
var extractFields = []string{"microseconds", "milliseconds", "second", "minute", "hour", "day", "month", "quarter", "year",
	"decade", "century", "week", "isoyear", "dow", "isodow", "doy", "epoch"}

// extractDateFields are the fields extract takes of a date (PostgreSQL's extract_date).
var extractDateFields = []string{"day", "month", "quarter", "year", "decade", "century", "week", "isoyear", "dow", "isodow", "doy", "epoch"}

// extractOf is extract(f FROM x)::text of every field f, as one select list.
func extractOf(x string, fields []string) string {
	sel := make([]string, len(fields))
	for i, f := range fields {
		sel[i] = "extract(" + f + " FROM " + x + ")::text"
	}
	return strings.Join(sel, ", ")
}

// TestExtractNumericAsPostgres: extract(field FROM x) of a timestamp, a timestamp with time
// zone and a date is PostgreSQL 15's numeric — its text at each field's scale (epoch and
// second 6, milliseconds 3, the others 0; the epoch of a date 0), and a quotient of it
// numeric's (trial24's D6: extract(hour …) / 2 was integer division, 3 for 3.5) — over rows and
// constants, grouped, compared, rounded and in Grafana's time groups, while date_part stays
// double precision; the time fields of a date are PostgreSQL's 0A000, and of a string constant
// or NULL its 42725 (its candidates tie).
func TestExtractNumericAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const at = "TIMESTAMP '2001-04-01 07:30:30.25'"
	qs := []string{
		"SELECT " + extractOf(at, extractFields),
		"SELECT " + extractOf("TIMESTAMPTZ '2001-04-01 07:30:30.000001+00'", extractFields),
		"SELECT " + extractOf("DATE '2001-05-01'", extractDateFields),
		"SELECT " + extractOf("(DATE '0001-01-01' - 15800)", extractDateFields),
		"SELECT " + extractOf("(DATE '0001-01-01' - 1)", extractDateFields),
		"SELECT " + extractOf("(DATE '0001-01-01' - 3652)", extractDateFields),
		"SELECT " + extractOf("(DATE '0001-01-01' - 36890)", extractDateFields),
		"SELECT " + extractOf("TIMESTAMP '1969-12-31 23:59:59.5'", extractFields),
		"SELECT (extract(hour FROM TIMESTAMP '2001-04-01 07:30') / 2)::text, (extract(minute FROM TIMESTAMP '2001-04-01 07:30') / 60)::text, " +
			"(extract(month FROM DATE '2001-05-01') / 3)::text, (extract(dow FROM DATE '2001-04-01') / 7)::text, " +
			"round(extract(hour FROM TIMESTAMP '2001-04-01 05:00') / 7, 2)::text, round(extract(epoch FROM TIMESTAMP '2001-04-01 07:00:30') / 60, 2)::text",
		"SELECT id, " + extractOf("timestamp", extractFields) + fn18Where + " ORDER BY 1",
		"SELECT id, " + extractOf("timestamp::date", extractDateFields) + fn18Where + " ORDER BY 1",
		"SELECT id, (extract(hour FROM timestamp) / 6)::text, (extract(second FROM timestamp) / 7)::text, (extract(epoch FROM timestamp) / 3600)::text, " +
			"round(extract(epoch FROM timestamp) / 60, 2)::text, (extract(milliseconds FROM timestamp) * 2)::text, (extract(dow FROM timestamp) + 0.5)::text, " +
			"date_part('hour', timestamp)::text, date_part('epoch', timestamp)::text, date_part('second', timestamp)::text" + fn18Where + " ORDER BY 1",
		"SELECT (extract(hour FROM timestamp) / 6)::text AS bucket, count(*) FROM flights WHERE origin = 'ATL' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' GROUP BY 1 ORDER BY 1",
		"SELECT extract(hour FROM timestamp)::text, count(*)" + fn18Where + " GROUP BY extract(hour FROM timestamp) ORDER BY extract(hour FROM timestamp)",
		"SELECT (floor(extract(epoch FROM timestamp) / 300) * 300)::text AS time, count(*)" + fn18Where + " GROUP BY 1 ORDER BY 1",
		"SELECT count(*), sum(extract(minute FROM timestamp))::text, avg(extract(second FROM timestamp))::text" + fn18Where + " AND extract(dow FROM timestamp) = 0",
		"SELECT count(*)" + fn18Where + " AND extract(hour FROM timestamp) BETWEEN 6 AND 9 AND extract(isodow FROM timestamp) <> 1.5",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes,
			"SELECT extract(hour FROM timestamp), extract(epoch FROM timestamp), extract(second FROM timestamp), extract(epoch FROM timestamp::date), "+
				"date_part('hour', timestamp), date_part('epoch', timestamp)"+fn18Where+" ORDER BY id LIMIT 3")...)
		for _, q := range []string{"SELECT extract(hour FROM '2001-01-01 07:00')", "SELECT extract(epoch FROM NULL)", "SELECT date_part('hour', '2001-01-01 07:00')"} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, "42725")
		}
		res, err := run(ctx, cl.c, "SELECT extract(hour FROM timestamp), extract(epoch FROM timestamp), extract(milliseconds FROM timestamp), extract(epoch FROM timestamp::date), "+
			"date_part('hour', timestamp), date_part('epoch', timestamp)"+fn18Where+" LIMIT 1")
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"decimal(38, 0)", "decimal(38, 6)", "decimal(38, 3)", "decimal(38, 0)", "float64", "float64"} {
			if got := res.streamSchema.Field(i).Type.String(); got != want {
				t.Errorf("%s: column %d is %s, want %s (PostgreSQL's numeric, date_part's double precision)", cl.name, i+1, got, want)
			}
		}
		res.release()
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT extract(hour FROM DATE '2001-04-01')":              `unit "hour" not supported for type date`,
			"SELECT extract(SECONDS FROM timestamp::date)" + fn18Where: `unit "seconds" not supported for type date`,
		})
	}
}

// TestNumericPowerWideAsPostgres: numeric power with an integer exponent is held at
// power_var_int's scale (16, or the base's display scale), so results of 35 to 38 digits
// answer PostgreSQL's exact value (trial24's D7: 10::numeric ^ 18, power(2::numeric, 64) and
// 2.0 ^ 60 were 22003); a result past 38 digits is still 22003.
func TestNumericPowerWideAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT (10::numeric ^ 18)::text, power(2::numeric, 64)::text, (2.0 ^ 60)::text, (2.5::numeric(10,1) ^ 35)::text, (3::numeric ^ (-2))::text, " +
			"(1::numeric ^ 3000000000::bigint)::text, (10::numeric ^ 21::numeric)::text, (1.5 ^ 2.5)::text",
		"SELECT id, (10::numeric ^ (abs((value->>'delay')::int) % 22))::text, power(2.0, abs((value->>'delay')::int) % 70)::text, " +
			"power((value->>'delay')::int::numeric, 8)::text, power(2::numeric, abs((value->>'delay')::int) % 64::bigint)::text" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes, "SELECT 10::numeric ^ 18, power(2::numeric, 64), 2.0 ^ 60")...)
		if _, err := run(ctx, cl.c, "SELECT 10::numeric ^ 23"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "22003") && !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s: 10::numeric ^ 23 (40 digits at scale 16): %v, want 22003", cl.name, err)
		}
	}
}

// TestGcdLcmAsPostgres: gcd and lcm of integers answer PostgreSQL's int4gcd, int8gcd, int4lcm
// and int8lcm values and types (integer, bigint beside a bigint), over rows and constants,
// with their errors: out of range (22003) for the smallest value's gcd with 0 or itself and an
// lcm past the type, 42725 for two unknowns or two smallints, 42883 for a double precision.
func TestGcdLcmAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT gcd(-2147483648, 1), gcd(12::smallint, 18), gcd(0, 0), lcm(4, -6), gcd('12', 18), gcd(12, 18::bigint), gcd(-9223372036854775807, 3), " +
			"lcm(0, 5), gcd(NULL, 5), gcd((-2147483647 - 1)::int, -1), lcm(-2147483647, 2147483647), gcd(-2147483648::bigint, 0), lcm(65536, 65537::bigint), gcd(-7, -21)",
		"SELECT id, gcd((value->>'delay')::int, 12), lcm((value->>'delay')::int, 8), gcd((value->>'distance')::bigint, (value->>'delay')::int), " +
			"lcm((value->>'delay')::smallint, (value->>'distance')::int)" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes, "SELECT gcd(12, 18), lcm(4::smallint, 6), gcd(12, 18::bigint), lcm(4::bigint, 6::bigint)")...)
		for q, state := range map[string]string{
			"SELECT gcd((-2147483647 - 1)::int, 0)":                                  "22003",
			"SELECT lcm(65536, 65537)":                                               "22003",
			"SELECT lcm(-9223372036854775807 - 1, 1)":                                "22003",
			"SELECT gcd((value->>'delay')::int * 0 - 2147483647 - 1, 0)" + fn18Where: "22003",
			"SELECT gcd('12', '18')":                                                 "42725",
			"SELECT gcd(12::smallint, 18::smallint)":                                 "42725",
			"SELECT gcd(1.5::float8, 3)":                                             "42883",
		} {
			refusedAsPostgres(t, ctx, cl.c, pg, q, state)
		}
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{"SELECT gcd(1.5, 3)": "gcd"})
	}
}

// TestASCIIAsPostgres: ascii(text) is PostgreSQL's code point of the first character (integer;
// 0 of the empty string, NULL of NULL), of constants and of the flights' fields; of an integer
// PostgreSQL's 42883.
func TestASCIIAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT ascii('abc'), ascii(''), ascii('é'), ascii('€x'), ascii(NULL), ascii(' '), ascii(E'\\n')",
		"SELECT id, ascii(id), ascii(value->>'destination'), ascii(value->>'nosuch'), ascii(lower(origin))" + fn18Where + " ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes, "SELECT ascii('a')")...)
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT ascii(5)", "42883")
	}
}

// TestScaleAsPostgres: scale(x) is PostgreSQL's display scale of each numeric value (an
// integer's 0, an untyped constant's digits after its point, NULL of NULL), of averages and
// quotients whose scale varies by row too; of a double precision its 42883.
func TestScaleAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	qs := []string{
		"SELECT scale(1.50), scale(5), scale(NULL::numeric), scale(1e3), scale(0.00), scale('1.250'), scale(NULL), scale(extract(epoch FROM TIMESTAMP '2001-01-01')), scale(2.0 ^ 3)",
		"SELECT id, scale((value->>'delay')::int), scale((value->>'delay')::numeric(10,3)), scale((value->>'delay')::int / 7.0), scale(extract(second FROM timestamp))" + fn18Where + " ORDER BY 1",
		"SELECT value->>'destination', scale(avg((value->>'delay')::int)), scale(sum((value->>'delay')::int * 1.5))" + fn18Where + " GROUP BY 1 ORDER BY 1",
	}
	for _, cl := range clients {
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, qs...)...)
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT scale(1.5::float8)", "42883")
		// Not implemented, refused by name.
		refusedAs(t, ctx, cl.c, codes.Unimplemented, map[string]string{
			"SELECT min_scale(1.50)":          "min_scale",
			"SELECT trim_scale(1.50)":         "trim_scale",
			"SELECT pg_typeof(1) = 'integer'": "pg_typeof",
			"SELECT gcd(1.5, 3.0)":            "gcd",
			"SELECT lcm(2::numeric, 3)":       "lcm",
		})
	}
}
