package substrait

import (
	"errors"
)

// DateIn reads text as a date constant is read (parseDate) and returns its days since
// 1970-01-01: the executor reads each row of a cast of computed text to date with it
// (ops.SetDateTimeInput), so constants and rows read alike. Errors are *Error with
// PostgreSQL's SQLSTATE (inputError) and quote no text.
func DateIn(s string) (int32, error) {
	d, err := parseDate(s)
	if err != nil {
		return 0, inputError(err, "date")
	}
	return int32(d.Unix() / 86400), nil
}

// TimestampIn reads text as a timestamp constant is read and returns nanoseconds since the
// Unix epoch: for timestamp without time zone (naive) the wall clock, a zone written in the
// text read and ignored as PostgreSQL's timestamp_in ignores it; else the instant (text
// without a zone is in the session's zone, UTC): readTimestamp, the constants' reader. Unlike a bound, a
// value outside timestamp[ns] is not clamped: it is 22008 "timestamp out of range". The
// executor reads each row of a cast of computed text with it (ops.SetDateTimeInput). Errors
// are *Error with PostgreSQL's SQLSTATE and quote no text.
func TimestampIn(s string, naive bool) (int64, error) {
	typ := typeTimestamptz
	if naive {
		typ = typeTimestamp
	}
	t, err := readTimestamp(s, naive)
	if err == nil {
		err = checkNanoRange(t)
	}
	if err != nil {
		return 0, inputError(err, typ)
	}
	return t.UnixNano(), nil
}

// inputError gives a date/time reader's error PostgreSQL's SQLSTATE where it has none: text
// the reader does not read is 22007 "invalid input syntax for type <typ>", an instant outside
// timestamp[ns] 22008 "timestamp out of range".
func inputError(err error, typ string) *Error {
	var e *Error
	if !errors.As(err, &e) {
		return &Error{Code: InvalidArgument, SQLState: "22007", Msg: "invalid input syntax for type " + typ}
	}
	switch {
	case e == ErrTimestampOutOfRange:
		return &Error{Code: InvalidArgument, SQLState: "22008", Msg: "timestamp out of range"}
	case e.SQLState != "":
		return e
	}
	return &Error{Code: InvalidArgument, SQLState: "22007", Msg: "invalid input syntax for type " + typ}
}

// IntervalIn reads text as an interval constant is read (parseIntervalFields: interval_in's
// verbose, SQL-standard and ISO 8601 designator forms) into months, days and nanoseconds: the
// executor reads each row of a cast of computed text to interval with it (interval_in,
// ops.SetDateTimeInput). Text it does not read is 22007 "invalid input syntax for type
// interval", a field past int32 22015, months past it 22008, a form PostgreSQL reads and it
// does not 0A000 naming it; errors are *Error and quote no text.
func IntervalIn(s string) (months, days int32, ns int64, err error) {
	m, d, us, err := parseIntervalFields(s)
	if err != nil {
		return 0, 0, 0, err
	}
	return m, d, us * 1000, nil
}

// ToDate is to_date(s, format) (parseToDate) as days since 1970-01-01, and ToTimestamp
// to_timestamp(s, format) (parseToTimestamp) as nanoseconds since the Unix epoch: the executor
// reads each row of to_date and to_timestamp of computed text with them (ops.SetDateTimeInput),
// as the binder folds constants. Errors are *Error with PostgreSQL's SQLSTATE and quote no text.
func ToDate(s, format string) (int32, error) { return parseToDate(s, format) }

// ToTimestamp: see ToDate.
func ToTimestamp(s, format string) (int64, error) {
	t, err := parseToTimestamp(s, format)
	if err != nil {
		return 0, err
	}
	return t.UnixNano(), nil
}
