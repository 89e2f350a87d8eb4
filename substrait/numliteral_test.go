package substrait

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestNumericLiteralsOfPostgres16: the numeric literal forms PostgreSQL 16 added are the syntax
// errors PostgreSQL 15 raises, quoting the token its scanner reads (messages taken from
// PostgreSQL 15.18), in a statement and in the text whose parameters are declared; the same
// digits in a string, an identifier or a comment are not literals.
func TestNumericLiteralsOfPostgres16(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	for sql, want := range map[string]string{
		`SELECT 0x1F+1`:            `trailing junk after numeric literal at or near "0x1F" (position 8)`,
		`SELECT 1_000_000+1`:       `trailing junk after numeric literal at or near "1_000_000" (position 8)`,
		`SELECT 1_000.5`:           `trailing junk after numeric literal at or near "1_000" (position 8)`,
		`SELECT 1.5_0`:             `trailing junk after numeric literal at or near "1.5_0" (position 8)`,
		`SELECT 0b101, 0o17`:       `trailing junk after numeric literal at or near "0b101" (position 8)`,
		`SELECT 'é', 0o17-1`:       `trailing junk after numeric literal at or near "0o17" (position 13)`,
		`SELECT 1e1_0`:             `trailing junk after numeric literal at or near "1e1_0" (position 8)`,
		`SELECT 1_000e3`:           `trailing junk after numeric literal at or near "1_000e3" (position 8)`,
		`SELECT 1 WHERE 2 > 1_000`: `trailing junk after numeric literal at or near "1_000" (position 20)`,
	} {
		for _, run := range []func() error{
			func() error { _, err := Prepare(sql, cat); return err },
			func() error {
				_, err := DeclareParameterTypes(sql, cat, BindOptions{}, arrow.NewSchema(nil, nil))
				return err
			},
		} {
			var e *Error
			if err := run(); !errors.As(err, &e) || e.SQLState != "42601" || e.Msg != want {
				t.Errorf("%s: %v, want 42601 %s", sql, err, want)
			}
		}
	}
	for _, sql := range []string{`SELECT '1_000', 1 AS "0x1", 10 -- 1_000`, `SELECT 0, 1.5, 2e3, 1 /* 0x10 */`} {
		if err := checkNumericLiterals(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
