package routing

import "context"

// Pinger is implemented by stores whose reachability can be checked cheaply: one round trip
// that reads no table (a connection check for the hot stores, an accessibility check of the
// archive's object-store bucket). Health checking (server) uses it; Ping must be
// safe for concurrent use and must not hold resources after it returns. Errors may carry the
// driver's text: callers log them and never send them to clients.
type Pinger interface {
	Ping(ctx context.Context) error
}
