package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExpandFiles: load's --file patterns over a real directory — globs in lexical order,
// plain paths as given, a file named twice loaded once, a glob matching nothing refused
// naming the pattern.
func TestExpandFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.parquet", "a.parquet", "c.csv"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var f fileFlags
	for _, v := range []string{filepath.Join(dir, "*.parquet"), filepath.Join(dir, "c.csv") + "," + filepath.Join(dir, "a.parquet")} {
		if err := f.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	got, err := expandFiles(f)
	want := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"), filepath.Join(dir, "c.csv")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("expandFiles(%q) = %q, %v; want %q", f, got, err, want)
	}
	none := filepath.Join(dir, "x*.parquet")
	if _, err := expandFiles([]string{none}); err == nil || !strings.Contains(err.Error(), none+" matches no file") {
		t.Fatalf("a glob matching nothing: %v", err)
	}
}
