package aggregate

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Func is an aggregate function.
type Func uint8

const (
	// CountStar is count(*): the number of (filtered-in) rows. Output int64, not nullable.
	CountStar Func = iota + 1
	// Count is count(x): the number of (filtered-in) rows whose x is not null. Output int64,
	// not nullable.
	Count
	// Sum is sum(x) over integers (output int64; a result outside int64 is the error
	// ErrSumOverflow, intermediate sums are exact in 128 bits), float64 (output float64),
	// float32 (output float32: PostgreSQL's sum(real), added in single precision in input
	// order, partial sums too, float4pl's overflow check) or
	// decimal128 numerics (output the input type, the exact total; 38 digits or more is
	// 22003), of distinct values too (Count as well: the values of one scale are distinct as
	// their unscaled integers). NULL when the group had no non-null filtered-in x.
	Sum
	// Avg is avg(x) over integers or floats: output float64, NULL when the group had no non-null
	// filtered-in x. Integer inputs are summed exactly (128 bits) and divided once at the end;
	// with Measure.Numeric, the quotient is PostgreSQL's numeric one, decimal128(38, AvgScale).
	// Floats accumulate PostgreSQL's float8_accum state (N, Sx, Sxx, as the variances: float4
	// widened to float64) and answer Sx / N, raising its "value out of range: overflow" (22003)
	// where Sx or Sxx overflow from finite values (statagg.go).
	Avg
	// Min is min(x) over any supported type; output the input type, NULL when the group had no
	// non-null filtered-in x. Floats order NaN above every other value (as PostgreSQL does);
	// text and binary compare bytewise (PostgreSQL's "C" collation); false < true; intervals
	// as PostgreSQL's interval_cmp (accum.go's intervalExtremes).
	Min
	// Max is max(x); see Min.
	Max
	// VarSamp, VarPop, StddevSamp and StddevPop are PostgreSQL's var_samp (variance),
	// var_pop, stddev_samp (stddev) and stddev_pop over float64 input: output float64, NULL
	// for no value (the sample forms also for one); see statagg.go. Not distinct.
	VarSamp
	VarPop
	StddevSamp
	StddevPop
	// BoolAnd and BoolOr are bool_and (every) and bool_or over boolean input: output boolean,
	// NULL for no value.
	BoolAnd
	BoolOr
	// PercentileCont, PercentileDisc and ModeOf are PostgreSQL's ordered-set aggregates
	// percentile_cont(Fraction), percentile_disc(Fraction) and mode() WITHIN GROUP (ORDER BY
	// x [DESC]) (orderedset.go): float64 input for PercentileCont (output float64; of one
	// fraction also month_day_nano_interval, output the interval), int64 or float64 for the
	// others (output the input type), and for ModeOf also text, int32, boolean, date,
	// timestamp and decimal (arrayagg.go); NULL for no value. Not distinct.
	PercentileCont
	PercentileDisc
	ModeOf
	// StringAgg is string_agg(x, Separator) over text: output text, NULL for no value; the
	// values in input order, or sorted bytewise (Sorted, Descending), or by Keys (arrayagg.go);
	// Distinct keeps each once.
	StringAgg
	// ArrayAgg is array_agg(x) over text, integer, bigint, double precision or boolean: output
	// a list of x's type, NULL elements included, NULL for a group without rows; the values in
	// input order, or sorted (Sorted, Descending; NULLs last ascending, first descending) as
	// PostgreSQL's array_agg(x ORDER BY x [DESC]) orders them, or by Keys (arrayagg.go);
	// Distinct sorts by the value and keeps each value once (one NULL).
	ArrayAgg
	// Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrCount, RegrIntercept, RegrR2,
	// RegrSlope, RegrSxx, RegrSxy and RegrSyy are PostgreSQL's binary aggregates corr(Y, X),
	// covar_pop, covar_samp, regr_avgx, … over float64 pairs: Arg is Y, Arg2 is X, rows where
	// either is NULL left out; output float64, NULL for no pair (see regr.go), but RegrCount's
	// int64 count of pairs, not nullable. Not distinct.
	Corr
	CovarPop
	CovarSamp
	RegrAvgX
	RegrAvgY
	RegrCount
	RegrIntercept
	RegrR2
	RegrSlope
	RegrSxx
	RegrSxy
	RegrSyy
	// BitAnd, BitOr and BitXor are PostgreSQL's bit_and, bit_or and bit_xor over int16, int32
	// or int64: the bitwise AND, OR or XOR of the group's non-null filtered-in values, output
	// the input type, NULL when there is none (accum.go's bitFold). Distinct changes nothing of
	// BitAnd and BitOr; BitXor cannot be distinct.
	BitAnd
	BitOr
	BitXor
)

// String returns the SQL name of f ("count(*)", "count", "sum", …).
func (f Func) String() string {
	if int(f) < len(funcNames) && funcNames[f] != "" {
		return funcNames[f]
	}
	return fmt.Sprintf("Func(%d)", uint8(f))
}

var funcNames = [...]string{CountStar: "count(*)", Count: "count", Sum: "sum", Avg: "avg", Min: "min", Max: "max",
	VarSamp: "var_samp", VarPop: "var_pop", StddevSamp: "stddev_samp", StddevPop: "stddev_pop", BoolAnd: "bool_and", BoolOr: "bool_or",
	PercentileCont: "percentile_cont", PercentileDisc: "percentile_disc", ModeOf: "mode", StringAgg: "string_agg", ArrayAgg: "array_agg",
	Corr: "corr", CovarPop: "covar_pop", CovarSamp: "covar_samp", RegrAvgX: "regr_avgx", RegrAvgY: "regr_avgy", RegrCount: "regr_count",
	RegrIntercept: "regr_intercept", RegrR2: "regr_r2", RegrSlope: "regr_slope", RegrSxx: "regr_sxx", RegrSxy: "regr_sxy", RegrSyy: "regr_syy",
	BitAnd: "bit_and", BitOr: "bit_or", BitXor: "bit_xor"}

// isOrderedSet reports whether f is an ordered-set aggregate.
func (f Func) isOrderedSet() bool { return f >= PercentileCont && f <= ModeOf }

// isVariance reports whether f is one of the variance family.
func (f Func) isVariance() bool { return f >= VarSamp && f <= StddevPop }

// Measure is one aggregate: Func over input column Arg (ignored for CountStar; an index into
// the input schema). Distinct applies the function to distinct non-null values (count(distinct
// x), sum(distinct x), avg(distinct x), the variances of distinct doubles; it changes nothing
// for Min and Max, and CountStar
// cannot be distinct). Filter, when >= 0, is the index of a boolean input column: only rows
// where it is true (not false, not null) are aggregated (SQL's FILTER (WHERE …)); -1 means
// none (the zero value 0 names column 0, which must then be boolean). Name is the output field
// name; it must not be empty.
//
// Fraction is the fraction of percentile_cont and percentile_disc, and Descending says the
// ordered-set aggregates order their values descending (WITHIN GROUP (ORDER BY x DESC)).
type Measure struct {
	Func       Func
	Arg        int
	Distinct   bool
	Filter     int
	Name       string
	Fraction   float64
	Descending bool
	Sorted     bool
	Separator  string
	// Multi: percentile_cont and percentile_disc of an array of fractions (Fractions, NULL
	// where FractionNulls says so), answering a list of one value per fraction (float64, or
	// ElemType for percentile_disc: int32 or int16 of int64 input, else the input type).
	Multi         bool
	Fractions     []float64
	FractionNulls []bool
	ElemType      arrow.DataType
	// Keys are the ORDER BY keys of string_agg and array_agg when they are not the value
	// itself (Sorted); not with Distinct.
	Keys []SortKey
	// Numeric answers a Sum of integers as the exact decimal128(38, 0) total (PostgreSQL's
	// numeric sum(bigint)), never ErrSumOverflow, and an Avg of integers as PostgreSQL's
	// numeric average in decimal128(38, AvgScale) (numavg.go); floats ignore it.
	Numeric bool
	// Arg2 is the input column of the second argument (X) of the binary aggregates (Corr …
	// RegrSyy), whose first (Y) is Arg; other functions ignore it.
	Arg2 int
}

// Mode says which part of a (possibly distributed) aggregation a reader computes.
type Mode uint8

const (
	// Single aggregates raw input rows into final results (OutputSchema).
	Single Mode = iota
	// Partial aggregates raw input rows into partial states (PartialSchema), to be combined by
	// Final.
	Partial
	// Final combines partial states (batches of PartialSchema) into final results
	// (OutputSchema).
	Final
)

// String returns "single", "partial" or "final".
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

var modeNames = [...]string{Single: "single", Partial: "partial", Final: "final"}

// Spec is an aggregation: Groups are input column indices of the grouping keys (output first,
// in this order, under their input names and types); empty Groups is an ungrouped aggregation
// (exactly one output row in Single and Final modes, even over no input). Measures follow the
// keys in the output, in order.
type Spec struct {
	Groups   []int
	Measures []Measure
}

// ErrSumOverflow is the error of a sum of integers whose result does not fit in int64.
var ErrSumOverflow = errors.New("aggregate: sum overflows int64")

// kind classifies the supported input types.
type kind uint8

const (
	kInt      kind = iota + 1 // int8, int16, int32, int64
	kUint                     // uint8, uint16, uint32, uint64
	kFloat                    // float32, float64
	kBool                     // bool
	kTemporal                 // timestamp (any unit, any zone), date32, time64
	kBytes                    // utf8, large_utf8, binary, large_binary
)

func classify(dt arrow.DataType) (kind, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return kInt, true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return kUint, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return kFloat, true
	case arrow.BOOL:
		return kBool, true
	case arrow.TIMESTAMP, arrow.DATE32, arrow.TIME64:
		return kTemporal, true
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return kBytes, true
	}
	return 0, false
}

// sumStateType is the partial-state type of a sum over k: decimal128(38, 0) holding the exact
// 128-bit integer sum, or float64.
func sumStateType(k kind) arrow.DataType {
	if k == kFloat {
		return arrow.PrimitiveTypes.Float64
	}
	return &arrow.Decimal128Type{Precision: 38, Scale: 0}
}

// resolved is a validated measure with its argument's type.
type resolved struct {
	Measure
	argType  arrow.DataType // nil for CountStar
	argKind  kind
	keyTypes []arrow.DataType // of Keys
}

// multiElem is the element type of a Multi percentile's answer.
func (m resolved) multiElem() arrow.DataType {
	switch {
	case m.Func == PercentileCont && m.argType.ID() == arrow.INTERVAL_MONTH_DAY_NANO:
		return m.argType
	case m.Func == PercentileCont:
		return arrow.PrimitiveTypes.Float64
	case m.ElemType != nil:
		return m.ElemType
	}
	return m.argType
}

// stored reports whether the measure runs on the ordered store (arrayagg.go): array_agg,
// string_agg with sort keys, and mode of other types than bigint and double precision.
func (m resolved) stored() bool {
	switch m.Func {
	case ArrayAgg:
		return true
	case StringAgg:
		return len(m.Keys) > 0
	case ModeOf, PercentileDisc:
		return m.argType.ID() != arrow.INT64 && m.argType.ID() != arrow.FLOAT64
	}
	return false
}

// distinct reports whether the measure keeps a set of distinct values (Min and Max ignore
// Distinct).
func (m resolved) distinct() bool {
	return m.Distinct && (m.Func == Count || m.Func == Sum || m.Func == Avg || m.Func.isVariance())
}

// floatAccum reports whether the measure accumulates PostgreSQL's float8_accum state (N, Sx,
// Sxx; statagg.go): the variance family, and avg of floats, which PostgreSQL computes from the
// same state (float8_avg: Sx / N), raising its overflow errors.
func (m resolved) floatAccum() bool {
	return m.Func.isVariance() || m.Func == Avg && m.argKind == kFloat
}

// ErrUnsupported is wrapped by the errors of a Spec whose groups or measures are of types the
// operator does not aggregate (a client's Substrait plan can ask for them: avg of a decimal,
// trial 33 G5); the engine refuses such plans as unsupported (UNIMPLEMENTED), not as failures.
var ErrUnsupported = errors.New("unsupported")

// unsupported is an error wrapping ErrUnsupported: "aggregate: unsupported: " and the format.
func unsupported(format string, args ...any) error {
	return fmt.Errorf("aggregate: %w: "+format, append([]any{ErrUnsupported}, args...)...)
}

func validate(in *arrow.Schema, s Spec) ([]resolved, error) {
	if in == nil {
		return nil, errors.New("aggregate: nil input schema")
	}
	nf := in.NumFields()
	for i, g := range s.Groups {
		if g < 0 || g >= nf {
			return nil, fmt.Errorf("aggregate: group %d: column %d out of range (input has %d columns)", i, g, nf)
		}
		f := in.Field(g)
		if _, ok := classify(f.Type); !ok && f.Type.ID() != arrow.DECIMAL128 && f.Type.ID() != arrow.INTERVAL_MONTH_DAY_NANO {
			return nil, unsupported("group %d: column %q has unsupported type %s", i, f.Name, f.Type)
		}
	}
	out := make([]resolved, len(s.Measures))
	for i, m := range s.Measures {
		r := resolved{Measure: m}
		if m.Name == "" {
			return nil, fmt.Errorf("aggregate: measure %d: empty name", i)
		}
		if m.Filter < -1 || m.Filter >= nf {
			return nil, fmt.Errorf("aggregate: measure %q: filter column %d out of range", m.Name, m.Filter)
		}
		if m.Filter >= 0 && in.Field(m.Filter).Type.ID() != arrow.BOOL {
			return nil, fmt.Errorf("aggregate: measure %q: filter column %q is %s, not bool", m.Name, in.Field(m.Filter).Name, in.Field(m.Filter).Type)
		}
		switch m.Func {
		case CountStar:
			if m.Distinct {
				return nil, fmt.Errorf("aggregate: measure %q: count(*) cannot be distinct", m.Name)
			}
			out[i] = r
			continue
		case Count, Sum, Avg, Min, Max, VarSamp, VarPop, StddevSamp, StddevPop, BoolAnd, BoolOr, PercentileCont, PercentileDisc, ModeOf, StringAgg, ArrayAgg, BitAnd, BitOr, BitXor:
		case Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrCount, RegrIntercept, RegrR2, RegrSlope, RegrSxx, RegrSxy, RegrSyy:
			if m.Arg < 0 || m.Arg >= nf || m.Arg2 < 0 || m.Arg2 >= nf || m.Distinct ||
				in.Field(m.Arg).Type.ID() != arrow.FLOAT64 || in.Field(m.Arg2).Type.ID() != arrow.FLOAT64 {
				return nil, fmt.Errorf("aggregate: measure %q: %s takes two float64 columns, not distinct", m.Name, m.Func)
			}
			r.argType, r.argKind = in.Field(m.Arg).Type, kFloat
			out[i] = r
			continue
		default:
			return nil, fmt.Errorf("aggregate: measure %q: unknown function %d", m.Name, uint8(m.Func))
		}
		if m.Arg < 0 || m.Arg >= nf {
			return nil, fmt.Errorf("aggregate: measure %q: argument column %d out of range (input has %d columns)", m.Name, m.Arg, nf)
		}
		f := in.Field(m.Arg)
		k, ok := classify(f.Type)
		if !ok && f.Type.ID() == arrow.DECIMAL128 && (m.Func == Min || m.Func == Max || m.Func == Sum || m.Func == Count || (m.Func == ModeOf || m.Func == PercentileDisc && !m.Multi) && !m.Distinct) {
			// min, max (decimalExtremes), sum (decSumAcc), count (countAcc: the values not
			// NULL) and mode (arrayagg.go) of numerics; count and sum of distinct ones
			// (distinctDec)
			r.argType = f.Type
			out[i] = r
			continue
		}
		if !ok && f.Type.ID() == arrow.INTERVAL_MONTH_DAY_NANO && (m.Func == PercentileCont && !m.Distinct || m.Func == Min || m.Func == Max) {
			// percentile_cont of intervals (orderedset.go's intervalContAcc; of an array of
			// fractions its intervalContMulti), min and max (accum.go's intervalExtremes)
			r.argType = f.Type
			out[i] = r
			continue
		}
		if !ok {
			return nil, unsupported("measure %q: %s of column %q: unsupported type %s", m.Name, m.Func, f.Name, f.Type)
		}
		if (m.Func == Sum || m.Func == Avg) && k != kInt && k != kUint && k != kFloat {
			return nil, unsupported("measure %q: %s of column %q: type %s is not numeric", m.Name, m.Func, f.Name, f.Type)
		}
		if m.Func.isVariance() && f.Type.ID() != arrow.FLOAT64 {
			return nil, fmt.Errorf("aggregate: measure %q: %s of column %q: only float64 is supported, not %s", m.Name, m.Func, f.Name, f.Type)
		}
		if m.Func.isOrderedSet() && (m.Distinct || f.Type.ID() != arrow.FLOAT64 && (m.Func == PercentileCont || f.Type.ID() != arrow.INT64) &&
			(m.Func != ModeOf && (m.Func != PercentileDisc || m.Multi) || !storeType(f.Type))) {
			return nil, fmt.Errorf("aggregate: measure %q: %s of column %q: type %s is not supported", m.Name, m.Func, f.Name, f.Type)
		}
		if m.Multi && (!m.Func.isOrderedSet() || m.Func == ModeOf || len(m.FractionNulls) != len(m.Fractions) ||
			m.ElemType != nil && (m.Func != PercentileDisc || f.Type.ID() != arrow.INT64 || m.ElemType.ID() != arrow.INT32 && m.ElemType.ID() != arrow.INT16)) {
			return nil, fmt.Errorf("aggregate: measure %q: %s of %d fractions answered as %v", m.Name, m.Func, len(m.Fractions), m.ElemType)
		}
		if m.Func == ArrayAgg && !arrayAggType(f.Type) {
			return nil, fmt.Errorf("aggregate: measure %q: array_agg of column %q: type %s is not supported", m.Name, f.Name, f.Type)
		}
		if len(m.Keys) > 0 && (m.Func != StringAgg && m.Func != ArrayAgg || m.Distinct || m.Sorted) {
			return nil, fmt.Errorf("aggregate: measure %q: sort keys of %s (distinct %v, sorted %v)", m.Name, m.Func, m.Distinct, m.Sorted)
		}
		for _, key := range m.Keys {
			if key.Arg < 0 || key.Arg >= nf || !storeType(in.Field(key.Arg).Type) {
				return nil, fmt.Errorf("aggregate: measure %q: sort key column %d out of range or of a type it cannot order", m.Name, key.Arg)
			}
			r.keyTypes = append(r.keyTypes, in.Field(key.Arg).Type)
		}
		if m.Func == StringAgg && f.Type.ID() != arrow.STRING {
			return nil, fmt.Errorf("aggregate: measure %q: string_agg of column %q: type %s is not text", m.Name, f.Name, f.Type)
		}
		if (m.Func == BitAnd || m.Func == BitOr || m.Func == BitXor) && (m.Func == BitXor && m.Distinct ||
			f.Type.ID() != arrow.INT16 && f.Type.ID() != arrow.INT32 && f.Type.ID() != arrow.INT64) {
			return nil, fmt.Errorf("aggregate: measure %q: %s of column %q: type %s is not int16, int32 or int64 (or distinct)", m.Name, m.Func, f.Name, f.Type)
		}
		if (m.Func == BoolAnd || m.Func == BoolOr) && k != kBool {
			return nil, fmt.Errorf("aggregate: measure %q: %s of column %q: type %s is not boolean", m.Name, m.Func, f.Name, f.Type)
		}
		r.argType, r.argKind = f.Type, k
		out[i] = r
	}
	return out, nil
}

func groupFields(in *arrow.Schema, s Spec) []arrow.Field {
	fs := make([]arrow.Field, 0, len(s.Groups)+len(s.Measures))
	for _, g := range s.Groups {
		f := in.Field(g)
		fs = append(fs, arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable, Metadata: f.Metadata})
	}
	return fs
}

// resultField is the Single/Final output field of m.
func resultField(m resolved) arrow.Field {
	switch m.Func {
	case CountStar, Count, RegrCount:
		return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Int64}
	case Corr, CovarPop, CovarSamp, RegrAvgX, RegrAvgY, RegrIntercept, RegrR2, RegrSlope, RegrSxx, RegrSxy, RegrSyy:
		return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	case Sum:
		if m.argType.ID() == arrow.FLOAT32 {
			return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float32, Nullable: true}
		}
		if m.argKind == kFloat {
			return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
		}
		if m.argType.ID() == arrow.DECIMAL128 {
			return arrow.Field{Name: m.Name, Type: decSumType(m.argType), Nullable: true}
		}
		if m.Numeric {
			return arrow.Field{Name: m.Name, Type: sumStateType(m.argKind), Nullable: true}
		}
		return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	case PercentileCont, PercentileDisc:
		if m.Multi {
			return arrow.Field{Name: m.Name, Type: arrow.ListOf(m.multiElem()), Nullable: true}
		}
		if m.Func == PercentileDisc || m.argType.ID() == arrow.INTERVAL_MONTH_DAY_NANO {
			return arrow.Field{Name: m.Name, Type: m.argType, Nullable: true}
		}
		return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	case Avg, VarSamp, VarPop, StddevSamp, StddevPop:
		if m.Func == Avg && m.Numeric && m.argKind != kFloat {
			return arrow.Field{Name: m.Name, Type: avgType, Nullable: true}
		}
		return arrow.Field{Name: m.Name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	case BoolAnd, BoolOr:
		return arrow.Field{Name: m.Name, Type: arrow.FixedWidthTypes.Boolean, Nullable: true}
	case StringAgg:
		return arrow.Field{Name: m.Name, Type: arrow.BinaryTypes.String, Nullable: true}
	case ArrayAgg:
		return arrow.Field{Name: m.Name, Type: arrow.ListOf(m.argType), Nullable: true}
	default: // Min, Max, BitAnd, BitOr, BitXor
		return arrow.Field{Name: m.Name, Type: m.argType, Nullable: true}
	}
}

// stateFields are the Partial output fields of m (see PartialSchema).
func stateFields(m resolved) []arrow.Field {
	if m.distinct() {
		return []arrow.Field{{Name: m.Name, Type: arrow.ListOfNonNullable(m.argType)}}
	}
	if m.Func.isRegression() {
		return regrStateFields(m.Name)
	}
	switch m.Func {
	case CountStar, Count:
		return []arrow.Field{{Name: m.Name, Type: arrow.PrimitiveTypes.Int64}}
	case Sum:
		if m.argType.ID() == arrow.DECIMAL128 {
			return []arrow.Field{{Name: m.Name, Type: decSumType(m.argType), Nullable: true}}
		}
		if m.argType.ID() == arrow.FLOAT32 {
			return []arrow.Field{{Name: m.Name, Type: m.argType, Nullable: true}}
		}
		return []arrow.Field{{Name: m.Name, Type: sumStateType(m.argKind), Nullable: true}}
	case Avg, VarSamp, VarPop, StddevSamp, StddevPop:
		fs := []arrow.Field{
			{Name: m.Name + ".sum", Type: sumStateType(m.argKind), Nullable: true},
			{Name: m.Name + ".count", Type: arrow.PrimitiveTypes.Int64},
		}
		if m.floatAccum() {
			fs = append(fs, arrow.Field{Name: m.Name + ".sxx", Type: arrow.PrimitiveTypes.Float64})
		}
		return fs
	case BoolAnd, BoolOr:
		return []arrow.Field{{Name: m.Name, Type: arrow.FixedWidthTypes.Boolean, Nullable: true}}
	case PercentileCont, PercentileDisc, ModeOf, StringAgg:
		if m.stored() {
			return storeFields(m)
		}
		return []arrow.Field{{Name: m.Name, Type: arrow.ListOfNonNullable(m.argType)}}
	case ArrayAgg:
		return storeFields(m)
	default: // Min, Max, BitAnd, BitOr, BitXor
		return []arrow.Field{{Name: m.Name, Type: m.argType, Nullable: true}}
	}
}

// storeFields are the partial state of an ordered store (arrayagg.go): the list of the
// group's values (NULLs included) named Name, then each sort key's list named Name.keyN.
func storeFields(m resolved) []arrow.Field {
	fs := []arrow.Field{{Name: m.Name, Type: arrow.ListOf(m.argType), Nullable: true}}
	for k, t := range m.keyTypes {
		fs = append(fs, arrow.Field{Name: fmt.Sprintf("%s.key%d", m.Name, k+1), Type: arrow.ListOf(t), Nullable: true})
	}
	return fs
}

// OutputSchema returns the schema of Single and Final output for input schema in: the group
// key fields (copied from in), then one field per measure named Measure.Name: count(*) and
// count int64 not nullable; sum int64 (integer input), float64 (float64 input) or float32
// (float32 input), nullable; avg
// float64 (decimal128(38, AvgScale) for Measure.Numeric over integers), nullable; min and max
// the input type, nullable. It fails, with an error prefixed "aggregate: ", when s does not fit in (column out of range, unsupported type, sum or avg of a
// non-numeric column, non-boolean filter, empty measure name, distinct count(*)). It keeps no
// reference to its arguments and is safe for concurrent use.
func OutputSchema(in *arrow.Schema, s Spec) (*arrow.Schema, error) {
	ms, err := validate(in, s)
	if err != nil {
		return nil, err
	}
	fs := groupFields(in, s)
	for _, m := range ms {
		fs = append(fs, resultField(m))
	}
	return arrow.NewSchema(fs, nil), nil
}

// PartialSchema returns the schema of Partial output, which is the input of Final: the group
// key fields (copied from in), then the state columns of each measure, in order:
//
//   - count(*), count(x): one int64 column (not nullable) named Name: the count.
//   - sum(x): one nullable column named Name, NULL when no value was aggregated: the exact
//     integer sum as decimal128(38, 0) (its 128 bits are used in full, so a partial sum never
//     overflows), the float64 sum, or the float32 sum of float32 values.
//   - avg(x): "Name.sum" (as for sum) and "Name.count" (int64, not nullable); of floats also
//     "Name.sxx" (float64, not nullable): PostgreSQL's float8_accum state N, Sx, Sxx
//     (statagg.go), which avg of floats reads as PostgreSQL's does.
//   - min(x), max(x): one nullable column of the input type named Name.
//   - var_samp, var_pop, stddev_samp, stddev_pop: "Name.sum", "Name.count" and "Name.sxx",
//     float8_accum's state as for avg of floats.
//   - bool_and, bool_or: one nullable boolean column named Name, NULL when no value was
//     aggregated.
//   - corr, covar_pop, covar_samp and the regr_ family: "Name.n" (int64) and "Name.sx",
//     "Name.sxx", "Name.sy", "Name.syy", "Name.sxy" (float64), none nullable:
//     float8_regr_accum's state (regr.go).
//   - percentile_cont, percentile_disc, mode, string_agg: one non-nullable list<item: x's type, not
//     nullable> column named Name holding the group's non-null filtered-in values.
//   - array_agg, and string_agg with Keys: a list<item: x's type> column named Name holding the
//     group's filtered-in values (array_agg's NULLs included), then a list column "Name.keyN"
//     of each sort key's values, of the same lengths.
//   - count/sum/avg(distinct x): one non-nullable list<item: x's type, not nullable> column
//     named Name holding the group's distinct non-null filtered-in values (in first-appearance
//     order; floats with -0 folded into 0 and one NaN), so Final can compute the exact answer
//     across fragments.
//
// An ungrouped Partial emits exactly one row even over no input (count 0, NULL sums and
// extremes, empty lists), and Final merges any number of such rows, none included, into one.
// Errors are those of OutputSchema.
func PartialSchema(in *arrow.Schema, s Spec) (*arrow.Schema, error) {
	ms, err := validate(in, s)
	if err != nil {
		return nil, err
	}
	fs := groupFields(in, s)
	for _, m := range ms {
		fs = append(fs, stateFields(m)...)
	}
	return arrow.NewSchema(fs, nil), nil
}
