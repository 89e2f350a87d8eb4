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
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/flightsrv/flightsrv/routing"
)

// The row-aggregate port (routing.RowAggregator, routing/rowagg.go): a fragment's residual
// filter and partial aggregate run over one bucket's rows as its one statement, the route
// read in the same statement (one snapshot) as for every other read:
//
//	WITH keys AS (unnest of the buckets' keys and clipped ranges), route AS (keys LEFT JOIN
//	    the metadata rows) SELECT route.i, route…, agg.* FROM route LEFT JOIN LATERAL (
//	    SELECT true, <guard count>, <filter count>, <groups>, <measures>
//	    FROM (SELECT x.event_time, x.d ->> 'delay' AS f0, … FROM (
//	        SELECT rec.event_time, convert_from(rec.value, 'UTF8')::json AS d
//	        FROM pulpitum_v4_records AS rec
//	        WHERE rec.table_id = CASE WHEN route.state <> 'archived' THEN $1 END
//	            AND <the rest of the bucket's key range>
//	        OFFSET 0) AS x OFFSET 0) AS rec
//	    GROUP BY <groups>) AS agg ON true
//
// (a statement that reads no JSON member reads pulpitum_v4_records AS rec directly: an
// index-only scan; one that reads one member extracts it in the inner level itself,
// convert_from(rec.value, 'UTF8')::json ->> $k, one level fewer a row).
//
// Many buckets of a query go in one statement (one round trip, one plan, one snapshot for
// all their routes and rows): a query over a thousand small buckets would otherwise spend
// most of its time on per-statement costs. A data exception aborts the whole statement, so
// each bucket is then asked alone and only those that fail again are declined.
//
// Only PostgreSQL answers: CockroachDB's JSON is jsonb, which rewrites numbers (1e2 reads
// back as 100) and so could differ from the executor's text; CockroachDB declines
// (routing.ErrNoAggregate) and the executor reads rows. Exactness, rule by rule, against the
// executor (scan/ops/jsonfields.go, scan/aggregate):
//
//   - JSON members are read with the json type's ->> (not jsonb's), the operator the
//     executor's scanner follows (scan/ops/jsonscan.go): a number's text as written, the last
//     of duplicate keys, NULL for a document that is not an object. The document is converted
//     and validated once a row (the inner level) and each member extracted once a row (the
//     middle one); OFFSET 0 keeps the planner from folding either level into its uses, which
//     would convert and parse the document again for every use of every member. Measured on
//     PostgreSQL 15 (backend CPU time over the 300,000-row sample, one process): 243 ms with
//     one member read by the guard, a sum and a count, 210 ms with two members grouped and
//     filtered, where json_to_record(convert_from(value, 'UTF8')::json) as a lateral function
//     scan took 427 and 423 ms (a function scan, its tuple store and record per row).
//     A document that is not UTF-8 or not JSON, or holds a string PostgreSQL cannot make
//     text (\u0000, anywhere: ->> de-escapes every string it parses), fails the statement: a
//     data exception (SQLSTATE class 22) declines the bucket, and the executor reads its rows
//     and reports what it finds.
//   - Casts of text to int4/int8: the executor reads text as PostgreSQL 15's int4in and
//     int8in do (internal/pgnumfmt.IntIn). A guard casts every cast member of every row in
//     the range (not only the rows the filter keeps, which the executor may evaluate in
//     another order), so that text no cast reads fails the statement (a data exception:
//     the bucket goes to the executor, which reports it or not as it does without the
//     pushdown). On PostgreSQL 15 that is all it does ((t::int4 IS NULL AND t IS NOT NULL),
//     never true); on other versions, whose casts may read more (16 reads 0x1F and 1_000),
//     it also checks that the text reads back as itself (t::int4::text <> t), and a row
//     that does not declines the bucket (the executor then reads its rows: same answer,
//     more work). Measured (psql, PostgreSQL 15, one member over the bench's 300,000 rows,
//     serial, 9 runs alternating, load 3): 222 ms with the cast alone, 237 read back, 222
//     without a guard.
//   - The residual filter goes into each aggregate's FILTER clause rather than WHERE, so the
//     guard sees every row; groups whose rows all fail it are dropped here.
//   - Text compares and aggregates under COLLATE "C" (bytewise, as the executor); text
//     equality and grouping are bytewise under any deterministic collation.
//   - Sums of integers are exact: sums of int8 as numeric, sums of int4 as int8 (sum(int4)
//     accumulates in int8; no numeric is built there or decoded here); a float8 sum state
//     (avg of an integer, which the executor sums as float8) is answered only for int4
//     values and groups of at most 2^22 rows, where every running float8 sum in any order
//     stays an exact integer.
//   - Bins: date_trunc(unit, event_time, 'UTC'), PostgreSQL's calendar as the executor's
//     (docs/architecture.md decision 2), spelled date_bin(stride, event_time, a Monday at
//     UTC midnight) for the units of fixed width (second to week: fixedStride), the same
//     instants for less work; the query's own date_bin strides are not pushed.
//
// Constants and JSON keys travel as parameters (a key holding NUL, which no text holds, is
// declined).

// fixedStride is date_bin's stride for each unit of fixed width in UTC: from binOrigin, a
// Monday at UTC midnight, date_bin(stride, t, origin) is date_trunc(unit, t, 'UTC') for every
// t (weeks are ISO weeks, starting on Monday), in arithmetic on the instant where
// date_trunc's zone form breaks the instant down in its zone and builds it again: about 0.2 µs
// a row less on PostgreSQL 15 (a day's bins over the 300,000-row sample: 57 against 118 ms of
// backend CPU). TestBinStrideIsDateTrunc checks the two agree on PostgreSQL.
var fixedStride = map[routing.TruncUnit]string{
	routing.TruncSecond: "1 second", routing.TruncMinute: "1 minute", routing.TruncHour: "1 hour",
	routing.TruncDay: "1 day", routing.TruncWeek: "7 days",
}

// binOrigin is fixedStride's origin: 2001-01-01, a Monday.
const binOrigin = "2001-01-01 00:00:00+00"

// maxExactFloat is 2^53: every integer of smaller magnitude is a float64, and sums of such
// integers are exact in any order while they stay below it.
var maxExactFloat = new(big.Int).Lsh(big.NewInt(1), 53)

// rowStatement is a RowAggregate rendered for PostgreSQL.
type rowStatement struct {
	sql  string
	args []any
	// floatSum reports a float8 sum state: a group of more than maxFloatSumRows rows passing
	// the filter declines its bucket.
	floatSum bool
	// int8Sum marks, per column of the answer's schema, a sum of int4 values the statement
	// answers as int8 (int4Sum) rather than numeric.
	int8Sum []bool
}

// int4Sum reports whether m sums int4 values (a cast member or an int4 constant): PostgreSQL's
// sum(int4) is an int8 accumulated in int8, exact for fewer than 2^32 rows.
func int4Sum(m routing.RowMeasure) bool {
	return m.Arg != nil && (m.Arg.Op == routing.HotInt4 || m.Arg.Op == routing.HotInt && m.Arg.IntBits == 32)
}

// maxFloatSumRows bounds the rows of a group whose int4 values are summed into a float8
// state: the executor adds them one by one in float8, exact while every running sum stays
// within 2^53, which 2^22 values of magnitude at most 2^31 guarantee in any order.
const maxFloatSumRows = 1 << 22

// renderRows renders q for buckets of table tableID whose keys and clipped ranges are the
// parameters $2 to $5 (bytea[], text[], timestamptz[], timestamptz[]); ErrNoAggregate for a
// shape the store does not compute exactly. intIn15 says the server's integer casts read
// text as the executor does (Store.intIn15): the guard of its casts only casts.
func renderRows(tableID string, q routing.RowAggregate, intIn15 bool) (*rowStatement, error) {
	st := &rowStatement{args: []any{tableID, nil, nil, nil, nil}}
	keys := q.Fields()
	// Each JSON member the statement reads is one column of the inner row (rec.f0, rec.f1, …),
	// extracted once a row from its key, a parameter.
	alias := make(map[string]string, len(keys))
	var cols, keyParam []string
	for i, k := range keys {
		if strings.ContainsRune(k, 0) {
			return nil, routing.ErrNoAggregate // text cannot hold NUL
		}
		st.args = append(st.args, k)
		alias[k] = "f" + strconv.Itoa(i)
		keyParam = append(keyParam, "$"+strconv.Itoa(len(st.args))+"::text")
		cols = append(cols, "x.d ->> "+keyParam[i]+" AS "+alias[k])
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
			return "rec." + alias[e.Key], nil
		case routing.HotInt4, routing.HotInt8:
			typ := "int4"
			if e.Op == routing.HotInt8 {
				typ = "int8"
			}
			if e.Args[0].Op != routing.HotField {
				return "", routing.ErrNoAggregate
			}
			g := "(" + args[0] + "::" + typ + "::text <> " + args[0] + ")"
			if intIn15 {
				g = "(" + args[0] + "::" + typ + " IS NULL AND " + args[0] + " IS NOT NULL)"
			}
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
			if e.Args[0].IsText() || e.Args[1].IsText() {
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
			if stride, ok := fixedStride[e.Bin.Unit]; ok {
				return "date_bin('" + stride + "'::interval, rec.event_time, TIMESTAMPTZ '" + binOrigin + "')", nil
			}
			return "date_trunc('" + e.Bin.Unit.String() + "', rec.event_time, 'UTC')", nil
		}
		return "", routing.ErrNoAggregate
	}
	parts, err := q.SQL(routing.RowDialect{Render: render, Group: func(_ routing.HotExpr, s string, t arrow.DataType) (string, error) {
		switch t.ID() {
		case arrow.INT32, arrow.INT64:
			return "(" + s + ")::int8", nil
		case arrow.STRING, arrow.TIMESTAMP:
			return s, nil
		}
		return "", routing.ErrNoAggregate
	}, Measure: func(m routing.RowMeasure, arg, fl string, t arrow.DataType) (string, error) {
		switch m.Func {
		case routing.RowSum:
			if int4Sum(m) {
				// sum(int4) is int8, exact (PostgreSQL's int4_sum adds in int8): read as it
				// is, with no numeric built here or decoded there.
				return "sum(" + arg + ")" + fl, nil
			}
			return "(sum(" + arg + ")" + fl + ")::numeric", nil
		case routing.RowMin, routing.RowMax:
			fn := "min"
			if m.Func == routing.RowMax {
				fn = "max"
			}
			switch {
			case m.Arg.IsText():
				return fn + "((" + arg + ") COLLATE \"C\")" + fl, nil
			case m.Arg.IsInt() && t.ID() == arrow.FLOAT64:
				return "(" + fn + "(" + arg + ")" + fl + ")::numeric", nil
			case m.Arg.IsInt():
				return "(" + fn + "(" + arg + ")" + fl + ")::int8", nil
			case isTime(*m.Arg):
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
	st.int8Sum = make([]bool, q.Schema.NumFields())
	for i, m := range q.Measures {
		st.int8Sum[len(q.Groups)+i] = m.Func == routing.RowSum && int4Sum(m)
	}
	bad := "0::int8"
	if len(guardSQL) > 0 {
		bad = "count(*) FILTER (WHERE " + strings.Join(guardSQL, " OR ") + ")"
	}
	var b2 strings.Builder
	b2.WriteString(`WITH keys AS (
	SELECT * FROM unnest($2::BYTEA[], $3::TEXT[], $4::TIMESTAMPTZ[], $5::TIMESTAMPTZ[]) WITH ORDINALITY AS k (partition_key, bucket_key, lo, hi, i)
), route AS (
	SELECT k.i, k.partition_key, k.bucket_key, k.lo, k.hi,
		COALESCE(m.state, 'hot') AS state,
		m.archive_object_key,
		COALESCE(m.hot_deleted, false) AS hot_deleted,
		COALESCE(m.generation, 0) AS generation
	FROM keys AS k
	LEFT JOIN LATERAL (
		SELECT m.state, m.archive_object_key, m.hot_deleted, m.generation
		FROM pulpitum_v4_bucket_metadata AS m
		WHERE m.table_id = $1 AND m.partition_key = k.partition_key AND m.bucket_key = k.bucket_key
		LIMIT 1) AS m ON true
)
`)
	b2.WriteString("SELECT route.i, route.state, route.archive_object_key, route.hot_deleted, route.generation, agg.*\nFROM route\nLEFT JOIN LATERAL (\n\tSELECT true AS present, ")
	b2.WriteString(bad + " AS bad, " + pass + " AS pass")
	for _, s := range sel {
		b2.WriteString(",\n\t\t" + s)
	}
	// An archived bucket's rows are not read: its table key is NULL, which no index entry
	// equals, so the index scan ends before it starts (a WHERE route.state <> 'archived'
	// beside it plans as a Result node every row passes through: 7% of the backend CPU of a
	// count over 300,000 rows in 1,332 buckets, PostgreSQL 15).
	const bucketRows = "\tWHERE rec.table_id = CASE WHEN route.state <> 'archived' THEN $1 END\n\t\tAND rec.partition_key = route.partition_key AND rec.bucket_key = route.bucket_key\n\t\tAND rec.event_time >= route.lo AND rec.event_time < route.hi\n"
	if len(cols) == 0 {
		b2.WriteString("\n\tFROM pulpitum_v4_records AS rec\n" + bucketRows)
	} else if len(cols) == 1 {
		// One member: extracted once a row in the one level the planner keeps (OFFSET 0),
		// whatever the number of its uses above.
		b2.WriteString("\n\tFROM (\n\t\tSELECT rec.event_time, convert_from(rec.value, 'UTF8')::json ->> " + keyParam[0] + " AS " + alias[keys[0]] + "\n\t\tFROM pulpitum_v4_records AS rec\n")
		b2.WriteString(strings.ReplaceAll(bucketRows, "\t", "\t\t") + "\t\tOFFSET 0) AS rec\n")
	} else {
		// Two levels the planner keeps (OFFSET 0): the document converted and parsed once a
		// row, then each member extracted once a row, whatever the number of uses above.
		b2.WriteString("\n\tFROM (SELECT x.event_time, " + strings.Join(cols, ", ") + " FROM (\n\t\tSELECT rec.event_time, convert_from(rec.value, 'UTF8')::json AS d\n\t\tFROM pulpitum_v4_records AS rec\n")
		b2.WriteString(strings.ReplaceAll(bucketRows, "\t", "\t\t") + "\t\tOFFSET 0) AS x OFFSET 0) AS rec\n")
	}
	if len(groupBy) > 0 {
		b2.WriteString("\tGROUP BY " + strings.Join(groupBy, ", ") + "\n")
		if len(filter) > 0 {
			// Groups whose rows all fail the filter and hold no guarded text are dropped
			// anyway: the server need not send them.
			b2.WriteString("\tHAVING " + pass + " > 0 OR " + bad + " > 0\n")
		}
	}
	b2.WriteString(") AS agg ON true")
	st.sql = b2.String()
	return st, nil
}

func isTime(e routing.HotExpr) bool { return e.Op == routing.HotTime || e.Op == routing.HotBin }

// AggregateRows implements the row-aggregate port (routing.RowAggregator; see the rules
// above): for each bucket of bs, its route and, unless archived or declined, q's answer over
// its records in q.Range clipped to it, all from one statement. routing.ErrNoAggregate on
// CockroachDB; a bucket the statement would not compute as the executor does (a guard, a data
// exception met again when it is asked alone) is Declined. Other errors as for ScanRange.
func (s *Store) AggregateRows(ctx context.Context, bs []routing.BucketID, q routing.RowAggregate) ([]routing.RowAnswer, error) {
	if s.product != "PostgreSQL" {
		return nil, routing.ErrNoAggregate
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if len(bs) == 0 {
		return nil, nil
	}
	for _, b := range bs {
		if b.TableID != bs[0].TableID {
			return nil, fmt.Errorf("%w: a row aggregate over buckets of several tables", routing.ErrOperationFailed)
		}
	}
	if summedCount(q) {
		return s.aggregateSummed(ctx, bs, q)
	}
	st, err := renderRows(bs[0].TableID, q, s.intIn15)
	if err != nil {
		return nil, err
	}
	out, err := s.aggregateRows(ctx, st, bs, q)
	if !errors.Is(err, errDataException) {
		return out, err
	}
	if len(bs) == 1 {
		return []routing.RowAnswer{{Declined: true}}, nil
	}
	// One bucket's record failed the statement: ask each alone.
	out = make([]routing.RowAnswer, len(bs))
	for i, b := range bs {
		as, err := s.AggregateRows(ctx, []routing.BucketID{b}, q)
		if err != nil {
			routing.ReleaseAnswers(out)
			return nil, err
		}
		out[i] = as[0]
	}
	return out, nil
}

// errDataException marks a statement that failed on a data exception (SQLSTATE class 22).
var errDataException = errors.New("cockroach: data exception")

// aggregateRows runs st over bs and reads each bucket's answer.
func (s *Store) aggregateRows(ctx context.Context, st *rowStatement, bs []routing.BucketID, q routing.RowAggregate) ([]routing.RowAnswer, error) {
	const op = "aggregate bucket rows"
	pks, keys := make([][]byte, len(bs)), make([]string, len(bs))
	los, his := make([]time.Time, len(bs)), make([]time.Time, len(bs))
	for i, b := range bs {
		pks[i], keys[i] = b.PartitionKey, b.Key
		los[i], his[i], _ = routing.MicroBounds(q.Range.Intersect(b.Range()), nil, false)
	}
	args := append([]any{st.args[0], pks, keys, los, his}, st.args[5:]...)
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, st.sql, args...)
	if err != nil {
		return nil, s.rowError(op, err)
	}
	defer rows.Close()
	alloc := q.Alloc
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	n := q.Schema.NumFields()
	type bucketState struct {
		route    routing.Route
		seen     bool
		declined bool
		bld      *array.RecordBuilder
	}
	states := make([]bucketState, len(bs))
	defer func() {
		for _, b := range states {
			if b.bld != nil {
				b.bld.Release()
			}
		}
	}()
	var (
		idx       int64
		state     string
		key       *string
		deleted   bool
		gen       int64
		present   pgtype.Bool
		bad, pass pgtype.Int8
	)
	// Destinations of pgtype's value types: a NULL is Valid false, and no row allocates a
	// pointer for each value it scans.
	vals := make([]any, n)
	for i := range n {
		switch q.Schema.Field(i).Type.ID() {
		case arrow.INT32, arrow.INT64:
			vals[i] = new(pgtype.Int8)
		case arrow.STRING:
			vals[i] = new(pgtype.Text)
		case arrow.TIMESTAMP:
			vals[i] = new(pgtype.Timestamptz)
		case arrow.DECIMAL128, arrow.FLOAT64:
			if st.int8Sum[i] {
				vals[i] = new(pgtype.Int8)
			} else {
				vals[i] = new(pgtype.Numeric)
			}
		default:
			return nil, routing.ErrNoAggregate
		}
	}
	dest := append([]any{&idx, &state, &key, &deleted, &gen, &present, &bad, &pass}, vals...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, s.rowError(op, err)
		}
		if idx < 1 || idx > int64(len(bs)) {
			return nil, fmt.Errorf("%w: %s: a row of bucket %d", routing.ErrOperationFailed, op, idx)
		}
		b := &states[idx-1]
		if !b.seen {
			if b.route, err = routeFromRow(state, key, deleted, gen); err != nil {
				return nil, err
			}
			b.seen = true
		}
		if b.route.State == routing.StateArchived || b.declined {
			continue
		}
		if bad.Valid && bad.Int64 > 0 || st.floatSum && pass.Valid && pass.Int64 > maxFloatSumRows {
			b.declined = true
			continue
		}
		if !present.Valid || ((q.Grouped || len(q.Groups) > 0) && (!pass.Valid || pass.Int64 == 0)) {
			continue // no group, or a group whose rows the filter rejects
		}
		if b.bld == nil {
			b.bld = array.NewRecordBuilder(alloc, q.Schema)
		}
		for i := range n {
			if err := appendValue(b.bld.Field(i), vals[i]); err != nil {
				if errors.Is(err, routing.ErrNoAggregate) {
					b.declined = true
					break
				}
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.rowError(op, err)
	}
	out := make([]routing.RowAnswer, len(bs))
	for i := range states {
		b := &states[i]
		if !b.seen {
			routing.ReleaseAnswers(out)
			return nil, fmt.Errorf("%w: %s: no route row", routing.ErrOperationFailed, op)
		}
		out[i].Route = b.route
		switch {
		case b.route.State == routing.StateArchived:
		case b.declined:
			out[i].Declined = true
		default:
			var batches []arrow.RecordBatch
			if b.bld != nil {
				rec := b.bld.NewRecordBatch()
				defer rec.Release()
				batches = append(batches, rec)
			}
			r, err := array.NewRecordReader(q.Schema, batches)
			if err != nil {
				routing.ReleaseAnswers(out)
				return nil, err
			}
			out[i].Reader = r
		}
	}
	return out, nil
}

// rowError is errDataException for a statement that failed on a data exception (SQLSTATE
// class 22: a document or cast the executor may read otherwise) and classifies any other
// error.
func (s *Store) rowError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return errDataException
	}
	return s.classify(op, err)
}

// appendValue appends one scanned value (see AggregateRows' destinations) to b;
// ErrNoAggregate when it does not fit b's type exactly.
func appendValue(b array.Builder, v any) error {
	switch b := b.(type) {
	case *array.Int64Builder:
		p := v.(*pgtype.Int8)
		if !p.Valid {
			b.AppendNull()
		} else {
			b.Append(p.Int64)
		}
	case *array.Int32Builder:
		p := v.(*pgtype.Int8)
		switch {
		case !p.Valid:
			b.AppendNull()
		case p.Int64 < -1<<31 || p.Int64 >= 1<<31:
			return routing.ErrNoAggregate
		default:
			b.Append(int32(p.Int64))
		}
	case *array.StringBuilder:
		p := v.(*pgtype.Text)
		if !p.Valid {
			b.AppendNull()
		} else {
			b.Append(p.String)
		}
	case *array.TimestampBuilder:
		p := v.(*pgtype.Timestamptz)
		switch {
		case !p.Valid:
			b.AppendNull()
		case p.InfinityModifier != pgtype.Finite:
			return routing.ErrNoAggregate // no instant: the executor reads the rows
		default:
			b.Append(arrow.Timestamp(p.Time.UnixNano()))
		}
	case *array.Decimal128Builder, *array.Float64Builder:
		if p, ok := v.(*pgtype.Int8); ok {
			// An int8 sum (rowStatement.int8Sum): every int8 fits decimal128(38, 0); a
			// float8 state only within 2^53.
			switch {
			case !p.Valid:
				b.AppendNull()
			case b.Type().ID() == arrow.DECIMAL128:
				b.(*array.Decimal128Builder).Append(decimal128.FromI64(p.Int64))
			case p.Int64 > 1<<53 || p.Int64 < -(1<<53):
				return routing.ErrNoAggregate
			default:
				b.(*array.Float64Builder).Append(float64(p.Int64))
			}
			return nil
		}
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

// Summed counts. A RowAggregate.Summed request of count(*) alone (no filter, no group) over
// many buckets is answered as one sum, from one statement (one snapshot): the table's records
// in the range counted as PostgreSQL's own count(*) counts them (its plan: a parallel
// sequential scan of the records on this benchmark's store, an index range where the table's
// records are few), less the records in the range of every bucket with a route row
// intersecting the range that is not to be answered (archived, or not asked: a bucket written
// since discovery), each counted through its key range. Asked bucket by bucket instead
// (aggregateRows), the same count is an index-only range a bucket, whose B-tree checks every
// key column of every entry: bench's BenchmarkAnalyticalHot (bench/doc.go) measured it.
//
// The table's count reads its records outside the range too where a sequential scan reads
// them, so it is taken only when no bucket of the table holding hot records lies outside the
// range (the statement checks its route rows, in the same snapshot, through the archive
// discovery index: the state and hot_deleted columns lead it; a bucket the range cuts is read
// whole, at most two a partition); otherwise its answer is NULL, nothing is counted, and the
// request is ErrNotSummed: the caller asks bucket by bucket, many requests at once.
//
// A route row whose hot rows were deleted (hot_deleted: deleted with the flag set in one
// transaction, and the write fence admits no record into a bucket that is not hot) holds no
// record: its count is not looked up (a one-time filter; a range mostly archived and deleted
// has a route row a bucket to skip).
//
// The difference counts exactly the asked hot buckets' records in the range because every
// record lies inside its bucket's bounds (the write fence computes the bucket from the
// record's event time: docs/pulpitum-v4.md §2, §3.1) and every record has a route row (the
// records' foreign key), so each record in the range belongs to a route row that intersects
// it.
const sqlSummedCount = `WITH keys AS (
	SELECT * FROM unnest($2::BYTEA[], $3::TEXT[]) WITH ORDINALITY AS k (partition_key, bucket_key, i)
), route AS (
	SELECT m.partition_key, m.bucket_key, m.state, m.archive_object_key, m.hot_deleted, m.generation, k.i
	FROM pulpitum_v4_bucket_metadata AS m
	LEFT JOIN keys AS k ON k.partition_key = m.partition_key AND k.bucket_key = m.bucket_key
	WHERE m.table_id = $1 AND m.bucket_start < $5 AND m.bucket_end > $4
)
SELECT route.i, route.state, route.archive_object_key, route.hot_deleted, route.generation, NULL::INT8 AS n
FROM route WHERE route.i IS NOT NULL AND route.state <> 'hot'
UNION ALL
SELECT 0, NULL, NULL, false, 0, CASE WHEN EXISTS (
	SELECT 1 FROM pulpitum_v4_bucket_metadata AS o
	WHERE o.state = ANY ('{hot,archiving,archived}'::TEXT[]) AND NOT o.hot_deleted AND o.table_id = $1
		AND (o.bucket_start >= $5 OR o.bucket_end <= $4)
) THEN NULL ELSE (
	SELECT count(*) FROM pulpitum_v4_records AS rec
	WHERE rec.table_id = $1 AND rec.event_time >= $6 AND rec.event_time < $7
) - (
	SELECT COALESCE(sum(x.n), 0)::INT8 FROM route CROSS JOIN LATERAL (
		SELECT count(*) AS n FROM pulpitum_v4_records AS rec
		WHERE NOT route.hot_deleted AND rec.table_id = $1 AND rec.partition_key = route.partition_key
			AND rec.bucket_key = route.bucket_key AND rec.event_time >= $6 AND rec.event_time < $7) AS x
	WHERE route.i IS NULL OR route.state = 'archived') END`

var _ routing.SummedCounter = (*Store)(nil)

// SumsCounts implements routing.SummedCounter: true on PostgreSQL (sqlSummedCount), false on
// CockroachDB, which answers no row aggregate.
func (s *Store) SumsCounts() bool { return s.product == "PostgreSQL" }

// summedCount reports whether q is a Summed request that sqlSummedCount answers: count(*)
// measures alone, no filter, no group.
func summedCount(q routing.RowAggregate) bool {
	if !q.Summed || !q.CountsOnly() {
		return false
	}
	for _, f := range q.Schema.Fields() {
		if f.Type.ID() != arrow.INT64 {
			return false
		}
	}
	return true
}

// sqlSummedAll is sqlSummedCount without keys, for asked buckets that are route rows (as
// partition discovery finds them) among which every hot route row of the table in the range
// is: it returns each route row intersecting the range that is not hot, by key, with the
// count of its records in the range (an index range each: few such rows are archiving, and
// an archived bucket's hot rows are usually deleted), and a last row holding the count of
// hot route rows intersecting the range and the table's count in the range (NULL for hot
// records outside the range, as in sqlSummedCount). The caller subtracts the non-hot rows it
// did not ask or that are archived, and takes the answer only when the hot route rows are as
// many as its asked buckets that are not among the non-hot rows: its buckets being route
// rows, they are then every hot one; else it asks again with sqlSummedCount. Measured beside
// sqlSummedCount and the range's plain count (psql, PostgreSQL 15, the bench's 300,000 rows
// in 1,332 hot buckets, prepared, 21 runs each alternating, medians of the last 15, load
// 7–8): 46.4 ms against 53.0 and 45.7: the keys' arrays and their join cost the difference.
const sqlSummedAll = `WITH route AS (
	SELECT m.partition_key, m.bucket_key, m.state, m.archive_object_key, m.hot_deleted, m.generation
	FROM pulpitum_v4_bucket_metadata AS m
	WHERE m.table_id = $1 AND m.bucket_start < $3 AND m.bucket_end > $2
)
SELECT route.partition_key, route.bucket_key, route.state, route.archive_object_key, route.hot_deleted, route.generation,
	x.n, NULL::INT8 AS hot
FROM route CROSS JOIN LATERAL (
	SELECT count(*) AS n FROM pulpitum_v4_records AS rec
	WHERE NOT route.hot_deleted AND rec.table_id = $1 AND rec.partition_key = route.partition_key
		AND rec.bucket_key = route.bucket_key AND rec.event_time >= $4 AND rec.event_time < $5) AS x
WHERE route.state <> 'hot'
UNION ALL
SELECT NULL, NULL, NULL, NULL, false, 0, CASE WHEN EXISTS (
	SELECT 1 FROM pulpitum_v4_bucket_metadata AS o
	WHERE o.state = ANY ('{hot,archiving,archived}'::TEXT[]) AND NOT o.hot_deleted AND o.table_id = $1
		AND (o.bucket_start >= $3 OR o.bucket_end <= $2)
) THEN NULL ELSE (
	SELECT count(*) FROM pulpitum_v4_records AS rec
	WHERE rec.table_id = $1 AND rec.event_time >= $4 AND rec.event_time < $5
) END, (SELECT count(*) FROM route WHERE route.state = 'hot')`

// aggregateSummed answers a summedCount request over bs (buckets of one table) with one
// statement: each bucket's route, the first bucket not archived holding the count of every
// such bucket's records in q.Range, the others Summed. It asks first without keys
// (sqlSummedAll), which answers when bs hold every hot route row of the table intersecting
// the range (bs, distinct, are route rows in the range, as partition discovery finds them
// for the scan's Summed requests: as many hot ones as the statement finds are all of them),
// else with the buckets' keys (sqlSummedCount). routing.ErrNotSummed, nothing
// answered, for duplicate buckets (nothing asked), for a table with hot records outside the
// range (see sqlSummedCount), and for a count that is negative or that no bucket is there to
// hold though it is not zero (records outside their bucket's bounds).
func (s *Store) aggregateSummed(ctx context.Context, bs []routing.BucketID, q routing.RowAggregate) ([]routing.RowAnswer, error) {
	const op = "count bucket rows"
	at := make(map[string]int, len(bs))
	for i, b := range bs {
		id := string(b.PartitionKey) + "\x00" + b.Key
		if _, dup := at[id]; dup {
			return nil, routing.ErrNotSummed
		}
		at[id] = i
	}
	conn, err := s.acquire(ctx, op)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	routes, total, all, err := s.summedAll(ctx, conn, bs, at, q.Range)
	if err == nil && !all {
		routes, total, err = s.summedKeyed(ctx, conn, bs, q.Range)
	}
	if err != nil {
		return nil, err
	}
	if !total.Valid {
		return nil, routing.ErrNotSummed // hot records outside the range
	}
	out := make([]routing.RowAnswer, len(bs))
	holder := -1
	for i, r := range routes {
		out[i].Route = r
		if r.State == routing.StateArchived {
			continue
		}
		if holder < 0 {
			holder = i
		} else {
			out[i].Summed = true
		}
	}
	if total.Int64 < 0 || holder < 0 && total.Int64 != 0 {
		return nil, routing.ErrNotSummed
	}
	if holder >= 0 {
		alloc := q.Alloc
		if alloc == nil {
			alloc = memory.DefaultAllocator
		}
		bld := array.NewRecordBuilder(alloc, q.Schema)
		defer bld.Release()
		for i := range q.Measures {
			bld.Field(i).(*array.Int64Builder).Append(total.Int64)
		}
		rec := bld.NewRecordBatch()
		defer rec.Release()
		r, err := array.NewRecordReader(q.Schema, []arrow.RecordBatch{rec})
		if err != nil {
			return nil, err
		}
		out[holder].Reader = r
	}
	return out, nil
}

// summedAll runs sqlSummedAll on conn for bs (at: each bucket's index by partition key, NUL,
// bucket key): the buckets' routes (the zero Route, hot, for those it does not name) and the
// sum; all is false, nothing else answered, when bs are not every hot route row of the table
// in rng (the caller asks with their keys).
func (s *Store) summedAll(ctx context.Context, conn *pgxpool.Conn, bs []routing.BucketID, at map[string]int, rng routing.TimeRange) (routes []routing.Route, total pgtype.Int8, all bool, err error) {
	const op = "count bucket rows"
	rs, re := routing.PartitionDiscoveryBounds(rng)
	lo, hi, _ := routing.MicroBounds(rng, nil, false)
	rows, err := conn.Query(ctx, sqlSummedAll, bs[0].TableID, rs, re, lo, hi)
	if err != nil {
		return nil, total, false, s.classify(op, err)
	}
	defer rows.Close()
	routes = make([]routing.Route, len(bs))
	var (
		pk          []byte
		bkey, state pgtype.Text
		key         *string
		deleted     bool
		gen         int64
		n, hot      pgtype.Int8
		less        int64 // records of the non-hot route rows not answered here
		hotAsked    = int64(len(bs))
	)
	for rows.Next() {
		if err := rows.Scan(&pk, &bkey, &state, &key, &deleted, &gen, &n, &hot); err != nil {
			return nil, total, false, s.classify(op, err)
		}
		if hot.Valid {
			total = n
			continue
		}
		if !state.Valid || !n.Valid {
			return nil, total, false, fmt.Errorf("%w: %s: a route row without its state", routing.ErrOperationFailed, op)
		}
		r, err := routeFromRow(state.String, key, deleted, gen)
		if err != nil {
			return nil, total, false, err
		}
		i, asked := at[string(pk)+"\x00"+bkey.String]
		if asked {
			routes[i] = r
			hotAsked--
		}
		if !asked || r.State == routing.StateArchived {
			less += n.Int64
		}
	}
	if err := rows.Err(); err != nil {
		return nil, total, false, s.classify(op, err)
	}
	if !hot.Valid || hot.Int64 != hotAsked {
		return nil, total, false, nil
	}
	if total.Valid {
		total.Int64 -= less
	}
	return routes, total, true, nil
}

// summedKeyed runs sqlSummedCount on conn for bs: the buckets' routes and the sum.
func (s *Store) summedKeyed(ctx context.Context, conn *pgxpool.Conn, bs []routing.BucketID, rng routing.TimeRange) ([]routing.Route, pgtype.Int8, error) {
	const op = "count bucket rows"
	var total pgtype.Int8
	pks, keys := make([][]byte, len(bs)), make([]string, len(bs))
	for i, b := range bs {
		pks[i], keys[i] = b.PartitionKey, b.Key
	}
	rs, re := routing.PartitionDiscoveryBounds(rng)
	lo, hi, _ := routing.MicroBounds(rng, nil, false)
	rows, err := conn.Query(ctx, sqlSummedCount, bs[0].TableID, pks, keys, rs, re, lo, hi)
	if err != nil {
		return nil, total, s.classify(op, err)
	}
	defer rows.Close()
	routes := make([]routing.Route, len(bs))
	var (
		idx, gen int64
		state    pgtype.Text
		key      *string
		deleted  bool
	)
	for rows.Next() {
		if err := rows.Scan(&idx, &state, &key, &deleted, &gen, &total); err != nil {
			return nil, total, s.classify(op, err)
		}
		if idx == 0 {
			continue
		}
		if idx < 1 || idx > int64(len(bs)) || !state.Valid {
			return nil, total, fmt.Errorf("%w: %s: a route row of bucket %d", routing.ErrOperationFailed, op, idx)
		}
		if routes[idx-1], err = routeFromRow(state.String, key, deleted, gen); err != nil {
			return nil, total, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, total, s.classify(op, err)
	}
	return routes, total, nil
}
