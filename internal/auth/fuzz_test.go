package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
)

// FuzzAuthenticate checks an authorization header value as every call's is checked
// (Authenticator.Authenticate: Basic credentials, or a bearer token signed with the keyring):
// a refusal is ErrBadCredentials or ErrBadToken; a user is answered only for the right
// password or a token the keyring signed for that user. Tokens issued for the fuzzed user name
// verify to it, and with any one byte changed do not. Keyring signatures (Sign/Verify, which
// handles and tickets use) verify for the message signed only.
func FuzzAuthenticate(f *testing.F) {
	secret, old := sha256.Sum256([]byte("fuzz")), sha256.Sum256([]byte("old"))
	ring, err := NewKeyring("k1", []Key{{ID: "k1", Secret: secret[:]}, {ID: "old", Secret: old[:]}})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	tokens := NewTokens(ring, time.Hour, func() time.Time { return now })
	// A Basic check costs a bcrypt of MinBcryptCost (a wrong password, an unknown user: a
	// dummy hash) unless the right password was checked before: such inputs run slowly.
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret pass"), MinBcryptCost)
	if err != nil {
		f.Fatal(err)
	}
	users, err := NewUsers(map[string]string{"alice": string(hash)}, func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	a := NewAuthenticator(users, tokens)
	tok, _, err := tokens.Issue("alice")
	if err != nil {
		f.Fatal(err)
	}
	f.Add("Bearer "+tok, "alice", uint16(10))
	f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte("alice:s3cret pass")), "bob", uint16(0))
	f.Add("basic "+base64.RawStdEncoding.EncodeToString([]byte("alice:wrong")), "", uint16(3))
	f.Add("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.", "a\x00b", uint16(7))
	f.Fuzz(func(t *testing.T, header, user string, flip uint16) {
		fuzzcount.Add()
		got, err := a.Authenticate(header)
		switch {
		case err != nil:
			if !errors.Is(err, ErrBadCredentials) && !errors.Is(err, ErrBadToken) {
				t.Fatalf("Authenticate refused with %v", err)
			}
		case got != "alice":
			t.Fatalf("Authenticate answered user %q, who has no password and was issued no token", got)
		}
		if user == "" || !utf8.ValidString(user) {
			return // tokens are issued to users of the users file only, UTF-8 (NewUsers)
		}
		tok, _, err := tokens.Issue(user)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := a.Authenticate("Bearer " + tok); err != nil || got != user {
			t.Fatalf("the token issued for %q verifies as %q, %v", user, got, err)
		}
		bad := []byte(tok)
		i := int(flip) % len(bad)
		bad[i] ^= byte(1 + flip%255)
		if got, err := tokens.Verify(string(bad)); err == nil && !bytes.Equal(bad, []byte(tok)) && got == user && !base64Twin(tok, string(bad)) {
			t.Fatalf("a token with byte %d changed verifies as %q", i, got)
		}
		kid, sig := ring.Sign("handle", []byte(header))
		if ring.Verify("handle", kid, []byte(header), sig) != nil {
			t.Fatal("a signature does not verify")
		}
		if ring.Verify("ticket", kid, []byte(header), sig) == nil || ring.Verify("handle", kid, []byte(header+"x"), sig) == nil {
			t.Fatal("a signature verifies in another domain or for another message")
		}
	})
}

// base64Twin reports whether a and b are the same token but for the unused low bits of a
// base64url segment's last character, which decode to the same bytes (RFC 4648 §3.5: a
// decoder may accept them).
func base64Twin(a, b string) bool {
	seg := func(s string) [][]byte {
		var out [][]byte
		for _, p := range bytes.Split([]byte(s), []byte(".")) {
			d, err := base64.RawURLEncoding.DecodeString(string(p))
			if err != nil {
				return nil
			}
			out = append(out, d)
		}
		return out
	}
	sa, sb := seg(a), seg(b)
	if sa == nil || len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if !bytes.Equal(sa[i], sb[i]) {
			return false
		}
	}
	return true
}

// TestUserNamesAreUTF8: a user name that is not UTF-8 is refused (FuzzAuthenticate found that
// the token issued to one verified as another name: its bytes became U+FFFD in the token's JSON).
func TestUserNamesAreUTF8(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), MinBcryptCost)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewUsers(map[string]string{"\xbc": string(hash)}, nil); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("a user name that is not UTF-8: %v", err)
	}
	if _, err := NewUsers(map[string]string{"zoë": string(hash)}, nil); err != nil {
		t.Fatalf("a UTF-8 user name: %v", err)
	}
}
