// Package layering holds no code: its test checks the production import graph of flightsrv's
// packages against the layering docs/architecture.md draws ("Packages and their layering"):
// no import runs back up, and no production package imports test support.
package layering
