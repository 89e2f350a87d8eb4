package substrait_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

func insertCatalog(tb testing.TB) substrait.Catalog {
	tb.Helper()
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2})
	if err != nil {
		tb.Fatal(err)
	}
	return cat
}

// TestInsertLiterals: literal rows in any column order become records with the literal
// values, times parsed as PostgreSQL reads a TIMESTAMPTZ literal (a fraction rounded to
// microseconds).
func TestInsertLiterals(t *testing.T) {
	cat := insertCatalog(t)
	ins, err := substrait.PrepareInsert(`INSERT INTO public.Messages (id, value, timestamp, channel_id) VALUES
		('a', '{"x":1}', '2026-01-02 03:04:05.123456+02', 'general'),
		('b', '{}'::jsonb, TIMESTAMPTZ '2026-01-02T00:00:00Z', 'ops'),
		('c', '{}', '2026-12-05 12:00:00.1234567+00', 'ops'),
		('d', '{}', '2026-12-05 12:03:00.9999995+00', 'ops')`, cat)
	if err != nil {
		t.Fatal(err)
	}
	if ins.Table().Name != "messages" || ins.Rows() != 4 || ins.ParameterSchema().NumFields() != 0 {
		t.Fatalf("table %s rows %d params %s", ins.Table().Name, ins.Rows(), ins.ParameterSchema())
	}
	recs, err := ins.Records(nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []routing.Record{
		{PartitionKey: []byte("general"), EventTime: time.Date(2026, 1, 2, 1, 4, 5, 123456000, time.UTC), SortKey: []byte("a"), Value: []byte(`{"x":1}`)},
		{PartitionKey: []byte("ops"), EventTime: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), SortKey: []byte("b"), Value: []byte(`{}`)},
		// Rounded to microseconds as PostgreSQL's timestamptz_in rounds (.123457, 12:03:01).
		{PartitionKey: []byte("ops"), EventTime: time.Date(2026, 12, 5, 12, 0, 0, 123457000, time.UTC), SortKey: []byte("c"), Value: []byte(`{}`)},
		{PartitionKey: []byte("ops"), EventTime: time.Date(2026, 12, 5, 12, 3, 1, 0, time.UTC), SortKey: []byte("d"), Value: []byte(`{}`)},
	}
	for i := range want {
		g, w := recs[i], want[i]
		if string(g.PartitionKey) != string(w.PartitionKey) || !g.EventTime.Equal(w.EventTime) || string(g.SortKey) != string(w.SortKey) || string(g.Value) != string(w.Value) {
			t.Fatalf("record %d = %+v, want %+v", i, g, w)
		}
	}
}

// TestInsertLengthCasts: a literal cast to varchar(n), char(n) or bpchar is stored in the text
// column as PostgreSQL's explicit cast and assignment leave it ('abcdef'::varchar(3) is abc,
// 'general  '::char(20) and 'ops '::bpchar lose their trailing spaces, 'xyzzy'::char(2) is
// xy); a length out of range is 22023.
func TestInsertLengthCasts(t *testing.T) {
	cat := insertCatalog(t)
	ins, err := substrait.PrepareInsert(`INSERT INTO messages VALUES
		('general  '::char(20), '2026-01-02T00:00:00Z', 'abcdef'::varchar(3), 'v'),
		('ops '::bpchar, '2026-01-02T00:00:00Z', 'xyzzy'::character(2), 'ü  '::char(2))`, cat)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ins.Records(nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := [][3]string{{"general", "abc", "v"}, {"ops", "xy", "ü"}}
	for i, w := range want {
		if g := recs[i]; string(g.PartitionKey) != w[0] || string(g.SortKey) != w[1] || string(g.Value) != w[2] {
			t.Errorf("record %d = %q %q %q, want %q", i, g.PartitionKey, g.SortKey, g.Value, w)
		}
	}
	for _, q := range []string{`INSERT INTO messages VALUES ('g', '2026-01-02', 'i'::char(0), 'v')`, `INSERT INTO messages VALUES ('g', '2026-01-02', 'i'::varchar(10485761), 'v')`} {
		if _, err := substrait.PrepareInsert(q, cat); err == nil || !strings.Contains(err.Error(), "length for type") {
			t.Errorf("%s: %v, want 22023 length for type …", q, err)
		}
	}
}

// TestInsertParameters: $n and ? parameters, a parameter used in two rows, typed by their
// column; each parameter row binds every VALUES row once.
func TestInsertParameters(t *testing.T) {
	cat := insertCatalog(t)
	ins, err := substrait.PrepareInsert(`INSERT INTO messages (channel_id, timestamp, id, value) VALUES (?, ?, ?, ?)`, cat)
	if err != nil {
		t.Fatal(err)
	}
	ps := ins.ParameterSchema()
	if ps.NumFields() != 4 || ps.Field(1).Type.ID() != arrow.TIMESTAMP || ps.Field(0).Type.ID() != arrow.STRING || ps.Field(3).Type.ID() != arrow.STRING {
		t.Fatalf("parameter schema %s", ps)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String},
		{Name: "c", Type: arrow.BinaryTypes.String}, {Name: "d", Type: arrow.BinaryTypes.Binary}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"g", "h"}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"2026-01-01T00:00:00.000001Z", "2026-01-01 01:00"}, nil)
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"1", "2"}, nil)
	b.Field(3).(*array.BinaryBuilder).AppendValues([][]byte{[]byte("v1"), []byte("v2")}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var recs []routing.Record
	for row := range 2 {
		if recs, err = ins.Records(recs, rec, row); err != nil {
			t.Fatal(err)
		}
	}
	if len(recs) != 2 || string(recs[1].PartitionKey) != "h" || !recs[0].EventTime.Equal(time.Date(2026, 1, 1, 0, 0, 0, 1000, time.UTC)) ||
		!recs[1].EventTime.Equal(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)) || string(recs[1].Value) != "v2" {
		t.Fatalf("records %+v", recs)
	}
	// A NULL parameter is PostgreSQL's not_null_violation naming the parameter and its column
	// (trial 32 m4: it was called a type error); nothing of the row is returned.
	nb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer nb.Release()
	nb.Field(0).(*array.StringBuilder).Append("g")
	nb.Field(1).(*array.StringBuilder).Append("2026-01-01")
	nb.Field(2).(*array.StringBuilder).AppendNull()
	nb.Field(3).(*array.BinaryBuilder).Append([]byte("v"))
	nullRec := nb.NewRecordBatch()
	defer nullRec.Release()
	got, err := ins.Records(recs[:0], nullRec, 0)
	var e *substrait.Error
	if !errors.As(err, &e) || e.Code != substrait.InvalidArgument || e.SQLState != "23502" || e.Msg != "parameter $3 is NULL: column id must not be NULL" || len(got) != 0 {
		t.Fatalf("a NULL id: %d records, %v", len(got), err)
	}
	two, err := substrait.PrepareInsert(`INSERT INTO messages VALUES ($1, $2, 'x', $3), ($1, $2, 'y', $3)`, cat)
	if err != nil || two.ParameterSchema().NumFields() != 3 || two.Rows() != 2 {
		t.Fatalf("a parameter in two rows: %v", err)
	}
}

// TestInsertRefusals: every other form is refused by name, with the code clients fall back on.
func TestInsertRefusals(t *testing.T) {
	cat := insertCatalog(t)
	for sql, want := range map[string]struct {
		code substrait.Code
		text string
	}{
		`INSERT INTO messages SELECT * FROM messages`:                                                 {substrait.Unimplemented, "INSERT … SELECT"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i', 'v') ON CONFLICT DO NOTHING`:            {substrait.Unimplemented, "ON CONFLICT"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i', 'v') RETURNING id`:                      {substrait.Unimplemented, "RETURNING"},
		`UPDATE messages SET value = 'x'`:                                                             {substrait.Unimplemented, "UPDATE"},
		`DELETE FROM messages`:                                                                        {substrait.Unimplemented, "DELETE"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i', DEFAULT)`:                               {substrait.Unimplemented, "DEFAULT"},
		`INSERT INTO nosuch VALUES ('g', '2026-01-01', 'i', 'v')`:                                     {substrait.NotFound, "does not exist"},
		`INSERT INTO messages (channel_id, id, value) VALUES ('g', 'i', 'v')`:                         {substrait.InvalidArgument, "each once"},
		`INSERT INTO messages (channel_id, timestamp, id, nope) VALUES ('g', '2026-01-01', 'i', 'v')`: {substrait.InvalidArgument, "does not exist"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i')`:                                        {substrait.InvalidArgument, "has 3 values"},
		`INSERT INTO messages VALUES ('g', NULL, 'i', 'v')`:                                           {substrait.InvalidArgument, "must not be NULL"},
		`INSERT INTO messages VALUES ('g', 'yesterday', 'i', 'v')`:                                    {substrait.Unimplemented, "column timestamp: the special"},
		`INSERT INTO messages VALUES ('g', '2001-13-45', 'i', 'v')`:                                   {substrait.InvalidArgument, "column timestamp: date/time field value out of range"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i', $2)`:                                    {substrait.InvalidArgument, "$1 is missing"},
		`INSERT INTO messages VALUES ($1, $1, 'i', 'v')`:                                              {substrait.InvalidArgument, "different types"},
		`INSERT INTO messages VALUES ('g', '2026-01-01', lower('I'), 'v')`:                            {substrait.Unimplemented, "expressions in VALUES are not supported"},
	} {
		_, err := substrait.PrepareInsert(sql, cat)
		code, ok := substrait.CodeOf(err)
		if !ok || code != want.code || !strings.Contains(err.Error(), want.text) {
			t.Errorf("%s: %v, want code %v with %q", sql, err, want.code, want.text)
		}
	}
	for sql, want := range map[string]bool{
		`SELECT 1`: false,
		`insert into messages values ('a','2026-01-01','b','c')`:      true,
		" \n -- a comment\n /* nested /* comment */ */ InSeRt INTO m": true,
		`INSERTED`:                     false,
		`insert`:                       true,
		`/* unterminated insert`:       false,
		`-- insert`:                    false,
		`EXPLAIN INSERT INTO messages`: false,
		`WITH x AS (SELECT 1) INSERT INTO messages SELECT 1`: false,
	} {
		if got := substrait.IsInsert(sql); got != want {
			t.Errorf("IsInsert(%q) = %v, want %v", sql, got, want)
		}
	}
}

// FuzzInsert runs SQL text through the INSERT front end (substrait.PrepareInsert): no panic, a
// refusal is a planning error (an *Error), and an accepted statement without parameters yields
// exactly one record per VALUES row, each with a partition key and an id.
func FuzzInsert(f *testing.F) {
	for _, s := range []string{
		`INSERT INTO messages (channel_id, timestamp, id, value) VALUES ('g', '2026-01-01T00:00:00Z', 'i', '{}')`,
		`INSERT INTO messages VALUES ($1, $2, $3, $4), ($1, $2, 'b', $4)`,
		`INSERT INTO messages (value, id, timestamp, channel_id) VALUES ('v'::jsonb, 'i', TIMESTAMPTZ '2026-01-01 00:00:00+05:30', 'g')`,
		`INSERT INTO messages SELECT * FROM messages`,
		`INSERT INTO messages VALUES ('g', '2026-01-01', 'i', 'v') ON CONFLICT DO NOTHING`,
		`INSERT INTO flights VALUES (?, ?, ?, ?)`,
	} {
		f.Add(s)
	}
	cat := insertCatalog(f)
	f.Fuzz(func(t *testing.T, sql string) {
		fuzzcount.Add()
		ins, err := substrait.PrepareInsert(sql, cat)
		if err != nil {
			if _, ok := substrait.CodeOf(err); !ok {
				t.Fatalf("refusal %v (%T) is no planning error", err, err)
			}
			return
		}
		if ins.ParameterSchema().NumFields() > 0 {
			return
		}
		recs, err := ins.Records(nil, nil, 0)
		if err != nil {
			if _, ok := substrait.CodeOf(err); !ok {
				t.Fatalf("records: %v (%T) is no planning error", err, err)
			}
			return
		}
		if len(recs) != ins.Rows() {
			t.Fatalf("%d records of %d rows", len(recs), ins.Rows())
		}
		for _, r := range recs {
			if len(r.PartitionKey) == 0 || len(r.SortKey) == 0 {
				t.Fatal("a record without a partition key or id")
			}
		}
	})
}
