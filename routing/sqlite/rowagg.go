package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	sqlite "modernc.org/sqlite"

	"github.com/flightsrv/flightsrv/routing"
)

// The row-aggregate port (routing.RowAggregator, routing/rowagg.go) on SQLite: a fragment's
// residual filter and partial aggregate run over one bucket's rows as one statement with its
// route (one snapshot per bucket, as every read of this store), JSON members read with
// json_extract. SQLite reads JSON otherwise than the executor (scan/ops/jsonscan.go) in
// several ways, so every row in the range (not only those the filter keeps) is checked and one
// the executor could read differently declines the bucket (the executor then reads its rows
// and answers, or reports the error, itself):
//
//   - The document: SQLite's json_extract accepts JSON5 (unquoted keys, hexadecimal numbers)
//     and does not check UTF-8 or \u escapes, where the executor refuses what is not RFC 8259
//     JSON in UTF-8, \u0000 and unpaired surrogates (as PostgreSQL's json). A document that is
//     not strict JSON (json_valid), not UTF-8 (flightsrv_utf8, a Go function registered with
//     the driver), or holds a \u0000 or any surrogate escape (\uD800–\uDFFF, paired or not)
//     is not read and declines the bucket.
//   - Duplicate keys: json_extract reads the first, the executor (and PostgreSQL's json) the
//     last: a document holding a key the statement reads more than once declines the bucket
//     (without a backslash, a document holding the quoted key more than once anywhere does:
//     a text test; with one, its keys are decoded by json_each and counted).
//   - Text: json_extract answers a JSON number as an SQL number (1e2 as 100.0, -0 as 0),
//     true as 1 and an object minified, where ->> answers their JSON text as written: a member
//     read as text must be a string or null (or absent), else the bucket is declined.
//   - Casts to int4/int8: the executor parses the member's text with its rules; SQLite's CAST
//     takes a prefix (CAST('12abc' AS INTEGER) is 12). A cast member must be an integer or a
//     string whose canonical integer text is itself (CAST(CAST(x AS INTEGER) AS TEXT) =
//     x), and within int4's range for int4, else the bucket is declined.
//   - Text compares, groups and extremes under SQLite's BINARY collation (bytewise, as the
//     executor); integer sums are exact int64 (an overflow fails the statement, which declines
//     the bucket); a float8 sum state (avg of an integer) is answered only for int4 values and
//     groups of at most maxFloatSumRows rows (every running float8 sum exact, as on
//     PostgreSQL: routing/cockroach/rowagg.go).
//
// Time bins (date_trunc groups) are not answered here (routing.ErrNoAggregate): their shapes
// read rows, or are asked through the partial-aggregate port when they are count(*) alone.
// Keys are bound as JSON paths $."key"; a key holding '"', '\' or a control byte is declined.

// maxFloatSumRows bounds the rows of a group whose int4 values are summed into a float8 state
// (see routing/cockroach/rowagg.go): 2^22 values of magnitude at most 2^31 keep every running
// sum within 2^53 in any order.
const maxFloatSumRows = 1 << 22

// maxExactFloat is 2^53.
const maxExactFloat = 1 << 53

// utf8Func is the name of the Go function the statements call to check a document's UTF-8.
const utf8Func = "flightsrv_utf8"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(utf8Func, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case []byte:
			return utf8.Valid(v), nil
		case string:
			return utf8.ValidString(v), nil
		case nil:
			return nil, nil
		}
		return true, nil
	})
}

// rowStatement is a RowAggregate rendered for SQLite: ?1–?5 are the bucket's table id,
// partition key, bucket key and clipped range in microseconds, args the rest.
type rowStatement struct {
	sql      string
	args     []any
	floatSum bool
}

// renderRows renders q; ErrNoAggregate for a shape SQLite does not compute exactly.
func renderRows(q routing.RowAggregate) (*rowStatement, error) {
	st := &rowStatement{}
	param := func(v any) string {
		st.args = append(st.args, v)
		return "?" + strconv.Itoa(5+len(st.args))
	}
	keys := q.Fields()
	paths := map[string]string{}
	var guards []string
	for _, k := range keys {
		if k == "" || strings.ContainsAny(k, "\"\\") || strings.IndexFunc(k, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			return nil, routing.ErrNoAggregate
		}
		paths[k] = param(`$."` + k + `"`)
		// A document without a backslash spells every key as written, so one holding the
		// quoted key at most once holds it at most once as a key (a cheap test, conservative:
		// the same text as a value counts too); others are parsed (json_each decodes keys).
		quoted := param(`"` + k + `"`)
		guards = append(guards, "CASE WHEN instr(r.doc, '\\') = 0 THEN length(r.doc) - length(replace(r.doc, "+quoted+", '')) > length("+quoted+
			") ELSE (SELECT count(*) FROM json_each(r.doc) AS e WHERE e.key = "+param(k)+") > 1 END")
	}
	field := func(k string) string { return "json_extract(r.doc, " + paths[k] + ")" }
	fieldType := func(k string) string { return "json_type(r.doc, " + paths[k] + ")" }
	textGuarded, castGuarded := map[string]bool{}, map[string]bool{}
	var render func(e routing.HotExpr) (string, error)
	render = func(e routing.HotExpr) (string, error) {
		args := make([]string, len(e.Args))
		if e.Op != routing.HotInt4 && e.Op != routing.HotInt8 {
			for i, a := range e.Args {
				s, err := render(a)
				if err != nil {
					return "", err
				}
				args[i] = s
			}
		}
		switch e.Op {
		case routing.HotTime:
			return "r.t", nil
		case routing.HotField:
			if !textGuarded[e.Key] {
				textGuarded[e.Key] = true
				guards = append(guards, "COALESCE("+fieldType(e.Key)+" NOT IN ('text', 'null'), false)")
			}
			return field(e.Key), nil
		case routing.HotInt4, routing.HotInt8:
			if e.Args[0].Op != routing.HotField {
				return "", routing.ErrNoAggregate
			}
			k := e.Args[0].Key
			x := field(k)
			g := "COALESCE(" + fieldType(k) + " NOT IN ('integer', 'text', 'null') OR CAST(CAST(" + x + " AS INTEGER) AS TEXT) IS NOT CAST(" + x + " AS TEXT)"
			if e.Op == routing.HotInt4 {
				g += " OR CAST(" + x + " AS INTEGER) NOT BETWEEN -2147483648 AND 2147483647"
			}
			g += ", false)"
			if !castGuarded[g] {
				castGuarded[g] = true
				guards = append(guards, g)
			}
			return "CAST(" + x + " AS INTEGER)", nil
		case routing.HotText:
			return param(e.Text), nil
		case routing.HotInt:
			return param(e.Int), nil
		case routing.HotBool:
			return param(e.Bool), nil
		case routing.HotEq, routing.HotNe, routing.HotLt, routing.HotLe, routing.HotGt, routing.HotGe:
			op := map[routing.HotOp]string{routing.HotEq: "=", routing.HotNe: "<>", routing.HotLt: "<", routing.HotLe: "<=", routing.HotGt: ">", routing.HotGe: ">="}[e.Op]
			if e.Args[0].IsText() && e.Args[1].IsText() {
				return "((" + args[0] + ") COLLATE BINARY " + op + " (" + args[1] + "))", nil
			}
			if e.Args[0].IsInt() && e.Args[1].IsInt() {
				return "((" + args[0] + ") " + op + " (" + args[1] + "))", nil
			}
		case routing.HotAnd:
			return "(" + strings.Join(args, " AND ") + ")", nil
		case routing.HotOr:
			return "(" + strings.Join(args, " OR ") + ")", nil
		case routing.HotNot:
			return "(NOT " + args[0] + ")", nil
		case routing.HotIsNull:
			return "((" + args[0] + ") IS NULL)", nil
		case routing.HotIsNotNull:
			return "((" + args[0] + ") IS NOT NULL)", nil
		}
		return "", routing.ErrNoAggregate
	}
	parts, err := q.SQL(routing.RowDialect{Render: render, Group: func(g routing.HotExpr, s string, t arrow.DataType) (string, error) {
		switch t.ID() {
		case arrow.INT32, arrow.INT64:
			if g.IsInt() {
				return s, nil
			}
		case arrow.STRING:
			if g.IsText() {
				return s, nil
			}
		}
		return "", routing.ErrNoAggregate
	}, Measure: func(m routing.RowMeasure, arg, fl string, t arrow.DataType) (string, error) {
		switch m.Func {
		case routing.RowSum:
			return "sum(" + arg + ")" + fl, nil
		case routing.RowMin, routing.RowMax:
			fn := "min"
			if m.Func == routing.RowMax {
				fn = "max"
			}
			switch {
			case m.Arg.IsText() && t.ID() == arrow.STRING:
				return fn + "((" + arg + ") COLLATE BINARY)" + fl, nil
			case m.Arg.IsInt() || m.Arg.Op == routing.HotTime && t.ID() == arrow.TIMESTAMP:
				return fn + "(" + arg + ")" + fl, nil
			}
		}
		return "", routing.ErrNoAggregate
	}})
	if err != nil {
		return nil, err
	}
	filter, sel, groupBy, pass := parts.Filter, parts.Select, parts.GroupBy, parts.Pass
	st.floatSum = parts.FloatSum
	bad := "0"
	if len(keys) > 0 {
		guards = append([]string{"r.docbad"}, guards...)
	}
	if len(guards) > 0 {
		bad = "count(*) FILTER (WHERE " + strings.Join(guards, " OR ") + ")"
	}
	rows := `SELECT rec.event_time AS t FROM pulpitum_v4_records AS rec WHERE ` + inRange + ` AND ` + notArchived
	if len(keys) > 0 {
		// doc is the document when the executor would read it as SQLite does, else NULL
		// (and docbad true): no field of a document that is not read is evaluated.
		rows = `SELECT t, CASE WHEN ok THEN raw END AS doc, NOT ok AS docbad FROM (
		SELECT rec.event_time AS t, CAST(rec.value AS TEXT) AS raw,
			` + utf8Func + `(rec.value) AND json_valid(CAST(rec.value AS TEXT))
			AND instr(CAST(rec.value AS TEXT), '\u0000') = 0 AND instr(lower(CAST(rec.value AS TEXT)), '\ud') = 0 AS ok
		FROM pulpitum_v4_records AS rec WHERE ` + inRange + ` AND ` + notArchived + `)`
	}
	var b strings.Builder
	b.WriteString(routeCTE)
	b.WriteString("\nSELECT route.state, route.object_key, route.hot_deleted, route.generation, agg.*\nFROM route LEFT JOIN (\n\tSELECT 1 AS present, ")
	b.WriteString(bad + " AS bad, " + pass + " AS pass")
	for _, s := range sel {
		b.WriteString(",\n\t\t" + s)
	}
	b.WriteString("\n\tFROM (" + rows + ") AS r\n")
	if len(groupBy) > 0 {
		b.WriteString("\tGROUP BY " + strings.Join(groupBy, ", ") + "\n")
		if len(filter) > 0 {
			b.WriteString("\tHAVING " + pass + " > 0 OR " + bad + " > 0\n")
		}
	}
	b.WriteString(") AS agg ON true")
	st.sql = b.String()
	return st, nil
}

// AggregateRows implements the row-aggregate port (routing.RowAggregator; the rules above):
// for each bucket of bs, one statement reads its route and, unless it is archived, q's answer
// over its records in q.Range clipped to it. A bucket holding a record SQLite would read
// otherwise than the executor, or whose statement fails on its data (an integer sum's
// overflow), is Declined. ErrNoAggregate for a shape not answered here, and for every
// request unless Config.RowAggregates is on; other errors as for ScanRange.
func (s *Store) AggregateRows(ctx context.Context, bs []routing.BucketID, q routing.RowAggregate) ([]routing.RowAnswer, error) {
	if !s.rowAggregates {
		return nil, routing.ErrNoAggregate
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	st, err := renderRows(q)
	if err != nil {
		return nil, err
	}
	out := make([]routing.RowAnswer, len(bs))
	for i, b := range bs {
		if out[i], err = s.aggregateRows(ctx, st, b, q); err != nil {
			routing.ReleaseAnswers(out)
			return nil, err
		}
	}
	return out, nil
}

// errOverflow is SQLite's message for an integer sum past int64.
const errOverflow = "integer overflow"

// aggregateRows runs st over b and reads its answer.
func (s *Store) aggregateRows(ctx context.Context, st *rowStatement, b routing.BucketID, q routing.RowAggregate) (routing.RowAnswer, error) {
	const op = "aggregate bucket rows"
	if err := b.Validate(); err != nil {
		return routing.RowAnswer{}, err
	}
	if s.closed.Load() {
		return routing.RowAnswer{}, s.classify(op, errors.New("closed"))
	}
	lo, hi, _ := routing.MicroBounds(q.Range.Intersect(b.Range()), nil, false)
	args := append([]any{b.TableID, b.PartitionKey, b.Key, lo.UnixMicro(), hi.UnixMicro()}, st.args...)
	s.count(ctx)
	rows, err := s.r.QueryContext(ctx, st.sql, args...)
	if err != nil {
		return routing.RowAnswer{}, s.classify(op, err)
	}
	defer rows.Close()
	n := q.Schema.NumFields()
	vals := make([]any, n)
	for i := range n {
		if q.Schema.Field(i).Type.ID() == arrow.STRING {
			vals[i] = new(sql.NullString)
		} else {
			vals[i] = new(sql.NullInt64)
		}
	}
	var (
		state     string
		key       sql.NullString
		deleted   bool
		gen       int64
		present   sql.NullInt64
		bad, pass sql.NullInt64
		ans       routing.RowAnswer
		seen      bool
		bld       *array.RecordBuilder
	)
	defer func() {
		if bld != nil {
			bld.Release()
		}
	}()
	dest := append([]any{&state, &key, &deleted, &gen, &present, &bad, &pass}, vals...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return routing.RowAnswer{}, s.classify(op, err)
		}
		if !seen {
			if ans.Route, err = routeFromRow(state, key, deleted, gen); err != nil {
				return routing.RowAnswer{}, err
			}
			seen = true
		}
		if ans.Route.State == routing.StateArchived || ans.Declined {
			continue
		}
		if bad.Int64 > 0 || st.floatSum && pass.Int64 > maxFloatSumRows {
			ans.Declined = true
			continue
		}
		if !present.Valid || (q.Grouped || len(q.Groups) > 0) && pass.Int64 == 0 {
			continue
		}
		if bld == nil {
			alloc := q.Alloc
			if alloc == nil {
				alloc = memory.DefaultAllocator
			}
			bld = array.NewRecordBuilder(alloc, q.Schema)
		}
		for i := range n {
			if !appendValue(bld.Field(i), vals[i]) {
				ans.Declined = true
				break
			}
		}
	}
	if err := rows.Err(); err != nil {
		if strings.Contains(err.Error(), errOverflow) {
			return routing.RowAnswer{Route: ans.Route, Declined: true}, nil
		}
		return routing.RowAnswer{}, s.classify(op, err)
	}
	if !seen {
		return routing.RowAnswer{}, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	if ans.Route.State == routing.StateArchived || ans.Declined {
		return routing.RowAnswer{Route: ans.Route, Declined: ans.Declined}, nil
	}
	var batches []arrow.RecordBatch
	if bld != nil {
		rec := bld.NewRecordBatch()
		defer rec.Release()
		batches = append(batches, rec)
	}
	r, err := array.NewRecordReader(q.Schema, batches)
	if err != nil {
		return routing.RowAnswer{}, err
	}
	ans.Reader = r
	return ans, nil
}

// appendValue appends one scanned value to b; false when it does not fit b's type exactly.
func appendValue(b array.Builder, v any) bool {
	if p, ok := v.(*sql.NullString); ok {
		if !p.Valid {
			b.AppendNull()
		} else {
			b.(*array.StringBuilder).Append(p.String)
		}
		return true
	}
	p := v.(*sql.NullInt64)
	if !p.Valid {
		b.AppendNull()
		return true
	}
	x := p.Int64
	switch b := b.(type) {
	case *array.Int64Builder:
		b.Append(x)
	case *array.Int32Builder:
		if x < -1<<31 || x >= 1<<31 {
			return false
		}
		b.Append(int32(x))
	case *array.TimestampBuilder:
		if x < -(1<<63)/1000 || x > (1<<63-1)/1000 {
			return false
		}
		b.Append(arrow.Timestamp(x * 1000))
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(x))
	case *array.Float64Builder:
		if x < -maxExactFloat || x > maxExactFloat {
			return false
		}
		b.Append(float64(x))
	default:
		return false
	}
	return true
}
