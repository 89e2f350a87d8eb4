package substrait

import (
	"errors"
	"testing"
)

// TestRefusalSQLStates: refusals carry PostgreSQL's SQLSTATE for their condition (the codes
// PostgreSQL 15 answers the same statements with), and the log form of a message redacts only
// the client's own text: the binder's own words (GROUP BY, a known function's name) stay.
func TestRefusalSQLStates(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, tt := range []struct{ sql, state, log string }{
		{`SELECT id, count(*) FROM messages` + routedWhere, "42803", "column <identifier> must appear in the GROUP BY clause or be used in an aggregate function"},
		{`SELECT id + 1 FROM messages` + routedWhere, "42883", "operator does not exist: text + integer"},
		{`SELECT char_length(value) FROM messages` + routedWhere, "42883", "function char_length(bytea) does not exist"},
		{`SELECT 1 UNION SELECT 1, 2`, "42601", "each UNION query must have the same number of columns"},
		{`SELECT 1 UNION SELECT 'a'::bytea`, "42804", ""},
		{`SELECT * FROM messages` + routedWhere + ` ORDER BY 5`, "42P10", "ORDER BY position 5 is not in select list"},
		{`SELECT 'x'::int`, "22P02", ""},
		{`SELECT 1::bytea::int`, "42846", ""},
		{`SELECT sum(count(*)) FROM messages` + routedWhere, "42803", ""},
		{`SELECT count(*) FROM messages` + routedWhere + ` GROUP BY count(*)`, "42803", ""},
		{`SELECT mode() WITHIN GROUP (ORDER BY interval '1 day') FROM messages` + routedWhere, "0A000", "mode of interval is not supported"},
		{`WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x FROM r) CYCLE x SET c USING p SELECT * FROM r`, "0A000", "SEARCH and CYCLE clauses of WITH RECURSIVE are not supported"},
		{`SELECT round(1.5, id::int) FROM messages` + routedWhere, "0A000", "round(numeric, n) with n other than an integer constant or a parameter is not supported"},
		{`SELECT nosuchfn(1)`, "42883", "function <identifier>(integer) does not exist"},
		{`SELECT f.f.timestamp FROM messages f` + routedWhere, "42P01", "invalid reference to FROM-clause entry for table <identifier>"},
		{`SELECT x.messages.* FROM messages` + routedWhere, "42P01", "missing FROM-clause entry for table <identifier>"},
		{`SELECT to_number(id, '999') FROM messages` + routedWhere, "0A000", "function to_number is not supported"},
		{`SELECT date_trunc('fortnight', timestamp) FROM messages` + routedWhere, "22023", ""},
		// Issue 18's user trial: PostgreSQL's words and codes, or refused by name.
		{`SELECT id FROM messages o` + routedWhere + ` AND EXISTS (SELECT 1 FROM messages i` + routedWhere + ` AND EXISTS (SELECT 1 FROM messages j` + routedWhere + ` AND j.id = o.id))`,
			"0A000", "correlated references to a query 2 levels out (column <identifier>, read from a subquery or derived table inside a subquery) are not supported"},
		{`SELECT id FROM messages o` + routedWhere + ` AND EXISTS (SELECT 1 FROM (SELECT id FROM messages i` + routedWhere + ` AND i.value = o.value) d)`,
			"0A000", "correlated references to a query 2 levels out (column <identifier>, read from a subquery or derived table inside a subquery) are not supported"},
		{`SELECT id FROM messages o` + routedWhere + ` AND EXISTS (SELECT 1 FROM messages i` + routedWhere + ` AND EXISTS (SELECT 1 FROM messages j` + routedWhere + ` AND j.id = nosuch.id))`,
			"42P01", "missing FROM-clause entry for table <identifier>"},
		{`SELECT id FROM messages o` + routedWhere + ` AND length(id) > ALL (SELECT length(id) + (SELECT 1) FROM messages i` + routedWhere + ` AND i.value = o.value)`,
			"0A000", "correlated ALL (SELECT …) subqueries whose select list holds a subquery are not supported"},
		{`SELECT log(2::float8, 8::float8)`, "42883", "function log(double precision, double precision) does not exist"},
		// trial27: a field of a composite value was refused as an array subscript.
		{`SELECT 1 WHERE (jsonb_each('{"a":1}')).key = 'a'`, "0A000", "field selection from a composite value ((expression).field) is not supported"},
		// srf18c: a record-returning set-returning function in a select list.
		{`SELECT (jsonb_each('{"a":1}')).secret`, "42703", "could not identify column <identifier> in record data type"},
		{`SELECT (jsonb_each('{"a":1}'))[1]`, "42804", "cannot subscript type record because it does not support subscripting"},
		{`SELECT ((jsonb_each('{"a":1}')).*).key`, "0A000", `row expansion via "*" is not supported here`},
		{`SELECT jsonb_each('{"a":1}')`, "0A000", "jsonb_each(...) in a select list returns a record, which is not supported: select (jsonb_each(...)).key/.value or call it in FROM"},
		{`SELECT (regexp_match('ab', 'a')).*`, "0A000", "field selection from a composite value ((expression).field) is not supported"},
		{`SELECT log(2::real, 8::numeric)`, "42883", "function log(real, numeric) does not exist"},
		{`SELECT now() * '1'`, "42883", "operator does not exist: timestamp with time zone * unknown"},
		{`SELECT now()::timestamp + '2001-01-01'::date`, "42883", "operator does not exist: timestamp without time zone + date"},
		{`SELECT 1e40::real`, "22003", "value out of range for type real"},
		{`SELECT min(*) FROM messages` + routedWhere, "42883", "function min() does not exist"},
		{`SELECT * FROM messages` + routedWhere + ` LIMIT -1`, "2201W", "LIMIT must not be negative"},
		// trial25: json beside unknown literals has no equality; recursive column modifiers;
		// a recursive UNION of intervals; regexp_match's g.
		{`SELECT count(*) FROM (VALUES ('{"a":1}'::json), ('{"a":1}')) t(j) GROUP BY j`, "42883", "could not identify an equality operator for type json"},
		{`SELECT j::text FROM (SELECT '{"a":1}' UNION SELECT '{"a":1}'::json) t(j)`, "42883", "could not identify an equality operator for type json"},
		{`WITH RECURSIVE r(s, n) AS (SELECT 'a'::varchar(3), 1 UNION ALL SELECT s || 'b', n + 1 FROM r WHERE n < 4) SELECT s, n FROM r`, "42804",
			"recursive query <identifier> column 1 has type character varying(3) in non-recursive term but type character varying overall"},
		{`WITH RECURSIVE r(x, n) AS (SELECT 1.5::numeric(4,1), 1 UNION ALL SELECT (x + 1)::float8, n + 1 FROM r WHERE n < 4) SELECT x, n FROM r`, "42804",
			"recursive query <identifier> column 1 has type numeric(4,1) in non-recursive term but type double precision overall"},
		{`WITH RECURSIVE r(i) AS (SELECT interval '1 day' UNION SELECT interval '24 hours' FROM r) SELECT i::text FROM r`, "0A000", "recursive UNION (without ALL) of an interval is not supported"},
		{`SELECT regexp_match('abc', 'b', 'g')`, "22023", "regexp_match() does not support the \"global\" option"},
		{`SELECT a.id FROM messages a JOIN messages b ON a.id = b.id WHERE a.channel_id = 'general' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-02-01' AND b.channel_id = 'general'`,
			"", "messages read as <identifier> needs timestamp >= <start> AND timestamp < <end>"},
		// trial28: a constant other than an integer in GROUP BY, ORDER BY and DISTINCT ON is
		// PostgreSQL's 42601 (an integer is a position); the time of day is refused by name.
		{`SELECT 'x' AS c, count(*) FROM messages` + routedWhere + ` GROUP BY 'x'`, "42601", "non-integer constant in GROUP BY"},
		{`SELECT count(*) FROM messages` + routedWhere + ` GROUP BY ROLLUP (1.5)`, "42601", "non-integer constant in GROUP BY"},
		{`SELECT id FROM messages` + routedWhere + ` ORDER BY NULL`, "42601", "non-integer constant in ORDER BY"},
		{`SELECT 1 UNION SELECT 2 ORDER BY 'x'`, "42601", "non-integer constant in ORDER BY"},
		{`SELECT DISTINCT ON (true) id FROM messages` + routedWhere, "42601", "non-integer constant in DISTINCT ON"},
		{`SELECT time '06:59' + time '01:00'`, "42725", "operator is not unique: time without time zone + time without time zone"},
		{`SELECT current_time(2)`, "0A000", "current_time (time with time zone) is not supported: localtime is the time without time zone"},
		{`SELECT "localtimestamp"()`, "42883", "function <identifier>() does not exist"},
	} {
		_, err := Prepare(tt.sql, cat)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: error %v is not an *Error", tt.sql, err)
			continue
		}
		if e.SQLState != tt.state {
			t.Errorf("%q (%s): SQLSTATE %q, want %q", tt.sql, e.Msg, e.SQLState, tt.state)
		}
		if tt.log != "" && e.LogMessage() != tt.log {
			t.Errorf("%q: log form %q, want %q", tt.sql, e.LogMessage(), tt.log)
		}
	}
}
