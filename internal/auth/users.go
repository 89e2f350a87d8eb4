package auth

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/flightsrv/flightsrv/internal/setting"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// ErrBadCredentials is returned for an unknown user or a wrong password; which of the two is
// deliberately not told.
var ErrBadCredentials = errors.New("auth: invalid user name or password")

// MinBcryptCost is the lowest bcrypt cost a users file may hold (bcrypt.DefaultCost, 10:
// about 50 ms a check on one core); cheaper hashes are refused at load.
const MinBcryptCost = bcrypt.DefaultCost

// verifiedTTL is how long a successful password check is remembered: clients that send Basic
// credentials on every call (arrow-go's database/sql driver) then pay bcrypt's cost once per
// period, not per call.
const verifiedTTL = 5 * time.Minute

// maxVerified bounds the remembered checks (the oldest are dropped first).
const maxVerified = 10000

// ErrBusy is Check's answer when every bcrypt comparison it may run at once is taken for
// longer than checkWait: a flood of wrong passwords (each a fresh bcrypt at cost 10, tens
// of milliseconds of CPU) then costs at most half the cores, and the calls of signed-in
// clients (bearer tokens, remembered passwords) keep the rest (trial 32 F2: 32 threads of
// wrong Basic passwords made a bearer client's SELECT 1 take over a second).
var ErrBusy = errors.New("auth: too many password checks at once")

// checkWait is how long Check waits for a bcrypt comparison slot before ErrBusy.
const checkWait = time.Second

// Users checks user names and passwords against bcrypt hashes. Safe for concurrent use.
type Users struct {
	hashes map[string][]byte
	dummy  []byte // a hash checked for unknown users, so that they cost what known ones do
	now    func() time.Time

	// verified remembers recent successful checks: user → HMAC-SHA256(cacheKey, password)
	// and when it was checked. Only a keyed digest of the password is kept.
	cacheKey []byte
	mu       sync.Mutex
	verified map[string]verifiedEntry

	// slots bounds the bcrypt comparisons running at once: half the cores, at least one.
	slots chan struct{}
}

type verifiedEntry struct {
	digest []byte
	at     time.Time
}

// NewUsers returns a Users over hashes (user → bcrypt hash). It returns an error for an
// empty user name, a name holding ':' or white space or that is not UTF-8 (a token's subject
// is JSON text: such a name would come back from its token as another name), or a hash that
// is not bcrypt of at least MinBcryptCost. now is the clock (nil: time.Now).
func NewUsers(hashes map[string]string, now func() time.Time) (*Users, error) {
	if now == nil {
		now = time.Now
	}
	u := &Users{hashes: make(map[string][]byte, len(hashes)), now: now, verified: map[string]verifiedEntry{},
		slots: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))}
	for name, h := range hashes {
		if name == "" || strings.ContainsAny(name, ": \t\r\n") || !utf8.ValidString(name) {
			return nil, fmt.Errorf("auth: user name %q is empty, holds ':' or white space, or is not UTF-8", name)
		}
		cost, err := bcrypt.Cost([]byte(h))
		if err != nil {
			return nil, fmt.Errorf("auth: the password hash of user %q is not a bcrypt hash", name)
		}
		if cost < MinBcryptCost {
			return nil, fmt.Errorf("auth: the password hash of user %q has bcrypt cost %d, at least %d is needed", name, cost, MinBcryptCost)
		}
		u.hashes[name] = []byte(h)
	}
	u.cacheKey = make([]byte, 32)
	if _, err := rand.Read(u.cacheKey); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	dummy, err := bcrypt.GenerateFromPassword(u.cacheKey, MinBcryptCost)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	u.dummy = dummy
	return u, nil
}

// LoadUsers reads an htpasswd-style users file: one "user:bcrypt-hash" per line (what
// `htpasswd -B` and `flightsrv auth hash-password` write); blank lines and lines starting
// with '#' are skipped. Errors name the file and line, never a hash.
func LoadUsers(path string) (*Users, error) {
	b, err := setting.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read users file: %w", err)
	}
	hashes := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, hash, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("auth: users file %s line %d: want user:bcrypt-hash", path, line)
		}
		if _, dup := hashes[name]; dup {
			return nil, fmt.Errorf("auth: users file %s line %d: user %q appears twice", path, line, name)
		}
		hashes[name] = hash
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth: read users file: %w", err)
	}
	if len(hashes) == 0 {
		return nil, fmt.Errorf("auth: users file %s names no user", path)
	}
	u, err := NewUsers(hashes, nil)
	if err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	return u, nil
}

// HashPassword returns the bcrypt hash of password at MinBcryptCost, for a users file. It
// returns an error for an empty password or one longer than bcrypt's 72 bytes.
func HashPassword(password string) (string, error) {
	if password == "" {
		return "", errors.New("auth: the password is empty")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), MinBcryptCost)
	if err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	return string(h), nil
}

// Check returns nil when password is user's, or ErrBadCredentials. An unknown user costs a
// bcrypt comparison too. A success is remembered for a few minutes (only a keyed digest of
// the password), so repeated checks of the same credentials are cheap. At most half the
// cores compare at once; a check that waits checkWait for its turn is ErrBusy.
func (u *Users) Check(user, password string) error {
	digest := hmacSHA256(u.cacheKey, []byte(password))
	now := u.now()
	u.mu.Lock()
	e, ok := u.verified[user]
	u.mu.Unlock()
	if ok && now.Sub(e.at) < verifiedTTL && now.Sub(e.at) >= 0 && hmac.Equal(e.digest, digest) {
		return nil
	}
	t := time.NewTimer(checkWait)
	select {
	case u.slots <- struct{}{}:
		t.Stop()
	case <-t.C:
		return ErrBusy
	}
	defer func() { <-u.slots }()
	hash, known := u.hashes[user]
	if !known {
		_ = bcrypt.CompareHashAndPassword(u.dummy, []byte(password))
		return ErrBadCredentials
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
		return ErrBadCredentials
	}
	u.remember(user, digest, now)
	return nil
}

func (u *Users) remember(user string, digest []byte, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.verified) >= maxVerified {
		for k, e := range u.verified {
			if now.Sub(e.at) >= verifiedTTL || len(u.verified) >= maxVerified {
				delete(u.verified, k)
			}
		}
	}
	u.verified[user] = verifiedEntry{digest: digest, at: now}
}
