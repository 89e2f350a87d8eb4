package substrait

import (
	"fmt"
	"strings"

	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/flightsrv/flightsrv/routing"
)

// PrepareSubstrait validates a client's Substrait plan (the serialized substrait.Plan of
// Flight SQL's CommandStatementSubstraitPlan) and binds it as the SQL binder's output is
// bound, for the same executor: one root relation whose tree holds only
//
//   - ReadRels of a NamedTable of the catalog (one name) whose base schema is compatible
//     with the table's (adaptReads: TableSchema's columns, names in any case, strings as
//     string or varchar, the timestamp of any kind and precision up to 9, any nullability),
//     with a projection mask of top-level columns at most (read as a ProjectRel above it,
//     expandProjections);
//   - FilterRels (the read's own filter counts as one), ProjectRels, AggregateRels, SortRels,
//     FetchRels and SetRels, with any emit mapping.
//
// The plan is first rewritten from the encodings of the producers people use (DataFusion,
// ibis-substrait, isthmus; producers.go): functions resolved by URN, extension URI or name,
// timestamps made nanosecond. The conjuncts of its FilterRels are then pushed down as the
// binder's are (filterPusher: through projections of plain columns, sorts, aggregates'
// grouping keys and into every set-operation input, never through a FetchRel; the returned
// plan is then a rewritten copy). Each read's routed predicate is taken from the conjunction
// of its filter and the FilterRels above it (through projections), anywhere in that
// conjunction, as Routes reads the binder's plans: partition equality, IN list or OR chain
// (at most opts.MaxPartitions values), timestamp bounds in any comparison form, between or
// NOT of a comparison; the other conjuncts are residual filters. Contradictory pins or an
// empty range give an Empty route (no rows). A read missing part of its route
// is refused as SQL is (InvalidArgument naming the partition column), unless opts.Analytical
// lets it leave the partition out. Expressions are checked by the executor when it lowers the
// plan (the caller maps its scan.ErrUnsupported to Unimplemented).
//
// A plan past a size limit (MaxPlanRelations, MaxSetInputs, MaxOutputColumns,
// MaxProjectionExpressions, MaxExpressionNodes) is refused with InvalidArgument naming the
// limit, as SQL is; one whose conditions are not boolean (a filter's, a join's, an argument
// of and/or/not or a CASE's) with InvalidArgument, PostgreSQL's 42804.
//
// Bytes that do not decode, or decode into an inconsistent plan, are ErrInvalidPlan with the
// reason (errors.Is matches it); a base schema the table cannot serve is InvalidArgument naming
// both schemas; a function no extension holds is Unimplemented naming it; other
// relation kinds, shared subtrees, dynamic parameters and plan enhancements are
// Unimplemented; an unknown table is NotFound. The result's Schema comes from the root's
// names and types; Routes lists each read's route (for EXPLAIN). The client's bytes are
// never modified.
func PrepareSubstrait(planBytes []byte, cat Catalog, opts BindOptions) (*Bound, error) {
	p, err := decodePlan(planBytes, cat)
	if err != nil {
		return nil, err
	}
	if err := checkPlanShape(p); err != nil {
		return nil, err
	}
	if err := checkPlanSize(p); err != nil {
		return nil, err
	}
	if err := checkConditions(p); err != nil {
		return nil, err
	}
	if opts.MaxPartitions <= 0 {
		opts.MaxPartitions = DefaultMaxPartitions
	}
	if p, err = pushClientFilters(p); err != nil {
		return nil, err
	}
	_, infos, err := routesOf(p, cat, opts, true)
	if err != nil {
		return nil, err
	}
	roots := p.GetRoots()
	rt := roots[0].Input().RecordType()
	names := roots[0].Names()
	if len(names) != len(rt.Types()) || len(names) == 0 {
		return nil, invalidPlan("the root relation names %d columns and has %d (nested output types are not supported)", len(names), len(rt.Types()))
	}
	sc := &scope{}
	for i, t := range rt.Types() {
		if t == nil {
			// A relation whose output type the plan leaves out (a ReadRel's base schema
			// missing a field's type): arrow-go's conversion would dereference it.
			return nil, invalidPlan("output column %d of the root relation has no type", i+1)
		}
		sc.cols = append(sc.cols, col{name: names[i], typ: t})
	}
	schema, err := arrowSchema(sc, names)
	if err != nil {
		for i, c := range sc.cols {
			if _, e := arrowSchema(&scope{cols: []col{c}}, names[i:i+1]); e != nil {
				return nil, unimplemented(fmt.Sprintf("output column %d of the Substrait plan, of type %s,", i+1, c.typ))
			}
		}
		return nil, unimplemented("an output column type of the Substrait plan")
	}
	return &Bound{Plan: p, Routes: infos, Schema: schema}, nil
}

// pushClientFilters moves the conjuncts of a client plan's FilterRels down to its reads as
// the binder does (filterPusher), joining them with an `and` declared in the plan's own
// extensions. A plan where no conjunct passes a relation other than a FilterRel is returned
// as it is; a rewritten one is a new plan (encoded and decoded again, so that its extension
// declarations are the ones its expressions use).
func pushClientFilters(p *plan.Plan) (*plan.Plan, error) {
	fp := filterPusher{reg: p.ExtensionRegistry()}
	// A read under a constant false or NULL filter reads nothing, as the binder's (nothing).
	bd := &binder{ps: &paramState{placeholders: map[expr.Expression]int{}}, reg: p.ExtensionRegistry()}
	fp.falsy = bd.constantlyFalse
	fp.atRead = func(r *plan.NamedTableReadRel, conj []expr.Expression) (plan.Rel, error) {
		return fp.filter(r, conj)
	}
	root := p.GetRoots()[0]
	rel, err := fp.push(root.Input(), nil)
	if err != nil || !fp.changed {
		return p, err
	}
	return withRoot(p, rel, "push filters")
}

// errMissingExpression refuses a client plan with an expression substrait-go did not read.
var errMissingExpression = unimplemented("a plan with a literal substrait-go v8 reads as nothing (a precision timestamp before 1970)")

// withRoot returns p with its root relation's input replaced by rel, encoded and decoded
// again so that its extension declarations are the ones its expressions use (rel's new
// functions are declared in p's registry); what names the step in an error.
//
// A client plan read from protobuf may hold nil expressions where substrait-go v8.1.1 reads
// nothing (a negative precision timestamp literal: an instant before 1970), on which its
// ToProto dereferences nil (FuzzSQL: a pre-1970 time bound under a constant false filter):
// that panic is the plan's refusal (errMissingExpression), not the request's fault.
func withRoot(p *plan.Plan, rel plan.Rel, what string) (out *plan.Plan, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errMissingExpression
		}
	}()
	pb, err := p.ToProto()
	if err != nil {
		return nil, fmt.Errorf("substrait: %s: %w", what, err)
	}
	for _, r := range pb.GetRelations() {
		if rr := r.GetRoot(); rr != nil {
			rr.Input = rel.ToProto()
		}
	}
	if out, err = plan.FromProto(pb, collection()); err != nil {
		return nil, fmt.Errorf("substrait: %s: %w", what, err)
	}
	return out, nil
}

// errSeveralRoots is checkPlanShape's (and checkRawPlan's) refusal of a plan without exactly
// one root.
func errSeveralRoots() *Error { return unimplemented("a plan without exactly one root relation") }

// errSharedSubtrees is checkPlanShape's (and checkRawPlan's) refusal of non-root relations.
func errSharedSubtrees() *Error { return unimplementedAre("non-root relations (shared subtrees)") }

// checkPlanShape refuses what a client plan may hold beside its relations: several roots,
// shared subtrees, dynamic parameter bindings, plan enhancements.
func checkPlanShape(p *plan.Plan) error {
	switch {
	case len(p.GetRoots()) != 1:
		return errSeveralRoots()
	case len(p.GetNonRootRelations()) > 0:
		return errSharedSubtrees()
	case len(p.ParameterBindings()) > 0:
		return unimplementedAre("dynamic parameter bindings")
	case p.AdvancedExtension() != nil && p.AdvancedExtension().GetEnhancement() != nil:
		return unimplementedAre("plan enhancements")
	}
	return nil
}

// Field numbers of substrait.Plan's relations and of substrait.PlanRel's rel and root, for
// checkRawRoots.
var (
	planRelationsField = (&substraitpb.Plan{}).ProtoReflect().Descriptor().Fields().ByName("relations").Number()
	planRelRelField    = (&substraitpb.PlanRel{}).ProtoReflect().Descriptor().Fields().ByName("rel").Number()
	planRelRootField   = (&substraitpb.PlanRel{}).ProtoReflect().Descriptor().Fields().ByName("root").Number()
)

// checkRawRoots refuses, from the client's bytes alone (protobuf's wire format, read without
// decoding a message), a plan of several roots or of non-root relations beside one root, with
// checkPlanShape's errors: decoding 10,000 copies of a root (2.7 MB) costs a quarter of a
// second by itself, converting them 6.8 s (BenchmarkRawPlanRefusal: 0.4 ms). Bytes that do not read as a message are left to proto.Unmarshal's error
// (nothing is refused unless the whole message reads), as is a plan without a root.
func checkRawRoots(b []byte) error {
	roots, others := 0, 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		if num != planRelationsField || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil
			}
			b = b[n:]
			continue
		}
		rel, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		// The last of rel and root a PlanRel holds is its kind (a oneof).
		kind := protowire.Number(0)
		for len(rel) > 0 {
			num, typ, n := protowire.ConsumeTag(rel)
			if n < 0 {
				return nil
			}
			rel = rel[n:]
			if (num == planRelRelField || num == planRelRootField) && typ == protowire.BytesType {
				kind = num
			}
			if n = protowire.ConsumeFieldValue(num, typ, rel); n < 0 {
				return nil
			}
			rel = rel[n:]
		}
		switch kind {
		case planRelRootField:
			roots++
		case planRelRelField:
			others++
		}
	}
	switch {
	case roots > 1:
		return errSeveralRoots()
	case roots == 1 && others > 0:
		return errSharedSubtrees()
	}
	return nil
}

// checkRawPlan refuses, on the message as decoded from the client's bytes and before any
// rewriting or conversion (decodePlan), what checkPlanSize refuses by counting alone, with
// its errors: more relations than MaxPlanRelations (every substrait.Rel message of the plan, a
// subquery's too) or more expression nodes than MaxExpressionNodes (rawCount.check); and
// malformed groupings. The roots were counted on the bytes before (checkRawRoots: converting
// a plan of 10,000 copies of a root, 2.7 MB, took 6.8 s before checkPlanShape saw them).
func checkRawPlan(pb *substraitpb.Plan) error {
	var c rawCount
	return c.check(pb.ProtoReflect())
}

// rawCount is checkRawPlan's count of a plan's relations and expression nodes.
type rawCount struct {
	rels, exprs int
}

// check counts the substrait.Rel messages in m (m itself included), refusing the plan once
// the count passes MaxPlanRelations, and its expression nodes — each Expression message, a
// literal counting one with what it nests, as does a literal outside an Expression (the rows
// of a VirtualTable's values) — refusing it once past MaxExpressionNodes (checkPlanSize's
// errors; it stops there). checkPlanSize does not see a VirtualTable's rows: a client's
// VirtualTable of 300,000 one-column rows (3 MB) took about a minute to plan and stream. It
// also refuses an AggregateRel whose grouping references a grouping expression it does not
// have (substrait-go reads the reference as it is, and the relation's output type then indexes
// past its expressions): ErrInvalidPlan naming the reference and the count; and a decimal
// type or literal whose precision or scale no decimal has (checkDecimalType).
func (c *rawCount) check(m protoreflect.Message) (err error) {
	switch r := m.Interface().(type) {
	case *substraitpb.Rel:
		if c.rels++; c.rels > MaxPlanRelations {
			return errTooManyRelations()
		}
	case *substraitpb.Expression:
		if c.exprs++; c.exprs > MaxExpressionNodes {
			return errTooManyExpressionNodes()
		}
		if r.GetLiteral() != nil {
			return nil
		}
	case *substraitpb.Expression_Literal:
		if c.exprs++; c.exprs > MaxExpressionNodes {
			return errTooManyExpressionNodes()
		}
		if d := r.GetDecimal(); d != nil {
			return checkDecimalType(d.GetPrecision(), d.GetScale())
		}
		return nil
	case *substraitpb.Type_Decimal:
		if err := checkDecimalType(r.GetPrecision(), r.GetScale()); err != nil {
			return err
		}
	case *substraitpb.AggregateRel:
		k := len(r.GetGroupingExpressions())
		for i, g := range r.GetGroupings() {
			for _, ref := range g.GetExpressionReferences() {
				if int64(ref) >= int64(k) {
					return invalidPlan("grouping %d of an AggregateRel references grouping expression %d, and the relation has %d", i, ref, k)
				}
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind || fd.IsMap():
		case fd.IsList():
			for i := range v.List().Len() {
				if err = c.check(v.List().Get(i).Message()); err != nil {
					return false
				}
			}
		default:
			err = c.check(v.Message())
		}
		return err == nil
	})
	return err
}

// checkClientRead refuses a client's read the executor cannot run as it is: a projection
// mask left (expandProjections turns those of top-level columns into a ProjectRel). Its base
// schema was made the table's by adaptReads.
func checkClientRead(r *plan.NamedTableReadRel, def routing.TableDef) error {
	if r.Projection() != nil {
		return unimplementedAre("ReadRel projection masks")
	}
	return nil
}

// checkDecimalType refuses a decimal type (or literal) the plan spells with a precision
// outside 1–38 or a scale outside 0–precision: ErrInvalidPlan naming it (trial 34 W2:
// decimal<6,10> reached the executor and was refused as a value's overflow).
func checkDecimalType(precision, scale int32) error {
	if precision < 1 || precision > 38 || scale < 0 || scale > precision {
		return invalidPlan("decimal<%d,%d> is not a type: a precision is 1 to 38 and a scale 0 to the precision", precision, scale)
	}
	return nil
}

// adaptReads checks the base schema of every ReadRel of a catalog table in m (any message of
// a client's plan, before normalizeTimestamps) against the table and rewrites it into the
// table's (baseSchema), keeping the nullability the plan declares: the executor reads the
// columns with the table's types. Compatible are: the same number of columns, names equal
// but for case, the partition column and id as string or varchar<L>, the timestamp as
// timestamp, timestamp_tz, precision_timestamp<P> or precision_timestamp_tz<P> with P ≤ 9
// (widened to nanoseconds; zone-less times are UTC), value as binary, any nullability (the
// table's columns are NOT NULL). Anything else is InvalidArgument naming the table, the
// first column that differs, and both schemas. A table the catalog does not hold is
// NotFound; reads of other kinds and multi-part names are left for routesOf to refuse.
func adaptReads(m protoreflect.Message, cat Catalog) error {
	if r, ok := m.Interface().(*substraitpb.ReadRel); ok {
		if nt := r.GetNamedTable(); nt != nil && len(nt.GetNames()) == 1 {
			def, err := lookupTable(cat, nt.GetNames()[0])
			if err != nil {
				return err
			}
			if err := adaptBaseSchema(r, def); err != nil {
				return err
			}
		}
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				if err = adaptReads(v.List().Get(i).Message(), cat); err != nil {
					return false
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			err = adaptReads(v.Message(), cat)
		}
		return err == nil
	})
	return err
}

// adaptBaseSchema is adaptReads for one read of def.
func adaptBaseSchema(r *substraitpb.ReadRel, def routing.TableDef) error {
	ns := r.GetBaseSchema()
	want := baseSchema(def)
	names, typs := ns.GetNames(), ns.GetStruct().GetTypes()
	refuse := func(why string) error {
		got := make([]string, 0, len(typs))
		for i, t := range typs {
			n := "?"
			if i < len(names) {
				n = names[i]
			}
			got = append(got, n+" "+describeType(t))
		}
		return errorf(InvalidArgument, "ReadRel base schema of table %q is not compatible with the table: %s; the plan declares (%s), the table is (%s string NOT NULL, timestamp precision_timestamp_tz<9> NOT NULL (timestamp with time zone; any timestamp of precision up to 9 is accepted), id string NOT NULL, value binary NOT NULL)",
			def.Name, why, strings.Join(got, ", "), def.PartitionColumn)
	}
	if len(names) != len(want.Names) || len(typs) != len(want.Names) {
		return refuse(fmt.Sprintf("it has %d names and %d columns, the table %d columns", len(names), len(typs), len(want.Names)))
	}
	out := make([]*substraitpb.Type, len(typs))
	for i, t := range typs {
		if !strings.EqualFold(names[i], want.Names[i]) {
			return refuse(fmt.Sprintf("column %d is named %q, the table's %q", i+1, names[i], want.Names[i]))
		}
		var ok bool
		var null substraitpb.Type_Nullability
		switch k := t.GetKind().(type) {
		case *substraitpb.Type_String_:
			ok, null = i == 0 || i == 2, k.String_.GetNullability()
		case *substraitpb.Type_Varchar:
			ok, null = i == 0 || i == 2, k.Varchar.GetNullability()
		case *substraitpb.Type_Binary_:
			ok, null = i == 3, k.Binary.GetNullability()
		case *substraitpb.Type_Timestamp_:
			ok, null = i == 1, k.Timestamp.GetNullability()
		case *substraitpb.Type_TimestampTz:
			ok, null = i == 1, k.TimestampTz.GetNullability()
		case *substraitpb.Type_PrecisionTimestamp_:
			p := k.PrecisionTimestamp.GetPrecision()
			ok, null = i == 1 && p >= 0 && p <= 9, k.PrecisionTimestamp.GetNullability()
		case *substraitpb.Type_PrecisionTimestampTz:
			p := k.PrecisionTimestampTz.GetPrecision()
			ok, null = i == 1 && p >= 0 && p <= 9, k.PrecisionTimestampTz.GetNullability()
		}
		if !ok {
			return refuse(fmt.Sprintf("column %s is %s", want.Names[i], describeType(t)))
		}
		out[i] = types.TypeToProto(want.Struct.Types[i])
		if null == substraitpb.Type_NULLABILITY_NULLABLE {
			out[i] = types.TypeToProto(want.Struct.Types[i].WithNullability(types.NullabilityNullable))
		}
	}
	nullability := ns.GetStruct().GetNullability()
	if nullability == substraitpb.Type_NULLABILITY_UNSPECIFIED {
		nullability = substraitpb.Type_NULLABILITY_REQUIRED
	}
	r.BaseSchema = &substraitpb.NamedStruct{Names: want.Names, Struct: &substraitpb.Type_Struct{Types: out, Nullability: nullability}}
	return nil
}
