package flightsql

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/session"
)

// Session options (SetSessionOptions/GetSessionOptions). A session is stateless: its options
// travel in a cookie the server sets (SessionCookie) and the client sends back, so any
// replica serves it, and what a query needs from it (the IPC compression) is sealed into the
// statement's ticket at GetFlightInfo, so DoGet never depends on session state.
const (
	// OptionCatalog is the current catalog: flightsrv has one unnamed catalog, so only ""
	// is accepted (ADBC's current catalog reads it).
	OptionCatalog = "catalog"
	// OptionSchema is the current database schema: DBSchemaName ("public"), matched
	// case-insensitively as an unquoted identifier folds to lower case.
	OptionSchema = "schema"
	// OptionCompression is the IPC body compression of the session's query results:
	// "none" (the default: the JDBC driver cannot decode compressed bodies), "zstd" or
	// "lz4" (LZ4 frame), the codecs of the Arrow IPC format (Message.fbs BodyCompression).
	OptionCompression = "ipc_compression"
	// OptionAnalytical enables the analytical mode for the session's queries: "on" lets a
	// query read a routed table without pinning its partitions (every partition of its time
	// range, discovered from the stores' route rows, within --analytical-max-partitions and
	// --max-buckets); "off" refuses such queries. The default is "off", or "on" when the
	// server runs with --analytical (Config.Analytical). A boolean value is accepted too, as
	// are "true"/"false"; the mode is sealed into each statement's ticket.
	OptionAnalytical = "analytical"
)

// SessionCookie is the name of the cookie that carries a session's options: the base64url
// (unpadded) protobuf encoding of a GetSessionOptionsResult, as arrow-go's stateless
// sessions encode it. An unreadable or invalid cookie is ignored (the defaults apply).
const SessionCookie = "flightsrv_session"

// Compression names the IPC compression codecs of OptionCompression.
const (
	CompressionNone = "none"
	CompressionZstd = "zstd"
	CompressionLZ4  = "lz4"
)

// sessionDefaults are the options of a new session (OptionEndpoints follows the server's
// Config.MultiEndpoint, OptionAnalytical its Config.Analytical).
func (s *Server) sessionDefaults() map[string]*flight.SessionOptionValue {
	endpoints := EndpointsSingle
	if s.multi {
		endpoints = EndpointsMultiple
	}
	analytical := "off"
	if s.analytical {
		analytical = "on"
	}
	return map[string]*flight.SessionOptionValue{
		OptionCatalog:     stringOption(""),
		OptionSchema:      stringOption(DBSchemaName),
		OptionCompression: stringOption(CompressionNone),
		OptionEndpoints:   stringOption(endpoints),
		OptionAnalytical:  stringOption(analytical),
	}
}

func stringOption(s string) *flight.SessionOptionValue {
	return &flight.SessionOptionValue{OptionValue: &pb.SessionOptionValue_StringValue{StringValue: s}}
}

// normalizeOption validates value for option name and returns its canonical form, or the
// SetSessionOptions error of the option (INVALID_NAME for an unknown option, INVALID_VALUE
// for a value the option does not take).
func normalizeOption(name string, v *flight.SessionOptionValue) (string, pb.SetSessionOptionsResult_ErrorValue) {
	s, isString := v.GetOptionValue().(*pb.SessionOptionValue_StringValue)
	switch name {
	case OptionCatalog:
		if isString && s.StringValue == "" {
			return "", pb.SetSessionOptionsResult_UNSPECIFIED
		}
	case OptionSchema:
		if isString && strings.EqualFold(s.StringValue, DBSchemaName) {
			return DBSchemaName, pb.SetSessionOptionsResult_UNSPECIFIED
		}
	case OptionCompression:
		if isString {
			switch c := strings.ToLower(s.StringValue); c {
			case CompressionNone, CompressionZstd, CompressionLZ4:
				return c, pb.SetSessionOptionsResult_UNSPECIFIED
			case "lz4_frame":
				return CompressionLZ4, pb.SetSessionOptionsResult_UNSPECIFIED
			}
		}
	case OptionEndpoints:
		if isString {
			switch e := strings.ToLower(s.StringValue); e {
			case EndpointsSingle, EndpointsMultiple:
				return e, pb.SetSessionOptionsResult_UNSPECIFIED
			}
		}
	case OptionAnalytical:
		if b, ok := v.GetOptionValue().(*pb.SessionOptionValue_BoolValue); ok {
			if b.BoolValue {
				return "on", pb.SetSessionOptionsResult_UNSPECIFIED
			}
			return "off", pb.SetSessionOptionsResult_UNSPECIFIED
		}
		if isString {
			switch strings.ToLower(s.StringValue) {
			case "on", "true":
				return "on", pb.SetSessionOptionsResult_UNSPECIFIED
			case "off", "false":
				return "off", pb.SetSessionOptionsResult_UNSPECIFIED
			}
		}
	default:
		return "", flight.SetSessionOptionsResultErrorInvalidName
	}
	return "", flight.SetSessionOptionsResultErrorInvalidValue
}

// sessionOptions returns the options of the calling session: the defaults overlaid with the
// valid options of the incoming session cookie.
func (s *Server) sessionOptions(ctx context.Context) map[string]*flight.SessionOptionValue {
	opts := s.sessionDefaults()
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("cookie") {
		for _, c := range (&http.Request{Header: http.Header{"Cookie": {h}}}).Cookies() {
			if c.Name != SessionCookie {
				continue
			}
			b, err := base64.RawURLEncoding.DecodeString(c.Value)
			if err != nil {
				continue
			}
			var stored flight.GetSessionOptionsResult
			if proto.Unmarshal(b, &stored) != nil {
				continue
			}
			for name, v := range stored.GetSessionOptions() {
				if canon, e := normalizeOption(name, v); e == pb.SetSessionOptionsResult_UNSPECIFIED {
					opts[name] = stringOption(canon)
				}
			}
		}
	}
	return opts
}

// sessionString returns the string value of option name of the calling session.
func (s *Server) sessionString(ctx context.Context, name string) string {
	return s.sessionOptions(ctx)[name].GetStringValue()
}

// withSession returns ctx carrying what the engine needs of the session (session.Settings):
// the authenticated user and the analytical mode.
func withSession(ctx context.Context, analytical bool) context.Context {
	return session.With(ctx, session.Settings{User: auth.UserFrom(ctx), Analytical: analytical})
}

// setSessionCookie sends the session cookie holding opts (maxAge < 0 deletes it) in the
// response headers of the call.
func setSessionCookie(ctx context.Context, opts map[string]*flight.SessionOptionValue, maxAge int) error {
	b, err := proto.Marshal(&flight.GetSessionOptionsResult{SessionOptions: opts})
	if err != nil {
		return err
	}
	c := http.Cookie{Name: SessionCookie, Value: base64.RawURLEncoding.EncodeToString(b), MaxAge: maxAge}
	return grpc.SetHeader(ctx, metadata.Pairs("set-cookie", c.String()))
}

// SetSessionOptions sets options of the calling session (OptionCatalog, OptionSchema,
// OptionCompression, OptionEndpoints, OptionAnalytical); an option sent without a value is reset to its default. Options that
// are unknown or take no such value are reported per option (INVALID_NAME, INVALID_VALUE)
// and leave the session unchanged; the others are applied. The new state is returned to the
// client in the session cookie.
func (s *Server) SetSessionOptions(ctx context.Context, req *flight.SetSessionOptionsRequest) (*flight.SetSessionOptionsResult, error) {
	opts := s.sessionOptions(ctx)
	defaults := s.sessionDefaults()
	res := &flight.SetSessionOptionsResult{}
	failed := map[string]*flight.SetSessionOptionsResultError{}
	for name, v := range req.GetSessionOptions() {
		if v.GetOptionValue() == nil {
			if d, ok := defaults[name]; ok {
				opts[name] = d
			} else {
				failed[name] = &flight.SetSessionOptionsResultError{Value: flight.SetSessionOptionsResultErrorInvalidName}
			}
			continue
		}
		canon, e := normalizeOption(name, v)
		if e != pb.SetSessionOptionsResult_UNSPECIFIED {
			failed[name] = &flight.SetSessionOptionsResultError{Value: e}
			continue
		}
		opts[name] = stringOption(canon)
	}
	if len(failed) > 0 {
		res.Errors = failed
	}
	if err := setSessionCookie(ctx, opts, 0); err != nil {
		return nil, s.toStatus(err)
	}
	return res, nil
}

// GetSessionOptions returns every option of the calling session, defaults included (ADBC's
// current catalog and schema read "catalog" and "schema").
func (s *Server) GetSessionOptions(ctx context.Context, _ *flight.GetSessionOptionsRequest) (*flight.GetSessionOptionsResult, error) {
	return &flight.GetSessionOptionsResult{SessionOptions: s.sessionOptions(ctx)}, nil
}

// CloseSession ends the calling session: the client is told to drop its session cookie, so
// that its next call starts from the defaults.
func (s *Server) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	if err := setSessionCookie(ctx, s.sessionDefaults(), -1); err != nil {
		return nil, s.toStatus(err)
	}
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}
