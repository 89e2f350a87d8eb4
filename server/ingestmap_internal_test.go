package server

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/routing"
)

// TestIngestMappingAmbiguous: an ingest's columns match the table's whatever their case, two
// matching one of the table's are refused naming it, and other columns keep their case
// (trial 32 m5).
func TestIngestMappingAmbiguous(t *testing.T) {
	def := routing.TableDef{Name: "flights", TableID: "t", PartitionColumn: "origin", Strategy: routing.CalendarDayUTC, WritableBuckets: 1}
	str := arrow.BinaryTypes.String
	schema := func(names ...string) *arrow.Schema {
		fs := make([]arrow.Field, len(names))
		for i, n := range names {
			fs[i] = arrow.Field{Name: n, Type: str}
		}
		return arrow.NewSchema(fs, nil)
	}
	m, err := ingestMapping(def, schema("ORIGIN", "Timestamp", "id", "value"))
	if err != nil || m.Partition != "ORIGIN" || m.Time != "Timestamp" || m.ID != "id" || m.Payload != "value" {
		t.Fatalf("mapping %+v %v", m, err)
	}
	_, err = ingestMapping(def, schema("origin", "timestamp", "id", "ORIGIN", "x"))
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != "the rows have 2 columns named origin but for case; nothing was stored" {
		t.Fatalf("two origin columns: %v", err)
	}
	// Columns encoded into the value keep their case: delay and Delay are two JSON members.
	if m, err := ingestMapping(def, schema("origin", "timestamp", "id", "delay", "Delay")); err != nil || m.Payload != "" {
		t.Fatalf("wide rows with delay and Delay: %+v %v", m, err)
	}
}
