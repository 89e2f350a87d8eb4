package auth

import (
	"errors"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestCheckBusy: with every bcrypt slot taken, a password that needs a comparison is ErrBusy
// after checkWait, while one remembered from an earlier success is answered at once; a freed
// slot serves the next check (trial 32 F2).
func TestCheckBusy(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("secret"), MinBcryptCost)
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUsers(map[string]string{"alice": string(h)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Check("alice", "secret"); err != nil {
		t.Fatal(err)
	}
	for range cap(u.slots) {
		u.slots <- struct{}{}
	}
	if err := u.Check("alice", "wrong"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a check with every slot taken: %v, want ErrBusy", err)
	}
	if err := u.Check("alice", "secret"); err != nil {
		t.Fatalf("a remembered password with every slot taken: %v", err)
	}
	<-u.slots
	if err := u.Check("alice", "wrong"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("a check with a slot free: %v, want ErrBadCredentials", err)
	}
}
