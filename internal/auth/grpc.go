package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/ratelog"
)

// HandshakeMethod is the full gRPC method name of Flight's Handshake, which authenticates
// itself (Authenticator.Handshake) and is let through by the interceptors.
const HandshakeMethod = "/arrow.flight.protocol.FlightService/Handshake"

// The only messages a refused call gets (gRPC UNAUTHENTICATED).
var (
	errNoCredentials  = status.Error(codes.Unauthenticated, "authentication required")
	errBadCredentials = status.Error(codes.Unauthenticated, "invalid credentials")
	// errChecksBusy answers Basic credentials that found no free password check (ErrBusy):
	// nothing was decided, the client may retry.
	errChecksBusy = status.Error(codes.Unavailable, "too many password checks at once: retry shortly, or sign in once and send the bearer token it returns")
)

// Authenticator checks the credentials of Flight calls: Basic (user and password from a
// users file) or Bearer (a token it issued, from any replica sharing the keyring), the scheme
// matched case-insensitively. Safe for concurrent use.
type Authenticator struct {
	users  *Users
	tokens *Tokens
	// refusals logs refused sign-ins, at most 10 a second (a client can cause them at will).
	refusals *ratelog.Limiter
}

// NewAuthenticator returns an Authenticator checking passwords with users and issuing and
// verifying tokens with tokens. Refused sign-ins are logged (slog.Default(), rate-limited)
// with the client's address, the scheme and, for Basic credentials, the user name; never a
// password or a token.
func NewAuthenticator(users *Users, tokens *Tokens) *Authenticator {
	return &Authenticator{users: users, tokens: tokens, refusals: ratelog.New(nil, 10, 20)}
}

// Authenticate checks one authorization header value, "Basic base64(user:password)" (padded
// or not: arrow-go's client omits the padding) or "Bearer token", and returns the user.
// Errors are ErrBadCredentials, ErrBusy (no password check free: retry) or ErrBadToken.
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
		a.logRefusal(ctx, "", "no credentials")
		return ctx, errNoCredentials
	}
	if len(vals) > 1 {
		a.logRefusal(ctx, "", "several authorization headers")
		return ctx, errBadCredentials
	}
	header := vals[0]
	user, err := a.Authenticate(header)
	if err != nil && isBearer(header) {
		// A bearer that no longer verifies: the renewed token of the TokenCookie, for clients
		// that keep the bearer of their handshake and only replay cookies (the JDBC driver).
		if tok := tokenCookie(md); tok != "" {
			if u, cerr := a.tokens.Verify(tok); cerr == nil {
				user, err, header = u, nil, "Bearer "+tok
			}
		}
	}
	if errors.Is(err, ErrBusy) {
		a.logRefusal(ctx, vals[0], "password checks busy")
		return ctx, errChecksBusy
	}
	if err != nil {
		a.logRefusal(ctx, vals[0], "invalid credentials")
		return ctx, errBadCredentials
	}
	return context.WithValue(WithUser(ctx, user), renewKey{}, header), nil
}

// TokenCookie names the cookie a renewal sets beside its authorization header: a client that
// never adopts a bearer from response headers but replays cookies (the Arrow Flight SQL JDBC
// driver keeps its handshake's bearer for the connection's life and sends the cookies it was
// given, docs/flightsql-clients.md) is authenticated by the cookie's token once its own bearer
// no longer verifies. It is only a fallback for a bearer: Basic credentials are never rescued.
const TokenCookie = "flightsrv_token"

// isBearer reports whether an authorization header value has the Bearer scheme.
func isBearer(header string) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(header), " ")
	return strings.EqualFold(scheme, "Bearer")
}

// tokenCookie returns the value of the TokenCookie among md's cookie headers, or "".
func tokenCookie(md metadata.MD) string {
	for _, h := range md.Get("cookie") {
		for _, c := range (&http.Request{Header: http.Header{"Cookie": {h}}}).Cookies() {
			if c.Name == TokenCookie {
				return c.Value
			}
		}
	}
	return ""
}

// renewKey carries the authorization header a call was authenticated with, for renewal.
type renewKey struct{}

// renewHeader returns the response headers renewing ctx's bearer token, or nil (renewal):
// authorization: Bearer <token>, and the same token in the TokenCookie.
func (a *Authenticator) renewHeader(ctx context.Context) metadata.MD {
	h, _ := ctx.Value(renewKey{}).(string)
	if v := a.renewal(h); v != "" {
		c := http.Cookie{Name: TokenCookie, Value: strings.TrimSpace(v[len("Bearer "):]), MaxAge: int(a.tokens.ttl / time.Second)}
		return metadata.Pairs("authorization", v, "set-cookie", c.String())
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

// logRefusal logs a refused sign-in: the peer's address, the scheme of header and, for Basic,
// the user name it claims (at most 64 bytes, and only when it is UTF-8): never the password
// or the token.
func (a *Authenticator) logRefusal(ctx context.Context, header, reason string) {
	attrs := []any{"reason", reason}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, "peer", p.Addr.String())
	}
	scheme, cred, _ := strings.Cut(strings.TrimSpace(header), " ")
	if scheme != "" {
		attrs = append(attrs, "scheme", strings.ToLower(scheme))
	}
	if strings.EqualFold(scheme, "Basic") {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
		if err != nil {
			raw, err = base64.RawStdEncoding.DecodeString(strings.TrimSpace(cred))
		}
		if name, _, ok := strings.Cut(string(raw), ":"); err == nil && ok && len(name) <= 64 && utf8.ValidString(name) {
			attrs = append(attrs, "user", name)
		}
	}
	a.refusals.Warn("sign-in refused", attrs...)
}
