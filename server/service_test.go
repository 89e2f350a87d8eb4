package server

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	arrowflightsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// TestUnknownCommandIsUnimplemented: a command type outside the protobuf registry, and a
// known message that is no command, are UNIMPLEMENTED (arrow-go's dispatcher says
// INVALID_ARGUMENT); malformed bytes stay INVALID_ARGUMENT.
func TestUnknownCommandIsUnimplemented(t *testing.T) {
	g := service{FlightServer: arrowflightsql.NewFlightServer(&arrowflightsql.BaseServer{})}
	ctx := context.Background()
	future, _ := proto.Marshal(&anypb.Any{TypeUrl: "type.googleapis.com/arrow.flight.protocol.sql.CommandOfTheFuture", Value: []byte{10, 1, 'x'}})
	notACommand, _ := proto.Marshal(&anypb.Any{TypeUrl: "type.googleapis.com/arrow.flight.protocol.sql.ActionClosePreparedStatementRequest"})
	for name, c := range map[string]struct {
		cmd  []byte
		want codes.Code
	}{
		"unknown type":  {future, codes.Unimplemented},
		"not a command": {notACommand, codes.Unimplemented},
		"malformed":     {[]byte{0xff, 0xff, 0xff}, codes.InvalidArgument},
	} {
		d := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: c.cmd}
		if _, err := g.GetFlightInfo(ctx, d); status.Code(err) != c.want {
			t.Errorf("GetFlightInfo %s: %v, want %s", name, err, c.want)
		}
		if _, err := g.GetSchema(ctx, d); status.Code(err) != c.want {
			t.Errorf("GetSchema %s: %v, want %s", name, err, c.want)
		}
		if _, err := g.PollFlightInfo(ctx, d); status.Code(err) != c.want && status.Code(err) != codes.Unimplemented {
			t.Errorf("PollFlightInfo %s: %v", name, err)
		}
	}
}
