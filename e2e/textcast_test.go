package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// textCastInputs are texts cast per row to each type PostgreSQL reads text as: decimal digits
// with leading zeros, base prefixes and digit separators (which PostgreSQL 15 refuses),
// white space, signs, range bounds, boolin's prefixes, float8in's special values, date and
// timestamp forms with and without zones, and text no type reads.
var textCastInputs = map[string][]string{
	"smallint": {"12", "0012", "-010", "+7", " 12 ", "\t-3\n", "32767", "-32768", "32768", "-32769", "0x1A", "1_000", "08", "1.0", "", " ", "-", "1e2", "12a"},
	"integer": {"0000000510", "0612", "-010", "0x1A", "0X1a", "0b101", "0o17", "1_000", "08", "09", "0", "-0", "+0", " 12 ", "2147483647", "-2147483648",
		"2147483648", "-2147483649", "99999999999x", "1.5", "", "abc", "١٢"},
	"bigint":           {"0000000510", "-010", " 9223372036854775807 ", "-9223372036854775808", "9223372036854775808", "0x10", "1_0", "007"},
	"real":             {"1.5", " -2e3 ", "NaN", "-inf", "Infinity", "0x1p4", "1_0", "1e40", "abc"},
	"double precision": {"1.5", " -2e3 ", "nan", "inf", "-Infinity", "0x1.8p1", "0x10", "1_000", "1e400", "1e-400", ".5", "5.", "abc"},
	"numeric":          {"12.50", "abc"},
	"numeric(10,2)":    {"12.505", " 007.10 ", "-0", "1e3", "1.5E-2", "-1.005", "0x10", "1_000", "1e8", "abc", "", ".5", "5.", "+3", "\u00a012", "\t-1.5\v"},
	"boolean": {"yes", "on", "off", " true ", "tRuE", "t", "f", "tr", "fal", "y", "n", "no", "o", "of", "1", "0", "01", "truex", "",
		"ye", "OFF", " N "},
	"date":                     {"2001-04-01", " 2001-04-01 ", "2001-04-01x", "abc", ""},
	"timestamp":                {"2001-04-01 10:00", "2001-04-01 10:00:00+05", "2001-04-01T10:00:05.5", "2001-04-01", " 2001-04-01 10:00 ", "abc", "2001-04-01 10:00:00+05:30", "2001-04-01 25:00"},
	"timestamp with time zone": {"2001-04-01 10:00", "2001-04-01 10:00:00+05", "2001-04-01 10:00:00-02:30", "2001-04-01 10:00Z", "2001-04-01", "abc", "2001-04-01 10:61"},
	"time without time zone":   {"10:00", "10:00:05.5", " 23:59:59 ", "24:00", "25:00", "abc"},
	"interval":                 {"90 minutes", "1 day 02:00:00", "P1D", "1 year 2 mons", "abc"},
	"bytea":                    {"abc", `\x4142`, `\xZZ`, `a\\b`},
	"uuid":                     {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC999C0B4EF8BB6D6BB9BD380A11", "abc"},
}

// TestTextCastsAsPostgres: text computed per row (a VALUES column, a routed table's id and
// JSON fields, to_char's text) cast to every type answers PostgreSQL's values, or its
// SQLSTATE and message for text the type's input function refuses: int2in, int4in and int8in
// read decimal digits only ('0612' is 612, not octal; '0x1A' and '1_000' are refused), boolin
// its prefixes, date_in and timestamp_in their forms (a zone in a timestamp's text ignored).
// A cast flightsrv does not implement is refused by name (UNIMPLEMENTED), never answered.
func TestTextCastsAsPostgres(t *testing.T) {
	e := newEnv(t)
	cl := dial(t, e.on)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)

	for typ, xs := range textCastInputs {
		for _, x := range xs {
			lit := "'" + strings.ReplaceAll(x, "'", "''") + "'"
			if strings.Contains(x, `\`) {
				lit = "E'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", "''") + "'"
			}
			castAsPostgres(t, ctx, cl, pg, "SELECT x::"+typ+"::text FROM (VALUES ("+lit+"), (NULL)) v(x)")
			if strings.HasPrefix(typ, "numeric") {
				// A constant's text: the binder's reader.
				castAsPostgres(t, ctx, cl, pg, "SELECT "+lit+"::"+typ+"::text")
			}
		}
	}

	// An instant outside timestamp[ns] (1677-09-21 to 2262-04-11), which PostgreSQL holds, is
	// refused, a constant's and a row's alike, never clamped to the range.
	refusedAs(t, ctx, cl, codes.InvalidArgument, map[string]string{
		"SELECT '1500-01-01 00:00'::timestamptz::text":                              "timestamp out of range",
		"SELECT TIMESTAMP '2300-01-01 00:00'":                                       "timestamp out of range",
		"SELECT x::timestamptz FROM (VALUES ('1500-01-01 00:00'), (NULL)) v(x)":     "timestamp out of range",
		"SELECT x::timestamp FROM (VALUES ('2300-01-01 00:00:00+05'), (NULL)) v(x)": "timestamp out of range",
	})

	// A routed table's text: ids ('0000000510') and JSON fields, the fused casts of ->> among them.
	pgFlights(t, ctx, pg, e.sample, loadedAirports, time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC))
	where := " FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'"
	for _, q := range []string{
		"SELECT id, id::int, id::smallint % 100, id::bigint" + where + " ORDER BY id",
		"SELECT sum(id::bigint)::text, sum(id::int)::text" + where,
		"SELECT id, (value->>'delay')::int, (value->>'delay')::bigint, (value->>'delay')::smallint, (value->>'delay')::float8, (value->>'distance')::numeric(10,1)::text" + where + " ORDER BY id",
		"SELECT id, to_char(timestamp, 'HH24MI')::int, to_char(timestamp, 'YYYY-MM-DD')::date::text, to_char(timestamp, 'YYYY-MM-DD HH24:MI')::timestamp::text" + where + " ORDER BY id",
		"SELECT id, (to_char(timestamp, 'YYYY-MM-DD HH24:MI') || '+05')::timestamptz::text, (to_char(timestamp, 'YYYY-MM-DD HH24:MI') || '+05')::timestamp::text" + where + " ORDER BY id",
		"SELECT id, ((value->>'delay')::int > 0)::text::boolean, (CASE WHEN (value->>'delay')::int > 0 THEN 'yes' ELSE 'off' END)::boolean" + where + " ORDER BY id",
	} {
		castAsPostgres(t, ctx, cl, pg, q)
	}
	for _, q := range []string{
		"SELECT (value->>'destination')::date" + where,
		"SELECT (value->>'destination')::int" + where,
		"SELECT (value->>'destination')::float8" + where,
		"SELECT (value->>'destination')::numeric" + where,
		"SELECT (value->>'destination')::boolean" + where,
		"SELECT (value->>'destination')::timestamptz" + where,
		"SELECT ('0x' || (value->>'delay'))::int" + where,
	} {
		castAsPostgres(t, ctx, cl, pg, q)
	}

	// ->> and #>> of text (not json) do not exist (42883); of an untyped literal they are
	// ambiguous (42725).
	for _, q := range []string{
		"SELECT (value::text) ->> 'delay'" + where,
		"SELECT origin || '-' || value->>'destination'" + where,
		"SELECT (value::text) #>> '{delay}'" + where,
		"SELECT x ->> 'a' FROM (VALUES ('{\"a\": 1}')) v(x)",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, "42883")
	}
	for _, q := range []string{`SELECT '{"a": "b"}' ->> 'a'`, `SELECT '{"a": {"b": 2}}' #>> '{a,b}'`, `SELECT '{"a": "b"}' -> 'a'::text`, `SELECT NULL ->> 1`} {
		refusedAsPostgres(t, ctx, cl, pg, q, "42725") // json or jsonb: "operator is not unique"
	}
	castAsPostgres(t, ctx, cl, pg, `SELECT '{"a": "b"}'::json ->> 'a', '{"a": {"b": 2}}'::json #>> '{a,b}'`)
	// #>> '{}' is the document's own text: a string scalar unquoted, a null NULL (trial24's D11).
	castAsPostgres(t, ctx, cl, pg, `SELECT '"abc"'::json #>> '{}', 'null'::json #>> '{}', '"abc"'::jsonb #>> '{}', 'null'::jsonb #>> '{}', ' {"b": [1, 2], "a":1} '::json #>> '{}', '{"b":1,"a":2}'::jsonb #>> '{}', ' 12.50 '::json #>> '{}', '"a\nb\u00e9"'::json #>> '{}', 'true'::jsonb #>> '{}', ('"x"'::json #> '{}')::text`)

	inner := " FROM flights i" + strings.TrimPrefix(where, " FROM flights")
	// Column names: a cast's is its type's unless its argument names it (PostgreSQL's
	// FigureColname); SHOW's is the setting's own spelling.
	for _, q := range []string{
		"SELECT (interval '90 minutes')::text, (1e16::float8)::text, (CASE WHEN true THEN 1 END)::text, coalesce(1, 2)::text, '1'::int::text, id::int, (value->>'delay')::int" + where + " LIMIT 1",
		// A scalar subquery is named by its column, EXISTS and GROUPING() by themselves, a
		// subscript by what it subscripts (trial23).
		"SELECT (SELECT max(id)" + inner + "), EXISTS (SELECT 1" + inner + "), (SELECT id AS n" + inner + " LIMIT 1), (regexp_match(id, '\\d+'))[1], (regexp_match(id, '\\d+'))[1]::int" + where + " LIMIT 1",
		"SELECT origin, GROUPING(origin), count(*)" + where + " GROUP BY ROLLUP(origin) LIMIT 1",
		"SHOW TIME ZONE", "SHOW timezone", "SHOW DateStyle", "SHOW IntervalStyle", "SHOW client_encoding",
	} {
		sameColumnNames(t, ctx, cl, pg, q)
	}
}

// sameColumnNames checks that flightsrv names q's columns as PostgreSQL does.
func sameColumnNames(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q string) {
	t.Helper()
	rows, err := pg.Query(ctx, q)
	if err != nil {
		t.Fatalf("PostgreSQL %s: %v", q, err)
	}
	var want []string
	for _, f := range rows.FieldDescriptions() {
		want = append(want, f.Name)
	}
	rows.Close()
	res := mustRun(t, cl, q)
	var got []string
	for _, f := range res.streamSchema.Fields() {
		got = append(got, f.Name)
	}
	res.release()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: columns %v, PostgreSQL %v", q, got, want)
	}
}

// castAsPostgres runs q on PostgreSQL and flightsrv: the same text rows, or PostgreSQL's
// SQLSTATE class answered as INVALID_ARGUMENT with PostgreSQL's message (its beginning:
// flightsrv quotes no value), or UNIMPLEMENTED where flightsrv refuses the cast by name.
func castAsPostgres(t *testing.T, ctx context.Context, cl *flightsql.Client, pg *pgx.Conn, q string) {
	t.Helper()
	want, pgErr := pgRowsOrErr(ctx, pg, q)
	res, err := run(ctx, cl, q)
	if err != nil {
		st := status.Convert(err)
		switch {
		case st.Code() == codes.Unimplemented:
			t.Logf("%q: refused: %s", q, st.Message())
		case pgErr == nil:
			t.Errorf("%q: %v; PostgreSQL answers %v", q, err, want)
		case pgErr.Code == "22003" && strings.HasPrefix(st.Message(), "value out of range for type ") &&
			strings.HasSuffix(pgErr.Message, strings.TrimPrefix(st.Message(), "value ")):
			// PostgreSQL quotes the text ("value \"32768\" is out of range for type smallint");
			// flightsrv quotes no value.
		case st.Code() != codes.InvalidArgument || st.Message() == "" || !strings.HasPrefix(pgErr.Message, strings.TrimSuffix(st.Message(), ".")):
			t.Errorf("%q: %v; PostgreSQL %s %q", q, err, pgErr.Code, pgErr.Message)
		}
		return
	}
	defer res.release()
	if pgErr != nil {
		t.Errorf("%q: answered %v; PostgreSQL %s %q", q, textColumns(res), pgErr.Code, pgErr.Message)
		return
	}
	compareText(t, q, textColumns(res), want)
}

// pgRowsOrErr returns PostgreSQL's text rows of q, or its error.
func pgRowsOrErr(ctx context.Context, pg *pgx.Conn, q string) ([][]string, *pgconn.PgError) {
	rows, err := pg.Query(ctx, q)
	if err == nil {
		var out [][]string
		for rows.Next() {
			vals, verr := rows.Values()
			if verr != nil {
				err = verr
				break
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = pgCell(v)
			}
			out = append(out, row)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err == nil {
			return out, nil
		}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return nil, pe
	}
	return nil, &pgconn.PgError{Code: "?", Message: err.Error()}
}
