package substrait

import "testing"

// TestSchemaQualifiedColumns: Metabase's "public"."table"."column" references and
// "public"."table".* bind as table.column does (the routed predicate still routes); another
// schema or a catalog is refused by name.
func TestSchemaQualifiedColumns(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	metabase := `SELECT "public"."messages"."channel_id" AS "channel_id", count(*) AS "count" FROM "public"."messages" ` +
		`WHERE ("public"."messages"."channel_id" = 'general' AND "public"."messages"."timestamp" >= timestamp with time zone '2026-01-01 00:00:00.000Z' ` +
		`AND "public"."messages"."timestamp" < timestamp with time zone '2026-02-01 00:00:00.000Z') ` +
		`GROUP BY "public"."messages"."channel_id" ORDER BY "public"."messages"."channel_id" ASC`
	for _, sql := range []string{metabase, `SELECT "public"."messages".* FROM "public"."messages"` + routedWhere} {
		st, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		p, err := st.Bind()
		if err != nil {
			t.Fatal(err)
		}
		routes, err := Routes(p, cat, false)
		if err != nil || len(routes) != 1 {
			t.Fatalf("%s: routes %v, %v", sql, routes, err)
		}
		for _, r := range routes {
			if len(r.Partitions) != 1 || string(r.Partitions[0]) != "general" || !r.Range.Start.Equal(jan1) || !r.Range.End.Equal(feb1) {
				t.Errorf("%s: route %+v", sql, r)
			}
		}
	}
	// Under another schema no FROM item matches: PostgreSQL's 42P01.
	if _, err := Prepare(`SELECT other.messages.id FROM messages`+routedWhere, cat); err == nil || err.(*Error).SQLState != "42P01" {
		t.Errorf("other.messages.id: %v, want 42P01", err)
	}
	if _, err := Prepare(`SELECT db.public.messages.id FROM messages`+routedWhere, cat); err == nil || err.(*Error).Code != Unimplemented {
		t.Errorf("db.public.messages.id: %v, want UNIMPLEMENTED", err)
	}
}
