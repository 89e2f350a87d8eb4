package substrait

import (
	"testing"

	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
)

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
