// Package session carries the settings of the calling Flight SQL session from the protocol
// layer (flightsql, which reads them from the session cookie, the signed ticket and the
// authenticated identity) to the query engine (query), through the call's context. It holds
// no state and imports nothing of flightsrv.
package session

import "context"

// Settings are what a query's planning and execution need of its session.
type Settings struct {
	// User is the authenticated user name ("" when the server runs without authentication):
	// what current_user, session_user and user answer.
	User string
	// Analytical enables the analytical mode: a read of a routed table that pins no partition
	// reads every partition of its time range, discovered from the stores' route rows
	// (session option "analytical", or serve --analytical for every session). Off, such a read
	// is refused.
	Analytical bool
}

type key struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s Settings) context.Context {
	return context.WithValue(ctx, key{}, s)
}

// From returns the settings ctx carries; the zero Settings (no user, analytical mode off) when
// none.
func From(ctx context.Context) Settings {
	s, _ := ctx.Value(key{}).(Settings)
	return s
}
