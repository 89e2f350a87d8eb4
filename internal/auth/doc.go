// Package auth authenticates Flight SQL callers: users with slow password hashes from a
// configuration file, bearer tokens signed with a keyring of identified keys, and the gRPC
// interceptors and Handshake handler that apply them to every call.
//
// The keyring is a small set of HMAC-SHA256 secrets, each with a key id; one of them (the
// active key) signs, all of them verify. Replicas that share the keyring file verify each
// other's tokens, and a key is rotated by adding a new active key while the old one still
// verifies what it signed. The keyring signs any payload (Keyring.Sign), not only tokens.
//
// Tokens are JSON Web Tokens (RFC 7519, HS256, golang-jwt) whose header carries the key id
// ("kid") and whose claims carry the user ("sub"), the issue time and the expiry ("exp").
// Passwords are bcrypt hashes (golang.org/x/crypto/bcrypt) in an htpasswd-style file, one
// "user:hash" per line, as `htpasswd -B` or `flightsrv auth hash-password` writes them.
//
// Failures reach clients as UNAUTHENTICATED with a fixed message: they never say whether a
// user exists, which part of a token was wrong, or that a token expired.
//
// This package must not import the Flight SQL layer, the query engine or any store.
package auth
