package substrait

import (
	"math"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"
	"google.golang.org/protobuf/proto"
)

// timestampTypmodCast binds a cast to timestamp(p) or timestamptz(p) (CAST(x AS
// timestamp(0)), x::timestamptz(3): what ORMs write for a column declared with a precision) as
// PostgreSQL's timestamp_scale and timestamptz_scale compute it: the cast without the
// modifier, then the value rounded to p fractional digits of a second, half a unit away from
// PostgreSQL's epoch 2000-01-01 rounding away from it (AdjustTimestampForTypmod; roundMicros,
// as CURRENT_TIMESTAMP(p) rounds). A constant is rounded here (so that it still bounds a read);
// any other value by URNPostgres' timestamp_round (scan/ops timestampround.go). A precision
// past 6 is 6 (PostgreSQL's warning) and keeps the value; a negative one is PostgreSQL's
// 22023. ok is false for any other cast.
func (bd *binder) timestampTypmodCast(tc *pg.TypeCast, sc *scope) (bval, bool, error) {
	tn := tc.GetTypeName()
	name, ok := typmodCastName(tn)
	if !ok || len(tn.GetTypmods()) != 1 || name != "timestamp" && name != "timestamptz" {
		return bval{}, false, nil
	}
	c := tn.GetTypmods()[0].GetAConst()
	if c == nil || c.GetIval() == nil {
		return bval{}, true, errorf(InvalidArgument, "type modifiers must be simple constants or identifiers")
	}
	p := int(c.GetIval().GetIval())
	if p < 0 {
		zone := ""
		if name == "timestamptz" {
			zone = " WITH TIME ZONE"
		}
		return bval{}, true, refused(InvalidArgument, "22023", "TIMESTAMP(%d)%s precision must not be negative", p, zone)
	}
	plain := proto.Clone(tc).(*pg.TypeCast)
	plain.TypeName.Typmods = nil
	v, err := bd.typeCast(plain, sc)
	if err != nil || p >= 6 {
		return v, true, err
	}
	x, stable := stableArg(v.e)
	if lit, ok := x.(*expr.ProtoLiteral); ok {
		if ns, ok := lit.Value.(int64); ok && isNanoTimestamp(lit.GetType()) {
			const pgEpoch = 946684800 * 1000000 // 2000-01-01 00:00 UTC in microseconds since 1970
			us := ns / 1000
			if ns%1000 < 0 {
				us--
			}
			rus := roundMicros(us-pgEpoch, p) + pgEpoch
			if rus > math.MaxInt64/1000 || rus < math.MinInt64/1000 {
				// Rounded past the nanosecond range (2262-04-11 23:47:16.854775): PostgreSQL
				// holds the value, this engine cannot.
				return bval{}, true, errTimestampRange()
			}
			r := rus * 1000
			var out expr.Expression = expr.NewPrecisionTimestampTzLiteral(r, types.PrecisionNanoSeconds, nullableN)
			if isWallclock(lit.GetType()) {
				out = expr.NewPrecisionTimestampLiteral(r, types.PrecisionNanoSeconds, nullableN)
			}
			if stable {
				v, err := bd.stable(out)
				return v, true, err
			}
			return typed(out), true, nil
		}
	}
	if _, null := v.e.(*expr.NullLiteral); null && !bd.holdsParameter(v.e) {
		return v, true, nil
	}
	f, err := bd.fn(URNPostgres, "timestamp_round", v.typ().WithNullability(nullableN), types.Enum(strconv.Itoa(p)), v.e)
	return typed(f), true, err
}

// isNanoTimestamp reports whether t is a timestamp of either kind in nanoseconds.
func isNanoTimestamp(t types.Type) bool {
	switch t := t.(type) {
	case *types.PrecisionTimestampType:
		return t.Precision == types.PrecisionNanoSeconds
	case *types.PrecisionTimestampTzType:
		return t.Precision == types.PrecisionNanoSeconds
	}
	return false
}

// typmodCastName is the name of the type a cast with type modifiers names (varchar(3),
// pg_catalog.timestamp(0)), without its pg_catalog qualifier; ok is false for a cast without
// modifiers, to an array, SETOF or %TYPE, or to a name qualified otherwise.
func typmodCastName(tn *pg.TypeName) (string, bool) {
	if tn == nil || len(tn.GetTypmods()) == 0 || len(tn.GetArrayBounds()) > 0 || tn.GetSetof() || tn.GetPctType() {
		return "", false
	}
	names := tn.GetNames()
	if len(names) == 2 && names[0].GetString_().GetSval() == "pg_catalog" {
		names = names[1:]
	}
	if len(names) != 1 {
		return "", false
	}
	return names[0].GetString_().GetSval(), true
}
