package ops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// jsonEdgeDocs are documents at the edges of PostgreSQL's json type: escapes (\/, \", \n,
// \u with BMP characters and surrogate pairs in both cases, in keys too), \u0000 and unpaired
// surrogates (refused), duplicate keys (the last wins), numbers kept as written, nested
// objects and arrays with inner whitespace, JSON null, scalars and arrays at the top level,
// and text that is not JSON (leading zeros, trailing commas, trailing bytes, bare words,
// control characters in strings).
var jsonEdgeDocs = []string{
	`{"a":"x\/y\"z\n","b":12.50,"n":"42","f":"1.5e3"}`,
	`{"a":1,"a":"two","b":{"c": [1, {"d":"e"} ] },"n":-7}`,
	`  {"a" : "\u00e9\uD83D\uDE00" , "a\u0062":"escaped key","n":2147483647}  `,
	`{"a":null,"b":[],"c":{},"n":"2147483648","f":"-0"}`,
	`{"a":true,"b":false,"n":" 5","f":"abc"}`,
	`{"a":{"b":{"c":null}},"n":"0","f":"1e400"}`,
	`{"n":99999999999,"f":1E-3}`,
	`[1,"two",{"a":3},[4]]`,
	`"just a string"`,
	`17`,
	`null`,
	`{"a":"\u0000"}`,
	`{"b":"\ud800","a":1}`,
	`{"a":"\udc00"}`,
	`{"a":01}`,
	`{"a":1,}`,
	`{"a":1}x`,
	`{"a":tru}`,
	"{\"a\":\"tab\tinside\"}",
	``,
	`{"a":[1,2,3],"n":"abc"}`,
	`{"n":"\u00a012","f":"\t-1.5e2\n","b":"99.95"}`,
	`{"n":"-Infinity","b":" inf "}`,
}

// jsonEdgeExpr is a JSON access with constant keys (read column-at-a-time), PostgreSQL's
// spelling over D, and for a cast of ->> the cast's target: "int4", "int8" or "float8".
type jsonEdgeExpr struct {
	sql, cast string
	e         expr.Expression
}

func jsonEdgeExprs() []jsonEdgeExpr {
	d := col(0)
	i32 := &types.Int32Type{Nullability: types.NullabilityNullable}
	f64 := &types.Float64Type{Nullability: types.NullabilityNullable}
	cast := func(e expr.Expression, t types.Type) expr.Expression {
		return &expr.Cast{Type: t, Input: e, FailureBehavior: types.BehaviorThrowException}
	}
	return []jsonEdgeExpr{
		{"D->>'a'", "", own("json_get_text", strOut, d, str("a"))},
		{"D->'a'", "", own("json_get", binOut, d, str("a"))},
		{"D->>'b'", "", own("json_get_text", strOut, d, str("b"))},
		{"D->'b'", "", own("json_get", binOut, d, str("b"))},
		{"D->>'ab'", "", own("json_get_text", strOut, d, str("ab"))},
		{"D->>2", "", own("json_get_text", strOut, d, num(2))},
		{"D->-1", "", own("json_get", binOut, d, num(-1))},
		{"D#>>'{b,c,1,d}'", "", own("json_path_text", strOut, d, str("b"), str("c"), str("1"), str("d"))},
		{"D#>>'{a,b}'", "", own("json_path_text", strOut, d, str("a"), str("b"))},
		{"D#>'{b,c}'", "", own("json_path", binOut, d, str("b"), str("c"))},
		{"D#>>'{2,a}'", "", own("json_path_text", strOut, d, str("2"), str("a"))},
		{"D->>'n'", "int4", cast(own("json_get_text", strOut, d, str("n")), i32)},
		{"D->>'n'", "int8", cast(own("json_get_text", strOut, d, str("n")), i64Out)},
		{"D->>'f'", "float8", cast(own("json_get_text", strOut, d, str("f")), f64)},
		{"D->>'n'", "numeric(10,0)", numCastOf("ROUND", 0, 10, own("json_get_text", strOut, d, str("n")))},
		{"D->>'f'", "numeric(12,2)", numCastOf("ROUND", 2, 12, own("json_get_text", strOut, d, str("f")))},
		{"D->>'b'", "numeric(4,1)", numCastOf("ROUND", 1, 4, own("json_get_text", strOut, d, str("b")))},
		{"D#>>'{b,c,0}'", "numeric(38,3)", numCastOf("ROUND", 3, 38, own("json_path_text", strOut, d, str("b"), str("c"), str("0")))},
	}
}

// compileOver compiles e over schema with sqlfnReg (held by sqlfnMu), failing tb on an error.
func compileOver(tb testing.TB, e expr.Expression, schema *arrow.Schema) *ops.Expr {
	tb.Helper()
	sqlfnMu.Lock()
	defer sqlfnMu.Unlock()
	cx, err := ops.Compile(e, schema, sqlfnReg)
	if err != nil {
		tb.Fatal(err)
	}
	return cx
}

// numCastOf is numeric_cast(mode, places, prec, x), x::numeric(prec, places) for ROUND (the
// binder's cast to numeric).
func numCastOf(mode string, places, prec int, x expr.Expression) expr.Expression {
	out := &types.DecimalType{Precision: 38, Scale: int32(max(places, 0)), Nullability: types.NullabilityNullable}
	return own("numeric_cast", out, types.Enum(mode), types.Enum(strconv.Itoa(places)), types.Enum(strconv.Itoa(prec)), x)
}

// TestJSONFieldsAsPostgres asks PostgreSQL each edge document's fields ($1::json ->> 'a'…)
// and compares the column-at-a-time extraction's answers: the same values (-> as JSON text,
// compared as written), NULLs and error SQLSTATEs. A cast of ->> is compared with
// PostgreSQL's cast of its ->> (int4in, int8in, float8in).
func TestJSONFieldsAsPostgres(t *testing.T) {
	pg := pgSession(t, "SET TIME ZONE 'UTC'")
	ctx := context.Background()
	mem := newMem(t, 0)
	for _, x := range jsonEdgeExprs() {
		sqlfnMu.Lock()
		cx, err := ops.Compile(x.e, sqlfnSchema, sqlfnReg)
		sqlfnMu.Unlock()
		if err != nil {
			t.Fatalf("%s: %v", x.sql, err)
		}
		q := strings.ReplaceAll(x.sql, "D", "$1::json")
		for _, doc := range jsonEdgeDocs {
			want, wantCode := pgJSON(t, ctx, pg, q, doc)
			if x.cast != "" && wantCode == "" && want != "<null>" {
				want, wantCode = pgJSON(t, ctx, pg, "("+q+")::"+x.cast, doc)
			}
			got, gotCode := evalDoc(t, cx, doc, mem)
			if got != want || gotCode != wantCode {
				t.Errorf("(%s)::%s over %q: %q (%s), PostgreSQL %q (%s)", x.sql, x.cast, doc, got, gotCode, want, wantCode)
			}
		}
	}
}

// pgJSON returns PostgreSQL's answer to SELECT q ($1 = doc) as text ("<null>" for NULL), or
// its error's SQLSTATE.
func pgJSON(t *testing.T, ctx context.Context, pg *pgx.Conn, q, doc string) (string, string) {
	t.Helper()
	var v *string
	err := pg.QueryRow(ctx, "SELECT ("+q+")::text", doc).Scan(&v)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		return "", pe.Code
	case err != nil:
		t.Fatal(err)
	case v == nil:
		return "<null>", ""
	}
	if f, err := strconv.ParseFloat(*v, 64); err == nil && strings.ContainsAny(*v, ".eE") && strings.Contains(q, "float8") {
		return strconv.FormatFloat(f, 'g', -1, 64), "" // float8's text in Go's spelling
	}
	return *v, ""
}

// docBatch is a batch of sqlfnSchema whose doc column holds docs (the other columns NULL).
func docBatch(mem memory.Allocator, docs ...string) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, sqlfnSchema)
	defer b.Release()
	for _, d := range docs {
		if d == sqlNullDoc {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.BinaryBuilder).Append([]byte(d))
		}
		for c := 1; c < 4; c++ {
			b.Field(c).AppendNull()
		}
	}
	return b.NewRecordBatch()
}

// sqlNullDoc stands for a SQL NULL document in docBatch's arguments.
const sqlNullDoc = "\x00SQL NULL"

// evalDoc evaluates cx over a one-row batch of doc: its value as text ("<null>") or the
// SQLSTATE of its data exception.
func evalDoc(t *testing.T, cx *ops.Expr, doc string, mem *ledger.Ledger) (string, string) {
	t.Helper()
	batch := docBatch(mem, doc)
	defer batch.Release()
	out, err := cx.Eval(context.Background(), batch, mem)
	if err != nil {
		var de *ops.DataError
		if !errors.As(err, &de) {
			t.Fatalf("%q: %v, not a data exception", doc, err)
		}
		return "", de.SQLState()
	}
	defer out.Release()
	return cellText(out, 0), ""
}

// cellText is row i of a as text, "<null>" for NULL.
func cellText(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "<null>"
	}
	switch v := a.(type) {
	case *array.Binary:
		return string(v.Value(i))
	case *array.String:
		return v.Value(i)
	case *array.Float64:
		return strconv.FormatFloat(v.Value(i), 'g', -1, 64)
	case *array.Decimal128:
		return v.Value(i).ToString(v.DataType().(*arrow.Decimal128Type).Scale)
	}
	return a.ValueStr(i)
}

// numericDocs are documents whose field "x" is text at the edges of numeric_in and of
// numeric(p,s)'s rounding and precision: spaces (ASCII and not), signs, exponents, a bare
// point, NaN and infinities, digits past the fast path's 19, halves to round away from
// zero, escapes, JSON numbers, null and absent fields.
var numericDocs = []string{
	`{"x":"599"}`, `{"x":599}`, `{"x":" -12.345 "}`, `{"x":"+0.005"}`, `{"x":"-0.005"}`,
	`{"x":"1e3"}`, `{"x":1.5E-2}`, `{"x":".5"}`, `{"x":"5."}`, `{"x":"."}`, `{"x":""}`,
	`{"x":"abc"}`, `{"x":"NaN"}`, `{"x":"-Infinity"}`, `{"x":"inf"}`, `{"x":"1e400"}`,
	`{"x":"99999999.995"}`, `{"x":"9999999999"}`, `{"x":"12345678901234567890.5"}`,
	`{"x":"\u0031\u0032.5"}`, `{"x":"\u00a012"}`, `{"x":"1 2"}`, `{"x":"--1"}`,
	`{"x":null}`, `{"y":1}`, `{"x":true}`, `{"x":[1]}`, `{"x":"0.0000000000000000000001"}`,
}

// TestJSONNumericFusedAsRowCast: numeric_cast of a ->> field, fused into the extraction,
// answers what numeric_cast of the same text as a text column answers (the row cast's
// kernel), values and SQLSTATEs, for several roundings (PostgreSQL's own answers over the
// edge documents: TestJSONFieldsAsPostgres).
func TestJSONNumericFusedAsRowCast(t *testing.T) {
	mem := newMem(t, 0)
	text := own("json_get_text", strOut, col(0), str("x"))
	compile := func(e expr.Expression) *ops.Expr { return compileOver(t, e, sqlfnSchema) }
	textX := compile(text)
	for _, rd := range []struct {
		mode         string
		places, prec int
	}{{"ROUND", 0, 10}, {"ROUND", 2, 10}, {"ROUND", 2, 0}, {"TRUNC", 1, 0}, {"FLOOR", -1, 0}, {"CEIL", 20, 38}} {
		fused := compile(numCastOf(rd.mode, rd.places, rd.prec, text))
		row := compile(numCastOf(rd.mode, rd.places, rd.prec, col(1)))
		for _, doc := range numericDocs {
			got, gotCode := evalDoc(t, fused, doc, mem)
			// The row cast's input: the field's text as column s.
			batch := docBatch(mem, doc)
			tx, err := textX.Eval(context.Background(), batch, mem)
			if err != nil {
				t.Fatalf("%s: ->>: %v", doc, err)
			}
			cols := slices.Clone(batch.Columns())
			cols[1] = tx
			rows := array.NewRecordBatch(sqlfnSchema, cols, 1)
			batch.Release()
			tx.Release()
			want, wantCode := "", ""
			out, err := row.Eval(context.Background(), rows, mem)
			rows.Release()
			var de *ops.DataError
			switch {
			case errors.As(err, &de):
				wantCode = de.SQLState()
			case err != nil:
				t.Fatalf("%s: row cast: %v", doc, err)
			default:
				want = cellText(out, 0)
				out.Release()
			}
			if got != want || gotCode != wantCode {
				t.Errorf("numeric_cast(%s,%d,%d) of %s: fused %q (%s), row cast %q (%s)", rd.mode, rd.places, rd.prec, doc, got, gotCode, want, wantCode)
			}
		}
	}
}

// TestJSONFieldsSharedAcrossExpressions: a Project of every edge expression over a batch of
// the edge documents that none of them refuses (one extraction of the column per batch for
// all of them) answers what each expression answers alone on each document, and so does a
// CASE whose branch reads a field on a subset of the rows (its own extraction).
func TestJSONFieldsSharedAcrossExpressions(t *testing.T) {
	mem := newMem(t, 0)
	xs := jsonEdgeExprs()
	var exprs []*ops.Expr
	var names []string
	for i, x := range xs {
		sqlfnMu.Lock()
		cx, err := ops.Compile(x.e, sqlfnSchema, sqlfnReg)
		sqlfnMu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		exprs, names = append(exprs, cx), append(names, fmt.Sprint("c", i))
	}
	var docs []string
	var want [][]string
	for _, d := range jsonEdgeDocs {
		row := make([]string, len(exprs))
		ok := true
		for i, cx := range exprs {
			v, code := evalDoc(t, cx, d, mem)
			ok = ok && code == ""
			row[i] = v
		}
		if ok {
			docs, want = append(docs, d), append(want, row)
		}
	}
	if len(docs) < 5 {
		t.Fatalf("only %d documents are answered by every expression", len(docs))
	}
	// The same rows again in reverse order, after a SQL NULL document (NULL for every
	// expression, as PostgreSQL's strict operators answer) and with one in the middle: a
	// column's first NULL comes before, after and between values.
	nullRow := slices.Repeat([]string{"<null>"}, len(exprs))
	docs, want = append(docs, sqlNullDoc), append(want, nullRow)
	for i := len(docs) - 2; i >= 0; i-- {
		docs, want = append(docs, docs[i]), append(want, want[i])
		if i == len(docs)/4 {
			docs, want = append(docs, sqlNullDoc), append(want, nullRow)
		}
	}
	batch := docBatch(mem, docs...)
	rdr, err := array.NewRecordReader(sqlfnSchema, []arrow.RecordBatch{batch})
	batch.Release()
	if err != nil {
		t.Fatal(err)
	}
	p := ops.Project(context.Background(), rdr, exprs, names, mem)
	defer p.Release()
	row := 0
	for p.Next() {
		rec := p.RecordBatch()
		for r := range int(rec.NumRows()) {
			for c := range exprs {
				if got := cellText(rec.Column(c), r); got != want[row][c] {
					t.Errorf("%s over %q in a Project: %q, alone %q", xs[c].sql, docs[row], got, want[row][c])
				}
			}
			row++
		}
	}
	if err := p.Err(); err != nil || row != len(docs) {
		t.Fatalf("project: %v after %d of %d rows", err, row, len(docs))
	}
}

// FuzzJSONFields compares the column-at-a-time extraction with the per-row reference kept
// from before it (gjson: ops.GJSONRef), over arbitrary documents and keys: ->> and -> of a
// key and of an index, #>> of two keys, and the int4 cast of ->> (strconv's parse of the
// reference's text, as arrow-go's cast), each alone and all in one Project (one shared
// extraction). They agree on every value, NULL and error, except where PostgreSQL's rules
// refuse what gjson accepted: a document with a \u escape may be refused with 22P05
// (\u0000) or 22P02 (an unpaired surrogate).
func FuzzJSONFields(f *testing.F) {
	for _, d := range jsonEdgeDocs {
		f.Add([]byte(d), "a", "b", int64(1))
	}
	f.Add([]byte(`{"k":"\u00e9\ud83d\ude00","k":[null,true,-1e3]}`), "k", "0", int64(-1))
	f.Add([]byte(`[[1,2],{"1":{"x":"7"}}]`), "1", "x", int64(-2))
	f.Add([]byte("  [[1,2],{\"1\":{\"x\":\"7\"}}] \n"), "1", "x", int64(-2)) // whitespace around the document
	// The scanner's plain forms of a top-level member (jsonScanner.top) and their edges:
	// strings of 16 and 17 bytes, at the document's end, with a non-ASCII or invalid byte;
	// integers with a sign, a leading zero, a fraction or an exponent; spaces around ':'.
	f.Add([]byte(`{"abcdefghijklmnop":1,"abcdefghijklmnopq":"0123456789abcdef","a":"0123456789abcdefg","b":"SFO"}`), "a", "b", int64(0))
	f.Add([]byte(`{"a":-0,"b":-12,"c":1}`), "a", "b", int64(0))
	f.Add([]byte(`{"a":-,"b":1}`), "a", "b", int64(0))
	f.Add([]byte(`{"a":-12e1,"b":7.5,"c":7.}`), "a", "b", int64(0))
	f.Add([]byte("{\"a\":\"\xc3\xa9\",\"b\":\"\xff\"}"), "a", "b", int64(0))
	f.Add([]byte(`{"a":1 ,"b" :2,"c": 3,"d"	:	"x" }`), "c", "d", int64(0))
	f.Add([]byte(`{"a":1,"b"}`), "a", "b", int64(0))
	f.Add([]byte(`{"a":12,"b":"x`), "a", "b", int64(0))
	f.Add([]byte(`{"a":12,"b":"x"`), "a", "b", int64(0))
	f.Fuzz(func(t *testing.T, doc []byte, k1, k2 string, idx int64) {
		fuzzcount.Add()
		d := col(0)
		i32 := &types.Int32Type{Nullability: types.NullabilityNullable}
		xs := []struct {
			name  string
			e     expr.Expression
			steps []ops.RefStep
			path  bool
			text  bool
			cast  bool
		}{
			{"->> k1", own("json_get_text", strOut, d, str(k1)), []ops.RefStep{{Key: k1}}, false, true, false},
			{"-> k1", own("json_get", binOut, d, str(k1)), []ops.RefStep{{Key: k1}}, false, false, false},
			{"-> idx", own("json_get", binOut, d, num(idx)), []ops.RefStep{{Index: idx, Idx: true}}, false, false, false},
			{"#>> {k1,k2}", own("json_path_text", strOut, d, str(k1), str(k2)), []ops.RefStep{{Key: k1}, {Key: k2}}, true, true, false},
			{"(->> k2)::int4", &expr.Cast{Type: i32, Input: own("json_get_text", strOut, d, str(k2)), FailureBehavior: types.BehaviorThrowException},
				[]ops.RefStep{{Key: k2}}, false, true, true},
		}
		mem := newMem(t, 0)
		batch := docBatch(mem, string(doc))
		defer batch.Release()
		escapes := strings.Contains(strings.ToLower(string(doc)), `\u`)
		for _, x := range xs {
			sqlfnMu.Lock()
			cx, err := ops.Compile(x.e, sqlfnSchema, sqlfnReg)
			sqlfnMu.Unlock()
			if err != nil {
				t.Fatalf("%s: %v", x.name, err)
			}
			want, wantNull, wantErr := ops.GJSONRef(doc, x.steps, x.path, x.text)
			wantCode := ""
			var de *ops.DataError
			if errors.As(wantErr, &de) {
				wantCode = de.SQLState()
			}
			if x.cast && wantErr == nil && !wantNull {
				v, err := strconv.ParseInt(want, 0, 32)
				switch {
				case errors.Is(err, strconv.ErrRange):
					wantCode = "22003"
				case err != nil:
					wantCode = "22P02"
				default:
					want = strconv.FormatInt(v, 10)
				}
			}
			if wantNull {
				want = "<null>"
			}
			got, gotCode := evalDoc(t, cx, string(doc), mem)
			if escapes && ((gotCode == "22P05" && wantCode != "22021") || (wantCode == "" && gotCode == "22P02")) {
				continue
			}
			if wantCode != "" {
				want = ""
			}
			if got != want || gotCode != wantCode {
				t.Fatalf("%s over %q: %q (%s), reference %q (%s)", x.name, doc, got, gotCode, want, wantCode)
			}
		}
	})
}
