package pgbytea

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/fuzzcount"
	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

// quotedSymbol is the symbol PostgreSQL's base64 message quotes (Decode's leaves it out).
var quotedSymbol = regexp.MustCompile(`^invalid symbol "[^"]*" `)

// TestDecodeAsPostgres: Decode reads every text in each format as PostgreSQL 15's decode does
// (the same bytes, or an error of the same SQLSTATE whose message is the beginning of
// PostgreSQL's, or PostgreSQL's without the quoted symbol): hand-picked texts and 300 random
// texts a format of base64 characters, padding, hexadecimal and octal digits, backslashes and
// white space, in "hex", "base64", "escape", "Base64" and an unknown format.
func TestDecodeAsPostgres(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	inputs := []string{"", "616263", "61 62\n63\t\r", "616", "6 1", "zz", "YWJj", "YW Jj\n", "YQ==", "YQ=", "YQ", "Y", "YQ==YQ==", "YQ==YWJj",
		"=", "YQ===", "Y===", "YWJjZA=", "YWJj%", "é", "YWJ\xc3\xa9", `a\000b\\c`, `a\`, `a\9`, `a\01`, `a\400`, `\x41`, `\\x41`, "+/+/", "-_-_"}
	rng := rand.New(rand.NewPCG(18, 6))
	const alphabet = "AZaz09+/=== \n\t\\\\0137xé-"
	for range 300 {
		var b []rune
		for range rng.IntN(12) {
			b = append(b, []rune(alphabet)[rng.IntN(len([]rune(alphabet)))])
		}
		inputs = append(inputs, string(b))
	}
	checked := 0
	for _, format := range []string{"hex", "base64", "escape", "Base64", "base32"} {
		for _, in := range inputs {
			var want []byte
			var pgErr *pgconn.PgError
			err := conn.QueryRow(ctx, "SELECT decode($1::text, $2::text)", in, format).Scan(&want)
			if err != nil && !errors.As(err, &pgErr) {
				t.Fatal(err)
			}
			got, gotErr := Decode(in, format)
			var e *Error
			switch {
			case pgErr != nil:
				msg := quotedSymbol.ReplaceAllString(pgErr.Message, "invalid symbol ")
				if !errors.As(gotErr, &e) || e.Code != pgErr.Code || !strings.HasPrefix(msg, e.Msg) {
					t.Errorf("decode(%q, %s): %x, %v; PostgreSQL %s %s", in, format, got, gotErr, pgErr.Code, pgErr.Message)
				}
			case gotErr != nil:
				t.Errorf("decode(%q, %s): %v; PostgreSQL %x", in, format, gotErr, want)
			case !bytes.Equal(got, want):
				t.Errorf("decode(%q, %s): %x; PostgreSQL %x", in, format, got, want)
			default:
				checked++
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d texts decoded", checked)
	}
}

// FuzzDecode: Decode never panics, fails only with 22023 or 22P02, and reads back what the
// standard encoders write: hex digits, padded base64 (with newlines), and text without
// backslashes in the escape format as its own bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"616263", "YWJj", "YQ==", "YQ==YQ==", "Y===", `a\000b`, `a\`, "", " \n", "zz"} {
		for _, format := range []string{"hex", "base64", "escape", "HEX", "x"} {
			f.Add(s, format)
		}
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		fuzzcount.Add()
		if _, err := Decode(s, format); err != nil {
			if e, ok := err.(*Error); !ok || e.Code != "22P02" && e.Code != "22023" {
				t.Fatalf("Decode(%q, %q): %T %v", s, format, err, err)
			}
		}
		b := []byte(s)
		if got, err := Decode(strings.TrimPrefix(Out(b), `\x`), "hex"); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("hex of %q: %q, %v", s, got, err)
		}
		enc := base64.StdEncoding.EncodeToString(b)
		if len(enc) > 8 {
			enc = enc[:8] + "\n" + enc[8:]
		}
		if got, err := Decode(enc, "base64"); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("base64 %q of %q: %q, %v", enc, s, got, err)
		}
		if !strings.Contains(s, `\`) {
			if got, err := Decode(s, "escape"); err != nil || string(got) != s {
				t.Fatalf("escape of %q: %q, %v", s, got, err)
			}
		}
	})
}
