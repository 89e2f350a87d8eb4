package pgbytea

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/flightsrv/flightsrv/internal/testsupport/pgtest"
)

// TestInAsPostgres: In reads every text as PostgreSQL 15's byteain (the same bytes, or an
// error of the same SQLSTATE whose message is the beginning of PostgreSQL's), and Out writes
// byteaout's text: the inputs of TestInOut and 400 random texts of backslashes, octal and
// hexadecimal digits, x, white space and other bytes.
func TestInAsPostgres(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Start(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	inputs := []string{`\x6162`, `\x`, `\xDEADbeef`, "\\x 61\n62\t63\r", `\x616`, `\x6g`, `\x6 1`, `\X61`, `ab`, ``, `a\\b`,
		`\141\142`, `\000`, `\377`, `\400`, `\18`, `\1`, `a\`, `\n`, `é`, `\x0a0`, ` \x61`, `\\x61`, `\x61 `, "\\x\v61"}
	rng := rand.New(rand.NewPCG(18, 2))
	const alphabet = `\\\\x01234567389abfgAF \n\tzé`
	for range 400 {
		b := []rune{}
		if rng.IntN(2) == 0 {
			b = append(b, '\\', 'x')
		}
		for range rng.IntN(10) {
			b = append(b, []rune(alphabet)[rng.IntN(len([]rune(alphabet)))])
		}
		inputs = append(inputs, string(b))
	}
	checked := 0
	for _, in := range inputs {
		var want []byte
		var text string
		var pgErr *pgconn.PgError
		err := conn.QueryRow(ctx, "SELECT $1::text::bytea, $1::text::bytea::text", in).Scan(&want, &text)
		if err != nil && !errors.As(err, &pgErr) {
			t.Fatal(err)
		}
		got, gotErr := In(in)
		var e *Error
		switch {
		case pgErr != nil:
			if !errors.As(gotErr, &e) || e.Code != pgErr.Code || len(pgErr.Message) < len(e.Msg) || pgErr.Message[:len(e.Msg)] != e.Msg {
				t.Errorf("%q: %v, %v; PostgreSQL %s %s", in, got, gotErr, pgErr.Code, pgErr.Message)
			}
		case gotErr != nil:
			t.Errorf("%q: %v; PostgreSQL %x", in, gotErr, want)
		case string(got) != string(want) || Out(got) != text:
			t.Errorf("%q: %x (%s); PostgreSQL %x (%s)", in, got, Out(got), want, text)
		default:
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d inputs read alike", checked)
	}
}
