package ops

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// runTimeSeries runs ProjectSet of generate_series(start, stop, step) over one input row of
// nanosecond timestamps (a zero time: NULL) and returns the values it yields, RFC 3339.
func runTimeSeries(t *testing.T, start, stop time.Time, step *arrow.MonthDayNanoInterval) ([]string, error) {
	t.Helper()
	ts := &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	in := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: ts, Nullable: true}, {Name: "b", Type: ts, Nullable: true},
		{Name: "s", Type: arrow.FixedWidthTypes.MonthDayNanoInterval, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, in)
	defer b.Release()
	for i, v := range []time.Time{start, stop} {
		if v.IsZero() {
			b.Field(i).AppendNull()
		} else {
			b.Field(i).(*array.TimestampBuilder).Append(arrow.Timestamp(v.UnixNano()))
		}
	}
	if step == nil {
		b.Field(2).AppendNull()
	} else {
		b.Field(2).(*array.MonthDayNanoIntervalBuilder).Append(*step)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	reader, err := array.NewRecordReader(in, []arrow.RecordBatch{rec})
	if err != nil {
		t.Fatal(err)
	}
	args := make([]*Expr, 3)
	for i := range args {
		if args[i], err = Column(in, i); err != nil {
			t.Fatal(err)
		}
	}
	fields := append(in.Fields(), arrow.Field{Name: "g", Type: ts, Nullable: true})
	out := ProjectSet(context.Background(), reader, []SetCall{{Name: "generate_series", Args: args}}, false, false, arrow.NewSchema(fields, nil), nil)
	defer out.Release()
	var got []string
	for out.Next() {
		g := out.RecordBatch().Column(3).(*array.Timestamp)
		for r := range g.Len() {
			got = append(got, time.Unix(0, int64(g.Value(r))).UTC().Format(time.RFC3339))
		}
	}
	return got, out.Err()
}

// TestProjectSetTimestampSeries: generate_series of timestamps adds the step to the previous
// value (PostgreSQL 15: generate_series('2024-01-31', '2024-05-31', '1 mon') is Jan 31,
// Feb 29, Mar 29, Apr 29, May 29), includes the stop, runs down with a negative step, yields
// nothing past the stop or over a NULL, and refuses a zero step ('1 mon -30 days' included).
func TestProjectSetTimestampSeries(t *testing.T) {
	day := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	iv := func(m, d int32, ns int64) *arrow.MonthDayNanoInterval {
		return &arrow.MonthDayNanoInterval{Months: m, Days: d, Nanoseconds: ns}
	}
	for _, c := range []struct {
		name        string
		start, stop string
		step        *arrow.MonthDayNanoInterval
		want        []string
	}{
		{"months", "2024-01-31T00:00:00Z", "2024-05-31T00:00:00Z", iv(1, 0, 0),
			[]string{"2024-01-31T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-29T00:00:00Z", "2024-04-29T00:00:00Z", "2024-05-29T00:00:00Z"}},
		{"hours end included", "2024-03-09T22:00:00Z", "2024-03-10T01:00:00Z", iv(0, 0, int64(time.Hour)),
			[]string{"2024-03-09T22:00:00Z", "2024-03-09T23:00:00Z", "2024-03-10T00:00:00Z", "2024-03-10T01:00:00Z"}},
		{"down", "2024-01-03T00:00:00Z", "2024-01-01T12:00:00Z", iv(0, -1, 0),
			[]string{"2024-01-03T00:00:00Z", "2024-01-02T00:00:00Z"}},
		{"mixed", "2024-01-31T00:00:00Z", "2024-04-01T00:00:00Z", iv(1, 1, int64(time.Hour)),
			[]string{"2024-01-31T00:00:00Z", "2024-03-01T01:00:00Z"}},
		{"past the stop", "2024-01-02T00:00:00Z", "2024-01-01T00:00:00Z", iv(0, 1, 0), nil},
		{"NULL step", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z", nil, nil},
		{"NULL start", "", "2024-01-03T00:00:00Z", iv(0, 1, 0), nil},
		{"out of range ends it", "2262-04-01T00:00:00Z", "2262-04-11T00:00:00Z", iv(0, 5, 0),
			[]string{"2262-04-01T00:00:00Z", "2262-04-06T00:00:00Z", "2262-04-11T00:00:00Z"}},
	} {
		var start time.Time
		if c.start != "" {
			start = day(c.start)
		}
		got, err := runTimeSeries(t, start, day(c.stop), c.step)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
	for _, step := range []*arrow.MonthDayNanoInterval{iv(0, 0, 0), iv(1, -30, 0), iv(0, 1, -int64(24*time.Hour))} {
		_, err := runTimeSeries(t, day("2024-01-01T00:00:00Z"), day("2024-02-01T00:00:00Z"), step)
		var de *DataError
		if !errors.As(err, &de) || de.Code != "22023" || de.Msg != "step size cannot equal zero" {
			t.Fatalf("step %v: %v, want 22023", *step, err)
		}
	}
}
