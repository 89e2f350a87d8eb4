package ops

import "testing"

// TestTruncYear: the first year of the decade, century and millennium of years around the
// eras' edges, as PostgreSQL 15 answers date_trunc(unit, make_date(y, 6, 1)::timestamp)
// (astronomical years: 0 is 1 BC, -1000 is 1001 BC).
func TestTruncYear(t *testing.T) {
	// year, decade, century, millennium, from PostgreSQL's text (1001 BC is -1000).
	for _, c := range [][4]int64{
		{-1000, -1000, -1099, -1999}, {-999, -1000, -999, -999}, {-998, -1000, -999, -999},
		{-100, -100, -199, -999}, {-99, -100, -99, -999}, {-98, -100, -99, -999},
		{-10, -10, -99, -999}, {-9, -10, -99, -999}, {-8, -10, -99, -999}, {-1, -10, -99, -999},
		{0, 0, -99, -999}, {1, 0, 1, 1}, {2, 0, 1, 1}, {9, 0, 1, 1}, {10, 10, 1, 1}, {11, 10, 1, 1},
		{99, 90, 1, 1}, {100, 100, 1, 1}, {101, 100, 101, 1}, {1000, 1000, 901, 1}, {1001, 1000, 1001, 1001},
		{1999, 1990, 1901, 1001}, {2000, 2000, 1901, 1001}, {2001, 2000, 2001, 2001}, {2010, 2010, 2001, 2001},
	} {
		for i, unit := range []string{"DECADE", "CENTURY", "MILLENNIUM"} {
			if got, ok := truncYear(unit, c[0]); !ok || got != c[i+1] {
				t.Errorf("truncYear(%s, %d) = %d, %v; PostgreSQL %d", unit, c[0], got, ok, c[i+1])
			}
		}
	}
}
