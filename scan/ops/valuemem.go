package ops

import (
	"errors"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// A kernel whose result a user sizes with a small input — repeat(s, n), lpad and rpad to a
// width, replace and regexp_replace of a short pattern by a long replacement, format's widths —
// builds each value on the Go heap before it is copied into the batch's array, where the
// query's ledger first counts it. Such kernels claim each value's bytes from the ledger
// (ledger.Ledger.Claim) before building it, and keep the claims of all the batch's values
// until the kernel returns its array: a value past the query's limit, or a batch of values
// that together pass it, is refused with the ledger's *ledger.LimitExceededError (the
// protocol answers RESOURCE_EXHAUSTED naming --query-memory), having built nothing past it. A
// value past PostgreSQL's limit of 1 GiB is refused first, whatever the ledger, with its
// SQLSTATE 54000 "requested length too large" (errTooLarge), as PostgreSQL's repeat, lpad and
// rpad do.
//
// A value is claimed twice its bytes: the Go string the kernel builds and its copy in the
// output array, both live until the value is appended. A value built piece by piece
// (textBuilder) is claimed as its buffer grows, each new buffer before it is allocated.

// ConstantMemory bounds the bytes the evaluation of a constant holds when no query's ledger
// is given (EvalConstant without WithLedger; the constant subexpressions Compile folds to raise
// their data exceptions at planning): 16 MiB, the claims of the kernels above included. A
// constant needing more is not folded — Compile leaves it to the execution, where the query's
// ledger bounds it — and EvalConstant fails with a *ledger.LimitExceededError.
const ConstantMemory = 16 << 20

// constantLedger returns a ledger for one constant's evaluation bounded by ConstantMemory.
func constantLedger() *ledger.Ledger { return ledger.New(nil, ConstantMemory) }

// valueClaims are the bytes one kernel call claimed for the values it builds, from the
// query's ledger (the call's allocator when it is one; none otherwise, the 1 GiB bound
// alone applying). Not safe for concurrent use.
type valueClaims struct {
	l *ledger.Ledger
	n int64

	sizing  bool  // presize's pass: value adds to sized and builds nothing (errSizing)
	sized   int64 // the bytes value was asked for during presize's pass over one row
	prepaid bool  // presize claimed every value of the call: value claims nothing more
}

// errSizing stops a kernel's row function before it builds its value during presize's pass.
var errSizing = errors.New("ops: value sized")

// presize claims at once, before any of them is built, the values the calls f(0) … f(rows-1)
// would each claim (value) as they build them, skipping the rows whose args hold a NULL: a
// batch whose values together pass the query's limit is refused having built nothing, so
// Project's halving of a refused piece (Project) wastes no work building values it drops.
// Later value calls claim nothing. f's other errors (errTooLarge) are returned as they come.
// Nil claims, or claims without a ledger, presize nothing.
func (c *valueClaims) presize(rows int, args []arrow.Array, f func(i int) error) error {
	if c == nil || c.l == nil {
		return nil
	}
	c.sizing = true
	var total int64
	for i := range rows {
		if anyNullAt(args, i) {
			continue
		}
		c.sized = 0
		if err := f(i); err != nil && err != errSizing {
			c.sizing = false
			return err
		}
		total += c.sized
	}
	c.sizing = false
	if err := c.claim(total); err != nil {
		return err
	}
	c.prepaid = true
	return nil
}

// anyNullAt reports whether one of args is NULL at row i.
func anyNullAt(args []arrow.Array, i int) bool {
	for _, a := range args {
		if a != nil && a.IsNull(i) {
			return true
		}
	}
	return false
}

// newValueClaims returns the claims of a kernel call allocating from mem; the caller
// releases them (release) once the call's array is built.
func newValueClaims(mem memory.Allocator) *valueClaims {
	l, _ := mem.(*ledger.Ledger)
	return &valueClaims{l: l}
}

// value claims a value of n bytes about to be built and copied into the output array:
// errTooLarge (54000) past 1 GiB, the ledger's error when twice n does not fit beside what
// the query holds and has claimed.
func (c *valueClaims) value(n int64) error {
	if n > maxTextBytes {
		return errTooLarge
	}
	switch {
	case c == nil:
		return nil
	case c.sizing:
		c.sized += 2 * n
		return errSizing
	case c.prepaid:
		return nil
	}
	return c.claim(2 * n)
}

// claim claims n bytes from the ledger, kept until release. Nil claims claim nothing.
func (c *valueClaims) claim(n int64) error {
	if c == nil {
		return nil
	}
	if err := c.l.Claim(n); err != nil {
		return err
	}
	c.n += n
	return nil
}

// release gives back every claim.
func (c *valueClaims) release() {
	if c == nil {
		return
	}
	c.l.Unclaim(c.n)
	c.n = 0
}

// textBuilder builds one text value whose size is known only as it is built, claiming its
// buffer from c before each growth (the buffers it outgrows stay claimed: they are garbage
// the collector has not yet returned) and refusing with errTooLarge past 1 GiB.
type textBuilder struct {
	b strings.Builder
	c *valueClaims
}

// need makes room for k more bytes.
func (t *textBuilder) need(k int) error {
	l := t.b.Len() + k
	if int64(l) > maxTextBytes {
		return errTooLarge
	}
	if l <= t.b.Cap() {
		return nil
	}
	// strings.Builder.Grow allocates twice its capacity plus k; the final copy into the
	// output array is claimed as the value's once it is built (done).
	if err := t.c.claim(int64(2*t.b.Cap() + k)); err != nil {
		return err
	}
	t.b.Grow(k)
	return nil
}

// WriteString appends s once its room is claimed.
func (t *textBuilder) WriteString(s string) error {
	if err := t.need(len(s)); err != nil {
		return err
	}
	t.b.WriteString(s)
	return nil
}

// WriteByte appends c once its room is claimed.
func (t *textBuilder) WriteByte(c byte) error {
	if err := t.need(1); err != nil {
		return err
	}
	return t.b.WriteByte(c)
}

// spaces appends k spaces, their room claimed before (need).
func (t *textBuilder) spaces(k int) {
	const blank = "                                                                "
	for ; k > len(blank); k -= len(blank) {
		t.b.WriteString(blank)
	}
	t.b.WriteString(blank[:k])
}

// done returns the value built, its copy into the output array claimed.
func (t *textBuilder) done() (string, error) {
	if err := t.c.claim(int64(t.b.Len())); err != nil {
		return "", err
	}
	return t.b.String(), nil
}

// growClaimed returns dst with room for k more bytes, a larger buffer (twice dst's capacity
// plus k) claimed from c before it is allocated: errTooLarge when dst would pass 1 GiB, the
// ledger's refusal past the query's limit.
func growClaimed(c *valueClaims, dst []byte, k int) ([]byte, error) {
	l := len(dst) + k
	if int64(l) > maxTextBytes {
		return dst, errTooLarge
	}
	if l <= cap(dst) {
		return dst, nil
	}
	size := 2*cap(dst) + k
	if err := c.claim(int64(size)); err != nil {
		return dst, err
	}
	grown := make([]byte, len(dst), size)
	copy(grown, dst)
	return grown, nil
}
