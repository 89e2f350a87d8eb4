package routing

import (
	"regexp"
	"testing"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		tok := NewOwnerToken()
		if !uuid.MatchString(tok) || seen[tok] {
			t.Fatalf("token %q is not a fresh UUIDv4", tok)
		}
		seen[tok] = true
	}
}
