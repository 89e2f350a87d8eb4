package setting

import (
	"os"
	"testing"
	"time"
)

func TestConvention(t *testing.T) {
	if Or(0, 5) != 5 || Or(-1, 5) != -1 || Or(3, 5) != 3 {
		t.Fatal("Or")
	}
	if Bound(0, 5*time.Second) != 5*time.Second || Bound(-time.Second, 5*time.Second) != 0 || Bound(time.Second, 5*time.Second) != time.Second {
		t.Fatal("Bound")
	}
	if Required(0, 8) != 8 || Required(-1, 8) != 8 || Required(3, 8) != 3 {
		t.Fatal("Required")
	}
	if Bound[int64](-1, 256<<20) != 0 || Bound[int64](0, 256<<20) != 256<<20 {
		t.Fatal("Bound int64")
	}
}

// TestReadFileBounded: a configuration file is read whole up to MaxFileBytes; a device that
// never ends is refused at the limit (trial 33 m1: --tls-cert /dev/zero read without end).
func TestReadFileBounded(t *testing.T) {
	if _, err := ReadFile("/dev/zero"); err == nil {
		t.Fatal("/dev/zero was read as a configuration file")
	}
	path := t.TempDir() + "/f"
	if err := os.WriteFile(path, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(path); err != nil || string(b) != "key" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}
