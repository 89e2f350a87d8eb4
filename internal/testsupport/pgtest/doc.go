// Package pgtest starts a throwaway PostgreSQL server for tests and hands out one fresh database
// per test, so that tests against the hot store run against a real server and stay isolated.
//
// The server is found or started once per test binary:
//
//   - when the environment variable FLIGHTSRV_TEST_PG_URL is set (a postgres:// URL whose user
//     may CREATE DATABASE), that server is used and nothing is started or stopped;
//   - otherwise the PostgreSQL server binaries are located (FLIGHTSRV_TEST_PG_BINDIR,
//     `pg_config --bindir`, /usr/lib/postgresql/<version>/bin highest version first, then PATH),
//     a cluster is created with initdb in a temporary directory (as the postgres OS user via
//     `runuser -u postgres` when the test runs as root) with trust authentication, and postgres is
//     started on 127.0.0.1 and a free port with its socket in the temporary directory, fsync and
//     synchronous_commit off. It is stopped by its pid (SIGINT, a fast shutdown) when [Main]
//     returns, and the directory is removed.
//
// When neither a URL nor the binaries are found, [Start] fails the test with a message saying
// what to install; it never skips silently.
//
// Use it from a package's TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.Start(t).NewDatabase(t)
//		...
//	}
//
// This package is test support: production code must not import it.
package pgtest
