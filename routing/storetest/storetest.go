package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flightsrv/flightsrv/routing"
)

// Store is what the suite needs of an adapter: the two ports plus AbortArchive.
type Store interface {
	routing.HotStore
	routing.ArchiveStateStore
	// AbortArchive returns an archiving bucket to hot without counting an attempt.
	AbortArchive(ctx context.Context, s *routing.ArchiveSession) error
}

// Run runs the suite. open must return a new, empty, migrated store for each call (each
// subtest calls it once, and subtests run in parallel); it registers its own cleanup on t.
// The store must also implement routing.HotBatchScanner and ConnGauge (the batch-scan tests
// check that readers return their connections).
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"BucketIDs", testBucketIDs},
		{"AppendAndRead", testAppendAndRead},
		{"SubMicrosecondBoundsAndCursors", testSubMicrosecond},
		{"CountsAndMinMax", testCountsAndMinMax},
		{"EmptyBuckets", testEmptyBuckets},
		{"StrategyMismatch", testStrategyMismatch},
		{"DuplicateRecord", testDuplicateRecord},
		{"InvalidRecords", testInvalidRecords},
		{"WriteWindowThroughDurableTable", testWriteWindow},
		{"ReadOnlyAfterClaim", testReadOnlyAfterClaim},
		{"StateMachine", testStateMachine},
		{"DeferAndAbort", testDeferAndAbort},
		{"LeaseExpiry", testLeaseExpiry},
		{"LostClaimRaces", testClaimRaces},
		{"AttemptsRetryTimesAndLeases", testArchiveStatus},
		{"AppendFenceAgainstClaim", testAppendFence},
		{"IngestAllOrNothing", testIngest},
		{"DiscoverOrderAndLimit", testDiscover},
		{"OverlappingTablesIsolated", testIsolation},
		{"ConcurrentAppends", testConcurrentAppends},
		{"StatementCounts", testStatementCounts},
		{"ErrorPrivacy", testErrorPrivacy},
		{"ScanRangeRows", testScanRows},
		{"ScanRangeBounds", testScanBounds},
		{"ScanRangeRoutes", testScanRoutes},
		{"ScanRangeBatchBytes", testScanBatchBytes},
		{"ScanRangeInvalidUTF8", testScanInvalidUTF8},
		{"ScanRangeRelease", testScanRelease},
		{"ScanRangeSnapshot", testScanSnapshot},
		{"ScanRangeStats", testScanStats},
		{"ScanBucket", testScanBucket},
		{"PartitionDiscovery", testPartitions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// --- fixtures -----------------------------------------------------------------------------

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// Literal buckets (key and bounds written out, not computed).
func dayBucket(table, pk, day string) routing.BucketID {
	start := ts(day + "T00:00:00Z")
	return routing.BucketID{TableID: table, PartitionKey: []byte(pk), Strategy: routing.CalendarDayUTC,
		Key: "day:" + day, Start: start, End: start.Add(24 * time.Hour)}
}

var (
	feb2024 = func(table, pk string) routing.BucketID {
		return routing.BucketID{TableID: table, PartitionKey: []byte(pk), Strategy: routing.CalendarMonthUTC,
			Key: "month:2024-02", Start: ts("2024-02-01T00:00:00Z"), End: ts("2024-03-01T00:00:00Z")}
	}
	year2024 = func(table, pk string) routing.BucketID {
		return routing.BucketID{TableID: table, PartitionKey: []byte(pk), Strategy: routing.CalendarYearUTC,
			Key: "year:2024", Start: ts("2024-01-01T00:00:00Z"), End: ts("2025-01-01T00:00:00Z")}
	}
)

func rec(b routing.BucketID, t time.Time, sortKey, value string) routing.Record {
	return routing.Record{PartitionKey: slices.Clone(b.PartitionKey), EventTime: t, SortKey: []byte(sortKey), Value: []byte(value)}
}

var bg = context.Background()

// --- independent expectations -------------------------------------------------------------

// cmpRec orders by (event time in µs, sort key bytewise).
func cmpRec(at time.Time, ak []byte, bt time.Time, bk []byte) int {
	if a, b := at.UnixNano(), bt.UnixNano(); a != b {
		if a < b {
			return -1
		}
		return 1
	}
	return bytes.Compare(ak, bk)
}

// expect filters, orders and truncates all as a store must: inside r, strictly after the
// cursor in the read direction, at most limit.
func expect(all []routing.Record, r routing.TimeRange, after *routing.Cursor, desc bool, limit int) []routing.Record {
	var out []routing.Record
	for _, x := range all {
		if x.EventTime.Before(r.Start) || !x.EventTime.Before(r.End) {
			continue
		}
		if after != nil {
			c := cmpRec(x.EventTime, x.SortKey, after.EventTime, after.SortKey)
			if (!desc && c <= 0) || (desc && c >= 0) {
				continue
			}
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool {
		c := cmpRec(out[i].EventTime, out[i].SortKey, out[j].EventTime, out[j].SortKey)
		if desc {
			return c > 0
		}
		return c < 0
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func show(recs []routing.Record) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = fmt.Sprintf("%s/%x=%q", r.EventTime.Format(time.RFC3339Nano), r.SortKey, r.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func sameRecords(t *testing.T, what string, got, want []routing.Record) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		g, w := got[i], want[i]
		ok = g.EventTime.Equal(w.EventTime) && g.EventTime.Location() == time.UTC &&
			bytes.Equal(g.PartitionKey, w.PartitionKey) && bytes.Equal(g.SortKey, w.SortKey) && bytes.Equal(g.Value, w.Value)
	}
	if !ok {
		t.Fatalf("%s:\n got %d %s\nwant %d %s", what, len(got), show(got), len(want), show(want))
	}
}

func mustAppend(t *testing.T, s Store, b routing.BucketID, recs ...routing.Record) {
	t.Helper()
	if err := s.Append(bg, b, recs); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// Records reads b's records through a hot store's one read path (ScanRange of every column)
// and routing.ReadRecords (req's cursor and limit): the route, and the records unless b is
// archived.
func Records(ctx context.Context, s routing.HotBatchScanner, b routing.BucketID, req routing.ReadRequest) (routing.Route, []routing.Record, error) {
	if req.Limit <= 0 {
		req.Limit = 0
	}
	br := req.Batch()
	route, r, err := s.ScanRange(ctx, b, br)
	if err != nil || r == nil {
		return route, nil, err
	}
	defer r.Release()
	recs, err := routing.ReadRecords(r, b.PartitionKey, req)
	return route, recs, err
}

// Drain reads a ScanRange's reader to its end (ScanRange's results as its arguments) and
// returns the first error: ScanRange's, or the reader's.
func Drain(_ routing.Route, r routing.BatchReader, err error) error {
	if err != nil || r == nil {
		return err
	}
	defer r.Release()
	for r.Next() {
	}
	return r.Err()
}

// mustRead is Records, failing t on error.
func mustRead(t *testing.T, s Store, b routing.BucketID, req routing.ReadRequest) (routing.Route, []routing.Record) {
	t.Helper()
	route, recs, err := Records(bg, s, b, req)
	if err != nil {
		t.Fatalf("ScanRange: %v", err)
	}
	return route, recs
}

func mustRoute(t *testing.T, s Store, b routing.BucketID) routing.Route {
	t.Helper()
	r, err := s.Route(bg, b)
	if err != nil {
		t.Fatalf("Route: %v", err)
	}
	return r
}

func wantRoute(t *testing.T, what string, got routing.Route, state routing.State, key string, hotDeleted bool) {
	t.Helper()
	if got.State != state || got.ManifestKey != key || got.HotDeleted != hotDeleted {
		t.Fatalf("%s: route = %+v, want state %s key %q hot_deleted %v", what, got, state, key, hotDeleted)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}

func mustClaim(t *testing.T, s Store, b routing.BucketID, lease time.Duration) *routing.ArchiveSession {
	t.Helper()
	sess, err := s.ClaimArchive(bg, b, lease)
	if err != nil {
		t.Fatalf("ClaimArchive: %v", err)
	}
	if sess == nil {
		t.Fatalf("ClaimArchive returned no session")
	}
	return sess
}

// mustNotClaim returns a check that a claim's result is (nil, nil): a lost race.
func mustNotClaim(t *testing.T, what string) func(*routing.ArchiveSession, error) {
	return func(sess *routing.ArchiveSession, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if sess != nil {
			t.Fatalf("%s: claimed generation %d, want no session", what, sess.Generation)
		}
	}
}

var fullRange = routing.TimeRange{Start: ts("0001-01-01T00:00:00Z"), End: ts("9999-01-01T00:00:00Z")}

// --- tests --------------------------------------------------------------------------------

func testBucketIDs(t *testing.T, s Store) {
	// The literal fixtures agree with routing's bucket math; the stores persist them as given.
	for _, want := range []routing.BucketID{dayBucket("t", "p", "2024-02-29"), feb2024("t", "p"), year2024("t", "p")} {
		got := routing.BucketFor("t", []byte("p"), want.Strategy, want.Start.Add(time.Hour))
		if !got.Equal(want) {
			t.Fatalf("BucketFor = %+v, want %+v", got, want)
		}
	}
	b := dayBucket("t.ids", "p", "2024-02-29")
	mustAppend(t, s, b, rec(b, ts("2024-02-29T23:59:59.999999Z"), "k", "v"))
	work, err := s.Discover(bg, ts("2024-03-01T00:00:00Z"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(work) != 1 || !work[0].Bucket.Equal(b) || work[0].Kind != routing.WorkCutover {
		t.Fatalf("Discover = %+v, want the appended bucket %+v as cut-over work", work, b)
	}
	if loc := work[0].Bucket.Start.Location(); loc != time.UTC {
		t.Fatalf("discovered bucket start in %v, want UTC", loc)
	}
}

func testAppendAndRead(t *testing.T, s Store) {
	b := dayBucket("t.read", "chan-α", "2024-02-29")
	at := func(clock string) time.Time { return ts("2024-02-29T" + clock + "Z") }
	all := []routing.Record{
		rec(b, at("00:00:00"), "first", "bucket start"),
		rec(b, at("23:59:59.999999"), "last", "last microsecond"),
		rec(b, at("10:00:00"), "\x00", "zero byte"),
		rec(b, at("10:00:00"), "\x00\x00", "two zero bytes"),
		rec(b, at("10:00:00"), "\x01", ""),
		rec(b, at("10:00:00"), "ÿ", "high byte (0xc3 0xbf)"),
		rec(b, at("10:00:00"), "a", "a"),
		rec(b, at("10:00:00"), "B", "upper sorts before lower"),
		rec(b, at("10:00:00.000001"), "a", "one µs later"),
		rec(b, at("09:59:59.999999"), "zzz", "one µs earlier"),
		rec(b, at("12:00:00"), "noon", "noon"),
	}
	for i := 0; i < 30; i++ {
		all = append(all, rec(b, at("11:00:00").Add(time.Duration(i*37)*time.Second+time.Duration(i)*time.Microsecond),
			fmt.Sprintf("k%02d", i%7), fmt.Sprintf("v%d", i)))
	}
	shuffled := slices.Clone(all)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	mustAppend(t, s, b, shuffled[:20]...)
	mustAppend(t, s, b, shuffled[20:]...)

	whole := b.Range()
	for _, desc := range []bool{false, true} {
		dir := map[bool]string{false: "asc", true: "desc"}[desc]
		route, got := mustRead(t, s, b, routing.ReadRequest{Range: whole, Limit: 1000, Desc: desc})
		wantRoute(t, "hot bucket", route, routing.StateHot, "", false)
		sameRecords(t, dir+" whole bucket", got, expect(all, whole, nil, desc, 1000))

		_, got = mustRead(t, s, b, routing.ReadRequest{Range: whole, Limit: 5, Desc: desc})
		sameRecords(t, dir+" limit 5", got, expect(all, whole, nil, desc, 5))

		// Page through with cursors taken from the last record of each page.
		for _, limit := range []int{1, 4, 7} {
			var pages []routing.Record
			var after *routing.Cursor
			for i := 0; ; i++ {
				if i > len(all)+1 {
					t.Fatalf("%s paging with limit %d does not end", dir, limit)
				}
				_, page := mustRead(t, s, b, routing.ReadRequest{Range: whole, After: after, Limit: limit, Desc: desc})
				sameRecords(t, fmt.Sprintf("%s page %d limit %d", dir, i, limit), page, expect(all, whole, after, desc, limit))
				pages = append(pages, page...)
				if len(page) < limit {
					break
				}
				after = &routing.Cursor{EventTime: page[len(page)-1].EventTime, SortKey: page[len(page)-1].SortKey}
			}
			sameRecords(t, fmt.Sprintf("%s pages limit %d", dir, limit), pages, expect(all, whole, nil, desc, 1000))
		}

		// Ranges inside the bucket: start inclusive, end exclusive, exactly at record times.
		for _, r := range []routing.TimeRange{
			{Start: at("10:00:00"), End: at("12:00:00")},
			{Start: at("10:00:00.000001"), End: at("12:00:00.000001")},
			{Start: at("09:59:59.999999"), End: at("10:00:00")},
			{Start: at("11:00:00"), End: at("11:10:00")},
			{Start: at("13:00:00"), End: at("14:00:00")},
			{Start: at("00:00:00"), End: at("00:00:00.000001")},
			{Start: at("23:59:59.999999"), End: ts("2024-03-01T00:00:00Z")},
		} {
			_, got := mustRead(t, s, b, routing.ReadRequest{Range: r, Limit: 1000, Desc: desc})
			sameRecords(t, fmt.Sprintf("%s range %v..%v", dir, r.Start, r.End), got, expect(all, r, nil, desc, 1000))
		}

		// Cursors that are not record positions, and ties on event time.
		for _, c := range []routing.Cursor{
			{EventTime: at("10:00:00"), SortKey: []byte("\x00")},
			{EventTime: at("10:00:00"), SortKey: []byte("A")},
			{EventTime: at("10:00:00"), SortKey: []byte{}},
			{EventTime: at("10:00:00"), SortKey: []byte("\xff\xff")},
			{EventTime: at("10:30:00"), SortKey: []byte("m")},
		} {
			c := c
			_, got := mustRead(t, s, b, routing.ReadRequest{Range: whole, After: &c, Limit: 6, Desc: desc})
			sameRecords(t, fmt.Sprintf("%s after %v/%x", dir, c.EventTime, c.SortKey), got, expect(all, whole, &c, desc, 6))
		}
	}

	route, got := mustRead(t, s, b, routing.ReadRequest{Range: whole, Limit: 0})
	wantRoute(t, "limit 0", route, routing.StateHot, "", false)
	if len(got) != 0 {
		t.Fatalf("limit 0 returned %d records", len(got))
	}
	if r := mustRoute(t, s, b); r.State != routing.StateHot || r.Generation != 0 {
		t.Fatalf("Route = %+v, want hot generation 0", r)
	}
	// Returned slices are fresh: modifying them does not change what the store returns next.
	_, got = mustRead(t, s, b, routing.ReadRequest{Range: whole, Limit: 2})
	got[0].PartitionKey[0], got[0].SortKey[0] = 'X', 'X'
	if got[1].PartitionKey[0] == 'X' {
		t.Fatal("records of one read share a partition key slice")
	}
	_, again := mustRead(t, s, b, routing.ReadRequest{Range: whole, Limit: 2})
	sameRecords(t, "reread after modifying a result", again, expect(all, whole, nil, false, 2))
}

func testSubMicrosecond(t *testing.T, s Store) {
	b := dayBucket("t.precision", "p", "2023-07-14")
	t0 := ts("2023-07-14T08:00:00.000010Z")
	all := []routing.Record{
		rec(b, t0, "a", "1"), rec(b, t0, "b", "2"),
		rec(b, t0.Add(time.Microsecond), "a", "3"),
		rec(b, t0.Add(-time.Microsecond), "z", "4"),
	}
	mustAppend(t, s, b, all...)
	// Times written with nanoseconds are stored truncated to microseconds.
	extra := rec(b, ts("2023-07-14T09:00:00.000001999Z"), "ns", "5")
	mustAppend(t, s, b, extra)
	extra.EventTime = ts("2023-07-14T09:00:00.000001Z")
	all = append(all, extra)
	for _, r := range []routing.TimeRange{
		{Start: t0.Add(time.Nanosecond), End: t0.Add(2 * time.Microsecond)},                     // excludes t0
		{Start: t0.Add(-time.Nanosecond), End: t0.Add(time.Nanosecond)},                         // only t0
		{Start: t0.Add(-time.Microsecond - 999*time.Nanosecond), End: t0.Add(time.Microsecond)}, // includes t0-1µs
		{Start: t0, End: t0.Add(time.Microsecond + time.Nanosecond)},                            // includes t0+1µs
		{Start: t0.Add(time.Nanosecond), End: t0.Add(999 * time.Nanosecond)},                    // nothing
	} {
		for _, desc := range []bool{false, true} {
			_, got := mustRead(t, s, b, routing.ReadRequest{Range: r, Limit: 100, Desc: desc})
			sameRecords(t, fmt.Sprintf("range %v..%v desc=%v", r.Start, r.End, desc), got, expect(all, r, nil, desc, 100))
			_, n := mustCount(t, s, b, r)
			if want := len(expect(all, r, nil, desc, 100)); n != uint64(want) {
				t.Fatalf("count %v..%v = %d, want %d", r.Start, r.End, n, want)
			}
		}
	}
	whole := b.Range()
	for _, c := range []routing.Cursor{
		{EventTime: t0.Add(500 * time.Nanosecond), SortKey: []byte("a")},
		{EventTime: t0.Add(-500 * time.Nanosecond), SortKey: []byte("zz")},
		{EventTime: t0.Add(999 * time.Nanosecond), SortKey: nil},
	} {
		c := c
		for _, desc := range []bool{false, true} {
			_, got := mustRead(t, s, b, routing.ReadRequest{Range: whole, After: &c, Limit: 100, Desc: desc})
			sameRecords(t, fmt.Sprintf("after %v desc=%v", c.EventTime, desc), got, expect(all, whole, &c, desc, 100))
		}
	}
}

func testCountsAndMinMax(t *testing.T, s Store) {
	b := feb2024("t.count", "p")
	rng := rand.New(rand.NewPCG(7, 11))
	span := b.End.Sub(b.Start)
	seen := map[string]bool{}
	var all []routing.Record
	for len(all) < 300 {
		t0 := b.Start.Add(time.Duration(rng.Int64N(int64(span/time.Microsecond))) * time.Microsecond)
		if rng.IntN(4) == 0 && len(all) > 0 { // share event times
			t0 = all[rng.IntN(len(all))].EventTime
		}
		sk := string([]byte{byte(rng.IntN(4)), byte(rng.IntN(256))})
		id := t0.String() + sk
		if seen[id] {
			continue
		}
		seen[id] = true
		all = append(all, rec(b, t0, sk, "value-that-count-must-not-need"))
	}
	for i := 0; i < len(all); i += 97 {
		mustAppend(t, s, b, all[i:min(i+97, len(all))]...)
	}
	ranges := []routing.TimeRange{
		b.Range(),
		fullRange,
		{Start: b.Start.Add(-time.Hour), End: b.Start},
		{Start: b.End, End: b.End.Add(time.Hour)},
		{Start: b.Start.Add(time.Hour), End: b.Start.Add(time.Hour)}, // empty
		{Start: b.End, End: b.Start},                                 // reversed
	}
	for i := 0; i < 60; i++ {
		a := b.Start.Add(-24*time.Hour + time.Duration(rng.Int64N(int64(span+48*time.Hour))))
		e := a.Add(time.Duration(rng.Int64N(int64(10 * 24 * time.Hour))))
		if i%10 == 0 { // exactly at a record's time
			a = all[rng.IntN(len(all))].EventTime
		}
		ranges = append(ranges, routing.TimeRange{Start: a, End: e})
	}
	for _, r := range ranges {
		want := expect(all, r, nil, false, len(all))
		route, n := mustCount(t, s, b, r)
		wantRoute(t, "count route", route, routing.StateHot, "", false)
		if n != uint64(len(want)) {
			t.Fatalf("count %v..%v = %d, want %d", r.Start, r.End, n, len(want))
		}
		route, found, lo, hi := mustMinMax(t, s, b, r)
		wantRoute(t, "min/max route", route, routing.StateHot, "", false)
		var wlo, whi time.Time
		if len(want) > 0 {
			wlo, whi = want[0].EventTime, want[len(want)-1].EventTime
		}
		if found != (len(want) > 0) || !lo.Equal(wlo) || !hi.Equal(whi) {
			t.Fatalf("min/max %v..%v = %v %v %v, want found=%v (%d records) %v %v", r.Start, r.End, found, lo, hi, len(want) > 0, len(want), wlo, whi)
		}
		if found && (lo.Location() != time.UTC || hi.Location() != time.UTC) {
			t.Fatalf("min/max times not in UTC: %v %v", lo.Location(), hi.Location())
		}
	}
}

func testEmptyBuckets(t *testing.T, s Store) {
	never := dayBucket("t.empty", "p", "2022-01-01")
	route, got := mustRead(t, s, never, routing.ReadRequest{Range: never.Range(), Limit: 10})
	wantRoute(t, "never appended", route, routing.StateHot, "", false)
	if len(got) != 0 {
		t.Fatalf("never-appended bucket returned %d records", len(got))
	}
	route, got = mustRead(t, s, never, routing.ReadRequest{Range: never.Range(), Limit: 10, Desc: true,
		After: &routing.Cursor{EventTime: never.End, SortKey: []byte("x")}})
	wantRoute(t, "never appended, desc with cursor", route, routing.StateHot, "", false)
	if len(got) != 0 {
		t.Fatalf("never-appended bucket returned %d records", len(got))
	}
	if route, n := mustCount(t, s, never, never.Range()); n != 0 || route.State != routing.StateHot {
		t.Fatalf("count of never-appended bucket = %d %+v", n, route)
	}
	route, found, lo, hi := mustMinMax(t, s, never, never.Range())
	if found || !lo.IsZero() || !hi.IsZero() || route.State != routing.StateHot {
		t.Fatalf("min/max of never-appended bucket = %+v %v %v %v", route, found, lo, hi)
	}
	if r := mustRoute(t, s, never); r != (routing.Route{State: routing.StateHot}) {
		t.Fatalf("Route of never-appended bucket = %+v", r)
	}
	mustNotClaim(t, "claim never-appended bucket")(s.ClaimArchive(bg, never, time.Minute))
	if work, err := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); err != nil || len(work) != 0 {
		t.Fatalf("Discover on an empty store = %+v, %v", work, err)
	}
	if err := s.Append(bg, never, nil); err != nil {
		t.Fatalf("Append of no records: %v", err)
	}
	if work, _ := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); len(work) != 0 {
		t.Fatalf("Append of no records created a metadata row: %+v", work)
	}

	// A bucket with rows, read over sub-ranges holding none.
	b := dayBucket("t.empty", "p", "2022-01-02")
	mustAppend(t, s, b, rec(b, ts("2022-01-02T12:00:00Z"), "k", "v"))
	for _, r := range []routing.TimeRange{
		{Start: b.Start, End: ts("2022-01-02T12:00:00Z")},
		{Start: ts("2022-01-02T12:00:00.000001Z"), End: b.End},
	} {
		route, got := mustRead(t, s, b, routing.ReadRequest{Range: r, Limit: 10})
		if route.State != routing.StateHot || len(got) != 0 {
			t.Fatalf("empty sub-range %v..%v: %+v %s", r.Start, r.End, route, show(got))
		}
		if _, n := mustCount(t, s, b, r); n != 0 {
			t.Fatalf("empty sub-range count = %d", n)
		}
	}
}

func testStrategyMismatch(t *testing.T, s Store) {
	day := dayBucket("t.strategy", "p", "2024-02-10")
	mustAppend(t, s, day, rec(day, ts("2024-02-10T01:00:00Z"), "k", "v"))
	month := feb2024("t.strategy", "p")
	err := s.Append(bg, month, []routing.Record{rec(month, ts("2024-02-11T01:00:00Z"), "k", "v")})
	wantErr(t, "append with another strategy", err, routing.ErrStrategyMismatch)
	// Another partition of the same table is refused too: the strategy is per table id.
	other := feb2024("t.strategy", "other-partition")
	err = s.Append(bg, other, []routing.Record{rec(other, ts("2024-02-11T01:00:00Z"), "k", "v")})
	wantErr(t, "append with another strategy, other partition", err, routing.ErrStrategyMismatch)
	if _, n := mustCount(t, s, month, month.Range()); n != 0 {
		t.Fatalf("mismatched append wrote %d records", n)
	}
	if work, _ := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); len(work) != 1 || !work[0].Bucket.Equal(day) {
		t.Fatalf("mismatched append left metadata: %+v", work)
	}
	// The persisted strategies are visible to start-up checks, one pair per table id and
	// strategy, ordered by table id.
	c, ok := s.(routing.TableCatalog)
	if !ok {
		t.Fatal("store does not implement routing.TableCatalog")
	}
	stored := func() string {
		t.Helper()
		got, err := c.StoredTables(bg)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, st := range got {
			if strings.HasPrefix(st.TableID, "t.strategy") {
				parts = append(parts, st.TableID+"="+st.Strategy.String())
			}
		}
		return strings.Join(parts, " ")
	}
	if got, want := stored(), "t.strategy=calendar_day_utc"; got != want {
		t.Fatalf("StoredTables = %q, want %q", got, want)
	}
	// Other tables choose their own strategy; the day table keeps accepting day buckets.
	otherTable := feb2024("t.strategy-month", "p")
	mustAppend(t, s, otherTable, rec(otherTable, ts("2024-02-11T01:00:00Z"), "k", "v"))
	day2 := dayBucket("t.strategy", "p", "2024-02-11")
	mustAppend(t, s, day2, rec(day2, ts("2024-02-11T01:00:00Z"), "k", "v"))
	if got, want := stored(), "t.strategy=calendar_day_utc t.strategy-month=calendar_month_utc"; got != want {
		t.Fatalf("StoredTables = %q, want %q", got, want)
	}
}

func testDuplicateRecord(t *testing.T, s Store) {
	b := dayBucket("t.dup", "p", "2024-05-05")
	t0 := ts("2024-05-05T05:05:05.000005Z")
	mustAppend(t, s, b, rec(b, t0, "k", "first"))
	err := s.Append(bg, b, []routing.Record{rec(b, t0.Add(time.Second), "new", "x"), rec(b, t0, "k", "second")})
	wantErr(t, "duplicate of a stored record", err, routing.ErrDuplicateRecord)
	err = s.Append(bg, b, []routing.Record{rec(b, t0.Add(2*time.Second), "twin", "a"), rec(b, t0.Add(2*time.Second), "twin", "b")})
	wantErr(t, "duplicate inside one append", err, routing.ErrDuplicateRecord)
	// Nanoseconds are truncated, so these collide with the stored microsecond.
	err = s.Append(bg, b, []routing.Record{rec(b, t0.Add(999*time.Nanosecond), "k", "third")})
	wantErr(t, "duplicate after truncation to microseconds", err, routing.ErrDuplicateRecord)
	_, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 10})
	sameRecords(t, "after failed appends", got, []routing.Record{rec(b, t0, "k", "first")})
	// Same time with another sort key, and the same sort key at another time, are distinct.
	mustAppend(t, s, b, rec(b, t0, "k2", "x"), rec(b, t0.Add(time.Microsecond), "k", "y"))
	if _, n := mustCount(t, s, b, b.Range()); n != 3 {
		t.Fatalf("count = %d, want 3", n)
	}
}

func testInvalidRecords(t *testing.T, s Store) {
	b := dayBucket("t.invalid", "p", "2024-05-05")
	for name, r := range map[string]routing.Record{
		"other partition": rec(dayBucket("t.invalid", "q", "2024-05-05"), ts("2024-05-05T01:00:00Z"), "k", "v"),
		"before bucket":   rec(b, ts("2024-05-04T23:59:59.999999Z"), "k", "v"),
		"at bucket end":   rec(b, ts("2024-05-06T00:00:00Z"), "k", "v"),
		"empty sort key":  rec(b, ts("2024-05-05T01:00:00Z"), "", "v"),
	} {
		err := s.Append(bg, b, []routing.Record{rec(b, ts("2024-05-05T02:00:00Z"), "ok", "v"), r})
		wantErr(t, name, err, routing.ErrInvalidRecord)
	}
	bad := b
	bad.Key = "day:2024-05-06"
	wantErr(t, "bucket key not matching bounds", s.Append(bg, bad, []routing.Record{rec(b, ts("2024-05-05T02:00:00Z"), "ok", "v")}), routing.ErrInvalidRecord)
	bad = b
	bad.End = b.End.Add(time.Hour)
	wantErr(t, "bucket bounds not matching strategy", s.Append(bg, bad, []routing.Record{rec(b, ts("2024-05-05T02:00:00Z"), "ok", "v")}), routing.ErrInvalidRecord)
	if _, n := mustCount(t, s, b, b.Range()); n != 0 {
		t.Fatalf("invalid appends wrote %d records", n)
	}
	if work, _ := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); len(work) != 0 {
		t.Fatalf("invalid appends left metadata: %+v", work)
	}
}

func testWriteWindow(t *testing.T, s Store) {
	def := routing.TableDef{Name: "chat", TableID: "t.window", PartitionColumn: "channel_id",
		Strategy: routing.CalendarDayUTC, WritableBuckets: 2}
	now := ts("2024-03-01T12:00:00Z")
	table, err := routing.NewDurableTable(def, s, nil, routing.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	pk := []byte("general")
	r := func(t string, id string) routing.Record {
		return routing.Record{PartitionKey: pk, EventTime: ts(t), SortKey: []byte(id), Value: []byte(id)}
	}
	for name, bad := range map[string]routing.Record{
		"day before the window": r("2024-02-28T23:59:59.999999Z", "old"),
		"future day":            r("2024-03-02T00:00:00Z", "future"),
		"far future":            r("2025-03-01T00:00:00Z", "far"),
	} {
		n, err := table.Append(bg, []routing.Record{r("2024-03-01T00:00:00Z", "fine"), bad})
		wantErr(t, name, err, routing.ErrOutsideWriteWindow)
		if n != 0 {
			t.Fatalf("%s: %d records written", name, n)
		}
	}
	leap := dayBucket("t.window", "general", "2024-02-29")
	if _, c := mustCount(t, s, leap, leap.Range()); c != 0 {
		t.Fatalf("rejected appends wrote %d records", c)
	}
	in := []routing.Record{
		r("2024-02-29T00:00:00Z", "leap-start"),
		r("2024-02-29T23:59:59.9999999Z", "leap-end"), // truncated to .999999
		r("2024-03-01T00:00:00Z", "today-start"),
		r("2024-03-01T12:00:00Z", "now"),
		r("2024-03-01T23:59:59.999999Z", "today-end"),
	}
	if n, err := table.Append(bg, in); err != nil || n != len(in) {
		t.Fatalf("Append in window = %d, %v", n, err)
	}
	q := routing.TimeRange{Start: ts("2024-02-29T00:00:00Z"), End: ts("2024-03-02T00:00:00Z")}
	var got []routing.Record
	var after *routing.Cursor
	for i := 0; i < 10; i++ {
		page, err := table.QueryPage(bg, routing.Query{PartitionKey: pk, Range: q, After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Records...)
		if page.Next == nil {
			break
		}
		after = page.Next
	}
	want := []routing.Record{
		r("2024-02-29T00:00:00Z", "leap-start"), r("2024-02-29T23:59:59.999999Z", "leap-end"),
		r("2024-03-01T00:00:00Z", "today-start"), r("2024-03-01T12:00:00Z", "now"), r("2024-03-01T23:59:59.999999Z", "today-end"),
	}
	sameRecords(t, "paged query across two day buckets", got, want)
	if n, hot := tableCount(t, table, pk, q); n != 5 || hot != 2 {
		t.Fatalf("count = %d from %d hot buckets; want 5 records in 2 hot buckets", n, hot)
	}
}

func testReadOnlyAfterClaim(t *testing.T, s Store) {
	b := year2024("t.readonly", "p")
	mustAppend(t, s, b, rec(b, ts("2024-06-01T00:00:00Z"), "a", "1"))
	sess := mustClaim(t, s, b, time.Minute)
	err := s.Append(bg, b, []routing.Record{rec(b, ts("2024-06-02T00:00:00Z"), "b", "2")})
	wantErr(t, "append while archiving", err, routing.ErrBucketReadOnly)
	route, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 10})
	wantRoute(t, "archiving read", route, routing.StateArchiving, "", false)
	sameRecords(t, "archiving bucket still reads hot rows", got, []routing.Record{rec(b, ts("2024-06-01T00:00:00Z"), "a", "1")})
	if route, n := mustCount(t, s, b, b.Range()); route.State != routing.StateArchiving || n != 1 {
		t.Fatalf("archiving count = %+v %d", route, n)
	}
	if err := s.DeferArchive(bg, sess, -time.Second); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, b, rec(b, ts("2024-06-02T00:00:00Z"), "b", "2"))
	sess = mustClaim(t, s, b, time.Minute)
	if sess.Generation != 2 {
		t.Fatalf("second claim generation = %d, want 2", sess.Generation)
	}
	if err := s.PublishArchive(bg, sess, "m/1"); err != nil {
		t.Fatal(err)
	}
	err = s.Append(bg, b, []routing.Record{rec(b, ts("2024-06-03T00:00:00Z"), "c", "3")})
	wantErr(t, "append after publish", err, routing.ErrBucketReadOnly)
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func testStateMachine(t *testing.T, s Store) {
	b := dayBucket("t.machine", "p", "2023-05-01")
	var all []routing.Record
	for i := 5; i > 0; i-- {
		all = append(all, rec(b, ts("2023-05-01T10:00:00Z").Add(time.Duration(i)*time.Minute), fmt.Sprint(i), fmt.Sprint("v", i)))
	}
	mustAppend(t, s, b, all...)
	neighbour := dayBucket("t.machine", "p", "2023-05-02")
	mustAppend(t, s, neighbour, rec(neighbour, ts("2023-05-02T00:00:00Z"), "n", "n"))

	s1 := mustClaim(t, s, b, time.Minute)
	if s1.Generation != 1 || !uuidV4.MatchString(s1.Token) || !s1.Bucket.Equal(b) {
		t.Fatalf("session = generation %d, token %q", s1.Generation, s1.Token)
	}
	mustNotClaim(t, "claim during a live lease")(s.ClaimArchive(bg, b, time.Minute))
	mustNotClaim(t, "cleanup claim of an archiving bucket")(s.ClaimCleanup(bg, b, time.Minute))
	if err := s.Renew(bg, s1, 2*time.Minute); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	snap, err := s.Snapshot(bg, s1)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "snapshot", snap, expect(all, b.Range(), nil, false, 100))

	wrongToken := *s1
	wrongToken.Token = "00000000-0000-4000-8000-000000000000"
	wrongGen := *s1
	wrongGen.Generation = 2
	otherBucket := *s1
	otherBucket.Bucket = neighbour
	for name, bad := range map[string]*routing.ArchiveSession{"wrong token": &wrongToken, "wrong generation": &wrongGen, "other bucket": &otherBucket} {
		_, err := s.Snapshot(bg, bad)
		wantErr(t, "snapshot with "+name, err, routing.ErrStaleArchiveSession)
		wantErr(t, "renew with "+name, s.Renew(bg, bad, time.Minute), routing.ErrStaleArchiveSession)
		wantErr(t, "publish with "+name, s.PublishArchive(bg, bad, "m/x"), routing.ErrStaleArchiveSession)
		wantErr(t, "defer with "+name, s.DeferArchive(bg, bad, time.Minute), routing.ErrStaleArchiveSession)
		wantErr(t, "abort with "+name, s.AbortArchive(bg, bad), routing.ErrStaleArchiveSession)
	}
	wantErr(t, "delete hot rows before publish", s.DeleteHotBucket(bg, s1), routing.ErrStaleArchiveSession)
	wantErr(t, "defer cleanup before publish", s.DeferCleanup(bg, s1, time.Minute), routing.ErrStaleArchiveSession)

	const manifest = "archives/74/70/day/generation-1/manifest-abc.json"
	if err := s.PublishArchive(bg, s1, manifest); err != nil {
		t.Fatalf("PublishArchive: %v", err)
	}
	r := mustRoute(t, s, b)
	wantRoute(t, "after publish", r, routing.StateArchived, manifest, false)
	if r.Generation != 1 {
		t.Fatalf("generation after publish = %d", r.Generation)
	}
	for _, desc := range []bool{false, true} {
		route, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 100, Desc: desc})
		wantRoute(t, "read after publish", route, routing.StateArchived, manifest, false)
		if len(got) != 0 {
			t.Fatalf("archived bucket returned %d hot rows", len(got))
		}
	}
	if route, n := mustCount(t, s, b, b.Range()); route.State != routing.StateArchived || route.ManifestKey != manifest || n != 0 {
		t.Fatalf("count after publish = %+v %d", route, n)
	}
	if route, found, lo, hi := mustMinMax(t, s, b, b.Range()); route.State != routing.StateArchived || found || !lo.IsZero() || !hi.IsZero() {
		t.Fatalf("min/max after publish = %+v %v %v %v", route, found, lo, hi)
	}
	wantErr(t, "publish twice", s.PublishArchive(bg, s1, manifest), routing.ErrStaleArchiveSession)
	_, err = s.Snapshot(bg, s1)
	wantErr(t, "snapshot after publish", err, routing.ErrStaleArchiveSession)
	wantErr(t, "defer archive after publish", s.DeferArchive(bg, s1, time.Minute), routing.ErrStaleArchiveSession)
	wantErr(t, "abort after publish", s.AbortArchive(bg, s1), routing.ErrStaleArchiveSession)
	mustNotClaim(t, "claim archived bucket")(s.ClaimArchive(bg, b, time.Minute))
	mustNotClaim(t, "cleanup claim during the publisher's lease")(s.ClaimCleanup(bg, b, time.Minute))
	if err := s.Renew(bg, s1, time.Minute); err != nil {
		t.Fatalf("renew of a published session with hot rows: %v", err)
	}
	wantErr(t, "delete with wrong token", s.DeleteHotBucket(bg, &wrongToken), routing.ErrStaleArchiveSession)
	if err := s.DeleteHotBucket(bg, s1); err != nil {
		t.Fatalf("DeleteHotBucket: %v", err)
	}
	wantRoute(t, "after hot deletion", mustRoute(t, s, b), routing.StateArchived, manifest, true)
	route, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 100})
	wantRoute(t, "read after hot deletion", route, routing.StateArchived, manifest, true)
	if len(got) != 0 {
		t.Fatalf("read after hot deletion returned %d rows", len(got))
	}
	wantErr(t, "delete twice", s.DeleteHotBucket(bg, s1), routing.ErrStaleArchiveSession)
	wantErr(t, "renew after hot deletion", s.Renew(bg, s1, time.Minute), routing.ErrStaleArchiveSession)
	wantErr(t, "defer cleanup after hot deletion", s.DeferCleanup(bg, s1, time.Minute), routing.ErrStaleArchiveSession)
	mustNotClaim(t, "claim after hot deletion")(s.ClaimArchive(bg, b, -time.Second))
	mustNotClaim(t, "cleanup claim after hot deletion")(s.ClaimCleanup(bg, b, -time.Second))
	wantErr(t, "append after hot deletion", s.Append(bg, b, []routing.Record{rec(b, ts("2023-05-01T23:00:00Z"), "late", "x")}), routing.ErrBucketReadOnly)
	work, err := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10)
	if err != nil || len(work) != 1 || !work[0].Bucket.Equal(neighbour) {
		t.Fatalf("Discover after completion = %+v, %v; want only the neighbour", work, err)
	}
	// The neighbouring bucket of the same partition is untouched.
	route, got = mustRead(t, s, neighbour, routing.ReadRequest{Range: neighbour.Range(), Limit: 10})
	wantRoute(t, "neighbour", route, routing.StateHot, "", false)
	sameRecords(t, "neighbour rows", got, []routing.Record{rec(neighbour, ts("2023-05-02T00:00:00Z"), "n", "n")})
}

func testDeferAndAbort(t *testing.T, s Store) {
	far := ts("9999-01-01T00:00:00Z")
	// DeferArchive with a future retry time: hot again, appendable, not claimable, not discovered.
	a := dayBucket("t.defer", "p", "2023-01-01")
	mustAppend(t, s, a, rec(a, ts("2023-01-01T01:00:00Z"), "a", "1"))
	sa := mustClaim(t, s, a, time.Minute)
	if err := s.DeferArchive(bg, sa, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "deferred archive", mustRoute(t, s, a), routing.StateHot, "", false)
	mustAppend(t, s, a, rec(a, ts("2023-01-01T02:00:00Z"), "b", "2"))
	mustNotClaim(t, "claim before the retry time")(s.ClaimArchive(bg, a, time.Minute))
	if work, _ := s.Discover(bg, far, 10); len(work) != 0 {
		t.Fatalf("Discover lists a deferred bucket: %+v", work)
	}
	wantErr(t, "deferred session is stale", s.Renew(bg, sa, time.Minute), routing.ErrStaleArchiveSession)

	// DeferArchive with a due retry time: claimable again with the next generation.
	b := dayBucket("t.defer", "p", "2023-01-02")
	mustAppend(t, s, b, rec(b, ts("2023-01-02T01:00:00Z"), "a", "1"))
	sb := mustClaim(t, s, b, time.Minute)
	if err := s.DeferArchive(bg, sb, -time.Second); err != nil {
		t.Fatal(err)
	}
	if work, _ := s.Discover(bg, far, 10); len(work) != 1 || !work[0].Bucket.Equal(b) || work[0].Kind != routing.WorkCutover {
		t.Fatalf("Discover after a due deferral = %+v", work)
	}
	sb2 := mustClaim(t, s, b, time.Minute)
	if sb2.Generation != sb.Generation+1 || sb2.Token == sb.Token {
		t.Fatalf("reclaim = generation %d (token reused %v), want %d", sb2.Generation, sb2.Token == sb.Token, sb.Generation+1)
	}

	// DeferCleanup: stays archived with hot rows; cleanup claim waits for the retry time.
	c := dayBucket("t.defer", "p", "2023-01-03")
	mustAppend(t, s, c, rec(c, ts("2023-01-03T01:00:00Z"), "a", "1"))
	sc := mustClaim(t, s, c, time.Minute)
	if err := s.PublishArchive(bg, sc, "m/c"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeferCleanup(bg, sc, time.Hour); err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "deferred cleanup", mustRoute(t, s, c), routing.StateArchived, "m/c", false)
	mustNotClaim(t, "cleanup claim before the retry time")(s.ClaimCleanup(bg, c, time.Minute))
	if work, _ := s.Discover(bg, far, 10); len(work) != 0 {
		t.Fatalf("Discover lists a deferred cleanup: %+v", work)
	}
	d := dayBucket("t.defer", "p", "2023-01-04")
	mustAppend(t, s, d, rec(d, ts("2023-01-04T01:00:00Z"), "a", "1"))
	sd := mustClaim(t, s, d, time.Minute)
	if err := s.PublishArchive(bg, sd, "m/d"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeferCleanup(bg, sd, -time.Second); err != nil {
		t.Fatal(err)
	}
	if work, _ := s.Discover(bg, far, 10); len(work) != 1 || !work[0].Bucket.Equal(d) || work[0].Kind != routing.WorkCleanup {
		t.Fatalf("Discover after a due cleanup deferral = %+v", work)
	}
	sd2, err := s.ClaimCleanup(bg, d, time.Minute)
	if err != nil || sd2 == nil || sd2.Generation != sd.Generation+1 {
		t.Fatalf("ClaimCleanup after a due deferral = %+v, %v", sd2, err)
	}
	mustNotClaim(t, "second cleanup claim")(s.ClaimCleanup(bg, d, time.Minute))
	wantErr(t, "old session after cleanup claim", s.DeleteHotBucket(bg, sd), routing.ErrStaleArchiveSession)
	if err := s.Renew(bg, sd2, time.Minute); err != nil {
		t.Fatalf("Renew of the cleanup session: %v", err)
	}
	if err := s.DeleteHotBucket(bg, sd2); err != nil {
		t.Fatalf("DeleteHotBucket with the cleanup session: %v", err)
	}
	wantRoute(t, "after cleanup", mustRoute(t, s, d), routing.StateArchived, "m/d", true)

	// AbortArchive: back to hot, immediately claimable (no retry time).
	e := dayBucket("t.defer", "p", "2023-01-05")
	mustAppend(t, s, e, rec(e, ts("2023-01-05T01:00:00Z"), "a", "1"))
	se := mustClaim(t, s, e, time.Minute)
	if err := s.AbortArchive(bg, se); err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "aborted", mustRoute(t, s, e), routing.StateHot, "", false)
	wantErr(t, "abort twice", s.AbortArchive(bg, se), routing.ErrStaleArchiveSession)
	mustAppend(t, s, e, rec(e, ts("2023-01-05T02:00:00Z"), "b", "2"))
	se2 := mustClaim(t, s, e, time.Minute)
	if se2.Generation != se.Generation+1 {
		t.Fatalf("claim after abort generation = %d", se2.Generation)
	}
	snap, err := s.Snapshot(bg, se2)
	if err != nil || len(snap) != 2 {
		t.Fatalf("snapshot after abort = %s, %v", show(snap), err)
	}
}

func testLeaseExpiry(t *testing.T, s Store) {
	b := dayBucket("t.lease", "p", "2023-03-03")
	mustAppend(t, s, b, rec(b, ts("2023-03-03T03:03:03Z"), "a", "1"))
	expired := mustClaim(t, s, b, -time.Second)
	_, err := s.Snapshot(bg, expired)
	wantErr(t, "snapshot with an expired lease", err, routing.ErrStaleArchiveSession)
	wantErr(t, "renew with an expired lease", s.Renew(bg, expired, time.Minute), routing.ErrStaleArchiveSession)
	wantErr(t, "publish with an expired lease", s.PublishArchive(bg, expired, "m/old"), routing.ErrStaleArchiveSession)
	if work, _ := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); len(work) != 1 || work[0].Kind != routing.WorkCutover {
		t.Fatalf("an expired archiving bucket is not discovered for cut-over: %+v", work)
	}
	wantRoute(t, "expired archiving", mustRoute(t, s, b), routing.StateArchiving, "", false)
	wantErr(t, "append to an expired archiving bucket", s.Append(bg, b, []routing.Record{rec(b, ts("2023-03-03T04:00:00Z"), "b", "2")}), routing.ErrBucketReadOnly)
	taken := mustClaim(t, s, b, time.Minute)
	if taken.Generation != expired.Generation+1 {
		t.Fatalf("takeover generation = %d, want %d", taken.Generation, expired.Generation+1)
	}
	if err := s.PublishArchive(bg, taken, "m/new"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "stale worker's publish after takeover", s.PublishArchive(bg, expired, "m/old"), routing.ErrStaleArchiveSession)
	wantErr(t, "stale worker's delete after takeover", s.DeleteHotBucket(bg, expired), routing.ErrStaleArchiveSession)
	wantRoute(t, "published by the new owner", mustRoute(t, s, b), routing.StateArchived, "m/new", false)
	// The publisher's lease blocks cleanup claims until it expires. Renewing into the past
	// leaves the session expired: it can no longer act, and cleanup can be taken over.
	mustNotClaim(t, "cleanup claim during the publisher's lease")(s.ClaimCleanup(bg, b, time.Minute))
	if err := s.Renew(bg, taken, -time.Second); err != nil {
		t.Fatalf("Renew: %v", err)
	}
	wantErr(t, "delete with a lease renewed into the past", s.DeleteHotBucket(bg, taken), routing.ErrStaleArchiveSession)
	if work, _ := s.Discover(bg, ts("9999-01-01T00:00:00Z"), 10); len(work) != 1 || work[0].Kind != routing.WorkCleanup {
		t.Fatalf("published bucket with an expired lease is not discovered for cleanup: %+v", work)
	}
	cleaner, err := s.ClaimCleanup(bg, b, time.Minute)
	if err != nil || cleaner == nil {
		t.Fatalf("ClaimCleanup after the publisher's lease expired = %v, %v", cleaner, err)
	}
	if cleaner.Generation != taken.Generation+1 {
		t.Fatalf("cleanup generation = %d, want %d", cleaner.Generation, taken.Generation+1)
	}
	if err := s.DeleteHotBucket(bg, cleaner); err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "cleaned up", mustRoute(t, s, b), routing.StateArchived, "m/new", true)
}

func testClaimRaces(t *testing.T, s Store) {
	const workers = 8
	race := func(claim func() (*routing.ArchiveSession, error)) *routing.ArchiveSession {
		t.Helper()
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			wins   []*routing.ArchiveSession
			errs   []error
			starts = make(chan struct{})
		)
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-starts
				sess, err := claim()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				} else if sess != nil {
					wins = append(wins, sess)
				}
			}()
		}
		close(starts)
		wg.Wait()
		if len(errs) > 0 || len(wins) != 1 {
			t.Fatalf("%d concurrent claims: %d won, errors %v; want exactly one winner", workers, len(wins), errs)
		}
		return wins[0]
	}
	b := dayBucket("t.race", "p", "2023-02-02")
	mustAppend(t, s, b, rec(b, ts("2023-02-02T02:02:02Z"), "a", "1"))
	winner := race(func() (*routing.ArchiveSession, error) { return s.ClaimArchive(bg, b, time.Minute) })
	if winner.Generation != 1 {
		t.Fatalf("winner generation = %d", winner.Generation)
	}
	if err := s.PublishArchive(bg, winner, "m/race"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeferCleanup(bg, winner, -time.Second); err != nil {
		t.Fatal(err)
	}
	cleaner := race(func() (*routing.ArchiveSession, error) { return s.ClaimCleanup(bg, b, time.Minute) })
	if cleaner.Generation != 2 {
		t.Fatalf("cleanup winner generation = %d", cleaner.Generation)
	}
	wantErr(t, "loser of the cleanup race", s.DeleteHotBucket(bg, winner), routing.ErrStaleArchiveSession)
	if err := s.DeleteHotBucket(bg, cleaner); err != nil {
		t.Fatal(err)
	}
}

func testDiscover(t *testing.T, s Store) {
	add := func(b routing.BucketID) routing.BucketID {
		mustAppend(t, s, b, rec(b, b.Start.Add(time.Hour), "k", "v"))
		return b
	}
	publishAndExpire := func(b routing.BucketID) {
		sess := mustClaim(t, s, b, time.Minute)
		if err := s.PublishArchive(bg, sess, "m/"+b.Key); err != nil {
			t.Fatal(err)
		}
		if err := s.DeferCleanup(bg, sess, -time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// Same bucket_end: ordered by table_id, then partition_key (bytewise), whatever the
	// insertion order.
	b0 := add(dayBucket("t.disc-b", "p0", "2023-01-01"))
	a2 := add(dayBucket("t.disc-a", "p2", "2023-01-01"))
	a1 := add(dayBucket("t.disc-a", "p1", "2023-01-01"))
	a3 := add(dayBucket("t.disc-a", "p1", "2023-01-03"))
	a4 := add(dayBucket("t.disc-a", "p1", "2023-01-05"))
	publishAndExpire(a4) // cleanup, ends 01-06
	a5 := add(dayBucket("t.disc-a", "p1", "2023-01-02"))
	publishAndExpire(a5) // cleanup, ends 01-03
	live := add(dayBucket("t.disc-a", "p1", "2023-01-04"))
	mustClaim(t, s, live, time.Hour) // live lease: not discovered
	expired := add(dayBucket("t.disc-a", "p1", "2023-01-06"))
	mustClaim(t, s, expired, -time.Second) // expired lease: cut-over
	deferred := add(dayBucket("t.disc-a", "p1", "2023-01-07"))
	if err := s.DeferArchive(bg, mustClaim(t, s, deferred, time.Minute), time.Hour); err != nil {
		t.Fatal(err)
	}
	late := add(dayBucket("t.disc-a", "p1", "2023-06-01")) // ends after the cut-off
	done := add(dayBucket("t.disc-a", "p1", "2023-01-08"))
	sess := mustClaim(t, s, done, time.Minute)
	if err := s.PublishArchive(bg, sess, "m/done"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHotBucket(bg, sess); err != nil {
		t.Fatal(err)
	}
	published := add(dayBucket("t.disc-a", "p1", "2023-01-09")) // published, publisher's lease live
	if err := s.PublishArchive(bg, mustClaim(t, s, published, time.Hour), "m/published"); err != nil {
		t.Fatal(err)
	}

	cutoff := ts("2023-02-01T00:00:00Z")
	want := []routing.ArchiveWork{
		{Bucket: a5, Kind: routing.WorkCleanup}, {Bucket: a4, Kind: routing.WorkCleanup},
		{Bucket: a1, Kind: routing.WorkCutover}, {Bucket: a2, Kind: routing.WorkCutover}, {Bucket: b0, Kind: routing.WorkCutover},
		{Bucket: a3, Kind: routing.WorkCutover}, {Bucket: expired, Kind: routing.WorkCutover},
	}
	check := func(cutoff time.Time, limit int, want []routing.ArchiveWork) {
		t.Helper()
		got, err := s.Discover(bg, cutoff, limit)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(got) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ok = got[i].Kind == want[i].Kind && got[i].Bucket.Equal(want[i].Bucket)
		}
		if !ok {
			show := func(ws []routing.ArchiveWork) string {
				var parts []string
				for _, w := range ws {
					parts = append(parts, fmt.Sprintf("%d:%s/%s/%s", w.Kind, w.Bucket.TableID, w.Bucket.PartitionKey, w.Bucket.Key))
				}
				return strings.Join(parts, " ")
			}
			t.Fatalf("Discover(%v, %d):\n got %s\nwant %s", cutoff, limit, show(got), show(want))
		}
	}
	check(cutoff, 100, want)
	check(cutoff, len(want), want)
	check(cutoff, 3, want[:3])
	check(cutoff, 2, want[:2])
	check(cutoff, 1, want[:1])
	check(cutoff, 0, nil)
	// The cut-off bounds bucket_end inclusively and applies to cut-over work only.
	check(ts("2023-01-02T00:00:00Z"), 100, want[:5])
	check(ts("2023-01-01T23:59:59Z"), 100, want[:2])
	check(ts("2023-06-02T00:00:00Z"), 100, append(slices.Clone(want), routing.ArchiveWork{Bucket: late, Kind: routing.WorkCutover}))
}

func testIsolation(t *testing.T, s Store) {
	messages := year2024("messages", "shared-channel")
	reactions := year2024("reactions", "shared-channel")
	otherPartition := year2024("messages", "other-channel")
	t0 := ts("2024-04-04T04:04:04Z")
	mustAppend(t, s, messages, rec(messages, t0, "same", "message"), rec(messages, t0.Add(time.Second), "m2", "message 2"))
	mustAppend(t, s, reactions, rec(reactions, t0, "same", "reaction"))
	mustAppend(t, s, otherPartition, rec(otherPartition, t0, "same", "elsewhere"))
	read := func(b routing.BucketID) []routing.Record {
		_, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 100})
		return got
	}
	sameRecords(t, "messages", read(messages), []routing.Record{rec(messages, t0, "same", "message"), rec(messages, t0.Add(time.Second), "m2", "message 2")})
	sameRecords(t, "reactions", read(reactions), []routing.Record{rec(reactions, t0, "same", "reaction")})
	sameRecords(t, "other partition", read(otherPartition), []routing.Record{rec(otherPartition, t0, "same", "elsewhere")})
	if _, n := mustCount(t, s, reactions, reactions.Range()); n != 1 {
		t.Fatalf("reactions count = %d", n)
	}

	// Archive and clean up messages; reactions and the other partition are untouched.
	sess := mustClaim(t, s, messages, time.Minute)
	snap, err := s.Snapshot(bg, sess)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, "messages snapshot", snap, []routing.Record{rec(messages, t0, "same", "message"), rec(messages, t0.Add(time.Second), "m2", "message 2")})
	if r := mustRoute(t, s, reactions); r.State != routing.StateHot {
		t.Fatalf("claiming messages changed reactions' route: %+v", r)
	}
	mustAppend(t, s, reactions, rec(reactions, t0.Add(2*time.Second), "r2", "reaction 2"))
	if err := s.PublishArchive(bg, sess, "m/messages"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHotBucket(bg, sess); err != nil {
		t.Fatal(err)
	}
	wantRoute(t, "messages", mustRoute(t, s, messages), routing.StateArchived, "m/messages", true)
	wantRoute(t, "reactions", mustRoute(t, s, reactions), routing.StateHot, "", false)
	sameRecords(t, "reactions after messages' cleanup", read(reactions),
		[]routing.Record{rec(reactions, t0, "same", "reaction"), rec(reactions, t0.Add(2*time.Second), "r2", "reaction 2")})
	sameRecords(t, "other partition after messages' cleanup", read(otherPartition), []routing.Record{rec(otherPartition, t0, "same", "elsewhere")})

	// The reference's known-failures test, through two DurableTables sharing the store: a
	// record appended through reactions never appears in a query through messages.
	now := time.Now().UTC()
	def := func(name, id string) routing.TableDef {
		return routing.TableDef{Name: name, TableID: id, PartitionColumn: "channel_id", Strategy: routing.CalendarDayUTC, WritableBuckets: 2}
	}
	clock := routing.Options{Clock: func() time.Time { return now }}
	mt, err := routing.NewDurableTable(def("messages", "t.iso-messages"), s, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := routing.NewDurableTable(def("reactions", "t.iso-reactions"), s, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	pk := []byte("shared-channel")
	if _, err := rt.Append(bg, []routing.Record{{PartitionKey: pk, EventTime: now, SortKey: []byte("r"), Value: []byte("reaction")}}); err != nil {
		t.Fatal(err)
	}
	window := routing.TimeRange{Start: now.Add(-time.Second), End: now.Add(time.Second)}
	page, err := mt.QueryPage(bg, routing.Query{PartitionKey: pk, Range: window, Limit: 10})
	if err != nil || len(page.Records) != 0 {
		t.Fatalf("messages query sees %s, %v", show(page.Records), err)
	}
	page, err = rt.QueryPage(bg, routing.Query{PartitionKey: pk, Range: window, Limit: 10})
	if err != nil || len(page.Records) != 1 || string(page.Records[0].Value) != "reaction" {
		t.Fatalf("reactions query = %s, %v", show(page.Records), err)
	}
}

func testConcurrentAppends(t *testing.T, s Store) {
	const writers, perWriter = 8, 25
	b := dayBucket("t.concurrent", "p", "2024-08-08")
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		all  []routing.Record
	)
	start := make(chan struct{})
	for w := 0; w < writers; w++ {
		var mine []routing.Record
		for i := 0; i < perWriter; i++ {
			mine = append(mine, rec(b, ts("2024-08-08T08:00:00Z").Add(time.Duration(i)*time.Second), fmt.Sprintf("w%d-%02d", w, i), "v"))
		}
		all = append(all, mine...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Two appends per writer: the first races to create the metadata row.
			for _, part := range [][]routing.Record{mine[:5], mine[5:]} {
				if err := s.Append(bg, b, part); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("concurrent appends failed: %v", errs)
	}
	if _, n := mustCount(t, s, b, b.Range()); n != writers*perWriter {
		t.Fatalf("count = %d, want %d", n, writers*perWriter)
	}
	_, got := mustRead(t, s, b, routing.ReadRequest{Range: b.Range(), Limit: 1000})
	sameRecords(t, "after concurrent appends", got, expect(all, b.Range(), nil, false, 1000))
}

func testStatementCounts(t *testing.T, s Store) {
	b := dayBucket("t.stats", "p", "2024-09-09")
	mustAppend(t, s, b, rec(b, ts("2024-09-09T09:09:09Z"), "a", "1"))
	for name, call := range map[string]func(ctx context.Context) error{
		"ScanRange": func(ctx context.Context) error {
			_, r, err := s.ScanRange(ctx, b, routing.BatchRequest{Range: b.Range(), Columns: routing.AllColumns, Limit: 10})
			if err != nil {
				return err
			}
			defer r.Release()
			for r.Next() {
			}
			return r.Err()
		},
		"AggregateRange count": func(ctx context.Context) error {
			return aggregateCall(ctx, s, b, routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.CountStar, routing.MinTime, routing.MaxTime}})
		},
		"AggregateRange min/max": func(ctx context.Context) error {
			return aggregateCall(ctx, s, b, routing.AggregateRequest{Range: b.Range(), Measures: []routing.Measure{routing.MinTime, routing.MaxTime}})
		},
		"AggregateRange by bin": func(ctx context.Context) error {
			bin := routing.TruncBinning(routing.TruncHour)
			return aggregateCall(ctx, s, b, routing.AggregateRequest{Range: b.Range(), Bin: &bin, Measures: []routing.Measure{routing.CountStar}})
		},
		"Route": func(ctx context.Context) error { _, err := s.Route(ctx, b); return err },
	} {
		stats := &routing.ReadStats{}
		if err := call(routing.WithReadStats(bg, stats)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := stats.HotStatements.Load(); n != 1 {
			t.Errorf("%s sent %d statements, want exactly 1 (route and rows from one snapshot)", name, n)
		}
	}
	stats := &routing.ReadStats{}
	if err := s.Append(routing.WithReadStats(bg, stats), b, []routing.Record{rec(b, ts("2024-09-09T10:00:00Z"), "b", "2")}); err != nil {
		t.Fatal(err)
	}
	if n := stats.HotStatements.Load(); n < 4 {
		t.Errorf("Append counted %d statements; the write fence alone needs 4", n)
	}
}

func testErrorPrivacy(t *testing.T, s Store) {
	const secret = "secret-partition-7781"
	b := dayBucket("t.privacy", secret, "2024-10-10")
	mustAppend(t, s, b, rec(b, ts("2024-10-10T10:10:10Z"), "sort-key-secret", "value-secret"))
	var errs []error
	errs = append(errs, s.Append(bg, b, []routing.Record{rec(b, ts("2024-10-10T10:10:10Z"), "sort-key-secret", "v")}))
	month := routing.BucketID{TableID: "t.privacy", PartitionKey: []byte(secret), Strategy: routing.CalendarMonthUTC,
		Key: "month:2024-10", Start: ts("2024-10-01T00:00:00Z"), End: ts("2024-11-01T00:00:00Z")}
	errs = append(errs, s.Append(bg, month, []routing.Record{rec(month, ts("2024-10-10T10:10:10Z"), "k", "v")}))
	sess := mustClaim(t, s, b, time.Minute)
	errs = append(errs, s.Append(bg, b, []routing.Record{rec(b, ts("2024-10-10T11:00:00Z"), "k", "v")}))
	stale := *sess
	stale.Generation++
	errs = append(errs, s.PublishArchive(bg, &stale, "manifest-secret"), s.DeleteHotBucket(bg, &stale))
	_, err := s.Snapshot(bg, &stale)
	errs = append(errs, err)
	errs = append(errs, s.Append(bg, b, []routing.Record{rec(dayBucket("t.privacy", "other-secret", "2024-10-10"), ts("2024-10-10T11:00:00Z"), "k", "v")}))
	for i, err := range errs {
		if err == nil {
			t.Fatalf("error %d is nil", i)
		}
		msg := err.Error()
		for _, leak := range []string{secret, "other-secret", "day:2024-10-10", "month:2024-10", sess.Token, "sort-key-secret",
			"manifest-secret", "SELECT", "INSERT", "UPDATE", "DELETE", "pulpitum_v4"} {
			if strings.Contains(msg, leak) {
				t.Errorf("error %d %q reveals %q", i, msg, leak)
			}
		}
	}
}

// near fails unless got is within a minute of want: lease expiries and retry times are
// computed by the store's clock (the database's for CockroachDB/PostgreSQL), which is this
// machine's, and the durations compared are hours.
func near(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -time.Minute || d > time.Minute || got.Location() != time.UTC {
		t.Fatalf("%s = %v, want about %v (UTC)", what, got, want)
	}
}

func mustStatus(t *testing.T, s Store, b routing.BucketID) routing.ArchiveStatus {
	t.Helper()
	st, err := s.Status(bg, b)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	return st
}

// testArchiveStatus checks the durable fields each transition writes (docs/pulpitum-v4.md
// §4.1): lease expiry = now + lease on claim, renew and cleanup claim; attempts + 1 and retry
// time = now + retry on DeferArchive and DeferCleanup (DeferCleanup also moves the expiry
// there); the retry time cleared by a claim; AbortArchive counting nothing.
func testArchiveStatus(t *testing.T, s Store) {
	b := dayBucket("t.status", "p", "2022-02-02")
	if st := mustStatus(t, s, b); st != (routing.ArchiveStatus{Route: routing.Route{State: routing.StateHot}}) {
		t.Fatalf("status without a metadata row = %+v", st)
	}
	mustAppend(t, s, b, rec(b, ts("2022-02-02T02:02:02Z"), "a", "1"))
	if st := mustStatus(t, s, b); st.State != routing.StateHot || st.Generation != 0 || st.Attempts != 0 ||
		!st.NextAttemptAt.IsZero() || !st.LeaseExpiresAt.IsZero() {
		t.Fatalf("fresh bucket status = %+v", st)
	}

	sess := mustClaim(t, s, b, time.Hour)
	st := mustStatus(t, s, b)
	if st.State != routing.StateArchiving || st.Generation != 1 || st.Attempts != 0 || !st.NextAttemptAt.IsZero() {
		t.Fatalf("status after claim = %+v", st)
	}
	near(t, "lease expiry after claim", st.LeaseExpiresAt, time.Now().Add(time.Hour))
	if err := s.Renew(bg, sess, 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	near(t, "lease expiry after renew", mustStatus(t, s, b).LeaseExpiresAt, time.Now().Add(3*time.Hour))

	if err := s.DeferArchive(bg, sess, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	st = mustStatus(t, s, b)
	if st.State != routing.StateHot || st.Generation != 1 || st.Attempts != 1 || !st.LeaseExpiresAt.IsZero() {
		t.Fatalf("status after DeferArchive = %+v", st)
	}
	near(t, "retry time after DeferArchive", st.NextAttemptAt, time.Now().Add(2*time.Hour))
	mustNotClaim(t, "claim before the retry time")(s.ClaimArchive(bg, b, time.Hour))

	// A second deferral into the past: the attempts add up and the bucket is due again.
	b2 := dayBucket("t.status", "p", "2022-02-03")
	mustAppend(t, s, b2, rec(b2, ts("2022-02-03T02:02:02Z"), "a", "1"))
	for i := 1; i <= 3; i++ {
		if err := s.DeferArchive(bg, mustClaim(t, s, b2, time.Hour), -time.Second); err != nil {
			t.Fatal(err)
		}
		if st := mustStatus(t, s, b2); st.Attempts != int64(i) || st.Generation != int64(i) {
			t.Fatalf("after %d deferrals status = %+v", i, st)
		}
	}
	sess2 := mustClaim(t, s, b2, time.Hour)
	if st := mustStatus(t, s, b2); st.Attempts != 3 || !st.NextAttemptAt.IsZero() || st.Generation != 4 {
		t.Fatalf("claim after deferrals: status = %+v (the retry time is cleared, attempts kept)", st)
	}
	if err := s.AbortArchive(bg, sess2); err != nil {
		t.Fatal(err)
	}
	if st := mustStatus(t, s, b2); st.State != routing.StateHot || st.Attempts != 3 || !st.NextAttemptAt.IsZero() || !st.LeaseExpiresAt.IsZero() {
		t.Fatalf("status after abort = %+v (abort counts nothing)", st)
	}

	sess2 = mustClaim(t, s, b2, time.Hour)
	if err := s.PublishArchive(bg, sess2, "m/status"); err != nil {
		t.Fatal(err)
	}
	st = mustStatus(t, s, b2)
	if st.State != routing.StateArchived || st.ManifestKey != "m/status" || st.HotDeleted || st.Generation != 5 {
		t.Fatalf("status after publish = %+v", st)
	}
	near(t, "lease expiry after publish (kept)", st.LeaseExpiresAt, time.Now().Add(time.Hour))
	if err := s.DeferCleanup(bg, sess2, 4*time.Hour); err != nil {
		t.Fatal(err)
	}
	st = mustStatus(t, s, b2)
	if st.State != routing.StateArchived || st.Attempts != 4 || !st.NextAttemptAt.Equal(st.LeaseExpiresAt) {
		t.Fatalf("status after DeferCleanup = %+v", st)
	}
	near(t, "retry time after DeferCleanup", st.NextAttemptAt, time.Now().Add(4*time.Hour))
	mustNotClaim(t, "cleanup claim before the retry time")(s.ClaimCleanup(bg, b2, time.Hour))
}

// testAppendFence races single-record appends against a claim of the same bucket: the hot
// check and the insert of an append are one serializable transaction, so every append either
// committed before the claim (and is in the claim's snapshot) or fails (ErrBucketReadOnly, or
// an exhausted serialization retry) and is nowhere; no record is lost or appears twice. Each
// writer appends until it is refused as read-only; the claim comes once 20 appends committed.
func testAppendFence(t *testing.T, s Store) {
	const writers = 4
	b := dayBucket("t.fence", "p", "2021-07-07")
	mustAppend(t, s, b, rec(b, ts("2021-07-07T00:00:00Z"), "seed", "v"))
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ok        = []routing.Record{rec(b, ts("2021-07-07T00:00:00Z"), "seed", "v")}
		readOnly  int
		other     []error
		enough    = make(chan struct{})
		closeOnce sync.Once
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				r := rec(b, ts("2021-07-07T07:00:00Z").Add(time.Duration(i)*time.Second), fmt.Sprintf("w%d-%05d", w, i), "v")
				err := s.Append(bg, b, []routing.Record{r})
				mu.Lock()
				switch {
				case err == nil:
					ok = append(ok, r)
					if len(ok) > 20 {
						closeOnce.Do(func() { close(enough) })
					}
				case errors.Is(err, routing.ErrBucketReadOnly):
					readOnly++
				case errors.Is(err, routing.ErrOperationFailed): // serialization retries exhausted
				default:
					other = append(other, err)
				}
				stop := errors.Is(err, routing.ErrBucketReadOnly) || len(other) > 0
				mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-enough:
	case <-done:
		t.Fatalf("writers stopped before 20 appends committed: %v", other)
	}
	sess := mustClaim(t, s, b, time.Hour)
	<-done
	if len(other) > 0 {
		t.Fatalf("appends failed with unexpected errors: %v", other)
	}
	if readOnly != writers {
		t.Fatalf("%d writers were refused as read-only, want %d", readOnly, writers)
	}
	snap, err := s.Snapshot(bg, sess)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ok, func(a, b routing.Record) int { return cmpRec(a.EventTime, a.SortKey, b.EventTime, b.SortKey) })
	sameRecords(t, "snapshot after racing appends", snap, ok)
}

// testPartitions checks partition discovery (routing.HotStore.Partitions): the partitions of a
// table with a route row of its strategy intersecting the range, whatever the route's state,
// in byte order, each with its buckets' keys in bound order, bounded by the limit (a partition
// within it keeps all its buckets), exact at sub-microsecond range bounds, and isolated from
// other tables and strategies.
func testPartitions(t *testing.T, s Store) {
	const table = "t.partitions"
	a := dayBucket(table, "a", "2024-03-01")
	a3 := dayBucket(table, "a", "2024-03-03")
	b := dayBucket(table, "b", "2024-03-02")
	c := dayBucket(table, "c", "2024-03-03")
	bin := dayBucket(table, "\x00\xffbin", "2024-03-02")
	other := dayBucket(table+"-other", "z", "2024-03-02")
	for _, bk := range []routing.BucketID{a3, a, b, c, bin, other} {
		mustAppend(t, s, bk, rec(bk, bk.Start.Add(time.Hour), "k", "v"))
	}
	// c is archived: its route row points at a manifest and its hot rows are gone.
	sess := mustClaim(t, s, c, time.Minute)
	if err := s.PublishArchive(bg, sess, "manifest-c"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteHotBucket(bg, sess); err != nil {
		t.Fatal(err)
	}
	list := func(strategy routing.Strategy, r routing.TimeRange, limit int) string {
		t.Helper()
		got, err := s.Partitions(bg, table, strategy, r, limit)
		if err != nil {
			t.Fatalf("Partitions: %v", err)
		}
		parts := make([]string, len(got))
		for i, p := range got {
			parts[i] = fmt.Sprintf("%q%v", p.Key, p.BucketKeys)
		}
		return strings.Join(parts, " ")
	}
	day := routing.CalendarDayUTC
	for _, tc := range []struct {
		name     string
		strategy routing.Strategy
		r        routing.TimeRange
		limit    int
		want     string
	}{
		{"all", day, routing.TimeRange{Start: ts("2024-03-01T00:00:00Z"), End: ts("2024-03-04T00:00:00Z")}, 0, `"\x00\xffbin"[day:2024-03-02] "a"[day:2024-03-01 day:2024-03-03] "b"[day:2024-03-02] "c"[day:2024-03-03]`},
		{"limit", day, routing.TimeRange{Start: ts("2024-03-01T00:00:00Z"), End: ts("2024-03-04T00:00:00Z")}, 2, `"\x00\xffbin"[day:2024-03-02] "a"[day:2024-03-01 day:2024-03-03]`},
		{"one day, one bucket archived", day, routing.TimeRange{Start: ts("2024-03-03T12:00:00Z"), End: ts("2024-03-03T13:00:00Z")}, 0, `"a"[day:2024-03-03] "c"[day:2024-03-03]`},
		{"end half a microsecond after a bucket start", day, routing.TimeRange{Start: ts("2024-03-01T23:00:00Z"), End: ts("2024-03-02T00:00:00.0000005Z")}, 0, `"\x00\xffbin"[day:2024-03-02] "a"[day:2024-03-01] "b"[day:2024-03-02]`},
		{"end at a bucket start", day, routing.TimeRange{Start: ts("2024-03-01T23:59:59.9999995Z"), End: ts("2024-03-02T00:00:00Z")}, 0, `"a"[day:2024-03-01]`},
		{"start half a microsecond after a bucket end", day, routing.TimeRange{Start: ts("2024-03-02T00:00:00.0000005Z"), End: ts("2024-03-02T01:00:00Z")}, 0, `"\x00\xffbin"[day:2024-03-02] "b"[day:2024-03-02]`},
		{"start at a bucket end", day, routing.TimeRange{Start: ts("2024-03-04T00:00:00Z"), End: ts("2024-03-05T00:00:00Z")}, 0, ``},
		{"other strategy", routing.CalendarMonthUTC, routing.TimeRange{Start: ts("2024-03-01T00:00:00Z"), End: ts("2024-04-01T00:00:00Z")}, 0, ``},
		{"empty range", day, routing.TimeRange{Start: ts("2024-03-02T00:00:00Z"), End: ts("2024-03-02T00:00:00Z")}, 0, ``},
	} {
		if got := list(tc.strategy, tc.r, tc.limit); got != tc.want {
			t.Errorf("%s: Partitions = %s, want %s", tc.name, got, tc.want)
		}
	}
}
