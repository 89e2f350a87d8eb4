package substrait

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// This file takes the SET and RESET statements drivers and BI tools send when they connect
// (pgjdbc's extra_float_digits and application_name, Metabase's TimeZone, psql's DateStyle).
// A flightsrv session keeps no such state: a statement is planned alone (a Flight SQL request
// carries no connection), and every statement runs with PostgreSQL's settings of a UTC
// session (showSettings). So a SET that keeps those semantics is accepted and does nothing
// (CheckSet), and one that would change them is refused by name: honouring it on this
// statement only would be a silent wrong answer on the next.

// IsSet reports whether sql begins, after white space and comments, with the keyword SET or
// RESET (any case): the statements CheckSet takes, told apart without parsing as IsInsert
// tells an INSERT.
func IsSet(sql string) bool {
	return startsWithKeyword(sql, "set") || startsWithKeyword(sql, "reset")
}

// setAccepts holds, per setting (lower case), whether a SET to its value (the words of the
// statement's arguments, lower case, joined by ", ") keeps the semantics of every flightsrv
// statement: the values PostgreSQL's settings have in a UTC session, or spell equivalently.
var setAccepts = map[string]func(v string) bool{
	// Zones whose offset is always zero and whose abbreviation (to_char's TZ) is UTC, as
	// PostgreSQL 15's tz database has them; GMT is not (its abbreviation is GMT).
	"timezone": func(v string) bool {
		switch v {
		case "utc", "etc/utc", "uct", "etc/uct", "universal", "etc/universal", "zulu", "etc/zulu":
			return true
		}
		return false
	},
	// Output style ISO and field order MDY (either may be left out, as it keeps its value).
	"datestyle": func(v string) bool {
		for _, w := range strings.Split(v, ",") {
			switch strings.TrimSpace(w) {
			case "iso", "mdy", "us", "noneuropean", "non-european":
			default:
				return false
			}
		}
		return true
	},
	"intervalstyle": func(v string) bool { return v == "postgres" },
	// Any name: it only labels the session in pg_stat_activity.
	"application_name": func(string) bool { return true },
	// 1 to 3 (pgjdbc sends 3) print floats shortest-exact, as flightsrv always does
	// (PostgreSQL 12's float8out); 0 and below round them to fewer digits.
	"extra_float_digits": func(v string) bool {
		n, err := strconv.Atoi(v)
		return err == nil && n >= 1
	},
	// No timeout, the default: a per-statement timeout would need a session to keep it.
	"statement_timeout": func(v string) bool { return v == "0" || v == "0ms" || v == "0s" },
	// public, with or without PostgreSQL's default "$user" before it (no schema is named as
	// a user).
	"search_path": func(v string) bool {
		v = strings.NewReplacer(`"`, "", " ", "").Replace(v)
		return v == "public" || v == "$user,public"
	},
	"client_encoding": func(v string) bool {
		return v == "utf8" || v == "unicode" || v == "utf-8"
	},
	"standard_conforming_strings": func(v string) bool { return v == "on" || v == "true" },
}

// setNames spells each setting of setAccepts as PostgreSQL names it in its messages.
var setNames = map[string]string{"timezone": "TimeZone", "datestyle": "DateStyle", "intervalstyle": "IntervalStyle"}

// CheckSet checks sql, a SET or RESET statement (SET [SESSION | LOCAL] name {TO | =} value,
// SET TIME ZONE value, RESET name, RESET ALL): nil when it keeps the semantics every
// flightsrv statement has — a RESET (every setting already has its default), SET … TO
// DEFAULT, TIME ZONE LOCAL, or a value setAccepts takes — so that the caller answers it as
// PostgreSQL answers a SET (no rows; an update count of 0) and changes nothing. Otherwise an
// *Error: Unimplemented (0A000) naming the setting for a value that would change semantics
// or a setting flightsrv does not take (never quoting the value, nor an unknown name, which
// are the client's text); extra_float_digits outside PostgreSQL's range (-15 .. 3) or not an
// integer is PostgreSQL's 22023; a name PostgreSQL 15 does not know is its 42704, a parameter a
// session cannot change its 55P02 (pgParameters). A statement that is not one SET or RESET (SET TRANSACTION,
// SET SESSION AUTHORIZATION, SET ROLE) is Unimplemented, naming its form.
func CheckSet(sql string) error {
	node, ex, err := parseOne(sql)
	if err != nil {
		return err
	}
	set := node.GetVariableSetStmt()
	if set == nil || ex.on {
		return unimplemented(statementName(node))
	}
	name := strings.ToLower(set.GetName())
	switch set.GetKind() {
	case pg.VariableSetKind_VAR_RESET_ALL:
		return nil
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION …, SET SESSION CHARACTERISTICS AS TRANSACTION …
		return unimplemented("SET TRANSACTION")
	}
	accept, ok := setAccepts[name]
	if !ok {
		switch name {
		case "role", "session_authorization":
			return unimplemented("SET " + strings.ToUpper(strings.ReplaceAll(name, "_", " ")))
		}
		if !knownParameter(name) && !strings.Contains(name, ".") {
			// PostgreSQL's refusal of a name it does not know (a dotted name is a custom
			// placeholder, which it creates).
			return errUnknownParameter
		}
		if err := setContextError(name); err != nil {
			return err
		}
		// The name is the client's text: not echoed.
		return unimplemented("SET of this parameter")
	}
	shown := name
	if s, ok := setNames[name]; ok {
		shown = s
	}
	switch set.GetKind() {
	case pg.VariableSetKind_VAR_RESET, pg.VariableSetKind_VAR_SET_DEFAULT:
		return nil
	case pg.VariableSetKind_VAR_SET_CURRENT:
		// SET … FROM CURRENT keeps the value the session has.
		return nil
	case pg.VariableSetKind_VAR_SET_VALUE:
	default:
		return unimplemented("SET of this form")
	}
	var words []string
	for _, a := range set.GetArgs() {
		c := a.GetAConst()
		switch {
		case c == nil:
			// SET TIME ZONE INTERVAL '…' HOUR TO MINUTE: a fixed offset, shown otherwise.
			return errSetValue(shown, name)
		case c.GetSval() != nil:
			words = append(words, strings.ToLower(strings.TrimSpace(c.GetSval().GetSval())))
		case c.GetIval() != nil:
			words = append(words, strconv.Itoa(int(c.GetIval().GetIval())))
		case c.GetFval() != nil:
			words = append(words, c.GetFval().GetFval())
		case c.GetBoolval() != nil:
			words = append(words, strconv.FormatBool(c.GetBoolval().GetBoolval()))
		default:
			return errSetValue(shown, name)
		}
	}
	v := strings.Join(words, ", ")
	if name == "timezone" && v == "local" {
		return nil // SET TIME ZONE LOCAL: the server's zone, UTC
	}
	if name == "extra_float_digits" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			return &Error{Code: InvalidArgument, SQLState: "22023", Msg: `invalid value for parameter "extra_float_digits"`}
		case n < -15 || n > 3:
			return &Error{Code: InvalidArgument, SQLState: "22023", Msg: `a value outside the valid range for parameter "extra_float_digits" (-15 .. 3)`}
		}
	}
	if !accept(v) {
		return errSetValue(shown, name)
	}
	return nil
}

// errSetValue refuses a SET of setting name (shown as PostgreSQL spells it) to a value that
// would change semantics: 0A000 naming the setting and the value flightsrv runs with.
func errSetValue(shown, name string) *Error {
	return refused(Unimplemented, "0A000", "SET %s to this value is not supported: flightsrv statements run with %s %s", shown, shown, showSettings[name])
}
