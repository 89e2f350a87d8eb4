package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/testsupport/syncbuf"
)

// testPKI is a test CA with a server certificate for 127.0.0.1 and a client certificate,
// written as PEM files.
type testPKI struct {
	dir                                              string
	ca, serverCert, serverKey, clientCert, clientKey string
	pool                                             *x509.CertPool
	client                                           tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool()}
	now := time.Now().Add(-time.Minute)
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now, NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.pool.AddCert(caCert)
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(p.dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	p.ca = write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, ips []net.IP) (certPath, keyPath string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: now, NotAfter: now.Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return write(usageName(usage)+".pem", "CERTIFICATE", der), write(usageName(usage)+"-key.pem", "PRIVATE KEY", kder)
	}
	p.serverCert, p.serverKey = leaf(2, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.clientCert, p.clientKey = leaf(3, x509.ExtKeyUsageClientAuth, nil)
	p.client, err = tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func usageName(u x509.ExtKeyUsage) string {
	if u == x509.ExtKeyUsageServerAuth {
		return "server"
	}
	return "client"
}

// testSecuredServe serves the demo store st with authentication over mutual TLS, as `serve
// --auth-users … --auth-keyring … --tls-cert … --tls-key … --tls-client-ca …` does, then over
// TLS alone (without --tls-client-ca), and checks arrow-go's Flight SQL client (Basic
// handshake, then the bearer token) and its database/sql driver (Basic on every call) against
// each, and the refusals (checkSecuredServe).
func testSecuredServe(t *testing.T, st *openedStore, archive string) {
	pki := newTestPKI(t)
	hash, err := auth.HashPassword("pa:ss word")
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(pki.dir, "users")
	if err := os.WriteFile(users, []byte("ann:"+hash+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	key, _ := auth.GenerateKey("k1")
	ring, _ := auth.NewKeyring("k1", []auth.Key{key})
	b, _ := ring.MarshalJSON()
	keyring := filepath.Join(pki.dir, "keyring.json")
	if err := os.WriteFile(keyring, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Mutual TLS, then TLS alone: both with authentication.
	for _, mutual := range []bool{true, false} {
		t.Run(map[bool]string{true: "mutual TLS", false: "TLS"}[mutual], func(t *testing.T) {
			sec := securityConfig{authUsers: users, authKeyring: keyring, tlsCert: pki.serverCert, tlsKey: pki.serverKey}
			clientTLS := &tls.Config{RootCAs: pki.pool}
			if mutual {
				sec.tlsClientCA = pki.ca
				clientTLS.Certificates = []tls.Certificate{pki.client}
			}
			checkSecuredServe(t, st, archive, sec, clientTLS, pki.pool)
		})
	}
}

// checkSecuredServe serves st with sec and checks arrow-go's Flight SQL client and its
// database/sql driver over clientTLS: no credentials and a wrong password UNAUTHENTICATED, the
// Basic handshake's bearer token and Basic credentials on every call answered; plaintext
// refused, and with a client CA, TLS without a client certificate refused.
func checkSecuredServe(t *testing.T, st *openedStore, archive string, sec securityConfig, clientTLS *tls.Config, roots *x509.CertPool) {
	ctx := context.Background()
	// The refusals below must leave warnings naming the client's address (issue 20).
	var logs syncbuf.Buffer
	prevLog := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(prevLog)
	cfg := serveConfig{listen: "127.0.0.1:0", tables: tableFlags{demoTable}, pushdown: true, fanout: 4, archive: archive, sec: sec}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	srv, tel, err := startServer(ctx, &cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	defer srv.Close()
	const ordSQL = "SELECT COUNT(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'"

	cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(credentials.NewTLS(clientTLS)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	count := func(ctx context.Context) (int64, error) { return queryCount(ctx, cl, ordSQL) }
	if _, err := count(ctx); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without credentials: %v", err)
	}
	if _, err := cl.Client.AuthenticateBasicToken(ctx, "ann", "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong password: %v", err)
	}
	authed, err := cl.Client.AuthenticateBasicToken(ctx, "ann", "pa:ss word")
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if n, err := count(authed); err != nil || n != 16569 {
		t.Fatalf("ORD count with the bearer token: %d %v", n, err)
	}

	// database/sql: user and password in the DSN (Basic on every call).
	name := "flightsrv-test-tls"
	if sec.tlsClientCA != "" {
		name = "flightsrv-test-mtls"
	}
	if err := driver.RegisterTLSConfig(name, clientTLS); err != nil {
		t.Fatal(err)
	}
	defer driver.UnregisterTLSConfig(name)
	for _, c := range []struct {
		userinfo string
		ok       bool
	}{{"ann:pa%3Ass%20word", true}, {"ann:nope", false}} {
		db, err := sql.Open("flightsql", "flightsql://"+c.userinfo+"@"+srv.Addr()+"?tls="+name+"&timeout=30s")
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		err = db.QueryRowContext(ctx, strings.Replace(ordSQL, "'ORD'", "?", 1), "ORD").Scan(&n)
		db.Close()
		if c.ok && (err != nil || n != 16569) {
			t.Fatalf("database/sql with %s: %d %v", c.userinfo, n, err)
		}
		if !c.ok && status.Code(err) != codes.Unauthenticated {
			t.Fatalf("database/sql with %s: %v", c.userinfo, err)
		}
	}

	// Plaintext is refused, and with a client CA, TLS without a client certificate.
	plain, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Execute(authed, ordSQL); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext: %v", err)
	}
	// The server logs a refused handshake when its side of it ends, which may be after the
	// client gave up.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "TLS handshake refused") && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	out := logs.String()
	for _, want := range []string{"TLS handshake refused", "sign-in refused", "user=ann", "peer=127.0.0.1:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pa:ss") || strings.Contains(out, "nope") {
		t.Errorf("the log holds a password:\n%s", out)
	}
	if sec.tlsClientCA == "" {
		return
	}
	noCert, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots})))
	if err != nil {
		t.Fatal(err)
	}
	defer noCert.Close()
	if _, err := noCert.Execute(authed, ordSQL); err == nil {
		t.Fatal("TLS without a client certificate accepted")
	}
}

// TestExposureWarning: serve warns at start-up when a non-loopback listener serves without
// authentication, or authenticates without TLS; loopback and TLS listeners get no warning.
func TestExposureWarning(t *testing.T) {
	for _, c := range []struct {
		cfg    securityConfig
		listen string
		want   string
	}{
		{securityConfig{noAuth: true}, "127.0.0.1:32010", ""},
		{securityConfig{noAuth: true}, "localhost:32010", ""},
		{securityConfig{noAuth: true}, "0.0.0.0:32010", "serving without authentication"},
		{securityConfig{authUsers: "users"}, "[::1]:32010", ""},
		{securityConfig{authUsers: "users"}, "0.0.0.0:32010", "authentication without TLS on a non-loopback address"},
		{securityConfig{authUsers: "users"}, ":32010", "authentication without TLS on a non-loopback address"},
		{securityConfig{authUsers: "users"}, "10.1.2.3:32010", "authentication without TLS on a non-loopback address"},
		{securityConfig{authUsers: "users", tlsCert: "c.pem", tlsKey: "k.pem"}, "0.0.0.0:32010", ""},
	} {
		got := c.cfg.exposureWarning(c.listen)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%+v on %s: warning %q, want %q", c.cfg, c.listen, got, c.want)
		}
	}
	// build logs it.
	hash, err := auth.HashPassword("secret")
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(users, []byte("analyst:"+hash+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	_, _, _, err = (&securityConfig{authUsers: users}).build("0.0.0.0:32010")
	slog.SetDefault(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logged.String(), `level=WARN msg="authentication without TLS on a non-loopback address`) {
		t.Fatalf("log %q", logged.String())
	}
}

// TestTLSFilesBounded: a --tls-cert naming a device that never ends is refused at
// setting.MaxFileBytes instead of read without end (trial 33 m1: 2.5 GiB in 8 s).
func TestTLSFilesBounded(t *testing.T) {
	sec := securityConfig{noAuth: true, tlsCert: "/dev/zero", tlsKey: "/dev/zero"}
	if _, _, _, err := sec.build("127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("--tls-cert /dev/zero: %v, want refused as larger than the limit", err)
	}
}

// TestCertExpiry: a server or peer certificate that has expired, is not valid yet, or expires
// within two weeks is warned about when it loads (trial 33 m1: an expired certificate started
// without a word); one valid for longer is not.
func TestCertExpiry(t *testing.T) {
	pki := newTestPKI(t) // valid for the hour from a minute ago
	cert, err := loadKeyPair(pki.serverCert, pki.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(2 * time.Hour), "expired at"},
		{now.Add(-time.Hour), "not valid before"},
		{now, "expires at"},
		{now.Add(-30 * 24 * time.Hour), "not valid before"},
	} {
		if got := certExpiry(cert, c.at); !strings.Contains(got, c.want) {
			t.Errorf("at %s: %q, want %q", c.at, got, c.want)
		}
	}
	cert.Leaf.NotAfter = now.Add(30 * 24 * time.Hour)
	if got := certExpiry(cert, now); got != "" {
		t.Errorf("a certificate valid for 30 more days: %q", got)
	}
}
