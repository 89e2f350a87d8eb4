package scan_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
)

func TestCountPerBin(t *testing.T) {
	t.Parallel()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true}}, nil)
	at := func(s string) time.Time { x, _ := time.Parse(time.RFC3339Nano, s); return x.UTC() }
	times := []time.Time{
		at("2024-03-03T23:59:59.999999999Z"), at("2024-03-04T00:00:00Z"), at("1969-12-31T23:59:59.9999995Z"),
		at("2024-03-04T10:00:00Z"), at("2024-02-26T00:00:00Z"),
	}
	var recs []arrow.RecordBatch
	for i := range 2 {
		b := array.NewRecordBuilder(mem, schema)
		tb := b.Field(0).(*array.TimestampBuilder)
		for _, x := range times[i*3 : min(len(times), i*3+3)] {
			tb.Append(arrow.Timestamp(x.UnixNano()))
		}
		tb.AppendNull()
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	rdr, err := array.NewRecordReader(schema, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}
	week := routing.TruncBinning(routing.TruncWeek)
	got, err := scan.CountPerBin(rdr, 0, week)
	rdr.Release()
	if err != nil {
		t.Fatal(err)
	}
	if want := routing.BinTimes(week, times); !slices.Equal(got, want) || len(want) != 3 {
		t.Fatalf("got %v, want %v", got, want)
	}

	bad, _ := array.NewRecordReader(arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64}}, nil), nil)
	defer bad.Release()
	if _, err := scan.CountPerBin(bad, 0, routing.Binning{}); !errors.Is(err, routing.ErrInvalidBinning) {
		t.Fatalf("zero binning: %v", err)
	}
	failing := scan.ErrReader(schema, errors.New("boom"))
	defer failing.Release()
	if _, err := scan.CountPerBin(failing, 0, week); err == nil || err.Error() != "boom" {
		t.Fatalf("reader error: %v", err)
	}
}
