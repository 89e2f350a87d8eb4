package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/compute/exprs"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/scalar"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// Extension URNs this package recognises by name.
const (
	urnDatetime = extensions.SubstraitDefaultURNPrefix + "functions_datetime"
	urnBoolean  = extensions.SubstraitDefaultURNPrefix + "functions_boolean"
	urnString   = extensions.SubstraitDefaultURNPrefix + "functions_string"
)

// Expr is a compiled Substrait scalar expression over one input schema. It is immutable after
// Compile and safe for concurrent use: Eval keeps no state between calls.
//
// What evaluates where:
//   - a subtree made only of field references, literals and functions arrow-go's
//     compute/exprs maps (functions_comparison: equal, not_equal, lt, lte, gt, gte, is_null,
//     is_not_null, is_nan; functions_boolean: and and or of two arguments, not;
//     functions_arithmetic: add, subtract, multiply, divide, power, sqrt, abs; Iceberg's
//     is_in) runs as exprs.ExecuteScalarExpression runs it, its function calls on the calling
//     goroutine (evalSubstrait, synccall.go);
//   - a bare field reference of a top-level column is that column (no copy);
//   - casts run through compute.CastDatum with safe options (an overflow or truncation is an
//     error: Substrait's THROW_EXCEPTION; exprs would cast unsafely), RETURN_NULL casts are
//     refused;
//   - SingularOrList (SQL IN over literals) of text or integer constants looks x up in a Go
//     set built once at compile time (inset.go), any other through compute's is_in; both with
//     SQL's null semantics (x IN (…, NULL) is null when x matches nothing), floats made
//     canonical first (-0 as 0, one NaN: floatcmp.go);
//   - functions_comparison's equal, not_equal, lt, lte, gt and gte of two floats of one type
//     run through numCmpNode, in PostgreSQL's order (NaN equal to NaN and above every other
//     value: floatcmp.go), not arrow-go's IEEE comparisons; those of two signed integers of
//     one type too (exact, as arrow-go's, without its dispatch per batch);
//   - and/or of more than two arguments fold pairwise over and_kleene/or_kleene;
//   - functions_datetime round_calendar and round_temporal with FLOOR rounding in UTC (or
//     without a zone) run through this package's kernels (temporal.go);
//   - functions arrow-go maps whose arguments need this package's kernels are called with
//     callFunction (compute.CallFunction on the calling goroutine, synccall.go) after the same
//     argument mapping exprs applies.
//
// Two arrow-go v18.8.0 defects are worked around: kernels (not, is_not_null at least) read
// input arrays that do not start at offset 0 of their buffers (slices) at the wrong positions,
// so Eval copies such input columns first; casts to strings leak their buffers, so they run on
// Go's allocator and their result is copied into the query's.
type Expr struct {
	in   *arrow.Schema
	anon *arrow.Schema // in with fields named c0, c1…: exprs matches columns by name
	ext  exprs.ExtensionIDSet
	root node
	typ  arrow.DataType
	refs []bool // the input columns e reads
	// refList lists the columns marked in refs, in order: what the estimates per batch walk
	// (budget.go), in O(columns read) rather than O(width).
	refList []int
	// reads are the input columns Eval takes values from (Reads): refs, the bare column, and
	// under a shredded compilation the typed columns of its fields in place of the column of
	// documents. nil for a Column, which reads its bare column alone (O(1) memory per column
	// of a projection keeping n columns, not O(n)).
	reads []bool
	// memos is the number of JSON calls Eval keeps per call (memo.go); 0 when no call is
	// repeated.
	memos int
	// jsonFields are the JSON fields e reads column-at-a-time (jsonfields.go).
	jsonFields []*jsonField
	// deferred is set when e holds deferred_value or deferred_error (deferred.go), which
	// share their evaluations through the operator's jsonShare as JSON fields do.
	deferred bool
	// What EstimateBytes prices (budget.go): the input column e is, -1 unless e is a bare
	// column reference; whether e's output is a string or binary type; the bytes of the string
	// and binary literals e holds.
	bare     int
	varOut   bool
	litBytes int64
	// guard, when set (Guarded), is the condition that decides on which rows e is evaluated
	// when evaluating it on every row fails.
	guard *Expr
	// fitted holds the last batch schema found to have in's column types (fits); shared by
	// the copies Guarded makes.
	fitted *atomic.Pointer[arrow.Schema]
}

// node is one compiled subtree; eval reads the batch b (with the anonymous schema) and returns
// an array of b.NumRows() rows or a scalar, owned by the caller. ctx carries the allocator and
// the extension set.
type node interface {
	eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error)
}

// Compile compiles e, a scalar expression over rows of schema in, resolving function anchors
// through ext (the plan's registry, plan.Plan.ExtensionRegistry(); a zero registry resolves
// nothing, which only expressions without arrow-go functions survive). It type-checks e by
// evaluating it once on an empty batch, so an unknown function, a wrong argument type or an
// unsupported construct fails here, with an error prefixed "ops: ", rather than on the first
// batch.
func Compile(e expr.Expression, in *arrow.Schema, ext expr.ExtensionRegistry) (*Expr, error) {
	return compile(e, in, ext, nil)
}

// newCompiler is a compiler of expressions over rows of in, its functions resolved through ext
// (the default collection's when ext is zero); its anonymous schema and empty batch are in's
// shared input (inputOf), which nobody releases.
func newCompiler(in *arrow.Schema, ext expr.ExtensionRegistry, shred *shredding) *compiler {
	if ext.Set == nil {
		ext = expr.NewEmptyExtensionRegistry(extensions.GetDefaultCollectionWithNoError())
	}
	x := inputOf(in)
	return &compiler{in: in, anon: x.anon, ext: exprs.NewExtensionSetDefault(ext), shred: shred, empty: x.empty}
}

func compile(e expr.Expression, in *arrow.Schema, ext expr.ExtensionRegistry, shred *shredding) (*Expr, error) {
	if e == nil || in == nil {
		return nil, errors.New("ops: compile: nil expression or schema")
	}
	if !e.IsScalar() {
		return nil, errors.New("ops: compile: not a scalar expression")
	}
	c := newCompiler(in, ext, shred)

	// A constant PostgreSQL's planner folds failing is the query's error, wherever it stands.
	e, err := c.foldErrors(e)
	if err != nil {
		return nil, err
	}
	root, err := c.compile(e)
	if err == nil && shred != nil {
		err = shred.err
	}
	if err != nil {
		return nil, unsupportedExpr(err)
	}
	typ, err := c.evalType(root)
	if err != nil {
		var de *DataError
		if errors.As(err, &de) {
			// A constant subtree failing on its values (1/0): the query's error, as PostgreSQL
			// reports it when it folds constants.
			return nil, de
		}
		return nil, unsupportedExpr(fmt.Errorf("ops: compile: %w", err))
	}
	refs := make([]bool, in.NumFields())
	if _, bare := root.(colNode); !bare { // a bare column goes through no kernel
		markRefs(e, refs)
	}
	x := &Expr{in: in, anon: c.anon, ext: c.ext, root: root, typ: typ, refs: refs, bare: -1, varOut: isVar(typ), litBytes: literalBytes(e), fitted: new(atomic.Pointer[arrow.Schema])}
	if col, ok := root.(colNode); ok {
		x.bare = int(col)
	}
	for c, used := range refs {
		if used {
			x.refList = append(x.refList, c)
		}
	}
	if shred == nil && x.bare < 0 {
		x.reads = refs // the same columns (markRefs): one slice of the input's width, not two
	} else {
		x.reads = make([]bool, in.NumFields())
		markRefs(e, x.reads)
	}
	if shred != nil {
		x.reads[shred.col] = false
		for _, at := range shred.used {
			x.reads[at] = true
		}
	}
	if c.reused {
		x.memos = len(c.memos)
	}
	x.jsonFields = c.jsonFields
	x.deferred = c.deferred
	return x, nil
}

// fits reports whether a batch of schema sch has e's input column types (sameTypes), checking
// each schema once: a projection's n expressions over one input cost O(n) per batch, not
// O(n²).
func (e *Expr) fits(sch *arrow.Schema) bool {
	if sch == e.in || e.fitted != nil && sch == e.fitted.Load() {
		return true
	}
	if !sameTypes(sch, e.in) {
		return false
	}
	if e.fitted != nil {
		e.fitted.Store(sch)
	}
	return true
}

// Column returns the Expr of column i of schema in, a bare column reference: Eval returns
// the input column itself, without a copy, and EstimateBytes prices it at 0 (Project counts
// its bytes in its output's size only). It fails when i is out of range. For a projection that
// keeps input columns beside evaluated expressions.
func Column(in *arrow.Schema, i int) (*Expr, error) {
	if in == nil || i < 0 || i >= in.NumFields() {
		return nil, fmt.Errorf("ops: column %d out of range", i)
	}
	x := inputOf(in)
	return &Expr{in: in, anon: x.anon, root: colNode(i), typ: in.Field(i).Type,
		refs: x.none, bare: i, varOut: isVar(in.Field(i).Type), fitted: new(atomic.Pointer[arrow.Schema])}, nil
}

// Reads reports whether Eval takes values from input column i (a bare reference's column, a
// column an expression's kernels read; under CompileShredded the typed columns of its fields,
// not the column of documents). A column no expression of a pipeline reads may be carried
// as nulls (FilterCols).
func (e *Expr) Reads(i int) bool {
	if e.reads == nil { // a Column
		return i >= 0 && i == e.bare
	}
	return i >= 0 && i < len(e.reads) && e.reads[i]
}

// ErrUnsupported is wrapped by every error of Compile: the expression holds a function, an
// argument kind or a type this package does not evaluate. A client's Substrait plan may hold
// such expressions (the front ends refuse them as Unimplemented); the SQL binder never emits
// them.
var ErrUnsupported = errors.New("ops: unsupported expression")

// unsupportedExpr wraps a compile error with ErrUnsupported, keeping its message.
func unsupportedExpr(err error) error {
	return fmt.Errorf("%w: %w", ErrUnsupported, err)
}

// markRefs marks the top-level input columns e reads.
func markRefs(e expr.Expression, refs []bool) {
	switch v := e.(type) {
	case *expr.FieldReference:
		if sf, ok := v.Reference.(*expr.StructFieldRef); ok && sf.Field >= 0 && int(sf.Field) < len(refs) {
			refs[sf.Field] = true
		}
	case *expr.ScalarFunction:
		for i := range v.NArgs() {
			if a, ok := v.Arg(i).(expr.Expression); ok {
				markRefs(a, refs)
			}
		}
	case *expr.Cast:
		markRefs(v.Input, refs)
	case *expr.SingularOrList:
		markRefs(v.Value, refs)
	case *expr.IfThen:
		for i := range v.NIfs() {
			markRefs(v.IfPair(i).If, refs)
			markRefs(v.IfPair(i).Then, refs)
		}
		markRefs(v.Else(), refs)
	}
}

// literalBytes returns the bytes of the string and binary literals of e (those of an IN list
// excepted: they never reach the output).
func literalBytes(e expr.Expression) int64 {
	switch v := e.(type) {
	case *expr.PrimitiveLiteral[string]:
		return int64(len(v.Value))
	case *expr.PrimitiveLiteral[types.FixedChar]:
		return int64(len(v.Value))
	case *expr.ByteSliceLiteral[[]byte]:
		return int64(len(v.Value))
	case *expr.ByteSliceLiteral[types.FixedBinary]:
		return int64(len(v.Value))
	case *expr.ProtoLiteral:
		if s, ok := v.Value.(string); ok {
			return int64(len(s))
		}
	case *expr.ScalarFunction:
		var n int64
		for i := range v.NArgs() {
			if a, ok := v.Arg(i).(expr.Expression); ok {
				n += literalBytes(a)
			}
		}
		return n
	case *expr.Cast:
		return literalBytes(v.Input)
	case *expr.IfThen:
		var n int64
		for i := range v.NIfs() {
			n += literalBytes(v.IfPair(i).Then)
		}
		return n + literalBytes(v.Else())
	}
	return 0
}

// Type returns the Arrow type of the arrays Eval returns.
func (e *Expr) Type() arrow.DataType { return e.typ }

// Schema returns the input schema e was compiled for.
func (e *Expr) Schema() *arrow.Schema { return e.in }

// Eval evaluates e on batch (whose column types must be those of the schema e was compiled
// for) and returns an array of batch.NumRows() rows of e.Type() (a scalar result is
// broadcast), allocated from mem (memory.DefaultAllocator when nil) or sharing batch's buffers;
// the caller releases it. batch stays owned by the caller. Errors are prefixed "ops: " and
// carry no row values: a SQL data exception (division by zero, an overflow, text that does
// not parse as the type it is cast to) is a *DataError, any other kernel failing on values a
// *KernelError.
func (e *Expr) Eval(ctx context.Context, batch arrow.RecordBatch, mem *ledger.Ledger) (arrow.Array, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if e.guard != nil {
		return e.evalGuarded(ctx, batch, mem)
	}
	return e.eval(ctx, batch, mem)
}

// eval is Eval without e's guard.
func (e *Expr) eval(ctx context.Context, batch arrow.RecordBatch, mem *ledger.Ledger) (arrow.Array, error) {
	if !e.fits(batch.Schema()) {
		return nil, fmt.Errorf("ops: evaluate: the batch's columns %s are not the expression's input %s", batch.Schema(), e.in)
	}
	if e.bare >= 0 {
		// A bare column is the batch's own (as colNode evaluates it), without the O(width)
		// anonymous batch: a projection keeping n columns of n costs O(n) per batch.
		return array.MakeFromData(batch.Column(e.bare).Data()), nil
	}
	anon, err := anonBatch(e.anon, batch, e.refs, mem)
	if err != nil {
		return nil, err
	}
	defer anon.Release()
	return e.evalAnon(ctx, batch, anon, mem)
}

// anonBatch is batch under the anonymous schema anon (Expr.anon), the columns marked in refs
// unsliced (unsliced); the caller releases it.
func anonBatch(anon *arrow.Schema, batch arrow.RecordBatch, refs []bool, mem *ledger.Ledger) (arrow.RecordBatch, error) {
	cols, err := unsliced(batch.Columns(), refs, allocator(mem))
	if err != nil {
		return nil, fmt.Errorf("ops: evaluate: %w", err)
	}
	b := array.NewRecordBatch(anon, cols, batch.NumRows())
	releaseArrays(cols)
	return b, nil
}

// evalAnon is eval of an expression that is not a bare column on batch, whose columns have
// e's input types, given as anon: batch under e.anon, the columns e reads unsliced
// (anonBatch).
func (e *Expr) evalAnon(ctx context.Context, batch, anon arrow.RecordBatch, mem *ledger.Ledger) (arrow.Array, error) {
	cctx := exprs.WithExtensionIDSet(computeCtx(ctx, mem), e.ext)
	if e.memos > 0 {
		m := &memo{vals: make([]memoVal, e.memos)}
		defer m.release()
		cctx = context.WithValue(cctx, memoKey{}, m)
	}
	if len(e.jsonFields) > 0 || e.deferred {
		sh, _ := ctx.Value(jsonShareKey{}).(*jsonShare)
		if sh == nil {
			sh = newJSONShare()
			sh.want(e)
			defer sh.reset()
		}
		cctx = context.WithValue(cctx, jsonEvalKey{}, &jsonEval{anon: anon, orig: batch.Columns(), share: sh})
	}
	d, err := e.root.eval(cctx, anon)
	if err != nil {
		if strings.HasPrefix(err.Error(), "ops: ") {
			return nil, err
		}
		return nil, &KernelError{Err: err}
	}
	defer d.Release()
	out, err := toArray(d, int(batch.NumRows()), allocator(mem))
	if err != nil {
		return nil, fmt.Errorf("ops: evaluate: %w", err)
	}
	if !arrow.TypeEqual(out.DataType(), e.typ) || out.Len() != int(batch.NumRows()) {
		out.Release()
		return nil, fmt.Errorf("ops: evaluate: got %d values of %s, want %d of %s", out.Len(), out.DataType(), batch.NumRows(), e.typ)
	}
	return out, nil
}

// unsliced returns cols (retained), with each column marked in refs that does not start at
// offset 0 of its buffers copied to one that does: arrow-go v18.8.0's not and is_not_null
// kernels (at least) read sliced inputs at the wrong positions.
func unsliced(cols []arrow.Array, refs []bool, mem memory.Allocator) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(cols))
	for i, c := range cols {
		if !refs[i] || c.Data().Offset() == 0 {
			c.Retain()
			out[i] = c
			continue
		}
		cp, err := array.Concatenate([]arrow.Array{c}, mem)
		if err != nil {
			releaseArrays(out[:i])
			return nil, err
		}
		out[i] = cp
	}
	return out, nil
}

// KernelError is the error of an arrow-go kernel failing on the values of a batch (an
// overflowing cast or arithmetic, a string that does not parse). Its message withholds the
// kernel's, which may quote row values (partition keys, ids); Unwrap returns the kernel's error
// (errors.Is(err, arrow.ErrInvalid) holds for invalid values) for logs that may hold them.
type KernelError struct{ Err error }

// Error names the kind of failure (invalid value, type, not implemented, index) without the
// kernel's message.
func (e *KernelError) Error() string {
	kind := "failed"
	for _, k := range []struct {
		err  error
		what string
	}{{arrow.ErrInvalid, "met an invalid value"}, {arrow.ErrType, "met a type it does not take"},
		{arrow.ErrNotImplemented, "is not implemented for these types"}, {arrow.ErrIndex, "met an index out of range"}} {
		if errors.Is(e.Err, k.err) {
			kind = k.what
			break
		}
	}
	return "ops: evaluate: a kernel " + kind + " (its message, which may quote row values, is withheld)"
}

// Unwrap returns the kernel's error, whose message may quote row values.
func (e *KernelError) Unwrap() error { return e.Err }

// toArray turns d into an array of n rows (broadcasting a scalar) owned by the caller; d stays
// owned by the caller.
func toArray(d compute.Datum, n int, mem memory.Allocator) (arrow.Array, error) {
	switch v := d.(type) {
	case *compute.ArrayDatum:
		return v.MakeArray(), nil
	case *compute.ScalarDatum:
		if !v.Value.IsValid() {
			// A NULL (a typed NULL literal: a column pruned below a join, scan/joinprune.go):
			// a slice of the process-wide all-null column of its type (NullColumn).
			return NullColumn(mem, v.Type(), n), nil
		}
		return scalar.MakeArrayFromScalar(v.Value, n, mem)
	case *compute.ChunkedDatum:
		chunks := v.Value.Chunks()
		if len(chunks) == 1 {
			chunks[0].Retain()
			return chunks[0], nil
		}
		if len(chunks) == 0 {
			return array.MakeArrayOfNull(mem, v.Type(), 0), nil
		}
		return array.Concatenate(chunks, mem)
	}
	return nil, fmt.Errorf("unexpected result kind %s", d.Kind())
}

// --- compilation ---------------------------------------------------------------------------

type compiler struct {
	in, anon *arrow.Schema
	ext      exprs.ExtensionIDSet
	empty    arrow.RecordBatch
	// memos are the JSON calls compiled so far (memo.go); reused is set when one is shared.
	memos  []memoEntry
	reused bool
	// jsonFields are the JSON fields read column-at-a-time (jsonfields.go).
	jsonFields []*jsonField
	// deferred is set once a deferred_value or deferred_error is compiled.
	deferred bool
	// shred, when set, compiles the JSON fields of one column as references to typed columns
	// (CompileShredded).
	shred *shredding
	// arrowOnlyCalls holds arrowOnly's answers for the calls arrowOnlyKept has seen.
	arrowOnlyCalls map[*expr.ScalarFunction]bool
}

// staticTyped is a node whose result type is known once it is compiled, without evaluating
// it: fnNode (its kernel's set-up says it, and eval checks it), castNode (its target) and a
// memoNode over one of them.
type staticTyped interface {
	// staticType is the node's result type, nil when it is not known without evaluating.
	staticType() arrow.DataType
}

// typeOf returns n's result type: the one it declares (staticTyped), else the type of its
// result on the empty batch. Compiling a call asks its arguments' types, so evaluating each
// argument's whole subtree there would make a chain of n calls cost O(n²) (4,000 real factors
// x*x*…*x took 70 s); each level declaring its type keeps compilation linear (the root is
// still evaluated once on the empty batch by compile, which folds constants: TestChainLinear).
func (c *compiler) typeOf(n node) (arrow.DataType, error) {
	if st, ok := n.(staticTyped); ok {
		if t := st.staticType(); t != nil {
			return t, nil
		}
	}
	return c.evalType(n)
}

// evalType evaluates n on the empty batch and returns its result's type.
func (c *compiler) evalType(n node) (arrow.DataType, error) {
	ctx := exprs.WithExtensionIDSet(compute.WithAllocator(context.Background(), memory.DefaultAllocator), c.ext)
	d, err := n.eval(ctx, c.empty)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	ad, ok := d.(compute.ArrayLikeDatum)
	if !ok {
		return nil, fmt.Errorf("unexpected result kind %s", d.Kind())
	}
	return ad.Type(), nil
}

// conversion is exprs' mapping of a Substrait function call to an arrow-go function call.
type conversion = func(*expr.ScalarFunction, []compute.Datum) (string, []compute.Datum, compute.FunctionOptions, error)

// arrowConv returns exprs' conversion of f, nil when arrow-go has none. It fails when f's
// anchor resolves, through the registry, to another function than f.
func (c *compiler) arrowConv(f *expr.ScalarFunction) (conversion, error) {
	id, conv, ok := c.ext.DecodeFunction(f.FuncRef())
	if !ok {
		return nil, nil
	}
	base := func(s string) string { b, _, _ := strings.Cut(s, ":"); return b }
	if id.URN != f.ID().URN || base(id.Name) != base(f.ID().Name) {
		return nil, fmt.Errorf("ops: function anchor %d resolves to %s:%s in the registry, not %s:%s", f.FuncRef(), id.URN, id.Name, f.ID().URN, f.ID().Name)
	}
	return conv, nil
}

// standardStringKernels are the functions of Substrait's functions_string that a kernel of
// URNPostgres evaluates the same way, by name (Substrait producers such as DataFusion and
// isthmus write them for LIKE, char_length/length, substring/substr, lower, upper,
// starts_with): like is case-sensitive LIKE with no escape character; substring counts
// characters from 1, a start before the first character shortening the result as in
// PostgreSQL (Substrait's LEFT_OF_BEGINNING).
var standardStringKernels = map[string]string{
	"like": "like", "char_length": "char_length", "substring": "substring",
	"lower": "lower", "upper": "upper", "starts_with": "starts_with",
}

func isOwn(f *expr.ScalarFunction) bool {
	return f.ID().URN == urnDatetime && (f.Name() == "round_calendar" || f.Name() == "round_temporal")
}

func isAndOr(f *expr.ScalarFunction) bool {
	return f.ID().URN == urnBoolean && (f.Name() == "and" || f.Name() == "or")
}

// arrowOnly reports whether exprs.ExecuteScalarExpression can run all of e.
func (c *compiler) arrowOnly(e expr.Expression) bool {
	switch v := e.(type) {
	case *expr.FieldReference:
		return v.Root == expr.RootReference && !isInterval(v.GetType())
	case expr.Literal:
		return !isInterval(v.GetType())
	case *expr.ScalarFunction:
		if isOwn(v) || v.ID().URN == URNPostgres || isAndOr(v) || isSignedIntArith(v) || isFloatArith(v) || isNumCmp(v) {
			return false
		}
		if conv, err := c.arrowConv(v); conv == nil || err != nil {
			return false
		}
		for i := range v.NArgs() {
			switch a := v.Arg(i).(type) {
			case types.Enum:
			case expr.Expression:
				if !c.arrowOnlyKept(a) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	return false
}

// arrowOnlyKept is arrowOnly with its answers for function calls kept: compile asks it at
// every level of a nested call, which would walk a chain of n calls n times.
func (c *compiler) arrowOnlyKept(e expr.Expression) bool {
	f, ok := e.(*expr.ScalarFunction)
	if !ok {
		return c.arrowOnly(e)
	}
	if only, seen := c.arrowOnlyCalls[f]; seen {
		return only
	}
	only := c.arrowOnly(f)
	if c.arrowOnlyCalls == nil {
		c.arrowOnlyCalls = make(map[*expr.ScalarFunction]bool)
	}
	c.arrowOnlyCalls[f] = only
	return only
}

// errMissing is the error of an argument that is not there: substrait-go v8.1.1 reads a
// negative (pre-1970) precision timestamp literal from protobuf as a nil expression.
func errMissing(what string) error {
	return fmt.Errorf("ops: compile: %s is missing (substrait-go v8 reads a negative precision timestamp literal from protobuf as nothing)", what)
}

func (c *compiler) compile(e expr.Expression) (node, error) {
	switch v := e.(type) {
	case nil:
		return nil, errMissing("an expression")
	case *expr.FieldReference:
		if v.Root != expr.RootReference {
			return nil, errors.New("ops: compile: only references to the input row are supported")
		}
		if sf, ok := v.Reference.(*expr.StructFieldRef); ok && sf.Child == nil {
			return c.column(v, int(sf.Field))
		}
		return &arrowNode{e: v, schema: c.anon}, nil
	case expr.Literal:
		if n, ok := c.constant(v); ok {
			return n, nil
		}
		return &arrowNode{e: v, schema: c.anon}, nil
	case *expr.Cast:
		if jf, ok := c.fusedCast(v); ok {
			return c.jsonFieldNode(jf), nil
		}
		return c.cast(v)
	case *expr.SingularOrList:
		return c.inList(v)
	case *expr.IfThen:
		return c.ifThen(v)
	case *expr.ScalarFunction:
		if jf, ok := c.jsonFieldOf(v); ok {
			return c.jsonFieldNode(jf), nil
		}
		if jf, ok := c.fusedNumeric(v); ok {
			return c.jsonFieldNode(jf), nil
		}
		if isJSONCall(v) {
			if m := c.shared(v); m != nil {
				return m, nil
			}
			n, err := c.own(v, v.Name())
			if err != nil {
				return nil, err
			}
			return c.remember(v, n), nil
		}
		if isStableFn(v) {
			// stable_value(x) is x (constfold.go: the folder leaves it unfolded).
			x, ok := v.Arg(0).(expr.Expression)
			if !ok || v.NArgs() != 1 {
				return nil, errors.New("ops: compile: stable_value takes 1 argument")
			}
			return c.compile(x)
		}
		if n, ok, err := c.deferredCall(v); ok || err != nil {
			return n, err
		}
		if v.ID().URN == URNPostgres {
			return c.own(v, v.Name())
		}
		if isDecimalNullTest(v) {
			return c.own(v, "numeric_"+v.Name())
		}
		if isSignedIntArith(v) {
			return c.own(v, "int_"+v.Name())
		}
		if isFloatArith(v) {
			return c.own(v, "float_"+v.Name())
		}
		if isNumCmp(v) {
			return c.numCmp(v)
		}
		if k, ok := standardStringKernels[v.Name()]; ok && v.ID().URN == urnString {
			return c.own(v, k)
		}
		if v.ID().URN == urnString && v.Name() == "concat" {
			// Substrait's concat is NULL when any argument is (its default null handling,
			// MIRROR): PostgreSQL's || rather than concat().
			return c.own(v, "concat_strict")
		}
		if isOwn(v) {
			return c.temporal(v)
		}
		if _, err := c.arrowConv(v); err != nil {
			return nil, err
		}
		if isAndOr(v) {
			return c.logic(v)
		}
		if c.arrowOnlyKept(v) {
			return &arrowNode{e: v, schema: c.anon}, nil
		}
		return c.call(v)
	case *expr.DynamicParameter:
		return nil, errors.New("ops: compile: unbound dynamic parameter")
	}
	return nil, fmt.Errorf("ops: compile: %T expressions are not supported", e)
}

func (c *compiler) column(ref *expr.FieldReference, i int) (node, error) {
	if i < 0 || i >= c.in.NumFields() {
		return nil, fmt.Errorf("ops: compile: field %d out of range of %d input columns", i, c.in.NumFields())
	}
	if c.shred != nil && i == c.shred.col && !c.shred.inField {
		return nil, errShredRef
	}
	if t := ref.GetType(); t != nil {
		want, _, err := arrowTypeOf(t, c.ext)
		if err != nil {
			return nil, fmt.Errorf("ops: compile: field %d: %w", i, err)
		}
		got := c.in.Field(i).Type
		// A decimal of the scale: a client's plan may type a sum of decimal<P,S> with its own
		// precision where the executor's is decimal<38,S> (results are checked against the
		// precision they are declared with: scan.Conform).
		ok := arrow.TypeEqual(got, want) ||
			(want.ID() == arrow.STRING && got.ID() == arrow.LARGE_STRING) ||
			(want.ID() == arrow.BINARY && got.ID() == arrow.LARGE_BINARY) ||
			SameDecimalScale(got, want)
		if !ok {
			return nil, fmt.Errorf("ops: compile: field %d is %s in the input, %s in the expression", i, got, want)
		}
	}
	return colNode(i), nil
}

func (c *compiler) cast(v *expr.Cast) (node, error) {
	if v.Input == nil {
		return nil, errors.New("ops: compile: cast without input")
	}
	if v.FailureBehavior == types.BehaviorReturnNil {
		return nil, errors.New("ops: compile: casts returning null on failure are not supported")
	}
	to, _, err := arrowTypeOf(v.Type, c.ext)
	if err != nil {
		return nil, fmt.Errorf("ops: compile: cast target: %w", err)
	}
	in, err := c.compile(v.Input)
	if err != nil {
		return nil, err
	}
	return &castNode{in: in, to: to}, nil
}

func (c *compiler) inList(v *expr.SingularOrList) (node, error) {
	if len(v.Options) == 0 {
		return nil, errors.New("ops: compile: IN with an empty list")
	}
	val, err := c.compile(v.Value)
	if err != nil {
		return nil, err
	}
	if set, arr, ok := newInSet(v.Options); ok {
		return &inNode{value: val, set: arr, lookup: set}, nil
	}
	scalars := make([]scalar.Scalar, len(v.Options))
	var typ arrow.DataType
	for i, o := range v.Options {
		lit, ok := o.(expr.Literal)
		if !ok {
			return nil, errors.New("ops: compile: IN list items must be literals")
		}
		s, err := c.literal(lit)
		if err != nil {
			return nil, err
		}
		s = canonFloatScalar(s)
		if typ == nil {
			typ = s.DataType()
		} else if !arrow.TypeEqual(typ, s.DataType()) {
			return nil, fmt.Errorf("ops: compile: IN list mixes %s and %s", typ, s.DataType())
		}
		scalars[i] = s
	}
	b := array.NewBuilder(memory.DefaultAllocator, typ)
	defer b.Release()
	if err := scalar.AppendSlice(b, scalars); err != nil {
		return nil, fmt.Errorf("ops: compile: IN list: %w", err)
	}
	return &inNode{value: val, set: b.NewArray(), floats: arrow.IsFloating(typ.ID())}, nil
}

// literal evaluates a literal with exprs' conversion into a scalar.
func (c *compiler) literal(l expr.Literal) (scalar.Scalar, error) {
	d, err := (&arrowNode{e: l, schema: c.anon}).eval(exprs.WithExtensionIDSet(context.Background(), c.ext), c.empty)
	if err != nil {
		return nil, fmt.Errorf("ops: compile: literal: %w", err)
	}
	sd, ok := d.(*compute.ScalarDatum)
	if !ok {
		d.Release()
		return nil, errors.New("ops: compile: literal is not a scalar")
	}
	return sd.Value, nil
}

// signature is f's name and its arguments' types without nullability (an enumeration
// argument as enum), for refusals: strpos(string, string).
func signature(f *expr.ScalarFunction) string {
	ts := make([]string, f.NArgs())
	for i := range ts {
		switch a := f.Arg(i).(type) {
		case expr.Expression:
			ts[i] = a.GetType().WithNullability(types.NullabilityRequired).String()
		case types.Enum:
			ts[i] = "enum"
		default:
			ts[i] = "?"
		}
	}
	return f.Name() + "(" + strings.Join(ts, ", ") + ")"
}

func (c *compiler) call(v *expr.ScalarFunction) (node, error) {
	conv, err := c.arrowConv(v)
	if err != nil {
		return nil, err
	}
	if conv == nil {
		return nil, fmt.Errorf("ops: compile: function %s (%s) is not supported", signature(v), v.ID().URN)
	}
	n := &callNode{fn: v, conv: conv, args: make([]callArg, v.NArgs())}
	for i := range v.NArgs() {
		switch a := v.Arg(i).(type) {
		case types.Enum:
			n.args[i].enum = string(a)
		case expr.Expression:
			if n.args[i].node, err = c.compile(a); err != nil {
				return nil, err
			}
		case nil:
			return nil, errMissing(fmt.Sprintf("%s argument %d", v.Name(), i))
		default:
			return nil, fmt.Errorf("ops: compile: %s argument %d of kind %T is not supported", v.Name(), i, a)
		}
	}
	return n, nil
}

// temporal compiles round_calendar and round_temporal (see temporal.go).
func (c *compiler) temporal(f *expr.ScalarFunction) (node, error) {
	name := f.Name()
	// round_calendar(x, rounding, unit, origin, multiple[, zone])
	// round_temporal(x, rounding, unit, multiple[, zone], origin)
	if n := f.NArgs(); n != 5 && n != 6 {
		return nil, fmt.Errorf("ops: compile: %s with %d arguments", name, n)
	}
	xe, ok := f.Arg(0).(expr.Expression)
	if !ok {
		return nil, fmt.Errorf("ops: compile: %s argument 0 is not a value", name)
	}
	x, err := c.compile(xe)
	if err != nil {
		return nil, err
	}
	xt, err := c.typeOf(x)
	if err != nil {
		return nil, fmt.Errorf("ops: compile: %s: %w", name, err)
	}
	ts, ok := xt.(*arrow.TimestampType)
	if !ok {
		return nil, fmt.Errorf("ops: compile: %s of %s: only timestamps are supported", name, xt)
	}
	enum := func(i int) (string, error) {
		s, ok := f.Arg(i).(types.Enum)
		if !ok {
			return "", fmt.Errorf("ops: compile: %s argument %d is not an enumeration", name, i)
		}
		return string(s), nil
	}
	lit := func(i int) (scalar.Scalar, error) {
		l, ok := f.Arg(i).(expr.Literal)
		if f.Arg(i) == nil {
			return nil, errMissing(fmt.Sprintf("%s argument %d", name, i))
		}
		if !ok {
			return nil, fmt.Errorf("ops: compile: %s argument %d must be a literal", name, i)
		}
		s, err := c.literal(l)
		if err == nil && !s.IsValid() {
			err = fmt.Errorf("ops: compile: %s argument %d is null", name, i)
		}
		return s, err
	}
	intArg := func(i int) (int64, error) {
		s, err := lit(i)
		if err != nil {
			return 0, err
		}
		if v, ok := scalarInt64(s); ok {
			return v, nil
		}
		return 0, fmt.Errorf("ops: compile: %s argument %d is %s, not an integer", name, i, s.DataType())
	}
	zoneArg := func(i int) error {
		s, err := lit(i)
		if err != nil {
			return err
		}
		z, ok := s.(*scalar.String)
		if !ok {
			return fmt.Errorf("ops: compile: %s time zone is %s, not a string", name, s.DataType())
		}
		if !isUTC(string(z.Data())) {
			return fmt.Errorf("ops: compile: %s in a time zone other than UTC is not supported", name)
		}
		return nil
	}
	rounding, err := enum(1)
	if err != nil {
		return nil, err
	}
	if rounding != "FLOOR" {
		return nil, fmt.Errorf("ops: compile: %s rounding %s is not supported (FLOOR only)", name, rounding)
	}
	unit, err := enum(2)
	if err != nil {
		return nil, err
	}
	zoned := f.NArgs() == 6
	if name == "round_calendar" {
		origin, err := enum(3)
		if err != nil {
			return nil, err
		}
		multiple, err := intArg(4)
		if err != nil {
			return nil, err
		}
		if zoned {
			if err := zoneArg(5); err != nil {
				return nil, err
			}
		}
		k, err := newCalendarFloor(unit, origin, originNames[origin].weekday, multiple, ts.Unit)
		if err != nil {
			return nil, err
		}
		return &floorNode{x: x, name: name, floor: k.floor}, nil
	}
	multiple, err := intArg(3)
	if err != nil {
		return nil, err
	}
	originAt := 4
	if zoned {
		if err := zoneArg(4); err != nil {
			return nil, err
		}
		originAt = 5
	}
	os, err := lit(originAt)
	if err != nil {
		return nil, err
	}
	ots, ok := os.(*scalar.Timestamp)
	if !ok {
		return nil, fmt.Errorf("ops: compile: round_temporal origin is %s, not a timestamp", os.DataType())
	}
	origin, err := convertTicks(int64(ots.Value), ots.Type.(*arrow.TimestampType).Unit, ts.Unit)
	if err != nil {
		return nil, err
	}
	k, err := newTemporalFloor(unit, multiple, origin, ts.Unit)
	if err != nil {
		return nil, err
	}
	return &floorNode{x: x, name: name, floor: k.floor}, nil
}

// convertTicks converts v from unit from to unit to, exactly.
func convertTicks(v int64, from, to arrow.TimeUnit) (int64, error) {
	f, t := nanosPerTick(from), nanosPerTick(to)
	switch {
	case f == t:
		return v, nil
	case f > t:
		r, ok := mulChecked(v, f/t)
		if !ok {
			return 0, errors.New("ops: compile: round_temporal origin out of range")
		}
		return r, nil
	case v%(t/f) != 0:
		return 0, errors.New("ops: compile: round_temporal origin is finer than the timestamps' unit")
	}
	return v / (t / f), nil
}

// --- nodes ---------------------------------------------------------------------------------

// colNode is a top-level input column.
type colNode int

func (n colNode) eval(_ context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	return compute.NewDatum(b.Column(int(n))), nil
}

// arrowNode is a subtree run as exprs.ExecuteScalarExpression runs it, its function calls on
// the calling goroutine (evalSubstrait).
type arrowNode struct {
	e      expr.Expression
	schema *arrow.Schema
}

func (n *arrowNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	d, err := evalSubstrait(ctx, n.schema, n.e, b)
	if err != nil {
		return nil, arithError(err, n.e)
	}
	return d, nil
}

// constNode is a literal of a fixed-width type without buffers (an integer, a float, a
// boolean, a date or a timestamp) or of a string or binary type, converted once at compile
// time as arrowNode converts it: arrowNode made an exec batch of the whole input batch to
// answer it, for every batch, and a copy of a string literal's bytes (a 1 MB literal
// projected over a table was a megabyte of garbage a batch, outside the query's ledger). The
// string scalar's buffer is Go memory without an allocator, whose Retain and Release do
// nothing: the datum every batch gets shares it, and its Release leaves it intact.
type constNode struct{ s scalar.Scalar }

func (n *constNode) eval(context.Context, arrow.RecordBatch) (compute.Datum, error) {
	return compute.NewDatum(n.s), nil
}

func (n *constNode) staticType() arrow.DataType { return n.s.DataType() }

// constant returns l as a constNode, false when l is not of its types (or exprs does not
// convert it: arrowNode then reports the error where it always did).
func (c *compiler) constant(l expr.Literal) (node, bool) {
	if isInterval(l.GetType()) {
		return nil, false
	}
	s, err := c.literal(l)
	if err != nil {
		return nil, false
	}
	switch s.(type) {
	case *scalar.Int8, *scalar.Int16, *scalar.Int32, *scalar.Int64, *scalar.Float32, *scalar.Float64,
		*scalar.Boolean, *scalar.Date32, *scalar.Timestamp, *scalar.Time64:
		return &constNode{s: s}, true
	case *scalar.String, *scalar.Binary:
		if s.IsValid() {
			return &constNode{s: s}, true
		}
	}
	return nil, false
}

// castNode is a safe cast.
type castNode struct {
	in node
	to arrow.DataType
}

func (n *castNode) staticType() arrow.DataType { return n.to }

func (n *castNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	d, err := n.in.eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	if ad, ok := d.(compute.ArrayLikeDatum); ok && ad.Type().ID() == arrow.TIMESTAMP && n.to.ID() == arrow.STRING {
		return timestampText(ctx, d)
	}
	if ad, ok := d.(compute.ArrayLikeDatum); ok && (ad.Type().ID() == arrow.DATE32 || ad.Type().ID() == arrow.DATE64) && n.to.ID() == arrow.STRING {
		return dateText(ctx, d)
	}
	if ad, ok := d.(compute.ArrayLikeDatum); ok && ad.Type().ID() == arrow.FLOAT64 && n.to.ID() == arrow.STRING {
		return floatText(ctx, d)
	}
	if ad, ok := d.(compute.ArrayLikeDatum); ok && ad.Type().ID() == arrow.FLOAT32 && n.to.ID() == arrow.STRING {
		return float4Texts(ctx, d)
	}
	if ad, ok := d.(compute.ArrayLikeDatum); ok && ad.Type().ID() == arrow.FLOAT64 && n.to.ID() == arrow.FLOAT32 {
		return float8ToFloat4(ctx, d)
	}
	if ad, ok := d.(compute.ArrayLikeDatum); ok && (ad.Type().ID() == arrow.STRING || ad.Type().ID() == arrow.LARGE_STRING) && textCastTarget(n.to) {
		return textCast(ctx, d, n.to)
	}
	if to, ok := narrowDecimalCast(datumType(d), n.to); ok {
		return castNarrowDecimal(ctx, d, to)
	}
	if !arrow.IsBaseBinary(n.to.ID()) && n.to.ID() != arrow.STRING_VIEW && n.to.ID() != arrow.BINARY_VIEW {
		opts := compute.SafeCastOptions(n.to)
		if ad, ok := d.(compute.ArrayLikeDatum); ok && arrow.IsInteger(ad.Type().ID()) && arrow.IsFloating(n.to.ID()) {
			// PostgreSQL rounds an integer to the nearest double (123456789012345678::float8
			// is 1.2345678901234568e+17); arrow-go's safe cast refuses any integer a double
			// does not hold exactly.
			opts.AllowFloatTruncate = true
		}
		out, err := castDatum(ctx, d, opts)
		if err != nil {
			var from arrow.DataType = arrow.Null
			if ad, ok := d.(compute.ArrayLikeDatum); ok {
				from = ad.Type()
			}
			return nil, castError(err, from, n.to)
		}
		return out, nil
	}
	// arrow-go v18.8.0's casts to strings never free the buffers they build with (found by the
	// checked allocator): cast with Go's allocator, whose garbage the collector takes, and copy
	// the result into the query's allocator so that the ledger counts what the query holds.
	out, err := castDatum(compute.WithAllocator(ctx, memory.NewGoAllocator()), d, compute.SafeCastOptions(n.to))
	if err != nil {
		return nil, err
	}
	defer out.Release()
	ad, ok := out.(*compute.ArrayDatum)
	if !ok {
		out.(*compute.ScalarDatum).Value.(scalar.Releasable).Retain()
		return out, nil
	}
	a := ad.MakeArray()
	defer a.Release()
	cp, err := array.Concatenate([]arrow.Array{a}, compute.GetAllocator(ctx))
	if err != nil {
		return nil, err
	}
	defer cp.Release()
	return compute.NewDatum(cp), nil
}

// inNode is value IN (set) with SQL's null semantics.
type inNode struct {
	value node
	set   arrow.Array // Go memory, shared by every evaluation
	// floats: set holds canonical floats (canonFloat) and the values looked up are made
	// canonical too (floatcmp.go).
	floats bool
	// lookup, when set is of text or integers, answers without is_in (inset.go).
	lookup *inSet
}

func (n *inNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	d, err := n.value.eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	if n.lookup != nil {
		if out, ok := n.lookup.eval(ctx, d); ok {
			return out, nil
		}
	}
	if n.floats {
		c, err := canonFloatDatum(ctx, d)
		if err != nil {
			return nil, err
		}
		defer c.Release()
		d = c
	}
	return callFunction(ctx, "is_in", &compute.SetOptions{ValueSet: compute.NewDatumWithoutOwning(n.set), NullBehavior: compute.NullMatchingInconclusive}, d)
}

// callNode is an arrow-go function some of whose arguments need this package's kernels.
type callNode struct {
	fn   *expr.ScalarFunction
	conv conversion
	args []callArg
}

type callArg struct {
	enum string
	node node // nil for an enumeration
}

func (n *callNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	args := make([]compute.Datum, len(n.args))
	defer func() {
		for _, a := range args {
			if a != nil {
				a.Release()
			}
		}
	}()
	for i, a := range n.args {
		if a.node == nil {
			args[i] = compute.NewDatum(scalar.NewStringScalar(a.enum))
			continue
		}
		d, err := a.node.eval(ctx, b)
		if err != nil {
			return nil, err
		}
		args[i] = d
	}
	fname, cargs, opts, err := n.conv(n.fn, args)
	if err != nil {
		return nil, err
	}
	out, err := callFunction(ctx, fname, opts, cargs...)
	if err != nil {
		return nil, arithError(err, n.fn)
	}
	return out, nil
}

// floorNode applies a temporal floor kernel to a timestamp subtree.
type floorNode struct {
	x     node
	name  string
	floor func(int64) (int64, bool)
}

func (n *floorNode) eval(ctx context.Context, b arrow.RecordBatch) (compute.Datum, error) {
	d, err := n.x.eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer d.Release()
	mem := compute.GetAllocator(ctx)
	a, err := toArray(d, int(b.NumRows()), mem)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return nil, fmt.Errorf("%s of %s", n.name, a.DataType())
	}
	out, err := floorTimestamps(ts, mem, n.name, n.floor)
	if err != nil {
		return nil, err
	}
	defer out.Release()
	return compute.NewDatum(out), nil
}
