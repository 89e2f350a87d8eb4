package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/flightsrv/flightsrv/internal/auth"
	"github.com/flightsrv/flightsrv/internal/panics"
	"github.com/flightsrv/flightsrv/internal/setting"
)

// securityConfig holds the authentication and TLS flags of serve and demo.
type securityConfig struct {
	noAuth      bool
	authUsers   string
	authKeyring string
	tokenTTL    time.Duration
	clockSkew   time.Duration
	tlsCert     string
	tlsKey      string
	tlsClientCA string
	admins      string
}

func (c *securityConfig) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.noAuth, "no-auth", false, "serve without authentication: every caller reads every table (use on loopback or behind an authenticating proxy only)")
	fs.StringVar(&c.authUsers, "auth-users", "", "users `FILE`: one user:bcrypt-hash per line (written by htpasswd -B, or by flightsrv auth hash-password); required unless --no-auth")
	fs.StringVar(&c.authKeyring, "auth-keyring", "", "keyring `FILE` signing bearer tokens, statement handles and tickets (written by flightsrv auth new-key); replicas behind one address must share it (default: a random key, valid on this process only)")
	fs.StringVar(&c.authKeyring, "keyring", "", "the same as --auth-keyring: a keyring `FILE` (with --no-auth it signs handles and tickets only)")
	fs.StringVar(&c.admins, "auth-admins", "", "comma-separated users of --auth-users who may cancel any query with SELECT flightsrv.cancel_query('<query id>') (default: none; with --no-auth every caller may)")
	fs.DurationVar(&c.tokenTTL, "auth-token-ttl", auth.DefaultTokenTTL, "how long a bearer token from the handshake stays valid; a call using one past half its lifetime is answered with a fresh one (response header authorization) (0: the default; negative: refused, tokens always expire)")
	fs.DurationVar(&c.clockSkew, "auth-clock-skew", auth.ClockSkew, "leeway on a token's issue, not-before and expiry times, for replicas whose clocks differ: a token is accepted this long past its expiry (0: the default; negative, e.g. -1s: none)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate chain: serve over TLS (plaintext connections are refused)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&c.tlsClientCA, "tls-client-ca", "", "PEM CA certificates: require client certificates signed by them (mutual TLS; needs --tls-cert)")
}

func (c *securityConfig) validate() error {
	if c.tokenTTL < 0 {
		return errors.New("--auth-token-ttl must not be negative: tokens always expire (0: the default)")
	}
	if c.noAuth && c.authUsers != "" {
		return errors.New("--no-auth contradicts --auth-users: choose one")
	}
	if c.noAuth && strings.TrimSpace(c.admins) != "" {
		return errors.New("--auth-admins names users of --auth-users; with --no-auth every caller is an administrator")
	}
	if !c.noAuth && c.authUsers == "" {
		return errors.New("authentication is on by default: pass --auth-users FILE (user:bcrypt-hash lines), or --no-auth to serve without it")
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if c.tlsClientCA != "" && c.tlsCert == "" {
		return errors.New("--tls-client-ca (mutual TLS) needs --tls-cert and --tls-key")
	}
	return nil
}

// adminList returns the users of --auth-admins.
func (c *securityConfig) adminList() []string {
	var out []string
	for _, u := range strings.Split(c.admins, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// build returns the keyring (nil without --auth-keyring: the caller's random per-process
// key), the authenticator (nil with --no-auth) and the TLS configuration (nil without
// --tls-cert).
func (c *securityConfig) build(listen string) (*auth.Keyring, *auth.Authenticator, *tls.Config, error) {
	var (
		a    *auth.Authenticator
		ring *auth.Keyring
		err  error
	)
	if c.authKeyring != "" {
		if ring, err = auth.LoadKeyring(c.authKeyring); err != nil {
			return nil, nil, nil, err
		}
	}
	if w := c.exposureWarning(listen); w != "" {
		slog.Warn(w, "listen", listen)
	}
	if !c.noAuth {
		users, err := auth.LoadUsers(c.authUsers)
		if err != nil {
			return nil, nil, nil, err
		}
		tokenRing := ring
		if tokenRing == nil {
			slog.Warn("no --auth-keyring: bearer tokens and tickets are signed with a random key and verify on this process only")
			if tokenRing, err = auth.RandomKeyring(); err != nil {
				return nil, nil, nil, err
			}
		}
		a = auth.NewAuthenticator(users, auth.NewTokens(tokenRing, c.tokenTTL, nil).WithClockSkew(c.clockSkew))
		ring = tokenRing
	}
	if c.tlsCert == "" {
		return ring, a, nil, nil
	}
	cert, err := loadKeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.tlsClientCA != "" {
		pem, err := setting.ReadFile(c.tlsClientCA)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate", c.tlsClientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return ring, a, cfg, nil
}

// exposureWarning returns the warning logged at start-up when others on the network can read
// what the listener serves, or its credentials: no authentication, or authentication over
// plaintext (Basic passwords and bearer tokens in clear text), on a listener that is not
// loopback; "" otherwise.
func (c *securityConfig) exposureWarning(listen string) string {
	switch {
	case isLoopback(listen):
		return ""
	case c.noAuth:
		return "serving without authentication on a non-loopback address"
	case c.tlsCert == "":
		return "authentication without TLS on a non-loopback address: passwords and bearer tokens cross the network in clear text (give --tls-cert and --tls-key)"
	}
	return ""
}

// isLoopback reports whether the host of addr (host:port) is a loopback address or
// "localhost".
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// cmdAuth runs `flightsrv auth hash-password` and `flightsrv auth new-key`.
func cmdAuth(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: flightsrv auth hash-password [--user NAME] | new-key --keyring FILE [--id ID]")
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "hash-password":
		fl := newFlags("auth hash-password")
		user := fl.String("user", "", "print a users-file line user:hash instead of the hash alone")
		if err := parse(fl, rest); err != nil {
			return err
		}
		// The password is the first line of standard input (never a flag: flags show in ps).
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return errors.New("read the password from standard input: nothing was given")
		}
		h, err := auth.HashPassword(strings.TrimRight(line, "\r\n"))
		if err != nil {
			return err
		}
		if *user != "" {
			if strings.ContainsAny(*user, ": \t") {
				return errors.New("--user must not hold ':' or white space")
			}
			fmt.Printf("%s:%s\n", *user, h)
		} else {
			fmt.Println(h)
		}
		return nil
	case "new-key":
		fl := newFlags("auth new-key")
		path := fl.String("keyring", "", "keyring file to create, or to rotate: the new key signs, the old ones keep verifying")
		id := fl.String("id", "", "key id (default: the UTC time, e.g. 20261201T172400Z)")
		if err := parse(fl, rest); err != nil {
			return err
		}
		if *path == "" {
			return errors.New("--keyring FILE is required")
		}
		if *id == "" {
			*id = time.Now().UTC().Format("20060102T150405Z")
		}
		key, err := auth.GenerateKey(*id)
		if err != nil {
			return err
		}
		ring, err := auth.LoadKeyring(*path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			ring, err = auth.NewKeyring(key.ID, []auth.Key{key})
		case err == nil:
			ring, err = ring.WithActive(key)
		}
		if err != nil {
			return err
		}
		b, err := json.Marshal(ring)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*path+".tmp", append(b, '\n'), 0o600); err != nil {
			return err
		}
		if err := os.Rename(*path+".tmp", *path); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "keyring %s: key %s signs; keys %s verify\n", *path, key.ID, strings.Join(ring.IDs(), ", "))
		return nil
	}
	return fmt.Errorf("flightsrv auth: unknown subcommand %q (hash-password, new-key)", args[0])
}

// keyringPoll is how often serve checks its keyring file for a change (also re-read on SIGHUP).
const keyringPoll = 2 * time.Second

// watchKeyring re-reads the keyring file at path into ring whenever the file changes (its
// size or modification time, checked every `every`) and on SIGHUP, until ctx ends: a key
// removed from the file stops verifying tokens, handles and tickets at once, and a new active
// key signs from then on (issue 20). A file that does not read as a keyring is logged and the
// keys in use are kept. Logs name key ids, never secrets.
func watchKeyring(ctx context.Context, path string, ring *auth.Keyring, every time.Duration) {
	defer panics.Handle("keyring watcher", func(error) {})
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	stamp := func() string {
		st, err := os.Stat(path)
		if err != nil {
			return ""
		}
		return fmt.Sprintf("%d/%d", st.Size(), st.ModTime().UnixNano())
	}
	last := stamp()
	reload := func(why string) {
		changed, err := ring.Reload(path)
		switch {
		case err != nil:
			slog.Warn("keyring not reloaded; the keys in use are kept", "why", why, "err", err)
		case changed:
			slog.Info("keyring reloaded", "why", why, "active", ring.ActiveID(), "keys", strings.Join(ring.IDs(), ","))
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last = stamp()
			reload("SIGHUP")
		case <-t.C:
			if s := stamp(); s != last {
				last = s
				reload("file changed")
			}
		}
	}
}

// loadKeyPair is tls.LoadX509KeyPair over files read at most setting.MaxFileBytes each. A
// certificate that has expired or expires within certExpiryWarning is logged as a warning
// (it still loads: a client that does not verify it connects).
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	cert, err := setting.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := setting.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, err
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return pair, err
	}
	if msg := certExpiry(pair, time.Now()); msg != "" {
		slog.Warn(msg, "cert", certFile)
	}
	return pair, nil
}

// certExpiryWarning is how long before its end a certificate's expiry is warned about.
const certExpiryWarning = 14 * 24 * time.Hour

// certExpiry returns the warning for cert's leaf at now: expired (clients that verify it
// refuse every handshake), not yet valid, or expiring within certExpiryWarning; "" otherwise
// or when the leaf does not parse (tls.X509KeyPair checked it).
func certExpiry(cert tls.Certificate, now time.Time) string {
	leaf := cert.Leaf
	if leaf == nil && len(cert.Certificate) > 0 {
		leaf, _ = x509.ParseCertificate(cert.Certificate[0])
	}
	switch {
	case leaf == nil:
		return ""
	case now.After(leaf.NotAfter):
		return fmt.Sprintf("the TLS certificate expired at %s: clients that verify it refuse to connect", leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return fmt.Sprintf("the TLS certificate is not valid before %s: clients that verify it refuse to connect until then", leaf.NotBefore.UTC().Format(time.RFC3339))
	case leaf.NotAfter.Sub(now) < certExpiryWarning:
		return fmt.Sprintf("the TLS certificate expires at %s", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return ""
}
