package substrait

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestInvalidUTF8Parameters: the partition column is text (TableSchema: utf8; the loader
// refuses partition bytes that are not UTF-8, TestBinaryPartitionAndID), so a partition
// parameter whose bytes are not UTF-8 — a Go string or []byte, an Arrow utf8 or binary column,
// an element of = ANY($1) — is refused with InvalidArgument, PostgreSQL's
// character_not_in_repertoire (22021) and a message holding none of the bytes, as any text
// parameter is. Valid UTF-8 sent as bytes is the partition of that text; a bytea parameter
// (compared with value) takes any bytes.
func TestInvalidUTF8Parameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const sql = `SELECT count(*) FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3`
	s, err := Prepare(sql, cat)
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte{'g', 0xff, 0xfe, 'x'}
	refused := func(what string, err error) {
		t.Helper()
		e, ok := err.(*Error)
		switch {
		case !ok:
			t.Errorf("%s: %v (%T), want an *Error", what, err, err)
		case e.Code != InvalidArgument || e.Msg != "parameter $1 must be valid UTF-8" || e.SQLState != "22021":
			t.Errorf("%s: %v (code %v, sqlstate %q)", what, e, e.Code, e.SQLState)
		case bytes.Contains([]byte(e.Error()), bad[1:3]) || strings.Contains(e.LogMessage(), "\xff"):
			t.Errorf("%s: the message holds the bytes: %q", what, e.Error())
		}
	}
	_, err = s.Bind(string(bad), jan1, feb1)
	refused("Go string", err)
	_, err = s.Bind(bad, jan1, feb1)
	refused("Go []byte", err)

	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	timestamp := func() arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
		defer b.Release()
		b.Append(arrow.Timestamp(jan1.UnixNano()))
		return b.NewArray()
	}
	end := func() arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"})
		defer b.Release()
		b.Append(arrow.Timestamp(feb1.UnixNano()))
		return b.NewArray()
	}
	for _, dt := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary} {
		b := array.NewBuilder(mem, dt)
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(string(bad))
		case *array.LargeStringBuilder:
			bb.Append(string(bad))
		case *array.BinaryBuilder:
			bb.Append(bad)
		}
		col := b.NewArray()
		b.Release()
		rec := paramRecord(t, mem, col, timestamp(), end())
		_, err := s.BindRecord(rec, 0)
		rec.Release()
		refused("Arrow "+dt.String(), err)
	}

	// Valid UTF-8 as bytes: the partition of that text.
	p, err := s.Bind([]byte("Zürich"), jan1, feb1)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := Routes(p, cat, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if len(r.Partitions) != 1 || string(r.Partitions[0]) != "Zürich" {
			t.Errorf("partitions %q", r.Partitions)
		}
	}

	// = ANY($1): every element is checked.
	anyStmt, err := Prepare(`SELECT count(*) FROM messages WHERE channel_id = ANY($1) AND timestamp >= $2 AND timestamp < $3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	_, err = anyStmt.Bind([]any{"general", string(bad)}, jan1, feb1)
	refused("= ANY element", err)

	// A text parameter that is not the partition is text too.
	idStmt, err := Prepare(`SELECT count(*) FROM messages WHERE id = $1 AND channel_id = 'general' AND timestamp >= $2 AND timestamp < $3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	_, err = idStmt.Bind(bad, jan1, feb1)
	refused("id parameter", err)

	// A NUL byte: PostgreSQL's text cannot hold one (22021 too), whatever the statement does
	// with it (trial26: SELECT ?, length(?), upper(?) answered with the NUL kept); cast to
	// bytea, the text is read by byteain, and NUL is no text either.
	for _, q := range []string{"SELECT $1::text", "SELECT length($1::text)", "SELECT upper($1::text)", "SELECT $1::bytea"} {
		st, err := Prepare(q, cat)
		if err != nil {
			t.Fatal(err)
		}
		_, err = st.BindGeneral(BindOptions{}, "a\x00b")
		if e, ok := err.(*Error); !ok || e.SQLState != "22021" || e.Msg != "parameter $1 must not hold a NUL byte (text cannot hold one)" {
			t.Errorf("%s with a NUL: %v, want 22021", q, err)
		}
	}

	// bytea takes any bytes.
	valStmt, err := Prepare(`SELECT count(*) FROM messages WHERE value = $1 AND channel_id = 'general' AND timestamp >= $2 AND timestamp < $3`, cat)
	if err != nil {
		t.Fatal(err)
	}
	if ft := valStmt.ParameterSchema().Field(0).Type; ft.ID() != arrow.BINARY {
		t.Fatalf("value parameter declared %s, want binary", ft)
	}
	if _, err := valStmt.Bind(bad, jan1, feb1); err != nil {
		t.Errorf("bytea parameter: %v", err)
	}
}
