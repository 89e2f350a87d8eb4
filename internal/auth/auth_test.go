package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/testsupport/syncbuf"
)

// clock is a settable test clock.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock    { c := &clock{}; c.ns.Store(t.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

func mustKeyring(t *testing.T, ids ...string) *Keyring {
	t.Helper()
	var keys []Key
	for _, id := range ids {
		k, err := GenerateKey(id)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	r, err := NewKeyring(ids[0], keys)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestKeyringValidation(t *testing.T) {
	good, _ := GenerateKey("k1")
	for name, c := range map[string]struct {
		active string
		keys   []Key
		want   string
	}{
		"short secret": {"k1", []Key{{ID: "k1", Secret: make([]byte, 31)}}, "at least 32"},
		"bad id":       {"a b", []Key{{ID: "a b", Secret: good.Secret}}, "must be 1 to 64"},
		"duplicate":    {"k1", []Key{good, good}, "appears twice"},
		"no active":    {"k2", []Key{good}, "not in the keyring"},
	} {
		if _, err := NewKeyring(c.active, c.keys); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

func TestKeyringFileRoundTripAndRotation(t *testing.T) {
	old := mustKeyring(t, "old")
	path := filepath.Join(t.TempDir(), "keyring.json")
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	id, sig := old.Sign("ticket", []byte("payload"))
	if err := loaded.Verify("ticket", id, []byte("payload"), sig); err != nil {
		t.Fatalf("a loaded keyring must verify what the original signed: %v", err)
	}
	if err := loaded.Verify("token", id, []byte("payload"), sig); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another domain: %v", err)
	}
	if err := loaded.Verify("ticket", id, []byte("payloaD"), sig); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("another payload: %v", err)
	}
	if err := loaded.Verify("ticket", "nope", []byte("payload"), sig); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	next, _ := GenerateKey("new")
	rotated, err := loaded.WithActive(next)
	if err != nil {
		t.Fatal(err)
	}
	if got := rotated.IDs(); strings.Join(got, ",") != "new,old" {
		t.Fatalf("ids %v", got)
	}
	if err := rotated.Verify("ticket", id, []byte("payload"), sig); err != nil {
		t.Fatalf("the old key must keep verifying after a rotation: %v", err)
	}
	if nid, _ := rotated.Sign("ticket", nil); nid != "new" {
		t.Fatalf("the new key must sign, got %s", nid)
	}
	if err := os.WriteFile(path, []byte(`{"active":"x","keys":[{"id":"x","secret":"c2hvcnQ="}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyring(path); err == nil || strings.Contains(err.Error(), "c2hvcnQ") {
		t.Fatalf("a short secret must be refused without quoting it: %v", err)
	}
}

// TestTokensRefused is the issue's token test: a token signed by another key, an expired
// token and a modified token are refused; a good one verifies.
func TestTokensRefused(t *testing.T) {
	clk := newClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	ring := mustKeyring(t, "k1")
	tokens := NewTokens(ring, time.Hour, clk.now)
	tok, exp, err := tokens.Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	if !exp.Equal(clk.now().Add(time.Hour)) {
		t.Fatalf("expiry %s", exp)
	}
	if u, err := tokens.Verify(tok); err != nil || u != "alice" {
		t.Fatalf("own token: %q %v", u, err)
	}
	// Another replica sharing the keyring verifies it.
	if u, err := NewTokens(ring, time.Hour, clk.now).Verify(tok); err != nil || u != "alice" {
		t.Fatalf("replica: %q %v", u, err)
	}

	// Signed by another key: a keyring whose key has the same id but another secret, and one
	// with another id.
	for _, other := range []*Keyring{mustKeyring(t, "k1"), mustKeyring(t, "k2")} {
		foreign, _, err := NewTokens(other, time.Hour, clk.now).Issue("alice")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tokens.Verify(foreign); !errors.Is(err, ErrBadToken) {
			t.Fatalf("token of another key (%s): %v", other.ActiveID(), err)
		}
	}

	// Modified: the payload's subject changed (signature kept), one signature character
	// changed, the header's key id changed, the algorithm set to none.
	parts := strings.Split(tok, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	forged := strings.Replace(string(payload), `"sub":"alice"`, `"sub":"admin"`, 1)
	if forged == string(payload) {
		t.Fatalf("payload %s has no subject", payload)
	}
	sig := []byte(parts[2])
	sig[5] ^= 1
	if sig[5] == '-'^1 || sig[5] == '_'^1 {
		sig[5] = 'A'
	}
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"k1"}`))
	header, _ := base64.RawURLEncoding.DecodeString(parts[0])
	otherKid := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(header), `"kid":"k1"`, `"kid":"k2"`, 1)))
	for name, m := range map[string]string{
		"subject":   parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2],
		"signature": parts[0] + "." + parts[1] + "." + string(sig),
		"key id":    otherKid + "." + parts[1] + "." + parts[2],
		"alg none":  none + "." + parts[1] + ".",
		"truncated": tok[:len(tok)-3],
		"garbage":   "not-a-token",
	} {
		if _, err := tokens.Verify(m); !errors.Is(err, ErrBadToken) {
			t.Errorf("modified token (%s) accepted: %v", name, err)
		}
	}

	// Issued by a replica whose clock is ahead by less than ClockSkew: accepted; further
	// ahead: not yet valid.
	ahead := func(d time.Duration) string {
		tok, _, _ := NewTokens(ring, time.Hour, func() time.Time { return clk.now().Add(d) }).Issue("alice")
		return tok
	}
	if _, err := tokens.Verify(ahead(ClockSkew - time.Second)); err != nil {
		t.Fatalf("token of a replica slightly ahead: %v", err)
	}
	if _, err := tokens.Verify(ahead(ClockSkew + 2*time.Second)); !errors.Is(err, ErrBadToken) {
		t.Fatalf("token issued in the future accepted: %v", err)
	}
	// Expired: valid until its expiry (give or take ClockSkew), refused from then on.
	clk.add(time.Hour + ClockSkew - time.Second)
	if _, err := tokens.Verify(tok); err != nil {
		t.Fatalf("within the skew of its expiry: %v", err)
	}
	clk.add(2 * time.Second)
	if _, err := tokens.Verify(tok); !errors.Is(err, ErrBadToken) {
		t.Fatalf("expired token accepted: %v", err)
	}
}

func testUsers(t *testing.T) *Users {
	t.Helper()
	h, err := HashPassword("s3cret pass")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("# users\n\nalice:"+h+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	u, err := LoadUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUsers(t *testing.T) {
	u := testUsers(t)
	if err := u.Check("alice", "s3cret pass"); err != nil {
		t.Fatal(err)
	}
	// Twice: the second check is answered from the remembered digest.
	if err := u.Check("alice", "s3cret pass"); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"alice", "s3cret pas"}, {"alice", ""}, {"bob", "s3cret pass"}, {"", ""}} {
		if err := u.Check(c[0], c[1]); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("%q/%q: %v", c[0], c[1], err)
		}
	}
	cheap, err := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"no colon":   "alice\n",
		"plain text": "alice:secret\n",
		"cheap hash": "alice:" + string(cheap) + "\n",
		"empty":      "# nobody\n",
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadUsers(p); err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "$2") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAuthenticateSchemes(t *testing.T) {
	ring := mustKeyring(t, "k1")
	a := NewAuthenticator(testUsers(t), NewTokens(ring, time.Hour, nil))
	tok, _, err := a.tokens.Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	basic := base64.StdEncoding.EncodeToString([]byte("alice:s3cret pass"))
	raw := base64.RawStdEncoding.EncodeToString([]byte("alice:s3cret pass"))
	for _, h := range []string{"Basic " + basic, "basic " + basic, "BASIC " + raw, "Bearer " + tok, "bearer " + tok, "BEARER  " + tok} {
		if u, err := a.Authenticate(h); err != nil || u != "alice" {
			t.Errorf("%.20s…: %q %v", h, u, err)
		}
	}
	for _, h := range []string{"", "Basic", "Basic !!!", "Basic " + base64.StdEncoding.EncodeToString([]byte("alice")),
		"Digest " + basic, "Bearer", "Bearer x.y.z", tok} {
		if _, err := a.Authenticate(h); err == nil {
			t.Errorf("%q accepted", h)
		}
	}
}

// probe is a Flight service whose ListFlights reports the authenticated user.
type probe struct{ flight.BaseFlightServer }

func (probe) ListFlights(_ *flight.Criteria, s flight.FlightService_ListFlightsServer) error {
	return s.Send(&flight.FlightInfo{FlightDescriptor: &flight.FlightDescriptor{Cmd: []byte(UserFrom(s.Context()))}})
}

func (probe) GetFlightInfo(ctx context.Context, _ *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return &flight.FlightInfo{FlightDescriptor: &flight.FlightDescriptor{Cmd: []byte(UserFrom(ctx))}}, nil
}

// authService answers Handshake with the authenticator, as server does.
type authService struct {
	probe
	a *Authenticator
}

func (s authService) Handshake(stream flight.FlightService_HandshakeServer) error {
	return s.a.Handshake(stream)
}

// TestFlightCalls runs a real gRPC Flight server with the interceptors and arrow-go's Flight
// client: the Basic handshake answers a bearer token in the authorization header, which then
// authenticates streaming and unary calls; Basic works on every call; anything else is
// UNAUTHENTICATED with a fixed message.
func TestFlightCalls(t *testing.T) {
	ring := mustKeyring(t, "k1")
	a := NewAuthenticator(testUsers(t), NewTokens(ring, time.Hour, nil))
	cl := serveAuth(t, a)
	ctx := context.Background()

	user := func(ctx context.Context) (string, error) {
		s, err := cl.ListFlights(ctx, &flight.Criteria{})
		if err != nil {
			return "", err
		}
		info, err := s.Recv()
		if err != nil {
			return "", err
		}
		unary, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{})
		if err != nil {
			return "", err
		}
		if string(unary.FlightDescriptor.Cmd) != string(info.FlightDescriptor.Cmd) {
			return "", errors.New("unary and streaming calls disagree")
		}
		return string(info.FlightDescriptor.Cmd), nil
	}
	authed, err := cl.AuthenticateBasicToken(ctx, "alice", "s3cret pass")
	if err != nil {
		t.Fatalf("Basic handshake: %v", err)
	}
	md, _ := metadata.FromOutgoingContext(authed)
	if v := md.Get("authorization"); len(v) != 1 || !strings.HasPrefix(v[0], "Bearer ") {
		t.Fatalf("handshake header %v", v)
	}
	if u, err := user(authed); err != nil || u != "alice" {
		t.Fatalf("bearer call: %q %v", u, err)
	}
	basic := metadata.AppendToOutgoingContext(ctx, "authorization", "basic "+base64.StdEncoding.EncodeToString([]byte("alice:s3cret pass")))
	if u, err := user(basic); err != nil || u != "alice" {
		t.Fatalf("basic call: %q %v", u, err)
	}
	if _, err := cl.AuthenticateBasicToken(ctx, "alice", "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong password handshake: %v", err)
	}
	foreign, _, _ := NewTokens(mustKeyring(t, "k1"), time.Hour, nil).Issue("alice")
	for name, c := range map[string]struct {
		ctx  context.Context
		want string
	}{
		"no credentials": {ctx, "authentication required"},
		"wrong password": {metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:nope"))), "invalid credentials"},
		"unknown user":   {metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("mallory:s3cret pass"))), "invalid credentials"},
		"foreign token":  {metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+foreign), "invalid credentials"},
	} {
		_, err := user(c.ctx)
		st, _ := status.FromError(err)
		if st.Code() != codes.Unauthenticated || st.Message() != c.want {
			t.Errorf("%s: %v, want UNAUTHENTICATED %q", name, err, c.want)
		}
	}
}

// TestTokenRenewedInUse: through a real gRPC Flight server, a call whose bearer token has
// passed half its lifetime gets a fresh token in its response header "authorization" (unary
// and streaming calls alike), one before that point and a Basic call get none; chaining the
// fresh tokens keeps a connection signed in across three token lifetimes, while the first
// token alone is refused once expired (plus the clock skew).
func TestTokenRenewedInUse(t *testing.T) {
	ring := mustKeyring(t, "k1")
	clk := newClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	a := NewAuthenticator(testUsers(t), NewTokens(ring, 10*time.Minute, clk.now))
	cl := serveAuth(t, a)
	ctx := context.Background()
	first, _, err := NewTokens(ring, 10*time.Minute, clk.now).Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	// call makes a unary and a streaming call with token and returns the renewed tokens.
	call := func(token string) (unary, stream string, err error) {
		cctx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		var hdr metadata.MD
		if _, err := cl.GetFlightInfo(cctx, &flight.FlightDescriptor{}, grpc.Header(&hdr)); err != nil {
			return "", "", err
		}
		if v := hdr.Get("authorization"); len(v) == 1 {
			unary = strings.TrimPrefix(v[0], "Bearer ")
		}
		s, err := cl.ListFlights(cctx, &flight.Criteria{})
		if err != nil {
			return "", "", err
		}
		sh, err := s.Header()
		if err != nil {
			return "", "", err
		}
		if _, err := s.Recv(); err != nil {
			return "", "", err
		}
		if v := sh.Get("authorization"); len(v) == 1 {
			stream = strings.TrimPrefix(v[0], "Bearer ")
		}
		return unary, stream, nil
	}
	clk.add(4 * time.Minute)
	if u, s, err := call(first); err != nil || u != "" || s != "" {
		t.Fatalf("before half its life: renewed %q %q, %v", u, s, err)
	}
	basic := metadata.AppendToOutgoingContext(ctx, "authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("alice:s3cret pass")))
	var hdr metadata.MD
	if _, err := cl.GetFlightInfo(basic, &flight.FlightDescriptor{}, grpc.Header(&hdr)); err != nil || len(hdr.Get("authorization")) != 0 {
		t.Fatalf("a Basic call: %v, header %v", err, hdr.Get("authorization"))
	}
	token := first
	for step := range 6 { // 6 × 6 minutes: over three 10-minute lifetimes
		clk.add(6 * time.Minute)
		u, s, err := call(token)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if u == "" || s == "" {
			t.Fatalf("step %d: no fresh token (unary %q, stream %q)", step, u, s)
		}
		if user, err := a.tokens.Verify(u); err != nil || user != "alice" {
			t.Fatalf("step %d: the fresh token: %q %v", step, user, err)
		}
		token = u
	}
	if _, _, err := call(first); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the first token, long expired: %v", err)
	}
}

// serveAuth serves the probe service behind a's interceptors and Handshake on a real gRPC
// server until the test ends, and returns a Flight client of it.
func serveAuth(t *testing.T, a *Authenticator) flight.Client {
	t.Helper()
	srv := flight.NewServerWithMiddleware(nil, grpc.ChainUnaryInterceptor(a.UnaryInterceptor), grpc.ChainStreamInterceptor(a.StreamInterceptor))
	srv.RegisterFlightService(authService{a: a})
	if err := srv.Init("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(srv.Shutdown)
	cl, err := flight.NewClientWithMiddleware(srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestSignInRefusalsLogged: refused sign-ins leave a warning with the client's address, the
// scheme and, for Basic, the user name claimed; never the password or the token.
func TestSignInRefusalsLogged(t *testing.T) {
	var logs syncbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prev)
	a := NewAuthenticator(testUsers(t), NewTokens(mustKeyring(t, "k1"), time.Hour, nil))
	cl := serveAuth(t, a)
	ctx := context.Background()
	for _, h := range []string{
		"Basic " + base64.StdEncoding.EncodeToString([]byte("mallory:hunter2-password")),
		"Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2Vu.c2ln",
	} {
		cctx := metadata.AppendToOutgoingContext(ctx, "authorization", h)
		if _, err := cl.GetFlightInfo(cctx, &flight.FlightDescriptor{}); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("%s: %v", h[:6], err)
		}
	}
	if _, err := cl.GetFlightInfo(ctx, &flight.FlightDescriptor{}); status.Code(err) != codes.Unauthenticated {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{"sign-in refused", "user=mallory", "scheme=basic", "scheme=bearer", "peer=127.0.0.1:", "reason=\"no credentials\""} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"hunter2", "c2VjcmV0", "eyJhbGci"} {
		if strings.Contains(out, bad) {
			t.Errorf("the log holds %q:\n%s", bad, out)
		}
	}
}

// TestClockSkewIsTheLeeway: a token is accepted up to the clock skew past its expiry (ClockSkew
// by default), exactly until its expiry with none (WithClockSkew negative), and up to a skew
// set (serve --auth-clock-skew).
func TestClockSkewIsTheLeeway(t *testing.T) {
	for _, c := range []struct {
		set, leeway time.Duration
	}{{0, ClockSkew}, {-time.Second, 0}, {5 * time.Second, 5 * time.Second}} {
		clk := newClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
		tokens := NewTokens(mustKeyring(t, "k1"), 3*time.Second, clk.now).WithClockSkew(c.set)
		tok, exp, err := tokens.Issue("alice")
		if err != nil {
			t.Fatal(err)
		}
		clk.ns.Store(exp.Add(c.leeway - time.Millisecond).UnixNano())
		if _, err := tokens.Verify(tok); err != nil {
			t.Fatalf("skew %v: refused %v past expiry: %v", c.set, c.leeway-time.Millisecond, err)
		}
		clk.ns.Store(exp.Add(c.leeway + time.Millisecond).UnixNano())
		if _, err := tokens.Verify(tok); !errors.Is(err, ErrBadToken) {
			t.Fatalf("skew %v: accepted %v past expiry: %v", c.set, c.leeway+time.Millisecond, err)
		}
	}
}

// TestTokenCookieRescuesAnExpiredBearer: a renewal also sets the TokenCookie (for the JDBC
// driver, which keeps its handshake's bearer and replays cookies); a call whose bearer has
// expired is accepted with a valid token in that cookie, refused with an expired one, and a
// Basic header with a wrong password is never rescued by the cookie.
func TestTokenCookieRescuesAnExpiredBearer(t *testing.T) {
	ring := mustKeyring(t, "k1")
	clk := newClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	a := NewAuthenticator(testUsers(t), NewTokens(ring, 10*time.Minute, clk.now).WithClockSkew(-1))
	cl := serveAuth(t, a)
	ctx := context.Background()
	first, _, err := NewTokens(ring, 10*time.Minute, clk.now).Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	clk.add(6 * time.Minute)
	var hdr metadata.MD
	if _, err := cl.GetFlightInfo(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+first), &flight.FlightDescriptor{}, grpc.Header(&hdr)); err != nil {
		t.Fatal(err)
	}
	var cookie string
	for _, v := range hdr.Get("set-cookie") {
		if strings.HasPrefix(v, TokenCookie+"=") {
			cookie, _, _ = strings.Cut(v, ";")
		}
	}
	if cookie == "" || cookie != TokenCookie+"="+strings.TrimPrefix(hdr.Get("authorization")[0], "Bearer ") {
		t.Fatalf("renewal headers %v: want the renewed token in the cookie %s", hdr, TokenCookie)
	}
	clk.add(5 * time.Minute) // first has expired; the renewed token has not
	call := func(authz, cookie string) error {
		cctx := metadata.AppendToOutgoingContext(ctx, "authorization", authz, "cookie", cookie)
		_, err := cl.GetFlightInfo(cctx, &flight.FlightDescriptor{})
		return err
	}
	if err := call("Bearer "+first, "other=1"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("expired bearer without the cookie: %v", err)
	}
	if err := call("Bearer "+first, "other=1; "+cookie); err != nil {
		t.Fatalf("expired bearer with the renewed token's cookie: %v", err)
	}
	if err := call("Basic "+base64.StdEncoding.EncodeToString([]byte("alice:wrong")), cookie); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a wrong password with the cookie: %v", err)
	}
	clk.add(10 * time.Minute) // the renewed token has expired too
	if err := call("Bearer "+first, cookie); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("expired bearer and expired cookie: %v", err)
	}
}
