package e2e

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func testMetadata(t *testing.T, cl *flightsql.Client) {
	ctx := context.Background()
	get := func(info *flight.FlightInfo, err error) *result {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		res, err := fetch(ctx, cl, info)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(res.release)
		return res
	}
	strings := func(res *result, col int) []string {
		var out []string
		for _, rec := range res.recs {
			c := rec.Column(col).(*array.String)
			for i := range c.Len() {
				out = append(out, c.Value(i))
			}
		}
		return out
	}

	tables := get(cl.GetTables(ctx, &flightsql.GetTablesOpts{}))
	if !tables.infoSchema.Equal(schema_ref.Tables) {
		t.Fatalf("GetTables schema %s", tables.infoSchema)
	}
	if names := strings(tables, 2); len(names) != 1 || names[0] != "flights" {
		t.Fatalf("tables %v", names)
	}
	if types := strings(tables, 3); types[0] != "TABLE" {
		t.Fatalf("table type %v", types)
	}

	withSchema := get(cl.GetTables(ctx, &flightsql.GetTablesOpts{IncludeSchema: true, TableNameFilterPattern: ptr("fli%")}))
	if !withSchema.infoSchema.Equal(schema_ref.TablesWithIncludedSchema) {
		t.Fatalf("GetTables(include_schema) schema %s", withSchema.infoSchema)
	}
	raw := withSchema.recs[0].Column(4).(*array.Binary).Value(0)
	ts, err := flight.DeserializeSchema(raw, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	wantCols := []string{"origin", "timestamp", "id", "value"}
	for i, f := range ts.Fields() {
		if f.Name != wantCols[i] {
			t.Fatalf("table_schema %s", ts)
		}
		if v, ok := f.Metadata.GetValue("ARROW:FLIGHT:SQL:TYPE_NAME"); !ok || v == "" {
			t.Fatalf("field %s lacks TYPE_NAME metadata", f.Name)
		}
	}
	if tt := ts.Field(1).Type.(*arrow.TimestampType); tt.Unit != arrow.Nanosecond || tt.TimeZone != "UTC" {
		t.Fatalf("timestamp type %s", tt)
	}
	none := get(cl.GetTables(ctx, &flightsql.GetTablesOpts{TableNameFilterPattern: ptr("nothing%")}))
	if len(none.recs) != 0 {
		t.Fatalf("filter matched %d batches", len(none.recs))
	}

	types := get(cl.GetTableTypes(ctx))
	if got := strings(types, 0); len(got) != 1 || got[0] != "TABLE" {
		t.Fatalf("table types %v", got)
	}
	schemas := get(cl.GetDBSchemas(ctx, &flightsql.GetDBSchemasOpts{}))
	if got := strings(schemas, 1); len(got) != 1 || got[0] != "public" {
		t.Fatalf("db schemas %v", got)
	}
	catalogs := get(cl.GetCatalogs(ctx))
	if !catalogs.infoSchema.Equal(schema_ref.Catalogs) {
		t.Fatalf("catalogs schema %s", catalogs.infoSchema)
	}

	info := get(cl.GetSqlInfo(ctx, []flightsql.SqlInfo{flightsql.SqlInfoFlightSqlServerName, flightsql.SqlInfoFlightSqlServerReadOnly}))
	if len(info.recs) != 1 || info.recs[0].NumRows() != 2 {
		t.Fatalf("sql info rows %v", info.batchRows)
	}
	names := info.recs[0].Column(0).(*array.Uint32)
	vals := info.recs[0].Column(1).(*array.DenseUnion)
	for i := range names.Len() {
		if flightsql.SqlInfo(names.Value(i)) == flightsql.SqlInfoFlightSqlServerName {
			child := vals.Field(vals.ChildID(i)).(*array.String)
			if got := child.Value(int(vals.ValueOffset(i))); got != "flightsrv" {
				t.Fatalf("server name %q", got)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }
