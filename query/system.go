package query

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/substrait"
)

// System is what the engine answers about the replica itself from SQL (issue 20; docs/sql.md,
// "Queries visible from SQL"): the views flightsrv.queries (the running and recent query
// calls of this process, internal/querylog's Registry; the SQL text of other users' calls only
// to administrators) and flightsrv.sessions (their clients),
// and the function flightsrv.cancel_query('<query id>'), which cancels a running query's
// calls on this process and is for administrators only. The zero System answers none of them
// (they are unknown relations then).
type System struct {
	// Queries lists and cancels the query calls; nil: no system views.
	Queries *querylog.Registry
	// Admin reports whether the calling user may cancel queries (nil: nobody may).
	Admin func(ctx context.Context) bool
	// Forward (nil: none) asks the peer replicas to cancel query id too (a query planned on
	// one replica may stream from another: its DoGet runs there under the same id) and
	// reports whether any of them stopped something. It is called with the caller's context,
	// after this replica cancelled what it runs; it does nothing for a cancel a peer
	// forwarded (server: flightsql.Server.ForwardCancelQuery).
	Forward func(ctx context.Context, id string) bool
}

// Statement kinds of system statements in the query record.
const (
	kindSystem = "SELECT SYSTEM"
	kindCancel = "SELECT CANCEL"
)

// sysColumn is one column of a system view: its name, Arrow type, and its value of a row.
type sysColumn struct {
	name string
	typ  arrow.DataType
}

var (
	tsUTC = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}

	// queriesColumns are flightsrv.queries' columns (querylog.QueryInfo; durations in
	// seconds, instants UTC to the microsecond; sql only under --log-statements).
	queriesColumns = []sysColumn{
		{"query_id", arrow.BinaryTypes.String}, {"user_name", arrow.BinaryTypes.String}, {"client", arrow.BinaryTypes.String},
		{"rpc", arrow.BinaryTypes.String}, {"command", arrow.BinaryTypes.String}, {"statement", arrow.BinaryTypes.String},
		{"state", arrow.BinaryTypes.String}, {"start_time", tsUTC}, {"queued_seconds", arrow.PrimitiveTypes.Float64},
		{"first_batch_seconds", arrow.PrimitiveTypes.Float64}, {"end_time", tsUTC}, {"rows", arrow.PrimitiveTypes.Int64},
		{"bytes", arrow.PrimitiveTypes.Int64}, {"hot_buckets", arrow.PrimitiveTypes.Int64}, {"archive_buckets", arrow.PrimitiveTypes.Int64},
		{"code", arrow.BinaryTypes.String}, {"sql", arrow.BinaryTypes.String},
	}
	// sessionsColumns are flightsrv.sessions' columns: one row per client address and user
	// among the running and recent query calls.
	sessionsColumns = []sysColumn{
		{"client", arrow.BinaryTypes.String}, {"user_name", arrow.BinaryTypes.String}, {"first_call", tsUTC},
		{"last_call", tsUTC}, {"queries", arrow.PrimitiveTypes.Int64}, {"running", arrow.PrimitiveTypes.Int64},
	}
)

// queryRow returns q as flightsrv.queries' row (nil for NULL).
func queryRow(q querylog.QueryInfo) []any {
	var first, end, code, sql any
	if q.FirstBatchSet {
		first = q.FirstBatch.Seconds()
	}
	if !q.End.IsZero() {
		end = q.End
	}
	if q.Code != "" {
		code = q.Code
	}
	if q.SQL != "" {
		sql = q.SQL
	}
	return []any{q.ID, q.User, q.Client, q.RPC, q.Command, q.Statement, q.State, q.Start, q.Queued.Seconds(), first, end,
		q.Rows, q.Bytes, int64(q.HotBuckets), int64(q.ArchiveBuckets), code, sql}
}

// sessionRows groups query calls by client and user into flightsrv.sessions' rows, ordered by
// their first call.
func sessionRows(qs []querylog.QueryInfo) [][]any {
	type session struct {
		client, user string
		first, last  time.Time
		ids          map[string]bool
		running      int64
	}
	by := map[[2]string]*session{}
	for _, q := range qs {
		k := [2]string{q.Client, q.User}
		s := by[k]
		if s == nil {
			s = &session{client: q.Client, user: q.User, first: q.Start, last: q.Start, ids: map[string]bool{}}
			by[k] = s
		}
		if q.Start.Before(s.first) {
			s.first = q.Start
		}
		if q.Start.After(s.last) {
			s.last = q.Start
		}
		s.ids[q.ID] = true
		if q.State == querylog.StateRunning {
			s.running++
		}
	}
	var all []*session
	for _, s := range by {
		all = append(all, s)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].first.Before(all[j].first) })
	rows := make([][]any, len(all))
	for i, s := range all {
		rows[i] = []any{s.client, s.user, s.first, s.last, int64(len(s.ids)), s.running}
	}
	return rows
}

// sysStatement is a parsed system statement: a read of view (its projected columns, with
// their output names, its filters and limit), or a cancel of cancelID.
type sysStatement struct {
	view     string // "queries" or "sessions"; "" for a cancel
	columns  []sysColumn
	cols     []int // view column of each output column
	filters  []sysFilter
	limit    int64 // -1: none
	cancelID string
}

// sysFilter is one conjunct of a view's WHERE: column col equals (or, with not, differs from)
// value (a string or an int64).
type sysFilter struct {
	col   int
	not   bool
	value any
}

// errSystemShape refuses a system statement of another shape than sysStatement reads.
var errSystemShape = querylog.Refusal(codes.Unimplemented,
	"flightsrv.queries and flightsrv.sessions are read with SELECT * | column, … FROM flightsrv.<view> [WHERE column = constant AND …] [LIMIT n]; flightsrv.cancel_query is called as SELECT flightsrv.cancel_query('<query id>')",
	"", "0A000")

// errNotAdmin refuses flightsrv.cancel_query to a user who is not an administrator.
var errNotAdmin = status.Error(codes.PermissionDenied, "flightsrv.cancel_query is for administrators (serve --auth-admins)")

// containsFold reports whether s contains the ASCII word w (lower case) in any case, without
// the copy strings.ToLower makes of s (a statement of a 1 MB literal was copied at every
// Prepare, Execute and Fragments).
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i]|0x20 == w[0] && strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// parseSystem reads sql as a system statement; ok is false for any other statement (or text
// that does not parse: the general binder reports it). A statement naming a system view or
// function in a shape it does not take is errSystemShape.
func (e *Engine) parseSystem(sql string) (st *sysStatement, ok bool, err error) {
	if e.opts.System.Queries == nil || len(sql) > substrait.MaxSQLBytes || !containsFold(sql, "flightsrv") {
		return nil, false, nil
	}
	if substrait.CheckDepth(sql) != nil || substrait.CheckSyntax(sql) != nil {
		return nil, false, nil // the general binder refuses it
	}
	res, err := pg.Parse(sql)
	if err != nil || len(res.GetStmts()) != 1 {
		return nil, false, nil
	}
	sel := res.GetStmts()[0].GetStmt().GetSelectStmt()
	if sel == nil {
		return nil, false, nil
	}
	if len(sel.GetFromClause()) == 0 {
		return parseCancel(sel)
	}
	var view string
	for _, f := range sel.GetFromClause() {
		if rv := f.GetRangeVar(); rv != nil && strings.EqualFold(rv.GetSchemaname(), "flightsrv") {
			view = strings.ToLower(rv.GetRelname())
		}
	}
	if view == "" {
		return nil, false, nil
	}
	if len(sel.GetFromClause()) != 1 || sel.GetFromClause()[0].GetRangeVar().GetAlias() != nil || sel.GetWithClause() != nil ||
		len(sel.GetDistinctClause()) > 0 || len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || len(sel.GetSortClause()) > 0 ||
		sel.GetLimitOffset() != nil || len(sel.GetWindowClause()) > 0 || len(sel.GetLockingClause()) > 0 || sel.GetOp() != pg.SetOperation_SETOP_NONE {
		return nil, true, errSystemShape
	}
	st = &sysStatement{view: view, limit: -1}
	var all []sysColumn
	switch view {
	case "queries":
		all = queriesColumns
	case "sessions":
		all = sessionsColumns
	default:
		return nil, true, querylog.Refusal(codes.NotFound, fmt.Sprintf("relation \"flightsrv.%s\" does not exist (the system views are flightsrv.queries and flightsrv.sessions)", view),
			"relation flightsrv.<name> does not exist", "42P01")
	}
	index := func(n *pg.Node) (int, error) {
		fields := n.GetColumnRef().GetFields()
		if len(fields) != 1 || fields[0].GetString_() == nil {
			return 0, errSystemShape
		}
		name := fields[0].GetString_().GetSval()
		for i, c := range all {
			if c.name == name {
				return i, nil
			}
		}
		return 0, querylog.Refusal(codes.InvalidArgument, fmt.Sprintf("column %q does not exist in flightsrv.%s", name, view),
			fmt.Sprintf("column <identifier> does not exist in flightsrv.%s", view), "42703")
	}
	for _, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		if fields := rt.GetVal().GetColumnRef().GetFields(); len(fields) == 1 && fields[0].GetAStar() != nil {
			for i, c := range all {
				st.cols, st.columns = append(st.cols, i), append(st.columns, c)
			}
			continue
		}
		if rt.GetVal().GetColumnRef() == nil {
			return nil, true, errSystemShape
		}
		i, err := index(rt.GetVal())
		if err != nil {
			return nil, true, err
		}
		c := all[i]
		if rt.GetName() != "" {
			c.name = rt.GetName()
		}
		st.cols, st.columns = append(st.cols, i), append(st.columns, c)
	}
	var conjuncts []*pg.Node
	if w := sel.GetWhereClause(); w != nil {
		if b := w.GetBoolExpr(); b != nil && b.GetBoolop() == pg.BoolExprType_AND_EXPR {
			conjuncts = b.GetArgs()
		} else {
			conjuncts = []*pg.Node{w}
		}
	}
	for _, c := range conjuncts {
		x := c.GetAExpr()
		if x == nil || x.GetKind() != pg.A_Expr_Kind_AEXPR_OP || len(x.GetName()) != 1 {
			return nil, true, errSystemShape
		}
		op := x.GetName()[0].GetString_().GetSval()
		if op != "=" && op != "<>" && op != "!=" {
			return nil, true, errSystemShape
		}
		i, err := index(x.GetLexpr())
		if err != nil {
			return nil, true, err
		}
		v, ok := constant(x.GetRexpr())
		if !ok {
			return nil, true, errSystemShape
		}
		st.filters = append(st.filters, sysFilter{col: i, not: op != "=", value: v})
	}
	if l := sel.GetLimitCount(); l != nil {
		v, ok := constant(l)
		n, isInt := v.(int64)
		if !ok || !isInt || n < 0 {
			return nil, true, errSystemShape
		}
		st.limit = n
	}
	return st, true, nil
}

// parseCancel reads SELECT flightsrv.cancel_query('<id>'); ok is false for a select without
// FROM that calls no flightsrv function.
func parseCancel(sel *pg.SelectStmt) (*sysStatement, bool, error) {
	var call *pg.FuncCall
	for _, t := range sel.GetTargetList() {
		if fc := t.GetResTarget().GetVal().GetFuncCall(); fc != nil && len(fc.GetFuncname()) == 2 &&
			strings.EqualFold(fc.GetFuncname()[0].GetString_().GetSval(), "flightsrv") {
			call = fc
		}
	}
	if call == nil {
		return nil, false, nil
	}
	if len(sel.GetTargetList()) != 1 || !strings.EqualFold(call.GetFuncname()[1].GetString_().GetSval(), "cancel_query") || len(call.GetArgs()) != 1 ||
		sel.GetWhereClause() != nil || sel.GetLimitCount() != nil || len(sel.GetSortClause()) > 0 {
		return nil, true, errSystemShape
	}
	v, ok := constant(call.GetArgs()[0])
	id, isText := v.(string)
	if !ok || !isText {
		return nil, true, errSystemShape
	}
	return &sysStatement{cancelID: id, columns: []sysColumn{{"cancel_query", arrow.FixedWidthTypes.Boolean}}}, true, nil
}

// constant returns the value of a string or integer constant node.
func constant(n *pg.Node) (any, bool) {
	c := n.GetAConst()
	switch {
	case c == nil || c.GetIsnull():
		return nil, false
	case c.GetSval() != nil:
		return c.GetSval().GetSval(), true
	case c.GetIval() != nil:
		return int64(c.GetIval().GetIval()), true
	}
	return nil, false
}

// schema returns the statement's result schema.
func (st *sysStatement) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(st.columns))
	for i, c := range st.columns {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// keep reports whether a view row passes the statement's filters: an equality holds when the
// value is the constant (an integer constant compares with integer columns, its text with
// the others); NULL passes none.
func (st *sysStatement) keep(row []any) bool {
	for _, f := range st.filters {
		v := row[f.col]
		if v == nil {
			return false
		}
		var eq bool
		switch x := v.(type) {
		case int64:
			n, ok := f.value.(int64)
			eq = ok && n == x
		case time.Time:
			eq = fmt.Sprint(f.value) == x.Format(time.RFC3339Nano)
		default:
			eq = fmt.Sprint(f.value) == fmt.Sprint(x)
		}
		if eq == f.not {
			return false
		}
	}
	return true
}

// prepareSystem answers Prepare for a system statement: its kind in the query record and its
// schema (no parameters). Cancelling is refused to a non-administrator here already.
func (e *Engine) prepareSystem(ctx context.Context, st *sysStatement) (*arrow.Schema, error) {
	querylog.FromContext(ctx).SetStatement(st.kind())
	if st.view == "" && (e.opts.System.Admin == nil || !e.opts.System.Admin(ctx)) {
		return nil, errNotAdmin
	}
	return st.schema(), nil
}

func (st *sysStatement) kind() string {
	if st.view == "" {
		return kindCancel
	}
	return kindSystem
}

// executeSystem runs a system statement: the view's rows at this instant, or the cancel
// (one row: whether a running call of the query was cancelled).
func (e *Engine) executeSystem(ctx context.Context, st *sysStatement) (array.RecordReader, error) {
	schema, err := e.prepareSystem(ctx, st)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	if st.view == "" {
		stopped := e.opts.System.Queries.Cancel(st.cancelID) > 0
		if f := e.opts.System.Forward; f != nil && f(ctx, st.cancelID) {
			stopped = true
		}
		rows = [][]any{{stopped}}
	} else {
		qs := e.opts.System.Queries.Queries()
		if e.opts.System.Admin == nil || !e.opts.System.Admin(ctx) {
			// The SQL text (kept under --log-statements) may hold another user's values: a
			// user who is not an administrator sees only the text of their own calls.
			me := querylog.FromContext(ctx).User()
			for i := range qs {
				if qs[i].User != me {
					qs[i].SQL = ""
				}
			}
		}
		rows = st.rows(qs)
	}
	if len(rows) == 0 {
		return array.NewRecordReader(schema, nil)
	}
	rec, err := buildRows(memory.DefaultAllocator, schema, rows)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return array.NewRecordReader(schema, []arrow.RecordBatch{rec})
}

// rows returns the view's rows of query calls qs that pass the filters, projected, at most
// the limit.
func (st *sysStatement) rows(qs []querylog.QueryInfo) [][]any {
	var all [][]any
	if st.view == "queries" {
		for _, q := range qs {
			all = append(all, queryRow(q))
		}
	} else {
		all = sessionRows(qs)
	}
	var rows [][]any
	for _, r := range all {
		if st.limit >= 0 && int64(len(rows)) >= st.limit {
			break
		}
		if st.keep(r) {
			out := make([]any, len(st.cols))
			for i, c := range st.cols {
				out[i] = r[c]
			}
			rows = append(rows, out)
		}
	}
	return rows
}

// buildRows builds one batch of schema from rows of Go values (string, int64, float64, bool,
// time.Time; nil for NULL).
func buildRows(alloc memory.Allocator, schema *arrow.Schema, rows [][]any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(alloc, schema)
	defer b.Release()
	for _, row := range rows {
		for i, v := range row {
			fb := b.Field(i)
			if v == nil {
				fb.AppendNull()
				continue
			}
			switch x := v.(type) {
			case string:
				fb.(*array.StringBuilder).Append(x)
			case int64:
				fb.(*array.Int64Builder).Append(x)
			case float64:
				fb.(*array.Float64Builder).Append(x)
			case bool:
				fb.(*array.BooleanBuilder).Append(x)
			case time.Time:
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(x.UnixMicro()))
			default:
				return nil, fmt.Errorf("system view value of type %T", v)
			}
		}
	}
	return b.NewRecordBatch(), nil
}
