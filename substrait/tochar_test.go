package substrait

import (
	"errors"
	"testing"
)

// TestToCharBinding: to_char of a number with a constant template PostgreSQL rejects is its
// error (INVALID_ARGUMENT with PostgreSQL's SQLSTATE and message, internal/pgnumfmt); of every
// number type and of timestamps with and without time zone (zone patterns included) it binds;
// of intervals, constant or not, too.
func TestToCharBinding(t *testing.T) {
	cat := testCatalog(t)
	for _, tt := range []struct {
		sql, state, msg string
		code            Code
	}{
		{`SELECT to_char(1.5, '9.9.9')`, "42601", "to_char: multiple decimal points", InvalidArgument},
		{`SELECT to_char(15, 'RN9EEEE')`, "42601", `to_char: "EEEE" is incompatible with other formats`, InvalidArgument},
		{`SELECT to_char(15, '9.9EEEE9')`, "42601", `to_char: "EEEE" must be the last pattern used`, InvalidArgument},
		{`SELECT to_char(1.5::float8, 'S9MI')`, "42601", `to_char: cannot use "S" and "MI" together`, InvalidArgument},
	} {
		_, err := Prepare(tt.sql, cat)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || e.SQLState != tt.state || e.Msg != tt.msg {
			t.Errorf("%s: %v, want %v %s %q", tt.sql, err, tt.code, tt.state, tt.msg)
		}
	}
	for _, q := range []string{
		`SELECT to_char(1.5::float8, '9.99EEEE'), to_char(length(id), 'FMRNth'), to_char(length(id)::bigint, 'PL9V99'), to_char(1.5, id) FROM messages` + routedWhere,
		`SELECT to_char(timestamp AT TIME ZONE 'UTC', 'HH24 TZ OF'), to_char(timestamp, id), to_char(now()::timestamp, 'tzh:tzm') FROM messages` + routedWhere,
		`SELECT to_char(INTERVAL '1 day 2 hours', 'DD HH24'), to_char(timestamp - timestamp, id) FROM messages` + routedWhere,
	} {
		if _, err := Prepare(q, cat); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
