package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// wantRefusal fails unless err is an UNAVAILABLE status whose message contains want.
func wantRefusal(t *testing.T, err error, want string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != codes.Unavailable || !strings.Contains(st.Message(), want) {
		t.Fatalf("got %v, want UNAVAILABLE mentioning %q", err, want)
	}
}

// admitAsync starts admit in a goroutine and returns the channel of its outcome. An admitted
// query releases its slot before its outcome is sent, so a receiver sees the slot free.
func admitAsync(ctx context.Context, a *admission) <-chan error {
	ch := make(chan error, 1)
	go func() {
		release, err := a.admit(ctx)
		if err == nil {
			release()
		}
		ch <- err
	}()
	return ch
}

// waitQueued waits until n queries are queued.
func waitQueued(t *testing.T, a *admission, n int) {
	t.Helper()
	for range 5000 {
		if _, q := a.inFlight(); q == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never %d queued", n)
}

func TestAdmissionQueuesThenRefuses(t *testing.T) {
	ctx := context.Background()
	a := newAdmission(2, 1, time.Hour)
	r1, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	third := admitAsync(ctx, a)
	waitQueued(t, a, 1)
	_, err = a.admit(ctx)
	wantRefusal(t, err, "too many queries: 2 running and 1 waiting (--max-queries, --max-queued)")
	r1()
	r1() // a second release is a no-op
	if err := <-third; err != nil {
		t.Fatalf("queued query: %v", err)
	}
	r2()
	if run, q := a.inFlight(); run != 0 || q != 0 {
		t.Fatalf("%d running, %d queued after every release", run, q)
	}
}

func TestAdmissionWaitExpires(t *testing.T) {
	ctx := context.Background()
	a := newAdmission(1, 4, 20*time.Millisecond)
	release, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = a.admit(ctx)
	wantRefusal(t, err, "for one of 1 query slots (--queue-wait, --max-queries)")
}

func TestAdmissionCallerGoesAway(t *testing.T) {
	a := newAdmission(1, 4, time.Hour)
	release, err := a.admit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	waiting := admitAsync(ctx, a)
	waitQueued(t, a, 1)
	cancel()
	if err := <-waiting; status.Code(err) != codes.Canceled {
		t.Fatalf("got %v, want CANCELLED", err)
	}
}

func TestAdmissionDrain(t *testing.T) {
	ctx := context.Background()
	a := newAdmission(1, 4, time.Hour)
	release, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queued := admitAsync(ctx, a)
	waitQueued(t, a, 1)
	idle := a.drain()
	if again := a.drain(); again != idle {
		t.Fatal("a second drain returns another channel")
	}
	wantRefusal(t, <-queued, "shutting down")
	_, err = a.admit(ctx)
	wantRefusal(t, err, "shutting down")
	if run, q := a.inFlight(); run != 1 || q != 0 {
		t.Fatalf("%d running, %d queued after the drain; the running query must go on", run, q)
	}
	select {
	case <-idle:
		t.Fatal("idle while a query runs")
	default:
	}
	release()
	<-idle
	idleAtOnce := newAdmission(1, 0, time.Hour).drain()
	select {
	case <-idleAtOnce:
	default:
		t.Fatal("a drain without running queries must be idle at once")
	}
}
