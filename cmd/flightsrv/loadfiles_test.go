package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flightsrv/flightsrv/internal/load"
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

// TestLoadManyFiles: `load --file GLOB` over real CSV files into a SQLite store, each file one
// request: all loaded, then all skipped when run again, then a file one of whose records was
// deleted stops the load with the partly-loaded refusal naming the file and the bucket, the
// files before it still skipped and nothing written. Counts are SQL counts of the store.
func TestLoadManyFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const perFile = 50
	for f := range 3 {
		var b strings.Builder
		b.WriteString("when,airport,rid,delay\n")
		for i := range perFile {
			fmt.Fprintf(&b, "2001-0%d-%02d 10:%02d:00,ORD,f%d-%03d,%d\n", f+1, 1+i%28, i, f, i, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(dir, "hot.db")
	if err := cmdMigrate(ctx, []string{"--store", "sqlite://" + db}); err != nil {
		t.Fatal(err)
	}
	args := []string{"--store", "sqlite://" + db, "--table", "name=flights,partition=airport,strategy=month,window=12",
		"--file", filepath.Join(dir, "part-*.csv"), "--partition", "airport", "--time", "when", "--id", "rid", "--as-of", "2001-07-31T00:00:00Z"}
	sqlDB, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	count := func() int {
		var n int
		if err := sqlDB.QueryRow(`SELECT count(*) FROM pulpitum_v4_records`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for run := range 2 {
		if err := cmdLoad(ctx, args); err != nil {
			t.Fatalf("load %d: %v", run, err)
		}
		if n := count(); n != 3*perFile {
			t.Fatalf("after load %d the store holds %d records, want %d", run, n, 3*perFile)
		}
	}
	if _, err := sqlDB.Exec(`DELETE FROM pulpitum_v4_records WHERE sort_key = ?`, []byte("f1-010")); err != nil {
		t.Fatal(err)
	}
	err = cmdLoad(ctx, args)
	if !errors.Is(err, load.ErrPartlyLoaded) || !strings.Contains(err.Error(), "part-1.csv") || !strings.Contains(err.Error(), "bucket month:2001-02 (the bucket of the file's row 0)") {
		t.Fatalf("load after a deletion: %v", err)
	}
	if n := count(); n != 3*perFile-1 {
		t.Fatalf("after the refusal the store holds %d records, want %d", n, 3*perFile-1)
	}
}
