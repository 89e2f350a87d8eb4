package flightsql

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// actionBody is the message an action's body must hold: wrapped in a google.protobuf.Any
// (Flight SQL's actions, FlightSql.proto) or as it is (Flight's own, Flight.proto).
type actionBody struct {
	msg     proto.Message
	wrapped bool
}

// actionBodies are the bodies of the actions the server dispatches.
var actionBodies = map[string]actionBody{
	flight.CancelFlightInfoActionType:                    {&pb.CancelFlightInfoRequest{}, false},
	flight.RenewFlightEndpointActionType:                 {&pb.RenewFlightEndpointRequest{}, false},
	flight.SetSessionOptionsActionType:                   {&pb.SetSessionOptionsRequest{}, false},
	flight.GetSessionOptionsActionType:                   {&pb.GetSessionOptionsRequest{}, false},
	flight.CloseSessionActionType:                        {&pb.CloseSessionRequest{}, false},
	arrowflightsql.BeginSavepointActionType:              {&pb.ActionBeginSavepointRequest{}, true},
	arrowflightsql.BeginTransactionActionType:            {&pb.ActionBeginTransactionRequest{}, true},
	arrowflightsql.CancelQueryActionType:                 {&pb.ActionCancelQueryRequest{}, true},
	arrowflightsql.CreatePreparedStatementActionType:     {&pb.ActionCreatePreparedStatementRequest{}, true},
	arrowflightsql.CreatePreparedSubstraitPlanActionType: {&pb.ActionCreatePreparedSubstraitPlanRequest{}, true},
	arrowflightsql.ClosePreparedStatementActionType:      {&pb.ActionClosePreparedStatementRequest{}, true},
	arrowflightsql.EndTransactionActionType:              {&pb.ActionEndTransactionRequest{}, true},
	arrowflightsql.EndSavepointActionType:                {&pb.ActionEndSavepointRequest{}, true},
}

// CheckActionBody returns INVALID_ARGUMENT naming the message a's body must hold when it does
// not decode as that message (a Flight SQL action's body: an Any of it; an empty body is then
// an Any of nothing), so that the dispatcher's protobuf wording (which names Go's message
// types and echoes the client's type URL) never reaches the client (trial 32 m3). Actions it
// does not know pass: the caller refuses them.
func CheckActionBody(a *flight.Action) error {
	want, ok := actionBodies[a.GetType()]
	if !ok {
		return nil
	}
	name := want.msg.ProtoReflect().Descriptor().FullName()
	if !want.wrapped {
		if proto.Unmarshal(a.GetBody(), want.msg.ProtoReflect().New().Interface()) != nil {
			return badActionBody(a.GetType(), name, false)
		}
		return nil
	}
	var wrapper anypb.Any
	if proto.Unmarshal(a.GetBody(), &wrapper) != nil || wrapper.MessageName() != name ||
		proto.Unmarshal(wrapper.GetValue(), want.msg.ProtoReflect().New().Interface()) != nil {
		return badActionBody(a.GetType(), name, true)
	}
	return nil
}

func badActionBody(action string, name protoreflect.FullName, wrapped bool) error {
	if wrapped {
		return status.Errorf(codes.InvalidArgument, "the body of a %s action must hold a google.protobuf.Any of an %s", action, name)
	}
	return status.Errorf(codes.InvalidArgument, "the body of a %s action must hold an %s", action, name)
}
