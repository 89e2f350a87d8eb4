// Package flightsql is the Arrow Flight SQL protocol layer of flightsrv: statement and
// prepared-statement handles, signed self-contained tickets, metadata commands, and the
// mapping of errors to gRPC status codes. It plans and executes nothing itself: every query
// goes to an [Engine].
//
// Handles and tickets are self-contained and signed (HMAC-SHA256 with the server's ticket
// key), so any replica holding the same key can serve them and DoGet never depends on session
// state (docs/flightsql-clients.md, endpoints and locations). Parameter values bound through DoPut
// travel inside the updated handle the server returns; because some clients keep using the
// original handle, the server also remembers the last binding per original handle in a
// bounded in-process table.
//
// Sessions (session.go) are stateless too: their options (catalog, schema, IPC compression)
// travel in a cookie, and what a query needs from them is sealed into its ticket at
// GetFlightInfo. CancelFlightInfo (cancel.go) cancels the DoGet streams of a FlightInfo's
// tickets and its poll, through a registry of running streams by query id, on this process
// and, forwarded as the same standard action, on its peers (peers.go). PollFlightInfo
// (poll.go) runs a query in the background with progress and serves its endpoints from the
// batches it keeps.
// GetSqlInfo (metadata.go) answers every id of the Flight SQL spec.
// Writes (docs/architecture.md, "The write path"): CommandStatementIngest goes to an
// [Ingester] (ingest.go), INSERT — CommandStatementUpdate, CommandPreparedStatementUpdate, or an
// INSERT reaching GetFlightInfo, executed there — to the engine's [Updater] (update.go); both
// are admitted like a query and answer one count, all rows or none.
//
// This package must not import routing stores, archive, Substrait planning or SQL parsing.
package flightsql
