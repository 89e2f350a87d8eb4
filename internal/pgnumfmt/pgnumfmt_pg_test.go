package pgnumfmt

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// oracleBodies are the digit parts of the generated templates: widths from one position to
// twenty, zeros leading and trailing, points and commas (and D and G), no point.
var oracleBodies = []string{"9", "999", "99999", "0", "000", "990", "099", "9.9", "999.99", "0.00", "990.000", "9,999",
	"9G999D99", ".99", "9.", "0000.0", "99999999999999999999", "9.99999999999999999999", "9,990.09"}

// oracleAround are the other patterns, each written before or after a body: every sign
// pattern at both ends, L, TH and th, V, EEEE, RN and rn, B, C and SP, quoted text, escapes
// and copied characters.
var oracleAround = [][2]string{{"", ""}, {"S", ""}, {"", "S"}, {"", "MI"}, {"MI", ""}, {"PL", ""}, {"", "PL"}, {"SG", ""}, {"", "SG"},
	{"", "PR"}, {"L", ""}, {"", "L"}, {"", "TH"}, {"", "th"}, {"", "V99"}, {"", "V9"}, {"", "EEEE"}, {"RN", ""}, {"rn", ""}, {"B", ""},
	{"C", ""}, {"", "SP"}, {`"Total: "`, ""}, {"", ` "\"q\" \9"`}, {`\"`, ""}, {"$", ""}, {"", "%"}, {"S", "PR"}, {"", "s"}, {"", "mi"}}

// oracleTemplates are further templates: patterns in the middle, several of a kind, the
// combinations PostgreSQL refuses, a template without digits.
var oracleTemplates = []string{"999S99", "99PR9", "9 9 9", `99"x"99`, "S9,999.99", "FM9,999.99S", "9.99EEEE", "FM9.99EEEE", "99.99V9",
	"9V99.9", "V9", "RN", "FMRN", "rnth", "TH", "FM", "", "EEEE", "9EEEE9", "0.0EEEE", "9,9.9,9", "SG9SG", "PL9MI", "MI9PL", "SS9", "9.9.9",
	"PR9", "9PRS", "9MIS", "S9S", "EEEEEEEE", "9RN", "RN9", "RNSG", "RNPL", "FMRNMI", "99D99S", "FM00.00TH", "09V99", "9V0", "0V9",
	"FM999th", "9 . 9", "99.9PR", "FM99.9PR", "L9.99", "FMS9.99", "FM99MI", "FMSG99", "FMPL99", "S.99", "FM.99S", "0999.99990", "FM0999.99990",
	"9990.0999", "FM9990.0999", "99,999,999.999", "FM99,999,999.999", "b9", "9c", `"9"9`, `\9`, "9\\\"9", "9E9", "9EEE", "9eeee", "9.9eeee"}

func oracleTemplateList() []string {
	var out []string
	for _, fm := range []string{"", "FM"} {
		for _, b := range oracleBodies {
			for _, a := range oracleAround {
				out = append(out, fm+a[0]+b+a[1])
			}
		}
	}
	return append(out, oracleTemplates...)
}

// oracleValues are each type's values: zero, signs, the ordinals' digits, Roman numerals'
// range ends, ties that round away from zero (numeric) or to even (float EEEE), values
// rounding to zero from below, values too wide for any template, types' extremes.
var oracleValues = map[string][]string{
	"int4": {"0", "1", "-1", "2", "3", "4", "11", "12", "13", "21", "22", "-23", "101", "111", "999", "-999", "1000", "12345", "-12345", "3999",
		"4000", "25", "35", "1234567", "2147483647", "-2147483648"},
	"int8": {"0", "1", "-1", "2", "3", "13", "22", "-23", "111", "999", "12345", "-12345", "3999", "4000", "25", "35", "1234567", "2147483647",
		"-2147483648", "1000000000000", "-4000000000000000", "9223372036854775807", "-9223372036854775808"},
	"numeric": {"0", "0.4", "-0.4", "0.5", "-0.5", "1.5", "-1.005", "12.345", "-0.004", "0.05", "9.95", "99.995", "1234.5678", "-1234.5678",
		"123456789.123", "0.0000000001", "12345678901234567890.5", "-99999.999", "1.0000001", "3999.4", "3999.5", "-3.5", "25", "2.5", "11", "-0.00",
		"100", "0.999"},
	"float8": {"0", "0.4", "-0.4", "0.5", "-0.5", "1.5", "2.5", "-1.005", "12.345", "-0.004", "0.05", "9.95", "1234.5678", "-1234.5678",
		"123456789.123", "1e-10", "1e20", "-1e20", "0.1", "0.125", "1e300", "123456789012345678", "NaN", "Infinity", "-Infinity", "-0", "3999.5",
		"4000.5", "25", "11", "1234567890123.4567", "0.30000000000000004", "2147483647.5", "-2147483648.7"},
	"real": {"0", "0.4", "-0.4", "0.5", "1.5", "2.5", "12.345", "-0.004", "1234.5678", "-1234.5678", "123456.7", "1e10", "0.1", "NaN",
		"Infinity", "-0", "25", "3999.5", "16777217"},
}

// format formats v (text of a value of typ) with tm as the to_char of typ.
func format(tm *Template, typ, v string) (string, error) {
	switch typ {
	case "int4":
		i, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return "", err
		}
		return tm.Int4(int32(i))
	case "int8":
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", err
		}
		return tm.Int8(i)
	case "numeric":
		d, _, err := apd.NewFromString(v)
		if err != nil {
			return "", err
		}
		return tm.Numeric(d)
	case "float8":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", err
		}
		return tm.Float8(f)
	default:
		f, err := strconv.ParseFloat(v, 32)
		if err != nil && !math.IsInf(f, 0) {
			return "", err
		}
		return tm.Float4(float32(f))
	}
}

// TestToCharAsPostgres: every generated template (each body with and without FM, with every
// other pattern before or after it) and the hand-written ones, over every value of every
// type to_char takes (integer, bigint, numeric, double precision, real), is PostgreSQL's text
// to the byte, or PostgreSQL's error (its SQLSTATE) where PostgreSQL refuses the template or
// the value. Cases this package refuses (0A000) are counted and must stay few.
func TestToCharAsPostgres(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET lc_numeric = 'C'; SET lc_monetary = 'C'"); err != nil {
		t.Fatal(err)
	}
	compared, refusedHere := 0, 0
	check := func(typ, tmpl, v, want, wantCode string) {
		compared++
		tm, err := Parse(tmpl)
		var got string
		if err == nil {
			got, err = format(tm, typ, v)
		}
		var e *Error
		switch {
		case err != nil && errors.As(err, &e) && e.Code == "0A000":
			refusedHere++
		case err != nil && !errors.As(err, &e):
			t.Errorf("to_char(%s::%s, %q): %v", v, typ, tmpl, err)
		case err != nil && e.Code != wantCode:
			t.Errorf("to_char(%s::%s, %q): error %s %q, PostgreSQL %q (SQLSTATE %q)", v, typ, tmpl, e.Code, e.Msg, want, wantCode)
		case err == nil && (wantCode != "" || got != want):
			t.Errorf("to_char(%s::%s, %q) = %q, PostgreSQL %q (SQLSTATE %q)", v, typ, tmpl, got, want, wantCode)
		}
	}
	for _, tmpl := range oracleTemplateList() {
		for typ, vals := range oracleValues {
			q := "SELECT to_char(v::" + typ + ", $1) FROM unnest($2::text[]) WITH ORDINALITY AS u(v, n) ORDER BY n"
			var want []string
			rows, _ := conn.Query(ctx, q, tmpl, vals)
			want, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err == nil {
				for i, v := range vals {
					check(typ, tmpl, v, want[i], "")
				}
				continue
			}
			// An error: value by value.
			for _, v := range vals {
				var s string
				err := conn.QueryRow(ctx, "SELECT to_char($2::"+typ+", $1)", tmpl, v).Scan(&s)
				var pe *pgconn.PgError
				switch {
				case err == nil:
					check(typ, tmpl, v, s, "")
				case errors.As(err, &pe):
					check(typ, tmpl, v, pe.Message, pe.Code)
				default:
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("%d cases compared with PostgreSQL's, %d refused here", compared, refusedHere)
	if compared < 10000 {
		t.Fatalf("only %d cases", compared)
	}
	if refusedHere*100 > compared {
		t.Fatalf("%d of %d cases refused", refusedHere, compared)
	}
}
