package flightsql

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
)

// refMatches reports whether a TableRef names one of our tables, returning its name: the
// catalog must be absent or empty, the schema absent or "public"; table names compare
// case-insensitively as unquoted identifiers fold to lower case.
func (s *Server) refMatches(ref flightsql.TableRef) (string, *arrow.Schema, bool) {
	if !catalogMatches(ref.Catalog) || (ref.DBSchema != nil && *ref.DBSchema != DBSchemaName) {
		return "", nil, false
	}
	_, tables := s.tableNames()
	for name, schema := range tables {
		if strings.EqualFold(name, ref.Table) {
			return name, schema, true
		}
	}
	return "", nil, false
}

// GetFlightInfoPrimaryKeys answers CommandGetPrimaryKeys.
func (s *Server) GetFlightInfoPrimaryKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.PrimaryKeys), nil
}

// DoGetPrimaryKeys lists a routed table's logical primary key: (partition column, timestamp,
// id), the physical primary key (partition_key, event_time, sort_key) of pulpitum_v4_records
// within one table (docs/pulpitum-v4.md §1.2), named "<table>_pkey".
func (s *Server) DoGetPrimaryKeys(_ context.Context, ref flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.PrimaryKeys)
	defer b.Release()
	if name, schema, ok := s.refMatches(ref); ok {
		for i, col := range []string{schema.Field(0).Name, "timestamp", "id"} {
			b.Field(0).AppendNull()
			b.Field(1).(*array.StringBuilder).Append(DBSchemaName)
			b.Field(2).(*array.StringBuilder).Append(name)
			b.Field(3).(*array.StringBuilder).Append(col)
			b.Field(4).(*array.Int32Builder).Append(int32(i + 1))
			b.Field(5).(*array.StringBuilder).Append(name + "_pkey")
		}
	}
	return oneBatch(b.NewRecordBatch())
}

// emptyKeys returns no row of the foreign-key schema: routed tables have no foreign keys.
func (s *Server) emptyKeys() (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.ImportedExportedKeysAndCrossReference)
	defer b.Release()
	return oneBatch(b.NewRecordBatch())
}

// GetFlightInfoImportedKeys answers CommandGetImportedKeys (always empty).
func (s *Server) GetFlightInfoImportedKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.ImportedKeys), nil
}

// DoGetImportedKeys returns no foreign key.
func (s *Server) DoGetImportedKeys(context.Context, flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.emptyKeys()
}

// GetFlightInfoExportedKeys answers CommandGetExportedKeys (always empty).
func (s *Server) GetFlightInfoExportedKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.ExportedKeys), nil
}

// DoGetExportedKeys returns no foreign key.
func (s *Server) DoGetExportedKeys(context.Context, flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.emptyKeys()
}

// GetFlightInfoCrossReference answers CommandGetCrossReference (always empty).
func (s *Server) GetFlightInfoCrossReference(_ context.Context, _ flightsql.CrossTableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.CrossReference), nil
}

// DoGetCrossReference returns no foreign key.
func (s *Server) DoGetCrossReference(context.Context, flightsql.CrossTableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.emptyKeys()
}

// xdbcType is one row of GetXdbcTypeInfo: a type the server returns, in the SQL dialect it
// speaks, with its JDBC/ODBC type code.
type xdbcType struct {
	name     string
	dataType int32 // java.sql.Types / ODBC SQL type code
	size     int32
	quoted   bool // literals are written between single quotes
	caseSens bool
}

// xdbcTypes are the column types of routed tables and results: TEXT (VARCHAR 12), BYTEA
// (VARBINARY -3), TIMESTAMPTZ (TIMESTAMP 93; the zone is UTC), BIGINT (BIGINT -5, COUNT).
var xdbcTypes = []xdbcType{
	{"BIGINT", -5, 19, false, false},
	{"BYTEA", -3, 1 << 30, true, false},
	{"TEXT", 12, 1 << 30, true, true},
	{"TIMESTAMPTZ", 93, 35, true, false},
}

// GetFlightInfoXdbcTypeInfo answers CommandGetXdbcTypeInfo.
func (s *Server) GetFlightInfoXdbcTypeInfo(_ context.Context, _ flightsql.GetXdbcTypeInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.XdbcTypeInfo), nil
}

// DoGetXdbcTypeInfo lists the server's types, filtered by data type when asked.
func (s *Server) DoGetXdbcTypeInfo(_ context.Context, cmd flightsql.GetXdbcTypeInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.XdbcTypeInfo)
	defer b.Release()
	for _, t := range xdbcTypes {
		if f := cmd.GetDataType(); f != nil && *f != t.dataType {
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(t.name)
		b.Field(1).(*array.Int32Builder).Append(t.dataType)
		b.Field(2).(*array.Int32Builder).Append(t.size)
		for _, f := range []int{3, 4} {
			if t.quoted {
				b.Field(f).(*array.StringBuilder).Append("'")
			} else {
				b.Field(f).AppendNull()
			}
		}
		lb := b.Field(5).(*array.ListBuilder)
		lb.Append(true)
		b.Field(6).(*array.Int32Builder).Append(0) // columnNoNulls: routed columns are NOT NULL
		b.Field(7).(*array.BooleanBuilder).Append(t.caseSens)
		b.Field(8).(*array.Int32Builder).Append(3) // searchable
		b.Field(9).(*array.BooleanBuilder).Append(false)
		b.Field(10).(*array.BooleanBuilder).Append(false)
		b.Field(11).(*array.BooleanBuilder).Append(false)
		b.Field(12).(*array.StringBuilder).Append(t.name)
		b.Field(13).AppendNull()
		b.Field(14).AppendNull()
		b.Field(15).(*array.Int32Builder).Append(t.dataType)
		b.Field(16).AppendNull()
		if t.dataType == -5 {
			b.Field(17).(*array.Int32Builder).Append(10)
		} else {
			b.Field(17).AppendNull()
		}
		b.Field(18).AppendNull()
	}
	return oneBatch(b.NewRecordBatch())
}
