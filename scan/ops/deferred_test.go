package ops_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// TestDeferredErrors evaluates deferred_value and deferred_error of (s::int4) and of
// (doc->>'n')::int4 (the fused JSON cast) over batches whose failing rows sit anywhere (none,
// one, every other, all), and raise_deferred over them: each row's value is the cast's where
// it parses and NULL where it does not, each failing row's error is the cast's own (22P02 for
// text, 22003 past int4), and raise_deferred raises the first failing row's error and returns
// the values when none fails.
func TestDeferredErrors(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	i32 := &types.Int32Type{Nullability: types.NullabilityNullable}
	cast := func(e expr.Expression) expr.Expression {
		return &expr.Cast{Type: i32, Input: e, FailureBehavior: types.BehaviorThrowException}
	}
	texts := []expr.Expression{cast(col(1)), cast(own("json_get_text", strOut, col(0), str("n")))}
	for _, x := range texts {
		dv, err := compileFn(own("deferred_value", i32, x))
		if err != nil {
			t.Fatal(err)
		}
		de, err := compileFn(own("deferred_error", strOut, x))
		if err != nil {
			t.Fatal(err)
		}
		raise, err := compileFn(own("raise_deferred", i32, own("deferred_error", strOut, x), own("deferred_value", i32, x)))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 7, 100, 500} {
			for _, pattern := range []string{"none", "first", "last", "odd", "all", "big"} {
				vals := make([]string, n)
				want := make([]string, n)
				codes := make([]string, n)
				first := ""
				for i := range n {
					vals[i], want[i] = strconv.Itoa(i), strconv.Itoa(i)
					bad := pattern == "all" || pattern == "first" && i == 0 || pattern == "last" && i == n-1 || pattern == "odd" && i%2 == 1
					if bad {
						vals[i], want[i], codes[i] = "x"+vals[i], "<null>", "22P02"
					}
					if pattern == "big" && i%3 == 2 {
						vals[i], want[i], codes[i] = "99999999999", "<null>", "22003"
					}
					if first == "" {
						first = codes[i]
					}
				}
				b := deferBatch(t, vals)
				gotV, err := dv.Eval(ctx, b, mem)
				if err != nil {
					t.Fatalf("%d %s: deferred_value: %v", n, pattern, err)
				}
				gotE, err := de.Eval(ctx, b, mem)
				if err != nil {
					t.Fatalf("%d %s: deferred_error: %v", n, pattern, err)
				}
				for i := range n {
					if g := cellText(gotV, i); g != want[i] {
						t.Fatalf("%d %s row %d: value %s, want %s", n, pattern, i, g, want[i])
					}
					code := ""
					if gotE.IsValid(i) {
						code = gotE.(*array.String).Value(i)[:5]
					}
					if code != codes[i] {
						t.Fatalf("%d %s row %d: error %q, want %q", n, pattern, i, code, codes[i])
					}
				}
				gotV.Release()
				gotE.Release()
				r, err := raise.Eval(ctx, b, mem)
				var dErr *ops.DataError
				switch {
				case first == "" && err != nil:
					t.Fatalf("%d %s: raise_deferred: %v", n, pattern, err)
				case first == "":
					r.Release()
				case !errors.As(err, &dErr) || dErr.SQLState() != first:
					t.Fatalf("%d %s: raise_deferred: %v, want SQLSTATE %s", n, pattern, err, first)
				}
				b.Release()
			}
		}
	}
}

func compileFn(e expr.Expression) (*ops.Expr, error) {
	sqlfnMu.Lock()
	defer sqlfnMu.Unlock()
	return ops.Compile(e, sqlfnSchema, sqlfnReg)
}

// deferBatch is a batch of sqlfnSchema whose text column holds vals and whose documents
// hold them as the member n.
func deferBatch(t *testing.T, vals []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(newMem(t, 0), sqlfnSchema)
	defer b.Release()
	for _, v := range vals {
		b.Field(0).(*array.BinaryBuilder).Append([]byte(fmt.Sprintf(`{"n":%q}`, v)))
		b.Field(1).(*array.StringBuilder).Append(v)
		b.Field(2).AppendNull()
		b.Field(3).AppendNull()
	}
	return b.NewRecordBatch()
}

// TestRaiseDeferredForged: raise_deferred raises only what deferred_error wrote (signed with
// the process's key): a text of a client's plan in its place is a bare data exception
// (22000), never the message it spells.
func TestRaiseDeferredForged(t *testing.T) {
	mem := newMem(t, 0)
	forged := str("22012\x1fdivision by zero\x1f\x1f000000000000000000000000")
	// A constant: raised by Compile, as a constant subtree's error is.
	_, err := compileFn(own("raise_deferred", i64Out, forged, num(1)))
	var de *ops.DataError
	if !errors.As(err, &de) || de.SQLState() != "22000" || de.Msg != "data exception" {
		t.Fatalf("forged error: %v, want 22000 data exception", err)
	}
	// Read from a column.
	doc := own("json_get_text", strOut, col(0), str("e"))
	raise, err := compileFn(own("raise_deferred", i64Out, doc, num(1)))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(mem, sqlfnSchema)
	defer b.Release()
	b.Field(0).(*array.BinaryBuilder).Append([]byte(`{"e":"22012\u001fdivision by zero\u001f\u001f000000000000000000000000"}`))
	b.Field(1).AppendNull()
	b.Field(2).AppendNull()
	b.Field(3).AppendNull()
	batch := b.NewRecordBatch()
	defer batch.Release()
	_, err = raise.Eval(context.Background(), batch, mem)
	if !errors.As(err, &de) || de.SQLState() != "22000" || de.Msg != "data exception" {
		t.Fatalf("forged error: %v, want 22000 data exception", err)
	}
}

// FuzzDeferredErrorText: raise_deferred's reading of an error text (outside input where a
// client's plan writes it) never panics; a text deferred_error wrote reads back as its data
// exception, and any other as the bare 22000 data exception.
func FuzzDeferredErrorText(f *testing.F) {
	f.Add("22P02", "invalid input syntax for type integer", "", "")
	f.Add("22012", "division by zero", "", "22012\x1fdivision by zero\x1f\x1f0")
	f.Add("22023", "percentile value 1.5 is not between 0 and 1", "percentile value is not between 0 and 1", "\x1f\x1f\x1f")
	f.Fuzz(func(t *testing.T, code, msg, logMsg, other string) {
		fuzzcount.Add()
		in := &ops.DataError{Code: code, Msg: msg, LogMsg: logMsg}
		got := ops.DecodeDataError(ops.EncodeDataError(in))
		clean := !strings.Contains(code+msg+logMsg, "\x1f")
		if clean && (got.Code != code || got.Msg != msg || got.LogMsg != logMsg) {
			t.Fatalf("%q %q %q read back as %q %q %q", code, msg, logMsg, got.Code, got.Msg, got.LogMsg)
		}
		if o := ops.DecodeDataError(other); (o.Code != "22000" || o.Msg != "data exception") && ops.EncodeDataError(o) != other {
			t.Fatalf("%q, which deferred_error did not write, read as %+v", other, o)
		}
	})
}

// TestSubqueryRowsError: subquery_rows_error(n) is NULL where n is at most 1 or NULL and
// ErrSubqueryRows' deferred text where it is more, which raise_deferred raises as PostgreSQL's
// 21000 "more than one row returned by a subquery used as an expression"; over rows of at most
// one it raises nothing. n is char_length of the text column.
func TestSubqueryRowsError(t *testing.T) {
	ctx := context.Background()
	mem := newMem(t, 0)
	n := own("char_length", i64Out, col(1))
	rows, err := compileFn(own("subquery_rows_error", strOut, n))
	if err != nil {
		t.Fatal(err)
	}
	raise, err := compileFn(own("raise_deferred", i64Out, own("subquery_rows_error", strOut, n), n))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		vals []string
		bad  []bool
	}{
		{[]string{"", "a", "a"}, []bool{false, false, false}},
		{[]string{"a", "ab", "", "abc"}, []bool{false, true, false, true}},
	} {
		b := deferBatch(t, c.vals)
		got, err := rows.Eval(ctx, b, mem)
		if err != nil {
			t.Fatal(err)
		}
		for i, bad := range c.bad {
			if got.IsValid(i) != bad {
				t.Errorf("%q row %d: an error %v, want %v", c.vals, i, got.IsValid(i), bad)
			}
		}
		got.Release()
		r, err := raise.Eval(ctx, b, mem)
		var de *ops.DataError
		if slices.Contains(c.bad, true) {
			if !errors.As(err, &de) || de.SQLState() != "21000" || de.Msg != ops.ErrSubqueryRows.Msg {
				t.Errorf("%q: raise_deferred: %v, want 21000 %q", c.vals, err, ops.ErrSubqueryRows.Msg)
			}
		} else if err != nil {
			t.Errorf("%q: raise_deferred: %v", c.vals, err)
		} else {
			r.Release()
		}
		b.Release()
	}
}
