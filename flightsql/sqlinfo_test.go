package flightsql

import (
	"context"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
)

// sqlInfoAnswer returns the GetSqlInfo answer to ids (nil: all) by id.
func sqlInfoAnswer(t *testing.T, ids []uint32) map[uint32]any {
	t.Helper()
	cl, _ := startFake(t, nil)
	ctx := context.Background()
	info, err := cl.GetSqlInfo(ctx, toSqlInfo(ids))
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := cl.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	got := map[uint32]any{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		names := rec.Column(0).(*array.Uint32)
		vals := rec.Column(1).(*array.DenseUnion)
		for i := 0; i < int(rec.NumRows()); i++ {
			child := vals.Field(vals.ChildID(i))
			got[names.Value(i)] = child.GetOneForMarshal(int(vals.ValueOffset(i)))
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func toSqlInfo(ids []uint32) []flightsql.SqlInfo {
	out := make([]flightsql.SqlInfo, len(ids))
	for i, id := range ids {
		out[i] = flightsql.SqlInfo(id)
	}
	return out
}

// TestSqlInfo: every id of FlightSql.proto is answered when asked for by id (ADBC GetInfo,
// JDBC DatabaseMetaData); an answer to "all" leaves out the ids older JDBC drivers cannot
// parse; unknown ids are left out instead of failing the request.
func TestSqlInfo(t *testing.T) {
	var every []uint32
	for id := range pb.SqlInfo_name {
		every = append(every, uint32(id))
	}
	sort.Slice(every, func(i, j int) bool { return every[i] < every[j] })
	byID := sqlInfoAnswer(t, append(every, 99999))
	for _, id := range every {
		if _, ok := byID[id]; !ok {
			t.Errorf("sql info %d (%s) not answered", id, pb.SqlInfo(id))
		}
	}
	if _, ok := byID[99999]; ok || len(byID) != len(every) {
		t.Errorf("answered %d ids for %d known", len(byID), len(every))
	}
	all := sqlInfoAnswer(t, nil)
	for _, id := range every {
		_, ok := all[id]
		if ok == newerSqlInfos[id] {
			t.Errorf("sql info %d (%s) in the answer to all: %v", id, pb.SqlInfo(id), ok)
		}
	}
	if byID[uint32(pb.SqlInfo_FLIGHT_SQL_SERVER_NAME)] != "flightsrv" || byID[uint32(pb.SqlInfo_FLIGHT_SQL_SERVER_READ_ONLY)] != true {
		t.Errorf("name/read-only %v %v", byID[0], byID[3])
	}
}
