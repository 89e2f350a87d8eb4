// Package e2e holds the end-to-end tests of flightsrv: the server assembled as the binary
// assembles it (server) over a real PostgreSQL hot store (started by internal/testsupport/pgtest)
// and a real archive directory, loaded from the committed flights sample, and queried through
// arrow-go's Flight SQL client and its database/sql driver. Expected answers are computed
// independently from the sample Parquet file, or by PostgreSQL over the same rows in a plain
// table (the golden corpus of testdata/sql, golden_test.go, and the *AsPostgres tests).
package e2e
