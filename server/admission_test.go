package server

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/internal/auth"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
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
	a := newAdmission(2, 1, 1, time.Hour)
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
	a := newAdmission(1, 4, 1, 20*time.Millisecond)
	release, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = a.admit(ctx)
	wantRefusal(t, err, "for one of 1 query slots (--queue-wait, --max-queries)")
}

func TestAdmissionCallerGoesAway(t *testing.T) {
	a := newAdmission(1, 4, 1, time.Hour)
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
	a := newAdmission(1, 4, 1, time.Hour)
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
	idleAtOnce := newAdmission(1, 0, 1, time.Hour).drain()
	select {
	case <-idleAtOnce:
	default:
		t.Fatal("a drain without running queries must be idle at once")
	}
}

// TestAdmissionMetrics: running and queued queries are gauges, refusals count by reason and
// waits are timed (issue 20).
func TestAdmissionMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	a := newAdmissionMeter(1, 1, 1, 20*time.Millisecond, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("flightsrv"))
	ctx := context.Background()
	release, err := a.admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.admit(ctx); err == nil { // waits 20 ms, then refused: "wait"
		t.Fatal("a second query admitted past one slot")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	var waits uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					got[m.Name] = dp.Value
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					r, _ := dp.Attributes.Value("reason")
					got[m.Name+" "+r.AsString()] += dp.Value
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					waits += dp.Count
				}
			}
		}
	}
	release()
	if got["flightsrv.admission.running"] != 1 || got["flightsrv.admission.queued"] != 0 || got["flightsrv.admission.refusals wait"] != 1 || waits != 1 {
		t.Errorf("metrics %v, %d waits timed", got, waits)
	}
}

// TestConfigDefaultsOfSettingsThatCannotBeOff: a negative MaxQueries, QueueWait,
// HealthInterval or QueryConnectionWait (which no flag accepts) gets the default, as zero does,
// instead of reaching a channel size, a timer or a ticker; the bounds that can be off turn off.
func TestConfigDefaultsOfSettingsThatCannotBeOff(t *testing.T) {
	c := Config{MaxQueries: -1, QueueWait: -1, HealthInterval: -1, QueryConnectionWait: -1, MaxQueued: -1, QueryTimeout: -1}
	c.withDefaults()
	if c.MaxQueries != DefaultMaxQueries || c.QueueWait != DefaultQueueWait || c.HealthInterval != DefaultHealthInterval || c.QueryConnectionWait != DefaultQueryConnectionWait {
		t.Fatalf("settings that cannot be off: %+v", c)
	}
	if c.MaxQueued != 0 || c.QueryTimeout != 0 {
		t.Fatalf("negative MaxQueued %d and QueryTimeout %v should be off (0 below the struct)", c.MaxQueued, c.QueryTimeout)
	}
}

// waitPolls waits until running polls hold slots and queued wait.
func waitPolls(t *testing.T, a *admission, running, queued int) {
	t.Helper()
	for range 5000 {
		if r, q := a.pollsInFlight(); r == running && q == queued {
			return
		}
		time.Sleep(time.Millisecond)
	}
	r, q := a.pollsInFlight()
	t.Fatalf("polls: %d running, %d queued; want %d, %d", r, q, running, queued)
}

// TestAdmissionPollShare: polls' runs hold at most their share of the slots; more wait in
// their own queue, taking none of the queue's places and never refused for waiting, so query
// streams still get the other slots at once, and find their queue empty. A waiting poll gets
// the share's next free place; one whose run is cancelled leaves the queue with its
// context's status; draining refuses waiting polls.
func TestAdmissionPollShare(t *testing.T) {
	ctx := context.Background()
	a := newAdmission(4, 0, 2, 10*time.Millisecond) // no queue, a short wait: any wait of a stream is a refusal
	type admitted struct {
		release func()
		err     error
	}
	polls := make(chan admitted, 10)
	pctx, cancelPolls := context.WithCancel(ctx)
	for range 6 {
		go func() {
			r, err := a.admitPoll(pctx)
			polls <- admitted{r, err}
		}()
	}
	first := []admitted{<-polls, <-polls}
	for _, p := range first {
		if p.err != nil {
			t.Fatal(p.err)
		}
	}
	waitPolls(t, a, 2, 4)
	if run, q := a.inFlight(); run != 2 || q != 0 {
		t.Fatalf("%d running, %d queued: the queue of streams holds polls", run, q)
	}
	var streams []func()
	for range 2 { // the slots left to streams, at once
		r, err := a.admit(ctx)
		if err != nil {
			t.Fatalf("a stream beside 6 polls: %v", err)
		}
		streams = append(streams, r)
	}
	_, err := a.admit(ctx)
	wantRefusal(t, err, "4 running") // every slot is taken now: polls 2, streams 2
	for _, r := range streams {
		r()
	}
	first[0].release()
	next := <-polls // a waiting poll takes the freed place of the share
	if next.err != nil {
		t.Fatal(next.err)
	}
	waitPolls(t, a, 2, 3)
	cancelPolls()
	for range 3 {
		if p := <-polls; status.Code(p.err) != codes.Canceled {
			t.Fatalf("a waiting poll cancelled: %v", p.err)
		}
	}
	waitPolls(t, a, 2, 0)
	queued := make(chan error, 1)
	go func() { _, err := a.admitPoll(ctx); queued <- err }()
	waitPolls(t, a, 2, 1)
	a.drain()
	wantRefusal(t, <-queued, "shutting down")
	_, err = a.admitPoll(ctx)
	wantRefusal(t, err, "shutting down")
	first[1].release()
	next.release()
	first[1].release() // a second call does nothing
	if run, _ := a.inFlight(); run != 0 {
		t.Fatalf("%d running after every release", run)
	}
	waitPolls(t, a, 0, 0)
}

// TestAdmissionPollShareBounds: the share is clamped to [1, slots], and PollShare is half the
// slots, at least one.
func TestAdmissionPollShareBounds(t *testing.T) {
	for _, c := range []struct{ slots, polls, want int }{{4, 0, 1}, {4, 9, 4}, {3, 2, 2}} {
		if got := newAdmission(c.slots, 0, c.polls, time.Second).maxPolls; got != c.want {
			t.Errorf("%d slots, share %d: %d", c.slots, c.polls, got)
		}
	}
	for _, c := range [][2]int{{1, 1}, {2, 1}, {3, 1}, {8, 4}, {9, 4}} {
		if got := PollShare(c[0]); got != c[1] {
			t.Errorf("PollShare(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	c := Config{MaxQueries: 6, MaxPollQueries: -1}
	c.withDefaults()
	if c.MaxPollQueries != 3 {
		t.Errorf("a negative MaxPollQueries of 6 slots: %d, want the default 3", c.MaxPollQueries)
	}
	c = Config{MaxQueries: 2, MaxPollQueries: 5}
	c.withDefaults()
	if c.MaxPollQueries != 2 {
		t.Errorf("MaxPollQueries 5 of 2 slots: %d", c.MaxPollQueries)
	}
}

// ownerCtx returns a context whose calls come from the client connection of port (ownerOf).
func ownerCtx(port int) context.Context {
	return peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}})
}

// admitNamed starts admit for ctx in a goroutine that sends name (or name and its error) to
// got once admitted, then holds its slot until done is closed.
func admitNamed(ctx context.Context, a *admission, name string, got chan<- string, done <-chan struct{}) {
	go func() {
		release, err := a.admit(ctx)
		if err != nil {
			got <- name + ": " + err.Error()
			return
		}
		got <- name
		<-done
		release()
	}()
}

// TestAdmissionFairOrder: a freed slot goes to the waiter whose owner runs the fewest queries,
// not to the oldest waiter; among an owner's waiters, the oldest goes first; an authenticated
// user is one owner across connections (trial 33 G1).
func TestAdmissionFairOrder(t *testing.T) {
	a := newAdmission(2, 8, 1, time.Hour)
	hog := ownerCtx(1)
	r1, err := a.admit(hog)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := a.admit(hog)
	if err != nil {
		t.Fatal(err)
	}
	got, done := make(chan string, 8), make(chan struct{})
	defer close(done)
	for i, name := range []string{"hog a", "hog b", "hog c"} {
		admitNamed(hog, a, name, got, done)
		waitQueued(t, a, i+1)
	}
	admitNamed(ownerCtx(2), a, "other", got, done)
	waitQueued(t, a, 4)
	r1()
	if g := <-got; g != "other" {
		t.Fatalf("the freed slot went to %q; want the waiter of the owner running nothing", g)
	}
	r2()
	if g := <-got; g != "hog a" {
		t.Fatalf("the next slot went to %q; want the hog's oldest waiter", g)
	}
	u1, u2 := auth.WithUser(ownerCtx(3), "ann"), auth.WithUser(ownerCtx(4), "ann")
	if ownerOf(u1) != ownerOf(u2) || ownerOf(u1) == ownerOf(ownerCtx(3)) || ownerOf(ownerCtx(3)) == ownerOf(ownerCtx(4)) {
		t.Fatalf("owners %q %q %q %q", ownerOf(u1), ownerOf(u2), ownerOf(ownerCtx(3)), ownerOf(ownerCtx(4)))
	}
}

// TestAdmissionLongestQueueDrop: a query finding the queue full takes the place of the newest
// waiter of the owner with the most waiting when that owner has at least two more than its
// own; that waiter is refused as the queue being full; otherwise the newcomer is refused.
func TestAdmissionLongestQueueDrop(t *testing.T) {
	a := newAdmission(1, 3, 1, time.Hour)
	hog := ownerCtx(1)
	release, err := a.admit(hog)
	if err != nil {
		t.Fatal(err)
	}
	got, done := make(chan string, 8), make(chan struct{})
	for i, name := range []string{"hog a", "hog b", "hog c"} {
		admitNamed(hog, a, name, got, done)
		waitQueued(t, a, i+1)
	}
	_, err = a.admit(hog)
	wantRefusal(t, err, "1 running and 3 waiting") // the hog's own: no one has two more
	admitNamed(ownerCtx(2), a, "b1", got, done)
	if g := <-got; !strings.HasPrefix(g, "hog c: ") || !strings.Contains(g, "1 running and 3 waiting") {
		t.Fatalf("got %q; want the hog's newest waiter refused", g)
	}
	waitQueued(t, a, 3) // hog a, hog b, b1
	_, err = a.admit(ownerCtx(2))
	wantRefusal(t, err, "1 running and 3 waiting") // the hog has 2, b has 1: not two more
	admitNamed(ownerCtx(3), a, "c1", got, done)
	if g := <-got; !strings.HasPrefix(g, "hog b: ") {
		t.Fatalf("got %q; want the hog's newest waiter refused", g)
	}
	waitQueued(t, a, 3) // hog a, b1, c1
	close(done)
	release()
	want := map[string]bool{"hog a": true, "b1": true, "c1": true}
	for range 3 {
		if g := <-got; !want[g] {
			t.Fatalf("got %q", g)
		}
	}
}

// TestAdmissionReclaimsStalledStreams: while a client waits and runs fewer than its share of
// the slots, the streams of a client over its share whose sends have waited the contended
// stall timeout are reclaimed — only as many as it runs over its share, each once — and the
// freed slot goes to the waiter; a client's own waiters, or streams that are sending no
// longer than the timeout, reclaim nothing.
func TestAdmissionReclaimsStalledStreams(t *testing.T) {
	a := newAdmission(2, 8, 1, time.Hour)
	a.yield = 20 * time.Millisecond
	hog := ownerCtx(1)
	reclaimed := make(chan *grant, 4)
	var held []*grant
	for range 2 {
		var g *grant
		g, err := a.admitStream(hog, func() { reclaimed <- g })
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, g)
	}
	// The hog's own waiter and its streams reading: nothing to reclaim.
	got, done := make(chan string, 8), make(chan struct{})
	defer close(done)
	admitNamed(hog, a, "hog", got, done)
	waitQueued(t, a, 1)
	time.Sleep(10 * a.yield)
	held[0].sending(true)
	held[1].sending(true)
	time.Sleep(10 * a.yield)
	select {
	case g := <-reclaimed:
		t.Fatalf("reclaimed %p with no other client waiting", g)
	default:
	}
	// Another client waits: one of the two stalled streams (the hog's share is 1) is reclaimed.
	admitNamed(ownerCtx(2), a, "other", got, done)
	g := <-reclaimed
	if g != held[0] && g != held[1] {
		t.Fatal("reclaimed a stream the hog does not hold")
	}
	time.Sleep(10 * a.yield)
	select {
	case g2 := <-reclaimed:
		t.Fatalf("reclaimed %p too: the hog is at its share once the first is gone", g2)
	default:
	}
	g.release() // the closed connection ends the stream
	if name := <-got; name != "other" {
		t.Fatalf("the reclaimed slot went to %q", name)
	}
	for _, h := range held {
		h.release()
	}
	if name := <-got; name != "hog" {
		t.Fatalf("got %q", name)
	}
}

// TestAdmissionReclaimsSlowAndSybilStreams (trial 34 S1, S2): owners each within their share
// — one stream per connection, as many connections as slots — lose one stream to a waiter
// running nothing, one per starving waiter; a stream whose client trickles (its sends wait
// for it most of the time, never long at once) counts as stalled, one whose client reads
// does not.
func TestAdmissionReclaimsSlowAndSybilStreams(t *testing.T) {
	for _, trickle := range []bool{true, false} {
		a := newAdmission(2, 8, 1, time.Hour)
		a.yield = 40 * time.Millisecond
		reclaimed := make(chan *grant, 4)
		hold := func(port int) *grant {
			var g *grant
			g, err := a.admitStream(ownerCtx(port), func() { reclaimed <- g })
			if err != nil {
				t.Fatal(err)
			}
			return g
		}
		slow, other := hold(1), hold(2) // two owners, one slot each: both within their share
		stop := make(chan struct{})
		if trickle {
			// slow's sends wait 95% of the time; other reads all it is sent.
			go func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					slow.sending(true)
					time.Sleep(19 * time.Millisecond)
					slow.sending(false)
					time.Sleep(time.Millisecond)
				}
			}()
		} else {
			slow.sending(true) // both stalled: a Sybil's connections
			other.sending(true)
		}
		got, done := make(chan string, 4), make(chan struct{})
		admitNamed(ownerCtx(3), a, "starving", got, done)
		first := <-reclaimed
		if trickle && first != slow || first != slow && first != other {
			t.Fatalf("trickle %t: reclaimed the wrong stream", trickle)
		}
		time.Sleep(10 * a.yield)
		select {
		case g := <-reclaimed:
			t.Fatalf("trickle %t: a second stream (%p) reclaimed for one starving waiter", trickle, g)
		default:
		}
		first.release()
		if name := <-got; name != "starving" {
			t.Fatalf("the reclaimed slot went to %q", name)
		}
		close(stop)
		close(done)
		slow.release()
		other.release()
	}
}
