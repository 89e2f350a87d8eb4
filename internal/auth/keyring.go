package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flightsrv/flightsrv/internal/setting"
	"regexp"
	"slices"
	"sync/atomic"
)

// MinKeyBytes is the smallest secret a keyring accepts: 32 bytes, the output size of
// SHA-256, as RFC 2104 §3 recommends for HMAC keys.
const MinKeyBytes = 32

// ErrUnknownKey is returned by Verify for a key id the keyring does not hold.
var ErrUnknownKey = errors.New("auth: unknown key id")

// ErrBadSignature is returned by Verify for a signature that does not match.
var ErrBadSignature = errors.New("auth: signature does not match")

// Keyring holds HMAC-SHA256 secrets by key id; the active key signs, every key verifies.
// Its keys change only as a whole (Replace, Reload: the keyring file edited, SIGHUP); it is
// safe for concurrent use.
type Keyring struct {
	cur atomic.Pointer[keySet]
}

// keySet is one immutable state of a Keyring.
type keySet struct {
	active string
	keys   map[string][]byte
}

// set returns k's current keys.
func (k *Keyring) set() *keySet { return k.cur.Load() }

// Key is one entry of a keyring file: an id (1–64 characters of [A-Za-z0-9._-]) and a
// secret of at least MinKeyBytes bytes, base64-encoded (standard alphabet, padded) in JSON.
type Key struct {
	ID     string `json:"id"`
	Secret []byte `json:"secret"`
}

// keyringFile is the JSON form of a keyring file.
type keyringFile struct {
	Active string `json:"active"`
	Keys   []Key  `json:"keys"`
}

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// NewKeyring returns a keyring of keys whose key active signs. It returns an error for an
// empty or duplicate key id, an id outside [A-Za-z0-9._-]{1,64}, a secret shorter than
// MinKeyBytes, or an active id that is not among keys. The secrets are copied.
func NewKeyring(active string, keys []Key) (*Keyring, error) {
	k := &keySet{active: active, keys: make(map[string][]byte, len(keys))}
	for _, key := range keys {
		if !keyIDPattern.MatchString(key.ID) {
			return nil, fmt.Errorf("auth: key id %q must be 1 to 64 characters of A-Z a-z 0-9 . _ -", key.ID)
		}
		if _, dup := k.keys[key.ID]; dup {
			return nil, fmt.Errorf("auth: key id %q appears twice", key.ID)
		}
		if len(key.Secret) < MinKeyBytes {
			return nil, fmt.Errorf("auth: key %q has %d secret bytes, at least %d are needed", key.ID, len(key.Secret), MinKeyBytes)
		}
		k.keys[key.ID] = append([]byte(nil), key.Secret...)
	}
	if _, ok := k.keys[active]; !ok {
		return nil, fmt.Errorf("auth: the active key %q is not in the keyring", active)
	}
	ring := &Keyring{}
	ring.cur.Store(k)
	return ring, nil
}

// Replace makes other's keys k's, at once for every caller: tokens, handles and tickets signed
// by a key other no longer holds stop verifying, and other's active key signs from now on.
func (k *Keyring) Replace(other *Keyring) { k.cur.Store(other.set()) }

// Reload reads the keyring file at path again (LoadKeyring) and, when it is valid, replaces
// k's keys with its keys; it reports whether they changed. On an error k keeps its keys.
func (k *Keyring) Reload(path string) (changed bool, err error) {
	fresh, err := LoadKeyring(path)
	if err != nil {
		return false, err
	}
	old, now := k.set(), fresh.set()
	changed = old.active != now.active || len(old.keys) != len(now.keys)
	for id, secret := range now.keys {
		if !hmac.Equal(old.keys[id], secret) {
			changed = true
		}
	}
	if changed {
		k.Replace(fresh)
	}
	return changed, nil
}

// RandomKeyring returns a keyring of one new random key (id "ephemeral"): what it signs
// verifies only in this process.
func RandomKeyring() (*Keyring, error) {
	key, err := GenerateKey("ephemeral")
	if err != nil {
		return nil, err
	}
	return NewKeyring(key.ID, []Key{key})
}

// GenerateKey returns a key of id with MinKeyBytes random bytes from crypto/rand.
func GenerateKey(id string) (Key, error) {
	secret := make([]byte, MinKeyBytes)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, fmt.Errorf("auth: generate key: %w", err)
	}
	return Key{ID: id, Secret: secret}, nil
}

// LoadKeyring reads a keyring file: JSON {"active": ID, "keys": [{"id": ID, "secret":
// BASE64}, …]}. Errors name the file but never a secret. The file should be readable by the
// server's user only.
func LoadKeyring(path string) (*Keyring, error) {
	b, err := setting.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: read keyring: %w", err)
	}
	var f keyringFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("auth: keyring %s is not valid JSON ({\"active\": ID, \"keys\": [{\"id\": ID, \"secret\": BASE64}]}): %w", path, err)
	}
	k, err := NewKeyring(f.Active, f.Keys)
	if err != nil {
		return nil, fmt.Errorf("keyring %s: %w", path, err)
	}
	return k, nil
}

// MarshalJSON returns the keyring file form of k (secrets included).
func (k *Keyring) MarshalJSON() ([]byte, error) {
	ks := k.set()
	f := keyringFile{Active: ks.active}
	for _, id := range ks.ids() {
		f.Keys = append(f.Keys, Key{ID: id, Secret: ks.keys[id]})
	}
	return json.MarshalIndent(f, "", "  ")
}

// WithActive returns a keyring holding k's keys and key, with key active: a rotation. Keys
// of k keep verifying what they signed until they are removed from the file.
func (k *Keyring) WithActive(key Key) (*Keyring, error) {
	ks := k.set()
	keys := []Key{key}
	for _, id := range ks.ids() {
		keys = append(keys, Key{ID: id, Secret: ks.keys[id]})
	}
	return NewKeyring(key.ID, keys)
}

// ActiveID returns the id of the key that signs.
func (k *Keyring) ActiveID() string { return k.set().active }

// IDs returns the key ids of the keyring, the active one first and the others sorted.
func (k *Keyring) IDs() []string { return k.set().ids() }

func (k *keySet) ids() []string {
	ids := []string{k.active}
	rest := make([]string, 0, len(k.keys)-1)
	for id := range k.keys {
		if id != k.active {
			rest = append(rest, id)
		}
	}
	slices.Sort(rest)
	return append(ids, rest...)
}

// Sign returns the id of the active key and the HMAC-SHA256 of msg under the active key's
// subkey for domain. The domain separates uses of one keyring (for example "token",
// "ticket"): a signature made for one domain never verifies in another.
func (k *Keyring) Sign(domain string, msg []byte) (keyID string, sig []byte) {
	ks := k.set()
	return ks.active, hmacSHA256(ks.subkey(ks.active, domain), msg)
}

// Verify checks that sig is Sign's signature of msg in domain under key keyID. It returns
// ErrUnknownKey or ErrBadSignature; the comparison takes constant time.
func (k *Keyring) Verify(domain, keyID string, msg, sig []byte) error {
	sub := k.set().subkey(keyID, domain)
	if sub == nil {
		return ErrUnknownKey
	}
	if !hmac.Equal(hmacSHA256(sub, msg), sig) {
		return ErrBadSignature
	}
	return nil
}

// subkey returns the HMAC-SHA256 key of domain under key id: HMAC-SHA256(secret,
// "flightsrv/" + domain); nil when the keyring has no key id.
func (k *Keyring) subkey(id, domain string) []byte { return k.set().subkey(id, domain) }

func (k *keySet) subkey(id, domain string) []byte {
	secret, ok := k.keys[id]
	if !ok {
		return nil
	}
	return hmacSHA256(secret, []byte("flightsrv/"+domain))
}

func hmacSHA256(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}
