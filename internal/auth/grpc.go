package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// HandshakeMethod is the full gRPC method name of Flight's Handshake, which authenticates
// itself (Authenticator.Handshake) and is let through by the interceptors.
const HandshakeMethod = "/arrow.flight.protocol.FlightService/Handshake"

// The only messages a refused call gets (gRPC UNAUTHENTICATED).
var (
	errNoCredentials  = status.Error(codes.Unauthenticated, "authentication required")
	errBadCredentials = status.Error(codes.Unauthenticated, "invalid credentials")
)

// Authenticator checks the credentials of Flight calls: Basic (user and password from a
// users file) or Bearer (a token it issued, from any replica sharing the keyring), the scheme
// matched case-insensitively. Safe for concurrent use.
type Authenticator struct {
	users  *Users
	tokens *Tokens
}

// NewAuthenticator returns an Authenticator checking passwords with users and issuing and
// verifying tokens with tokens.
func NewAuthenticator(users *Users, tokens *Tokens) *Authenticator {
	return &Authenticator{users: users, tokens: tokens}
}

// Authenticate checks one authorization header value, "Basic base64(user:password)" (padded
// or not: arrow-go's client omits the padding) or "Bearer token", and returns the user.
// Errors are ErrBadCredentials or ErrBadToken.
func (a *Authenticator) Authenticate(header string) (user string, err error) {
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	cred = strings.TrimSpace(cred)
	switch {
	case strings.EqualFold(scheme, "Basic"):
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			raw, err = base64.RawStdEncoding.DecodeString(cred)
		}
		if err != nil {
			return "", ErrBadCredentials
		}
		name, password, ok := strings.Cut(string(raw), ":")
		if !ok {
			return "", ErrBadCredentials
		}
		if err := a.users.Check(name, password); err != nil {
			return "", err
		}
		return name, nil
	case strings.EqualFold(scheme, "Bearer"):
		return a.tokens.Verify(cred)
	}
	return "", ErrBadCredentials
}

// renewal returns the header value "Bearer <fresh token>" for a call authenticated with
// header when header is a bearer token past half its lifetime, else "". Clients that adopt a
// bearer from response headers (the ADBC Flight SQL drivers, the Arrow Flight SQL JDBC
// driver) so keep a connection in use signed in indefinitely, while an idle one still expires
// with its token.
func (a *Authenticator) renewal(header string) string {
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	user, renew, err := a.tokens.check(strings.TrimSpace(cred))
	if err != nil || !renew {
		return ""
	}
	token, _, err := a.tokens.Issue(user)
	if err != nil {
		return ""
	}
	return "Bearer " + token
}

// authenticateContext authenticates the authorization header of an incoming call.
func (a *Authenticator) authenticateContext(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return ctx, errNoCredentials
	}
	if len(vals) > 1 {
		return ctx, errBadCredentials
	}
	user, err := a.Authenticate(vals[0])
	if err != nil {
		return ctx, errBadCredentials
	}
	return context.WithValue(WithUser(ctx, user), renewKey{}, vals[0]), nil
}

// renewKey carries the authorization header a call was authenticated with, for renewal.
type renewKey struct{}

// renewHeader returns the response header renewing ctx's bearer token, or nil (renewal).
func (a *Authenticator) renewHeader(ctx context.Context) metadata.MD {
	h, _ := ctx.Value(renewKey{}).(string)
	if v := a.renewal(h); v != "" {
		return metadata.Pairs("authorization", v)
	}
	return nil
}

// UnaryInterceptor refuses unary calls without valid credentials (UNAUTHENTICATED) and
// passes the user on in the context (UserFrom).
func (a *Authenticator) UnaryInterceptor(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	ctx, err := a.authenticateContext(ctx)
	if err != nil {
		return nil, err
	}
	if md := a.renewHeader(ctx); md != nil {
		_ = grpc.SetHeader(ctx, md) // a response header: sent with the answer
	}
	return handler(ctx, req)
}

// StreamInterceptor refuses streaming calls other than Handshake without valid credentials
// (UNAUTHENTICATED) and passes the user on in the stream's context (UserFrom).
func (a *Authenticator) StreamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == HandshakeMethod {
		return handler(srv, ss)
	}
	ctx, err := a.authenticateContext(ss.Context())
	if err != nil {
		return err
	}
	if md := a.renewHeader(ctx); md != nil {
		_ = ss.SetHeader(md)
	}
	return handler(srv, &userStream{ServerStream: ss, ctx: ctx})
}

type userStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *userStream) Context() context.Context { return s.ctx }

// Handshake serves Flight's Handshake: it authenticates the call's authorization header
// (Basic, or Bearer to renew a token), answers with the header "authorization: Bearer
// <token>" (what arrow-go, ADBC, pyarrow and the JDBC driver read) and one HandshakeResponse
// whose payload is the token, after draining the requests. Bad credentials are
// UNAUTHENTICATED.
func (a *Authenticator) Handshake(stream flight.FlightService_HandshakeServer) error {
	ctx, err := a.authenticateContext(stream.Context())
	if err != nil {
		return err
	}
	token, _, err := a.tokens.Issue(UserFrom(ctx))
	if err != nil {
		return status.Error(codes.Internal, "token could not be issued")
	}
	if err := stream.SendHeader(metadata.Pairs("authorization", "Bearer "+token)); err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
	}
	return stream.Send(&flight.HandshakeResponse{Payload: []byte(token)})
}

type userKey struct{}

// WithUser returns ctx carrying the authenticated user name.
func WithUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom returns the authenticated user of ctx; "" when the server runs without
// authentication.
func UserFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}
