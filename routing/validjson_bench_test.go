package routing

import "testing"

// BenchmarkValidJSON measures the write fence's JSON check of one demo-sized value
// (TableDef.JSONValues): about 100 bytes, as `flightsrv load` encodes the demo's columns.
func BenchmarkValidJSON(b *testing.B) {
	v := []byte(`{"destination":"LAX","delay":15,"distance":1745,"carrier":"AA","tail":"N123AA","note":null}`)
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if !validJSON(v) {
			b.Fatal("not JSON")
		}
	}
}
