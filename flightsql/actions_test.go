package flightsql

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestCheckActionBody: every dispatched action's body that does not decode as its message is
// INVALID_ARGUMENT naming that message, in words of ours (trial 32 m3); bodies that do pass.
func TestCheckActionBody(t *testing.T) {
	wrap := func(m proto.Message) []byte {
		a, err := anypb.New(m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	raw := func(m proto.Message) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	garbage := []byte{0xff, 0xff, 0xff}
	for _, c := range []struct {
		action string
		body   []byte
		want   string // "" passes
	}{
		{"CreatePreparedStatement", wrap(&pb.ActionCreatePreparedStatementRequest{Query: "SELECT 1"}), ""},
		{"CreatePreparedStatement", nil, "must hold a google.protobuf.Any of an arrow.flight.protocol.sql.ActionCreatePreparedStatementRequest"},
		{"CreatePreparedStatement", garbage, "ActionCreatePreparedStatementRequest"},
		{"CreatePreparedStatement", wrap(&pb.ActionClosePreparedStatementRequest{}), "ActionCreatePreparedStatementRequest"},
		{"CreatePreparedStatement", raw(&anypb.Any{TypeUrl: "type.googleapis.com/arrow.flight.protocol.sql.ActionCreatePreparedStatementRequest", Value: garbage}), "ActionCreatePreparedStatementRequest"},
		{"ClosePreparedStatement", wrap(&pb.ActionClosePreparedStatementRequest{PreparedStatementHandle: []byte("h")}), ""},
		{"ClosePreparedStatement", nil, "ActionClosePreparedStatementRequest"},
		{"CreatePreparedSubstraitPlan", []byte{}, "ActionCreatePreparedSubstraitPlanRequest"},
		{"BeginTransaction", nil, "ActionBeginTransactionRequest"},
		{"CancelQuery", nil, "ActionCancelQueryRequest"},
		{flight.CancelFlightInfoActionType, nil, ""}, // an empty message decodes
		{flight.CancelFlightInfoActionType, raw(&pb.CancelFlightInfoRequest{Info: &pb.FlightInfo{}}), ""},
		{flight.CancelFlightInfoActionType, garbage, "must hold an arrow.flight.protocol.CancelFlightInfoRequest"},
		{flight.SetSessionOptionsActionType, garbage, "SetSessionOptionsRequest"},
		{flight.CloseSessionActionType, nil, ""},
		{"NoSuchAction", garbage, ""}, // refused by its caller
	} {
		err := CheckActionBody(&flight.Action{Type: c.action, Body: c.body})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %x: %v, want nil", c.action, c.body, err)
			}
			continue
		}
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), c.want) || strings.Contains(st.Message(), "proto:") {
			t.Errorf("%s %x: %v, want InvalidArgument containing %q", c.action, c.body, err, c.want)
		}
	}
}
