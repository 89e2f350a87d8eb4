package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/flightsrv/flightsrv/scan/ledger"
)

// SetFilter returns the reader of LEFT JOIN LATERAL f(…) ON cond (PostgreSQL's nested loop
// left join over a function scan): in is an outer ProjectSet's output whose last column is its
// ordinality (for each input row, the rows its calls yield numbered 1, 2, …, or one row whose
// ordinality is NULL when they yield none), nIn the columns of ProjectSet's input. It keeps
// the yielded rows for which cond is true (false and NULL drop them) and, for each input row
// none of whose rows is kept, one row of that input row's columns with every other column
// NULL (cond is not evaluated on it), in the order of in. cond is the condition's conjuncts,
// a failing one set aside as conjunctsPass does. The output has in's columns, without the
// ordinality unless keepOrd. Each conjunct must be boolean and compiled for in's schema. It
// takes ownership of in; cond stays shared. The reader is not safe for concurrent use; ctx
// is checked once per input batch.
func SetFilter(ctx context.Context, in array.RecordReader, cond []*Expr, nIn int, keepOrd bool, mem *ledger.Ledger) array.RecordReader {
	fields := in.Schema().Fields()
	last := len(fields) - 1
	if !keepOrd {
		fields = fields[:last]
	}
	schema := arrow.NewSchema(fields, nil)
	for _, c := range cond {
		switch {
		case c == nil || c.Type().ID() != arrow.BOOL:
			return errStream(schema, errors.New("ops: set filter: the condition is not boolean"), in)
		case !sameTypes(in.Schema(), c.Schema()):
			return errStream(schema, errors.New("ops: set filter: condition compiled for another schema"), in)
		}
	}
	switch {
	case len(cond) == 0:
		return errStream(schema, errors.New("ops: set filter: no condition"), in)
	case last < nIn || in.Schema().Field(last).Type.ID() != arrow.INT64:
		return errStream(schema, errors.New("ops: set filter: the input's last column is not an ordinality"), in)
	}
	alloc := allocator(mem)
	o := &owned{r: in}
	var (
		open    arrow.RecordBatch // the first row of the input row being read, nil between them
		matched bool              // whether a row of open's input row is kept
		pads    []arrow.RecordBatch
		refs    []rowRef
		pass    []bool
	)
	// closeRow ends the input row being read: a pad row of its columns when none was kept.
	closeRow := func() {
		if open == nil {
			return
		}
		if matched {
			open.Release()
		} else {
			pads = append(pads, open)
			refs = append(refs, rowRef{b: int32(len(pads)), r: 0})
		}
		open = nil
	}
	release := func() {
		for _, p := range pads {
			p.Release()
		}
		pads, refs = pads[:0], refs[:0]
	}
	// build gathers refs over b (source 0; nil at the end) and pads (sources 1, …).
	build := func(b arrow.RecordBatch) (arrow.RecordBatch, error) {
		defer release()
		if len(refs) == 0 {
			return nil, nil
		}
		cols := make([]arrow.Array, 0, len(fields))
		parts := make([]arrow.Array, len(pads)+1)
		for c, f := range fields {
			var nulls arrow.Array
			if c >= nIn {
				nulls = NullColumn(alloc, f.Type, 1)
			}
			switch {
			case b != nil:
				parts[0] = b.Column(c)
			case c < nIn: // no batch at the end: its source is never referenced
				parts[0] = pads[0].Column(c)
			default:
				parts[0] = nulls
			}
			for k, p := range pads {
				if c < nIn {
					parts[k+1] = p.Column(c)
				} else {
					parts[k+1] = nulls
				}
			}
			a, err := gatherColumn(ctx, f.Type, parts, refs, alloc)
			if nulls != nil {
				nulls.Release()
			}
			if err != nil {
				releaseArrays(cols)
				return nil, fmt.Errorf("ops: set filter: %w", err)
			}
			cols = append(cols, a)
		}
		out := array.NewRecordBatch(schema, cols, int64(len(refs)))
		releaseArrays(cols)
		return out, nil
	}
	return newStream(schema, func() (arrow.RecordBatch, error) {
		for o.r != nil && o.r.Next() {
			if err := ctxErr(ctx); err != nil {
				return nil, err
			}
			b := o.r.RecordBatch()
			if b.NumRows() == 0 {
				continue
			}
			pass = slices.Grow(pass[:0], int(b.NumRows()))[:b.NumRows()]
			for i := range pass {
				pass[i] = true
			}
			if err := conjunctsPass(ctx, b, cond, pass, mem); err != nil {
				return nil, err
			}
			ords := b.Column(last).(*array.Int64)
			for i, keep := range pass {
				switch {
				case ords.IsNull(i): // an input row without rows: ProjectSet's NULL row
					closeRow()
					refs = append(refs, rowRef{r: int32(i)})
					continue
				case ords.Value(i) == 1:
					closeRow()
					open, matched = b.NewSlice(int64(i), int64(i+1)), false
				}
				if keep {
					matched = true
					refs = append(refs, rowRef{r: int32(i)})
				}
			}
			out, err := build(b)
			if err != nil || out != nil {
				return out, err
			}
		}
		if o.r == nil {
			return nil, nil
		}
		err := o.r.Err()
		o.release()
		if err != nil {
			return nil, err
		}
		closeRow()
		return build(nil)
	}, func() {
		if open != nil {
			open.Release()
			open = nil
		}
		release()
		o.release()
	})
}
