package routing

import (
	"testing"
	"time"
)

// TestDamageMemoryOption: a table remembers damaged routes for Options.DamageMemory, and for
// DamageMemory when the option is not set (serve --damage-memory reaches it).
func TestDamageMemoryOption(t *testing.T) {
	def := TableDef{Name: "flights", TableID: "flights", PartitionColumn: "origin", Strategy: CalendarMonthUTC, WritableBuckets: 1}
	for opt, want := range map[time.Duration]time.Duration{0: DamageMemory, time.Minute: time.Minute, 2 * time.Hour: 2 * time.Hour} {
		tbl, err := NewDurableTable(def, struct{ HotStore }{}, nil, Options{DamageMemory: opt})
		if err != nil {
			t.Fatal(err)
		}
		if tbl.damage.memory != want {
			t.Errorf("Options.DamageMemory %v: damaged routes remembered for %v, want %v", opt, tbl.damage.memory, want)
		}
	}
}
