package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
	"github.com/flightsrv/flightsrv/internal/testsupport/testproc"
)

// bearerAdopter is the client middleware an arrow-go application needs to stay signed in:
// arrow-go's Flight client sends the bearer its handshake returned
// (flight.Client.AuthenticateBasicToken puts it into a context once) and reads no response
// header by itself, so this middleware sends the latest bearer on every call and adopts the
// one a response carries (`authorization: Bearer …`, internal/auth/grpc.go), as the ADBC Go
// driver's middleware does (docs/flightsql-clients.md).
type bearerAdopter struct {
	mu     sync.Mutex
	bearer string   // "Bearer <token>"
	seen   []string // every bearer held, in order
}

// StartCall sends the bearer held.
func (b *bearerAdopter) StartCall(ctx context.Context) context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bearer == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", b.bearer)
}

// HeadersReceived adopts a bearer from a response's headers when it expires later than the
// one held: arrow-go delivers a stream's headers a second time when the stream is finished
// or, for one never read to its end (AuthenticateBasicToken reads the Handshake's one
// message), when the garbage collector finalizes it (flight/client.go, CreateClientMiddleware),
// so that the Handshake's first token can arrive again long after it was renewed.
func (b *bearerAdopter) HeadersReceived(_ context.Context, md metadata.MD) {
	for _, v := range md.Get("authorization") {
		if scheme, _, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			b.set(v)
		}
	}
}

// set adopts bearer v unless the one held expires at the same time or later.
func (b *bearerAdopter) set(v string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bearer != "" && bearerExpiry(v) <= bearerExpiry(b.bearer) {
		return
	}
	b.bearer = v
	b.seen = append(b.seen, v)
}

// bearerExpiry returns the "exp" claim (Unix seconds) of "Bearer <JWT>", 0 when it has none.
func bearerExpiry(v string) int64 {
	parts := strings.Split(v[strings.IndexByte(v, ' ')+1:], ".")
	if len(parts) != 3 {
		return 0
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return 0
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	_ = json.Unmarshal(payload, &claims)
	return claims.Exp
}

// writeUsers writes a users file (user:bcrypt-hash, the format of serve --auth-users) holding
// user with password.
func writeUsers(t *testing.T, user, password string) string {
	t.Helper()
	hash, err := auth.HashPassword(password)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte(user+":"+hash+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConnectionKeptAcrossTokenLifetimes (issue 20): `flightsrv serve --auth-token-ttl 3s
// --auth-clock-skew -1s` (no leeway: a token is refused from its expiry on). One arrow-go
// Flight SQL connection signs in with the handshake, then queries every 400 ms for more than
// three token lifetimes: every query answers the hot rows, because every call made past half
// the token's lifetime is answered with a fresh bearer the client adopts (it held a new token
// in each lifetime). The handshake's own token, used after its expiry, is refused
// UNAUTHENTICATED, and so is the connection once left idle past its latest token's expiry.
func TestConnectionKeptAcrossTokenLifetimes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	ctx := context.Background()
	st, dbURL := pgtest.Start(t).NewStore(t)
	appendHot(t, st)
	const ttl = 3 * time.Second
	users := writeUsers(t, "analyst", "correct horse battery staple")
	keyring := testproc.WriteKeyring(t, "e2e-tokens")
	bin := testproc.BuildFlightsrv(t)
	addr := startServe(t, bin, func(addr string) []string {
		return []string{"serve", "--store", dbURL, "--archive", t.TempDir(),
			"--auth-users", users, "--auth-keyring", keyring, "--auth-token-ttl", ttl.String(), "--auth-clock-skew", "-1s",
			"--table", "name=flights,id=" + flightsTable.TableID + ",partition=origin,strategy=month",
			"--listen", addr, "--go-memory-limit", "off"}
	}).addr

	adopter := &bearerAdopter{}
	cl, err := flightsql.NewClient(addr, nil, []flight.ClientMiddleware{flight.CreateClientMiddleware(adopter)},
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent("flightsrv-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := hotRowsNow(ctx, cl); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a query before signing in: %v, want UNAUTHENTICATED", err)
	}
	authCtx, err := cl.Client.AuthenticateBasicToken(ctx, "analyst", "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	md, _ := metadata.FromOutgoingContext(authCtx)
	first := md.Get("authorization")
	if len(first) != 1 {
		t.Fatalf("handshake bearer %v", first)
	}
	adopter.set(first[0])
	signedIn := time.Now()

	queries := 0
	for time.Since(signedIn) < 3*ttl+ttl/2 {
		n, err := hotRowsNow(ctx, cl)
		if err != nil || n != hotRows {
			adopter.mu.Lock()
			held := len(adopter.seen)
			adopter.mu.Unlock()
			t.Fatalf("query %d, %v after signing in (%d tokens held): %d rows, %v; want %d", queries, time.Since(signedIn).Round(time.Millisecond), held, n, err, hotRows)
		}
		queries++
		time.Sleep(400 * time.Millisecond)
	}
	adopter.mu.Lock()
	held := len(adopter.seen)
	adopter.mu.Unlock()
	// A token lives at most ttl and is renewed past half of it: more than three lifetimes of
	// use need at least three renewals beside the handshake's token.
	if held < 4 {
		t.Fatalf("%d queries over %v held %d bearer tokens, want the handshake's and at least three renewals", queries, 3*ttl+ttl/2, held)
	}
	t.Logf("%d queries over %v, every one answered; the connection held %d tokens", queries, time.Since(signedIn).Round(time.Millisecond), held)

	// The handshake's token alone, long expired (no renewal adopted): refused.
	stale := metadata.AppendToOutgoingContext(ctx, "authorization", first[0])
	bare := dialAddr(t, addr, 0)
	if _, err := hotRowsNow(stale, bare); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("the handshake's token after %v: %v, want UNAUTHENTICATED", time.Since(signedIn), err)
	}
	// Idle past the latest token's expiry (it was issued at most now, so ttl and a second of
	// JWT's whole-second times later it has expired): the connection is refused.
	time.Sleep(ttl + 1100*time.Millisecond)
	if _, err := hotRowsNow(ctx, cl); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a query after %v idle: %v, want UNAUTHENTICATED", ttl+1100*time.Millisecond, err)
	}
}
