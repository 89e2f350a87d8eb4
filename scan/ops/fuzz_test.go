package ops_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/substrait-io/substrait-go/v8/expr"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/scan/ops"
)

// jsonFuzzSchema is FuzzJSONOperators' batch: a document of arbitrary bytes, a text key and
// an integer index.
var jsonFuzzSchema = arrow.NewSchema([]arrow.Field{
	{Name: "doc", Type: arrow.BinaryTypes.Binary, Nullable: true},
	{Name: "key", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "idx", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func jsonFuzzCol(i int) expr.Expression {
	rt := types.NewRecordTypeFromTypes([]types.Type{
		&types.BinaryType{Nullability: types.NullabilityNullable},
		&types.StringType{Nullability: types.NullabilityNullable},
		&types.Int64Type{Nullability: types.NullabilityNullable},
	})
	r, err := expr.NewRootFieldRef(expr.NewStructFieldRef(int32(i)), rt)
	if err != nil {
		panic(err)
	}
	return r
}

// FuzzJSONOperators evaluates the JSON operators over arbitrary document bytes: doc ->> key,
// doc -> key, doc -> idx, doc #>> '{key, key}' and doc -> key ->> idx. A document encoding/json
// refuses is refused with PostgreSQL's invalid_text_representation (22P02) data exception and
// no other error; a document it accepts is never refused; -> answers JSON text encoding/json
// accepts; and ->> of an object's member agrees with encoding/json's decoding of that member
// (the last of duplicate keys, as PostgreSQL's json type).
func FuzzJSONOperators(f *testing.F) {
	for _, r := range sqlfnRows {
		if r.doc != nil {
			f.Add([]byte(*r.doc), "a", int64(1))
		}
	}
	f.Add([]byte(`{"k":"\u00e9\ud83d\ude00","k":[null,true,-1e3]}`), "k", int64(-1))
	f.Add([]byte(`  [ "x" , {"":{}} ]  `), "", int64(0))
	f.Add([]byte(`{"a":1}{"b":2}`), "a", int64(0))
	c := jsonFuzzCol
	exprs := []struct {
		name string
		e    expr.Expression
	}{
		{"->> key", own("json_get_text", strOut, c(0), c(1))},
		{"-> key", own("json_get", binOut, c(0), c(1))},
		{"-> idx", own("json_get", binOut, c(0), c(2))},
		{"#>> {key,key}", own("json_path_text", strOut, c(0), c(1), c(1))},
		{"-> key ->> idx", own("json_get_text", strOut, own("json_get", binOut, c(0), c(1)), c(2))},
	}
	compiled := make([]*ops.Expr, len(exprs))
	for i, x := range exprs {
		sqlfnMu.Lock()
		cx, err := ops.Compile(x.e, jsonFuzzSchema, sqlfnReg)
		sqlfnMu.Unlock()
		if err != nil {
			f.Fatalf("%s: %v", x.name, err)
		}
		compiled[i] = cx
	}
	f.Fuzz(func(t *testing.T, doc []byte, key string, idx int64) {
		fuzzcount.Add()
		mem := newMem(t, 0)
		b := array.NewRecordBuilder(mem, jsonFuzzSchema)
		b.Field(0).(*array.BinaryBuilder).Append(doc)
		b.Field(1).(*array.StringBuilder).Append(key)
		b.Field(2).(*array.Int64Builder).Append(idx)
		batch := b.NewRecordBatch()
		b.Release()
		defer batch.Release()
		valid := json.Valid(doc)
		for i, cx := range compiled {
			out, err := cx.Eval(context.Background(), batch, mem)
			if err != nil {
				var de *ops.DataError
				if !errors.As(err, &de) || de.SQLState() != "22P02" {
					t.Fatalf("%s: refused with %v, want 22P02", exprs[i].name, err)
				}
				if valid {
					t.Fatalf("%s: refuses a document encoding/json accepts: %q", exprs[i].name, doc)
				}
				continue
			}
			func() {
				defer out.Release()
				if !valid && i < 4 {
					t.Fatalf("%s: answers over a document encoding/json refuses: %q", exprs[i].name, doc)
				}
				if out.IsNull(0) {
					return
				}
				switch o := out.(type) {
				case *array.Binary:
					if v := o.Value(0); !json.Valid(v) {
						t.Fatalf("%s: answers %q, not JSON", exprs[i].name, v)
					}
				case *array.String:
					if exprs[i].name != "->> key" {
						return
					}
					var obj map[string]json.RawMessage
					if json.Unmarshal(doc, &obj) != nil {
						return
					}
					var s string
					if json.Unmarshal(obj[key], &s) == nil && s != o.Value(0) && json.Valid([]byte(`"`+key+`"`)) {
						t.Fatalf("->> %q: %q, encoding/json decodes %q", key, o.Value(0), s)
					}
				}
			}()
		}
	})
}
