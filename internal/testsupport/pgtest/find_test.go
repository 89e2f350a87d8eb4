package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fakeBinDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// These tests change the environment and a package variable: not parallel.

func TestFindBinDirPrefersEnvironment(t *testing.T) {
	dir := fakeBinDir(t, "initdb", "postgres")
	t.Setenv(EnvBinDir, dir)
	got, err := findBinDir()
	if err != nil || got != dir {
		t.Fatalf("findBinDir = %q, %v; want %q", got, err, dir)
	}
}

func TestFindBinDirFailsClearly(t *testing.T) {
	old := versionedBinDirs
	versionedBinDirs = filepath.Join(t.TempDir(), "none", "*", "bin")
	t.Cleanup(func() { versionedBinDirs = old })
	t.Setenv(EnvBinDir, fakeBinDir(t, "initdb")) // no postgres next to it
	t.Setenv("PATH", t.TempDir())
	_, err := findBinDir()
	if err == nil {
		t.Fatal("findBinDir found binaries in an empty environment")
	}
	for _, want := range []string{"apt-get install postgresql", EnvURL, EnvBinDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFindBinDirUsesPath(t *testing.T) {
	old := versionedBinDirs
	versionedBinDirs = filepath.Join(t.TempDir(), "none", "*", "bin")
	t.Cleanup(func() { versionedBinDirs = old })
	t.Setenv(EnvBinDir, "")
	dir := fakeBinDir(t, "initdb", "postgres")
	t.Setenv("PATH", dir)
	got, err := findBinDir()
	if err != nil || got != dir {
		t.Fatalf("findBinDir = %q, %v; want %q", got, err, dir)
	}
}
