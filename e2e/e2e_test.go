package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	_ "github.com/apache/arrow-go/v18/arrow/flight/flightsql/driver"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/flightsrv/flightsrv/server"
)

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func dial(t *testing.T, srv *server.Server) *flightsql.Client {
	t.Helper()
	// A user agent of its own, as JDBC and ADBC have: the server declares no parameter schema
	// to arrow-go's own client (grpc-go's user agent), for its database/sql driver's sake.
	cl, err := flightsql.NewClient(srv.Addr(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("flightsrv-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// executeWith binds the one row built in b (which it releases) to stmt, executes it and
// fetches the result (released by the caller).
func executeWith(t *testing.T, ctx context.Context, cl *flightsql.Client, stmt *flightsql.PreparedStatement, b *array.RecordBuilder) *result {
	t.Helper()
	params := b.NewRecordBatch()
	b.Release()
	stmt.SetParameters(params)
	params.Release()
	info, err := stmt.Execute(ctx)
	if err != nil {
		t.Fatalf("execute the prepared statement: %v", err)
	}
	res, err := fetch(ctx, cl, info)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// anyRangeParams builds the parameters of `origin = ANY($1) AND timestamp >= $2 AND timestamp
// < $3`: one row of a list<utf8> of origins and two timestamps in unit, zone UTC. executeWith
// releases the builder.
func anyRangeParams(origins []string, from, to time.Time, unit arrow.TimeUnit) *array.RecordBuilder {
	tsType := &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.ListOf(arrow.BinaryTypes.String)}, {Name: "b", Type: tsType}, {Name: "c", Type: tsType}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	lb := b.Field(0).(*array.ListBuilder)
	lb.Append(true)
	for _, o := range origins {
		lb.ValueBuilder().(*array.StringBuilder).Append(o)
	}
	for i, t := range []time.Time{from, to} {
		v, err := arrow.TimestampFromTime(t, unit)
		if err != nil {
			panic(err)
		}
		b.Field(1 + i).(*array.TimestampBuilder).Append(v)
	}
	return b
}

// dialAnalytical returns a client (with a cookie middleware, as JDBC and ADBC have) whose
// session has the analytical mode on (session option analytical = on).
func dialAnalytical(t *testing.T, srv *server.Server) *flightsql.Client {
	t.Helper()
	cl, err := flightsql.NewClient(srv.Addr(), nil, []flight.ClientMiddleware{flight.NewClientCookieMiddleware()},
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent("flightsrv-e2e"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	opts, err := flight.NewSessionOptionValues(map[string]any{"analytical": "on"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.SetSessionOptions(context.Background(), &flight.SetSessionOptionsRequest{SessionOptions: opts})
	if err != nil || len(res.GetErrors()) > 0 {
		t.Fatalf("SetSessionOptions analytical = on: %v %v", res.GetErrors(), err)
	}
	return cl
}

// result is a query's FlightInfo schema, DoGet schema and batches (released by the caller via
// release).
type result struct {
	infoSchema, streamSchema *arrow.Schema
	recs                     []arrow.RecordBatch
	batchRows                []int64
}

func (r *result) release() {
	for _, rec := range r.recs {
		rec.Release()
	}
}

func fetch(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo) (*result, error) {
	schema, err := flight.DeserializeSchema(info.Schema, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	res := &result{infoSchema: schema}
	for _, ep := range info.Endpoint {
		rdr, err := cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return res, err
		}
		res.streamSchema = rdr.Schema()
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			res.recs = append(res.recs, rec)
			res.batchRows = append(res.batchRows, rec.NumRows())
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

func run(ctx context.Context, cl *flightsql.Client, query string) (*result, error) {
	info, err := cl.Execute(ctx, query)
	if err != nil {
		return nil, err
	}
	return fetch(ctx, cl, info)
}

func mustRun(t *testing.T, cl *flightsql.Client, query string) *result {
	t.Helper()
	res, err := run(context.Background(), cl, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	t.Cleanup(res.release)
	if !res.infoSchema.Equal(res.streamSchema) && res.streamSchema != nil {
		t.Fatalf("FlightInfo schema %s differs from DoGet schema %s", res.infoSchema, res.streamSchema)
	}
	for i, n := range res.batchRows {
		if n == 0 {
			t.Fatalf("batch %d of %d is empty", i, len(res.batchRows))
		}
	}
	return res
}

func scalarCount(t *testing.T, res *result) int64 {
	t.Helper()
	if len(res.recs) != 1 || res.recs[0].NumRows() != 1 {
		t.Fatalf("want one row, got batches %v", res.batchRows)
	}
	return res.recs[0].Column(0).(*array.Int64).Value(0)
}

func countSQL(origin string, from, to time.Time) string {
	return fmt.Sprintf("SELECT COUNT(*) FROM flights WHERE origin = '%s' AND timestamp >= TIMESTAMPTZ '%s' AND timestamp < TIMESTAMPTZ '%s'",
		origin, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
}

// rowsOf converts result batches of (timestamp, id, value) to flights.
func rowsOf(t *testing.T, res *result, origin string) []row {
	t.Helper()
	var out []row
	for _, rec := range res.recs {
		tsCol := rec.Column(0).(*array.Timestamp)
		ids := rec.Column(1).(*array.String)
		vals := rec.Column(2).(*array.Binary)
		for i := range int(rec.NumRows()) {
			f := row{origin: origin, at: tsCol.Value(i).ToTime(arrow.Nanosecond).UTC(), id: ids.Value(i)}
			if _, err := fmt.Sscanf(string(vals.Value(i)), `{"delay":%d,"distance":%d,"destination":%q}`, &f.delay, &f.distance, &f.dest); err != nil {
				t.Fatalf("value %q: %v", vals.Value(i), err)
			}
			out = append(out, f)
		}
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	e := newEnv(t)
	on, off := dial(t, e.on), dial(t, e.off)
	ctx := context.Background()

	t.Run("seed COUNT shape across hot and archived buckets", func(t *testing.T) {
		cases := []struct {
			origin   string
			from, to time.Time
		}{
			// The seed's shape: one busy airport, a range crossing the March/April boundary,
			// archived (Parquet) March and archiving/hot April.
			{"ORD", ts("2001-03-15T00:00:00Z"), ts("2001-04-15T00:00:00Z")},
			{"ORD", ts("2001-01-01T00:00:00Z"), ts("2001-08-01T00:00:00Z")}, // whole history: JSON, Parquet, archiving, hot
			{"ORD", ts("2001-01-10T06:30:00Z"), ts("2001-02-03T12:00:00Z")}, // JSON January into Parquet February
			{"ORD", ts("2001-02-01T00:00:00Z"), ts("2001-03-01T00:00:00Z")}, // exactly one archived bucket
			{"SFO", ts("2001-03-31T23:00:00Z"), ts("2001-04-01T01:00:00Z")}, // two hours around the cut-over
			{"SFO", ts("2001-05-01T00:00:00Z"), ts("2001-07-01T00:00:01Z")}, // hot only, the last second of data
			{"BOS", ts("2000-01-01T00:00:00Z"), ts("2002-01-01T00:00:00Z")}, // empty buckets before and after
			{"XXX", ts("2001-01-01T00:00:00Z"), ts("2001-08-01T00:00:00Z")}, // unknown partition: zero
		}
		for _, c := range cases {
			want := int64(len(expected(e.sample, c.origin, c.from, c.to)))
			q := countSQL(c.origin, c.from, c.to)
			gotOn := scalarCount(t, mustRun(t, on, q))
			gotOff := scalarCount(t, mustRun(t, off, q))
			if gotOn != want || gotOff != want {
				t.Errorf("%s [%s, %s): pushdown %d, scan %d, reference %d", c.origin, c.from, c.to, gotOn, gotOff, want)
			}
		}
		if want := len(expected(e.sample, "ORD", ts("2001-03-15T00:00:00Z"), ts("2001-04-15T00:00:00Z"))); want < 1000 {
			t.Fatalf("the seed case counts only %d flights", want)
		}
	})

	t.Run("seed query as written", func(t *testing.T) {
		res := mustRun(t, on, `SELECT COUNT(*)
FROM flights
WHERE origin = 'ORD'
  AND timestamp >= TIMESTAMPTZ '2001-01-01T00:00:00Z'
  AND timestamp < TIMESTAMPTZ '2002-01-01T00:00:00Z';`)
		if got, want := scalarCount(t, res), int64(len(expected(e.sample, "ORD", ts("2001-01-01T00:00:00Z"), ts("2002-01-01T00:00:00Z")))); got != want {
			t.Fatalf("count %d, reference %d", got, want)
		}
		if f := res.infoSchema.Field(0); f.Name != "count" || f.Type.ID() != arrow.INT64 || f.Nullable {
			t.Fatalf("count field %v", f)
		}
	})

	t.Run("LIMIT 100 records in order", func(t *testing.T) {
		from, to := ts("2001-03-31T00:00:00Z"), ts("2001-04-02T00:00:00Z")
		all := expected(e.sample, "ORD", from, to)
		for _, desc := range []bool{false, true} {
			dir := "ASC"
			want := all
			if desc {
				dir = "DESC"
				want = make([]row, len(all))
				for i := range all {
					want[i] = all[len(all)-1-i]
				}
			}
			want = want[:100]
			q := fmt.Sprintf("SELECT timestamp, id, value FROM flights WHERE origin = 'ORD' AND timestamp >= '%s' AND timestamp < '%s' ORDER BY timestamp %s, id %s LIMIT 100",
				from.Format(time.RFC3339), to.Format(time.RFC3339), dir, dir)
			for _, cl := range []*flightsql.Client{on, off} {
				got := rowsOf(t, mustRun(t, cl, q), "ORD")
				if len(got) != len(want) {
					t.Fatalf("%s: %d rows, want %d", dir, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s row %d: got %+v, want %+v", dir, i, got[i], want[i])
					}
				}
			}
		}
	})

	t.Run("all records of a range equal the reference", func(t *testing.T) {
		from, to := ts("2001-01-01T00:00:00Z"), ts("2001-08-01T00:00:00Z")
		want := expected(e.sample, "SFO", from, to)
		got := rowsOf(t, mustRun(t, on, "SELECT timestamp, id, value FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z' ORDER BY timestamp, id"), "SFO")
		if len(got) != len(want) {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("row %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	})

	t.Run("prepared statement with bound parameters", func(t *testing.T) {
		from, to := ts("2001-03-20T00:00:00Z"), ts("2001-04-10T00:00:00Z")
		want := int64(len(expected(e.sample, "ORD", from, to)))
		for _, q := range []string{
			"SELECT COUNT(*) FROM flights WHERE origin = $1 AND timestamp >= $2 AND timestamp < $3",
			"SELECT COUNT(*) FROM flights WHERE origin = ? AND ? <= timestamp AND ? > timestamp",
		} {
			stmt, err := on.Prepare(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			ps := stmt.ParameterSchema()
			if ps.NumFields() != 3 || ps.Field(0).Type.ID() != arrow.STRING || ps.Field(1).Type.ID() != arrow.TIMESTAMP {
				t.Fatalf("parameter schema %s", ps)
			}
			tsType := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
			schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: tsType}, {Name: "c", Type: tsType}}, nil)
			b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
			b.Field(0).(*array.StringBuilder).Append("ORD")
			b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(from.UnixMicro()))
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(to.UnixMicro()))
			res := executeWith(t, ctx, on, stmt, b)
			if got := scalarCount(t, res); got != want {
				t.Fatalf("%s: count %d, want %d", q, got, want)
			}
			res.release()
			if err := stmt.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := stmt.Close(ctx); err == nil {
				// arrow-go's client refuses a second Close locally; the server side is
				// idempotent (see flightsql tests). Nothing to assert here.
			}
		}
	})

	t.Run("= ANY($1) bound to a list", func(t *testing.T) {
		from, to := ts("2001-03-20T00:00:00Z"), ts("2001-04-10T00:00:00Z")
		origins := []string{"SFO", "ORD", "XXX"}
		want := int64(len(expected(e.sample, "ORD", from, to)) + len(expected(e.sample, "SFO", from, to)))
		stmt, err := on.Prepare(ctx, "SELECT COUNT(*) FROM flights WHERE origin = ANY($1) AND timestamp >= $2 AND timestamp < $3")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close(ctx)
		ps := stmt.ParameterSchema()
		if ps.NumFields() != 3 || ps.Field(0).Type.ID() != arrow.LIST || ps.Field(0).Type.(*arrow.ListType).Elem().ID() != arrow.STRING {
			t.Fatalf("parameter schema %s", ps)
		}
		res := executeWith(t, ctx, on, stmt, anyRangeParams(origins, from, to, arrow.Nanosecond))
		defer res.release()
		if got := scalarCount(t, res); got != want || want == 0 {
			t.Fatalf("count %d, want %d", got, want)
		}
	})

	t.Run("database/sql driver", func(t *testing.T) {
		db, err := sql.Open("flightsql", "flightsql://"+e.on.Addr()+"?timeout=30s")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		from, to := ts("2001-01-15T00:00:00Z"), ts("2001-06-15T00:00:00Z")
		var n int64
		q := fmt.Sprintf("SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= '%s' AND timestamp < '%s'", from.Format(time.RFC3339), to.Format(time.RFC3339))
		if err := db.QueryRowContext(ctx, q, "BOS").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := int64(len(expected(e.sample, "BOS", from, to))); n != want {
			t.Fatalf("count %d, want %d", n, want)
		}
		rows, err := db.QueryContext(ctx, "SELECT id, timestamp FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31T12:00:00Z' AND timestamp < '2001-04-01T12:00:00Z' ORDER BY timestamp, id LIMIT 5")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		want := expected(e.sample, "BOS", ts("2001-03-31T12:00:00Z"), ts("2001-04-01T12:00:00Z"))[:5]
		i := 0
		for rows.Next() {
			var id string
			var at time.Time
			if err := rows.Scan(&id, &at); err != nil {
				t.Fatal(err)
			}
			if id != want[i].id || !at.Equal(want[i].at) {
				t.Fatalf("row %d: %s %s, want %s %s", i, id, at, want[i].id, want[i].at)
			}
			i++
		}
		if err := rows.Err(); err != nil || i != 5 {
			t.Fatalf("rows: %d, %v", i, err)
		}
	})

	t.Run("rejected predicate shapes", func(t *testing.T) {
		const lo, hi = "TIMESTAMPTZ '2001-03-01T00:00:00Z'", "TIMESTAMPTZ '2001-04-01T00:00:00Z'"
		needOrigin := "flights needs origin = <value> (several partitions: origin IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)"
		cases := []struct {
			where string
			want  string
		}{
			{"origin = 'ORD' AND timestamp < " + hi, "flights needs timestamp >= <start>"},
			{"origin = 'ORD' AND timestamp >= " + lo, "flights needs timestamp < <end>"},
			{"timestamp >= " + lo + " AND timestamp < " + hi, needOrigin},
			{"id = 'x'", "flights needs origin = <value> and timestamp >= <start> AND timestamp < <end> (several partitions: origin IN (…) or = ANY($1); every partition of the range: the analytical mode, session option analytical = on)"},
			{"(origin = 'ORD' OR id = 'x') AND timestamp >= " + lo + " AND timestamp < " + hi, needOrigin},
			{"origin <> 'ORD' AND timestamp >= " + lo + " AND timestamp < " + hi, needOrigin},
		}
		for _, c := range cases {
			for _, sel := range []string{"COUNT(*)", "id"} {
				q := "SELECT " + sel + " FROM flights WHERE " + c.where
				_, err := run(ctx, on, q)
				st, _ := status.FromError(err)
				if st.Code() != codes.InvalidArgument || st.Message() != c.want {
					t.Errorf("%s:\n got %v %q\nwant InvalidArgument %q", q, st.Code(), st.Message(), c.want)
				}
				if strings.Contains(st.Message(), "ORD") || strings.Contains(st.Message(), "2001") {
					t.Errorf("%s: error leaks a value: %q", q, st.Message())
				}
			}
		}
	})

	t.Run("the route is taken from anywhere in the conjunction", func(t *testing.T) {
		const lo, hi = "TIMESTAMPTZ '2001-03-01T00:00:00Z'", "TIMESTAMPTZ '2001-04-01T00:00:00Z'"
		from, to := ts("2001-03-01T00:00:00Z"), ts("2001-04-01T00:00:00Z")
		// want counts the sample's flights of the origins whose time and id pass keep.
		want := func(origins []string, keep func(f row) bool) int64 {
			var n int64
			for _, f := range e.sample {
				if slices.Contains(origins, f.origin) && keep(f) {
					n++
				}
			}
			return n
		}
		inRange := func(f row) bool { return !f.at.Before(from) && f.at.Before(to) }
		ord := []string{"ORD"}
		cases := []struct {
			where string
			want  int64
		}{
			{"origin = 'ORD' AND timestamp > " + lo + " AND timestamp < " + hi, want(ord, func(f row) bool { return f.at.After(from) && f.at.Before(to) })},
			{"origin = 'ORD' AND timestamp >= " + lo + " AND timestamp <= " + hi, want(ord, func(f row) bool { return !f.at.Before(from) && !f.at.After(to) })},
			{"origin = 'ORD' AND " + lo + " < timestamp AND timestamp < " + hi, want(ord, func(f row) bool { return f.at.After(from) && f.at.Before(to) })},
			{"origin = 'ORD' AND timestamp >= " + lo + " AND " + hi + " >= timestamp", want(ord, func(f row) bool { return !f.at.Before(from) && !f.at.After(to) })},
			{"origin = 'ORD' AND timestamp BETWEEN " + lo + " AND " + hi, want(ord, func(f row) bool { return !f.at.Before(from) && !f.at.After(to) })},
			{"origin IN ('ORD') AND timestamp >= " + lo + " AND timestamp < " + hi, want(ord, inRange)},
			{"origin IN ('ORD', 'SFO', 'XXX') AND timestamp >= " + lo + " AND timestamp < " + hi, want([]string{"ORD", "SFO"}, inRange)},
			{"id >= '0001000000' AND origin = 'ORD' AND timestamp >= " + lo + " AND timestamp < " + hi, want(ord, func(f row) bool { return inRange(f) && f.id >= "0001000000" })},
			{"origin = 'ORD' AND timestamp >= " + lo + " AND timestamp >= " + lo + " AND timestamp < " + hi + " AND timestamp < '2001-12-01'", want(ord, inRange)},
			{"timestamp < " + hi + " AND 'ORD' = origin AND timestamp >= '2001-03-15' AND timestamp >= " + lo, want(ord, func(f row) bool { return !f.at.Before(ts("2001-03-15T00:00:00Z")) && f.at.Before(to) })},
			{"origin = 'ORD' AND timestamp >= '1000-01-01' AND timestamp < '9999-12-31'", want(ord, func(row) bool { return true })},
		}
		for _, c := range cases {
			q := "SELECT COUNT(*) FROM flights WHERE " + c.where
			for _, cl := range []*flightsql.Client{on, off} {
				if got := scalarCount(t, mustRun(t, cl, q)); got != c.want || c.want == 0 {
					t.Errorf("%s: %d, want %d (non-zero)", q, got, c.want)
				}
			}
			// The rows themselves, counted by the client.
			res := mustRun(t, on, "SELECT id FROM flights WHERE "+c.where)
			var n int64
			for _, r := range res.recs {
				n += r.NumRows()
			}
			if n != c.want {
				t.Errorf("SELECT id … WHERE %s: %d rows, want %d", c.where, n, c.want)
			}
		}
	})

	t.Run("both operand orders give the same answer", func(t *testing.T) {
		a := scalarCount(t, mustRun(t, on, "SELECT COUNT(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-15T00:00:00Z' AND timestamp < '2001-04-15T00:00:00Z'"))
		b := scalarCount(t, mustRun(t, on, "SELECT COUNT(*) FROM flights WHERE '2001-04-15T00:00:00Z' > timestamp AND 'ORD' = origin AND '2001-03-15T00:00:00Z' <= timestamp"))
		if a != b {
			t.Fatalf("%d != %d", a, b)
		}
	})

	t.Run("unsupported SQL and unknown names", func(t *testing.T) {
		where := " WHERE origin = 'ORD' AND timestamp >= '2001-03-01T00:00:00Z' AND timestamp < '2001-04-01T00:00:00Z'"
		cases := map[string]codes.Code{
			"SELECT f.id FROM flights f JOIN flights g ON f.id = g.id" + where:                                                                codes.InvalidArgument, // origin is ambiguous
			"SELECT id FROM flights f" + where + " AND EXISTS (SELECT 1 FROM flights g WHERE g.id < f.id)":                                    codes.InvalidArgument, // g needs its route
			"SELECT id, ARRAY (SELECT g.id FROM flights g) FROM flights f" + where:                                                            codes.Unimplemented,
			"WITH RECURSIVE r(id) AS (SELECT id FROM flights" + where + " UNION ALL SELECT id FROM r) CYCLE id SET c USING p SELECT * FROM r": codes.Unimplemented,
			"INSERT INTO flights (origin, timestamp, id, value) VALUES ('ORD', now(), 'x', 'y')":                                              codes.Unimplemented,
			"SELECT id FROM nosuchtable" + where:                                                                                              codes.NotFound,
			"SELECT nosuchcolumn FROM flights" + where:                                                                                        codes.InvalidArgument,
			"SELEC id FROM flights": codes.InvalidArgument,
		}
		for q, want := range cases {
			_, err := run(ctx, on, q)
			if got := status.Code(err); got != want {
				t.Errorf("%s: code %v (%v), want %v", q, got, err, want)
			}
		}
	})

	t.Run("GetSchema equals the DoGet schema", func(t *testing.T) {
		q := "SELECT id AS flight, timestamp FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01T00:00:00Z' AND timestamp < '2001-04-02T00:00:00Z' LIMIT 3"
		sr, err := on.GetExecuteSchema(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		schema, err := flight.DeserializeSchema(sr.GetSchema(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		res := mustRun(t, on, q)
		if !schema.Equal(res.streamSchema) || schema.Field(0).Name != "flight" {
			t.Fatalf("GetSchema %s, DoGet %s", schema, res.streamSchema)
		}
		empty := mustRun(t, on, "SELECT * FROM flights WHERE origin = 'XXX' AND timestamp >= '2001-04-01T00:00:00Z' AND timestamp < '2001-04-02T00:00:00Z'")
		if len(empty.recs) != 0 || !empty.streamSchema.Equal(empty.infoSchema) || empty.streamSchema.NumFields() != 4 {
			t.Fatalf("empty result: %d batches, schema %s", len(empty.recs), empty.streamSchema)
		}
	})

	t.Run("metadata commands", func(t *testing.T) {
		testMetadata(t, on)
	})

	t.Run("golden SQL corpus against PostgreSQL and DuckDB", func(t *testing.T) {
		testGolden(t, e, on, off, dialAnalytical(t, e.on), dialAnalytical(t, e.off))
	})

	t.Run("no leaked Arrow memory", func(t *testing.T) {
		deadline := time.Now().Add(5 * time.Second)
		for e.alloc.CurrentAlloc() != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := e.alloc.CurrentAlloc(); n != 0 {
			t.Fatalf("%d bytes of Arrow memory still allocated", n)
		}
	})
}
