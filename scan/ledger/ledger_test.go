package ledger

import (
	"errors"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// wantLimit fails unless err is a *LimitExceededError of limit bytes, Total as given.
func wantLimit(t *testing.T, what string, err error, limit int64, total bool) {
	t.Helper()
	var le *LimitExceededError
	if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &le) || le.Limit != limit || le.Total != total {
		t.Fatalf("%s: %v, want the limit of %d bytes (total %v)", what, err, limit, total)
	}
}

// TestClaim: claims are checked against what the ledger holds and has claimed, before
// anything is allocated, and given back by Unclaim. Limit 100 bytes: 60 claimed, then 50 is
// refused (110); 30 allocated, then 20 is refused (60+30+20 = 110) and 10 accepted (100);
// Check passes at exactly the limit and fails one byte past it.
func TestClaim(t *testing.T) {
	l := New(memory.NewGoAllocator(), 100)
	if err := l.Claim(60); err != nil {
		t.Fatal(err)
	}
	wantLimit(t, "claim 50 beside 60", l.Claim(50), 100, false)
	if l.Claimed() != 60 {
		t.Fatalf("claimed %d after a refused claim, want 60", l.Claimed())
	}
	b := l.Allocate(30)
	wantLimit(t, "claim 20 beside 60 claimed and 30 held", l.Claim(20), 100, false)
	if err := l.Claim(10); err != nil {
		t.Fatalf("claim 10 to exactly the limit: %v", err)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("check at exactly the limit: %v", err)
	}
	b = l.Reallocate(31, b)
	wantLimit(t, "check one byte past the limit", l.Check(), 100, false)
	l.Unclaim(70)
	if l.Claimed() != 0 || l.Check() != nil || l.Bytes() != 31 {
		t.Fatalf("after giving the claims back: claimed %d, held %d, check %v", l.Claimed(), l.Bytes(), l.Check())
	}
	l.Free(b)
	var none *Ledger
	if none.Claim(1<<40) != nil || none.Claimed() != 0 {
		t.Fatal("a nil ledger refused a claim")
	}
	none.Unclaim(1 << 40)
	unlimited := New(nil, 0)
	if err := unlimited.Claim(1 << 40); err != nil || unlimited.Claimed() != 1<<40 {
		t.Fatalf("a ledger without limit: %v, claimed %d", err, unlimited.Claimed())
	}
}

// TestBudget: two queries' ledgers (limits 100 bytes each) share a budget of 150, a share of
// 75 each: each claims 70 (140 in all); q2's claim of 20 (160, q2 holding 90) is refused,
// naming the budget's 150 bytes as a total, while q1's 10 passes (150). q1 then allocates 81
// bytes (total 151): Check refuses q1 (81 past its share) but not q2 (70, within its share:
// a query is never refused for the others' memory). A third query joins (shares of 50): its
// claim of 10 passes though the total is past the limit (161), q2's next byte (71) does not.
// Giving everything back returns the total to zero.
func TestBudget(t *testing.T) {
	b := NewBudget(150)
	q1, q2 := New(nil, 100), New(nil, 100)
	q1.SetBudget(b)
	q2.SetBudget(b)
	for _, l := range []*Ledger{q1, q2} {
		if err := l.Claim(70); err != nil {
			t.Fatal(err)
		}
	}
	wantLimit(t, "q2's claim of 20 past the budget", q2.Claim(20), 150, true)
	if b.Bytes() != 140 || q2.Claimed() != 70 {
		t.Fatalf("after a refused claim: total %d, q2 claimed %d; want 140 and 70", b.Bytes(), q2.Claimed())
	}
	if err := q1.Claim(10); err != nil {
		t.Fatalf("claim to exactly the budget: %v", err)
	}
	q1.Unclaim(80)
	buf := q1.Allocate(81) // 70 + 81 = 151
	wantLimit(t, "q1's check past its share", q1.Check(), 150, true)
	if err := q2.Check(); err != nil {
		t.Fatalf("q2, within its share, refused for q1's memory: %v", err)
	}
	q3 := New(nil, 100)
	q3.SetBudget(b)
	if err := q3.Claim(10); err != nil {
		t.Fatalf("a small query refused while the total is past the budget: %v", err)
	}
	wantLimit(t, "q2's claim past its share of 50", q2.Claim(1), 150, true)
	if msg := (&LimitExceededError{Limit: 150, Total: true}).Error(); msg != "ledger: query memory limit exceeded: total query memory limit of 150 bytes" {
		t.Fatalf("message %q", msg)
	}
	q1.Free(buf)
	q2.Unclaim(70)
	q3.Unclaim(10)
	if b.Bytes() != 0 {
		t.Fatalf("total %d after everything was given back", b.Bytes())
	}
}

// TestClaimConcurrent: 8 goroutines claim 10 bytes 1,000 times each from a ledger (limit 50)
// in a budget of 40, giving each successful claim back: at no moment do accepted claims pass
// the budget (each goroutine holds at most one), and both end at zero.
func TestClaimConcurrent(t *testing.T) {
	l := New(nil, 50)
	b := NewBudget(40)
	l.SetBudget(b)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if l.Claim(10) == nil {
					if c := b.Bytes(); c > 40 {
						t.Errorf("total %d past the budget of 40", c)
					}
					l.Unclaim(10)
				}
			}
		})
	}
	wg.Wait()
	if l.Claimed() != 0 || b.Bytes() != 0 {
		t.Fatalf("claimed %d, total %d at the end", l.Claimed(), b.Bytes())
	}
}

// TestDetach: a query's ledger holding 30 bytes (one buffer never freed) and 20 claimed leaves
// its budget at 50; Detach takes both off (0), and the later free of the buffer no longer
// reaches the budget, which stays at 0 while another query's 10 bytes count as ever.
func TestDetach(t *testing.T) {
	b := NewBudget(100)
	q, other := New(nil, 0), New(nil, 0)
	q.SetBudget(b)
	other.SetBudget(b)
	buf := q.Allocate(30)
	if err := q.Claim(20); err != nil {
		t.Fatal(err)
	}
	if b.Bytes() != 50 {
		t.Fatalf("total %d, want 50", b.Bytes())
	}
	q.Detach()
	q.Detach()
	if b.Bytes() != 0 {
		t.Fatalf("total %d after Detach, want 0", b.Bytes())
	}
	q.Free(buf)
	ob := other.Allocate(10)
	if b.Bytes() != 10 {
		t.Fatalf("total %d, want the other query's 10", b.Bytes())
	}
	other.Free(ob)
	var none *Ledger
	none.Detach()
}
