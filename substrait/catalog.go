package substrait

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/substrait-io/substrait-go/v8/types"

	"github.com/flightsrv/flightsrv/routing"
)

// Catalog resolves the routed tables a query may name. Implementations match names
// case-insensitively (routing.TableDef.Name is matched folded to lower case); the SQL front
// end passes identifiers already folded (unquoted identifiers are lower-cased by the
// PostgreSQL grammar, quoted ones keep their case). A Catalog must be safe for concurrent use.
type Catalog interface {
	// Table returns the definition of the table called name, if any.
	Table(name string) (routing.TableDef, bool)
	// Tables returns every table definition (for metadata commands), in a stable order.
	Tables() []routing.TableDef
}

// StaticCatalog is an immutable Catalog over a fixed set of tables. It is safe for
// concurrent use.
type StaticCatalog struct {
	byName map[string]routing.TableDef
	defs   []routing.TableDef
}

var _ Catalog = (*StaticCatalog)(nil)

// NewCatalog validates the definitions and returns a catalog holding them. Names must be
// unique case-insensitively.
func NewCatalog(defs ...routing.TableDef) (*StaticCatalog, error) {
	c := &StaticCatalog{byName: make(map[string]routing.TableDef, len(defs))}
	for _, d := range defs {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("table %q: %w", d.Name, err)
		}
		k := strings.ToLower(d.Name)
		if _, dup := c.byName[k]; dup {
			return nil, fmt.Errorf("substrait: duplicate table name %q", d.Name)
		}
		c.byName[k] = d
		c.defs = append(c.defs, d)
	}
	slices.SortFunc(c.defs, func(a, b routing.TableDef) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return c, nil
}

// Table implements Catalog.
func (c *StaticCatalog) Table(name string) (routing.TableDef, bool) {
	d, ok := c.byName[strings.ToLower(name)]
	return d, ok
}

// Tables implements Catalog; it returns a copy ordered by lower-cased name.
func (c *StaticCatalog) Tables() []routing.TableDef { return slices.Clone(c.defs) }

// Column names of the fixed logical columns of every routed table (docs/pulpitum-v4.md
// §5.1). The partition column is named by routing.TableDef.PartitionColumn.
const (
	TimestampColumn = "timestamp"
	IDColumn        = "id"
	ValueColumn     = "value"
)

// Field positions of the logical schema returned by TableSchema.
const (
	partitionField = iota
	timestampField
	idField
	valueField
	numFields
)

// timestampType is the Arrow type of the timestamp column: instants in nanoseconds, UTC.
var timestampType = &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}

// TableSchema returns the logical Arrow schema of a routed table (docs/pulpitum-v4.md §5.1),
// in this field order:
//
//	<def.PartitionColumn>  utf8                    non-null  (partition_key)
//	timestamp              timestamp[ns, tz=UTC]   non-null  (event_time)
//	id                     utf8                    non-null  (sort_key)
//	value                  binary                  non-null  (value)
func TableSchema(def routing.TableDef) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: def.PartitionColumn, Type: arrow.BinaryTypes.String},
		{Name: TimestampColumn, Type: timestampType},
		{Name: IDColumn, Type: arrow.BinaryTypes.String},
		{Name: ValueColumn, Type: arrow.BinaryTypes.Binary},
	}, nil)
}

// columnNames returns the logical column names in schema order.
func columnNames(def routing.TableDef) []string {
	return []string{def.PartitionColumn, TimestampColumn, IDColumn, ValueColumn}
}

// Substrait types of the logical columns. The timestamp is precision_timestamp_tz<9>, which
// arrow-go's compute/exprs maps to timestamp[ns, tz=UTC]; literals compared with it must be
// precision timestamps of the same unit.
var (
	required        = types.NullabilityRequired
	stringType      = &types.StringType{Nullability: required}
	binaryType      = &types.BinaryType{Nullability: required}
	substraitTSType = &types.PrecisionTimestampTzType{PrecisionTimestampType: types.PrecisionTimestampType{Precision: types.PrecisionNanoSeconds, Nullability: required}}
)

// baseSchema returns the Substrait named struct of the table, matching TableSchema.
func baseSchema(def routing.TableDef) types.NamedStruct {
	return types.NamedStruct{
		Names: columnNames(def),
		Struct: types.StructType{
			Nullability: required,
			Types:       []types.Type{stringType, substraitTSType, stringType, binaryType},
		},
	}
}

// lookupSQLTable resolves a table name of SQL text: PostgreSQL's parser folds an unquoted name
// to lower case and keeps a quoted one as written, and a relation's name must match exactly,
// so the name is the definition's as written ("Events", the name Flight SQL's metadata lists)
// or folded to lower case (events, the definition's name read as an unquoted identifier); any
// other spelling ("Flights" for flights) is 42P01 as in PostgreSQL. A client's Substrait plan
// names tables case-insensitively (lookupTable).
func lookupSQLTable(cat Catalog, name string) (routing.TableDef, error) {
	d, err := lookupTable(cat, name)
	if err == nil && name != d.Name && name != strings.ToLower(d.Name) {
		return routing.TableDef{}, quoting(NotFound, "42P01", "table %q does not exist", name)
	}
	return d, err
}

// lookupTable resolves a table name through the catalog, as a NotFound *Error.
func lookupTable(cat Catalog, name string) (routing.TableDef, error) {
	if cat != nil {
		if d, ok := cat.Table(name); ok {
			return d, nil
		}
	}
	return routing.TableDef{}, quoting(NotFound, "42P01", "table %q does not exist", name)
}
