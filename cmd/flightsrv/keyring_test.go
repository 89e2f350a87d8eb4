package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/auth"
)

// TestKeyringFileWatched: serve's keyring follows its file: a key removed from the file stops
// verifying (tokens signed by it are refused) within a poll, a key rotated in signs from then
// on, and a file that does not read as a keyring leaves the keys in use.
func TestKeyringFileWatched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keyring.json")
	a, _ := auth.GenerateKey("a")
	b, _ := auth.GenerateKey("b")
	c, _ := auth.GenerateKey("c")
	write := func(active string, keys ...auth.Key) {
		t.Helper()
		ring, err := auth.NewKeyring(active, keys)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(ring)
		if err != nil {
			t.Fatal(err)
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("a", a, b)
	ring, err := auth.LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	bRing, _ := auth.NewKeyring("b", []auth.Key{b})
	byB, _, err := auth.NewTokens(bRing, time.Hour, nil).Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	tokens := auth.NewTokens(ring, time.Hour, nil)
	if _, err := tokens.Verify(byB); err != nil {
		t.Fatalf("b's token before the change: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchKeyring(ctx, path, ring, 20*time.Millisecond)
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(30 * time.Millisecond) // distinct modification times
	write("c", a, c)
	eventually("b removed, c active", func() bool {
		_, err := tokens.Verify(byB)
		return err != nil && ring.ActiveID() == "c"
	})
	fresh, _, err := tokens.Issue("alice")
	if err != nil {
		t.Fatal(err)
	}
	cRing, _ := auth.NewKeyring("c", []auth.Key{c})
	if _, err := auth.NewTokens(cRing, time.Hour, nil).Verify(fresh); err != nil {
		t.Fatalf("a token issued after the rotation is not c's: %v", err)
	}
	time.Sleep(30 * time.Millisecond)
	if err := os.WriteFile(path, []byte("{not a keyring"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if ring.ActiveID() != "c" {
		t.Fatalf("a broken file replaced the keys: active %s", ring.ActiveID())
	}
	if _, err := tokens.Verify(fresh); err != nil {
		t.Fatalf("a broken file broke verification: %v", err)
	}
}
