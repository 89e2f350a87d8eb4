package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Issuer is the "iss" claim of every token flightsrv issues; a token of another issuer is
// refused.
const Issuer = "flightsrv"

// tokenDomain is the keyring domain of token signatures (Keyring.Sign): a token's HS256 key
// is the subkey of its key id for this domain, so that no other payload the keyring signs
// can pass for a token.
const tokenDomain = "token"

// ErrBadToken is returned for a token that is malformed, expired, not yet valid, of another
// issuer, or not signed by a key of the keyring. The cause is deliberately not told apart.
var ErrBadToken = errors.New("auth: invalid token")

// DefaultTokenTTL is how long a token is valid when no TTL is configured.
const DefaultTokenTTL = time.Hour

// ClockSkew is the leeway Verify allows on a token's issue, not-before and expiry times, for
// replicas whose clocks differ slightly (RFC 7519 §4.1.4 allows "some small leeway").
const ClockSkew = 30 * time.Second

// Tokens issues and verifies bearer tokens signed with a keyring: JWTs (RFC 7519) signed
// HS256 with the header "kid" naming the key. Safe for concurrent use.
type Tokens struct {
	ring *Keyring
	ttl  time.Duration
	skew time.Duration // leeway of check (ClockSkew unless WithClockSkew)
	now  func() time.Time
}

// NewTokens returns a token issuer and verifier over ring; tokens expire ttl after they are
// issued (DefaultTokenTTL when ttl <= 0). now is the clock (nil: time.Now).
func NewTokens(ring *Keyring, ttl time.Duration, now func() time.Time) *Tokens {
	if ttl <= 0 {
		ttl = DefaultTokenTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Tokens{ring: ring, ttl: ttl, skew: ClockSkew, now: now}
}

// WithClockSkew sets the leeway Verify allows on a token's times to d (0: ClockSkew; negative:
// none, a token is refused from its expiry on) and returns t. Call it before t is used.
func (t *Tokens) WithClockSkew(d time.Duration) *Tokens {
	switch {
	case d == 0:
		t.skew = ClockSkew
	case d < 0:
		t.skew = 0
	default:
		t.skew = d
	}
	return t
}

// Issue returns a signed token for user, valid from now for the configured TTL, and its
// expiry (UTC, whole seconds: JWT's NumericDate).
func (t *Tokens) Issue(user string) (token string, expires time.Time, err error) {
	now := t.now().UTC().Truncate(time.Second)
	expires = now.Add(t.ttl)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer:    Issuer,
		Subject:   user,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(expires),
	})
	ks := t.ring.set() // one state of the keyring: the active key and its secret together
	tok.Header["kid"] = ks.active
	s, err := tok.SignedString(ks.subkey(ks.active, tokenDomain))
	if err != nil {
		return "", time.Time{}, fmt.Errorf("auth: sign token: %w", err)
	}
	return s, expires, nil
}

// Verify checks token's signature under the key its "kid" names, its issuer and its validity
// period at the clock's now (give or take the clock skew, ClockSkew by default), and returns its user. Every failure is
// ErrBadToken.
func (t *Tokens) Verify(token string) (user string, err error) {
	user, _, err = t.check(token)
	return user, err
}

// check is Verify that also reports whether the token has passed half its lifetime (issue to
// expiry) at the clock's now: a call using it should be answered with a fresh token.
func (t *Tokens) check(token string) (user string, renew bool, err error) {
	var claims jwt.RegisteredClaims
	_, err = jwt.ParseWithClaims(token, &claims, func(tok *jwt.Token) (any, error) {
		id, _ := tok.Header["kid"].(string)
		if key := t.ring.subkey(id, tokenDomain); key != nil {
			return key, nil
		}
		return nil, ErrUnknownKey
	}, jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(Issuer),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(t.now), jwt.WithLeeway(t.skew))
	if err != nil || claims.Subject == "" || claims.IssuedAt == nil {
		return "", false, ErrBadToken
	}
	iat, exp := claims.IssuedAt.Time, claims.ExpiresAt.Time
	return claims.Subject, !t.now().Before(iat.Add(exp.Sub(iat) / 2)), nil
}
