package ops

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"strconv"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// RefStep is one key (or index, when Idx) of a path for GJSONRef.
type RefStep struct {
	Key   string
	Index int64
	Idx   bool
}

// GJSONRef is the per-row JSON access this package used before the column-at-a-time scanner
// (jsonscan.go), kept as the fuzz target's reference: gjson validates the document and walks
// steps (path: #> and #>>, where a text key indexes an array), the last of duplicate keys
// winning. It returns the value's text (->> when text: strings unescaped; else its JSON
// text), whether it is SQL NULL, or the document's error.
func GJSONRef(doc []byte, steps []RefStep, path, text bool) (string, bool, error) {
	if !utf8.Valid(doc) {
		return "", false, errNotUTF8
	}
	if !gjson.ValidBytes(doc) {
		return "", false, errInvalidJSON
	}
	r := gjson.ParseBytes(doc)
	for _, s := range steps {
		var ok bool
		if s.Idx {
			r, ok = refElement(r, s.Index)
		} else {
			r, ok = refMember(r, s.Key, path)
		}
		if !ok {
			return "", true, nil
		}
	}
	if !text {
		return r.Raw, false, nil
	}
	switch r.Type {
	case gjson.Null:
		return "", true, nil
	case gjson.String:
		return r.Str, false, nil
	}
	return r.Raw, false, nil
}

func refMember(r gjson.Result, key string, path bool) (gjson.Result, bool) {
	if r.IsArray() && path {
		idx, err := strconv.ParseInt(key, 10, 64)
		if err != nil {
			return gjson.Result{}, false
		}
		return refElement(r, idx)
	}
	if !r.IsObject() {
		return gjson.Result{}, false
	}
	var out gjson.Result
	found := false
	r.ForEach(func(k, v gjson.Result) bool {
		if k.Str == key {
			out, found = v, true
		}
		return true
	})
	return out, found
}

func refElement(r gjson.Result, idx int64) (gjson.Result, bool) {
	if !r.IsArray() {
		return gjson.Result{}, false
	}
	arr := r.Array()
	if idx < 0 {
		idx += int64(len(arr))
	}
	if idx < 0 || idx >= int64(len(arr)) {
		return gjson.Result{}, false
	}
	return arr[idx], true
}

// CastTextForBench casts a text array with arrow-go's safe cast, as castNode does (the
// unfused cast of ->>'s text).
func CastTextForBench(a arrow.Array, to arrow.DataType) (arrow.Array, error) {
	return compute.CastArray(context.Background(), a, compute.SafeCastOptions(to))
}
