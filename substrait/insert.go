package substrait

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/flightsrv/flightsrv/routing"
)

// Insert is a prepared INSERT into a routed table, the one data-modifying statement flightsrv
// carries out (docs/pulpitum-v4.md §5.5 names Pulpitum's single-row form; flightsrv takes many
// rows and parameters):
//
//	INSERT INTO <table> [(<partition column>, timestamp, id, value)] VALUES (…), (…)
//
// with the four columns in any order (all four, each once; omitted means the table's order),
// and every value a literal — a string constant, a typed TIMESTAMP/TIMESTAMPTZ or text/JSON
// cast of one — or a parameter ($n or ?). Every other INSERT form (INSERT … SELECT,
// ON CONFLICT, RETURNING, DEFAULT, WITH) and every other data-modifying statement (UPDATE,
// DELETE, MERGE, COPY) is Unimplemented naming it. An Insert is immutable and safe for
// concurrent use.
type Insert struct {
	table  routing.TableDef
	rows   [][4]insertValue // partition, timestamp, id, value
	params []insertKind     // the kind of each parameter ($1 first)
	schema *arrow.Schema
}

// insertValue is one value of a VALUES row: a parameter (param > 0, its number) or a literal.
type insertValue struct {
	param int
	text  string    // partition, id and value literals
	at    time.Time // timestamp literals
}

// insertKind is the column a parameter fills.
type insertKind uint8

const (
	kindText  insertKind = iota + 1 // partition column or id: utf8
	kindTime                        // timestamp: paramTimestampType
	kindValue                       // value: utf8 (JSON text) or binary
)

// Column order of insertValue arrays.
const (
	insPartition = iota
	insTimestamp
	insID
	insValue
)

// IsInsert reports whether sql begins, after white space and comments, with the keyword
// INSERT (any case): the statements PrepareInsert takes, told apart without parsing, so that
// deciding a statement's path costs nothing in proportion to its text (a select list of
// 50,000 columns is parsed once, under the engine's planning bound). Nothing is validated:
// PrepareInsert refuses what is no valid INSERT.
func IsInsert(sql string) bool { return startsWithKeyword(sql, "insert") }

// startsWithKeyword reports whether sql begins, after white space and comments, with kw, a
// lower-case keyword (any case, followed by no identifier character).
func startsWithKeyword(sql, kw string) bool {
	i := 0
	for i < len(sql) {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				return false
			}
			i += j + 1
		case strings.HasPrefix(sql[i:], "/*"):
			depth := 0
			for i < len(sql) {
				if strings.HasPrefix(sql[i:], "/*") {
					depth, i = depth+1, i+2
				} else if strings.HasPrefix(sql[i:], "*/") {
					depth, i = depth-1, i+2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return false
			}
		default:
			if len(sql)-i < len(kw) || !strings.EqualFold(sql[i:i+len(kw)], kw) {
				return false
			}
			if j := i + len(kw); j < len(sql) {
				c := sql[j]
				return !(c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80)
			}
			return true
		}
	}
	return false
}

// PrepareInsert parses and checks an INSERT (see Insert) against cat. Errors are *Error
// values: NotFound for an unknown table (42P01), Unimplemented naming an unsupported form,
// InvalidArgument for a wrong column list, a row of the wrong width, a NULL, a literal that
// is not a valid timestamp, or parameters not numbered consecutively from $1. Messages name
// columns and positions, never a literal's text.
func PrepareInsert(sql string, cat Catalog) (*Insert, error) {
	node, explain, err := parseOne(sql)
	if err != nil {
		return nil, err
	}
	ins := node.GetInsertStmt()
	if explain.on || ins == nil {
		return nil, unimplemented(statementName(node))
	}
	switch {
	case ins.GetWithClause() != nil:
		return nil, unimplemented("INSERT with WITH")
	case ins.GetOnConflictClause() != nil:
		return nil, unimplemented("INSERT … ON CONFLICT")
	case len(ins.GetReturningList()) > 0:
		return nil, unimplemented("INSERT … RETURNING")
	case ins.GetOverride() != pg.OverridingKind_OVERRIDING_NOT_SET && ins.GetOverride() != pg.OverridingKind_OVERRIDING_KIND_UNDEFINED:
		return nil, unimplemented("INSERT … OVERRIDING")
	}
	rv := ins.GetRelation()
	if rv.GetCatalogname() != "" || (rv.GetSchemaname() != "" && rv.GetSchemaname() != "public") {
		return nil, quoting(NotFound, "42P01", "table %q does not exist", qualifiedName(rv))
	}
	def, err := lookupSQLTable(cat, rv.GetRelname())
	if err != nil {
		return nil, err
	}
	order, err := insertColumns(def, ins.GetCols())
	if err != nil {
		return nil, err
	}
	sel := ins.GetSelectStmt().GetSelectStmt()
	if sel == nil {
		return nil, unimplemented("INSERT without VALUES")
	}
	if len(sel.GetValuesLists()) == 0 {
		return nil, unimplemented("INSERT … SELECT")
	}
	if len(sel.GetSortClause()) > 0 || sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil || sel.GetWithClause() != nil {
		return nil, unimplemented("VALUES with ORDER BY, LIMIT, OFFSET or WITH")
	}
	out := &Insert{table: def}
	kinds := map[int]insertKind{}
	for r, list := range sel.GetValuesLists() {
		items := list.GetList().GetItems()
		if len(items) != 4 {
			return nil, errorf(InvalidArgument, "VALUES row %d has %d values, the INSERT names 4 columns", r+1, len(items))
		}
		var row [4]insertValue
		for i, item := range items {
			col := order[i]
			v, err := insertLiteral(def, col, item)
			if err != nil {
				return nil, err
			}
			if v.param > 0 {
				k := kindOf(col)
				if prev, ok := kinds[v.param]; ok && prev != k {
					return nil, errorf(InvalidArgument, "parameter $%d fills columns of different types", v.param)
				}
				kinds[v.param] = k
			}
			row[col] = v
		}
		out.rows = append(out.rows, row)
	}
	out.params = make([]insertKind, len(kinds))
	fields := make([]arrow.Field, len(kinds))
	for i := range out.params {
		k, ok := kinds[i+1]
		if !ok {
			return nil, errorf(InvalidArgument, "parameters must be numbered consecutively from $1 ($%d is missing)", i+1)
		}
		out.params[i] = k
		t := arrow.DataType(arrow.BinaryTypes.String)
		if k == kindTime {
			t = paramTimestampType
		}
		fields[i] = arrow.Field{Name: "$" + strconv.Itoa(i+1), Type: t}
	}
	out.schema = arrow.NewSchema(fields, nil)
	return out, nil
}

func kindOf(col int) insertKind {
	switch col {
	case insTimestamp:
		return kindTime
	case insValue:
		return kindValue
	}
	return kindText
}

func qualifiedName(rv *pg.RangeVar) string {
	parts := []string{}
	for _, p := range []string{rv.GetCatalogname(), rv.GetSchemaname(), rv.GetRelname()} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}

// insertColumns maps the INSERT's column list to insertValue positions: order[i] is where the
// i-th listed column goes. An empty list is the table's own order.
func insertColumns(def routing.TableDef, cols []*pg.Node) ([4]int, error) {
	order := [4]int{insPartition, insTimestamp, insID, insValue}
	if len(cols) == 0 {
		return order, nil
	}
	want := fmt.Sprintf("%s, %s, %s and %s", def.PartitionColumn, TimestampColumn, IDColumn, ValueColumn)
	if len(cols) != 4 {
		return order, errorf(InvalidArgument, "an INSERT into %s names the columns %s, each once", def.Name, want)
	}
	seen := [4]bool{}
	for i, c := range cols {
		rt := c.GetResTarget()
		if rt == nil || len(rt.GetIndirection()) > 0 {
			return order, errorf(InvalidArgument, "an INSERT into %s names the columns %s, each once", def.Name, want)
		}
		pos := -1
		switch name := rt.GetName(); {
		case strings.EqualFold(name, def.PartitionColumn):
			pos = insPartition
		case name == TimestampColumn:
			pos = insTimestamp
		case name == IDColumn:
			pos = insID
		case name == ValueColumn:
			pos = insValue
		default:
			return order, quoting(InvalidArgument, "42703", "column %q does not exist", name)
		}
		if seen[pos] {
			return order, errorf(InvalidArgument, "an INSERT into %s names the columns %s, each once", def.Name, want)
		}
		seen[pos], order[i] = true, pos
	}
	return order, nil
}

// insertLiteral reads one VALUES item for column col.
func insertLiteral(def routing.TableDef, col int, n *pg.Node) (insertValue, error) {
	name := insertColumnName(def, col)
	if p := n.GetParamRef(); p != nil {
		if p.GetNumber() < 1 {
			return insertValue{}, errorf(InvalidArgument, "parameter numbers start at $1")
		}
		return insertValue{param: int(p.GetNumber())}, nil
	}
	var cast string
	var mods []*pg.Node
	if tc := n.GetTypeCast(); tc != nil {
		mods = tc.GetTypeName().GetTypmods()
		names := tc.GetTypeName().GetNames()
		if len(names) == 0 || len(tc.GetTypeName().GetArrayBounds()) > 0 {
			return insertValue{}, errorf(InvalidArgument, "column %s takes a string literal or a parameter", name)
		}
		cast = names[len(names)-1].GetString_().GetSval()
		n = tc.GetArg()
	}
	c := n.GetAConst()
	switch {
	case n.GetSetToDefault() != nil:
		return insertValue{}, unimplemented("DEFAULT in VALUES")
	case c == nil:
		return insertValue{}, &Error{Code: Unimplemented, Msg: fmt.Sprintf("expressions in VALUES are not supported: column %s takes a string literal or a parameter", name)}
	case c.GetIsnull():
		return insertValue{}, refused(InvalidArgument, "23502", "column %s must not be NULL", name)
	case c.GetSval() == nil:
		return insertValue{}, errorf(InvalidArgument, "column %s takes a string literal or a parameter", name)
	}
	text := c.GetSval().GetSval()
	if col != insTimestamp {
		switch cast {
		case "", "text", "varchar", "bpchar", "json", "jsonb":
		default:
			return insertValue{}, errorf(InvalidArgument, "column %s takes text, not a cast to %s", name, cast)
		}
		if cast == "varchar" || cast == "bpchar" {
			// The explicit cast's value, as PostgreSQL stores it in a text column: the
			// first n characters of varchar(n) or char(n), a bpchar without its trailing
			// spaces (its cast to text).
			var err error
			if text, err = castInsertText(cast, mods, text); err != nil {
				return insertValue{}, err
			}
		}
		if text == "" {
			return insertValue{}, errorf(InvalidArgument, "column %s must not be empty", name)
		}
		return insertValue{text: text}, nil
	}
	switch cast {
	case "", "timestamptz", "timestamp":
	default:
		return insertValue{}, errorf(InvalidArgument, "column timestamp takes a timestamp, not a cast to %s", cast)
	}
	at, err := parseTimestampSQL(text)
	if err != nil {
		e := err.(*Error)
		return insertValue{}, &Error{Code: e.Code, SQLState: e.SQLState, Msg: "column timestamp: " + e.Msg}
	}
	return insertValue{at: at}, nil
}

// Table returns the routed table the statement inserts into.
func (s *Insert) Table() routing.TableDef { return s.table }

// Rows returns the number of VALUES rows: the records one execution stores.
func (s *Insert) Rows() int { return len(s.rows) }

// ParameterSchema returns one field per parameter, "$1" first: utf8 for the partition column,
// id and value, timestamp[ms, UTC] for timestamp (paramTimestampType's reasons). Bound values
// may come in other types (see Records).
func (s *Insert) ParameterSchema() *arrow.Schema { return s.schema }

// Records appends to dst the records of one execution: every VALUES row with the parameters
// read from row `row` of params (nil when the statement has none; column i holds $i+1).
// Parameter values: text as utf8 (or binary for value), timestamps in any unit, as
// time64[ns] (arrow-go's database/sql driver) or as text (ParseTimestamp's forms). A NULL, an
// empty partition or id, a column count other than the statement's or a value of another type
// is an InvalidArgument *Error naming the parameter, never its value; dst is returned as it was.
func (s *Insert) Records(dst []routing.Record, params arrow.RecordBatch, row int) ([]routing.Record, error) {
	vals, err := recordRow(params, row, len(s.params), func(i int, col arrow.Array) (any, error) {
		return arrowValue(col, row, i+1)
	})
	if err != nil {
		return dst, err
	}
	n0 := len(dst)
	for _, r := range s.rows {
		var rec routing.Record
		for col, v := range r {
			text, at := []byte(v.text), v.at
			if v.param > 0 {
				if vals[v.param-1] == nil {
					return dst[:n0], refused(InvalidArgument, "23502", "parameter $%d is NULL: column %s must not be NULL", v.param, insertColumnName(s.table, col))
				}
				if text, at, err = insertParam(s.params[v.param-1], vals[v.param-1], v.param); err != nil {
					return dst[:n0], err
				}
			}
			switch col {
			case insPartition:
				rec.PartitionKey = text
			case insTimestamp:
				rec.EventTime = at
			case insID:
				rec.SortKey = text
			case insValue:
				rec.Value = text
			}
		}
		dst = append(dst, rec)
	}
	return dst, nil
}

// insertColumnName is the name of def's column at position col (insPartition…insValue).
func insertColumnName(def routing.TableDef, col int) string {
	return [4]string{def.PartitionColumn, TimestampColumn, IDColumn, ValueColumn}[col]
}

// insertParam converts a bound parameter value (arrowValue's Go value) for a column of kind k.
func insertParam(k insertKind, v any, pos int) ([]byte, time.Time, error) {
	switch k {
	case kindTime:
		switch v := v.(type) {
		case time.Time:
			return nil, v, nil
		case string:
			at, err := parseTimestampSQL(v)
			if err != nil {
				return nil, time.Time{}, paramError(pos, err)
			}
			return nil, at, nil
		}
	default:
		switch v := v.(type) {
		case string:
			if v == "" && k == kindText {
				return nil, time.Time{}, errorf(InvalidArgument, "parameter $%d must not be empty", pos)
			}
			return []byte(v), time.Time{}, nil
		case []byte:
			if k == kindValue {
				return append([]byte(nil), v...), time.Time{}, nil
			}
		}
	}
	return nil, time.Time{}, errorf(InvalidArgument, "parameter $%d has a type its column does not take", pos)
}

// castInsertText is text cast to varchar or bpchar (cast) with the type modifiers mods, as
// PostgreSQL's explicit cast and then its assignment to a text column leave it: the first n
// characters of varchar(n) or char(n) (n from bpchartypmodin's and varchartypmodin's range),
// a bpchar's trailing spaces dropped (rtrim1).
func castInsertText(cast string, mods []*pg.Node, text string) (string, error) {
	if len(mods) > 0 {
		kind := cast
		if kind == "bpchar" {
			kind = "char"
		}
		n, err := lengthModifier(kind, mods)
		if err != nil {
			return "", err
		}
		if r := []rune(text); int64(len(r)) > n {
			text = string(r[:n])
		}
	}
	if cast == "bpchar" {
		text = strings.TrimRight(text, " ")
	}
	return text, nil
}
