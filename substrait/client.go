package substrait

import (
	"strings"

	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
)

// PrepareSubstrait validates a client's Substrait plan (the serialized substrait.Plan of
// Flight SQL's CommandStatementSubstraitPlan) and binds it as the SQL binder's output is
// bound, for the same executor: one root relation whose tree holds only
//
//   - ReadRels of a NamedTable of the catalog (one name) whose base schema is the table's
//     (TableSchema: the partition column and id string, timestamp
//     precision_timestamp_tz<9>, value binary; names case-insensitive, nullability free),
//     without a projection mask;
//   - FilterRels (the read's own filter counts as one), ProjectRels, AggregateRels, SortRels,
//     FetchRels and SetRels, with any emit mapping.
//
// Each read's routed predicate is taken from the conjunction of its filter and the FilterRels
// directly above it, anywhere in that conjunction, as Routes reads the binder's plans:
// partition equality or IN list (at most opts.MaxPartitions values), timestamp bounds in any
// comparison form; the other conjuncts are residual filters. A read missing part of its route
// is refused as SQL is (InvalidArgument naming the partition column), unless opts.Analytical
// lets it leave the partition out. Expressions are checked by the executor when it lowers the
// plan (the caller maps its scan.ErrUnsupported to Unimplemented).
//
// A plan past a size limit (MaxPlanRelations, MaxSetInputs, MaxOutputColumns,
// MaxExpressionNodes) is refused with InvalidArgument naming the limit, as SQL is.
//
// Bytes that do not decode, or decode into an inconsistent plan, are ErrInvalidPlan; other
// relation kinds, shared subtrees, dynamic parameters and plan enhancements are
// Unimplemented; an unknown table is NotFound. The result's Schema comes from the root's
// names and types; Routes lists each read's route (for EXPLAIN). p is never modified.
func PrepareSubstrait(planBytes []byte, cat Catalog, opts BindOptions) (*Bound, error) {
	p, err := decodePlan(planBytes)
	if err != nil {
		return nil, err
	}
	if err := checkPlanShape(p); err != nil {
		return nil, err
	}
	if err := checkPlanSize(p); err != nil {
		return nil, err
	}
	if opts.MaxPartitions <= 0 {
		opts.MaxPartitions = DefaultMaxPartitions
	}
	_, infos, err := routesOf(p, cat, opts, true)
	if err != nil {
		return nil, err
	}
	roots := p.GetRoots()
	rt := roots[0].Input().RecordType()
	names := roots[0].Names()
	if len(names) != len(rt.Types()) || len(names) == 0 {
		return nil, ErrInvalidPlan // nested output types (several names a column) are not produced
	}
	sc := &scope{}
	for i, t := range rt.Types() {
		sc.cols = append(sc.cols, col{name: names[i], typ: t})
	}
	schema, err := arrowSchema(sc, names)
	if err != nil {
		return nil, unimplemented("an output column type of the Substrait plan")
	}
	return &Bound{Plan: p, Routes: infos, Schema: schema}, nil
}

// checkPlanShape refuses what a client plan may hold beside its relations: several roots,
// shared subtrees, dynamic parameter bindings, plan enhancements.
func checkPlanShape(p *plan.Plan) error {
	switch {
	case len(p.GetRoots()) != 1:
		return unimplemented("a plan without exactly one root relation")
	case len(p.GetNonRootRelations()) > 0:
		return unimplementedAre("non-root relations (shared subtrees)")
	case len(p.ParameterBindings()) > 0:
		return unimplementedAre("dynamic parameter bindings")
	case p.AdvancedExtension() != nil && p.AdvancedExtension().GetEnhancement() != nil:
		return unimplementedAre("plan enhancements")
	}
	return nil
}

// checkClientRead refuses a client's read the executor cannot run as it is: a base schema
// other than the table's, or a projection mask.
func checkClientRead(r *plan.NamedTableReadRel, def routing.TableDef) error {
	if !exactBaseSchema(def, r.BaseSchema()) {
		return errorf(InvalidArgument, "ReadRel base schema does not match table %q: want %s string, timestamp precision_timestamp_tz<9>, id string, value binary", def.Name, def.PartitionColumn)
	}
	if r.Projection() != nil {
		return unimplementedAre("ReadRel projection masks")
	}
	return nil
}

// exactBaseSchema reports whether a client's base schema is the table's (baseSchema) but for
// nullability and the case of the names: the executor reads the columns with exactly these
// types.
func exactBaseSchema(def routing.TableDef, ns types.NamedStruct) bool {
	want := baseSchema(def)
	if len(ns.Names) != len(want.Names) || len(ns.Struct.Types) != len(want.Struct.Types) {
		return false
	}
	for i, n := range ns.Names {
		if !strings.EqualFold(n, want.Names[i]) {
			return false
		}
		got := ns.Struct.Types[i].WithNullability(types.NullabilityRequired)
		if !got.Equals(want.Struct.Types[i]) {
			return false
		}
	}
	return true
}
