package substrait

import (
	"errors"
	"testing"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzDateTimeIn: the executor's readers of date and timestamp rows (DateIn, TimestampIn)
// agree with the constant path (literalOfType): the same days or nanoseconds, or an error of
// the constant too, except that a timestamptz constant outside timestamp[ns] is clamped
// (a bound) where a row's is 22008. Errors carry a SQLSTATE and never panic.
func FuzzDateTimeIn(f *testing.F) {
	for _, s := range []string{"2001-04-01", " 2001-04-01 ", "2001-02-30", "2001-04-01 10:00", "2001-04-01 10:00:00+05", "2001-04-01T10:00:05.5Z",
		"2001-04-01 10:00 UTC", "1500-01-01", "2300-01-01 00:00", "abc", "", "2001-04-01 25:00", "2001-04-01 10:00:00-02:30",
		"April 1, 2001", "04/01/2001 10:00", "2001-4-1", "2001-04-01 10:00 America/Chicago", "2001-04-01 10:00 EST5EDT", "2001-04-01 10:00+5", "2001-04-01 10:00+05:30:15",
		"2001-04-01 23:59:59.9999999", "2001-04-01 10:00:60.5", "2001-04-01 24:00:00.0000005", "2001-04-01 10:00:00."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcount.Add()
		days, err := DateIn(s)
		lit, lerr := literalOfType(s, dateType())
		switch {
		case err != nil && lerr == nil:
			t.Fatalf("DateIn(%q): %v; the constant reads", s, err)
		case err == nil && (lerr != nil || int32(lit.(*expr.PrimitiveLiteral[types.Date]).Value) != days):
			t.Fatalf("DateIn(%q) = %d; the constant %v %v", s, days, lit, lerr)
		}
		checkState(t, s, err)
		for _, naive := range []bool{false, true} {
			typ := tsType()
			if naive {
				typ = wallclockType()
			}
			ns, err := TimestampIn(s, naive)
			lit, lerr := literalOfType(s, typ)
			checkState(t, s, err)
			var e *Error
			switch {
			case err != nil && errors.As(err, &e) && e.SQLState == "22008":
			case err != nil && lerr == nil:
				t.Fatalf("TimestampIn(%q, %t): %v; the constant reads", s, naive, err)
			case err == nil && lerr != nil:
				t.Fatalf("TimestampIn(%q, %t) = %d; the constant %v", s, naive, ns, lerr)
			case err == nil && lit.(*expr.ProtoLiteral).Value.(int64) != ns:
				t.Fatalf("TimestampIn(%q, %t) = %d; the constant %v", s, naive, ns, lit)
			}
		}
	})
}

// checkState fails unless err is nil or an *Error with a SQLSTATE.
func checkState(t *testing.T, s string, err error) {
	t.Helper()
	var e *Error
	if err != nil && (!errors.As(err, &e) || e.SQLState == "") {
		t.Fatalf("%q: %T %v without a SQLSTATE", s, err, err)
	}
}
