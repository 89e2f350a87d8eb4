package migration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Migration is one numbered schema change. Migrations are immutable once released: changing
// the SQL of a released version makes every database that applied it fail with a
// [*ChecksumDriftError].
type Migration struct {
	// Version is the migration number; versions of one list strictly increase by one.
	Version int64
	// Name is the unique, stable name recorded in the history table.
	Name string
	// SQL is the statement text applied, verbatim, in the migration transaction.
	SQL string
	// LegacyChecksums lists other checksums accepted for this version in applied history,
	// for databases migrated by another implementation whose SQL text differed (for example
	// the reference's v4 baseline text). Lowercase hex SHA-256.
	LegacyChecksums []string
}

// Checksum returns the lowercase hex SHA-256 of m.SQL, the value recorded in history.
func (m Migration) Checksum() string { return Checksum(m.SQL) }

// accepts reports whether checksum is m's own or one of its legacy checksums.
func (m Migration) accepts(checksum string) bool {
	return checksum == m.Checksum() || slices.Contains(m.LegacyChecksums, checksum)
}

// Checksum returns the lowercase hex SHA-256 of sql's UTF-8 bytes.
func Checksum(sql string) string {
	sum := sha256.Sum256([]byte(sql))
	return hex.EncodeToString(sum[:])
}

// Applied is one row of a history table.
type Applied struct {
	Version  int64
	Name     string
	Checksum string
}

// UnsupportedHistoricalVersionError reports an applied version older than the first version
// this binary manages.
type UnsupportedHistoricalVersionError struct{ Version, FirstSupported int64 }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *UnsupportedHistoricalVersionError) Error() string {
	return fmt.Sprintf("migration: database has unsupported historical migration version %d; managed history starts at version %d",
		e.Version, e.FirstSupported)
}

// FutureVersionError reports an applied version newer than the latest this binary knows.
type FutureVersionError struct{ Version, LatestSupported int64 }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *FutureVersionError) Error() string {
	return fmt.Sprintf("migration: database migration version %d is newer than this binary supports (latest is %d)",
		e.Version, e.LatestSupported)
}

// GapError reports a missing version before a present one.
type GapError struct{ Missing, Present int64 }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *GapError) Error() string {
	return fmt.Sprintf("migration: history has a gap: version %d is required before version %d", e.Missing, e.Present)
}

// DuplicateVersionError reports a version recorded twice.
type DuplicateVersionError struct{ Version int64 }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *DuplicateVersionError) Error() string {
	return fmt.Sprintf("migration: history contains duplicate version %d", e.Version)
}

// ChecksumDriftError reports an applied migration whose name or checksum differs from the
// binary's migration of the same version.
type ChecksumDriftError struct {
	Version                          int64
	ExpectedName, ActualName         string
	ExpectedChecksum, ActualChecksum string
}

// Error implements error; the message carries no keys, tokens or SQL.
func (e *ChecksumDriftError) Error() string {
	return fmt.Sprintf("migration: version %d has drifted: expected name %q and checksum %s, found name %q and checksum %s",
		e.Version, e.ExpectedName, e.ExpectedChecksum, e.ActualName, e.ActualChecksum)
}

// PendingError reports versions not yet applied; runtime validation returns it instead of
// migrating.
type PendingError struct{ Versions []int64 }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *PendingError) Error() string {
	vs := make([]string, len(e.Versions))
	for i, v := range e.Versions {
		vs[i] = fmt.Sprint(v)
	}
	return "migration: database is missing required migration versions " + strings.Join(vs, ", ")
}

// MissingColumnError reports a required column absent from a table.
type MissingColumnError struct{ Table, Column string }

// Error implements error; the message carries no keys, tokens or SQL.
func (e *MissingColumnError) Error() string {
	return fmt.Sprintf("migration: schema validation failed: table %s is missing required column %s", e.Table, e.Column)
}

// PrimaryKeyMismatchError reports a table whose primary key columns differ from the expected
// ones or are in another order.
type PrimaryKeyMismatchError struct {
	Table            string
	Expected, Actual []string
}

// Error implements error; the message carries no keys, tokens or SQL.
func (e *PrimaryKeyMismatchError) Error() string {
	return fmt.Sprintf("migration: schema validation failed: table %s has primary key (%s), expected (%s)",
		e.Table, strings.Join(e.Actual, ", "), strings.Join(e.Expected, ", "))
}

// Validate checks that known is a usable migration list: non-empty, versions non-negative and
// consecutive, names unique and non-blank. Adapters call it from tests.
func Validate(known []Migration) error {
	if len(known) == 0 {
		return fmt.Errorf("migration: no migrations")
	}
	names := map[string]bool{}
	for i, m := range known {
		switch {
		case m.Version < 0:
			return fmt.Errorf("migration: negative version %d", m.Version)
		case i > 0 && m.Version != known[i-1].Version+1:
			return fmt.Errorf("migration: version %d does not follow %d", m.Version, known[i-1].Version)
		case strings.TrimSpace(m.Name) == "":
			return fmt.Errorf("migration: version %d has a blank name", m.Version)
		case names[m.Name]:
			return fmt.Errorf("migration: name %q is used twice", m.Name)
		case strings.TrimSpace(m.SQL) == "":
			return fmt.Errorf("migration: version %d has no SQL", m.Version)
		}
		names[m.Name] = true
	}
	return nil
}

// Plan validates the applied history against known (ordered by version, as [Validate]
// requires) and returns the migrations still to apply, in order. An empty history plans every
// known migration. Errors are, in the order they are checked per applied row:
// [*DuplicateVersionError], [*UnsupportedHistoricalVersionError], [*FutureVersionError],
// [*GapError] (an unknown version inside the known range), [*ChecksumDriftError]; then, over
// the whole history, [*GapError] when the applied versions are not a prefix of known.
func Plan(known []Migration, applied []Applied) ([]Migration, error) {
	if err := Validate(known); err != nil {
		return nil, err
	}
	first, latest := known[0].Version, known[len(known)-1].Version
	byVersion := make(map[int64]Migration, len(known))
	for _, m := range known {
		byVersion[m.Version] = m
	}
	seen := make(map[int64]bool, len(applied))
	for _, a := range applied {
		if seen[a.Version] {
			return nil, &DuplicateVersionError{Version: a.Version}
		}
		seen[a.Version] = true
		if a.Version < first {
			return nil, &UnsupportedHistoricalVersionError{Version: a.Version, FirstSupported: first}
		}
		if a.Version > latest {
			return nil, &FutureVersionError{Version: a.Version, LatestSupported: latest}
		}
		m, ok := byVersion[a.Version]
		if !ok { // unreachable with consecutive versions; kept for safety
			return nil, &GapError{Missing: a.Version, Present: a.Version}
		}
		if a.Name != m.Name || !m.accepts(a.Checksum) {
			return nil, &ChecksumDriftError{Version: a.Version, ExpectedName: m.Name, ActualName: a.Name,
				ExpectedChecksum: m.Checksum(), ActualChecksum: a.Checksum}
		}
	}
	versions := make([]int64, 0, len(seen))
	for v := range seen {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for i, v := range versions {
		if v != known[i].Version {
			return nil, &GapError{Missing: known[i].Version, Present: v}
		}
	}
	return slices.Clone(known[len(versions):]), nil
}

// RequireCurrent is the history check of a runtime start-up (docs/pulpitum-v4.md §1.3,
// "What a runtime start-up checks"): applied must be a valid history of known (Plan's errors
// otherwise) with nothing pending (a *PendingError listing the missing versions otherwise).
func RequireCurrent(known []Migration, applied []Applied) error {
	pending, err := Plan(known, applied)
	if err != nil {
		return err
	}
	if len(pending) == 0 {
		return nil
	}
	versions := make([]int64, len(pending))
	for i, m := range pending {
		versions[i] = m.Version
	}
	return &PendingError{Versions: versions}
}
