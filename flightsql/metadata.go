package flightsql

import (
	"context"
	"runtime/debug"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// metaTicket returns the ticket of a metadata command: the command itself, so each metadata
// ticket routes back to its own handler.
func (s *Server) metaInfo(desc *flight.FlightDescriptor, schema *arrow.Schema) *flight.FlightInfo {
	return s.flightInfo(desc, schema, desc.Cmd)
}

// oneBatch streams rec (taking ownership) as the only batch.
func oneBatch(rec arrow.RecordBatch) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	ch := make(chan flight.StreamChunk, 1)
	if rec.NumRows() > 0 {
		ch <- flight.StreamChunk{Data: rec}
	} else {
		rec.Release()
	}
	close(ch)
	return rec.Schema(), ch, nil
}

// GetFlightInfoCatalogs answers CommandGetCatalogs.
func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.Catalogs), nil
}

// DoGetCatalogs returns no catalogs: flightsrv has a single unnamed catalog.
func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.Catalogs)
	defer b.Release()
	return oneBatch(b.NewRecordBatch())
}

// GetFlightInfoSchemas answers CommandGetDbSchemas.
func (s *Server) GetFlightInfoSchemas(_ context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.DBSchemas), nil
}

// catalogMatches reports whether a catalog filter admits the unnamed catalog: no filter or
// the empty string (which the spec defines as "without a catalog").
func catalogMatches(c *string) bool { return c == nil || *c == "" }

// DoGetDBSchemas lists the single schema "public" when the filters admit it.
func (s *Server) DoGetDBSchemas(_ context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.DBSchemas)
	defer b.Release()
	if catalogMatches(cmd.GetCatalog()) && likeMatch(cmd.GetDBSchemaFilterPattern(), DBSchemaName) {
		b.Field(0).AppendNull()
		b.Field(1).(*array.StringBuilder).Append(DBSchemaName)
	}
	return oneBatch(b.NewRecordBatch())
}

// GetFlightInfoTables answers CommandGetTables; the schema depends on include_schema.
func (s *Server) GetFlightInfoTables(_ context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	return s.metaInfo(desc, schema), nil
}

// DoGetTables lists the routed tables matching the filters, with their IPC-serialized schemas
// when include_schema is set.
func (s *Server) DoGetTables(_ context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	b := array.NewRecordBuilder(s.alloc, schema)
	defer b.Release()
	typeOK := len(cmd.GetTableTypes()) == 0
	for _, t := range cmd.GetTableTypes() {
		typeOK = typeOK || strings.EqualFold(t, TableType)
	}
	if typeOK && catalogMatches(cmd.GetCatalog()) && likeMatch(cmd.GetDBSchemaFilterPattern(), DBSchemaName) {
		names, tables := s.tableNames()
		for _, name := range names {
			if !likeMatch(cmd.GetTableNameFilterPattern(), name) {
				continue
			}
			b.Field(0).AppendNull()
			b.Field(1).(*array.StringBuilder).Append(DBSchemaName)
			b.Field(2).(*array.StringBuilder).Append(name)
			b.Field(3).(*array.StringBuilder).Append(TableType)
			if cmd.GetIncludeSchema() {
				b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(withColumnMetadata(name, tables[name]), memory.DefaultAllocator))
			}
		}
	}
	return oneBatch(b.NewRecordBatch())
}

// withColumnMetadata adds the ARROW:FLIGHT:SQL:* keys BI tools read to each field.
func withColumnMetadata(table string, schema *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, schema.NumFields())
	for i, f := range schema.Fields() {
		mb := flightsql.NewColumnMetadataBuilder().
			SchemaName(DBSchemaName).TableName(table).TypeName(sqlTypeName(f.Type)).
			IsAutoIncrement(false).IsReadOnly(true).IsSearchable(true).
			IsCaseSensitive(f.Type.ID() == arrow.STRING)
		if ts, ok := f.Type.(*arrow.TimestampType); ok {
			mb = mb.Precision(int32(26)).Scale(int32(ts.Unit) * 3)
		}
		f.Metadata = mb.Metadata()
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil)
}

// sqlTypeName names an Arrow type in the PostgreSQL/CockroachDB dialect the server speaks.
func sqlTypeName(t arrow.DataType) string {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "TEXT"
	case arrow.BINARY, arrow.LARGE_BINARY:
		return "BYTEA"
	case arrow.TIMESTAMP:
		return "TIMESTAMPTZ"
	case arrow.UINT64:
		return "NUMERIC"
	case arrow.INT64, arrow.UINT32:
		return "INT8"
	case arrow.INT32:
		return "INT4"
	case arrow.BOOL:
		return "BOOL"
	case arrow.FLOAT64:
		return "FLOAT8"
	}
	return strings.ToUpper(t.Name())
}

// GetFlightInfoTableTypes answers CommandGetTableTypes.
func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.metaInfo(desc, schema_ref.TableTypes), nil
}

// DoGetTableTypes lists the one table type, spelled as GetTables spells it.
func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.alloc, schema_ref.TableTypes)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).Append(TableType)
	return oneBatch(b.NewRecordBatch())
}

// likeMatch matches s against a Flight SQL filter pattern (SQL LIKE: % any run, _ one
// character, \ escapes); a nil pattern matches everything.
func likeMatch(pattern *string, s string) bool {
	if pattern == nil {
		return true
	}
	return like([]rune(*pattern), []rune(s))
}

func like(p, s []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			for len(p) > 0 && p[0] == '%' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if like(p, s[i:]) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
		}
		p, s = p[1:], s[1:]
	}
	return len(s) == 0
}

// registerSqlInfo registers the GetSqlInfo answers (ADBC GetInfo needs them).
func registerSqlInfo(b *flightsql.BaseServer, version string) error {
	if version == "" {
		version = "dev"
	}
	infos := []struct {
		id  flightsql.SqlInfo
		val any
	}{
		{flightsql.SqlInfoFlightSqlServerName, "flightsrv"},
		{flightsql.SqlInfoFlightSqlServerVersion, version},
		{flightsql.SqlInfoFlightSqlServerArrowVersion, arrowVersion},
		{flightsql.SqlInfoFlightSqlServerReadOnly, true},
		{flightsql.SqlInfoFlightSqlServerSql, true},
		{flightsql.SqlInfoFlightSqlServerSubstrait, true},
		{flightsql.SqlInfoFlightSqlServerSubstraitMinVersion, "0.50.0"},
		{flightsql.SqlInfoFlightSqlServerSubstraitMaxVersion, "0.99.0"},
		{flightsql.SqlInfoFlightSqlServerTransaction, int32(flightsql.SqlTransactionNone)},
		{flightsql.SqlInfoFlightSqlServerCancel, false},
		{flightsql.SqlInfoFlightSqlServerBulkIngestion, false},
		{flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported, false},
		{flightsql.SqlInfoFlightSqlServerStatementTimeout, int32(0)},
		{flightsql.SqlInfoFlightSqlServerTransactionTimeout, int32(0)},
		{flightsql.SqlInfoDDLCatalog, false},
		{flightsql.SqlInfoDDLSchema, false},
		{flightsql.SqlInfoDDLTable, false},
		{flightsql.SqlInfoIdentifierCase, int64(flightsql.SqlCaseSensitivityLowerCase)},
		{flightsql.SqlInfoIdentifierQuoteChar, `"`},
		{flightsql.SqlInfoQuotedIdentifierCase, int64(flightsql.SqlCaseSensitivityCaseInsensitive)},
		{flightsql.SqlInfoAllTablesAreASelectable, true},
		{flightsql.SqlInfoNullOrdering, int64(flightsql.SqlNullOrderingSortAtEnd)},
		{flightsql.SqlInfoSchemaTerm, "schema"},
		{flightsql.SqlInfoCatalogTerm, "catalog"},
		{flightsql.SqlInfoSupportsColumnAliasing, true},
		{flightsql.SqlInfoSupportsNonNullableColumns, true},
		{flightsql.SqlInfoSearchStringEscape, `\`},
		{flightsql.SqlInfoKeywords, []string{"SELECT", "FROM", "WHERE", "AND", "ORDER", "BY", "LIMIT", "ASC", "DESC", "COUNT", "TIMESTAMPTZ"}},
		{flightsql.SqlInfoDateTimeFunctions, []string{"date_trunc"}},
	}
	for _, in := range infos {
		if err := b.RegisterSqlInfo(in.id, in.val); err != nil {
			return err
		}
	}
	return nil
}

// arrowVersion is the arrow-go module version linked into the binary (FLIGHT_SQL_SERVER_ARROW_VERSION).
var arrowVersion = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/apache/arrow-go/v18" {
				return strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return "18"
}()
