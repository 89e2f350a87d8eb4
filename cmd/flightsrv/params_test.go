package main

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
)

// testDatabaseSQLTimes binds time parameters through arrow-go's database/sql driver the way a
// Go program does — time.Time values and ISO 8601 strings — against the demo's data, to the
// microsecond: ORD's first two flights of the sample both leave at 2001-01-01T05:57:00Z and
// the next at 06:00 (DuckDB: SELECT date, id FROM 'testdata/flights-sample.parquet' WHERE
// origin = 'ORD' ORDER BY date, id LIMIT 3).
func testDatabaseSQLTimes(t *testing.T, addr string) {
	ctx := context.Background()
	db, err := sql.Open("flightsql", "flightsql://"+addr+"?timeout=60s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const q = "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?"
	at := time.Date(2001, 1, 1, 5, 57, 0, 0, time.UTC)
	chicago := time.FixedZone("CST", -6*3600)
	for _, c := range []struct {
		name     string
		from, to any
		want     int64
	}{
		{"time.Time over the whole sample", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 8, 1, 0, 0, 0, 0, time.UTC), 16569},
		{"time.Time, one microsecond", at, at.Add(time.Microsecond), 2},
		{"time.Time, from one microsecond after", at.Add(time.Microsecond), at.Add(3 * time.Minute), 0},
		{"time.Time up to the first flight, excluded", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), at, 0},
		{"time.Time in another zone", at.In(chicago), at.Add(3 * time.Minute).In(chicago), 2},
		{"ISO 8601 strings", "2001-01-01T05:57:00Z", "2001-01-01T05:57:00.000001Z", 2},
		{"ISO 8601 strings, microsecond after", "2001-01-01T05:57:00.000001Z", "2001-01-01T06:00:00Z", 0},
		{"straddling archived and hot buckets", time.Date(2001, 3, 15, 0, 0, 0, 0, time.UTC), "2001-04-15T00:00:00Z", 2796},
	} {
		var n int64
		if err := db.QueryRowContext(ctx, q, "ORD", c.from, c.to).Scan(&n); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != c.want {
			t.Errorf("%s: %d, want %d", c.name, n, c.want)
		}
	}
	// Rows come back as time.Time in UTC, to the exact instant.
	rows, err := db.QueryContext(ctx, "SELECT timestamp, id FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ? ORDER BY timestamp, id",
		"ORD", at, at.Add(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var ts time.Time
		var id string
		if err := rows.Scan(&ts, &id); err != nil {
			t.Fatal(err)
		}
		got = append(got, ts.UTC().Format(time.RFC3339Nano)+" "+id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"2001-01-01T05:57:00Z 0000000190", "2001-01-01T05:57:00Z 0000000200", "2001-01-01T06:00:00Z 0000000230"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("rows %v, want %v", got, want)
	}
}
