// Command mksample derives the committed demo and test sample (testdata/flights-sample.parquet)
// from the shared 3-million-flight file: it keeps every Nth source row (default 10), adds an
// "id" column holding the zero-based source row index zero-padded to 10 digits (the same id
// `flightsrv load` generates when it loads the full file without an id column), and writes
// the columns date, delay, distance, origin, destination, id with ZSTD compression.
//
//	go run ./internal/tools/mksample -in ../shared/data/flights-3m.parquet -out testdata/flights-sample.parquet -every 10
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func main() {
	in := flag.String("in", "../shared/data/flights-3m.parquet", "source Parquet file")
	out := flag.String("out", "testdata/flights-sample.parquet", "sample Parquet file to write")
	every := flag.Int("every", 10, "keep every Nth row")
	flag.Parse()
	if err := run(*in, *out, *every); err != nil {
		log.Fatal(err)
	}
}

func run(in, out string, every int) error {
	ctx := context.Background()
	f, err := file.OpenParquetFile(in, false)
	if err != nil {
		return err
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 65536}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	src := rr.Schema()
	fields := append(append([]arrow.Field{}, src.Fields()...), arrow.Field{Name: "id", Type: arrow.BinaryTypes.String})
	schema := arrow.NewSchema(fields, nil)
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	defer o.Close()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(100000))
	w, err := pqarrow.NewFileWriter(schema, o, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	var row, kept int64
	for rr.Next() {
		rec := rr.RecordBatch()
		mask := array.NewBooleanBuilder(memory.DefaultAllocator)
		ids := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range rec.NumRows() {
			keep := (row+i)%int64(every) == 0
			mask.Append(keep)
			if keep {
				ids.Append(fmt.Sprintf("%010d", row+i))
			}
		}
		row += rec.NumRows()
		m := mask.NewArray()
		filtered, err := compute.FilterRecordBatch(ctx, rec, m, compute.DefaultFilterOptions())
		m.Release()
		if err != nil {
			return err
		}
		idArr := ids.NewArray()
		cols := append(append([]arrow.Array{}, filtered.Columns()...), idArr)
		outRec := array.NewRecordBatch(schema, cols, filtered.NumRows())
		kept += outRec.NumRows()
		if err := w.Write(outRec); err != nil {
			return err
		}
		outRec.Release()
		idArr.Release()
		filtered.Release()
		mask.Release()
		ids.Release()
	}
	if err := rr.Err(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	log.Printf("read %d rows, kept %d", row, kept)
	return nil
}
