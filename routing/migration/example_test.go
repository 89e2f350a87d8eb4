package migration_test

import (
	"errors"
	"fmt"

	"github.com/flightsrv/flightsrv/routing/migration"
)

func ExamplePlan() {
	known := []migration.Migration{
		{Version: 4, Name: "baseline", SQL: "CREATE TABLE a (x BIGINT)"},
		{Version: 5, Name: "add_b", SQL: "CREATE TABLE b (x BIGINT)"},
	}
	applied := []migration.Applied{{Version: 4, Name: "baseline", Checksum: known[0].Checksum()}}
	pending, err := migration.Plan(known, applied)
	fmt.Println(len(pending), pending[0].Name, err)

	applied[0].Checksum = migration.Checksum("CREATE TABLE a (x TEXT)")
	_, err = migration.Plan(known, applied)
	var drift *migration.ChecksumDriftError
	fmt.Println(errors.As(err, &drift), drift.Version)
	// Output:
	// 1 add_b <nil>
	// true 4
}
