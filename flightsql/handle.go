package flightsql

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
)

// Query is what a statement or prepared-statement handle carries: exactly one of SQL text or a
// serialized Substrait plan, and optionally the bound parameters as an Arrow IPC stream of one
// row.
type Query struct {
	SQL       string `json:"sql,omitempty"`
	Substrait []byte `json:"substrait,omitempty"`
	Params    []byte `json:"params,omitempty"`
	// Nonce makes every prepared-statement handle unique, so that bindings remembered for
	// one client's handle are never seen by another client preparing the same SQL.
	Nonce []byte `json:"nonce,omitempty"`
	// Compression is the IPC compression of the result stream (OptionCompression), taken
	// from the session at GetFlightInfo; empty means none.
	Compression string `json:"compression,omitempty"`
}

// handleVersion is the first byte of every handle; a handle of another version is refused.
const handleVersion = 1

// errBadHandle is returned for a handle that is malformed, of another version, or not signed
// with this server's key.
var errBadHandle = errors.New("flightsql: invalid or foreign statement handle")

// signer seals and opens handles: version byte, JSON body, HMAC-SHA256 of both. Safe for
// concurrent use (immutable after construction).
type signer struct{ key []byte }

// newSigner returns a signer for key; an empty key gets 32 random bytes (handles then only
// verify on this process).
func newSigner(key []byte) (*signer, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("generate ticket key: %w", err)
		}
	}
	return &signer{key: append([]byte(nil), key...)}, nil
}

func (s *signer) seal(q Query) ([]byte, error) {
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 1+len(body)+sha256.Size)
	out = append(out, handleVersion)
	out = append(out, body...)
	m := hmac.New(sha256.New, s.key)
	m.Write(out)
	return m.Sum(out), nil
}

func (s *signer) open(h []byte) (Query, error) {
	var q Query
	if len(h) < 1+sha256.Size || h[0] != handleVersion {
		return q, errBadHandle
	}
	msg, sum := h[:len(h)-sha256.Size], h[len(h)-sha256.Size:]
	m := hmac.New(sha256.New, s.key)
	m.Write(msg)
	if !hmac.Equal(m.Sum(nil), sum) {
		return q, errBadHandle
	}
	if err := json.Unmarshal(msg[1:], &q); err != nil {
		return q, errBadHandle
	}
	if (q.SQL == "") == (len(q.Substrait) == 0) {
		return q, errBadHandle
	}
	return q, nil
}
