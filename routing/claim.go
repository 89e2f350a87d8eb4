package routing

import (
	"crypto/rand"
	"fmt"
)

// NewOwnerToken returns a new archive owner token: a random (version 4) UUID in its canonical
// lowercase text form, as the reference writes archive_owner_token (docs/pulpitum-v4.md
// §1.1). Tokens are secret: never log one.
func NewOwnerToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Claim is the frame of the hot stores' ClaimArchive and ClaimCleanup: it validates b, draws a
// new owner token and runs claim with it — one conditional statement that returns the new
// generation, ok false when no row matched (a lost race or a bucket not due) — and returns
// the session, or nil, nil when nothing was claimed, or claim's error.
func Claim(b BucketID, claim func(token string) (generation int64, ok bool, err error)) (*ArchiveSession, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	token := NewOwnerToken()
	gen, ok, err := claim(token)
	if err != nil || !ok {
		return nil, err
	}
	return &ArchiveSession{Bucket: b, Generation: gen, Token: token}, nil
}
