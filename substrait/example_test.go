package substrait_test

import (
	"fmt"

	"github.com/flightsrv/flightsrv/routing"
	"github.com/flightsrv/flightsrv/substrait"
)

// Example prepares a qmark-style statement, binds it and prints its Substrait plan.
func Example() {
	cat, err := substrait.NewCatalog(routing.TableDef{Name: "messages", TableID: "chat", PartitionColumn: "channel_id", Strategy: routing.CalendarMonthUTC, WritableBuckets: 2})
	if err != nil {
		panic(err)
	}
	stmt, err := substrait.Prepare(`SELECT id, timestamp FROM messages
		WHERE channel_id = ? AND timestamp >= ? AND timestamp < ?
		ORDER BY timestamp DESC LIMIT ?`, cat)
	if err != nil {
		panic(err)
	}
	fmt.Println(stmt.ParameterSchema().Fields())
	p, err := stmt.Bind("general", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", 10)
	if err != nil {
		panic(err)
	}
	fmt.Print(substrait.Explain(p))

	_, err = substrait.FromSQL(`SELECT * FROM messages WHERE channel_id = 'general' AND timestamp > '2026-01-01'`, cat)
	code, _ := substrait.CodeOf(err)
	fmt.Println(code, err)
	// Output:
	// [$1: type=utf8, nullable $2: type=timestamp[ms, tz=UTC], nullable $3: type=timestamp[ms, tz=UTC], nullable $4: type=int64, nullable]
	// Root [id, timestamp]
	//   Fetch count=10
	//     Sort [timestamp DESC]
	//       Project [id, timestamp]
	//         Filter channel_id = <value> AND timestamp >= <value> AND timestamp < <value>
	//           Read messages [channel_id, timestamp, id, value]
	// INVALID_ARGUMENT substrait: messages needs timestamp < <end>
}
