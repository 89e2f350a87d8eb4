package e2e

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
)

// The PostgreSQL comparisons' one runner: a table of cases, each a query run by flightsrv and
// by PostgreSQL over the same rows, compared in one of three ways.

// pgCmp is how a case's answers are compared.
type pgCmp uint8

const (
	// pgText compares every value's text, row by row (compareText over textColumns and
	// pgTextRows).
	pgText pgCmp = iota
	// pgNumbers compares numbers to 1e-12 relative and needs rows (compareNumbers).
	pgNumbers
	// pgTypes compares column types as compareTyped allows and values as sameValue does
	// (floats to 1e-9 relative), through every client of the run.
	pgTypes
)

// pgCase is one query compared with PostgreSQL: ours runs on flightsrv, theirs on PostgreSQL
// (ours when empty); nonEmpty (pgTypes) fails the test when PostgreSQL answers no row, and
// pgNumbers fails it unless mayBeEmpty.
type pgCase struct {
	ours, theirs string
	cmp          pgCmp
	nonEmpty     bool
	mayBeEmpty   bool // pgNumbers: PostgreSQL's answer may hold no row
}

// sameSQL is a case of each query, run as it is by both, compared by cmp.
func sameSQL(cmp pgCmp, qs ...string) []pgCase {
	cs := make([]pgCase, len(qs))
	for i, q := range qs {
		cs[i] = pgCase{ours: q, cmp: cmp}
	}
	return cs
}

// nonEmptyTyped is a pgTypes case of each query, run as it is by both, PostgreSQL's answer
// holding rows.
func nonEmptyTyped(qs ...string) []pgCase {
	cs := sameSQL(pgTypes, qs...)
	for i := range cs {
		cs[i].nonEmpty = true
	}
	return cs
}

// pairCases is a case of each pair (flightsrv's query, then PostgreSQL's), compared by cmp.
func pairCases(cmp pgCmp, pairs [][2]string) []pgCase {
	cs := make([]pgCase, len(pairs))
	for i, p := range pairs {
		cs[i] = pgCase{ours: p[0], theirs: p[1], cmp: cmp}
	}
	return cs
}

// pairedSQL is a case of each template as pair spells it for each side (ordRows), compared
// as text.
func pairedSQL(pair func(string) (string, string), tmpls ...string) []pgCase {
	cs := make([]pgCase, len(tmpls))
	for i, tmpl := range tmpls {
		ours, theirs := pair(tmpl)
		cs[i] = pgCase{ours: ours, theirs: theirs}
	}
	return cs
}

// comparePG runs every case through each client of clients (by name; pgText and pgNumbers
// cases through every one too) and PostgreSQL, and compares the answers; it returns the rows
// compared (PostgreSQL's, per case).
func comparePG(t *testing.T, ctx context.Context, pg *pgx.Conn, clients map[string]*flightsql.Client, cases ...pgCase) int {
	t.Helper()
	rows := 0
	for _, c := range cases {
		theirs := c.theirs
		if theirs == "" {
			theirs = c.ours
		}
		switch c.cmp {
		case pgText:
			want := pgTextRows(t, ctx, pg, theirs)
			for _, cl := range clients {
				compareText(t, c.ours, textColumns(mustRun(t, cl, c.ours)), want)
			}
			rows += len(want)
		case pgNumbers:
			for _, cl := range clients {
				rows += compareNumbers(t, ctx, cl, pg, c.ours, theirs, c.mayBeEmpty)
			}
		case pgTypes:
			wantTypes, want := pgTyped(t, ctx, pg, theirs)
			if c.nonEmpty && len(want) == 0 {
				t.Fatalf("PostgreSQL answers no row to %s", theirs)
			}
			for name, cl := range clients {
				res, err := run(ctx, cl, c.ours)
				if err != nil {
					t.Errorf("%s: %v\n%s", name, err, c.ours)
					continue
				}
				types, got := flightTyped(t, res)
				res.release()
				if msg := compareTyped(types, got, wantTypes, want); msg != "" {
					t.Errorf("%s: %s\n%s", name, msg, c.ours)
				}
			}
			rows += len(want)
		}
	}
	return rows
}

// one is the clients map of a single client.
func one(cl *flightsql.Client) map[string]*flightsql.Client {
	return map[string]*flightsql.Client{"": cl}
}
