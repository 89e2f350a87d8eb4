package substrait

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestCastParameterTypes: the declared types of cast parameters, as PostgreSQL declares them
// (text; timestamp without time zone), a text parameter cast to timestamptz as a routed bound
// at prepare time, and a parameter used both as timestamp and timestamptz refused, as
// PostgreSQL refuses inconsistent parameter types.
func TestCastParameterTypes(t *testing.T) {
	t.Parallel()
	wall := &arrow.TimestampType{Unit: arrow.Millisecond}
	for _, c := range []struct {
		sql  string
		want []arrow.DataType
	}{
		{"SELECT CAST(? AS text)::timestamptz", []arrow.DataType{arrow.BinaryTypes.String}},
		{"SELECT CAST($1 AS timestamp), $1::timestamp", []arrow.DataType{wall}},
		{"SELECT id FROM messages WHERE channel_id = $1 AND timestamp >= CAST($2 AS text)::timestamptz AND timestamp < $3::timestamp ORDER BY id",
			[]arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.String, wall}},
	} {
		st, err := Prepare(c.sql, testCatalog(t))
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		ps := st.ParameterSchema()
		if ps.NumFields() != len(c.want) {
			t.Errorf("%s: parameters %s", c.sql, ps)
			continue
		}
		for i, w := range c.want {
			if !arrow.TypeEqual(ps.Field(i).Type, w) {
				t.Errorf("%s: $%d is %s, want %s", c.sql, i+1, ps.Field(i).Type, w)
			}
		}
	}
	_, err := Prepare("SELECT CAST($1 AS timestamp), $1::timestamptz", testCatalog(t))
	if code, _ := CodeOf(err); code != InvalidArgument || err.Error() != "substrait: parameter $1 is used both as timestamp without time zone and as timestamp with time zone" {
		t.Errorf("inconsistent types: %v", err)
	}
}
