package scan

import (
	"errors"
	"reflect"
	"testing"

	"github.com/substrait-io/substrait-go/v8/plan"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// TestStreamedTerm: a recursive term of filters, projections and selections of the working
// table is opened once over every working table (recursiveNode.streamed); one of a join, an
// aggregate or a set operation is opened per iteration.
func TestStreamedTerm(t *testing.T) {
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "msgs", PartitionColumn: "channel_id",
		Strategy: routing.CalendarDayUTC, WritableBuckets: 1})
	if err != nil {
		t.Fatal(err)
	}
	for sql, want := range map[string]bool{
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 10) SELECT count(*), sum(n) FROM t":                 true,
		"WITH RECURSIVE t(n, s) AS (SELECT 1, 'a' UNION SELECT n + 1, s || 'b' FROM t WHERE n < 10) SELECT n FROM t":                  true,
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT x FROM (SELECT n + 1 AS x FROM t) s WHERE x < 4) SELECT n FROM t":          true,
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t, generate_series(1, 2) g WHERE n < 3) SELECT count(*) FROM t": false,
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3 GROUP BY n) SELECT n FROM t":                      false,
		"WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM t WHERE n < 5 EXCEPT SELECT 3)) SELECT n FROM t":               false,
	} {
		st, err := substrait.PrepareWith(sql, cat, substrait.BindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := st.BindGeneral(substrait.BindOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Prepare(b.Plan, Options{Bind: func(*plan.NamedTableReadRel) (Source, error) { return Source{}, errors.New("no table") }})
		if err != nil {
			t.Fatal(err)
		}
		rn := findRecursive(reflect.ValueOf(pr.n))
		if rn == nil {
			t.Fatalf("%s: no recursive node", sql)
		}
		if rn.streamed != want {
			t.Errorf("%s: streamed %v, want %v", sql, rn.streamed, want)
		}
	}
}

// findRecursive returns the first recursiveNode in the nodes v holds, through struct fields
// (unexported: read through reflection), pointers, interfaces and slices.
func findRecursive(v reflect.Value) *recursiveNode {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if v.Type() == reflect.TypeFor[*recursiveNode]() {
			return (*recursiveNode)(v.UnsafePointer())
		}
		if v.Kind() == reflect.Pointer && v.Elem().Kind() != reflect.Struct {
			return nil
		}
		return findRecursive(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.Type().Implements(reflect.TypeFor[node]()) || f.Kind() == reflect.Slice {
				if rn := findRecursive(f); rn != nil {
					return rn
				}
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if rn := findRecursive(v.Index(i)); rn != nil {
				return rn
			}
		}
	}
	return nil
}
