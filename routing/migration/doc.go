// Package migration plans numbered, checksummed schema migrations against an append-only
// history (docs/pulpitum-v4.md §1.3). It is driver-free: the hot-store adapters
// (routing/cockroach and routing/sqlite) read their history table, call [Plan], and apply the
// returned migrations in one transaction.
//
// A migration is identified by its version; its checksum is the lowercase hex SHA-256 of its
// SQL text. Applied history is valid when every applied version is known to this binary, no
// version repeats, the applied versions are a prefix of the known ones (no gaps), and each
// applied (name, checksum) equals the known one (or one of its accepted legacy checksums).
//
// This package must not import any database driver; both hot stores import it, so it sits
// beside them under routing.
package migration
