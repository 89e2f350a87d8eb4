package substrait

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	substraitgo "github.com/substrait-io/substrait-go/v8"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/extensions"
	"github.com/substrait-io/substrait-go/v8/plan"
	"github.com/substrait-io/substrait-go/v8/types"
	"github.com/substrait-io/substrait-protobuf/go/substraitpb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Shared pieces of the Substrait plans this package builds and reads: the extension URNs of
// the standard functions, the decoding of client plans, and literal readers used when routes
// are read back from a plan (route.go) and time bins recognised (timebin.go).

// Extension URNs of the Substrait functions the plans use (substrait-go v8 / Substrait
// 0.7x+ "extension:io.substrait:" URNs). arrow-go's compute/exprs resolves equal, gte, lt
// (functions_comparison) and and (functions_boolean) to its kernels.
const (
	URNComparison = extensions.SubstraitDefaultURNPrefix + "functions_comparison"
	URNBoolean    = extensions.SubstraitDefaultURNPrefix + "functions_boolean"
	URNAggregate  = extensions.SubstraitDefaultURNPrefix + "functions_aggregate_generic"
	URNDatetime   = extensions.SubstraitDefaultURNPrefix + "functions_datetime"
)

// timestampLiteral is a non-null precision_timestamp_tz<9> literal.
func timestampLiteral(ns int64) expr.Literal {
	return expr.NewPrecisionTimestampTzLiteral(ns, types.PrecisionNanoSeconds, types.NullabilityRequired)
}

// decodePlan decodes a serialized substrait.Plan with substrait-go's decoder, which panics on some malformed input (a nil
// literal from an unsupported literal encoding reaches code that dereferences it). The plan
// is first normalised into what substrait-go v8.1.1 decodes (normalizePlan).
func decodePlan(planBytes []byte) (p *plan.Plan, err error) {
	var pb substraitpb.Plan
	if err := proto.Unmarshal(planBytes, &pb); err != nil {
		return nil, ErrInvalidPlan
	}
	normalizePlan(pb.ProtoReflect())
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, ErrInvalidPlan
		}
	}()
	p, err = plan.FromProto(&pb, collection())
	if err != nil {
		if errors.Is(err, substraitgo.ErrNotImplemented) {
			return nil, unimplemented("a relation or expression kind in the Substrait plan")
		}
		if errors.Is(err, substraitgo.ErrNotFound) {
			return nil, unimplemented("a function or type extension of the Substrait plan")
		}
		return nil, ErrInvalidPlan
	}
	return p, nil
}

// normalizePlan rewrites, in every relation of m (any message of a plan), the valid
// encodings substrait-go v8.1.1 cannot decode into equivalent ones it can: a relation without
// its optional RelCommon (substrait-python writes none on an AggregateRel) gets an empty one
// (direct output, as the absence means; the decoder dereferences it); a FetchRel whose offset
// or count is an integer literal expression (offset_expr, count_expr: how current producers
// write them) or absent gets the integer fields (offset 0, count -1 for all rows when absent).
func normalizePlan(m protoreflect.Message) {
	if fd := m.Descriptor().Fields().ByName("common"); fd != nil && fd.Kind() == protoreflect.MessageKind &&
		fd.Message().FullName() == "substrait.RelCommon" && !m.Has(fd) {
		m.Set(fd, protoreflect.ValueOfMessage((&substraitpb.RelCommon{}).ProtoReflect()))
	}
	if f, ok := m.Interface().(*substraitpb.FetchRel); ok {
		switch o := f.GetOffsetMode().(type) {
		case nil:
			f.OffsetMode = &substraitpb.FetchRel_Offset{Offset: 0}
		case *substraitpb.FetchRel_OffsetExpr:
			if n, ok := integerLiteral(o.OffsetExpr); ok {
				f.OffsetMode = &substraitpb.FetchRel_Offset{Offset: n}
			}
		}
		switch c := f.GetCountMode().(type) {
		case nil:
			f.CountMode = &substraitpb.FetchRel_Count{Count: -1}
		case *substraitpb.FetchRel_CountExpr:
			if n, ok := integerLiteral(c.CountExpr); ok {
				f.CountMode = &substraitpb.FetchRel_Count{Count: n}
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for i := range v.List().Len() {
				normalizePlan(v.List().Get(i).Message())
			}
		case fd.Kind() == protoreflect.MessageKind:
			normalizePlan(v.Message())
		}
		return true
	})
}

// integerLiteral reads a non-null integer literal expression.
func integerLiteral(e *substraitpb.Expression) (int64, bool) {
	l := e.GetLiteral()
	if l == nil || l.GetNull() != nil {
		return 0, false
	}
	switch v := l.GetLiteralType().(type) {
	case *substraitpb.Expression_Literal_I64:
		return v.I64, true
	case *substraitpb.Expression_Literal_I32:
		return int64(v.I32), true
	case *substraitpb.Expression_Literal_I16:
		return int64(v.I16), true
	case *substraitpb.Expression_Literal_I8:
		return int64(v.I8), true
	}
	return 0, false
}

// relName names a relation kind for errors and EXPLAIN.
func relName(rel plan.Rel) string {
	switch rel.(type) {
	case *plan.NamedTableReadRel, *plan.VirtualTableReadRel, *plan.LocalFileReadRel,
		*plan.ExtensionTableReadRel, *plan.IcebergTableReadRel:
		return "ReadRel"
	case *plan.FilterRel:
		return "FilterRel"
	case *plan.ProjectRel:
		return "ProjectRel"
	case *plan.AggregateRel:
		return "AggregateRel"
	case *plan.SortRel:
		return "SortRel"
	case *plan.FetchRel:
		return "FetchRel"
	case *plan.JoinRel:
		return "JoinRel"
	case *plan.CrossRel:
		return "CrossRel"
	case *plan.HashJoinRel:
		return "HashJoinRel"
	case *plan.SetRel:
		return "SetRel"
	case *plan.NamedTableWriteRel:
		return "WriteRel"
	case *plan.ExtensionSingleRel, *plan.ExtensionMultiRel, *plan.ExtensionLeafRel:
		return "extension relations"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", rel), "*plan.")
}

// substraitOps maps Substrait comparison functions to SQL operators.
var substraitOps = map[string]string{"equal": "=", "not_equal": "<>", "lt": "<", "gt": ">", "lte": "<=", "gte": ">="}

// literalOf unwraps casts around a literal; a cast to a string or timestamp type keeps the
// literal's value, which stringLiteral/timestampLiteralValue then interpret.
func literalOf(e expr.Expression) (expr.Literal, bool) {
	for {
		c, ok := e.(*expr.Cast)
		if !ok {
			break
		}
		switch c.Type.(type) {
		case *types.StringType, *types.VarCharType, *types.PrecisionTimestampTzType,
			*types.PrecisionTimestampType, *types.TimestampTzType, *types.TimestampType:
		default:
			return nil, false
		}
		e = c.Input
	}
	l, ok := e.(expr.Literal)
	if !ok || l == nil {
		return nil, false
	}
	if _, null := l.(*expr.NullLiteral); null {
		return nil, false
	}
	return l, true
}

func stringLiteral(l expr.Literal) (string, bool) {
	switch v := l.(type) {
	case *expr.PrimitiveLiteral[string]:
		return v.Value, true
	case *expr.PrimitiveLiteral[types.FixedChar]:
		return string(v.Value), true
	case *expr.ProtoLiteral:
		if _, ok := v.Type.(*types.VarCharType); ok {
			s, ok := v.Value.(string)
			return s, ok
		}
	}
	return "", false
}

// timestampLiteralValue converts a timestamp-family literal (any precision), a date, or a
// string literal (ParseTimestamp) to an instant.
func timestampLiteralValue(l expr.Literal) (time.Time, error) {
	var (
		v    int64
		prec types.TimePrecision
	)
	switch x := l.(type) {
	case *expr.PrimitiveLiteral[types.Timestamp]:
		v, prec = int64(x.Value), types.PrecisionMicroSeconds
	case *expr.PrimitiveLiteral[types.TimestampTz]:
		v, prec = int64(x.Value), types.PrecisionMicroSeconds
	case *expr.PrimitiveLiteral[types.Date]:
		v, prec = int64(x.Value)*86400, types.PrecisionSeconds
	case *expr.PrimitiveLiteral[string]:
		return ParseTimestamp(x.Value)
	case *expr.ProtoLiteral:
		n, ok := x.Value.(int64)
		if !ok {
			return time.Time{}, ErrInvalidTimestampLiteral
		}
		switch t := x.Type.(type) {
		case *types.PrecisionTimestampTzType:
			v, prec = n, t.Precision
		case *types.PrecisionTimestampType:
			v, prec = n, t.Precision
		default:
			return time.Time{}, ErrInvalidTimestampLiteral
		}
	default:
		return time.Time{}, ErrInvalidTimestampLiteral
	}
	if prec < types.PrecisionSeconds || prec > types.PrecisionNanoSeconds {
		return time.Time{}, ErrInvalidTimestampLiteral
	}
	mult := int64(1)
	for range types.PrecisionNanoSeconds - prec {
		mult *= 10
	}
	if v > math.MaxInt64/mult || v < math.MinInt64/mult {
		return time.Time{}, ErrTimestampOutOfRange
	}
	return time.Unix(0, v*mult).UTC(), nil
}

// swapped gives the operator of `b op a` for `a op b`.
var swapped = map[string]string{"=": "=", "<": ">", ">": "<", "<=": ">=", ">=": "<=", "<>": "<>"}
