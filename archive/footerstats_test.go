package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/encoding/thrift"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/routing"
)

// Mirrors of the footer's structs down to the statistics (Parquet's FileMetaData, RowGroup,
// ColumnChunk, ColumnMetaData), decoded by parquet-go's reflective thrift decoder: the
// reference leafStatistics is checked against. The extra fields give the walker something
// of every kind to skip.
type refFileMeta struct {
	Version   int32           `thrift:"1"`
	NumRows   int64           `thrift:"3"`
	RowGroups []refRowGroup   `thrift:"4"`
	KeyValues []refKeyValue   `thrift:"5"`
	CreatedBy string          `thrift:"6"`
	Flags     []bool          `thrift:"20"`
	Weights   []float64       `thrift:"21"`
	Nested    [][]refKeyValue `thrift:"22"`
}

type refKeyValue struct {
	Key   string `thrift:"1"`
	Value string `thrift:"2"`
}

type refRowGroup struct {
	Columns []refColumnChunk `thrift:"1"`
	Bytes   int64            `thrift:"2"`
	NumRows int64            `thrift:"3"`
	Sorted  *bool            `thrift:"4"`
}

type refColumnChunk struct {
	FilePath string          `thrift:"1"`
	Offset   int64           `thrift:"2"`
	MetaData *refColumnMeta  `thrift:"3"`
	Ordinal  int16           `thrift:"6"`
	Extra    []refColumnMeta `thrift:"7"`
}

type refColumnMeta struct {
	Type       int32          `thrift:"1"`
	Path       []string       `thrift:"3"`
	Statistics *rawStatistics `thrift:"12"`
	Tiny       int8           `thrift:"13"`
}

// refLeafStatistics is leafStatistics computed from the reflective decode.
func refLeafStatistics(b []byte, leaf int) ([]*rawStatistics, error) {
	var raw refFileMeta
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b, &raw); err != nil {
		return nil, err
	}
	out := make([]*rawStatistics, len(raw.RowGroups))
	for i, rg := range raw.RowGroups {
		if leaf < 0 {
			continue
		}
		if leaf >= len(rg.Columns) {
			return nil, errFooterStats
		}
		if m := rg.Columns[leaf].MetaData; m != nil {
			out[i] = m.Statistics
		}
	}
	return out, nil
}

// parquetFooter returns the footer bytes of a Parquet payload.
func parquetFooter(t testing.TB, p []byte) []byte {
	t.Helper()
	n := int(binary.LittleEndian.Uint32(p[len(p)-8:]))
	return p[len(p)-8-n : len(p)-8]
}

// footerSeeds returns footers the writer produced (several row groups, and none) and footers
// marshalled from refFileMeta with every statistics field present, absent and flagged.
func footerSeeds(t testing.TB) [][]byte {
	b := testBucket("ORD", routing.CalendarMonthUTC, time.Date(2001, 3, 1, 0, 0, 0, 0, time.UTC))
	var seeds [][]byte
	for i, shape := range []struct{ n, groupRows int }{{200, DefaultRowGroupRows}, {40, 16}, {0, 1}} {
		p, err := encodeParquetPayload(genRecords(newRand(uint64(i)), b, shape.n), shape.groupRows, 256)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, parquetFooter(t, p))
	}
	yes, no, zero, three := true, false, int64(0), int64(-3)
	stats := []*rawStatistics{
		nil,
		{},
		{NullCount: &zero, MinValue: []byte{1, 2}, MaxValue: []byte{}},
		{NullCount: &three, MinValue: bytes.Repeat([]byte{7}, 300), MaxValue: []byte{9}, IsMaxValueExact: &yes, IsMinValueExact: &no},
		{IsMinValueExact: &yes},
	}
	meta := refFileMeta{Version: 2, NumRows: 9, CreatedBy: "test", Flags: []bool{true, false, true},
		Weights: []float64{1.5}, KeyValues: []refKeyValue{{"a", "b"}}, Nested: [][]refKeyValue{{{"c", ""}}, nil}}
	for i, st := range stats {
		cols := make([]refColumnChunk, 1+i%3)
		for j := range cols {
			cols[j] = refColumnChunk{FilePath: "x", Offset: int64(j) << 40, Ordinal: int16(-j),
				MetaData: &refColumnMeta{Type: 2, Path: []string{"p"}, Statistics: st, Tiny: -1}}
		}
		cols[0].Extra = []refColumnMeta{{Statistics: stats[3]}}
		if i == 1 {
			cols[len(cols)-1].MetaData = nil
		}
		meta.RowGroups = append(meta.RowGroups, refRowGroup{Columns: cols, Bytes: 1, NumRows: 3, Sorted: &yes})
	}
	for i := range 20 { // past 15 list elements, the long list header
		meta.RowGroups = append(meta.RowGroups, refRowGroup{Columns: make([]refColumnChunk, 3), NumRows: int64(i)})
	}
	for _, m := range []refFileMeta{meta, {RowGroups: meta.RowGroups[:2]}, {}} {
		data, err := thrift.Marshal(new(thrift.CompactProtocol), &m)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return seeds
}

// checkLeafStatistics compares leafStatistics with the reference on b: where the reference
// decodes b, the same answer. Where it does not, leafStatistics may still answer: it skips
// what it does not keep without every check of the reflective decoder, and openFooter only
// calls it on footers parquet.OpenFile has decoded.
func checkLeafStatistics(t *testing.T, b []byte, leaf int) {
	t.Helper()
	got, err := leafStatistics(b, leaf)
	if err != nil && !errors.Is(err, errFooterStats) {
		t.Fatalf("leaf %d: error %v, want errFooterStats", leaf, err)
	}
	want, refErr := refLeafStatistics(b, leaf)
	switch {
	case refErr != nil:
	case err != nil:
		t.Fatalf("leaf %d: %v, the reference decodes %d groups", leaf, err, len(want))
	case len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want):
		t.Fatalf("leaf %d: got %s, want %s", leaf, statsString(got), statsString(want))
	}
}

func statsString(s []*rawStatistics) string {
	var buf bytes.Buffer
	for _, st := range s {
		if st == nil {
			buf.WriteString("nil ")
			continue
		}
		fmt.Fprintf(&buf, "{null %v max %x min %x exact %v %v} ", ptrString(st.NullCount), st.MaxValue, st.MinValue,
			ptrString(st.IsMaxValueExact), ptrString(st.IsMinValueExact))
	}
	return buf.String()
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "absent"
	}
	return fmt.Sprint(*p)
}

// TestLeafStatistics checks leafStatistics against the reflective decode on writer footers
// and hand-made ones, for every leaf each has (and for no leaf).
func TestLeafStatistics(t *testing.T) {
	for i, b := range footerSeeds(t) {
		for leaf := -1; leaf <= 5; leaf++ {
			if _, err := refLeafStatistics(b, leaf); err == nil || leaf <= 0 {
				checkLeafStatistics(t, b, leaf)
				if _, err := leafStatistics(b, leaf); err != nil {
					t.Fatalf("seed %d leaf %d: %v", i, leaf, err)
				}
			}
		}
	}
}

// FuzzLeafStatistics checks that leafStatistics, given any bytes, never panics and answers as
// the reflective decode wherever that decodes them.
func FuzzLeafStatistics(f *testing.F) {
	for _, s := range footerSeeds(f) {
		f.Add(s, int8(0))
		f.Add(s, int8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, leaf int8) {
		fuzzcount.Add()
		checkLeafStatistics(t, b, int(leaf%8))
	})
}
