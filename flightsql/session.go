package flightsql

import (
	"context"
	"encoding/base64"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
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
	// OptionTimeParameters is how prepared statements declare their time parameters (the
	// parameter schema of CreatePreparedStatement): "timestamp" (the default:
	// timestamp[ms, UTC], which the JDBC driver's setTimestamp fills exactly to the
	// millisecond) or "text" (utf8: the client sends ISO 8601 strings, kept to the
	// nanosecond; the JDBC driver's setString, whose setTimestamp carries epoch milliseconds
	// and whose setObject cannot bind java.time values, clients/java/README.md). Bound values
	// of any timestamp unit or an ISO string are accepted either way.
	OptionTimeParameters = "time_parameters"
)

// Values of OptionTimeParameters.
const (
	TimeParametersTimestamp = "timestamp"
	TimeParametersText      = "text"
)

// SessionHeaderPrefix prefixes the call headers that set a session option for one call:
// the header "flightsrv.analytical: on" makes that call's session analytical, whatever its
// cookie holds. This is how the JDBC driver, which sends every connection property it does
// not know as a call header and has no SetSessionOptions, sets session options
// (jdbc:arrow-flight-sql://host:port/?flightsrv.time_parameters=text). A header naming no
// option, or holding a value its option does not take, is refused with INVALID_ARGUMENT naming
// the header. Header names are lower case on the wire.
const SessionHeaderPrefix = "flightsrv."

// SessionCookie is the name of the cookie that carries a session's options: the base64url
// (unpadded) protobuf encoding of a GetSessionOptionsResult, as arrow-go's stateless
// sessions encode it. A cookie that does not decode, or holds an option or a value this
// server does not know (damaged, or written by another server), is refused: the call answers
// INVALID_ARGUMENT (errBadSessionCookie) and the response drops the cookie, so the client's
// next call starts a new session; SetSessionOptions and CloseSession, which replace the
// session, succeed (SetSessionOptions then starts from the defaults).
const SessionCookie = "flightsrv_session"

// errBadSessionCookie is the answer to a call whose session cookie is refused. It names the
// cookie and what the client should do, never the cookie's content.
var errBadSessionCookie = status.Error(codes.InvalidArgument, "the session cookie "+SessionCookie+
	" is invalid (damaged, or written by another server): it has been dropped, and the next call starts a new session with the default options; set the session options again")

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
		OptionCatalog:        stringOption(""),
		OptionSchema:         stringOption(DBSchemaName),
		OptionCompression:    stringOption(CompressionNone),
		OptionEndpoints:      stringOption(endpoints),
		OptionAnalytical:     stringOption(analytical),
		OptionTimeParameters: stringOption(TimeParametersTimestamp),
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
	case OptionTimeParameters:
		if isString {
			switch t := strings.ToLower(s.StringValue); t {
			case TimeParametersTimestamp, TimeParametersText:
				return t, pb.SetSessionOptionsResult_UNSPECIFIED
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

// cookieOptions returns the options of the session cookie of the call: the defaults
// overlaid with the cookie's options (the defaults alone without a cookie). A cookie that does
// not decode, or holds an option or a value this server does not take, is errBadSessionCookie.
func (s *Server) cookieOptions(ctx context.Context) (map[string]*flight.SessionOptionValue, error) {
	opts := s.sessionDefaults()
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("cookie") {
		for _, c := range (&http.Request{Header: http.Header{"Cookie": {h}}}).Cookies() {
			if c.Name != SessionCookie {
				continue
			}
			b, err := base64.RawURLEncoding.DecodeString(c.Value)
			if err != nil {
				return nil, errBadSessionCookie
			}
			var stored flight.GetSessionOptionsResult
			if proto.Unmarshal(b, &stored) != nil {
				return nil, errBadSessionCookie
			}
			for name, v := range stored.GetSessionOptions() {
				canon, e := normalizeOption(name, v)
				if e != pb.SetSessionOptionsResult_UNSPECIFIED {
					return nil, errBadSessionCookie
				}
				opts[name] = stringOption(canon)
			}
		}
	}
	return opts, nil
}

// sessionOptions returns the options of the calling session: its cookie's (cookieOptions)
// overlaid with the call's SessionHeaderPrefix headers. A refused cookie is errBadSessionCookie
// (and the response drops the cookie); a header naming no option, or a value its option does
// not take, is INVALID_ARGUMENT naming the header.
func (s *Server) sessionOptions(ctx context.Context) (map[string]*flight.SessionOptionValue, error) {
	opts, err := s.cookieOptions(ctx)
	if err != nil {
		dropSessionCookie(ctx)
		return nil, err
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for h, vals := range md {
		name, ok := strings.CutPrefix(h, SessionHeaderPrefix)
		if !ok || len(vals) == 0 {
			continue
		}
		if _, known := opts[name]; !known {
			return nil, status.Errorf(codes.InvalidArgument, "call header %s names no session option (%s)", h, strings.Join(slices.Sorted(maps.Keys(opts)), ", "))
		}
		canon, e := normalizeOption(name, stringOption(strings.TrimSpace(vals[len(vals)-1])))
		if e != pb.SetSessionOptionsResult_UNSPECIFIED {
			return nil, status.Errorf(codes.InvalidArgument, "call header %s: the session option %s does not take this value", h, name)
		}
		opts[name] = stringOption(canon)
	}
	return opts, nil
}

// sessionString returns the string value of option name of the calling session, "" when the
// session is refused: every call that reads it has checked the session first (prepare).
func (s *Server) sessionString(ctx context.Context, name string) string {
	opts, err := s.sessionOptions(ctx)
	if err != nil {
		return ""
	}
	return opts[name].GetStringValue()
}

// declaredParams returns the parameter schema a prepared statement declares to the calling
// session: params as planned, with every timestamp (and list of timestamps) declared as utf8
// when the session's OptionTimeParameters is "text".
func (s *Server) declaredParams(ctx context.Context, params *arrow.Schema) *arrow.Schema {
	if params == nil || s.sessionString(ctx, OptionTimeParameters) != TimeParametersText {
		return params
	}
	fields := params.Fields()
	for i, f := range fields {
		fields[i].Type = textTimes(f.Type)
	}
	md := params.Metadata()
	return arrow.NewSchema(fields, &md)
}

// textTimes returns t with timestamps and times of day replaced by utf8 (inside lists too).
func textTimes(t arrow.DataType) arrow.DataType {
	switch t := t.(type) {
	case *arrow.TimestampType, *arrow.Time32Type, *arrow.Time64Type:
		return arrow.BinaryTypes.String
	case *arrow.ListType:
		f := t.ElemField()
		f.Type = textTimes(f.Type)
		return arrow.ListOfField(f)
	}
	return t
}

// withSession returns ctx carrying what the engine needs of the session (session.Settings):
// the authenticated user and the analytical mode.
func withSession(ctx context.Context, analytical bool) context.Context {
	return session.With(ctx, session.Settings{User: auth.UserFrom(ctx), Analytical: analytical})
}

// dropSessionCookie tells the client, in the response headers of the call, to drop its
// session cookie. The headers reach the client with an error answer too.
func dropSessionCookie(ctx context.Context) {
	c := http.Cookie{Name: SessionCookie, Value: "", MaxAge: -1}
	_ = grpc.SetHeader(ctx, metadata.Pairs("set-cookie", c.String()))
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
// OptionCompression, OptionEndpoints, OptionAnalytical, OptionTimeParameters); an option sent
// without a value is reset to its default. Options that are unknown or take no such value are
// reported per option (INVALID_NAME, INVALID_VALUE) and leave the session unchanged; the
// others are applied. The new state is returned to the client in the session cookie (call
// headers, SessionHeaderPrefix, are not stored in it). A refused session cookie is replaced:
// the session starts again from the defaults.
func (s *Server) SetSessionOptions(ctx context.Context, req *flight.SetSessionOptionsRequest) (*flight.SetSessionOptionsResult, error) {
	opts, err := s.cookieOptions(ctx)
	if err != nil {
		opts = s.sessionDefaults()
	}
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
// current catalog and schema read "catalog" and "schema"), as the call's headers set them
// (SessionHeaderPrefix). A refused session cookie is errBadSessionCookie.
func (s *Server) GetSessionOptions(ctx context.Context, _ *flight.GetSessionOptionsRequest) (*flight.GetSessionOptionsResult, error) {
	opts, err := s.sessionOptions(ctx)
	if err != nil {
		return nil, err
	}
	return &flight.GetSessionOptionsResult{SessionOptions: opts}, nil
}

// CloseSession ends the calling session: the client is told to drop its session cookie, so
// that its next call starts from the defaults.
func (s *Server) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	if err := setSessionCookie(ctx, s.sessionDefaults(), -1); err != nil {
		return nil, s.toStatus(err)
	}
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}
