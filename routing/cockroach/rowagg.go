package cockroach

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/flightsrv/flightsrv/routing"
)

// The row-aggregate port (routing.RowAggregator, routing/rowagg.go): a fragment's residual
// filter and partial aggregate run over one bucket's rows as its one statement, the route
// read in the same statement (one snapshot) as for every other read:
//
//	WITH route AS (…) SELECT route…, agg.* FROM route LEFT JOIN LATERAL (
//	    SELECT true, <guard count>, <filter count>, <groups>, <measures>
//	    FROM pulpitum_v4_records AS rec
//	    CROSS JOIN LATERAL json_to_record(convert_from(rec.value, 'UTF8')::json) AS j("delay" text, …)
//	    WHERE route.state <> 'archived' AND <the bucket's key range>
//	    GROUP BY <groups>) AS agg ON true
//
// Only PostgreSQL answers: CockroachDB's JSON is jsonb, which rewrites numbers (1e2 reads
// back as 100) and so could differ from the executor's text; CockroachDB declines
// (routing.ErrNoAggregate) and the executor reads rows. Exactness, rule by rule, against the
// executor (scan/ops/jsonfields.go, scan/aggregate):
//
//   - JSON members are read with the json type (not jsonb), whose processing functions keep a
//     number's text as written and let the last of duplicate keys count, as the executor's
//     scanner does; json_to_record extracts every member the statement reads in one parse
//     (measured on PostgreSQL 15: about 4× faster than one jsonb conversion per ->>).
//     A document that is not UTF-8, not JSON, not an object, or holds a string PostgreSQL
//     cannot make text (\u0000) fails the statement: a data exception (SQLSTATE class 22)
//     declines the bucket, and the executor reads its rows and reports what it finds.
//   - Casts of text to int4/int8: the executor parses with Go's rules (a leading 0 is octal,
//     no spaces), PostgreSQL with its own; both agree on canonical decimal text. So every
//     cast member of every row in the range (not only the rows the filter keeps, which the
//     executor may evaluate in another order) is checked to read back as itself
//     (t::int4::text = t); one that does not declines the bucket.
//   - The residual filter goes into each aggregate's FILTER clause rather than WHERE, so the
//     guard sees every row; groups whose rows all fail it are dropped here.
//   - Text compares and aggregates under COLLATE "C" (bytewise, as the executor); text
//     equality and grouping are bytewise under any deterministic collation.
//   - Sums of integers are exact (numeric); a float8 sum state (avg of an integer, which
//     the executor sums as float8) is answered only while it is below 2^53 in magnitude,
//     where every order of float8 additions is exact.
//   - Bins: date_trunc(unit, event_time, 'UTC'), PostgreSQL's calendar as the executor's
//     (docs/architecture.md decision 2); date_bin strides are not pushed.
//
// Constants travel as parameters; JSON keys become quoted column names of json_to_record
// (a key longer than PostgreSQL's 63-byte identifier limit, empty, or holding NUL is
// declined).

// maxExactFloat is 2^53: every integer of smaller magnitude is a float64, and sums of such
// integers are exact in any order while they stay below it.
var maxExactFloat = new(big.Int).Lsh(big.NewInt(1), 53)

// rowStatement is a RowAggregate rendered for PostgreSQL.
type rowStatement struct {
	sql    string
	args   []any
	fields map[string]int
}

// renderRows renders q for b over [start, end); ErrNoAggregate for a shape the store does not
// compute exactly.
func renderRows(b routing.BucketID, q routing.RowAggregate, start, end time.Time) (*rowStatement, error) {
	st := &rowStatement{args: bucketArgs(b, start, end), fields: map[string]int{}}
	keys := q.Fields()
	var cols []string
	for i, k := range keys {
		if k == "" || len(k) > 63 || strings.ContainsRune(k, 0) {
			return nil, routing.ErrNoAggregate
		}
		st.fields[k] = i
		cols = append(cols, quoteIdent(k)+" text")
	}
	guards := map[string]bool{}
	var guardSQL []string
	var render func(e routing.HotExpr) (string, error)
	param := func(v any, typ string) string {
		st.args = append(st.args, v)
		return "$" + strconv.Itoa(len(st.args)) + "::" + typ
	}
	render = func(e routing.HotExpr) (string, error) {
		args := make([]string, len(e.Args))
		for i, a := range e.Args {
			s, err := render(a)
			if err != nil {
				return "", err
			}
			args[i] = s
		}
		switch e.Op {
		case routing.HotTime:
			return "rec.event_time", nil
		case routing.HotField:
			return "j." + quoteIdent(e.Key), nil
		case routing.HotInt4, routing.HotInt8:
			typ := "int4"
			if e.Op == routing.HotInt8 {
				typ = "int8"
			}
			if e.Args[0].Op != routing.HotField {
				return "", routing.ErrNoAggregate
			}
			g := "(" + args[0] + "::" + typ + "::text <> " + args[0] + ")"
			if !guards[g] {
				guards[g] = true
				guardSQL = append(guardSQL, g)
			}
			return "(" + args[0] + ")::" + typ, nil
		case routing.HotText:
			return param(e.Text, "text"), nil
		case routing.HotInt:
			if e.IntBits == 32 {
				return param(e.Int, "int4"), nil
			}
			return param(e.Int, "int8"), nil
		case routing.HotBool:
			return param(e.Bool, "bool"), nil
		case routing.HotEq, routing.HotNe, routing.HotLt, routing.HotLe, routing.HotGt, routing.HotGe:
			op := map[routing.HotOp]string{routing.HotEq: "=", routing.HotNe: "<>", routing.HotLt: "<", routing.HotLe: "<=", routing.HotGt: ">", routing.HotGe: ">="}[e.Op]
			if isText(e.Args[0]) || isText(e.Args[1]) {
				return "((" + args[0] + ") COLLATE \"C\" " + op + " (" + args[1] + "))", nil
			}
			return "((" + args[0] + ") " + op + " (" + args[1] + "))", nil
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
		case routing.HotBin:
			if e.Bin.Unit == 0 {
				return "", routing.ErrNoAggregate
			}
			return "date_trunc('" + e.Bin.Unit.String() + "', rec.event_time, 'UTC')", nil
		}
		return "", routing.ErrNoAggregate
	}
	var filter []string
	for _, f := range q.Filter {
		s, err := render(f)
		if err != nil {
			return nil, err
		}
		filter = append(filter, s)
	}
	where := func(extra *routing.HotExpr) (string, error) {
		conds := filter
		if extra != nil {
			s, err := render(*extra)
			if err != nil {
				return "", err
			}
			conds = append(conds[:len(conds):len(conds)], s)
		}
		if len(conds) == 0 {
			return "", nil
		}
		return " FILTER (WHERE " + strings.Join(conds, " AND ") + ")", nil
	}
	var sel []string
	var groupBy []string
	for i, g := range q.Groups {
		s, err := render(g)
		if err != nil {
			return nil, err
		}
		f := q.Schema.Field(i)
		switch f.Type.ID() {
		case arrow.INT32, arrow.INT64:
			s = "(" + s + ")::int8"
		case arrow.STRING, arrow.TIMESTAMP:
		default:
			return nil, routing.ErrNoAggregate
		}
		sel = append(sel, s+" AS g"+strconv.Itoa(i))
		groupBy = append(groupBy, strconv.Itoa(4+i))
	}
	for i, m := range q.Measures {
		f := q.Schema.Field(len(q.Groups) + i)
		var arg string
		if m.Arg != nil {
			s, err := render(*m.Arg)
			if err != nil {
				return nil, err
			}
			arg = s
		}
		fl, err := where(m.Filter)
		if err != nil {
			return nil, err
		}
		var s string
		switch m.Func {
		case routing.RowCountStar:
			s = "count(*)" + fl
		case routing.RowCount:
			s = "count(" + arg + ")" + fl
		case routing.RowSum:
			if !isInt(*m.Arg) {
				return nil, routing.ErrNoAggregate
			}
			s = "(sum(" + arg + ")" + fl + ")::numeric"
		case routing.RowMin, routing.RowMax:
			fn := "min"
			if m.Func == routing.RowMax {
				fn = "max"
			}
			switch {
			case isText(*m.Arg):
				s = fn + "((" + arg + ") COLLATE \"C\")" + fl
			case isInt(*m.Arg) && f.Type.ID() == arrow.FLOAT64:
				s = "(" + fn + "(" + arg + ")" + fl + ")::numeric"
			case isInt(*m.Arg):
				s = "(" + fn + "(" + arg + ")" + fl + ")::int8"
			case isTime(*m.Arg):
				s = fn + "(" + arg + ")" + fl
			default:
				return nil, routing.ErrNoAggregate
			}
		default:
			return nil, routing.ErrNoAggregate
		}
		sel = append(sel, s+" AS m"+strconv.Itoa(i))
	}
	bad := "0::int8"
	if len(guardSQL) > 0 {
		bad = "count(*) FILTER (WHERE " + strings.Join(guardSQL, " OR ") + ")"
	}
	pass := "count(*)"
	if len(filter) > 0 {
		pass = "count(*) FILTER (WHERE " + strings.Join(filter, " AND ") + ")"
	}
	var b2 strings.Builder
	b2.WriteString(routeCTE)
	b2.WriteString("SELECT route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.*\nFROM route\nLEFT JOIN LATERAL (\n\tSELECT true AS present, ")
	b2.WriteString(bad + " AS bad, " + pass + " AS pass")
	for _, s := range sel {
		b2.WriteString(",\n\t\t" + s)
	}
	b2.WriteString("\n\tFROM pulpitum_v4_records AS rec\n")
	if len(cols) > 0 {
		b2.WriteString("\tCROSS JOIN LATERAL json_to_record(convert_from(rec.value, 'UTF8')::json) AS j(" + strings.Join(cols, ", ") + ")\n")
	}
	b2.WriteString("\tWHERE route.state <> 'archived'\n\t\tAND rec.table_id = $1 AND rec.partition_key = $2 AND rec.bucket_key = $3\n\t\tAND rec.event_time >= $4 AND rec.event_time < $5\n")
	if len(groupBy) > 0 {
		b2.WriteString("\tGROUP BY " + strings.Join(groupBy, ", ") + "\n")
	}
	b2.WriteString(") AS agg ON true")
	st.sql = b2.String()
	return st, nil
}

// quoteIdent quotes k as a PostgreSQL identifier.
func quoteIdent(k string) string { return `"` + strings.ReplaceAll(k, `"`, `""`) + `"` }

func isText(e routing.HotExpr) bool { return e.Op == routing.HotField || e.Op == routing.HotText }

func isInt(e routing.HotExpr) bool {
	return e.Op == routing.HotInt4 || e.Op == routing.HotInt8 || e.Op == routing.HotInt
}

func isTime(e routing.HotExpr) bool { return e.Op == routing.HotTime || e.Op == routing.HotBin }

// AggregateRows implements the row-aggregate port (routing.RowAggregator; see the rules
// above): b's route and, unless it is archived (nil reader), q's answer over b's records in
// q.Range, from one statement. routing.ErrNoAggregate on CockroachDB, for a shape or a record
// the statement would not compute as the executor does (a guard, a data exception); other
// errors as for ScanRange.
func (s *Store) AggregateRows(ctx context.Context, b routing.BucketID, q routing.RowAggregate) (routing.Route, array.RecordReader, error) {
	const op = "aggregate bucket rows"
	if s.product != "PostgreSQL" {
		return routing.Route{}, nil, routing.ErrNoAggregate
	}
	if err := q.Validate(); err != nil {
		return routing.Route{}, nil, err
	}
	start, end, _ := routing.MicroBounds(q.Range, nil, false)
	st, err := renderRows(b, q, start, end)
	if err != nil {
		return routing.Route{}, nil, err
	}
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return routing.Route{}, nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, st.sql, st.args...)
	if err != nil {
		return routing.Route{}, nil, s.rowError(op, err)
	}
	defer rows.Close()
	alloc := q.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	n := q.Schema.NumFields()
	bld := array.NewRecordBuilder(alloc, q.Schema)
	defer bld.Release()
	var (
		state     string
		key       *string
		deleted   bool
		gen       int64
		present   *bool
		bad, pass *int64
		route     routing.Route
		seen      bool
	)
	vals := make([]any, n)
	for i := range n {
		switch q.Schema.Field(i).Type.ID() {
		case arrow.INT32, arrow.INT64:
			vals[i] = new(*int64)
		case arrow.STRING:
			vals[i] = new(*string)
		case arrow.TIMESTAMP:
			vals[i] = new(*time.Time)
		case arrow.DECIMAL128, arrow.FLOAT64:
			vals[i] = new(pgtype.Numeric)
		default:
			return routing.Route{}, nil, routing.ErrNoAggregate
		}
	}
	dest := append([]any{&state, &key, &deleted, &gen, &present, &bad, &pass}, vals...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return routing.Route{}, nil, s.rowError(op, err)
		}
		if !seen {
			if route, err = routeFromRow(state, key, deleted, gen); err != nil {
				return routing.Route{}, nil, err
			}
			seen = true
		}
		if route.State == routing.StateArchived {
			continue
		}
		if bad != nil && *bad > 0 {
			return routing.Route{}, nil, routing.ErrNoAggregate
		}
		if present == nil || ((q.Grouped || len(q.Groups) > 0) && (pass == nil || *pass == 0)) {
			continue // no group, or a group whose rows the filter rejects
		}
		for i := range n {
			if err := appendValue(bld.Field(i), vals[i]); err != nil {
				return routing.Route{}, nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return routing.Route{}, nil, s.rowError(op, err)
	}
	if !seen {
		return routing.Route{}, nil, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
	}
	if route.State == routing.StateArchived {
		return route, nil, nil
	}
	rec := bld.NewRecordBatch()
	defer rec.Release()
	r, err := array.NewRecordReader(q.Schema, []arrow.RecordBatch{rec})
	if err != nil {
		return routing.Route{}, nil, err
	}
	return route, r, nil
}

// rowError declines a statement that failed on a data exception (SQLSTATE class 22: a
// document or cast the executor may read otherwise) and classifies any other error.
func (s *Store) rowError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return routing.ErrNoAggregate
	}
	return s.classify(op, err)
}

// appendValue appends one scanned value (see AggregateRows' destinations) to b;
// ErrNoAggregate when it does not fit b's type exactly.
func appendValue(b array.Builder, v any) error {
	switch b := b.(type) {
	case *array.Int64Builder:
		p := *v.(**int64)
		if p == nil {
			b.AppendNull()
		} else {
			b.Append(*p)
		}
	case *array.Int32Builder:
		p := *v.(**int64)
		switch {
		case p == nil:
			b.AppendNull()
		case *p < -1<<31 || *p >= 1<<31:
			return routing.ErrNoAggregate
		default:
			b.Append(int32(*p))
		}
	case *array.StringBuilder:
		p := *v.(**string)
		if p == nil {
			b.AppendNull()
		} else {
			b.Append(*p)
		}
	case *array.TimestampBuilder:
		p := *v.(**time.Time)
		if p == nil {
			b.AppendNull()
		} else {
			b.Append(arrow.Timestamp(p.UnixNano()))
		}
	case *array.Decimal128Builder, *array.Float64Builder:
		num := v.(*pgtype.Numeric)
		if !num.Valid {
			b.AppendNull()
			return nil
		}
		x, ok := numericInt(num)
		if !ok {
			return routing.ErrNoAggregate
		}
		if fb, ok := b.(*array.Float64Builder); ok {
			if new(big.Int).Abs(x).Cmp(maxExactFloat) > 0 {
				return routing.ErrNoAggregate
			}
			fb.Append(float64(x.Int64()))
			return nil
		}
		d := decimal128.FromBigInt(x)
		if !d.FitsInPrecision(38) {
			return routing.ErrNoAggregate
		}
		b.(*array.Decimal128Builder).Append(d)
	default:
		return routing.ErrNoAggregate
	}
	return nil
}

// numericInt is num as an integer; false for NaN, infinities or a fraction.
func numericInt(num *pgtype.Numeric) (*big.Int, bool) {
	if num.NaN || num.InfinityModifier != pgtype.Finite || num.Int == nil {
		return nil, false
	}
	x := new(big.Int).Set(num.Int)
	if num.Exp > 0 {
		x.Mul(x, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(num.Exp)), nil))
	} else if num.Exp < 0 {
		d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-num.Exp)), nil)
		var m big.Int
		x.QuoRem(x, d, &m)
		if m.Sign() != 0 {
			return nil, false
		}
	}
	return x, true
}
