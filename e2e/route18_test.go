package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestFoldedRoutesAsPostgres (issue 18, trial27's refusals of what BI tools send): a route
// written behind constants PostgreSQL's planner folds — a constant false or NULL disjunct
// (WHERE false OR (pin AND range), 1 <> 1 OR …, (SELECT false) OR …), a double negation of an OR of pinned
// ranges, a pin through a parameter cast to char(3) (PostgreSQL reads the bpchar
// blank-trimmed and truncated to 3), a LIMIT that is an expression of constants — answers
// PostgreSQL's rows; a join read under a constant false filter or a LIMIT 0 (the schema probes
// of Metabase and Superset), or on the side a false ON does not preserve, needs no route and
// answers PostgreSQL's columns and rows, reading nothing there (EXPLAIN: an empty route).
func TestFoldedRoutesAsPostgres(t *testing.T) {
	ctx, pg, clients := avgEnv(t)
	const ord = "origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-03'"
	const sfo = "origin = 'SFO' AND timestamp >= '2001-04-02' AND timestamp < '2001-04-04'"
	const j = "flights f JOIN flights g ON f.id = g.id"
	rows := []string{
		"SELECT id, timestamp::text FROM flights WHERE false OR (" + ord + ") ORDER BY id",
		"SELECT id FROM flights WHERE 1 <> 1 OR (" + ord + ") OR NULL ORDER BY id",
		"SELECT origin, count(*) FROM flights WHERE NOT (NOT ((" + ord + ") OR (" + sfo + "))) GROUP BY 1 ORDER BY 1",
		"SELECT id FROM flights WHERE (" + ord + ") OR (1 = 2 AND origin = 'ATL') ORDER BY id",
		"SELECT id FROM flights WHERE " + ord + " ORDER BY id LIMIT 4 / 2 OFFSET 3 - 2",
		"SELECT id FROM flights WHERE " + ord + " ORDER BY id LIMIT NULL::int + 1",
		"SELECT g.x, f.id FROM generate_series(1, 3) g(x) LEFT JOIN flights f ON false ORDER BY 1",
		"SELECT g.x, f.id FROM flights f RIGHT JOIN generate_series(1, 2) g(x) ON 1 <> 1 ORDER BY 1",
		"SELECT count(*) FROM " + j + " WHERE false",
		"SELECT id FROM flights WHERE (SELECT false) OR (" + ord + ") ORDER BY id",
		"SELECT id FROM flights WHERE (SELECT 1 <> 1) OR ((SELECT NOT false) AND " + ord + ") ORDER BY id",
	}
	empty := []string{
		"SELECT * FROM " + j + " LIMIT 0",
		"SELECT * FROM " + j + " WHERE 1 <> 1",
		"SELECT * FROM (SELECT f.origin, g.id FROM " + j + ") t LIMIT 0",
		"SELECT f.id FROM " + j + " WHERE NULL",
		"SELECT f.id FROM flights f JOIN flights g ON false",
		"SELECT origin, count(*) FROM flights GROUP BY 1 HAVING false",
		"SELECT * FROM (SELECT origin, count(*) FROM flights GROUP BY 1) t WHERE 1 = 0",
		"SELECT id FROM flights LIMIT 1 - 1",
		"SELECT f.id FROM " + j + " LIMIT 2 - 2",
		"SELECT f.id FROM " + j + " WHERE (SELECT false)",
	}
	for _, cl := range clients {
		for _, q := range rows {
			if n := comparePG(t, ctx, pg, one(cl.c), sameSQL(pgText, q)...); n == 0 && !strings.Contains(q, "WHERE false") {
				t.Errorf("PostgreSQL answers no row to %s", q)
			}
		}
		comparePG(t, ctx, pg, one(cl.c), sameSQL(pgTypes, empty...)...)
		// The pin through a parameter cast to char(3): 'ORD ' and 'ORDX' are ORD's rows.
		for _, v := range []string{"ORD ", "ORDX"} {
			q := "SELECT count(*) FROM flights WHERE origin = $1::char(3) AND timestamp >= '2001-04-01' AND timestamp < '2001-04-03'"
			want := pgTextRows(t, ctx, pg, q, v)
			res, err := preparedRun(ctx, cl.c, strings.Replace(q, "$1", "?", 1), v)
			if err != nil {
				t.Errorf("%s with %q: %v", q, v, err)
				continue
			}
			compareText(t, q+" with "+v, textColumns(res), want)
			res.release()
			if want[0][0] == "0" {
				t.Errorf("PostgreSQL counts no row of %s with %q", q, v)
			}
		}
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT id FROM flights WHERE "+ord+" LIMIT 1 / 0", "22012")
		refusedAsPostgres(t, ctx, cl.c, pg, "SELECT id FROM flights WHERE (SELECT 1 / 0) = 1 AND "+ord, "22012")
		// A full join preserves both sides: ON false reads both, so both need their routes.
		if _, err := run(ctx, cl.c, "SELECT * FROM flights f FULL JOIN flights g ON false"); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "needs origin") {
			t.Errorf("FULL JOIN … ON false: %v, want the missing routes named", err)
		}
	}
	for _, q := range []string{empty[0], empty[4], rows[6]} {
		plan := explainLines(t, clients[0].c, "EXPLAIN "+q)
		if !slices.ContainsFunc(plan, func(l string) bool { return strings.Contains(l, "make an empty route") }) {
			t.Errorf("EXPLAIN %s does not say its reads' routes are empty:\n%s", q, strings.Join(plan, "\n"))
		}
	}
}

// TestSetStatements (issue 18): the SET and RESET statements drivers and BI tools send when
// they connect are answered as PostgreSQL answers them when they keep the semantics every
// flightsrv statement has (no rows, an update count of 0, on the query, update, prepared and
// poll paths), and refused naming the setting (0A000) when they would change them; the value is
// never echoed. SHOW answers PostgreSQL's text of the settings (compared with a UTC session).
func TestSetStatements(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	cl := dial(t, e.on)
	// Before the SETs below change the oracle's session (RESET ALL: its server's zone).
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SHOW TimeZone", "SHOW DateStyle", "SHOW IntervalStyle", "SHOW extra_float_digits", "SHOW statement_timeout",
		"SHOW transaction isolation level", "SHOW standard_conforming_strings",
		// current_setting reads the same settings (Metabase's and Grafana's probes).
		"SELECT current_setting('TimeZone'), current_setting('datestyle'), current_setting('IntervalStyle')",
		"SELECT current_setting('standard_conforming_strings'), current_setting('integer_datetimes'), current_setting('server_encoding')",
		"SELECT current_setting('no_such_setting', true) IS NULL, current_setting('max_identifier_length')::int + 1",
	)...)
	if _, err := run(ctx, cl, "SELECT current_setting('no_such_setting')"); statusSQLState(err) != "42704" {
		t.Errorf("current_setting of an unknown setting: %v (SQLSTATE %q), want PostgreSQL's 42704", err, statusSQLState(err))
	}
	// extra_float_digits 1 (PostgreSQL's default) to 3 print floats shortest-exact, as flightsrv
	// does, which is why SET extra_float_digits = 3 (pgjdbc's) changes nothing.
	for _, d := range []string{"1", "3"} {
		if _, err := pg.Exec(ctx, "SET extra_float_digits = "+d); err != nil {
			t.Fatal(err)
		}
		comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
			"SELECT (0.1::float8 + 0.2::float8)::text, 1e100::float8::text, (1::float8 / 3)::text, 1.5e-7::float4::text, (2::float4 / 3)::text, 123456789012::float4::text",
		)...)
	}
	accepted := []string{
		"SET TimeZone = 'UTC'", "SET TIME ZONE 'Etc/UTC'", "SET TIME ZONE LOCAL", "RESET TimeZone",
		"SET application_name = 'Metabase'", "SET IntervalStyle = 'postgres'", "SET DateStyle = 'ISO, MDY'",
		"SET DateStyle = ISO", "SET extra_float_digits = 3", "SET statement_timeout = 0", "SET search_path = public",
		"SET search_path TO DEFAULT", "SET SESSION client_encoding = 'UTF8'", "RESET ALL",
	}
	for _, q := range accepted {
		if _, err := pg.Exec(ctx, q); err != nil {
			t.Fatalf("PostgreSQL %s: %v", q, err)
		}
		res, err := run(ctx, cl, q)
		if err != nil || len(textColumns(res)) != 0 || res.infoSchema.NumFields() != 0 {
			t.Errorf("%s as a query: %v; want no columns and no rows", q, err)
		}
		if res != nil {
			res.release()
		}
		if n, err := cl.ExecuteUpdate(ctx, q); err != nil || n != 0 {
			t.Errorf("%s as an update: %d, %v; want 0", q, n, err)
		}
		stmt, err := cl.Prepare(ctx, q)
		if err != nil {
			t.Errorf("prepare %s: %v", q, err)
			continue
		}
		if n, err := stmt.ExecuteUpdate(ctx); err != nil || n != 0 {
			t.Errorf("%s prepared, as an update: %d, %v; want 0", q, n, err)
		}
		stmt.Close(ctx)
	}
	// Polled (PollFlightInfo): one endpoint of no rows, or the refusal.
	res, err := fetch(ctx, cl, pollToEnd(t, cl, "SET TimeZone = 'UTC'").GetInfo())
	if err != nil || len(textColumns(res)) != 0 {
		t.Errorf("SET TimeZone = 'UTC' polled: %v; want no rows", err)
	}
	if _, err := cl.ExecutePoll(ctx, "SET TimeZone = 'America/Chicago'", nil); status.Code(err) != codes.Unimplemented || !strings.Contains(err.Error(), "SET TimeZone") {
		t.Errorf("SET TimeZone = 'America/Chicago' polled: %v, want UNIMPLEMENTED naming it", err)
	}
	refused := map[string]string{
		"SET TimeZone = 'America/Chicago'": "SET TimeZone",
		"SET TIME ZONE 'GMT'":              "SET TimeZone", // to_char's TZ would be GMT
		"SET IntervalStyle = 'iso_8601'":   "SET IntervalStyle",
		"SET DateStyle = 'German, DMY'":    "SET DateStyle",
		"SET extra_float_digits = 0":       "SET extra_float_digits",
		"SET statement_timeout = '5s'":     "SET statement_timeout",
		"SET search_path = sekrit":         "SET search_path",
		"SET work_mem = '64MB'":            "SET of this parameter",
		"SET TRANSACTION READ ONLY":        "SET TRANSACTION",
	}
	for q, msg := range refused {
		for what, err := range map[string]error{
			"query":  func() error { _, err := run(ctx, cl, q); return err }(),
			"update": func() error { _, err := cl.ExecuteUpdate(ctx, q); return err }(),
		} {
			m := status.Convert(err).Message()
			if status.Code(err) != codes.Unimplemented || !strings.Contains(m, msg) || strings.Contains(m, "sekrit") || strings.Contains(m, "Chicago") {
				t.Errorf("%s as %s: %v, want UNIMPLEMENTED naming %q and no value", q, what, err, msg)
			}
		}
	}
	for _, q := range []string{"SET extra_float_digits = 4", "SET extra_float_digits = 'abc'"} {
		if _, err := pg.Exec(ctx, q); err == nil || !strings.Contains(err.Error(), "22023") {
			t.Errorf("PostgreSQL %s: %v, want 22023", q, err)
		}
		if _, err := run(ctx, cl, q); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `parameter "extra_float_digits"`) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT (PostgreSQL's 22023)", q, err)
		}
	}
}
