package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// goldenQuery is one query of testdata/sql/golden.json (see testdata/sql/gen.py): the SQL
// flightsrv runs, the SQL DuckDB ran, the kind of each column and DuckDB's rows.
type goldenQuery struct {
	SQL        string   `json:"sql"`
	Analytical bool     `json:"analytical"`
	DuckDB     string   `json:"duckdb"`
	Kinds      []string `json:"kinds"`
	Rows       [][]any  `json:"rows"`
}

func loadGolden(t *testing.T) []goldenQuery {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "testdata", "sql", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []goldenQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) < 150 {
		t.Fatalf("the corpus has %d queries, want at least 150", len(qs))
	}
	return qs
}

// testGolden runs the SQL corpus through both servers (pushdown on and off) and compares each
// answer with DuckDB's: the same column kinds (integers are not floats), the same rows in the
// same order, NULLs included, floats to a relative 1e-9. The queries of the analytical mode run
// through onA and offA, clients of the same servers whose sessions have it on; the others
// refuse them.
func testGolden(t *testing.T, on, off, onA, offA *flightsql.Client) {
	for i, q := range loadGolden(t) {
		clients := map[string]*flightsql.Client{"pushdown on": on, "pushdown off": off}
		if q.Analytical {
			clients = map[string]*flightsql.Client{"pushdown on, analytical": onA, "pushdown off, analytical": offA}
			// Outside it, a read without a partition pin is refused (the corpus' one pinned
			// analytical query, origin IN (…), is not).
			if _, err := run(context.Background(), on, q.SQL); !strings.Contains(q.SQL, "origin IN") && status.Code(err) != codes.InvalidArgument {
				t.Errorf("query %d outside the analytical mode: %v, want INVALID_ARGUMENT", i, err)
			}
		}
		for name, cl := range clients {
			res, err := run(context.Background(), cl, q.SQL)
			if err != nil {
				t.Errorf("query %d (%s): %s: %v", i, name, q.SQL, err)
				continue
			}
			kinds, rows := goldenRows(t, res)
			res.release()
			if fmt.Sprint(kinds) != fmt.Sprint(q.Kinds) {
				t.Errorf("query %d (%s): %s\ncolumn kinds %v, DuckDB %v", i, name, q.SQL, kinds, q.Kinds)
				continue
			}
			if len(rows) != len(q.Rows) {
				t.Errorf("query %d (%s): %s\n%d rows, DuckDB %d: %v", i, name, q.SQL, len(rows), len(q.Rows), firstRows(rows))
				continue
			}
			for r := range rows {
				for c := range rows[r] {
					if !goldenEqual(rows[r][c], q.Rows[r][c]) {
						t.Errorf("query %d (%s): %s\nrow %d column %d: %v, DuckDB %v", i, name, q.SQL, r, c, rows[r][c], q.Rows[r][c])
					}
				}
			}
		}
	}
}

func firstRows(rows [][]any) [][]any {
	return rows[:min(len(rows), 3)]
}

// goldenEqual compares one of our values with DuckDB's as JSON decoded it (numbers are
// float64 there).
func goldenEqual(ours, theirs any) bool {
	switch o := ours.(type) {
	case nil:
		return theirs == nil
	case int64:
		f, ok := theirs.(float64)
		return ok && float64(o) == f
	case float64:
		f, ok := theirs.(float64)
		if !ok {
			return false
		}
		if o == f {
			return true
		}
		return math.Abs(o-f) <= 1e-9*math.Max(math.Abs(o), math.Abs(f))
	}
	return ours == theirs
}

// goldenRows reads a result as column kinds and rows of int64, float64, string, bool or nil;
// timestamps are RFC 3339 UTC strings with microseconds, as gen.py writes DuckDB's.
func goldenRows(t *testing.T, res *result) ([]string, [][]any) {
	t.Helper()
	schema := res.streamSchema
	if schema == nil {
		schema = res.infoSchema
	}
	kinds := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		switch f.Type.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			kinds[i] = "int"
		case arrow.FLOAT32, arrow.FLOAT64, arrow.DECIMAL128:
			// gen.py reads DuckDB's DECIMAL as float too (numerics' exact text is checked
			// against PostgreSQL's by numeric_test.go).
			kinds[i] = "float"
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			kinds[i] = "text"
		case arrow.BOOL:
			kinds[i] = "bool"
		case arrow.TIMESTAMP:
			kinds[i] = "timestamp"
		default:
			kinds[i] = f.Type.String()
		}
	}
	var rows [][]any
	for _, rec := range res.recs {
		for r := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for c := range int(rec.NumCols()) {
				row[c] = goldenValue(rec.Column(c), r)
			}
			rows = append(rows, row)
		}
	}
	return kinds, rows
}

func goldenValue(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch v := a.(type) {
	case *array.Int8:
		return int64(v.Value(i))
	case *array.Int16:
		return int64(v.Value(i))
	case *array.Int32:
		return int64(v.Value(i))
	case *array.Int64:
		return v.Value(i)
	case *array.Uint64:
		return int64(v.Value(i))
	case *array.Float32:
		return float64(v.Value(i))
	case *array.Float64:
		return v.Value(i)
	case *array.Decimal128:
		return v.Value(i).ToFloat64(v.DataType().(*arrow.Decimal128Type).Scale)
	case *array.String:
		return v.Value(i)
	case *array.LargeString:
		return v.Value(i)
	case *array.Binary:
		return string(v.Value(i))
	case *array.Boolean:
		return v.Value(i)
	case *array.Timestamp:
		unit := v.DataType().(*arrow.TimestampType).Unit
		return v.Value(i).ToTime(unit).UTC().Format(goldenTime)
	}
	return fmt.Sprintf("%s:%s", a.DataType(), a.ValueStr(i))
}

var _ = time.Time{}

// goldenTime is how goldenValue spells an instant: RFC 3339 UTC with microseconds, as gen.py
// writes DuckDB's.
const goldenTime = "2006-01-02T15:04:05.000000Z"
