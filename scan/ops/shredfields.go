package ops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
)

// Shredded JSON fields: the executor's shredded-column cache (scan/shred, docs/architecture.md
// "The shredded-column cache") keeps the typed column of a JSON field read column-at-a-time
// (jsonfields.go) per archived payload. These are the hooks it needs here: the fields an
// expression reads from a column (Expr.ShredFields), a compilation of the expression that
// reads them from typed columns instead (CompileShredded), and their extraction from a
// column of documents (ExtractShredded), which yields exactly the arrays the expression would
// have computed from the documents, row by row.

// ShredField is one JSON field with constant keys read from a top-level column, as the type
// the expression reads it (text, int4, int8, float8, numeric of a cast's rounding, or the
// value's JSON text). Immutable.
type ShredField struct{ f *jsonField }

// Key names the field whatever column it reads: the operator (-> or #>), the steps (quoted
// keys, [n] indexes) and the output type, e.g. `->"delay":int4`, `->"d":numeric(half_up,0,10)`
// (numeric_cast's rounding mode, places and precision). Equal keys extract equal
// arrays from equal documents.
func (s ShredField) Key() string {
	var b strings.Builder
	if s.f.path {
		b.WriteString("#>")
	} else {
		b.WriteString("->")
	}
	for _, st := range s.f.steps {
		if st.idx {
			fmt.Fprintf(&b, "[%d]", st.index)
		} else {
			b.WriteString(strconv.Quote(st.key))
		}
	}
	b.WriteString(":")
	b.WriteString(s.f.outName())
	return b.String()
}

// Type is the Arrow type of the field's arrays: binary (a value's JSON text), utf8, int32,
// int64, float64 or decimal128(38, s).
func (s ShredField) Type() arrow.DataType { return s.f.typ() }

// ShredFields returns the JSON fields e reads column-at-a-time from input column col, once
// each by Key, in the order e reads them.
func (e *Expr) ShredFields(col int) []ShredField {
	var out []ShredField
	seen := map[string]bool{}
	for _, f := range e.jsonFields {
		if f.col != col {
			continue
		}
		sf := ShredField{f}
		if k := sf.Key(); !seen[k] {
			seen[k] = true
			out = append(out, sf)
		}
	}
	return out
}

// Column returns the input column e is, true only when e is a bare column reference (a shredded
// compilation of a lone JSON field is its typed column's reference): the executor matches a
// filter's operand with a cached column by it (scan's shredded.go, pruning by ranges).
func (e *Expr) Column() (int, bool) { return e.bare, e.bare >= 0 }

// errShredRef refuses a shredded compilation of an expression that reads the column itself.
var errShredRef = errors.New("ops: compile: the expression reads the shredded column outside its JSON fields")

// shredding is a shredded compilation's state.
type shredding struct {
	col     int
	at      map[string]int // column of each field, by Key
	inField bool           // compiling the document reference of a JSON field
	used    []int          // the typed columns read so far
	err     error
}

// CompileShredded compiles e over schema in as Compile does, except that each JSON field e
// reads column-at-a-time from column col is read from the typed column at[field.Key()] of in
// (of the field's Type). It fails (wrapping ErrUnsupported) when e reads column col in any
// other way (the column itself, a JSON call with computed keys) or reads a field at does not
// name. Batches given to the result's Eval must still hold a column col of its type: its
// values are never read.
func CompileShredded(e expr.Expression, in *arrow.Schema, ext expr.ExtensionRegistry, col int, at map[string]int) (*Expr, error) {
	return compile(e, in, ext, &shredding{col: col, at: at})
}

// ExtractShredded extracts fields from the documents of col (a column of text or binary JSON
// documents) in one pass and returns their arrays, one per field in order, allocated from mem
// and owned by the caller. Its errors are those the fields' evaluation gives on these rows: a
// document that is not JSON, a text a fused cast does not parse.
func ExtractShredded(mem memory.Allocator, col arrow.Array, fields []ShredField) ([]arrow.Array, error) {
	sh := newJSONShare()
	defer sh.reset()
	for _, f := range fields {
		sh.wanted[f.f.col] = append(sh.wanted[f.f.col], f.f)
	}
	out := make([]arrow.Array, 0, len(fields))
	for _, f := range fields {
		a, err := sh.get(mem, col, f.f)
		if err != nil {
			for _, o := range out {
				o.Release()
			}
			return nil, fmt.Errorf("ops: %s: %w", f.f.fnName(), err)
		}
		out = append(out, a)
	}
	return out, nil
}
