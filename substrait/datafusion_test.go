package substrait

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"

	"github.com/flightsrv/flightsrv/routing"
)

// TestDataFusionFunctions binds DataFusion 55's own plans (testdata/substrait/
// datafusion55-functions.json, written by the script beside it) of one expression each and
// checks what each call became: the functions and shapes the SQL binder binds for
// PostgreSQL's function of the same meaning, or a refusal naming the function with its
// SQLSTATE. The answers over the sample are checked against PostgreSQL's and DuckDB's in
// clients/python/test_producers.py.
func TestDataFusionFunctions(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../testdata/substrait/datafusion55-functions.json")
	if err != nil {
		t.Fatal(err)
	}
	var plans map[string]string
	if err := json.Unmarshal(raw, &plans); err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog(routing.TableDef{Name: "flights", TableID: "fl", PartitionColumn: "origin", Strategy: routing.CalendarMonthUTC, WritableBuckets: 12})
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]string{
		"strpos(id, '8')":                                "strpos(.field(2) => string?, string(8)) => i32?",
		"btrim(id, '0')":                                 "btrim(.field(2) => string?, string(0)) => string?",
		"ltrim(id)":                                      "ltrim(.field(2) => string?) => string?",
		"rtrim(id, '0')":                                 "rtrim(.field(2) => string?, string(0)) => string?",
		"reverse(id)":                                    "reverse(.field(2) => string?) => string?",
		"translate(id, '01', 'ab')":                      "translate(.field(2) => string?, string(01), string(ab)) => string?",
		"replace(id, '00', 'x')":                         "replace(.field(2) => string?, string(00), string(x)) => string?",
		"repeat(id, 2)":                                  "repeat(.field(2) => string?, i64(2)) => string?",
		"left(id, 3)":                                    "left(.field(2) => string?, i64(3)) => string?",
		"right(id, 3)":                                   "right(.field(2) => string?, i64(3)) => string?",
		"coalesce(nullif(id, '0'), 'Z')":                 "<IfThen>((is_not_null(<IfThen>((equal(.field(2) => string?, string(0)) => boolean?) ?null(string?))<Else>(.field(2) => string?)) => boolean) ?<IfThen>((equal(.field(2) => string?, string(0)) => boolean?) ?null(string?))<Else>(.field(2) => string?))<Else>(cast(string(Z) AS string?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION))",
		"date_trunc('hour', \"timestamp\")":              "round_calendar(.field(1) => precision_timestamp_tz?<9>, FLOOR, HOUR, DAY, i64(1), string(UTC)) => precision_timestamp_tz?<9>",
		"date_trunc('week', \"timestamp\")":              "round_calendar(.field(1) => precision_timestamp_tz?<9>, FLOOR, WEEK, MONDAY_WEEK, i64(1), string(UTC)) => precision_timestamp_tz?<9>",
		"date_part('hour', \"timestamp\")":               "cast(date_part(HOUR, .field(1) => precision_timestamp_tz?<9>) => i64? AS i32?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION)",
		"extract(dow FROM \"timestamp\")":                "cast(date_part(DOW, .field(1) => precision_timestamp_tz?<9>) => i64? AS i32?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION)",
		"floor(CAST(substr(id, 7, 4) AS DOUBLE))":        "floor(cast(",
		"ceil(CAST(substr(id, 7, 4) AS DOUBLE))":         "ceil(cast(",
		"round(CAST(substr(id, 7, 4) AS DOUBLE) / 7)":    "<IfThen>((gte(abs(subtract(divide(",
		"round(CAST(substr(id, 7, 4) AS DOUBLE) / 7, 2)": "divide(<IfThen>((gte(abs(subtract(multiply(divide(",
		"round(CAST(substr(id, 7, 4) AS BIGINT))":        "cast(substring(.field(2) => string?, i64(7), i64(4)) => string? AS i64?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION)",
		"ends_with(id, '0')":                             "equal(right(.field(2) => string?, char_length(string(0)) => i64?) => string?, string(0)) => boolean?",
		"id ~ '^0+14[0-9]{3}[05]0$'":                     "regex_match(, .field(2) => string?, string(^0+14[0-9]{3}[05]0$)) => boolean?",
		"\"timestamp\" + INTERVAL '6 hours'":             "timestamp_add(.field(1) => precision_timestamp_tz?<9>, i64(0), i64(21600000000000)) => precision_timestamp_tz?<9>",
		"\"timestamp\" - INTERVAL '1 month 2 days'":      "timestamp_add(.field(1) => precision_timestamp_tz?<9>, i64(-1), i64(-172800000000000)) => precision_timestamp_tz?<9>",
		"CAST(substr(id, 7, 4) AS INT) % 7":              "modulus(cast(cast(substring(.field(2) => string?, i64(7), i64(4)) => string? AS i32?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION) AS i64?, fail: FAILURE_BEHAVIOR_THROW_EXCEPTION), i64(7)) => i64?",
		"ntile(3) OVER (ORDER BY id)":                    "=> i32?",
	}
	refused := map[string]struct{ state, msg string }{
		"regexp_replace(id, '^0+', '')":                   {"0A000", "DataFusion's function regexp_replace is not supported"},
		"id ~* '^0+'":                                     {"0A000", "DataFusion's function regex_imatch (~*) is not supported"},
		"id ~ '^0.1'":                                     {"0A000", "DataFusion's function regex_match (~) is not supported"},
		"date_part('second', \"timestamp\")":              {"0A000", `DataFusion's function date_part is not supported: of the field "second"`},
		"round(CAST(substr(id, 7, 4) AS DOUBLE), 23)":     {"0A000", "DataFusion's function round is not supported: its digits must be an integer literal from -22 to 22"},
		"floor(CAST(substr(id, 7, 4) AS DECIMAL(10, 2)))": {"42883", "DataFusion's function floor(decimal<10,2>) is not supported over these argument types"},
	}
	if len(plans) != len(bound)+len(refused) {
		t.Fatalf("%d plans, %d cases", len(plans), len(bound)+len(refused))
	}
	for e, b64 := range plans {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := PrepareSubstrait(b, cat, BindOptions{})
		if r, ok := refused[e]; ok {
			var se *Error
			if !errors.As(err, &se) || se.SQLState != r.state || !strings.Contains(se.Msg, r.msg) {
				t.Errorf("%s: %v, want %s %q", e, err, r.state, r.msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		x := ""
		for rel := got.Plan.GetRoots()[0].Input(); rel != nil && x == ""; {
			if p, ok := rel.(*plan.ProjectRel); ok {
				es := p.Expressions()
				x = es[len(es)-1].String()
			}
			if ins := rel.GetInputs(); len(ins) > 0 {
				rel = ins[0]
			} else {
				rel = nil
			}
		}
		if want := bound[e]; !strings.Contains(x, want) || strings.Contains(x, dataFusionPrefix) {
			t.Errorf("%s bound as\n%s\nwant it to hold\n%s", e, x, want)
		}
	}
}

func TestSameRegexMeaning(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p  string
		ok bool
	}{
		{"^0+", true},
		{"^0+14[0-9]{3}[05]0$", true},
		{"(ab|cd)*x{2,}", true},
		{"[^a-c]]", true},
		{"a.c", false},         // PostgreSQL's dot matches a newline, Rust's does not
		{`\d+`, false},         // escapes differ (\d Unicode in Rust, \b word boundary vs backspace)
		{"a*?", false},         // lazy quantifiers
		{"(?i)abc", false},     // flags
		{"[[:alpha:]]", false}, // classes
		{"a{3,1}", false},
		{"a{x}", false},
		{"[abc", false},
		{"é", false},
	} {
		if got := sameRegexMeaning(tt.p); got != tt.ok {
			t.Errorf("sameRegexMeaning(%q) = %v, want %v", tt.p, got, tt.ok)
		}
	}
}

func TestIntervalLiteralValue(t *testing.T) {
	t.Parallel()
	ds := func(days, secs int32, sub int64, prec int32) *substraitpb.Expression_Literal_IntervalDayToSecond {
		return &substraitpb.Expression_Literal_IntervalDayToSecond{Days: days, Seconds: secs, Subseconds: sub,
			PrecisionMode: &substraitpb.Expression_Literal_IntervalDayToSecond_Precision{Precision: prec}}
	}
	for _, tt := range []struct {
		name       string
		l          *substraitpb.Expression_Literal
		months, ns int64
		ok         bool
	}{
		// DataFusion 55's INTERVAL '6 hours': a compound of an empty year-to-month part.
		{"6 hours", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_IntervalCompound_{IntervalCompound: &substraitpb.Expression_Literal_IntervalCompound{
			IntervalYearToMonth: &substraitpb.Expression_Literal_IntervalYearToMonth{}, IntervalDayToSecond: ds(0, 21600, 0, 9)}}}, 0, 21600e9, true},
		{"1 year 1 month 2 days", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_IntervalCompound_{IntervalCompound: &substraitpb.Expression_Literal_IntervalCompound{
			IntervalYearToMonth: &substraitpb.Expression_Literal_IntervalYearToMonth{Years: 1, Months: 1}, IntervalDayToSecond: ds(2, 0, 0, 9)}}}, 13, 2 * 86400e9, true},
		{"1.5 seconds in microseconds", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_IntervalDayToSecond_{IntervalDayToSecond: ds(0, 1, 500000, 6)}}, 0, 1.5e9, true},
		{"-3 months", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_IntervalYearToMonth_{IntervalYearToMonth: &substraitpb.Expression_Literal_IntervalYearToMonth{Months: -3}}}, -3, 0, true},
		{"past int64 nanoseconds", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_IntervalDayToSecond_{IntervalDayToSecond: ds(200000, 0, 0, 9)}}, 0, 0, false},
		{"a string", &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_String_{String_: "1 day"}}, 0, 0, false},
	} {
		m, ns, ok := intervalLiteralValue(tt.l)
		if ok != tt.ok || ok && (m != tt.months || ns != tt.ns) {
			t.Errorf("%s: %d months %d ns %v, want %d %d %v", tt.name, m, ns, ok, tt.months, tt.ns, tt.ok)
		}
	}
}
