package query

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/internal/querylog"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan"
	"github.com/flightsrv/flightsrv/substrait"
)

// analysis is what EXPLAIN ANALYZE measured of one execution (issue 20): the rows and batches
// returned, the top operator's rows (equal to the rows returned), the wall time and the time
// to the first batch, the buckets read per tier and the fragments started, answered by a
// store or fallen back to reading rows, what the query read from the stores
// (routing.ReadStats) and the peak of its ledger (the memory its batches held).
type analysis struct {
	Rows            int64   `json:"Rows"`
	TopOperatorRows int64   `json:"Top Operator Rows"`
	Batches         int64   `json:"Batches"`
	TimeMs          float64 `json:"Time ms"`
	FirstBatchMs    float64 `json:"First Batch ms"`
	HotBuckets      int     `json:"Hot Buckets"`
	ArchivedBuckets int     `json:"Archived Buckets"`
	Fragments       int     `json:"Fragments Started"`
	StoreAnswered   int     `json:"Fragments Answered By Stores"`
	FellBack        int     `json:"Fragments Fallen Back"`
	HotStatements   int64   `json:"Hot Statements"`
	HotRows         int64   `json:"Hot Rows Read"`
	ArchiveRows     int64   `json:"Archive Rows Decoded"`
	ObjectReads     int64   `json:"Object Reads"`
	BytesRead       int64   `json:"Bytes Read"`
	RowGroupsRead   int64   `json:"Row Groups Read"`
	RowGroupsPruned int64   `json:"Row Groups Pruned"`
	PagesRead       int64   `json:"Pages Read"`
	PagesPruned     int64   `json:"Pages Pruned"`
	MemoryPeak      int64   `json:"Memory Peak Bytes"`
}

// lines prints the analysis under "Execution:".
func (a analysis) lines() []string {
	return []string{
		"Execution:",
		fmt.Sprintf("  rows returned: %d in %d batch(es) (the top operator's rows: %d)", a.Rows, a.Batches, a.TopOperatorRows),
		fmt.Sprintf("  time: %.3f ms, first batch after %.3f ms", a.TimeMs, a.FirstBatchMs),
		fmt.Sprintf("  buckets: %d hot, %d archived; fragments started %d, answered by a store %d, fallen back to rows %d", a.HotBuckets, a.ArchivedBuckets, a.Fragments, a.StoreAnswered, a.FellBack),
		fmt.Sprintf("  reads: %d hot statement(s), %d hot row(s), %d archived row(s) decoded, %d object read(s), %d byte(s) from object storage", a.HotStatements, a.HotRows, a.ArchiveRows, a.ObjectReads, a.BytesRead),
		fmt.Sprintf("  Parquet pruning by trusted event_time statistics: %d row group(s) read, %d pruned; %d page(s) read, %d pruned (pages counted where the page index was consulted)",
			a.RowGroupsRead, a.RowGroupsPruned, a.PagesRead, a.PagesPruned),
		fmt.Sprintf("  memory peak: %d byte(s) held by the query's batches", a.MemoryPeak),
	}
}

// explainAnalyze answers EXPLAIN ANALYZE: the query runs to its end, its rows discarded, and
// the plan is printed as EXPLAIN prints it with each executor operator's measures
// (scan.Analysis: rows, batches, time, fragments, buckets per tier) and the execution's
// totals (analysis); as one JSON document when asJSON (FORMAT JSON). ctx carries the query's
// ReadStats (withReads). Errors are Execute's.
func (e *Engine) explainAnalyze(ctx context.Context, b *substrait.Bound, asJSON bool) (array.RecordReader, error) {
	_, discovered, _, err := e.routes(ctx, b.Plan)
	if err != nil {
		return nil, err
	}
	c, _, err := e.compile(ctx, b, nil)
	if err != nil {
		return nil, err
	}
	head := explainHead(b.Plan, b.Routes, discovered, e.opts.Pushdown)
	var (
		m        analysis
		executor []string
	)
	if c.pr != nil {
		a := scan.NewAnalysis()
		start := time.Now()
		res, err := c.pr.ExecuteAnalyzed(ctx, a)
		if err != nil {
			return nil, err
		}
		for res.Next() {
			if m.Batches == 0 {
				m.FirstBatchMs = float64(time.Since(start).Nanoseconds()) / 1e6
			}
			m.Batches++
			m.Rows += res.RecordBatch().NumRows()
		}
		err = res.Err()
		m.TimeMs = float64(time.Since(start).Nanoseconds()) / 1e6
		m.HotBuckets, m.ArchivedBuckets = res.Tiers()
		querylog.FromContext(ctx).SetBuckets(res.Tiers)
		m.StoreAnswered, m.FellBack = res.Pushed()
		m.Fragments = res.Started()
		m.MemoryPeak = res.Ledger().Peak()
		res.Release()
		if err != nil {
			return nil, err
		}
		m.TopOperatorRows = a.Rows(c.pr)
		executor = c.pr.ExplainAnalyzed(a)
	} else {
		executor = []string{"Empty: the route reads no bucket (never executed)"}
	}
	if s := routing.StatsFrom(ctx); s != nil {
		m.HotStatements, m.HotRows, m.ArchiveRows = s.HotStatements.Load(), s.HotRows.Load(), s.ArchiveRows.Load()
		m.ObjectReads, m.BytesRead = s.ObjectReads.Load(), s.BytesRead.Load()
		m.RowGroupsRead, m.RowGroupsPruned = s.RowGroupsRead.Load(), s.RowGroupsPruned.Load()
		m.PagesRead, m.PagesPruned = s.PagesRead.Load(), s.PagesPruned.Load()
	}
	if asJSON {
		return e.explainJSON(head, executor, &m)
	}
	return e.explainLines(append(explainTail(head, executor), m.lines()...))
}

// explainJSON answers EXPLAIN (FORMAT JSON) as one row holding one JSON document: "Plan" (the
// plan, routes and pushdown lines), "Executor" (the executor's operators, with their measures
// under ANALYZE) and, under ANALYZE, "Execution" (the totals: analysis).
func (e *Engine) explainJSON(head, executor []string, m *analysis) (array.RecordReader, error) {
	doc := struct {
		Plan      []string  `json:"Plan"`
		Executor  []string  `json:"Executor"`
		Execution *analysis `json:"Execution,omitempty"`
	}{head, executor, m}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return e.explainLines([]string{string(b)})
}
