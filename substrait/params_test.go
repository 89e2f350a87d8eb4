package substrait

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
)

const (
	dollarSQL = `SELECT id FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3 ORDER BY timestamp DESC LIMIT $4`
	qmarkSQL  = `SELECT id FROM messages WHERE channel_id=? AND timestamp>=? AND ?>timestamp ORDER BY timestamp DESC LIMIT ?`
)

func TestParameterSchema(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	want := arrow.NewSchema([]arrow.Field{
		{Name: "$1", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "$2", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "$3", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "$4", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	for _, sql := range []string{dollarSQL, qmarkSQL,
		`SELECT id FROM messages WHERE CAST($1 AS text) = channel_id AND $2::timestamptz <= timestamp AND timestamp < $3::timestamptz ORDER BY timestamp DESC LIMIT $4::int8`,
		// numbering follows the placeholders, not the clause order
		`SELECT id FROM messages WHERE channel_id = ? AND timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC FETCH FIRST ? ROWS ONLY`,
	} {
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		if !s.ParameterSchema().Equal(want) || s.NumParams() != 4 {
			t.Errorf("%q: parameter schema\n%v\nwant\n%v", sql, s.ParameterSchema(), want)
		}
		if got := s.DatasetSchema(); !got.Equal(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}, nil)) {
			t.Errorf("%q: dataset schema %v", sql, got)
		}
		got, err := planShape(t, cat, sql, "general", jan1, feb1, 10)
		if err != nil {
			t.Fatalf("%q: %v", sql, err)
		}
		if want := scanQuery([]outCol{{"id", "id"}}, orderDesc, 10); !sameShape(got, want) {
			t.Errorf("%q: shape %+v, want %+v", sql, got, want)
		}
	}
}

func TestParameterPrepareErrors(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	tests := []struct {
		sql string
		err error
		msg string
	}{
		{`SELECT * FROM messages WHERE channel_id = $1 AND timestamp >= $1 AND timestamp < $2`, nil,
			"parameter $1 is used both as text and as timestamp with time zone"},
		{`SELECT * FROM messages WHERE channel_id = $1 AND timestamp >= $3 AND timestamp < $3`, nil,
			"parameters must be numbered consecutively from $1 ($2 is missing)"},
		{`SELECT * FROM messages WHERE channel_id = $0 AND timestamp >= $1 AND timestamp < $2`, nil,
			"parameter $0 is invalid: parameters are numbered from $1"},
		{`SELECT * FROM messages WHERE channel_id = ? AND timestamp >= $2 AND timestamp < $3`, ErrMixedPlaceholders, ""},
		// value-independent routed checks run at prepare time
		{`SELECT * FROM messages WHERE timestamp >= $1 AND timestamp < $2`, errNeedPart(""), ""},
		{`SELECT * FROM messages WHERE channel_id = $1 AND timestamp < $2`, errNeed("timestamp >= <start>"), ""},
		{`SELECT * FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp >= $3`, errNeed("timestamp < <end>"), ""},
		{`SELECT * FROM messages WHERE channel_id = $1::int4 AND timestamp >= $2 AND timestamp < $3`, nil, "operator does not exist: text = integer"},
		{`SELECT * FROM messages WHERE channel_id = $1 AND timestamp >= $2::int4 AND timestamp < $3`, nil, "operator does not exist: timestamp with time zone >= integer"},
	}
	for _, tt := range tests {
		_, err := Prepare(tt.sql, cat)
		switch {
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%q: got %v, want %v", tt.sql, err, tt.err)
		case tt.err == nil && (err == nil || err.(*Error).Msg != tt.msg || err.(*Error).Code != paramErrCode(tt.msg)):
			t.Errorf("%q: got %v, want %q", tt.sql, err, tt.msg)
		}
	}
}

func TestBindGoValues(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	s, err := Prepare(dollarSQL, cat)
	if err != nil {
		t.Fatal(err)
	}
	paris := time.FixedZone("CET", 3600)
	got, err := planShape(t, cat, dollarSQL, []byte("general"), "2026-01-01T01:00:00+01:00", time.Date(2026, 2, 1, 1, 0, 0, 0, paris), uint8(3))
	if err != nil {
		t.Fatal(err)
	}
	if !sameShape(got, scanQuery([]outCol{{"id", "id"}}, orderDesc, 3)) || got.r.Start.Location() != time.UTC {
		t.Errorf("shape %+v", got)
	}
	tests := []struct {
		args []any
		err  error
		msg  string
	}{
		{[]any{"general", jan1, feb1}, nil, "statement has 4 parameters, 3 values given"},
		{[]any{5, jan1, feb1, 1}, nil, "parameter $1 must be text, got bigint"},
		{[]any{1.5, jan1, feb1, 1}, nil, "parameter $1 must be text, got double precision"},
		{[]any{true, jan1, feb1, 1}, nil, "parameter $1 must be text, got boolean"},
		{[]any{[]any{"g"}, jan1, feb1, 1}, nil, "parameter $1 must be text, got an array"},
		{[]any{"g", []byte("2026-01-01"), feb1, 1}, nil, "parameter $2 must be timestamp with time zone, got bytea"},
		{[]any{"g", jan1, feb1, jan1}, nil, "parameter $4 must be bigint, got timestamp with time zone"},
		{[]any{"g", jan1, feb1, struct{}{}}, nil, "parameter $4 must be bigint, got a value of an unsupported type"},
		{[]any{"g", int64(5), feb1, 1}, nil, "parameter $2 must be timestamp with time zone, got bigint"},
		{[]any{"g", "soon", feb1, 1}, nil, "parameter $2: invalid input syntax for type timestamp with time zone"},
		{[]any{"g", jan1, feb1, "ten"}, nil, "parameter $4: invalid input syntax for type bigint"},
		{[]any{"g", jan1, feb1, uint64(math.MaxUint64)}, nil, "parameter $4 is outside the int64 range"},
		{[]any{"g", jan1, feb1, -1}, ErrNegativeLimit, ""},
	}
	// A string is an untyped literal, read by the parameter type's input function (int8in).
	if got, err := planShape(t, cat, dollarSQL, "general", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", " 10 "); err != nil ||
		!sameShape(got, scanQuery([]outCol{{"id", "id"}}, orderDesc, 10)) {
		t.Errorf("LIMIT bound as the text ' 10 ': %+v, %v", got, err)
	}
	for _, tt := range tests {
		_, err := s.Bind(tt.args...)
		switch {
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%v: got %v, want %v", tt.args, err, tt.err)
		case tt.err == nil && (err == nil || err.(*Error).Msg != tt.msg || err.(*Error).Code != paramErrCode(tt.msg)):
			t.Errorf("%v: got %v, want %q", tt.args, err, tt.msg)
		}
	}
}

func TestBindValueDependentChecks(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	s, err := Prepare(`SELECT count(*) FROM messages WHERE channel_id = $1 AND channel_id = ? AND timestamp >= '2026-01-01' AND timestamp < $2`, cat)
	if err == nil || !errors.Is(err, ErrMixedPlaceholders) {
		t.Fatalf("mixed placeholders: %v", err)
	}
	s, err = Prepare(`SELECT count(*) FROM messages WHERE channel_id = ? AND channel_id = ? AND timestamp >= '2026-01-01' AND timestamp < ?`, cat)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Bind("a", "a", feb1); err != nil {
		t.Errorf("same partition twice: %v", err)
	}
	// Contradictions answer no rows, as PostgreSQL does: the route is Empty.
	for _, args := range [][]any{{"a", "b", feb1}, {"a", "a", jan1}} {
		p, err := s.Bind(args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if rt := onlyRoute(t, p, cat); !rt.Empty || rt.Partitions == nil || len(rt.Partitions) != 0 {
			t.Errorf("%v: route %+v, want an empty one", args, rt)
		}
	}
	// A literal and a parameter partition value conflict only at bind time.
	s, err = Prepare(`SELECT count(*) FROM messages WHERE channel_id = 'a' AND channel_id = $1 AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`, cat)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := s.Bind("b"); err != nil || !onlyRoute(t, p, cat).Empty {
		t.Errorf("literal vs parameter: %v", err)
	}
	if p, err := s.Bind("a"); err != nil || onlyRoute(t, p, cat).Empty {
		t.Errorf("literal and parameter agreeing: %v", err)
	}
	if _, err := FromSQL(dollarSQL, cat); err == nil || err.(*Error).Msg != "statement has 4 parameters, 0 values given" {
		t.Errorf("FromSQL with parameters: %v", err)
	}
}

// paramRecord builds a one-row record with the given arrays as parameter columns.
func paramRecord(t *testing.T, mem memory.Allocator, cols ...arrow.Array) arrow.RecordBatch {
	t.Helper()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: "p", Type: c.DataType(), Nullable: true}
	}
	rec := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, int64(cols[0].Len()))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func TestBindRecordCoercion(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	cat := testCatalog(t)
	s, err := Prepare(qmarkSQL, cat)
	if err != nil {
		t.Fatal(err)
	}
	str := func(dt arrow.DataType, v string) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(v)
		case *array.LargeStringBuilder:
			bb.Append(v)
		case *array.StringViewBuilder:
			bb.Append(v)
		case *array.BinaryBuilder:
			bb.AppendString(v)
		case *array.BinaryDictionaryBuilder:
			if err := bb.AppendString(v); err != nil {
				t.Fatal(err)
			}
		}
		return b.NewArray()
	}
	ts := func(unit arrow.TimeUnit, tz string, t0 time.Time) arrow.Array {
		b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: unit, TimeZone: tz})
		defer b.Release()
		v, _ := arrow.TimestampFromTime(t0, unit)
		b.Append(v)
		return b.NewArray()
	}
	integer := func(dt arrow.DataType, v int64) arrow.Array {
		b := array.NewBuilder(mem, dt)
		defer b.Release()
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(v))
		case *array.Int16Builder:
			bb.Append(int16(v))
		case *array.Int32Builder:
			bb.Append(int32(v))
		case *array.Int64Builder:
			bb.Append(v)
		case *array.Uint8Builder:
			bb.Append(uint8(v))
		case *array.Uint32Builder:
			bb.Append(uint32(v))
		case *array.Uint64Builder:
			bb.Append(uint64(v))
		}
		return b.NewArray()
	}
	date32 := func(t0 time.Time) arrow.Array {
		b := array.NewDate32Builder(mem)
		defer b.Release()
		b.Append(arrow.Date32FromTime(t0))
		return b.NewArray()
	}
	time64 := func(t0 time.Time) arrow.Array {
		b := array.NewTime64Builder(mem, &arrow.Time64Type{Unit: arrow.Nanosecond})
		defer b.Release()
		b.Append(arrow.Time64(t0.UnixNano()))
		return b.NewArray()
	}
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	ok := []struct {
		name string
		cols func() []arrow.Array
	}{
		{"utf8, ns UTC, int64", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "general"), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}},
		{"large_utf8, us zone-less, int8", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.LargeString, "general"), ts(arrow.Microsecond, "", jan1), ts(arrow.Millisecond, "America/New_York", feb1), integer(arrow.PrimitiveTypes.Int8, 10)}
		}},
		{"string_view, s, date32, uint32", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.StringView, "general"), ts(arrow.Second, "", jan1), date32(feb1), integer(arrow.PrimitiveTypes.Uint32, 10)}
		}},
		{"dictionary, uint8", func() []arrow.Array {
			return []arrow.Array{str(dict, "general"), ts(arrow.Nanosecond, "", jan1), ts(arrow.Nanosecond, "", feb1), integer(arrow.PrimitiveTypes.Uint8, 10)}
		}},
		// ADBC binds a Python str as utf8, JDBC a setString as utf8 too.
		{"ISO 8601 text in utf8, large_utf8", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "general"), str(arrow.BinaryTypes.String, jan1.Format(time.RFC3339Nano)),
				str(arrow.BinaryTypes.LargeString, "2026-02-01 01:00:00+01:00"), integer(arrow.PrimitiveTypes.Int64, 10)}
		}},
		// arrow-go's database/sql driver binds time.Time as time64[ns] holding UnixNano.
		{"time64[ns] epoch nanoseconds", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "general"), time64(jan1), time64(feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}},
	}
	for _, tt := range ok {
		rec := paramRecord(t, mem, tt.cols()...)
		p, err := s.BindRecord(rec, 0)
		rec.Release()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got, err := shapeOf(t, cat, s, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := scanQuery([]outCol{{"id", "id"}}, orderDesc, 10); !sameShape(got, want) {
			t.Errorf("%s: shape %+v, want %+v", tt.name, got, want)
		}
	}
	nullStr := func() arrow.Array {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		b.AppendNull()
		return b.NewArray()
	}
	bad := []struct {
		name string
		cols func() []arrow.Array
		msg  string
	}{
		{"int for the partition", func() []arrow.Array {
			return []arrow.Array{integer(arrow.PrimitiveTypes.Int64, 1), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}, "parameter $1 must be text, got bigint"},
		{"text that is no timestamp", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g"), str(arrow.BinaryTypes.String, "soon"), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}, "parameter $2: invalid input syntax for type timestamp with time zone"},
		{"binary for a timestamp", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g"), str(arrow.BinaryTypes.Binary, "2026-01-01"), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}, "parameter $2 must be timestamp with time zone, got bytea"},
		{"timestamp for the limit", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g"), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), ts(arrow.Nanosecond, "UTC", feb1)}
		}, "parameter $4 must be bigint, got timestamp with time zone"},
		{"seconds beyond the ns range", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g"), ts(arrow.Second, "", time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC)), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)}
		}, "parameter $2 is outside the nanosecond timestamp range"},
		{"uint64 beyond int64", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g"), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Uint64, -1)}
		}, "parameter $4 is outside the int64 range"},
		{"too few columns", func() []arrow.Array {
			return []arrow.Array{str(arrow.BinaryTypes.String, "g")}
		}, "statement has 4 parameters, 1 parameter columns given"},
	}
	// A NULL partition value or time bound (a null slot, or Arrow's null type: pyarrow's and
	// ADBC's None) is bound as a NULL of the parameter's type: channel_id = NULL and
	// timestamp >= NULL pass no row, as in PostgreSQL, so the read is an Empty route.
	for name, cols := range map[string][]arrow.Array{
		"a NULL partition":  {nullStr(), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)},
		"a NULL time bound": {str(arrow.BinaryTypes.String, "g"), array.NewNull(1), ts(arrow.Nanosecond, "UTC", feb1), integer(arrow.PrimitiveTypes.Int64, 10)},
		"a NULL LIMIT":      {str(arrow.BinaryTypes.String, "g"), ts(arrow.Nanosecond, "UTC", jan1), ts(arrow.Nanosecond, "UTC", feb1), array.NewNull(1)},
	} {
		rec := paramRecord(t, mem, cols...)
		b, err := s.BindGeneralRecord(BindOptions{}, rec, 0)
		rec.Release()
		switch {
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case len(b.Routes) != 1 || b.Routes[0].Empty != (name != "a NULL LIMIT"):
			t.Errorf("%s: routes %+v", name, b.Routes)
		}
	}
	for _, tt := range bad {
		rec := paramRecord(t, mem, tt.cols()...)
		_, err := s.BindRecord(rec, 0)
		rec.Release()
		if err == nil || err.(*Error).Msg != tt.msg || err.(*Error).Code != paramErrCode(tt.msg) {
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.msg)
		}
	}
	rec := paramRecord(t, mem, ok[0].cols()...)
	defer rec.Release()
	if _, err := s.BindRecord(rec, 1); err == nil || err.(*Error).Msg != "parameter row 1 does not exist" {
		t.Errorf("row out of range: %v", err)
	}
	noParams, err := Prepare(`SELECT * FROM messages`+routedWhere, cat)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noParams.BindRecord(nil, 0); err != nil {
		t.Errorf("nil record without parameters: %v", err)
	}
}

func TestExplainStatement(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	s, err := Prepare(`EXPLAIN `+seedSQL, cat)
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsExplain() || !s.DatasetSchema().Equal(ExplainSchema) {
		t.Fatalf("explain statement: %v %v", s.IsExplain(), s.DatasetSchema())
	}
	p, err := s.Bind()
	if err != nil {
		t.Fatal(err)
	}
	want := `Root [count]
  Aggregate [count(*)]
    Filter channel_id = <value> AND timestamp >= <value> AND timestamp < <value>
      Read messages [channel_id, timestamp, id, value]
`
	if got := Explain(p); got != want {
		t.Errorf("Explain:\n%s\nwant\n%s", got, want)
	}
	if s.SQL() != `EXPLAIN `+seedSQL {
		t.Errorf("SQL() = %q", s.SQL())
	}
	_ = routing.TimeRange{}
}

// onlyRoute returns the route of p's one routed read.
func onlyRoute(t *testing.T, p *plan.Plan, cat Catalog) Route {
	t.Helper()
	routes, err := Routes(p, cat, false)
	if err != nil || len(routes) != 1 {
		t.Fatalf("routes %v: %v", routes, err)
	}
	for _, r := range routes {
		return r
	}
	return Route{}
}

// TestExplainJoin: a join prints its type and condition over both sides' column names, no
// literal of the query.
func TestExplainJoin(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	s, err := Prepare(`SELECT count(*) FROM messages a JOIN messages b ON a.id = b.id AND a.timestamp < b.timestamp WHERE a.channel_id = 'sekrit' AND b.channel_id = 'sekrit' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-02-01' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01' AND a.id NOT IN (SELECT 'sekrit')`, cat)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Bind()
	if err != nil {
		t.Fatal(err)
	}
	got := Explain(p)
	for _, want := range []string{
		"Join left_anti on ",
		"Join inner on id = id AND timestamp < timestamp",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Explain lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sekrit") {
		t.Errorf("Explain quotes a literal:\n%s", got)
	}
}

// TestLimitCastParameter: LIMIT ?::int (and int2, CAST(? AS int), OFFSET ?::int) prepares with
// an int4/int2 parameter and binds as PostgreSQL's int4in/int2in reads the value ("2" and 2
// answer; "2.5" is 22P02, a value past int4 22003), trial24's D5.
func TestLimitCastParameter(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	const head = `SELECT id FROM messages WHERE channel_id = ? AND timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC `
	for _, tail := range []string{`LIMIT ?::int`, `LIMIT CAST(? AS integer)`, `LIMIT ?::int2`, `LIMIT ?::int8`} {
		sql := head + tail
		// Every integer parameter is declared int64 (paramArrowType); the value is read as
		// the cast's type at bind time.
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", tail, err)
		}
		if got := s.ParameterSchema().Field(3).Type; !arrow.TypeEqual(got, arrow.PrimitiveTypes.Int64) {
			t.Errorf("%s: parameter type %v", tail, got)
		}
		for _, v := range []any{"2", 2, int32(2)} {
			got, err := planShape(t, cat, sql, "general", jan1, feb1, v)
			if err != nil || got.limit != 2 {
				t.Errorf("%s bound %#v: limit %d, %v", tail, v, got.limit, err)
			}
		}
		if _, err := planShape(t, cat, sql, "general", jan1, feb1, "2.5"); err == nil || err.(*Error).SQLState != "22P02" {
			t.Errorf("%s bound '2.5': %v, want 22P02", tail, err)
		}
		if _, err := planShape(t, cat, sql, "general", jan1, feb1, "-1"); !errors.Is(err, ErrNegativeLimit) {
			t.Errorf("%s bound '-1': %v", tail, err)
		}
	}
	if _, err := planShape(t, cat, head+`LIMIT ?::int`, "general", jan1, feb1, "99999999999"); err == nil || err.(*Error).SQLState != "22003" {
		t.Errorf("LIMIT ?::int past int4: %v, want 22003", err)
	}
	if got, err := planShape(t, cat, head+`LIMIT 5 OFFSET ?::int`, "general", jan1, feb1, "3"); err != nil || got.limit != 5 {
		t.Errorf("OFFSET ?::int: limit %d, %v", got.limit, err)
	}
}

// TestDateTruncUnitParameter: date_trunc(?, timestamp) prepares with a text parameter and
// binds each execution's unit as the literal would (decades through URNPostgres' date_trunc
// too); a unit PostgreSQL does not know, or a value that is not text, is refused at bind.
func TestDateTruncUnitParameter(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, sql := range []string{
		`SELECT date_trunc(?, timestamp) AS t, count(*) FROM messages` + routedWhere + ` GROUP BY 1`,
		`SELECT date_trunc(?::text, timestamp) AS t FROM messages` + routedWhere,
	} {
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := s.ParameterSchema().Field(0).Type; !arrow.TypeEqual(got, arrow.BinaryTypes.String) {
			t.Errorf("%s: parameter type %v", sql, got)
		}
		for _, unit := range []string{"day", "Month", "decade"} {
			if _, err := s.Bind(unit); err != nil {
				t.Errorf("%s bound %q: %v", sql, unit, err)
			}
		}
		if _, err := s.Bind("fortnight"); err == nil {
			t.Errorf("%s bound 'fortnight': no error", sql)
		}
		if _, err := s.Bind(5); err == nil || err.(*Error).Msg != "parameter $1 must be text, got bigint" {
			t.Errorf("%s bound 5: %v", sql, err)
		}
	}
}

// TestIntervalParameter: an interval parameter (`? + interval '3 hours'`, `?::interval`,
// timestamp + ?::interval) is declared utf8 and binds text (read by interval_in) or an Arrow
// month_day_nano interval; text interval_in refuses, an interval finer than a microsecond
// and a value of another type are refused at bind.
func TestIntervalParameter(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, sql := range []string{
		`SELECT ? + interval '3 hours'`,
		`SELECT ?::interval`,
		`SELECT timestamp + ?::interval FROM messages` + routedWhere,
	} {
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if got := s.ParameterSchema().Field(0).Type; !arrow.TypeEqual(got, arrow.BinaryTypes.String) {
			t.Errorf("%s: parameter type %v", sql, got)
		}
		for _, v := range []any{"1 day 2 hours", arrow.MonthDayNanoInterval{Months: 1, Days: 2, Nanoseconds: 3000}} {
			if _, err := s.BindGeneral(BindOptions{}, v); err != nil {
				t.Errorf("%s bound %v: %v", sql, v, err)
			}
		}
		for v, want := range map[any]string{
			"bogus": "parameter $1: invalid input syntax for type interval",
			arrow.MonthDayNanoInterval{Nanoseconds: 1}: "parameter $1: an interval finer than a microsecond (PostgreSQL's resolution) is not accepted",
			5: "parameter $1 must be interval, got bigint",
		} {
			if _, err := s.BindGeneral(BindOptions{}, v); err == nil || err.(*Error).Msg != want {
				t.Errorf("%s bound %v: %v, want %q", sql, v, err, want)
			}
		}
	}
}

// TestLikeEscapeParameters: LIKE ? ESCAPE '!' and LIKE '…' ESCAPE ? prepare (the `?` before
// ESCAPE is a placeholder) and bind each execution's pattern and escape through like_escape:
// an escape of two characters is PostgreSQL's 22025.
func TestLikeEscapeParameters(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for sql, bad := range map[string]string{
		`SELECT id FROM messages` + routedWhere + ` AND id LIKE ? ESCAPE '!'`:    "",
		`SELECT id FROM messages` + routedWhere + ` AND id LIKE 'a!_%' ESCAPE ?`: "!!",
	} {
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if _, err := s.BindGeneral(BindOptions{}, "!"); err != nil {
			t.Errorf("%s bound: %v", sql, err)
		}
		if bad != "" {
			if _, err := s.BindGeneral(BindOptions{}, bad); err == nil || err.(*Error).SQLState != "22025" {
				t.Errorf("%s bound %q: %v, want 22025", sql, bad, err)
			}
		}
	}
}

// TestDateBinStrideParameter: date_bin(?::interval, ts, origin) (and an untyped `?`, which
// date_bin types interval) binds each execution's stride, with date_bin's refusals of a
// stride with months or not positive.
func TestDateBinStrideParameter(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for _, sql := range []string{
		`SELECT date_bin(?::interval, timestamp, timestamp '2001-01-01') AS b, count(*) FROM messages` + routedWhere + ` GROUP BY 1`,
		`SELECT date_bin(?, timestamp, timestamp '2001-01-01') AS b FROM messages` + routedWhere,
		// A constant source; the stride as DeclareParameterTypes declares a bound interval.
		`SELECT date_bin(($1::interval)::interval, timestamptz '2001-04-01 10:17+00', timestamptz '2001-01-01')`,
	} {
		s, err := Prepare(sql, cat)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		for _, v := range []any{"15 minutes", "1 day", arrow.MonthDayNanoInterval{Days: 1, Nanoseconds: 3000}} {
			if _, err := s.BindGeneral(BindOptions{}, v); err != nil {
				t.Errorf("%s bound %v: %v", sql, v, err)
			}
		}
		for v, want := range map[any]string{
			"1 month": errBinMonths.Msg,
			"0":       "stride must be greater than zero",
			"-1 hour": "stride must be greater than zero",
			5:         "parameter $1 must be interval, got bigint",
		} {
			if _, err := s.BindGeneral(BindOptions{}, v); err == nil || err.(*Error).Msg != want {
				t.Errorf("%s bound %v: %v, want %q", sql, v, err, want)
			}
		}
	}
}

// paramErrCode is the code of a parameter binding's refusal with message msg: a NULL value
// flightsrv cannot bind yet is a feature it lacks (UNIMPLEMENTED, 0A000); the rest are
// INVALID_ARGUMENT.
func paramErrCode(msg string) Code {
	if strings.HasSuffix(msg, " must not be NULL here") {
		return Unimplemented
	}
	return InvalidArgument
}
