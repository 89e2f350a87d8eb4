package substrait

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rewritePlaceholders turns the `?` placeholders of JDBC and DB-API (qmark) clients into
// PostgreSQL `$n` parameters, numbered left to right from $1 (docs/flightsql-clients.md). It
// works on the token stream of PostgreSQL's own lexer (pg_query Scan), so a `?` inside a
// string literal (any quoting, including dollar quotes), a quoted identifier or a comment is
// never touched.
//
// PostgreSQL lexes `?` as an operator character, so the lexer hands back placeholders as
// operator tokens: a lone `?`, or glued to a preceding operator (`channel_id=?` lexes as
// `channel_id` `=?`). Operators that contain `?` exist (jsonb `?`, `?|`, `?&`; jsonpath
// `@?`), so a token is only rewritten where it cannot be such an operator:
//
//   - a lone `?` token is a placeholder unless it stands between two operands (`doc ? 'k'`
//     keeps the jsonb operator);
//   - a token `<op>?` whose operator part holds no `?` (`=?`, `>=?`, `<?`) becomes `<op> $n`
//     unless an operand follows it (`path @? '$.a'` keeps the jsonpath operator);
//   - a token `?<op>` whose operator part holds no `?` (`?>`, `?<=`) becomes `$n <op>` unless
//     an operand precedes it (`doc ?| keys` keeps the jsonb operator);
//   - every other operator containing `?` (`??`, `=?-`…) is left unchanged.
//
// It returns the rewritten text and the number of `?` placeholders. A statement that mixes
// `?` and `$n` is refused with ErrMixedPlaceholders. A text the lexer rejects (an
// unterminated string…) is a syntax error.
func rewritePlaceholders(sql string) (string, int, error) {
	text, edits, err := rewritePlaceholderEdits(sql)
	return text, len(edits), err
}

// placeholderEdit is one `?` token rewritten by rewritePlaceholderEdits: the token's byte span
// in the client's text and the span of its replacement in the rewritten text.
type placeholderEdit struct {
	origStart, origEnd int
	newStart, newEnd   int
}

// rewritePlaceholderEdits is rewritePlaceholders returning, instead of the count, the edits in
// text order (one per placeholder), from which origPosition maps a position of the rewritten
// text back to the client's.
func rewritePlaceholderEdits(sql string) (string, []placeholderEdit, error) {
	if !strings.Contains(sql, "?") {
		return sql, nil, nil
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return "", nil, syntaxError(err)
	}
	toks := make([]*pg.ScanToken, 0, len(res.GetTokens()))
	for _, t := range res.GetTokens() {
		if t.Token != pg.Token_SQL_COMMENT && t.Token != pg.Token_C_COMMENT {
			toks = append(toks, t)
		}
	}
	var (
		out     strings.Builder
		last    int // byte offset copied so far
		n       int // placeholders found
		dollars bool
		edits   []placeholderEdit
	)
	// emit replaces token t by `<before> $n <after>`: the operator text glued to the `?`
	// stays, separated by spaces so that the lexer sees `$n` alone.
	emit := func(t *pg.ScanToken, before, after string) {
		out.WriteString(sql[last:t.Start])
		e := placeholderEdit{origStart: int(t.Start), origEnd: int(t.End), newStart: out.Len()}
		n++
		out.WriteString(before)
		out.WriteString(" $")
		out.WriteString(strconv.Itoa(n))
		out.WriteString(" ")
		out.WriteString(after)
		last = int(t.End)
		e.newEnd = out.Len()
		edits = append(edits, e)
	}
	for i, t := range toks {
		if t.Token == pg.Token_PARAM {
			dollars = true
			continue
		}
		if t.Token != pg.Token_Op {
			continue
		}
		text := sql[t.Start:t.End]
		var prev, next *pg.ScanToken
		if i > 0 {
			prev = toks[i-1]
		}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		switch {
		case text == "?":
			if endsOperand(prev) && startsOperand(next) && !frameOffset(prev, next) {
				continue // binary operator `?`
			}
			emit(t, "", "")
		case strings.HasSuffix(text, "?") && !strings.Contains(text[:len(text)-1], "?"):
			if startsOperand(next) {
				continue // an operator such as @?
			}
			emit(t, text[:len(text)-1], "")
		case strings.HasPrefix(text, "?") && !strings.Contains(text[1:], "?"):
			if endsOperand(prev) {
				continue // an operator such as ?| or ?&
			}
			emit(t, "", text[1:])
		}
	}
	if n == 0 {
		return sql, nil, nil
	}
	if dollars {
		return "", nil, ErrMixedPlaceholders
	}
	out.WriteString(sql[last:])
	return out.String(), edits, nil
}

// parseStatement rewrites the `?` placeholders of sql (rewritePlaceholders) and parses the
// result with PostgreSQL's grammar, once CheckDepth has found its parse tree shallow enough to
// build. A syntax error's position refers to sql as the client
// wrote it, not to the rewritten text (where each `$n` is longer than its `?`): PostgreSQL's
// 1-based character position, mapped back through the edits. Errors are *Error values
// (syntaxError).
func parseStatement(sql string) (*pg.ParseResult, error) {
	if err := checkNumericLiterals(sql); err != nil {
		return nil, err
	}
	text, edits, err := rewritePlaceholderEdits(sql)
	if err != nil {
		return nil, err
	}
	if err := CheckDepth(text); err != nil {
		return nil, err
	}
	res, err := pg.Parse(text)
	if err != nil {
		var pe *pgparser.Error
		if errors.As(err, &pe) && pe.Cursorpos > 0 && len(edits) > 0 {
			mapped := *pe
			mapped.Cursorpos = origPosition(sql, text, edits, pe.Cursorpos)
			err = &mapped
		}
		return nil, syntaxError(err)
	}
	return res, nil
}

// origPosition maps pos, a 1-based character position in text (PostgreSQL's cursor position;
// one past the end for "at end of input"), to the same place in orig, of which text is the
// rewrite by edits. A position inside a `$n` replacement maps to the start of its `?` token.
func origPosition(orig, text string, edits []placeholderEdit, pos int) int {
	b := 0 // the byte offset of character pos in text
	for i := 1; i < pos && b < len(text); i++ {
		_, size := utf8.DecodeRuneInString(text[b:])
		b += size
	}
	ob := b
	for _, e := range edits {
		if b < e.newStart {
			break
		}
		if b < e.newEnd {
			ob = e.origStart
			break
		}
		ob = b + e.origEnd - e.newEnd
	}
	ob = min(max(ob, 0), len(orig))
	return utf8.RuneCountInString(orig[:ob]) + 1
}

// Reserved keywords that nevertheless form a complete operand.
var operandKeywords = map[pg.Token]bool{
	pg.Token_NULL_P: true, pg.Token_TRUE_P: true, pg.Token_FALSE_P: true, pg.Token_END_P: true,
	pg.Token_CURRENT_DATE: true, pg.Token_CURRENT_TIME: true, pg.Token_CURRENT_TIMESTAMP: true,
	pg.Token_LOCALTIME: true, pg.Token_LOCALTIMESTAMP: true, pg.Token_CURRENT_USER: true,
	pg.Token_SESSION_USER: true, pg.Token_USER: true, pg.Token_CURRENT_ROLE: true,
	pg.Token_CURRENT_CATALOG: true,
}

func isConstOrName(t pg.Token) bool {
	switch t {
	case pg.Token_IDENT, pg.Token_UIDENT, pg.Token_SCONST, pg.Token_USCONST, pg.Token_BCONST,
		pg.Token_XCONST, pg.Token_ICONST, pg.Token_FCONST, pg.Token_PARAM:
		return true
	}
	return false
}

// endsOperand reports whether a token can be the last token of an operand, so that a
// following `?` could be a binary operator.
func endsOperand(t *pg.ScanToken) bool {
	if t == nil {
		return false
	}
	switch {
	case isConstOrName(t.Token), t.Token == pg.Token_ASCII_41, t.Token == pg.Token_ASCII_93, operandKeywords[t.Token]:
		return true
	case t.Token == pg.Token_FIRST_P || t.Token == pg.Token_NEXT:
		return false // FETCH FIRST ? ROWS ONLY
	case t.Token == pg.Token_LIKE || t.Token == pg.Token_ILIKE:
		return false // s LIKE ? ESCAPE '!' (ESCAPE, unreserved, could begin an operand)
	}
	return t.KeywordKind != pg.KeywordKind_NO_KEYWORD && t.KeywordKind != pg.KeywordKind_RESERVED_KEYWORD
}

// frameOffset reports whether a `?` between prev and next is a window frame's offset
// (`ROWS ? PRECEDING`, `RANGE BETWEEN ? PRECEDING AND …`): a placeholder, although ROWS,
// RANGE, GROUPS and BETWEEN end an operand and PRECEDING and FOLLOWING (unreserved keywords)
// could begin one.
func frameOffset(prev, next *pg.ScanToken) bool {
	if next.Token != pg.Token_PRECEDING && next.Token != pg.Token_FOLLOWING {
		return false
	}
	switch prev.Token {
	case pg.Token_ROWS, pg.Token_RANGE, pg.Token_GROUPS, pg.Token_BETWEEN:
		return true
	}
	return false
}

// startsOperand reports whether a token can begin an operand, so that a preceding `?` could
// be a binary operator.
func startsOperand(t *pg.ScanToken) bool {
	if t == nil {
		return false
	}
	switch {
	case isConstOrName(t.Token), t.Token == pg.Token_ASCII_40, operandKeywords[t.Token]:
		return true
	}
	return t.KeywordKind != pg.KeywordKind_NO_KEYWORD && t.KeywordKind != pg.KeywordKind_RESERVED_KEYWORD
}

// syntaxError turns a pg_query error into an InvalidArgument. The client gets PostgreSQL's
// message, which names the token at fault (`syntax error at or near "FROM"`, its own text),
// and the position; the log form (Error.LogMsg) keeps only the position, as the token may be a
// literal. A statement nesting deeper than the parser's limits — bison's stack of 10,000
// states (about 10,000 nested parentheses), or pg_query's parse tree, decoded from protobuf
// at most 10,000 levels deep (about 5,000 nested operators) — is statement_too_complex
// (SQLSTATE 54001) naming the limit, not a syntax error.
func syntaxError(err error) *Error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		if strings.HasPrefix(pe.Message, "memory exhausted") {
			return errTooDeep("the parser's stack of 10,000 grammar states (about 10,000 nested parentheses)")
		}
		if strings.HasPrefix(pe.Message, "frame ") {
			// The grammar's own checks of a window frame's bounds ("frame start cannot be
			// UNBOUNDED FOLLOWING", "frame starting from following row cannot have preceding
			// rows"…) are PostgreSQL's windowing_error (42P20), not syntax errors; their
			// message names no client text.
			return &Error{Code: InvalidArgument, SQLState: "42P20", Msg: pe.Message}
		}
		if pe.Cursorpos > 0 {
			return &Error{Code: InvalidArgument, SQLState: "42601",
				Msg:    fmt.Sprintf("%s (position %d)", pe.Message, pe.Cursorpos),
				LogMsg: fmt.Sprintf("SQL syntax error at position %d", pe.Cursorpos)}
		}
		return &Error{Code: InvalidArgument, SQLState: "42601", Msg: pe.Message, LogMsg: "SQL syntax error"}
	}
	if strings.Contains(err.Error(), "recursion depth") {
		return errTooDeep("the parse tree's 10,000 levels (about 5,000 nested operators or function calls)")
	}
	return &Error{Code: InvalidArgument, SQLState: "42601", Msg: "SQL syntax error"}
}

// errTooDeep is the refusal of a statement nesting deeper than limit.
func errTooDeep(limit string) *Error {
	return &Error{Code: InvalidArgument, SQLState: "54001", Msg: "statement too complex: its expressions nest deeper than " + limit}
}

// DeclareParameterTypes returns sql with the parameters declared as the types of a client's
// binding, whose Arrow schema is bound: PostgreSQL's rule for the parameter types a client
// declares at Parse (the extended protocol's parameter types, which Flight SQL carries as the
// Arrow schema of the bound parameters, and which PostgreSQL's JDBC driver and psycopg send):
// a declared type is the parameter's type, whatever the statement around it would infer, so
// `$1 - 1` with a bound date is date - integer (the day before) and `$1 > 5` with a bound
// boolean is PostgreSQL's 42883. Each occurrence of such a `$n` (or the n-th `?`) becomes
// `($n::type)`, type the PostgreSQL type of bound's n-th field (ParameterTypeName).
//
// A bound string declares nothing: it is an untyped literal, as psycopg sends a str (type
// unknown) and the JDBC driver with stringtype=unspecified, so the statement types it
// (`ts >= $1` reads the text as a timestamp) and only a parameter the statement leaves
// undetermined is declared text. Null, list, struct and time-of-day fields declare nothing
// either; a null-typed one left undetermined is text, as PostgreSQL resolves a parameter of
// type unknown in a select list. sql is returned unchanged when nothing is declared; the refusal of a parameter still
// undetermined (bound has no such field, or one of a type without a PostgreSQL name) is the
// planner's 42P18, and any other planning error is returned as it is. The `?` placeholders are
// rewritten to `$n` (rewritePlaceholders).
func DeclareParameterTypes(sql string, cat Catalog, opts BindOptions, bound *arrow.Schema) (string, error) {
	if err := checkNumericLiterals(sql); err != nil {
		return "", err
	}
	text, _, err := rewritePlaceholders(sql)
	if err != nil {
		return "", err
	}
	rewritten := text
	fields := 0
	if bound != nil {
		fields = bound.NumFields()
	}
	declared := make(map[int]string, fields)
	for i := range fields {
		if name, ok := declaredTypeName(bound.Field(i).Type); ok {
			declared[i+1] = name
		}
	}
	if len(declared) > 0 {
		if text, err = castParameters(text, declared); err != nil {
			return "", err
		}
	}
	if fields > 0 && len(declared) == fields {
		if text == rewritten {
			return sql, nil // nothing declared
		}
		return text, nil // no untyped literal left to type
	}
	text, err = declareUntyped(text, cat, opts, func(n int) (string, bool) {
		if n > fields {
			return "", false
		}
		if bound.Field(n-1).Type.ID() == arrow.NULL {
			// A null of no type is PostgreSQL's unknown, which a select list resolves as text.
			return "text", true
		}
		return ParameterTypeName(bound.Field(n - 1).Type)
	})
	if err != nil {
		return "", err
	}
	if text == rewritten {
		return sql, nil // nothing declared
	}
	return text, nil
}

// DeclareUnknownParameters returns sql with the parameters it leaves undetermined declared
// text: PostgreSQL's type for a parameter of type unknown that nothing in the statement
// resolves (`SELECT $1` prepared without parameter types has a text parameter, as PostgreSQL's
// JDBC driver prepares it for setString and setNull). The `?` placeholders are rewritten to
// `$n`; any other planning error is returned as it is.
func DeclareUnknownParameters(sql string, cat Catalog, opts BindOptions) (string, error) {
	text, _, err := rewritePlaceholders(sql)
	if err != nil {
		return "", err
	}
	return declareUntyped(text, cat, opts, func(int) (string, bool) { return "text", true })
}

// declareUntyped declares the parameters text (with `$n` placeholders) leaves undetermined,
// one planning round each: parameter n as typeOf(n), the refusal 42P18 when typeOf has none.
func declareUntyped(text string, cat Catalog, opts BindOptions, typeOf func(n int) (string, bool)) (string, error) {
	// Each round declares one parameter, which the next cannot report again; there are at
	// most as many parameters as `$` characters.
	for range strings.Count(text, "$") + 1 {
		_, err := PrepareWith(text, cat, opts)
		var e *Error
		if err == nil {
			return text, nil
		}
		if !errors.As(err, &e) || e.untypedParam == 0 {
			return "", err
		}
		name, ok := typeOf(e.untypedParam)
		if !ok {
			return "", err
		}
		if text, err = castParameters(text, map[int]string{e.untypedParam: name}); err != nil {
			return "", err
		}
	}
	return "", errorf(InvalidArgument, "could not determine the data type of parameters")
}

// declaredTypeName is ParameterTypeName for the bound types that declare a parameter's type
// (DeclareParameterTypes): every named type but the strings, which bind as untyped literals.
func declaredTypeName(t arrow.DataType) (string, bool) {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "", false
	}
	return ParameterTypeName(t)
}

// castParameters rewrites sql with every `$n` as `$n::typ`, typ = types[n], through its parse
// tree (pg_query's deparser writes the text back): a select-list item that is such a `$n`
// alone and unnamed gets the name PostgreSQL gives it, ?column?, which the cast would otherwise
// change (to the type's).
func castParameters(sql string, types map[int]string) (string, error) {
	tree, err := pg.Parse(sql)
	if err != nil {
		return "", syntaxError(err)
	}
	typeNames := make(map[int]*pg.TypeName, len(types))
	for n, typ := range types {
		decl, err := pg.Parse("SELECT NULL::" + typ)
		if err != nil {
			return "", syntaxError(err)
		}
		typeNames[n] = decl.GetStmts()[0].GetStmt().GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal().GetTypeCast().GetTypeName()
	}
	isParam := func(node *pg.Node) bool {
		return node.GetParamRef() != nil && typeNames[int(node.GetParamRef().GetNumber())] != nil
	}
	var params []*pg.Node
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if rt, ok := m.Interface().(*pg.ResTarget); ok && rt.GetName() == "" && isParam(rt.GetVal()) {
			rt.Name = "?column?"
		}
		if node, ok := m.Interface().(*pg.Node); ok && isParam(node) {
			params = append(params, node)
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.Kind() == protoreflect.MessageKind && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	walk(tree.ProtoReflect())
	if len(params) == 0 {
		return sql, nil
	}
	for _, node := range params {
		ref := node.GetParamRef()
		node.Node = &pg.Node_TypeCast{TypeCast: &pg.TypeCast{Arg: &pg.Node{Node: &pg.Node_ParamRef{ParamRef: ref}},
			TypeName: proto.Clone(typeNames[int(ref.GetNumber())]).(*pg.TypeName), Location: ref.GetLocation()}}
	}
	text, err := pg.Deparse(tree)
	if err != nil {
		return "", errorf(InvalidArgument, "could not declare the types of the parameters")
	}
	return text, nil
}

// ParameterTypeName names the PostgreSQL type a bound parameter of Arrow type t declares
// (DeclareParameterTypes): the integers by width (an unsigned one by the smallest signed type
// holding it; uint64 numeric), real, double precision, numeric, text, bytea, boolean, date,
// timestamp (without a zone) and timestamp with time zone, interval, time (time32, time64[us]).
// ok is false for other types (null, lists, structs, time64[ns]…), which declare nothing.
func ParameterTypeName(t arrow.DataType) (name string, ok bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.UINT8:
		return "smallint", true
	case arrow.INT32, arrow.UINT16:
		return "integer", true
	case arrow.INT64, arrow.UINT32:
		return "bigint", true
	case arrow.UINT64, arrow.DECIMAL32, arrow.DECIMAL64, arrow.DECIMAL128, arrow.DECIMAL256:
		return "numeric", true
	case arrow.FLOAT16, arrow.FLOAT32:
		return "real", true
	case arrow.FLOAT64:
		return "double precision", true
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "text", true
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW, arrow.FIXED_SIZE_BINARY:
		return "bytea", true
	case arrow.BOOL:
		return "boolean", true
	case arrow.DATE32, arrow.DATE64:
		return "date", true
	case arrow.TIME32:
		return "time", true
	case arrow.TIME64:
		// time64[ns] is arrow-go's database/sql binding of a time.Time, an instant
		// (general.go's arrowValue): it declares nothing.
		if t.(*arrow.Time64Type).Unit == arrow.Microsecond {
			return "time", true
		}
	case arrow.TIMESTAMP:
		if t.(*arrow.TimestampType).TimeZone == "" {
			return "timestamp", true
		}
		return "timestamp with time zone", true
	case arrow.INTERVAL_MONTH_DAY_NANO, arrow.DURATION:
		return "interval", true
	}
	return "", false
}
