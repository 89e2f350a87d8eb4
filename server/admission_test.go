package server

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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

// TestAdmissionMetrics: running and queued queries are gauges, refusals count by reason and
// waits are timed (issue 20).
func TestAdmissionMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	a := newAdmissionMeter(1, 1, 20*time.Millisecond, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("flightsrv"))
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
