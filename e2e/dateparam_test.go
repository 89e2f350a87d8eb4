package e2e

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestDateParametersAsPostgres: a date parameter (Arrow date32 or date64) inside PostgreSQL's
// dates reads as PostgreSQL reads it, its first and last day included; one past them is
// 22008 "date out of range", as date_recv refuses it (trial 32 F1: 5881580-07-11 was
// answered).
func TestDateParametersAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	cl := dial(t, e.on)
	pg := pgUTC(t, ctx, e.url)
	const lastDay, firstDay = 2_145_042_905, -2_440_588 // 5874897-12-31, 4714-11-24 BC
	for _, tc := range []struct {
		sql, theirs string
		typ         arrow.DataType
		days        int64 // date64: days × 86,400,000 ms
		refused     bool
	}{
		{"SELECT ?::text", "SELECT date '5874897-12-31'::text", arrow.FixedWidthTypes.Date32, lastDay, false},
		{"SELECT ?::text", "SELECT date '4714-11-24 BC'::text", arrow.FixedWidthTypes.Date32, firstDay, false},
		{"SELECT extract(year from ?::date)::text", "SELECT extract(year from date '2001-04-01')::text", arrow.FixedWidthTypes.Date32, 11413, false},
		{"SELECT ?::text", "SELECT date '2001-04-01'::text", arrow.FixedWidthTypes.Date64, 11413, false},
		{"SELECT ?::text", "SELECT date '1969-12-31'::text", arrow.FixedWidthTypes.Date64, -1, false},
		{"SELECT ?::text", "", arrow.FixedWidthTypes.Date32, lastDay + 1, true},
		{"SELECT ?::text", "", arrow.FixedWidthTypes.Date32, 1<<31 - 1, true},
		{"SELECT ?::text", "", arrow.FixedWidthTypes.Date32, firstDay - 1, true},
		{"SELECT extract(year from ?::date)", "", arrow.FixedWidthTypes.Date32, -1 << 31, true},
		{"SELECT ?::text", "", arrow.FixedWidthTypes.Date64, 1 << 40, true},
	} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "$1", Type: tc.typ, Nullable: true}}, nil))
		switch fb := b.Field(0).(type) {
		case *array.Date32Builder:
			fb.Append(arrow.Date32(tc.days))
		case *array.Date64Builder:
			fb.Append(arrow.Date64(tc.days * 86_400_000))
		}
		rec := b.NewRecordBatch()
		b.Release()
		stmt, err := cl.Prepare(ctx, tc.sql)
		if err != nil {
			t.Fatalf("%s: prepare: %v", tc.sql, err)
		}
		stmt.SetParameters(rec)
		info, err := stmt.Execute(ctx)
		var got *result
		if err == nil {
			got, err = fetch(ctx, cl, info)
		}
		stmt.Close(ctx)
		rec.Release()
		if tc.refused {
			if st, _ := status.FromError(err); err == nil || st.Code() != codes.InvalidArgument || sqlstateOf(err) != "22008" {
				t.Fatalf("%s with %d days: %v %v, want InvalidArgument 22008", tc.sql, tc.days, got, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s with %d days: %v", tc.sql, tc.days, err)
		}
		compareText(t, tc.sql, textColumns(got), pgTextRows(t, ctx, pg, tc.theirs))
	}
}
