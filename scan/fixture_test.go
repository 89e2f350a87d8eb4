package scan_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/substrait-io/substrait-go/v8/plan"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"

	"github.com/flightsrv/flightsrv/archive"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/routing/sqlite"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/scan/ledger"
	"github.com/flightsrv/flightsrv/substrait"
)

// The shared data set: one day-bucketed table over 60 days (2024-01-01 to 2024-02-29), with
// several partitions written through routing.DurableTable.Append into the real SQLite store.
// Each record set has two fixtures holding exactly the same records: "hot" (every bucket hot)
// and "mixed" (the buckets of odd days of the month archived to Parquet in a file:// bucket
// by the real archiver, the others hot), so every test that loops over both fixtures also
// checks that mixed hot + archived reads give the all-hot answers. The small partitions
// (fixtures) and the large ones exercising the batch caps (capFixtures) are separate record
// sets, built on first use.
var (
	tableDef = routing.TableDef{Name: "messages", TableID: "msgs", PartitionColumn: "channel_id",
		Strategy: routing.CalendarDayUTC, WritableBuckets: 120}
	day0    = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	numDays = 60
	dataEnd = day0.AddDate(0, 0, numDays) // 2024-03-01, the application clock
)

// Partitions of the data set.
const (
	pGeneral = "general" // ~450 records over 55 of the 60 days (days 10–13 and 40 empty)
	pRandom  = "random"  // one record every third day
	pMany    = "many"    // pageRows records on Jan 5, PageRows+1000 on Jan 6 (ties across the page boundary)
	pBig     = "big"     // 256 KiB values on Jan 7 and Jan 8, plus one 2.5 MiB value
	pBad     = "bad"     // one stored id that is not valid UTF-8 (never archived)
	pEmpty   = "empty"   // no record
	// pBadKey is a partition key that is not valid UTF-8 (never archived).
	pBadKey = "\xfesecret-pk"
	// secretID is the invalid stored id; errors must not contain it.
	secretID = "\xffsecret-id"
)

const (
	manyDay1Rows = pageRows
	manyDay2Rows = pageRows + 1000
	bigValue     = 256 << 10
	hugeValue    = 5 << 19 // 2.5 MiB, more than routing.MaxBatchBytes on its own
)

// generateBase returns the records of the small partitions, deterministically.
func generateBase() []routing.Record {
	rng := rand.New(rand.NewPCG(7, 11))
	var out []routing.Record
	k := 0
	add := func(pk string, t time.Time) {
		k++
		id := fmt.Sprintf("%c%06d", "qzamx"[rng.IntN(5)], k)
		value := fmt.Appendf(nil, "value-%d-\x00\xff", k)
		if k%17 == 0 {
			value = []byte{}
		}
		out = append(out, routing.Record{PartitionKey: []byte(pk), EventTime: t, SortKey: []byte(id), Value: value})
	}
	for d := range numDays {
		if (d >= 10 && d <= 13) || d == 40 {
			continue
		}
		start := day0.AddDate(0, 0, d)
		n := 3 + rng.IntN(8)
		first := start.Add(time.Duration(rng.Int64N(86_400_000_000)) * time.Microsecond)
		add(pGeneral, first)
		for range n - 1 {
			add(pGeneral, start.Add(time.Duration(rng.Int64N(86_400_000_000))*time.Microsecond))
		}
		if d%5 == 0 {
			add(pGeneral, start) // exactly on the bucket's lower bound
		}
		if d%4 == 0 {
			add(pGeneral, start.AddDate(0, 0, 1).Add(-time.Microsecond)) // last instant of the bucket
		}
		if d%3 == 0 { // ties on the timestamp: ordered by id
			add(pGeneral, first)
			add(pGeneral, first)
		}
		if d%3 == 1 {
			add(pRandom, start.Add(time.Duration(rng.Int64N(86_400_000_000))*time.Microsecond))
		}
	}
	add(pBad, day0.Add(time.Hour))
	add(pBad, day0.Add(2*time.Hour))
	add(pBad, day0.AddDate(0, 0, 1).Add(time.Hour))
	out = append(out, routing.Record{PartitionKey: []byte(pBad), EventTime: day0.AddDate(0, 0, 1).Add(2 * time.Hour), SortKey: []byte(secretID), Value: []byte("v")})
	add(pBad, day0.AddDate(0, 0, 1).Add(3*time.Hour))
	add(pBadKey, day0.AddDate(0, 0, 1).Add(time.Hour))
	add(pBadKey, day0.AddDate(0, 0, 1).Add(2*time.Hour))
	return out
}

// generateCaps returns the records of the partitions that exercise the batch caps and the
// paged bucket reads: pMany and pBig.
func generateCaps() []routing.Record {
	var out []routing.Record
	add := func(pk string, t time.Time, id string, value []byte) {
		out = append(out, routing.Record{PartitionKey: []byte(pk), EventTime: t, SortKey: []byte(id), Value: value})
	}
	for i := range manyDay1Rows {
		// Pairs of records share a timestamp, with ids in reverse insertion order.
		add(pMany, day0.AddDate(0, 0, 4).Add(time.Duration(i/2)*5*time.Second), fmt.Sprintf("a%06d", manyDay1Rows-i), []byte("m"))
	}
	for i := range manyDay2Rows {
		// Triples share a timestamp, so the page boundary (PageRows) falls inside a tie.
		add(pMany, day0.AddDate(0, 0, 5).Add(time.Duration(i/3)*7*time.Second), fmt.Sprintf("b%06d", manyDay2Rows-i), []byte("n"))
	}
	for d := 6; d <= 7; d++ {
		for i := range 12 {
			// Compressible (the archive compresses it fast) but distinct per record.
			v := bytes.Repeat(fmt.Appendf(nil, "%02d-%02d-%059d", d, i, i*d), bigValue/64)
			add(pBig, day0.AddDate(0, 0, d).Add(time.Duration(i)*time.Hour), fmt.Sprintf("big%02d%02d", d, i), v)
		}
	}
	add(pBig, day0.AddDate(0, 0, 7).Add(90*time.Minute), "huge", bytes.Repeat([]byte{'h'}, hugeValue))
	return out
}

// fixture is one store holding the data set.
type fixture struct {
	name     string
	store    *sqlite.Store
	reader   *archive.Reader // nil when nothing is archived
	bucket   *blob.Bucket
	archived int // buckets archived
}

var (
	fixDir  string
	allRecs = slices.Concat(generateBase(), generateCaps())
	base    = lazyFixtures{name: "", gen: generateBase, rowGroupRows: 8}
	caps    = lazyFixtures{name: "caps-", gen: generateCaps, rowGroupRows: 1024, hotOnlyUnderRace: true}
)

// lazyFixtures builds a hot and a mixed fixture of one record set on first use.
type lazyFixtures struct {
	name         string
	gen          func() []routing.Record
	rowGroupRows int // of the Parquet archives
	// hotOnlyUnderRace skips the mixed fixture under the race detector (raceEnabled).
	hotOnlyUnderRace bool
	once             sync.Once
	err              error
	fs               []*fixture
}

func (l *lazyFixtures) get(t testing.TB) []*fixture {
	t.Helper()
	l.once.Do(func() {
		recs := l.gen()
		names := []string{"hot", "mixed"}
		if l.hotOnlyUnderRace && raceEnabled {
			names = names[:1]
		}
		l.fs = make([]*fixture, len(names))
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Go(func() { l.fs[i], errs[i] = buildFixture(l.name+name, recs, i == 1, l.rowGroupRows) })
		}
		wg.Wait()
		l.err = errors.Join(errs...)
	})
	if l.err != nil {
		t.Fatalf("build fixtures: %v", l.err)
	}
	return l.fs
}

// fixtures returns the hot and mixed fixtures of the small partitions.
func fixtures(t testing.TB) []*fixture { return base.get(t) }

// testPool is the allocator under the tests' checked allocators: the engine's recycling
// allocator, poisoning what it recycles, so that a batch used after its last Release reads
// garbage and fails the comparison with the expected rows.
var testPool = &ledger.Pool{Poison: true}

// capFixtures returns the hot and mixed fixtures of pMany and pBig (only the hot one under
// the race detector).
func capFixtures(t testing.TB) []*fixture { return caps.get(t) }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "scan-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixDir = dir
	code := m.Run()
	for _, f := range slices.Concat(base.fs, caps.fs) {
		if f != nil {
			_ = f.store.Close()
			if f.bucket != nil {
				_ = f.bucket.Close()
			}
		}
	}
	_ = os.RemoveAll(dir)
	// No goroutine of package scan may outlive the readers the tests released.
	if code == 0 {
		if stacks := waitNoScanGoroutines(5 * time.Second); stacks != "" {
			fmt.Fprintf(os.Stderr, "leaked scan goroutines:\n%s\n", stacks)
			code = 1
		}
	}
	os.Exit(code)
}

// oddDays lets the archiver see only the buckets of odd days of the month, of partitions
// whose key is valid UTF-8 and not pBad, so that archived and hot buckets alternate.
type oddDays struct{ *sqlite.Store }

func (s oddDays) Discover(ctx context.Context, eligibleBefore time.Time, limit int) ([]routing.ArchiveWork, error) {
	work, err := s.Store.Discover(ctx, eligibleBefore, limit)
	if err != nil {
		return nil, err
	}
	var out []routing.ArchiveWork
	for _, w := range work {
		if archivable(w.Bucket) {
			out = append(out, w)
		}
	}
	return out, nil
}

func archivable(b routing.BucketID) bool {
	return b.Start.Day()%2 == 1 && utf8.Valid(b.PartitionKey) && string(b.PartitionKey) != pBad
}

// buildFixture appends recs into a new SQLite store; when mixed, the real archiver then
// archives the buckets of odd days (see oddDays) to a file:// bucket.
func buildFixture(name string, recs []routing.Record, mixed bool, rowGroupRows int) (*fixture, error) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(fixDir, name+".db")})
	if err != nil {
		return nil, err
	}
	f := &fixture{name: name, store: st}
	if err := st.Migrate(ctx); err != nil {
		return f, err
	}
	tbl, err := routing.NewDurableTable(tableDef, st, nil, routing.Options{Clock: func() time.Time { return dataEnd }})
	if err != nil {
		return f, err
	}
	if n, err := tbl.Append(ctx, recs); err != nil || n != len(recs) {
		return f, fmt.Errorf("append: %d of %d: %w", n, len(recs), err)
	}
	if !mixed {
		return f, nil
	}
	dir := filepath.Join(fixDir, name+"-archive")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	bkt, err := blob.OpenBucket(ctx, "file://"+dir+"?metadata=skip")
	if err != nil {
		return f, err
	}
	f.bucket = bkt
	w, err := archive.NewWriter(bkt, archive.WriterOptions{Prefix: "archives", RowGroupRows: rowGroupRows})
	if err != nil {
		return f, err
	}
	if f.reader, err = archive.NewReader(bkt, archive.ReaderOptions{}); err != nil {
		return f, err
	}
	a, err := archive.NewArchiver(oddDays{st}, w, st, archive.ArchiverOptions{ScanLimit: 1000, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return f, err
	}
	sum, err := a.RunOnce(ctx, dataEnd)
	if err != nil {
		return f, fmt.Errorf("archive: %w", err)
	}
	want := map[string]bool{}
	for i := range recs {
		b := routing.BucketFor(tableDef.TableID, recs[i].PartitionKey, tableDef.Strategy, recs[i].EventTime)
		if archivable(b) {
			want[b.CacheKey()] = true
		}
	}
	if sum.Published != len(want) || sum.Cleaned != len(want) {
		return f, fmt.Errorf("archiver summary %+v, want %d buckets published and cleaned", sum, len(want))
	}
	f.archived = sum.Published
	return f, nil
}

// table returns a durable table over f's data. hot replaces the store when not nil (a probe
// wrapping f.store); fanout 0 takes the default; cache enables a route cache.
func (f *fixture) table(t testing.TB, hot routing.HotStore, fanout int, cache bool) *routing.DurableTable {
	t.Helper()
	if hot == nil {
		hot = f.store
	}
	var ar routing.ArchiveReader
	if f.reader != nil {
		ar = f.reader
	}
	opts := routing.Options{Fanout: fanout, Clock: func() time.Time { return dataEnd }}
	if cache {
		opts.Cache = routing.NewRouteCache(1024)
	}
	tbl, err := routing.NewDurableTable(tableDef, hot, ar, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// probe is a HotStore test double: it delegates to the real store and records the number of
// ScanRange calls and the current and maximum number of concurrent ones. Each ScanRange
// first waits delay (or until its context ends), to make overlaps likely. fail, when set,
// decides an error for a bucket instead of delegating.
type probe struct {
	routing.HotStore
	delay    time.Duration
	fail     func(b routing.BucketID) error
	calls    atomic.Int64
	cur, max atomic.Int64
	counts   atomic.Int64
	// aggDelay delays AggregateRange; aggCur and aggMax are its calls running now and at most.
	aggDelay       time.Duration
	aggCur, aggMax atomic.Int64
}

// enter counts one bucket read, waits delay (or until ctx ends) and returns the injected
// failure for b, if any; the caller defers the returned leave.
func (p *probe) enter(ctx context.Context, b routing.BucketID) (leave func(), err error) {
	p.calls.Add(1)
	n := p.cur.Add(1)
	leave = func() { p.cur.Add(-1) }
	for {
		m := p.max.Load()
		if n <= m || p.max.CompareAndSwap(m, n) {
			break
		}
	}
	if p.delay > 0 {
		tm := time.NewTimer(p.delay)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
		}
	}
	if p.fail != nil {
		err = p.fail(b)
	}
	return leave, err
}

// ScanRange is the executor's batch read: counted, delayed and failed as the probe says.
func (p *probe) ScanRange(ctx context.Context, b routing.BucketID, req routing.BatchRequest) (routing.Route, routing.BatchReader, error) {
	leave, err := p.enter(ctx, b)
	defer leave()
	if err != nil {
		return routing.Route{}, nil, err
	}
	return p.HotStore.ScanRange(ctx, b, req)
}

// AggregateRange counts the partial-aggregate port's calls apart from reads; with aggDelay it
// waits that long first (or until ctx ends) and tracks the calls running at once (aggCur,
// aggMax).
func (p *probe) AggregateRange(ctx context.Context, b routing.BucketID, req routing.AggregateRequest) (routing.Route, array.RecordReader, error) {
	p.counts.Add(1)
	if p.aggDelay > 0 {
		n := p.aggCur.Add(1)
		defer p.aggCur.Add(-1)
		for m := p.aggMax.Load(); n > m && !p.aggMax.CompareAndSwap(m, n); m = p.aggMax.Load() {
		}
		tm := time.NewTimer(p.aggDelay)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return routing.Route{}, nil, ctx.Err()
		}
	}
	if p.fail != nil {
		if err := p.fail(b); err != nil {
			return routing.Route{}, nil, err
		}
	}
	return p.HotStore.AggregateRange(ctx, b, req)
}

// Columns of the table and their Arrow types, built here independently of package
// substrait: partition utf8, timestamp[ns, UTC], id utf8, value binary.
var allColumns = []string{tableDef.PartitionColumn, "timestamp", "id", "value"}

func columnType(col string) arrow.DataType {
	switch col {
	case "timestamp":
		return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
	case "value":
		return arrow.BinaryTypes.Binary
	}
	return arrow.BinaryTypes.String
}

// scanSpec describes a routed scan the tests run: the rows of one partition inside Range, the
// Columns in output order (named by Schema), in (timestamp, id) order (descending when
// Desc), at most Limit rows (< 0: all).
type scanSpec struct {
	Table     *routing.DurableTable
	Partition []byte
	Range     routing.TimeRange
	Columns   []string
	Desc      bool
	Limit     int64
	Schema    *arrow.Schema
}

// pageRows is a page size the fixture's "many" partition straddles (ties across it).
const pageRows = 16384

// makeSpec builds a scan spec; output field names are the column names unless names is set.
func makeSpec(tbl *routing.DurableTable, part string, r routing.TimeRange, cols []string, desc bool, limit int64, names ...string) *scanSpec {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		name := c
		if i < len(names) {
			name = names[i]
		}
		fields[i] = arrow.Field{Name: name, Type: columnType(c)}
	}
	return &scanSpec{Table: tbl, Partition: []byte(part), Range: r, Columns: cols, Desc: desc, Limit: limit, Schema: arrow.NewSchema(fields, nil)}
}

// execute binds sql (over the messages table, with the routed predicate's parameters
// channel_id = $1, timestamp >= $2, timestamp < $3 taken from spec) with the general binder
// and runs its plan through the executor over spec's table, partition and range.
func execute(ctx context.Context, spec *scanSpec, sql string, alloc memory.Allocator) (*scan.Result, error) {
	cat, err := substrait.NewCatalog(tableDef)
	if err != nil {
		return nil, err
	}
	// The binder refuses a partition parameter that is not UTF-8 (the column is text), so a
	// stored key that is not (TestScanInvalidUTF8) is read as an analytical read reads it: no
	// partition conjunct, the partition given by Bind below.
	const pinned, unpinned = "channel_id = $1 AND timestamp >= $2 AND timestamp < $3", "timestamp >= $1 AND timestamp < $2"
	args := []any{string(spec.Partition), spec.Range.Start, spec.Range.End}
	var opts substrait.BindOptions
	if !utf8.Valid(spec.Partition) && strings.Contains(sql, pinned) {
		sql, args, opts.Analytical = strings.Replace(sql, pinned, unpinned, 1), args[1:], true
	}
	st, err := substrait.PrepareWith(sql, cat, opts)
	if err != nil {
		return nil, err
	}
	b, err := st.BindGeneral(opts, args...)
	if err != nil {
		return nil, err
	}
	if b.Plan == nil {
		return nil, errors.New("execute: a statement without a table")
	}
	return scan.Execute(ctx, b.Plan, scan.Options{Alloc: alloc, Bind: func(*plan.NamedTableReadRel) (scan.Source, error) {
		return scan.Source{Table: spec.Table, Partitions: [][]byte{spec.Partition}, Range: spec.Range}, nil
	}})
}

// routedWhere is the routed predicate execute binds.
const routedWhere = " FROM messages WHERE channel_id = $1 AND timestamp >= $2 AND timestamp < $3"

// ident quotes a column name as a SQL identifier.
func ident(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// openScan runs spec as `SELECT cols FROM t WHERE … ORDER BY timestamp, id [DESC] LIMIT n`.
func openScan(ctx context.Context, spec *scanSpec, alloc memory.Allocator) (array.RecordReader, error) {
	cols := make([]string, len(spec.Columns))
	for i, c := range spec.Columns {
		cols[i] = ident(c) + " AS " + ident(spec.Schema.Field(i).Name)
	}
	dir := ""
	if spec.Desc {
		dir = " DESC"
	}
	sql := "SELECT " + strings.Join(cols, ", ") + routedWhere + " ORDER BY timestamp" + dir + ", id" + dir
	if spec.Limit >= 0 {
		sql += fmt.Sprintf(" LIMIT %d", spec.Limit)
	}
	return execute(ctx, spec, sql, alloc)
}

// summary is what the scan path computes for COUNT(*), MIN(timestamp), MAX(timestamp).
type summary struct {
	Rows     uint64
	Min, Max time.Time
}

// summarize runs `SELECT count(*), min(timestamp), max(timestamp)` over spec's range through
// the executor.
func summarize(ctx context.Context, spec *scanSpec) (summary, error) {
	res, err := execute(ctx, spec, "SELECT count(*), min(timestamp), max(timestamp)"+routedWhere, testPool)
	if err != nil {
		return summary{}, err
	}
	defer res.Release()
	var s summary
	for res.Next() {
		b := res.RecordBatch()
		s.Rows = uint64(b.Column(0).(*array.Int64).Value(0))
		if s.Rows > 0 {
			s.Min = b.Column(1).(*array.Timestamp).Value(0).ToTime(arrow.Nanosecond).UTC()
			s.Max = b.Column(2).(*array.Timestamp).Value(0).ToTime(arrow.Nanosecond).UTC()
		}
	}
	return s, res.Err()
}

// byPartition holds each partition's records sorted by (timestamp, id), built once.
var byPartition = sync.OnceValue(func() map[string][]routing.Record {
	m := map[string][]routing.Record{}
	for _, rec := range allRecs {
		m[string(rec.PartitionKey)] = append(m[string(rec.PartitionKey)], rec)
	}
	for _, recs := range m {
		sort.Slice(recs, func(i, j int) bool {
			a, b := recs[i], recs[j]
			if !a.EventTime.Equal(b.EventTime) {
				return a.EventTime.Before(b.EventTime)
			}
			return string(a.SortKey) < string(b.SortKey)
		})
	}
	return m
})

// expected is the brute-force answer: the records of partition part inside r, sorted by
// (timestamp, id), reversed when desc, at most limit (limit < 0: all).
func expected(part string, r routing.TimeRange, desc bool, limit int64) []routing.Record {
	var out []routing.Record
	for _, rec := range byPartition()[part] {
		if !rec.EventTime.Before(r.Start) && rec.EventTime.Before(r.End) {
			out = append(out, rec)
		}
	}
	if desc {
		slices.Reverse(out)
	}
	if limit >= 0 && int64(len(out)) > limit {
		out = out[:limit]
	}
	return out
}

// rowsOf projects records onto cols the way rows are read back by drain.
func rowsOf(recs []routing.Record, cols []string) [][]any {
	out := make([][]any, len(recs))
	for i, r := range recs {
		row := make([]any, len(cols))
		for c, col := range cols {
			switch col {
			case "timestamp":
				row[c] = r.EventTime.UnixNano()
			case "id":
				row[c] = string(r.SortKey)
			case "value":
				row[c] = string(r.Value)
			default:
				row[c] = string(r.PartitionKey)
			}
		}
		out[i] = row
	}
	return out
}

// drain reads every batch of rdr, checking the stream invariants on each: schema as
// announced, never an empty batch, at most MaxBatchRows rows and, past the first row, at
// most MaxBatchBytes bytes of variable-width data. It returns the rows, the row count of
// each batch and rdr.Err().
func drain(t testing.TB, rdr array.RecordReader) (rows [][]any, batches []int, err error) {
	t.Helper()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if !rec.Schema().Equal(rdr.Schema()) {
			t.Fatalf("batch schema %s differs from reader schema %s", rec.Schema(), rdr.Schema())
		}
		n := int(rec.NumRows())
		if n == 0 {
			t.Fatal("empty batch in the stream")
		}
		if n > routing.MaxBatchRows {
			t.Fatalf("batch of %d rows exceeds MaxBatchRows", n)
		}
		varBytes := 0
		for i := range n {
			row := make([]any, rec.NumCols())
			for c := range int(rec.NumCols()) {
				switch a := rec.Column(c).(type) {
				case *array.String:
					row[c] = strings.Clone(a.Value(i)) // Value shares the batch's memory
					varBytes += len(a.Value(i))
				case *array.Binary:
					row[c] = string(a.Value(i))
					varBytes += len(a.Value(i))
				case *array.Timestamp:
					row[c] = int64(a.Value(i))
				case *array.Uint64:
					row[c] = a.Value(i)
				case *array.Int64:
					row[c] = a.Value(i)
				default:
					t.Fatalf("unexpected column type %s", a.DataType())
				}
			}
			rows = append(rows, row)
		}
		if n > 1 && varBytes > routing.MaxBatchBytes {
			t.Fatalf("batch of %d rows holds %d bytes of variable-width data, more than MaxBatchBytes", n, varBytes)
		}
		batches = append(batches, n)
	}
	return rows, batches, rdr.Err()
}

// sameRows fails with the first difference between got and want.
func sameRows(t testing.TB, what string, got, want [][]any) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d columns, want %d", what, i, len(got[i]), len(want[i]))
		}
		for c := range got[i] {
			if got[i][c] != want[i][c] {
				t.Fatalf("%s: row %d column %d = %s, want %s", what, i, c, short(got[i][c]), short(want[i][c]))
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// span returns [day0+from, day0+to).
func span(from, to time.Duration) routing.TimeRange {
	return routing.TimeRange{Start: day0.Add(from), End: day0.Add(to)}
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// scanGoroutines returns the stacks of live goroutines running code of package scan.
func scanGoroutines() string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "flightsrv/scan.") && !strings.Contains(g, "scan_test.") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}

// waitGoroutines fails t unless every scan goroutine ends and the process's goroutine count
// comes back to baseline, within 5 s each; what names what ran, for the message.
func waitGoroutines(t *testing.T, baseline int, what string) {
	t.Helper()
	if s := waitNoScanGoroutines(5 * time.Second); s != "" {
		t.Fatalf("scan goroutines still running:\n%s", s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseline {
		t.Fatalf("%d goroutines after %s, %d before", n, what, baseline)
	}
}

// waitNoScanGoroutines waits up to d for every scan goroutine to end; it returns the stacks
// of those still running.
func waitNoScanGoroutines(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		s := scanGoroutines()
		if s == "" || time.Now().After(deadline) {
			return s
		}
		time.Sleep(5 * time.Millisecond)
	}
}
