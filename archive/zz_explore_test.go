package archive

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

type exploreRow struct {
	PartitionKey []byte `parquet:"partition_key"`
	EventTime    int64  `parquet:"event_time,timestamp(nanosecond)"`
	SortKey      []byte `parquet:"sort_key"`
	Value        []byte `parquet:"value"`
}

func TestExplore(t *testing.T) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[exploreRow](&buf, parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}), parquet.MaxRowsPerRowGroup(100), parquet.PageBufferSize(256))
	rows := make([]exploreRow, 250)
	for i := range rows {
		rows[i] = exploreRow{[]byte("p"), int64(i) * 1000, []byte(fmt.Sprint(i)), []byte("v")}
	}
	if _, err := w.Write(rows[:10]); err != nil { t.Fatal(err) }
	if err := w.Flush(); err != nil { t.Fatal(err) }
	if err := w.Flush(); err != nil { t.Fatal(err) }
	if _, err := w.Write(rows[10:]); err != nil { t.Fatal(err) }
	if err := w.Close(); err != nil { t.Fatal(err) }
	f, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil { t.Fatal(err) }
	md := f.Metadata()
	for _, s := range md.Schema { t.Logf("schema %+v", s) }
	t.Logf("orders %+v", md.ColumnOrders)
	for i, rg := range md.RowGroups {
		c := rg.Columns[1]
		t.Logf("rg %d rows %d stats %+v dict %d data %d ci %d oi %d", i, rg.NumRows, c.MetaData.Statistics, c.MetaData.DictionaryPageOffset, c.MetaData.DataPageOffset, c.ColumnIndexOffset, c.OffsetIndexOffset)
	}
	t.Logf("ci %d oi %d", len(f.ColumnIndexes()), len(f.OffsetIndexes()))
	for i := 1; i < len(f.ColumnIndexes()); i += 4 {
		t.Logf("ci %+v oi %+v", f.ColumnIndexes()[i], f.OffsetIndexes()[i])
	}
	t.Logf("size %d", buf.Len())
}
