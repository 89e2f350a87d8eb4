// Package ledger is the per-query resource ledger of the distributed-plan seed (002, "per-query
// fragment resource ledger"), in one process: an allocator that counts every byte a query's
// batches hold and enforces the query's memory limit, and per-fragment reservations of bytes
// and rows released when the fragment ends.
//
// The limit is enforced through the allocator: every buffer of every batch a query builds or
// keeps is allocated by its Ledger, so Ledger.Check sees what the query holds. Operators that
// accumulate input (sort, top-k, hash aggregation, merge buffers) call Check after taking each
// batch and stop with the ErrMemoryLimit error it returns; streaming operators need not, as
// they hold a bounded number of batches.
//
// Memory is also reserved before it is spent: an operator about to build a batch whose size it
// can estimate (a projection: constants times rows, its inputs' sizes) claims those bytes first
// (Ledger.Claim), and is refused with the ErrMemoryLimit error, having allocated nothing, when
// they would not fit beside what the query holds and has claimed; it gives the claim back
// (Unclaim) once the batch is built, its buffers then being counted by the allocator. A query
// also claims, for as long as it runs, what its batches cost outside the allocator (the Go
// heap of their column metadata, which grows with the output's width).
//
// This package must not import routing, the stores or Flight.
package ledger

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ErrMemoryLimit is wrapped by the error a query gets when it would hold more memory than its
// limit; the error's text names the limit in bytes. The Flight layer maps it to
// RESOURCE_EXHAUSTED.
var ErrMemoryLimit = errors.New("ledger: query memory limit exceeded")

// ErrRowLimit is wrapped by the error of a fragment that would produce more rows than its
// reservation allows, and by the RowLimitExceededError of a query whose fragments would read
// more rows than its limit (SetRowLimit).
var ErrRowLimit = errors.New("ledger: query row limit exceeded")

// Ledger is one query's allocator and resource account. It implements memory.Allocator by
// delegating to a parent allocator and counting the bytes outstanding; it never refuses an
// allocation itself (arrow-go allocators cannot fail), Check reports when the count passes the
// limit. Safe for concurrent use by the query's fragments.
type Ledger struct {
	parent  memory.Allocator
	limit   int64 // bytes; <= 0: none
	cur     atomic.Int64
	peak    atomic.Int64
	claimed atomic.Int64           // bytes claimed and not given back (Claim)
	total   atomic.Pointer[Budget] // the process's account all queries share, or nil

	rowLimit int64 // rows the query's fragments may produce; <= 0: none
	rows     atomic.Int64

	cpu cpuBudget // CPU time (cpu.go)

	mu        sync.Mutex
	fragments int // reservations outstanding
}

// SetRowLimit bounds the rows all the query's fragments may produce together (<= 0: no
// bound; the seed's per-query row budget): Reservation.AddRows fails past it with a
// *RowLimitExceededError. Call it before the fragments start.
func (l *Ledger) SetRowLimit(n int64) { l.rowLimit = n }

// Rows returns the rows the query's fragments produced so far, with those AddRows counted.
func (l *Ledger) Rows() int64 { return l.rows.Load() }

// AddRows counts n rows the query produced outside a fragment's reading — the rows a
// set-returning function yields (generate_series, unnest, json_each…; scan/ops's
// ProjectSet) — against the query's row limit, with the fragments' rows: past it, a
// *RowLimitExceededError, as Reservation.AddRows. A nil ledger counts nothing.
func (l *Ledger) AddRows(n int64) error {
	if l == nil {
		return nil
	}
	if total := l.rows.Add(n); l.rowLimit > 0 && total > l.rowLimit {
		return &RowLimitExceededError{Limit: l.rowLimit}
	}
	return nil
}

// RowLimitExceededError is the error of a query whose fragments would produce more rows than
// its limit; it matches ErrRowLimit with errors.Is. It carries the limit and nothing of the
// data; the protocol boundary (package flightsql) words it for the client.
type RowLimitExceededError struct {
	Limit int64 // rows
}

func (e *RowLimitExceededError) Error() string {
	return fmt.Sprintf("%s: limit of %d rows", ErrRowLimit.Error(), e.Limit)
}

// Is reports whether target is ErrRowLimit.
func (e *RowLimitExceededError) Is(target error) bool { return target == ErrRowLimit }

// New returns a ledger allocating from parent (memory.DefaultAllocator when nil) with a limit
// in bytes (<= 0: no limit).
func New(parent memory.Allocator, limit int64) *Ledger {
	if parent == nil {
		parent = memory.DefaultAllocator
	}
	return &Ledger{parent: parent, limit: limit}
}

var _ memory.Allocator = (*Ledger)(nil)

// Allocate allocates size bytes from the parent allocator and counts them.
func (l *Ledger) Allocate(size int) []byte {
	b := l.parent.Allocate(size)
	l.add(int64(len(b)))
	return b
}

// AllocateUninit allocates size bytes as Allocate does, without clearing them when the
// parent can skip it (a Pool): for a caller that writes every byte before anything reads it.
func (l *Ledger) AllocateUninit(size int) []byte {
	var b []byte
	if u, ok := l.parent.(interface{ AllocateUninit(int) []byte }); ok {
		b = u.AllocateUninit(size)
	} else {
		b = l.parent.Allocate(size)
	}
	l.add(int64(len(b)))
	return b
}

// Reallocate resizes b through the parent allocator and counts the difference.
func (l *Ledger) Reallocate(size int, b []byte) []byte {
	old := len(b)
	nb := l.parent.Reallocate(size, b)
	l.add(int64(len(nb) - old))
	return nb
}

// Free returns b to the parent allocator.
func (l *Ledger) Free(b []byte) {
	l.add(-int64(len(b)))
	l.parent.Free(b)
}

func (l *Ledger) add(n int64) {
	if b := l.total.Load(); b != nil {
		b.cur.Add(n)
	}
	c := l.cur.Add(n)
	for {
		p := l.peak.Load()
		if c <= p || l.peak.CompareAndSwap(p, c) {
			return
		}
	}
}

// Limit returns the memory limit in bytes (<= 0: none).
func (l *Ledger) Limit() int64 { return l.limit }

// Bytes returns the bytes currently allocated through the ledger and not freed.
func (l *Ledger) Bytes() int64 { return l.cur.Load() }

// Peak returns the largest value Bytes has had.
func (l *Ledger) Peak() int64 { return l.peak.Load() }

// Check returns an error wrapping ErrMemoryLimit, naming the limit, when the bytes the query
// holds (Bytes) and has claimed (Claimed) together pass its limit, or when the ledger's
// Budget is past its limit while those bytes pass the query's share of it (Total set); nil
// otherwise. A nil ledger has no limit.
func (l *Ledger) Check() error {
	if l == nil {
		return nil
	}
	held := l.cur.Load() + l.claimed.Load()
	if l.limit > 0 && held > l.limit {
		return LimitError(l.limit)
	}
	return l.total.Load().check(held)
}

// Claim reserves n bytes (n >= 0) the caller is about to spend — a batch it is about to build,
// estimated from its inputs — before it spends them. It returns a *LimitExceededError
// (wrapping ErrMemoryLimit, naming the limit) and reserves nothing when the bytes the query
// holds (Bytes), the bytes already claimed and n would together pass the limit — or, for a
// ledger in a Budget, would take the budget's total past its limit while passing the query's
// share of it (Total set) — and the caller then must not build the batch. Otherwise the caller owns the claim and gives it back with
// Unclaim(n) once the memory is allocated (the allocator then counts it) or no longer needed;
// between the two the bytes count twice, which only errs on the side of refusing. A ledger
// without a limit (or nil) accepts every claim and still counts it (Claimed). Safe for
// concurrent use: claims of concurrent fragments are checked against each other.
func (l *Ledger) Claim(n int64) error {
	if l == nil || n <= 0 {
		return nil
	}
	c := l.claimed.Add(n)
	if l.limit > 0 && l.cur.Load()+c > l.limit {
		l.claimed.Add(-n)
		return LimitError(l.limit)
	}
	if b := l.total.Load(); b != nil {
		if t := b.cur.Add(n); b.limit > 0 && t > b.limit && l.cur.Load()+c > b.share() {
			b.cur.Add(-n)
			l.claimed.Add(-n)
			return &LimitExceededError{Limit: b.limit, Total: true}
		}
	}
	return nil
}

// Unclaim gives back n bytes of an earlier successful Claim(n). A nil ledger ignores it.
func (l *Ledger) Unclaim(n int64) {
	if l == nil || n <= 0 {
		return
	}
	if b := l.total.Load(); b != nil {
		b.cur.Add(-n)
	}
	l.claimed.Add(-n)
}

// Claimed returns the bytes claimed (Claim) and not yet given back.
func (l *Ledger) Claimed() int64 {
	if l == nil {
		return 0
	}
	return l.claimed.Load()
}

// LimitExceededError is the error of a query that exceeded its query memory limit, or whose
// bytes would take the process's queries together past theirs (Total, a Budget's); it matches
// ErrMemoryLimit with errors.Is. It carries the limit and nothing of the data; the protocol
// boundary (package flightsql) words it for the client.
type LimitExceededError struct {
	Limit int64 // bytes
	Total bool  // the limit is the Budget all the process's queries share
}

func (e *LimitExceededError) Error() string {
	if e.Total {
		return fmt.Sprintf("%s: total query memory limit of %d bytes", ErrMemoryLimit.Error(), e.Limit)
	}
	return fmt.Sprintf("%s: query memory limit of %d bytes", ErrMemoryLimit.Error(), e.Limit)
}

// Is reports whether target is ErrMemoryLimit.
func (e *LimitExceededError) Is(target error) bool { return target == ErrMemoryLimit }

// LimitError returns the error of a query that exceeded limit bytes (a *LimitExceededError).
func LimitError(limit int64) error { return &LimitExceededError{Limit: limit} }

// Budget is the memory all the queries of a process hold together: the bytes their ledgers
// have allocated and not freed, and the bytes they have claimed (Ledger.Claim), bounded by a
// limit. A ledger joined to it (SetBudget) counts everything it counts there too. While the
// total is past the limit, the queries holding more than their share of it (the limit divided
// by the ledgers joined) are refused — a claim before the memory is taken, Check after an
// allocation — with a *LimitExceededError whose Total is set; a query holding less than its
// share is never refused for the others' memory, so one heavy query cannot make the ordinary
// ones beside it fail. The total may pass the limit by what queries under their share hold
// (at most the limit again). A query refused so may succeed once others end. Safe for
// concurrent use.
type Budget struct {
	limit  int64 // bytes; <= 0: none (the total is still counted)
	cur    atomic.Int64
	joined atomic.Int64 // ledgers joined and not detached
}

// NewBudget returns a budget of limit bytes (<= 0: no limit).
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Limit returns the budget's limit in bytes (<= 0: none).
func (b *Budget) Limit() int64 { return b.limit }

// Bytes returns the bytes the budget's ledgers hold and have claimed now.
func (b *Budget) Bytes() int64 { return b.cur.Load() }

// share returns one query's share of the limit: the limit divided by the ledgers joined.
func (b *Budget) share() int64 { return b.limit / max(1, b.joined.Load()) }

// check returns the Total *LimitExceededError when b's total passes its limit and a query
// holding held bytes holds more than its share; nil for a nil budget or one without limit.
func (b *Budget) check(held int64) error {
	if b == nil || b.limit <= 0 || b.cur.Load() <= b.limit || held <= b.share() {
		return nil
	}
	return &LimitExceededError{Limit: b.limit, Total: true}
}

// SetBudget joins l to b (nil: none), the account of all the process's queries. Call it before
// l allocates anything.
func (l *Ledger) SetBudget(b *Budget) {
	if b != nil {
		b.joined.Add(1)
	}
	if old := l.total.Swap(b); old != nil {
		old.joined.Add(-1)
	}
}

// Detach takes l out of its budget: what l still holds and has claimed is taken off the
// budget's total, and l's later allocations, frees and claims are no longer counted there. A
// query detaches its ledger when it ends, so that a buffer it never freed (left to the garbage
// collector, as arrow-go allows) cannot hold the process's total up for good; batches that
// outlive their query (a poll's kept results) are bounded by their own limit. Idempotent; a
// nil ledger ignores it.
func (l *Ledger) Detach() {
	if l == nil {
		return
	}
	if b := l.total.Swap(nil); b != nil {
		b.cur.Add(-(l.cur.Load() + l.claimed.Load()))
		b.joined.Add(-1)
	}
}

// Reservation is one fragment's share of the ledger: the rows it produced and the bytes it
// held at most, returned to the ledger by Release. Not safe for concurrent use: a fragment
// owns its reservation.
type Reservation struct {
	l        *Ledger
	maxRows  int64
	rows     int64
	released bool
}

// Reserve opens a reservation for one fragment that may produce at most maxRows rows
// (<= 0: unbounded).
func (l *Ledger) Reserve(maxRows int64) *Reservation {
	l.mu.Lock()
	l.fragments++
	l.mu.Unlock()
	return &Reservation{l: l, maxRows: maxRows}
}

// AddRows counts n rows produced by the fragment and checks the ledger: it returns an error
// wrapping ErrRowLimit past the reservation's rows, a *RowLimitExceededError past the query's
// row limit, or ErrMemoryLimit past the query's memory.
func (r *Reservation) AddRows(n int64) error {
	r.rows += n
	if r.maxRows > 0 && r.rows > r.maxRows {
		return fmt.Errorf("%w: a fragment produced more than %d rows", ErrRowLimit, r.maxRows)
	}
	if err := r.l.AddRows(n); err != nil {
		return err
	}
	return r.l.Check()
}

// Rows returns the rows counted so far.
func (r *Reservation) Rows() int64 { return r.rows }

// Release ends the reservation; it is idempotent.
func (r *Reservation) Release() {
	if r.released {
		return
	}
	r.released = true
	r.l.mu.Lock()
	r.l.fragments--
	r.l.mu.Unlock()
}

// Outstanding returns the number of reservations not yet released (what a cancelled query
// must bring back to zero).
func (l *Ledger) Outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fragments
}
