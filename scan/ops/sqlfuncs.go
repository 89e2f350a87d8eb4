package ops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/calendar"
)

// URNPostgres is the extension URN of flightsrv's own scalar functions: PostgreSQL functions
// and operators that Substrait's standard extensions do not define with PostgreSQL's meaning
// (JSON access, LIKE, to_char, date_part, concat's null rules). Plans name them by this URN
// and the names below; arrow-go has no kernels for any of them, so this package evaluates
// them (sqlfuncs.go). Each is tested against PostgreSQL's or DuckDB's answers
// (testdata/gen.py, golden.json).
//
//	json_get(doc, key)               PostgreSQL doc -> key: the member (text key) or element
//	                                 (integer index, negative from the end) as JSON text
//	                                 (binary); NULL when absent or when doc is not an object
//	                                 or array
//	json_get_text(doc, key)          doc ->> key: the same as text; JSON strings unquoted,
//	                                 JSON null is NULL
//	json_path(doc, k1, k2, …)        doc #> '{k1,k2}' (json_extract_path): JSON text (binary)
//	json_path_text(doc, k1, k2, …)   doc #>> '{k1,k2}' (json_extract_path_text): text; of doc
//	                                 alone, doc #>> '{}'
//	like(s, pattern)                 s LIKE pattern (escape character \)
//	ilike(s, pattern)                s ILIKE pattern (case-insensitive LIKE)
//	concat(a, b, …)                  concat(…): the texts of the non-null arguments
//	concat_strict(a, b, …)           a || b: NULL when any argument is NULL
//	lower(s), upper(s)               text
//	char_length(s)                   the number of characters (int64)
//	ascii(s)                         the code point of the first character (int32; 0 of '')
//	octet_length(s)                  the number of bytes of text or binary (int64): PostgreSQL's
//	                                 octet_length, and length of a bytea
//	substring(s, start[, count])     characters from 1-based start (int64 arguments)
//	replace(s, from, to)             every occurrence of from replaced
//	starts_with(s, prefix)           boolean
//	btrim(s[, chars]), ltrim, rtrim  spaces (or chars) removed from both, left or right ends
//	date_part(field, ts)             extract(field FROM ts) in UTC: int64 (epoch: float64);
//	                                 millisecond and microsecond are whole numbers, as in
//	                                 DuckDB (PostgreSQL keeps the fraction)
//	extract(field, ts)               extract(field FROM ts) in UTC, PostgreSQL 15's numeric,
//	                                 exact: decimal128(38, s), s 6 for epoch and second, 3 for
//	                                 millisecond, else 0; ts a timestamp or a date (epoch of a
//	                                 date at scale 0, as extract_date answers it)
//	to_char(ts, format)              PostgreSQL's template patterns (tochar.go), UTC
//	timestamp_add(ts, months, ns)    ts + interval in UTC as PostgreSQL computes it: months on
//	                                 the calendar (day clamped to the month's end), then ns
//	                                 nanoseconds (the interval's days as 24 hours, and time)
//	round(x)                         float64 rounded half to even (PostgreSQL's float8-to-
//	                                 integer cast rounds so: 2.5 → 2, 3.5 → 4)
//
// doc is binary or utf8 holding JSON text; a row whose doc is not valid JSON is an error
// (PostgreSQL's "invalid input syntax for type json"), quoting no value.
const URNPostgres = "extension:dev.flightsrv:functions_postgres"

// ownFunctions are the functions of URNPostgres this package evaluates, by name.
var ownFunctions = map[string]func(*fnNode) error{
	"json_get": jsonKernel(false, false), "json_get_text": jsonKernel(true, false),
	"json_path": jsonKernel(false, true), "json_path_text": jsonKernel(true, true),
	"like": likeKernel(false), "ilike": likeKernel(true),
	"concat": concatKernel(false, false), "concat_strict": concatKernel(true, false), "concat_ws": concatKernel(false, true),
	"lower":       stringMap(strings.ToLower),
	"upper":       stringMap(strings.ToUpper),
	"char_length": charLength,
	"ascii":       asciiKernel,
	// numeric_scale(x, ds): scale(x), the display scale ds (int32) of each non-null x.
	"numeric_scale": numericScaleKernel,
	"octet_length":  octetLength,
	"substring":     substringKernel,
	"replace":       text3Kernel(replaceText),
	"starts_with":   startsWith,
	"btrim":         trimKernel(true, true), "ltrim": trimKernel(true, false), "rtrim": trimKernel(false, true),
	"date_part":     datePart,
	"extract":       extractKernel,
	"round":         roundKernel,
	"to_char":       toCharKernel,
	"timestamp_add": timestampAdd,
	// deferred.go's: a scalar subquery's more-than-one-row error, as deferred_error's text.
	"subquery_rows_error": subqueryRowsError,
}

// OwnFunctionID returns the extension ID of one of this package's functions.
func OwnFunctionID(name string) extensions.ID { return extensions.ID{URN: URNPostgres, Name: name} }

// fnNode evaluates one of URNPostgres' functions: its value arguments are evaluated to arrays
// of the batch's length, enumerations are kept as strings, and run computes the result.
type fnNode struct {
	name  string
	args  []node // nil at an enumeration argument
	enums []string
	types []arrow.DataType // argument types (nil at an enumeration)
	out   arrow.DataType
	run   func(mem memory.Allocator, n int, args []arrow.Array) (arrow.Array, error)
}

// own compiles f with the kernel of URNPostgres' function name (f's own name, or the kernel
// that evaluates a standard function the same way).
func (c *compiler) own(f *expr.ScalarFunction, name string) (node, error) {
	setup, ok := ownFunctions[name]
	if !ok {
		return nil, fmt.Errorf("ops: compile: function %s (%s) is not supported", signature(f), f.ID().URN)
	}
	n := &fnNode{name: name, args: make([]node, f.NArgs()), enums: make([]string, f.NArgs()), types: make([]arrow.DataType, f.NArgs())}
	for i := range f.NArgs() {
		switch a := f.Arg(i).(type) {
		case types.Enum:
			n.enums[i] = string(a)
		case expr.Expression:
			an, err := c.compile(a)
			if err != nil {
				return nil, err
			}
			t, err := c.typeOf(an)
			if err != nil {
				return nil, fmt.Errorf("ops: compile: %s: %w", f.Name(), err)
			}
			n.args[i], n.types[i] = an, t
		case nil:
			return nil, errMissing(fmt.Sprintf("%s argument %d", f.Name(), i))
		default:
			return nil, fmt.Errorf("ops: compile: %s argument %d of kind %T is not supported", f.Name(), i, a)
		}
	}
	if err := setup(n); err != nil {
		return nil, fmt.Errorf("ops: compile: %s: %w", f.Name(), err)
	}
	return n, nil
}

func (n *fnNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	mem := compute.GetAllocator(ctx)
	rows := int(b.NumRows())
	args := make([]arrow.Array, len(n.args))
	defer releaseArrays(args)
	for i, a := range n.args {
		if a == nil {
			continue
		}
		d, err := a.eval(ctx, b)
		if err != nil {
			return nil, err
		}
		arr, err := toArray(d, rows, mem)
		d.Release()
		if err != nil {
			return nil, err
		}
		args[i] = arr
	}
	out, err := n.run(mem, rows, args)
	if err != nil {
		return nil, fmt.Errorf("ops: %s: %w", n.name, err)
	}
	defer out.Release()
	if n.out != nil && !arrow.TypeEqual(out.DataType(), n.out) {
		// typeOf trusts n.out (staticType): a kernel answering another type is a defect.
		return nil, fmt.Errorf("ops: %s: result is %s, not the %s its set-up declared", n.name, out.DataType(), n.out)
	}
	return compute.NewDatum(out), nil
}

func (n *fnNode) staticType() arrow.DataType { return n.out }

// --- argument access ------------------------------------------------------------------------

// texts reads a utf8, large_utf8, binary or large_binary array as byte strings.
type texts interface {
	IsNull(i int) bool
	ValueBytes(i int) []byte
}

type strText struct{ *array.String }

func (s strText) ValueBytes(i int) []byte { return []byte(s.Value(i)) }

type largeStrText struct{ *array.LargeString }

func (s largeStrText) ValueBytes(i int) []byte { return []byte(s.Value(i)) }

type binText struct{ *array.Binary }

func (s binText) ValueBytes(i int) []byte { return s.Value(i) }

type largeBinText struct{ *array.LargeBinary }

func (s largeBinText) ValueBytes(i int) []byte { return s.Value(i) }

func asTexts(a arrow.Array) (texts, bool) {
	switch v := a.(type) {
	case *array.String:
		return strText{v}, true
	case *array.LargeString:
		return largeStrText{v}, true
	case *array.Binary:
		return binText{v}, true
	case *array.LargeBinary:
		return largeBinText{v}, true
	}
	return nil, false
}

func isText(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	}
	return false
}

func isInt(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

// intAt reads row i of an integer array.
func intAt(a arrow.Array, i int) int64 {
	switch v := a.(type) {
	case *array.Int8:
		return int64(v.Value(i))
	case *array.Int16:
		return int64(v.Value(i))
	case *array.Int32:
		return int64(v.Value(i))
	case *array.Int64:
		return v.Value(i)
	}
	return 0
}

func argCount(n *fnNode, lo, hi int) error {
	if len(n.args) < lo || len(n.args) > hi {
		if lo == hi {
			return fmt.Errorf("takes %d arguments, got %d", lo, len(n.args))
		}
		return fmt.Errorf("takes %d to %d arguments, got %d", lo, hi, len(n.args))
	}
	return nil
}

func wantText(n *fnNode, idx ...int) error {
	for _, i := range idx {
		if n.types[i] == nil || !isText(n.types[i]) {
			return fmt.Errorf("argument %d must be text, not %v", i+1, n.types[i])
		}
	}
	return nil
}

// textArgs checks a kernel's argument count (lo to hi) and that the arguments at idx are
// text: the set-up most string kernels start with.
func textArgs(n *fnNode, lo, hi int, idx ...int) error {
	if err := argCount(n, lo, hi); err != nil {
		return err
	}
	return wantText(n, idx...)
}

func wantInt(n *fnNode, idx ...int) error {
	for _, i := range idx {
		if n.types[i] == nil || !isInt(n.types[i]) {
			return fmt.Errorf("argument %d must be an integer, not %v", i+1, n.types[i])
		}
	}
	return nil
}

// anyNull reports whether row i of any of args is null.
func anyNull(args []arrow.Array, i int) bool {
	for _, a := range args {
		if a != nil && a.IsNull(i) {
			return true
		}
	}
	return false
}

// appender is the part of arrow-go's typed builders mapRows uses.
type appender[T any] interface {
	array.Builder
	Append(T)
}

// mapRows builds an array of n rows with b (which it releases): f(i) for the rows where no
// argument is null (the functions are strict), NULL where f reports ok = false.
// The validity bitmaps of the arguments that hold nulls are read directly, and not at all when
// none does.
func mapRows[T any](b appender[T], n int, args []arrow.Array, f func(i int) (v T, ok bool, err error)) (arrow.Array, error) {
	defer b.Release()
	b.Reserve(n)
	type bitmap struct {
		bits []byte
		off  int
		arr  arrow.Array // asked row by row when it has no bitmap (the null type)
	}
	var nulls []bitmap
	for _, a := range args {
		if a != nil && a.NullN() > 0 {
			d := a.Data()
			m := bitmap{off: d.Offset(), arr: a}
			if bufs := d.Buffers(); len(bufs) > 0 && bufs[0] != nil && bufs[0].Len() > 0 {
				m.bits = bufs[0].Bytes()
			}
			nulls = append(nulls, m)
		}
	}
rows:
	for i := range n {
		for _, m := range nulls {
			if m.bits == nil && m.arr.IsNull(i) || m.bits != nil && bitutil.BitIsNotSet(m.bits, m.off+i) {
				b.AppendNull()
				continue rows
			}
		}
		v, ok, err := f(i)
		if err != nil {
			return nil, err
		}
		if !ok {
			b.AppendNull()
			continue
		}
		b.Append(v)
	}
	return b.NewArray(), nil
}

func mapStrings(mem memory.Allocator, n int, args []arrow.Array, f func(i int) (string, bool, error)) (arrow.Array, error) {
	var total textBatch
	return mapRows[string](array.NewStringBuilder(mem), n, args, func(i int) (string, bool, error) {
		v, ok, err := f(i)
		if err == nil && ok {
			err = total.add(len(v))
		}
		return v, ok, err
	})
}

func mapBinary(mem memory.Allocator, n int, args []arrow.Array, f func(i int) ([]byte, bool, error)) (arrow.Array, error) {
	var total textBatch
	return mapRows[[]byte](array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary), n, args, func(i int) ([]byte, bool, error) {
		v, ok, err := f(i)
		if err == nil && ok {
			err = total.add(len(v))
		}
		return v, ok, err
	})
}

// maxBatchText is the bytes the values of one string or binary array may hold together:
// Arrow's 32-bit offsets.
const maxBatchText = math.MaxInt32

// errTextBatch is the error of a kernel whose output array's values would pass maxBatchText
// bytes (values of PostgreSQL's up to 1 GiB each, a few rows of them): Project evaluates the
// piece again in fewer rows; anywhere else it reaches the client as PostgreSQL's 54000.
var errTextBatch = &DataError{Code: "54000", Msg: "the values of one batch pass 2 GiB"}

// textBatch counts the bytes of the values appended to one output array.
type textBatch int64

// add counts k more bytes: errTextBatch past maxBatchText.
func (t *textBatch) add(k int) error {
	if *t += textBatch(k); *t > maxBatchText {
		return errTextBatch
	}
	return nil
}

func mapInts(mem memory.Allocator, n int, args []arrow.Array, f func(i int) int64) arrow.Array {
	a, _ := mapRows[int64](array.NewInt64Builder(mem), n, args, func(i int) (int64, bool, error) { return f(i), true, nil })
	return a
}

func mapBools(mem memory.Allocator, n int, args []arrow.Array, f func(i int) (bool, error)) (arrow.Array, error) {
	return mapRows[bool](array.NewBooleanBuilder(mem), n, args, func(i int) (bool, bool, error) {
		v, err := f(i)
		return v, true, err
	})
}

// --- JSON -------------------------------------------------------------------------------------

// errInvalidJSON is the error of a document that is not JSON: PostgreSQL's invalid_text_
// representation (22P02), without the value PostgreSQL quotes.
var errInvalidJSON = &DataError{Code: sqlstateInvalidText, Msg: "invalid input syntax for type json"}

// errNotUTF8 is the error of bytes read as text that are not UTF-8 (a document, a bytea value
// given to convert_from): PostgreSQL's character_not_in_repertoire (22021), raised as it reads
// json text and as convert_from verifies its result. Without it ->> would answer text columns
// holding bytes that are not UTF-8, which clients cannot decode.
var errNotUTF8 = &DataError{Code: sqlstateBadEncoding, Msg: `invalid byte sequence for encoding "UTF8"`}

// jsonKernel returns the setup of json_get(_text) (one key, text or integer) and
// json_path(_text) (text keys, integers written as text index arrays).
func jsonKernel(text, path bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if path {
			// json_path_text of the document alone is #>> '{}': the document's own text, a
			// string scalar unquoted and a null one NULL (PostgreSQL's get_path_all with an
			// empty path, as_text).
			if len(n.args) < 2 && !(text && len(n.args) == 1) {
				return errors.New("takes a document and at least one key")
			}
		} else if err := argCount(n, 2, 2); err != nil {
			return err
		}
		if err := wantText(n, 0); err != nil {
			return err
		}
		for i := 1; i < len(n.args); i++ {
			if n.types[i] == nil || (!isText(n.types[i]) && (path || !isInt(n.types[i]))) {
				return fmt.Errorf("key %d must be text%s, not %v", i, map[bool]string{false: " or an integer", true: ""}[path], n.types[i])
			}
		}
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			doc, _ := asTexts(args[0])
			keys := make([]texts, len(args))
			for i := 1; i < len(args); i++ {
				keys[i], _ = asTexts(args[i])
			}
			var s jsonScanner
			var scratch []byte
			// lookup returns row i's document and the value its keys reach (jAbsent: none).
			lookup := func(i int) ([]byte, jsonSpan, error) {
				raw := doc.ValueBytes(i)
				kind, st := s.scanDoc(raw, nil, nil)
				if err := st.err(); err != nil {
					return nil, jsonSpan{}, err
				}
				v := docSpan(raw, kind)
				for k := 1; k < len(args) && v.kind != jAbsent; k++ {
					step := jsonStep{index: intAt(args[k], i), idx: true}
					if keys[k] != nil {
						step = jsonStep{key: string(keys[k].ValueBytes(i))}
					}
					v = walk(raw, v, step, path)
				}
				return raw, v, nil
			}
			if text {
				return mapRows[[]byte](array.NewBinaryBuilder(mem, arrow.BinaryTypes.String), rows, args, func(i int) ([]byte, bool, error) {
					raw, v, err := lookup(i)
					if err != nil {
						return nil, false, err
					}
					t, ok := spanText(raw, v, scratch[:0])
					if len(args) == 1 && ok && v.kind != jString && v.kind != jStringEsc && v.kind != jObject && v.kind != jArray {
						// #>> '{}' of a number or boolean document: PostgreSQL's get_scalar
						// keeps the whitespace before the token (not after it).
						t = raw[:v.end]
					}
					if v.kind == jStringEsc {
						scratch = t // reused: never a slice of the document
					}
					return t, ok, nil
				})
			}
			return mapBinary(mem, rows, args, func(i int) ([]byte, bool, error) {
				raw, v, err := lookup(i)
				if err != nil || v.kind == jAbsent {
					return nil, false, err
				}
				return raw[v.start:v.end], true, nil
			})
		}
		n.out = arrow.BinaryTypes.String
		if !text {
			n.out = arrow.BinaryTypes.Binary
		}
		return nil
	}
}

// --- LIKE -------------------------------------------------------------------------------------

// likeKernel is like(s, pattern) (fold: ilike): the pattern compiled once per distinct
// pattern in a batch (like.go), ILIKE's text lower-cased per row as PostgreSQL's lower does.
func likeKernel(fold bool) func(*fnNode) error {
	return func(n *fnNode) error {
		return textPredicate(n, func() func(s, p []byte) (bool, error) {
			var (
				lp      *likePattern
				lastPat []byte
				scratch []byte
			)
			return func(s, p []byte) (bool, error) {
				if lp == nil || !bytes.Equal(p, lastPat) {
					lp = compileLike(p, fold)
					lastPat = append(lastPat[:0], p...)
				}
				if fold {
					scratch = lowerInto(scratch, s)
					return lp.match(scratch)
				}
				return lp.match(s)
			}
		})
	}
}

// textPredicate sets n up as a boolean function of its two text arguments: newPred makes the
// predicate once per batch (it may keep state from row to row, such as a compiled pattern).
func textPredicate(n *fnNode, newPred func() func(s, p []byte) (bool, error)) error {
	if err := textArgs(n, 2, 2, 0, 1); err != nil {
		return err
	}
	n.out = arrow.FixedWidthTypes.Boolean
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		p, _ := asTexts(args[1])
		pred := newPred()
		return mapBools(mem, rows, args, func(i int) (bool, error) {
			return pred(s.ValueBytes(i), p.ValueBytes(i))
		})
	}
	return nil
}

// --- strings ----------------------------------------------------------------------------------

func stringMap(f func(string) string) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 1, 1, 0); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				return f(string(s.ValueBytes(i))), true, nil
			})
		}
		return nil
	}
}

func charLength(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int64
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapInts(mem, rows, args, func(i int) int64 { return int64(utf8.RuneCount(s.ValueBytes(i))) }), nil
	}
	return nil
}

// asciiKernel is PostgreSQL's ascii(text) in a UTF-8 database: the code point of the first
// character, 0 for the empty string.
func asciiKernel(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) {
			b := s.ValueBytes(i)
			if len(b) == 0 {
				return 0, true, nil
			}
			r, _ := utf8.DecodeRune(b)
			return r, true, nil
		})
	}
	return nil
}

// numericScaleKernel is numeric_scale(x, ds), PostgreSQL's scale(numeric): the display scale
// ds (int32, computed by the binder) of each row whose x (decimal128) is not NULL.
func numericScaleKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.types[0] == nil || n.types[0].ID() != arrow.DECIMAL128 || n.types[1] == nil || n.types[1].ID() != arrow.INT32 {
		return errors.New("numeric_scale(decimal128, int32)")
	}
	n.out = arrow.PrimitiveTypes.Int32
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		ds := args[1].(*array.Int32)
		return mapRows[int32](array.NewInt32Builder(mem), rows, args, func(i int) (int32, bool, error) { return ds.Value(i), true, nil })
	}
	return nil
}

// octetLength is PostgreSQL's octet_length (and length of a bytea): the bytes of a text's
// UTF-8 or of a binary value.
func octetLength(n *fnNode) error {
	if err := textArgs(n, 1, 1, 0); err != nil {
		return err
	}
	n.out = arrow.PrimitiveTypes.Int64
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapInts(mem, rows, args, func(i int) int64 { return int64(len(s.ValueBytes(i))) }), nil
	}
	return nil
}

// substringKernel is PostgreSQL's substring(s FROM start [FOR count]): characters from the
// 1-based position start (which may be below 1: the count still starts there); a negative
// count is an error.
func substringKernel(n *fnNode) error {
	if err := textArgs(n, 2, 3, 0); err != nil {
		return err
	}
	for i := 1; i < len(n.args); i++ {
		if err := wantInt(n, i); err != nil {
			return err
		}
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		s, _ := asTexts(args[0])
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			runes := []rune(string(s.ValueBytes(i)))
			start := intAt(args[1], i)
			end := int64(math.MaxInt64)
			if len(args) == 3 {
				cnt := intAt(args[2], i)
				if cnt < 0 {
					return "", false, &DataError{Code: "22011", Msg: "negative substring length not allowed"}
				}
				if start > 0 || cnt <= math.MaxInt64+start {
					end = start + cnt
				}
			}
			lo, hi := max(start, 1), min(end, int64(len(runes))+1)
			if lo >= hi {
				return "", true, nil
			}
			return string(runes[lo-1 : hi-1]), true, nil
		})
	}
	return nil
}

// text3Kernel is a function of three texts → text (replace, translate).
// text3Kernel is a function of three texts → text; f claims from c the value it builds when
// its size is not bounded by its arguments' (valuemem.go).
func text3Kernel(f func(c *valueClaims, s, a, b string) (string, error)) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := textArgs(n, 3, 3, 0, 1, 2); err != nil {
			return err
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			a, _ := asTexts(args[1])
			b, _ := asTexts(args[2])
			c := newValueClaims(mem)
			defer c.release()
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				out, err := f(c, string(s.ValueBytes(i)), string(a.ValueBytes(i)), string(b.ValueBytes(i)))
				return out, err == nil, err
			})
		}
		return nil
	}
}

// replaceText is replace(s, from, to): every occurrence of from replaced; an empty from
// changes nothing. A longer to grows s by its difference with from at each occurrence: the
// result is claimed from c before it is built (54000 past 1 GiB, as PostgreSQL's buffer
// refuses to grow past it).
func replaceText(c *valueClaims, s, from, to string) (string, error) {
	if from == "" {
		return s, nil
	}
	if len(to) > len(from) {
		k := int64(strings.Count(s, from))
		if k > (maxTextBytes-int64(len(s)))/int64(len(to)-len(from)) {
			return "", errTooLarge
		}
		if err := c.value(int64(len(s)) + k*int64(len(to)-len(from))); err != nil {
			return "", err
		}
	}
	return strings.ReplaceAll(s, from, to), nil
}

func startsWith(n *fnNode) error {
	return textPredicate(n, func() func(s, p []byte) (bool, error) {
		return func(s, p []byte) (bool, error) { return bytes.HasPrefix(s, p), nil }
	})
}

func trimKernel(left, right bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := argCount(n, 1, 2); err != nil {
			return err
		}
		for i := range n.args {
			if err := wantText(n, i); err != nil {
				return err
			}
		}
		n.out = arrow.BinaryTypes.String
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			s, _ := asTexts(args[0])
			var chars texts
			if len(args) == 2 {
				chars, _ = asTexts(args[1])
			}
			return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
				set := " "
				if chars != nil {
					set = string(chars.ValueBytes(i))
				}
				v := string(s.ValueBytes(i))
				if left {
					v = strings.TrimLeft(v, set)
				}
				if right {
					v = strings.TrimRight(v, set)
				}
				return v, true, nil
			})
		}
		return nil
	}
}

// variadicText sets up a text function of one or more texts (concat, concat_ws, format).
func variadicText(n *fnNode) error {
	if len(n.args) == 0 {
		return errors.New("takes at least one argument")
	}
	for i := range n.args {
		if err := wantText(n, i); err != nil {
			return err
		}
	}
	n.out = arrow.BinaryTypes.String
	return nil
}

// textsOf reads each of args as text (the kernel checked their types).
func textsOf(args []arrow.Array) []texts {
	ts := make([]texts, len(args))
	for i, a := range args {
		ts[i], _ = asTexts(a)
	}
	return ts
}

// concatKernel is concat (NULL arguments skipped) or || (strict: NULL when any is NULL), or
// with ws concat_ws: the first argument is the separator (NULL when it is NULL) written
// between the others that are not NULL. The arguments must be text (the SQL front end casts
// others to text first).
func concatKernel(strict, ws bool) func(*fnNode) error {
	return func(n *fnNode) error {
		if err := variadicText(n); err != nil {
			return err
		}
		n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
			ts := textsOf(args)
			b := array.NewStringBuilder(mem)
			defer b.Release()
			var (
				buf   []byte
				total textBatch
			)
			parts := ts
			if ws {
				parts = ts[1:]
			}
			for i := range rows {
				if strict && anyNull(args, i) || ws && ts[0].IsNull(i) {
					b.AppendNull()
					continue
				}
				buf = buf[:0]
				first := true
				for _, t := range parts {
					if t.IsNull(i) {
						continue
					}
					if ws && !first {
						buf = append(buf, ts[0].ValueBytes(i)...)
					}
					first = false
					buf = append(buf, t.ValueBytes(i)...)
				}
				if err := total.add(len(buf)); err != nil {
					return nil, err
				}
				b.BinaryBuilder.Append(buf)
			}
			return b.NewArray(), nil
		}
		return nil
	}
}

// --- date/time ----------------------------------------------------------------------------------

// timesAt returns a reader of row i of a timestamp array as a UTC time.Time.
func timesAt(a arrow.Array) (func(i int) time.Time, error) {
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return nil, fmt.Errorf("argument is %s, not a timestamp", a.DataType())
	}
	unit := ts.DataType().(*arrow.TimestampType).Unit
	return func(i int) time.Time { return ts.Value(i).ToTime(unit).UTC() }, nil
}

// instantsAt is timesAt that also reads a date (date32) as its midnight in UTC, PostgreSQL's
// date → timestamp with time zone in a UTC session (date2timestamp). A date's range
// (time.Time's) is wider than timestamp[ns]'s: a kernel of dates whose result is text or an
// interval answers for dates no nanosecond instant holds (to_char(date '1500-01-01', …), age
// of two dates). A date PostgreSQL's timestamp cannot hold (from 294277-01-01 on) is its
// 22008 "date out of range for timestamp".
func instantsAt(a arrow.Array) (func(i int) (time.Time, error), error) {
	if d, ok := a.(*array.Date32); ok {
		return func(i int) (time.Time, error) {
			if int64(d.Value(i)) >= pgTimestampEndDays {
				return time.Time{}, &DataError{Code: "22008", Msg: "date out of range for timestamp"}
			}
			return time.Unix(int64(d.Value(i))*86400, 0).UTC(), nil
		}, nil
	}
	at, err := timesAt(a)
	if err != nil {
		return nil, err
	}
	return func(i int) (time.Time, error) { return at(i), nil }, nil
}

// pgTimestampEndDays is 294277-01-01, the end of PostgreSQL's timestamp range
// (TIMESTAMP_END_JULIAN), in days since 1970-01-01.
var pgTimestampEndDays = time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / 86400

// timestampAdd is PostgreSQL's timestamp with time zone + interval in a UTC session: the
// interval's months first, on the calendar (calendar.AddMonths: the day of month clamped to
// the target month's last), then its days (24 hours each in UTC) and time, given as one
// nanosecond count. The result keeps the argument's type; one outside the nanosecond range of
// int64 is PostgreSQL's "timestamp out of range" (22008).
func timestampAdd(n *fnNode) error {
	if err := argCount(n, 3, 3); err != nil {
		return err
	}
	if n.args[0] == nil || n.types[0].ID() != arrow.TIMESTAMP {
		return errors.New("argument 1 must be a timestamp")
	}
	if err := wantInt(n, 1, 2); err != nil {
		return err
	}
	n.out = n.types[0]
	unit := n.types[0].(*arrow.TimestampType).Unit
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		at, err := timesAt(args[0])
		if err != nil {
			return nil, err
		}
		b := array.NewTimestampBuilder(mem, n.out.(*arrow.TimestampType))
		a, err := mapRows[arrow.Timestamp](b, rows, args, func(i int) (arrow.Timestamp, bool, error) {
			t := calendar.AddMonths(at(i), intAt(args[1], i))
			ns, ok := addNanos(t, intAt(args[2], i))
			if !ok {
				return 0, false, &DataError{Code: "22008", Msg: "timestamp out of range"}
			}
			v, err := arrow.TimestampFromTime(time.Unix(0, ns).UTC(), unit)
			return v, err == nil, err
		})
		return a, err
	}
	return nil
}

// addNanos returns t + d nanoseconds as Unix nanoseconds, false when t or the sum is outside
// int64's nanosecond range (1677-09-21 to 2262-04-11).
func addNanos(t time.Time, d int64) (int64, bool) {
	if t.Before(minNanos) || t.After(maxNanos) {
		return 0, false
	}
	ns := t.UnixNano()
	sum := ns + d
	if (d > 0 && sum < ns) || (d < 0 && sum > ns) {
		return 0, false
	}
	return sum, true
}

// The instants of int64 nanoseconds' range.
var minNanos, maxNanos = time.Unix(0, math.MinInt64).UTC(), time.Unix(0, math.MaxInt64).UTC()

// datePartFields are the fields of date_part/extract, as the SQL front end spells them (the
// enumeration argument, upper case) with PostgreSQL's meaning in UTC.
var datePartFields = map[string]func(t time.Time) int64{
	"YEAR":    func(t time.Time) int64 { return int64(t.Year()) },
	"QUARTER": func(t time.Time) int64 { return int64((t.Month()-1)/3 + 1) },
	"MONTH":   func(t time.Time) int64 { return int64(t.Month()) },
	"WEEK":    func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) },
	"ISOYEAR": func(t time.Time) int64 { y, _ := t.ISOWeek(); return int64(y) },
	"DAY":     func(t time.Time) int64 { return int64(t.Day()) },
	"DOW":     func(t time.Time) int64 { return int64(t.Weekday()) },
	"ISODOW": func(t time.Time) int64 {
		if t.Weekday() == time.Sunday {
			return 7
		}
		return int64(t.Weekday())
	},
	"DOY":         func(t time.Time) int64 { return int64(t.YearDay()) },
	"HOUR":        func(t time.Time) int64 { return int64(t.Hour()) },
	"MINUTE":      func(t time.Time) int64 { return int64(t.Minute()) },
	"MICROSECOND": func(t time.Time) int64 { return int64(t.Second())*1e6 + int64(t.Nanosecond())/1e3 },
	// PostgreSQL's timestamp_part: year 0 is 1 BC, the first year of the decade 0, the
	// century -1 and the millennium -1 (BC centuries and millennia count back from 1 BC).
	"DECADE": func(t time.Time) int64 {
		y := int64(t.Year())
		if y >= 0 {
			return y / 10
		}
		return -((8 - (y - 1)) / 10)
	},
	"CENTURY": func(t time.Time) int64 {
		y := int64(t.Year())
		if y > 0 {
			return (y + 99) / 100
		}
		return -((99 - (y - 1)) / 100)
	},
	"MILLENNIUM": func(t time.Time) int64 {
		y := int64(t.Year())
		if y > 0 {
			return (y + 999) / 1000
		}
		return -((999 - (y - 1)) / 1000)
	},
	// The Julian day of the date (PostgreSQL's date2j; extract(julian from date)).
	"JULIAN_DAY": julianDay,
}

// julianDay is PostgreSQL's date2j of t's date: days since 4714-11-24 BC (Julian day 0).
func julianDay(t time.Time) int64 {
	y, m, d := t.Date()
	return daysFromCivil(int64(y), int64(m), int64(d)) + 2440588
}

// datePartFloatFields are the fields whose value has a fraction (PostgreSQL's extract answers
// them in numeric with six decimals, date_part in double precision): the instant's
// microseconds count, as PostgreSQL's timestamps hold microseconds.
var datePartFloatFields = map[string]func(t time.Time) float64{
	"EPOCH":       func(t time.Time) float64 { return float64(t.Unix()) + float64(t.Nanosecond()/1000)/1e6 },
	"SECOND":      func(t time.Time) float64 { return float64(t.Second()) + float64(t.Nanosecond()/1000)/1e6 },
	"MILLISECOND": func(t time.Time) float64 { return float64(t.Second())*1000 + float64(t.Nanosecond()/1000)/1e3 },
	// date_part('julian', t): the Julian day plus the fraction of the day, as PostgreSQL's
	// timestamp_part computes it in double precision.
	"JULIAN": func(t time.Time) float64 {
		secs := float64((t.Hour()*60+t.Minute())*60+t.Second()) + float64(t.Nanosecond()/1000)/1e6
		return float64(julianDay(t)) + secs/86400
	},
}

func datePart(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	field := n.enums[0]
	if n.args[1] == nil || n.types[1].ID() != arrow.TIMESTAMP && n.types[1].ID() != arrow.DATE32 {
		return errors.New("argument 2 must be a timestamp or a date")
	}
	// A date is PostgreSQL's date_part(text, date), the date read as a timestamp
	// (instantsAt: any date its timestamp holds, years before Christ as extract_date counts
	// them).
	date := n.types[1].ID() == arrow.DATE32
	ff, isFloat := datePartFloatFields[field]
	f, ok := datePartFields[field]
	switch {
	case isFloat:
		n.out = arrow.PrimitiveTypes.Float64
	case !ok:
		return fmt.Errorf("unit %q is not supported", strings.ToLower(field))
	default:
		n.out = arrow.PrimitiveTypes.Int64
		if date {
			f = bcYears(field, f)
		}
	}
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		if !date {
			at, err := timesAt(args[1])
			if err != nil {
				return nil, err
			}
			if isFloat {
				return mapFloats(mem, rows, args[1:2], func(i int) (float64, error) { return ff(at(i)), nil })
			}
			return mapInts(mem, rows, args[1:2], func(i int) int64 { return f(at(i)) }), nil
		}
		at, err := instantsAt(args[1])
		if err != nil {
			return nil, err
		}
		if isFloat {
			return mapRows[float64](array.NewFloat64Builder(mem), rows, args[1:2], func(i int) (float64, bool, error) {
				t, err := at(i)
				return ff(t), err == nil, err
			})
		}
		return mapRows[int64](array.NewInt64Builder(mem), rows, args[1:2], func(i int) (int64, bool, error) {
			t, err := at(i)
			return f(t), err == nil, err
		})
	}
	return nil
}

// extractKernel is extract(field FROM x) as PostgreSQL 15 answers it, numeric and exact: the
// value unscaled at calendar.ExtractScale (the seconds of the minute in microseconds for second,
// millisecond and microsecond; the microseconds since the Unix epoch for epoch), as
// timestamp_part_common and extract_date compute them over microseconds, the nanoseconds
// below the microsecond dropped (toward minus infinity) as datePart's fields do. A date
// argument takes the date fields and epoch (the binder refuses the others as PostgreSQL does).
func extractKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	field := n.enums[0]
	if n.args[1] == nil || (n.types[1].ID() != arrow.TIMESTAMP && n.types[1].ID() != arrow.DATE32) {
		return errors.New("argument 2 must be a timestamp or a date")
	}
	date := n.types[1].ID() == arrow.DATE32
	var f func(t time.Time) int64
	switch field {
	case "EPOCH":
		f = time.Time.UnixMicro
		if date {
			f = time.Time.Unix
		}
	case "SECOND", "MILLISECOND":
		f = datePartFields["MICROSECOND"]
	default:
		var ok bool
		if f, ok = datePartFields[field]; !ok {
			return fmt.Errorf("unit %q is not supported", strings.ToLower(field))
		}
	}
	if date {
		f = bcYears(field, f)
	}
	out := &arrow.Decimal128Type{Precision: 38, Scale: calendar.ExtractScale(field, date)}
	n.out = out
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		var at func(i int) time.Time
		if d, ok := args[1].(*array.Date32); ok {
			// extract_date: the date's own fields, any date.
			at = func(i int) time.Time { return time.Unix(int64(d.Value(i))*86400, 0).UTC() }
		} else {
			var err error
			if at, err = timesAt(args[1]); err != nil {
				return nil, err
			}
		}
		return mapRows[decimal128.Num](array.NewDecimal128Builder(mem, out), rows, args[1:2], func(i int) (decimal128.Num, bool, error) {
			return decimal128.FromI64(f(at(i))), true, nil
		})
	}
	return nil
}

// bcYears is f with PostgreSQL's years before Christ (a date's range reaches them; a
// timestamp's nanoseconds do not): time.Time's year 0 is 1 BC, which timestamp_part_common
// writes -1, and its decade, century and millennium count away from zero (century -1 for 1 to
// 100 BC), as extract_date computes them (DTK_YEAR, DTK_DECADE, DTK_CENTURY, DTK_MILLENNIUM;
// date2isoyear's year likewise).
func bcYears(field string, f func(t time.Time) int64) func(t time.Time) int64 {
	bc := func(y int64) int64 { return y - 1 } // the astronomical year 0 is 1 BC
	switch field {
	case "YEAR":
		return func(t time.Time) int64 {
			if y := int64(t.Year()); y <= 0 {
				return bc(y)
			}
			return f(t)
		}
	case "ISOYEAR":
		return func(t time.Time) int64 {
			if y := f(t); y <= 0 {
				return bc(y)
			}
			return f(t)
		}
	case "DECADE":
		return func(t time.Time) int64 {
			if y := int64(t.Year()); y < 0 {
				return -((8 - (y - 1)) / 10)
			}
			return f(t)
		}
	case "CENTURY":
		return func(t time.Time) int64 {
			if y := int64(t.Year()); y <= 0 {
				return -((99 - (y - 1)) / 100)
			}
			return f(t)
		}
	case "MILLENNIUM":
		return func(t time.Time) int64 {
			if y := int64(t.Year()); y <= 0 {
				return -((999 - (y - 1)) / 1000)
			}
			return f(t)
		}
	}
	return f
}

func toCharKernel(n *fnNode) error {
	if err := argCount(n, 2, 2); err != nil {
		return err
	}
	if n.types[0].ID() != arrow.TIMESTAMP && n.types[0].ID() != arrow.DATE32 {
		return errors.New("argument 1 must be a timestamp or a date")
	}
	if err := wantText(n, 1); err != nil {
		return err
	}
	n.out = arrow.BinaryTypes.String
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		// A date is PostgreSQL's date → timestamp with time zone (to_char's candidate its
		// resolution prefers), its midnight in UTC: read from the date itself, so a date
		// outside timestamp[ns] (to_char(date '1500-01-01', …)) answers as PostgreSQL does.
		at, err := instantsAt(args[0])
		if err != nil {
			return nil, err
		}
		f, _ := asTexts(args[1])
		toChar := ToChar
		if ts, ok := args[0].DataType().(*arrow.TimestampType); ok && ts.TimeZone == "" {
			toChar = ToCharWallclock // a timestamp without time zone
		}
		return mapStrings(mem, rows, args, func(i int) (string, bool, error) {
			t, err := at(i)
			if err != nil {
				return "", false, err
			}
			return toChar(t, string(f.ValueBytes(i))), true, nil
		})
	}
	return nil
}

// --- CASE -------------------------------------------------------------------------------------

// ifThenNode is Substrait's IfThen (SQL CASE, and COALESCE, NULLIF, IS DISTINCT FROM as the SQL
// front end writes them): the first clause whose condition is true (not false, not null) gives
// the row's value, else the else clause. As in PostgreSQL, a condition is evaluated only on the
// rows no earlier clause took, and a value only on the rows it gives, so CASE WHEN d <> 0 THEN
// n / d END never divides by zero.
type ifThenNode struct {
	conds, vals []node // vals has one more entry: the else clause
	typ         arrow.DataType
}

func (c *compiler) ifThen(v *expr.IfThen) (node, error) {
	n := &ifThenNode{}
	for i := range v.NIfs() {
		p := v.IfPair(i)
		cn, err := c.compile(p.If)
		if err != nil {
			return nil, err
		}
		t, err := c.typeOf(cn)
		if err != nil {
			return nil, err
		}
		if t.ID() != arrow.BOOL {
			return nil, fmt.Errorf("ops: compile: CASE condition is %s, not boolean", t)
		}
		vn, err := c.compile(p.Then)
		if err != nil {
			return nil, err
		}
		n.conds, n.vals = append(n.conds, cn), append(n.vals, vn)
	}
	en, err := c.compile(v.Else())
	if err != nil {
		return nil, err
	}
	n.vals = append(n.vals, en)
	for _, vn := range n.vals {
		t, err := c.typeOf(vn)
		if err != nil {
			return nil, err
		}
		switch {
		case n.typ == nil:
			n.typ = t
		case !arrow.TypeEqual(n.typ, t):
			return nil, fmt.Errorf("ops: compile: CASE results of types %s and %s", n.typ, t)
		}
	}
	return n, nil
}

func (n *ifThenNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	mem := compute.GetAllocator(ctx)
	rows := int(b.NumRows())
	// branch[i] is the clause row i takes (len(conds) = else); pending lists the rows no
	// clause has taken yet, as positions in b.
	branch := make([]int, rows)
	pending := make([]int, rows)
	for i := range pending {
		pending[i] = i
	}
	for ci, cn := range n.conds {
		if len(pending) == 0 {
			break
		}
		sub, err := takeRows(ctx, b, pending, rows)
		if err != nil {
			return nil, err
		}
		d, err := cn.eval(ctx, sub)
		sub.Release()
		if err != nil {
			return nil, err
		}
		arr, err := toArray(d, len(pending), mem)
		d.Release()
		if err != nil {
			return nil, err
		}
		cond := arr.(*array.Boolean)
		next := pending[:0:0]
		for k, row := range pending {
			if cond.IsValid(k) && cond.Value(k) {
				branch[row] = ci
			} else {
				next = append(next, row)
			}
		}
		arr.Release()
		pending = next
	}
	for _, row := range pending {
		branch[row] = len(n.conds)
	}
	// Evaluate each value on its rows, then gather: indices point into the concatenation of
	// the values' results.
	byBranch := make([][]int, len(n.vals))
	for row, br := range branch {
		byBranch[br] = append(byBranch[br], row)
	}
	parts := make([]arrow.Array, 0, len(n.vals))
	defer func() { releaseArrays(parts) }()
	indices := make([]int64, rows)
	var offset int64
	for bi, rowsOf := range byBranch {
		if len(rowsOf) == 0 {
			continue
		}
		sub, err := takeRows(ctx, b, rowsOf, rows)
		if err != nil {
			return nil, err
		}
		d, err := n.vals[bi].eval(ctx, sub)
		sub.Release()
		if err != nil {
			return nil, err
		}
		arr, err := toArray(d, len(rowsOf), mem)
		d.Release()
		if err != nil {
			return nil, err
		}
		parts = append(parts, arr)
		for k, row := range rowsOf {
			indices[row] = offset + int64(k)
		}
		offset += int64(len(rowsOf))
	}
	if len(parts) == 0 {
		empty := array.MakeArrayOfNull(mem, n.typ, 0)
		defer empty.Release()
		return compute.NewDatum(empty), nil
	}
	if len(parts) == 1 {
		// One clause took every row, in order (NewDatum retains it).
		return compute.NewDatum(parts[0]), nil
	}
	all, err := array.Concatenate(parts, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	ib.AppendValues(indices, nil)
	idx := ib.NewArray()
	defer idx.Release()
	out, err := takeArray(ctx, all, idx)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return compute.NewDatum(out), nil
}

// takeRows returns the rows of b at positions rows (all of b, retained, when they are all of
// its total rows in order).
func takeRows(ctx context.Context, b arrow.RecordBatch, rows []int, total int) (arrow.RecordBatch, error) {
	if len(rows) == total {
		b.Retain()
		return b, nil
	}
	mem := compute.GetAllocator(ctx)
	ib := array.NewInt64Builder(mem)
	defer ib.Release()
	for _, r := range rows {
		ib.Append(int64(r))
	}
	idx := ib.NewArray()
	defer idx.Release()
	cols := make([]arrow.Array, b.NumCols())
	defer func() { releaseArrays(cols) }()
	for i := range cols {
		c, err := takeArray(ctx, b.Column(i), idx)
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return array.NewRecordBatch(b.Schema(), cols, int64(len(rows))), nil
}

func roundKernel(n *fnNode) error {
	if err := argCount(n, 1, 1); err != nil {
		return err
	}
	if n.types[0].ID() != arrow.FLOAT64 {
		return errors.New("argument 1 must be float64")
	}
	n.out = arrow.PrimitiveTypes.Float64
	n.run = func(mem memory.Allocator, rows int, args []arrow.Array) (arrow.Array, error) {
		x := args[0].(*array.Float64)
		b := array.NewFloat64Builder(mem)
		defer b.Release()
		for i := range rows {
			if x.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.Append(math.RoundToEven(x.Value(i)))
		}
		return b.NewArray(), nil
	}
	return nil
}
