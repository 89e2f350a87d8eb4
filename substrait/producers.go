package substrait

import (
	"cmp"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	extpb "github.com/substrait-io/substrait-protobuf/go/substraitpb/extensions"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The encodings of the Substrait producers people use (DataFusion, ibis-substrait, Substrait
// Java's isthmus, substrait-python) that substrait-go v8 cannot resolve as they are, rewritten
// into equivalent plans before decoding (normalizeExtensions, normalizeTimestamps):
//
//   - function declarations whose extension reference resolves to no URN the plan declares:
//     DataFusion 55 writes the sentinel 4294967295 and no URN declarations; producers of
//     Substrait before 0.74 (ibis-substrait 4) reference extension URIs, the Plan's removed
//     field 1 (extension_uris: anchor 1, uri 2) and the declaration's removed field 1
//     (extension_uri_reference), which substrait-protobuf v0.85 keeps as unknown fields;
//   - aggregate functions declared by their simple name (count, sum, min…) where the standard
//     extension has several variants, which substrait-go v8.1.1 decodes into a function
//     without a declaration;
//   - functions named by a producer other than the standard extensions do (standardAliases);
//   - type variations no declaration defines (DataFusion's string views and large strings:
//     physical layouts that do not change a value);
//   - timestamps of any precision, with or without a zone (the table's times are UTC, and a
//     zone-less timestamp means UTC, as in a UTC session).

// NoExtensionReference is the extension reference DataFusion writes on every function
// declaration (u32::MAX), which names no declared URN: such functions are resolved by name.
const NoExtensionReference = math.MaxUint32

// standardURNOrder is the order in which a function name that resolves to no declared URN
// is looked up in the standard extensions: the first of these files holding a function of
// that name and kind (scalar or aggregate) wins; files not listed follow in URN order.
var standardURNOrder = []string{
	"functions_comparison", "functions_boolean", "functions_arithmetic", "functions_string",
	"functions_datetime", "functions_aggregate_generic", "functions_rounding",
	"functions_logarithmic", "functions_arithmetic_decimal", "functions_aggregate_approx",
	"functions_aggregate_decimal_output", "functions_set",
}

// standardAliases maps names producers are known to write for a standard function to its
// standard name: DataFusion 55 writes character_length for functions_string's char_length.
var standardAliases = map[string]string{
	"character_length": "char_length",
}

// functionIndex lists the collection's functions by URN and simple name.
type functionIndex struct {
	urns      []string // standard URNs in lookup order
	scalar    map[string]map[string]bool
	aggregate map[string]map[string][]variantArity
	// window holds the window functions, the aggregates among them (an aggregate is also a
	// window function).
	window map[string]map[string][]variantArity
}

// fnKind is how a plan calls a function: as a scalar, aggregate or window function.
type fnKind uint8

const (
	fnScalar fnKind = iota
	fnAggregate
	fnWindow
)

// variantArity is one variant of an aggregate or window function: its compound name and the
// argument counts it takes (max < 0: any).
type variantArity struct {
	compound string
	min, max int
}

// indexVariants appends each variant to idx by URN and simple name, sorted by compound name.
func indexVariants[V interface {
	URN() string
	Name() string
	CompoundName() string
	MinArgumentCount() int
	MaxArgumentCount() int
}](idx map[string]map[string][]variantArity, vs []V) {
	for _, v := range vs {
		if idx[v.URN()] == nil {
			idx[v.URN()] = map[string][]variantArity{}
		}
		idx[v.URN()][v.Name()] = append(idx[v.URN()][v.Name()], variantArity{compound: v.CompoundName(), min: v.MinArgumentCount(), max: v.MaxArgumentCount()})
	}
	for _, m := range idx {
		for _, vs := range m {
			slices.SortFunc(vs, func(a, b variantArity) int { return strings.Compare(a.compound, b.compound) })
		}
	}
}

var (
	fnIndexOnce sync.Once
	fnIndex     *functionIndex
)

func functions() *functionIndex {
	fnIndexOnce.Do(func() {
		c := collection()
		ix := &functionIndex{scalar: map[string]map[string]bool{}, aggregate: map[string]map[string][]variantArity{},
			window: map[string]map[string][]variantArity{}}
		for _, v := range c.GetAllScalarFunctions() {
			if ix.scalar[v.URN()] == nil {
				ix.scalar[v.URN()] = map[string]bool{}
			}
			ix.scalar[v.URN()][v.Name()] = true
		}
		indexVariants(ix.aggregate, c.GetAllAggregateFunctions())
		indexVariants(ix.window, c.GetAllWindowFunctions())
		seen := map[string]bool{}
		for _, f := range standardURNOrder {
			u := extensions.SubstraitDefaultURNPrefix + f
			if c.URNLoaded(u) {
				ix.urns, seen[u] = append(ix.urns, u), true
			}
		}
		var rest []string
		for u := range ix.scalar {
			rest = append(rest, u)
		}
		for u := range ix.aggregate {
			rest = append(rest, u)
		}
		slices.Sort(rest)
		for _, u := range slices.Compact(rest) {
			if !seen[u] && strings.HasPrefix(u, extensions.SubstraitDefaultURNPrefix) {
				ix.urns, seen[u] = append(ix.urns, u), true
			}
		}
		fnIndex = ix
	})
	return fnIndex
}

// has reports whether urn holds a function of that simple name and kind.
func (ix *functionIndex) has(urn, name string, k fnKind) bool {
	switch k {
	case fnAggregate:
		return len(ix.aggregate[urn][name]) > 0
	case fnWindow:
		return len(ix.window[urn][name]) > 0
	}
	return ix.scalar[urn][name]
}

// URNOfURI maps an extension URI of a producer of Substrait before URNs to the URN of the
// same file: a URI whose path ends in a standard extension's file name
// (…/extensions/functions_arithmetic.yaml) is that extension
// (extension:io.substrait:functions_arithmetic); flightsrv's own extension URI is URNPostgres.
// It returns false for any other URI.
func URNOfURI(uri string) (string, bool) {
	if uri == ownExtensionURI {
		return URNPostgres, true
	}
	base := path.Base(strings.TrimRight(uri, "/"))
	stem, ok := strings.CutSuffix(base, ".yaml")
	if !ok {
		stem, ok = strings.CutSuffix(base, ".yml")
	}
	if !ok || stem == "" {
		return "", false
	}
	urn := extensions.SubstraitDefaultURNPrefix + stem
	if !collection().URNLoaded(urn) {
		return "", false
	}
	return urn, true
}

// fnUse is how a plan calls one function anchor: as a scalar, aggregate or window function,
// with which argument counts (arities: the function references of its aggregate and window
// calls, by argument count).
type fnUse struct {
	scalar, aggregate, window bool
	arities                   map[int][]*uint32
	calls                     []*substraitpb.Expression_ScalarFunction
}

// normalizeExtensions resolves every function declaration of pb to a URN the collection
// holds and a name substrait-go decodes with a declaration, rewriting pb in place: by its
// URN reference, else its URI reference (URNOfURI), else its name in the standard extensions
// (standardURNOrder); an alias a producer writes is renamed (standardAliases); an aggregate
// function declared by an ambiguous simple name gets the compound name of the first variant
// (in compound-name order) taking its argument count, an anchor called with several argument
// counts being split into one anchor per count. Type variation references no declaration
// defines are cleared. A function that resolves nowhere is Unimplemented, naming its anchor
// and name and the extension it was declared in (URN, URI, or none).
func normalizeExtensions(pb *substraitpb.Plan) error {
	ix := functions()
	urnAnchors := map[uint32]string{}
	for _, u := range pb.GetExtensionUrns() {
		urnAnchors[u.GetExtensionUrnAnchor()] = u.GetUrn()
	}
	uriAnchors := readExtensionURIs(pb.ProtoReflect().GetUnknown())
	uses := map[uint32]*fnUse{}
	variations := map[uint32]bool{}
	for _, d := range pb.GetExtensions() {
		if tv := d.GetExtensionTypeVariation(); tv != nil {
			variations[tv.GetTypeVariationAnchor()] = true
		}
	}
	collectUses(pb.ProtoReflect(), uses, variations)
	if err := checkAnchors(pb, uses); err != nil {
		return err
	}

	anchorOf := map[string]uint32{}
	var maxURN uint32
	for a, u := range urnAnchors {
		anchorOf[u] = a
		maxURN = max(maxURN, a)
	}
	urnAnchor := func(urn string) uint32 {
		if a, ok := anchorOf[urn]; ok {
			return a
		}
		maxURN++
		anchorOf[urn] = maxURN
		pb.ExtensionUrns = append(pb.ExtensionUrns, &extpb.SimpleExtensionURN{ExtensionUrnAnchor: maxURN, Urn: urn})
		return maxURN
	}
	var maxFn uint32
	for _, d := range pb.GetExtensions() {
		if f := d.GetExtensionFunction(); f != nil {
			maxFn = max(maxFn, f.GetFunctionAnchor())
		}
	}
	var added []*extpb.SimpleExtensionDeclaration
	unused := map[*extpb.SimpleExtensionDeclaration]bool{}
	for _, d := range pb.GetExtensions() {
		var ref *uint32
		var unknown protoreflect.RawFields
		var m protoreflect.Message
		switch {
		case d.GetExtensionFunction() != nil:
			f := d.GetExtensionFunction()
			ref, m = &f.ExtensionUrnReference, f.ProtoReflect()
		case d.GetExtensionType() != nil:
			t := d.GetExtensionType()
			ref, m = &t.ExtensionUrnReference, t.ProtoReflect()
		case d.GetExtensionTypeVariation() != nil:
			t := d.GetExtensionTypeVariation()
			ref, m = &t.ExtensionUrnReference, t.ProtoReflect()
		default:
			continue
		}
		unknown = m.GetUnknown()
		urn, declared := urnAnchors[*ref]
		declaredIn := "no extension the plan declares"
		if declared {
			declaredIn = urn
		} else if uriRef, ok := readVarintField(unknown, 1); ok {
			if uri, ok := uriAnchors[uint32(uriRef)]; ok {
				declaredIn = uri
				if u, ok := URNOfURI(uri); ok {
					urn, declared = u, true
				}
			}
		}
		f := d.GetExtensionFunction()
		if f == nil {
			if declared {
				*ref = urnAnchor(urn)
				m.SetUnknown(nil)
			}
			continue
		}
		use := uses[f.GetFunctionAnchor()]
		if use == nil {
			if declared {
				*ref = urnAnchor(urn)
				m.SetUnknown(nil)
			} else {
				unused[d] = true
			}
			continue // declared but never called: decoded as it is, or dropped
		}
		kind := fnScalar
		switch {
		case use.aggregate:
			kind = fnAggregate
		case use.window:
			kind = fnWindow
		}
		simple, _, _ := strings.Cut(f.GetName(), ":")
		if alias, ok := standardAliases[simple]; ok {
			simple = alias
			f.Name = alias
		}
		if urn == URNDatetime && kind == fnScalar && datetimeComparisons[simple] {
			// isthmus declares timestamp comparisons in functions_datetime (lt:pts_pts): the
			// same comparison as functions_comparison's, which the executor runs.
			urn, f.Name = URNComparison, simple
		}
		if !declared && kind == fnScalar && dataFusionScalars[simple] {
			// DataFusion's own function of that name, bound after decoding (datafusion.go).
			urn, declared = urnDataFusion, true
			f.Name = dataFusionPrefix + simple
		}
		if !strings.HasPrefix(f.GetName(), dataFusionPrefix) && (!declared || !ix.has(urn, simple, kind)) {
			if found, ok := ix.lookup(simple, kind); ok {
				urn, declared = found, true
			} else if kind == fnScalar && ownEquivalents[simple] {
				urn, declared = URNPostgres, true
			}
		}
		if !declared {
			return errorf(Unimplemented, "function %q (extension function anchor %d, declared in %s) is not in this server's Substrait function extensions (the standard ones and %s)", f.GetName(), f.GetFunctionAnchor(), declaredIn, URNPostgres)
		}
		*ref = urnAnchor(urn)
		m.SetUnknown(nil)
		if err := fixScalarCalls(urn, simple, f.GetFunctionAnchor(), use.calls); err != nil {
			return err
		}
		if kind == fnScalar {
			continue
		}
		variants := ix.aggregate[urn][simple]
		id := extensions.ID{URN: urn, Name: f.GetName()}
		if _, ok := collection().GetAggregateFunc(id); ok && kind == fnAggregate {
			continue // a compound name of urn, or a unique simple name: substrait-go resolves it
		}
		if kind == fnWindow {
			variants = ix.window[urn][simple]
			if _, ok := collection().GetWindowFunc(id); ok {
				continue
			}
		}
		// An ambiguous simple name, or a compound name urn does not hold (another file's
		// signature): the variant of the call's argument count.
		first := true
		for _, n := range sortedKeys(use.arities) {
			var pick *variantArity
			for i, v := range variants {
				if n >= v.min && (v.max < 0 || n <= v.max) {
					pick = &variants[i]
					break
				}
			}
			if pick == nil {
				what := "aggregate"
				if kind == fnWindow {
					what = "window"
				}
				return errorf(Unimplemented, "%s function %q (extension function anchor %d) with %d arguments is not in %s", what, simple, f.GetFunctionAnchor(), n, urn)
			}
			if first {
				f.Name, first = pick.compound, false
				continue
			}
			maxFn++
			for _, call := range use.arities[n] {
				*call = maxFn
			}
			added = append(added, &extpb.SimpleExtensionDeclaration{MappingType: &extpb.SimpleExtensionDeclaration_ExtensionFunction_{
				ExtensionFunction: &extpb.SimpleExtensionDeclaration_ExtensionFunction{ExtensionUrnReference: *ref, FunctionAnchor: maxFn, Name: pick.compound}}})
		}
	}
	pb.Extensions = append(slices.DeleteFunc(pb.Extensions, func(d *extpb.SimpleExtensionDeclaration) bool { return unused[d] }), added...)
	pb.ProtoReflect().SetUnknown(dropField(pb.ProtoReflect().GetUnknown(), 1))
	resolved := map[uint32]extensions.ID{}
	urns := map[uint32]string{}
	for _, u := range pb.GetExtensionUrns() {
		urns[u.GetExtensionUrnAnchor()] = u.GetUrn()
	}
	for _, d := range pb.GetExtensions() {
		if f := d.GetExtensionFunction(); f != nil {
			simple, _, _ := strings.Cut(f.GetName(), ":")
			resolved[f.GetFunctionAnchor()] = extensions.ID{URN: urns[f.GetExtensionUrnReference()], Name: simple}
		}
	}
	widenIntegerResults(pb.ProtoReflect(), resolved)
	return nil
}

// i64Results are the standard functions whose kernel here returns i64 (PostgreSQL's integer
// results are bigint there): a call declaring a narrower integer result (DataFusion and
// isthmus declare char_length as i32) is rewritten by widenIntegerResults.
var i64Results = map[extensions.ID]bool{{URN: URNString, Name: "char_length"}: true}

// widenIntegerResults rewrites, in m, each call of an i64Results function declaring an i8,
// i16 or i32 result into a cast of the same call declaring i64 to the declared type, so that
// the values the executor computes have the type the plan declares. The results of sum over
// integers become i64 and of avg over integers fp64, as the executor computes them and as
// PostgreSQL answers (bigint, and a fractional average: Calcite declares SUM and AVG of an
// INTEGER as INTEGER, and its AVG truncates). It also turns fixedchar
// literals into string literals (Calcite writes 'ORD' as char(3)): the executor's strings are
// varchar, and a quoted literal has no padding to keep.
func widenIntegerResults(m protoreflect.Message, fns map[uint32]extensions.ID) {
	switch v := m.Interface().(type) {
	case *substraitpb.Expression:
		if f := v.GetScalarFunction(); f != nil && i64Results[fns[f.GetFunctionReference()]] {
			t := f.GetOutputType()
			n, wide, ok := intNullability(t)
			if !ok || wide {
				goto children
			}
			f.OutputType = &substraitpb.Type{Kind: &substraitpb.Type_I64_{I64: &substraitpb.Type_I64{Nullability: n}}}
			v.RexType = &substraitpb.Expression_Cast_{Cast: &substraitpb.Expression_Cast{
				Type: t, Input: &substraitpb.Expression{RexType: &substraitpb.Expression_ScalarFunction_{ScalarFunction: f}},
				FailureBehavior: substraitpb.Expression_Cast_FAILURE_BEHAVIOR_THROW_EXCEPTION}}
			for _, a := range f.GetArguments() {
				widenIntegerResults(a.ProtoReflect(), fns)
			}
			return
		}
	case *substraitpb.AggregateFunction:
		if t := widenedResult(fns[v.GetFunctionReference()].Name, v.GetOutputType()); t != nil {
			v.OutputType = t
		}
	case *substraitpb.Expression_WindowFunction:
		// An aggregate over a window is typed as the aggregate is.
		if t := widenedResult(fns[v.GetFunctionReference()].Name, v.GetOutputType()); t != nil {
			v.OutputType = t
		}
	case *substraitpb.Expression_Literal:
		if fc, ok := v.GetLiteralType().(*substraitpb.Expression_Literal_FixedChar); ok {
			v.LiteralType = &substraitpb.Expression_Literal_String_{String_: fc.FixedChar}
			return
		}
	}
children:
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				widenIntegerResults(v.List().Get(i).Message(), fns)
			}
		case fd.Kind() == protoreflect.MessageKind:
			widenIntegerResults(v.Message(), fns)
		}
		return true
	})
}

// datetimeComparisons are the comparisons functions_datetime declares for timestamps, which
// are functions_comparison's comparisons of the same name.
var datetimeComparisons = map[string]bool{"lt": true, "lte": true, "gt": true, "gte": true}

// ownEquivalents are the functions producers write that no standard extension holds and
// that URNPostgres evaluates as they mean them, by the same name: DataFusion's ilike
// (PostgreSQL's ILIKE).
var ownEquivalents = map[string]bool{"ilike": true}

// booleanFunctions are the standard scalar functions outside functions_comparison and
// functions_boolean (which all return boolean) whose result is boolean whatever their
// arguments.
var booleanFunctions = map[string]bool{"like": true, "starts_with": true, "ends_with": true, "contains": true}

// intNullability is the nullability of an integer type t; wide reports i64, ok false a type
// that is not an integer.
func intNullability(t *substraitpb.Type) (n substraitpb.Type_Nullability, wide, ok bool) {
	switch k := t.GetKind().(type) {
	case *substraitpb.Type_I8_:
		return k.I8.GetNullability(), false, true
	case *substraitpb.Type_I16_:
		return k.I16.GetNullability(), false, true
	case *substraitpb.Type_I32_:
		return k.I32.GetNullability(), false, true
	case *substraitpb.Type_I64_:
		return k.I64.GetNullability(), true, true
	}
	return 0, false, false
}

// widenedResult is the result type of sum (i64) or avg (fp64) declared as an integer type t
// (of t's nullability); nil for any other function or type.
func widenedResult(name string, t *substraitpb.Type) *substraitpb.Type {
	n, _, ok := intNullability(t)
	if !ok {
		return nil
	}
	switch name {
	case "sum":
		return &substraitpb.Type{Kind: &substraitpb.Type_I64_{I64: &substraitpb.Type_I64{Nullability: n}}}
	case "avg":
		return &substraitpb.Type{Kind: &substraitpb.Type_Fp64{Fp64: &substraitpb.Type_FP64{Nullability: n}}}
	}
	return nil
}

// fixScalarCalls rewrites the calls of one scalar function (urn, simple name) that
// substrait-go cannot decode as written: a call without an output type (DataFusion writes
// none on like) gets boolean when the function's result is always boolean, and like's third
// argument (and ilike's) when it is a null literal (DataFusion's "no escape character") is
// dropped. A call
// still without an output type is InvalidArgument naming the function.
func fixScalarCalls(urn, name string, anchor uint32, calls []*substraitpb.Expression_ScalarFunction) error {
	for _, c := range calls {
		if (name == "like" || name == "ilike") && len(c.Arguments) == 3 && c.Arguments[2].GetValue().GetLiteral().GetNull() != nil {
			c.Arguments = c.Arguments[:2]
		}
		if c.OutputType != nil && c.OutputType.GetKind() != nil {
			continue
		}
		if urn == URNComparison || urn == URNBoolean || (urn == URNString && booleanFunctions[name]) || (urn == URNPostgres && name == "ilike") {
			c.OutputType = &substraitpb.Type{Kind: &substraitpb.Type_Bool{Bool: &substraitpb.Type_Boolean{Nullability: substraitpb.Type_NULLABILITY_NULLABLE}}}
			continue
		}
		return invalidPlan("a call of function %q (extension function anchor %d) has no output type", name, anchor)
	}
	return nil
}

// lookup finds the standard URN holding a function of that simple name and kind, in
// standardURNOrder.
func (ix *functionIndex) lookup(name string, k fnKind) (string, bool) {
	for _, u := range ix.urns {
		if ix.has(u, name, k) {
			return u, true
		}
	}
	return "", false
}

// sortedKeys returns m's keys in increasing order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// collectUses records how every function anchor is called in m and clears the type
// variation references that no declaration defines (variations).
func collectUses(m protoreflect.Message, uses map[uint32]*fnUse, variations map[uint32]bool) {
	use := func(anchor uint32) *fnUse {
		u := uses[anchor]
		if u == nil {
			u = &fnUse{arities: map[int][]*uint32{}}
			uses[anchor] = u
		}
		return u
	}
	switch v := m.Interface().(type) {
	case *substraitpb.Expression_ScalarFunction:
		u := use(v.GetFunctionReference())
		u.scalar = true
		u.calls = append(u.calls, v)
	case *substraitpb.AggregateFunction:
		u := use(v.GetFunctionReference())
		u.aggregate = true
		u.arities[len(v.GetArguments())] = append(u.arities[len(v.GetArguments())], &v.FunctionReference)
	case *substraitpb.Expression_WindowFunction:
		u := use(v.GetFunctionReference())
		u.window = true
		u.arities[len(v.GetArguments())] = append(u.arities[len(v.GetArguments())], &v.FunctionReference)
	}
	if fd := m.Descriptor().Fields().ByName("type_variation_reference"); fd != nil && fd.Kind() == protoreflect.Uint32Kind {
		if r := uint32(m.Get(fd).Uint()); r != 0 && !variations[r] {
			m.Clear(fd)
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				collectUses(v.List().Get(i).Message(), uses, variations)
			}
		case fd.Kind() == protoreflect.MessageKind:
			collectUses(v.Message(), uses, variations)
		}
		return true
	})
}

// checkAnchors refuses a malformed plan's extension declarations (ErrInvalidPlan, naming the
// anchor): an extension URN anchor or function anchor declared twice with different contents
// (the same declaration repeated is one declaration), and a function reference (uses, from
// collectUses) to an anchor no declaration defines. substrait-go decoded the first as
// whichever declaration it read last, and refused the second as an unknown function
// (Unimplemented), where the plan is at fault.
func checkAnchors(pb *substraitpb.Plan, uses map[uint32]*fnUse) error {
	urns := map[uint32]string{}
	for _, u := range pb.GetExtensionUrns() {
		a := u.GetExtensionUrnAnchor()
		if prev, ok := urns[a]; ok && prev != u.GetUrn() {
			return invalidPlan("extension URN anchor %d is declared twice (%q and %q)", a, prev, u.GetUrn())
		}
		urns[a] = u.GetUrn()
	}
	fns := map[uint32]*extpb.SimpleExtensionDeclaration_ExtensionFunction{}
	for _, d := range pb.GetExtensions() {
		f := d.GetExtensionFunction()
		if f == nil {
			continue
		}
		a := f.GetFunctionAnchor()
		if prev, ok := fns[a]; ok && !proto.Equal(prev, f) {
			return invalidPlan("extension function anchor %d is declared twice (%q and %q)", a, prev.GetName(), f.GetName())
		}
		fns[a] = f
	}
	for _, a := range sortedKeys(uses) {
		if fns[a] == nil {
			return invalidPlan("function anchor %d is referenced and no extension declaration of the plan defines it", a)
		}
	}
	return nil
}

// readExtensionURIs reads the Plan's removed field 1, extension_uris (SimpleExtensionURI:
// extension_uri_anchor 1, uri 2), from its unknown fields.
func readExtensionURIs(raw protoreflect.RawFields) map[uint32]string {
	out := map[uint32]string{}
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return out
		}
		raw = raw[n:]
		if num == 1 && typ == protowire.BytesType {
			msg, n := protowire.ConsumeBytes(raw)
			if n < 0 {
				return out
			}
			raw = raw[n:]
			anchor, _ := readVarintField(msg, 1)
			uri, _ := readBytesField(msg, 2)
			out[uint32(anchor)] = string(uri)
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, raw)
		if n < 0 {
			return out
		}
		raw = raw[n:]
	}
	return out
}

// readVarintField reads the last varint field num of raw.
func readVarintField(raw []byte, num protowire.Number) (uint64, bool) {
	return lastField(raw, num, protowire.VarintType, protowire.ConsumeVarint)
}

// readBytesField reads the last length-delimited field num of raw.
func readBytesField(raw []byte, num protowire.Number) ([]byte, bool) {
	return lastField(raw, num, protowire.BytesType, protowire.ConsumeBytes)
}

// lastField reads, with consume, the last field num of wire type typ in raw, skipping the
// others; found is false when there is none (or raw stops parsing before one).
func lastField[T any](raw []byte, num protowire.Number, typ protowire.Type, consume func([]byte) (T, int)) (v T, found bool) {
	for len(raw) > 0 {
		fn, ft, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return v, found
		}
		raw = raw[n:]
		if fn == num && ft == typ {
			x, n := consume(raw)
			if n < 0 {
				return v, found
			}
			v, found, raw = x, true, raw[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(fn, ft, raw)
		if n < 0 {
			return v, found
		}
		raw = raw[n:]
	}
	return v, found
}

// dropField returns raw without its fields numbered num.
func dropField(raw protoreflect.RawFields, num protowire.Number) protoreflect.RawFields {
	var out protoreflect.RawFields
	for len(raw) > 0 {
		fn, typ, n := protowire.ConsumeTag(raw)
		if n < 0 {
			return out
		}
		m := protowire.ConsumeFieldValue(fn, typ, raw[n:])
		if m < 0 {
			return out
		}
		if fn != num {
			out = append(out, raw[:n+m]...)
		}
		raw = raw[n+m:]
	}
	return out
}

// normalizeTimestamps rewrites every timestamp type and literal of m (any message of a
// plan) into the table's one time type, precision_timestamp_tz<9> (arrow-go's
// timestamp[ns, UTC]): timestamp, timestamp_tz, precision_timestamp and
// precision_timestamp_tz of any precision keep their nullability and instant (a zone-less
// timestamp is read as UTC); literal values are scaled to nanoseconds. A literal outside the
// nanosecond range is ErrTimestampOutOfRange; a precision outside 0–9 is InvalidArgument.
func normalizeTimestamps(m protoreflect.Message) error {
	switch v := m.Interface().(type) {
	case *substraitpb.Type:
		var n substraitpb.Type_Nullability
		var variation uint32
		switch k := v.GetKind().(type) {
		case *substraitpb.Type_Timestamp_:
			n, variation = k.Timestamp.GetNullability(), k.Timestamp.GetTypeVariationReference()
		case *substraitpb.Type_TimestampTz:
			n, variation = k.TimestampTz.GetNullability(), k.TimestampTz.GetTypeVariationReference()
		case *substraitpb.Type_PrecisionTimestamp_:
			if p := k.PrecisionTimestamp.GetPrecision(); p < 0 || p > 9 {
				return errorf(InvalidArgument, "timestamp precision %d is outside 0 to 9", p)
			}
			n, variation = k.PrecisionTimestamp.GetNullability(), k.PrecisionTimestamp.GetTypeVariationReference()
		case *substraitpb.Type_PrecisionTimestampTz:
			if p := k.PrecisionTimestampTz.GetPrecision(); p < 0 || p > 9 {
				return errorf(InvalidArgument, "timestamp precision %d is outside 0 to 9", p)
			}
			n, variation = k.PrecisionTimestampTz.GetNullability(), k.PrecisionTimestampTz.GetTypeVariationReference()
		default:
			goto children
		}
		v.Kind = &substraitpb.Type_PrecisionTimestampTz{PrecisionTimestampTz: &substraitpb.Type_PrecisionTimestampTZ{
			Precision: 9, Nullability: n, TypeVariationReference: variation}}
		return nil
	case *substraitpb.Expression_Literal:
		var val int64
		var prec int32
		switch k := v.GetLiteralType().(type) {
		case *substraitpb.Expression_Literal_Timestamp:
			val, prec = k.Timestamp, 6
		case *substraitpb.Expression_Literal_TimestampTz:
			val, prec = k.TimestampTz, 6
		case *substraitpb.Expression_Literal_PrecisionTimestamp_:
			val, prec = k.PrecisionTimestamp.GetValue(), k.PrecisionTimestamp.GetPrecision()
		case *substraitpb.Expression_Literal_PrecisionTimestampTz:
			val, prec = k.PrecisionTimestampTz.GetValue(), k.PrecisionTimestampTz.GetPrecision()
		default:
			goto children
		}
		if prec < 0 || prec > 9 {
			return errorf(InvalidArgument, "timestamp literal precision %d is outside 0 to 9", prec)
		}
		for range 9 - prec {
			if val > math.MaxInt64/10 || val < math.MinInt64/10 {
				return ErrTimestampOutOfRange
			}
			val *= 10
		}
		v.LiteralType = &substraitpb.Expression_Literal_PrecisionTimestampTz{PrecisionTimestampTz: &substraitpb.Expression_Literal_PrecisionTimestamp{Precision: 9, Value: val}}
		return nil
	}
children:
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				if err = normalizeTimestamps(v.List().Get(i).Message()); err != nil {
					return false
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			err = normalizeTimestamps(v.Message())
		}
		return err == nil
	})
	return err
}

// describeType names a Substrait type of a base schema for refusals: its kind, precision
// and nullability as the plan declares them (precision_timestamp_tz<6> NOT NULL).
func describeType(t *substraitpb.Type) string {
	if t == nil {
		return "none"
	}
	s := strings.TrimPrefix(fmt.Sprintf("%T", t.GetKind()), "*substraitpb.Type_")
	s = strings.ToLower(strings.TrimSuffix(s, "_"))
	var n substraitpb.Type_Nullability
	switch k := t.GetKind().(type) {
	case *substraitpb.Type_PrecisionTimestamp_:
		s = fmt.Sprintf("precision_timestamp<%d>", k.PrecisionTimestamp.GetPrecision())
		n = k.PrecisionTimestamp.GetNullability()
	case *substraitpb.Type_PrecisionTimestampTz:
		s = fmt.Sprintf("precision_timestamp_tz<%d>", k.PrecisionTimestampTz.GetPrecision())
		n = k.PrecisionTimestampTz.GetNullability()
	case *substraitpb.Type_Varchar:
		s = fmt.Sprintf("varchar<%d>", k.Varchar.GetLength())
		n = k.Varchar.GetNullability()
	case *substraitpb.Type_FixedChar_:
		s = fmt.Sprintf("fixedchar<%d>", k.FixedChar.GetLength())
		n = k.FixedChar.GetNullability()
	default:
		if fd := t.ProtoReflect().WhichOneof(t.ProtoReflect().Descriptor().Oneofs().ByName("kind")); fd != nil {
			s = string(fd.Name())
			inner := t.ProtoReflect().Get(fd).Message()
			if nf := inner.Descriptor().Fields().ByName("nullability"); nf != nil {
				n = substraitpb.Type_Nullability(inner.Get(nf).Enum())
			}
		}
	}
	if n == substraitpb.Type_NULLABILITY_REQUIRED {
		s += " NOT NULL"
	}
	return s
}

// foldTimestampCasts replaces, in m (after normalizeTimestamps), each cast of a string
// literal to a timestamp type by the timestamp literal it denotes (ParseTimestamp: a
// zone-less time is UTC), as DataFusion writes TIMESTAMP '…' literals; a string that does
// not parse is left to the executor's cast.
func foldTimestampCasts(m protoreflect.Message) {
	if e, ok := m.Interface().(*substraitpb.Expression); ok {
		if c := e.GetCast(); c != nil && c.GetType().GetPrecisionTimestampTz() != nil {
			if l := c.GetInput().GetLiteral(); l != nil {
				if str, ok := l.GetLiteralType().(*substraitpb.Expression_Literal_String_); ok {
					if t, err := ParseTimestamp(str.String_); err == nil {
						e.RexType = &substraitpb.Expression_Literal_{Literal: &substraitpb.Expression_Literal{
							Nullable: c.GetType().GetPrecisionTimestampTz().GetNullability() == substraitpb.Type_NULLABILITY_NULLABLE,
							LiteralType: &substraitpb.Expression_Literal_PrecisionTimestampTz{PrecisionTimestampTz: &substraitpb.Expression_Literal_PrecisionTimestamp{
								Precision: 9, Value: t.UnixNano()}}}}
						return
					}
				}
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				foldTimestampCasts(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind:
			foldTimestampCasts(v.Message())
		}
		return true
	})
}

// comparisonNames are the functions_comparison functions whose arguments are compared with
// each other.
var comparisonNames = map[string]bool{"equal": true, "not_equal": true, "lt": true, "lte": true, "gt": true,
	"gte": true, "between": true, "is_distinct_from": true, "is_not_distinct_from": true}

// typeStringTimestamps rewrites in pb the string literals that p (pb decoded) compares with a
// timestamp (DataFusion writes timestamp >= '2001-04-01' with the string as it is) into the
// timestamp literals they denote (ParseTimestamp), walking pb's relations and expressions
// alongside p's: filters, read filters and projections. It reports whether it changed
// anything (pb must then be decoded again).
func typeStringTimestamps(pb *substraitpb.Plan, p *plan.Plan) bool {
	changed := false
	var pair func(pe *substraitpb.Expression, e expr.Expression)
	pair = func(pe *substraitpb.Expression, e expr.Expression) {
		if pe == nil || e == nil {
			return
		}
		switch v := e.(type) {
		case *expr.ScalarFunction:
			pargs := pe.GetScalarFunction().GetArguments()
			if len(pargs) != v.NArgs() {
				return
			}
			cmp := v.ID().URN == URNComparison && comparisonNames[v.Name()]
			hasTS := false
			for i := range v.NArgs() {
				if a, ok := v.Arg(i).(expr.Expression); ok && a != nil && isTimestampType(a.GetType()) {
					hasTS = true
				}
			}
			for i := range v.NArgs() {
				a, ok := v.Arg(i).(expr.Expression)
				if !ok {
					continue
				}
				if l, isStr := a.(*expr.PrimitiveLiteral[string]); cmp && hasTS && isStr {
					if t, err := ParseTimestamp(l.Value); err == nil {
						pargs[i].ArgType = &substraitpb.FunctionArgument_Value{Value: &substraitpb.Expression{RexType: &substraitpb.Expression_Literal_{
							Literal: &substraitpb.Expression_Literal{LiteralType: &substraitpb.Expression_Literal_PrecisionTimestampTz{
								PrecisionTimestampTz: &substraitpb.Expression_Literal_PrecisionTimestamp{Precision: 9, Value: t.UnixNano()}}}}}}
						changed = true
					}
					continue
				}
				pair(pargs[i].GetValue(), a)
			}
		case *expr.Cast:
			pair(pe.GetCast().GetInput(), v.Input)
		}
	}
	walkPaired(pb, p, func(r *substraitpb.Rel, rel plan.Rel) {
		switch v := rel.(type) {
		case *plan.FilterRel:
			pair(r.GetFilter().GetCondition(), v.Condition())
		case *plan.NamedTableReadRel:
			pair(r.GetRead().GetFilter(), v.Filter())
		case *plan.ProjectRel:
			pes := r.GetProject().GetExpressions()
			for i, e := range v.Expressions() {
				if i < len(pes) {
					pair(pes[i], e)
				}
			}
		}
	})
	return changed
}

func isTimestampType(t types.Type) bool {
	switch t.(type) {
	case *types.PrecisionTimestampTzType, *types.PrecisionTimestampType, *types.TimestampTzType, *types.TimestampType:
		return true
	}
	return false
}

// expandProjections rewrites, in m, the relations DataFusion's optimised plans hold that
// substrait-go v8.1.1 does not decode or the executor does not run, into equivalent ones:
//
//   - a ReadRel with a projection mask (a selection of top-level columns) becomes the read
//     without the mask under a ProjectRel whose emit mapping selects those columns (composed
//     with the read's own emit mapping); a mask of nested fields is Unimplemented;
//   - a ProjectRel without expressions (columns selected by its emit mapping alone) gets one
//     expression, a reference to its first input column, which no mapping selects; without an
//     emit mapping it is an identity and is replaced by its input.
func expandProjections(m protoreflect.Message) error {
	if r, ok := m.Interface().(*substraitpb.Rel); ok {
		if read := r.GetRead(); read != nil && read.GetProjection() != nil {
			cols, ok := maskColumns(read.GetProjection())
			if !ok {
				return unimplementedAre("ReadRel projection masks of nested fields")
			}
			mapping := cols
			if emit := read.GetCommon().GetEmit(); emit != nil {
				mapping = make([]int32, 0, len(emit.GetOutputMapping()))
				for _, k := range emit.GetOutputMapping() {
					if k < 0 || int(k) >= len(cols) {
						return invalidPlan("a ReadRel's emit mapping selects column %d of its %d masked columns", k, len(cols))
					}
					mapping = append(mapping, cols[k])
				}
			}
			read.Projection = nil
			read.Common = nil
			r.RelType = &substraitpb.Rel_Project{Project: &substraitpb.ProjectRel{
				Common:      &substraitpb.RelCommon{EmitKind: &substraitpb.RelCommon_Emit_{Emit: &substraitpb.RelCommon_Emit{OutputMapping: mapping}}},
				Input:       &substraitpb.Rel{RelType: &substraitpb.Rel_Read{Read: read}},
				Expressions: []*substraitpb.Expression{fieldRef(0)},
			}}
		}
		for {
			p := r.GetProject()
			if p == nil || len(p.GetExpressions()) > 0 {
				break
			}
			if p.GetCommon().GetEmit() != nil {
				p.Expressions = []*substraitpb.Expression{fieldRef(0)}
				break
			}
			if p.GetInput() == nil {
				break
			}
			r.RelType = p.GetInput().GetRelType()
		}
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				if err = expandProjections(v.List().Get(i).Message()); err != nil {
					return false
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			err = expandProjections(v.Message())
		}
		return err == nil
	})
	return err
}

// maskColumns reads a projection mask selecting top-level columns only.
func maskColumns(mask *substraitpb.Expression_MaskExpression) ([]int32, bool) {
	items := mask.GetSelect().GetStructItems()
	if len(items) == 0 {
		return nil, false
	}
	cols := make([]int32, len(items))
	for i, it := range items {
		if it.GetChild() != nil || it.GetField() < 0 {
			return nil, false
		}
		cols[i] = it.GetField()
	}
	return cols, true
}

// fieldRef is a reference to input column i.
func fieldRef(i int32) *substraitpb.Expression {
	return &substraitpb.Expression{RexType: &substraitpb.Expression_Selection{Selection: &substraitpb.Expression_FieldReference{
		ReferenceType: &substraitpb.Expression_FieldReference_DirectReference{DirectReference: &substraitpb.Expression_ReferenceSegment{
			ReferenceType: &substraitpb.Expression_ReferenceSegment_StructField_{StructField: &substraitpb.Expression_ReferenceSegment_StructField{Field: i}}}},
		RootType: &substraitpb.Expression_FieldReference_RootReference_{RootReference: &substraitpb.Expression_FieldReference_RootReference{}}}}}
}
