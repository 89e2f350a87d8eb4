// Package exprs compares Substrait expressions (substrait-go's expr package) as the planner
// and the executor must: by what they are, never by substrait-go's Equals methods, whose
// ScalarFunction and WindowFunction compare the first call's arguments only — concat(a, b)
// "equals" concat(a, b, c), and the other way round indexes past the arguments and panics
// (substrait-go v8.1.1; TestSameVariadicCalls) — and whose nested comparisons call those.
package exprs

import (
	"github.com/substrait-io/substrait-go/v8/expr"
	"google.golang.org/protobuf/proto"
)

// Same reports whether a and b are the same expression: their Substrait messages are equal
// (proto.Equal: every function reference, argument, option and output type; a NaN literal
// equals a NaN literal and 0.0 equals -0.0, as the planner's matching of GROUP BY, ORDER BY
// and window keys wants). Two nils are the same; a nil and an expression are not. It
// allocates both messages; safe for concurrent use on expressions no one mutates.
func Same(a, b expr.Expression) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return proto.Equal(a.ToProto(), b.ToProto())
}

// SameWindow reports whether window functions a and b are the same call over the same
// window and frame: Same, and the frame's bounds type (ROWS or RANGE), which the Substrait
// message of a window function expression does not always tell apart.
func SameWindow(a, b *expr.WindowFunction) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.BoundsType == b.BoundsType && Same(a, b)
}
