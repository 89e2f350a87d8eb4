package scan

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/flightsrv/flightsrv/pushdown"
	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/scan/aggregate"
	"github.com/flightsrv/flightsrv/substrait"
)

// Pushdown as a rewrite of the fragment plan (docs/architecture.md, "The executor and its
// fragments"; the seed's aggregate-pushdown proposal). The rule lives in the pushdown
// package: this file builds its narrow shape (pushdown.Shape) from a fragment whose pipeline
// is
//
//	routed read → (only route-implied conjuncts) → partial aggregate
//
// and runs what the rule returns: the fragment's read and partial aggregate are replaced by
// one call of the bucket's partial-aggregate port (routing.DurableTable.AggregateBucket); a
// hot bucket answers with one key-only statement, an archived one from its manifest or trusted
// statistics. The fragment's partial state is built from the store's answer and, for a
// grouping by the partition column, the bucket's partition key (every bucket holds one
// partition), so the coordinator's final aggregate combines store answers and row-reading
// fragments alike. A bucket whose store cannot answer without rows (routing.ErrNoAggregate)
// reads its rows in that fragment. Any other shape is left unchanged and the reason is reported
// in EXPLAIN. The match is made on the lowered relations, wherever the routed aggregate sits
// in the plan (under a Sort, Fetch or Project, on one side of a UNION ALL).

// storeAggregate is the rewrite of one routed aggregate as the executor runs it.
type storeAggregate struct {
	rw *pushdown.Rewrite
	// answer is the schema of every bucket's answer (rw's request's).
	answer *arrow.Schema
}

// matchStoreAggregate builds the pushdown shape of a routed aggregate (inputs over the base
// schema) and asks the rule. It returns the rewrite, or nil and the reason it does not apply
// (a shape, never a value).
func matchStoreAggregate(rp *routedPlan, agg *aggTail, partial *arrow.Schema) (*storeAggregate, string) {
	def := rp.src.Table.Def()
	spec := agg.spec
	sh := pushdown.Shape{Residual: len(rp.filters), Partitions: len(rp.src.Partitions)}
	for _, g := range spec.Groups {
		e := agg.inputs[g]
		if c, ok := baseRef(e); ok && c == colPartition {
			sh.Groups = append(sh.Groups, pushdown.Group{Kind: pushdown.GroupPartition})
		} else if bin, ok := substrait.TimeBinOf(e, def); ok {
			sh.Groups = append(sh.Groups, pushdown.Group{Kind: pushdown.GroupTimeBin, Bin: bin})
		} else {
			sh.Groups = append(sh.Groups, pushdown.Group{Kind: pushdown.GroupOther})
		}
	}
	for _, m := range spec.Measures {
		pm := pushdown.Measure{Name: m.Func.String(), Filter: m.Filter >= 0, Distinct: m.Distinct}
		switch m.Func {
		case aggregate.CountStar:
			pm.Func = pushdown.FuncCountStar
		case aggregate.Count:
			pm.Func = pushdown.FuncCount
		case aggregate.Min:
			pm.Func = pushdown.FuncMin
		case aggregate.Max:
			pm.Func = pushdown.FuncMax
		}
		if m.Arg >= 0 {
			if c, ok := baseRef(agg.inputs[m.Arg]); ok && c == colTimestamp {
				pm.Column = routing.TimeColumn
			}
		}
		sh.Measures = append(sh.Measures, pm)
	}
	rw, why := pushdown.Match(sh)
	if rw == nil {
		return nil, why
	}
	s := &storeAggregate{rw: rw, answer: routing.PartialAggregateSchema(rw.Bin != nil, rw.Measures)}
	if len(rw.Columns) != partial.NumFields() {
		return nil, "partial state of another width"
	}
	for i, c := range rw.Columns {
		want := partial.Field(i).Type
		var got arrow.DataType
		switch c.Kind {
		case pushdown.SourcePartition:
			got = arrow.BinaryTypes.String
		default:
			got = s.answer.Field(s.answerColumn(c)).Type
		}
		if !arrow.TypeEqual(got, want) {
			return nil, "partial state of other types"
		}
	}
	return s, ""
}

// answerColumn is the column of the store's answer that c (not SourcePartition) reads.
func (s *storeAggregate) answerColumn(c pushdown.Source) int {
	if c.Kind == pushdown.SourceBin {
		return 0
	}
	if s.rw.Bin != nil {
		return 1 + c.Measure
	}
	return c.Measure
}

// request is the port request of a fragment over rng, its batches allocated from alloc.
func (s *storeAggregate) request(rng routing.TimeRange, alloc memory.Allocator) routing.AggregateRequest {
	return s.rw.Request(rng, alloc)
}

// explain describes the rewrite for EXPLAIN: shapes only, never a partition value or literal.
func (s *storeAggregate) explain(strategy routing.Strategy) []string { return s.rw.Explain(strategy) }

// reader conforms an answer r to the partial-aggregate schema, adding the partition key of
// the bucket that answered (part) as the partition column where the rewrite groups by it.
func (s *storeAggregate) reader(r array.RecordReader, partial *arrow.Schema, part []byte) array.RecordReader {
	from := make([]int, len(s.rw.Columns))
	for i, c := range s.rw.Columns {
		from[i] = -1
		if c.Kind != pushdown.SourcePartition {
			from[i] = s.answerColumn(c)
		}
	}
	return &partialReader{RecordReader: r, answer: s.answer, from: from, schema: partial, part: string(part)}
}

// partialReader builds a fragment's partial state from a store's answer (of schema answer),
// one batch per answer batch: column i is the answer's column from[i] (shared), or, where
// from[i] is -1, the bucket's partition key repeated.
type partialReader struct {
	array.RecordReader
	answer *arrow.Schema
	from   []int
	schema *arrow.Schema
	part   string
	batch  arrow.RecordBatch
	err    error
}

func (p *partialReader) Schema() *arrow.Schema { return p.schema }

func (p *partialReader) RecordBatch() arrow.RecordBatch { return p.batch }

func (p *partialReader) Record() arrow.RecordBatch { return p.batch }

func (p *partialReader) Err() error {
	if p.err != nil {
		return p.err
	}
	return p.RecordReader.Err()
}

func (p *partialReader) Next() bool {
	if p.batch != nil {
		p.batch.Release()
		p.batch = nil
	}
	if p.err != nil || !p.RecordReader.Next() {
		return false
	}
	b := p.RecordReader.RecordBatch()
	if !b.Schema().Equal(p.answer) {
		p.err = fmt.Errorf("%w: a partial aggregate of schema %v", routing.ErrOperationFailed, b.Schema())
		return false
	}
	cols := make([]arrow.Array, len(p.from))
	for i, c := range p.from {
		if c < 0 {
			cols[i] = constantString(p.part, int(b.NumRows()))
			continue
		}
		cols[i] = b.Column(c)
		cols[i].Retain()
	}
	p.batch = array.NewRecordBatch(p.schema, cols, b.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return true
}

func (p *partialReader) Release() {
	if p.batch != nil {
		p.batch.Release()
		p.batch = nil
	}
	p.RecordReader.Release()
}

// constantString is a utf8 array of n copies of v.
func constantString(v string, n int) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(n)
	b.ReserveData(n * len(v))
	for range n {
		b.Append(v)
	}
	return b.NewArray()
}
