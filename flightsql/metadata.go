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
		if tt, ok := f.Type.(*arrow.Time64Type); ok {
			// PostgreSQL's time: hh:mm:ss.ffffff, 15 characters, 6 fractional digits.
			mb = mb.Precision(int32(15)).Scale(int32(tt.Unit) * 3)
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
	case arrow.TIME32, arrow.TIME64:
		return "TIME"
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

// Bit masks and ordinals of GetSqlInfo answers (FlightSql.proto enums).
const (
	groupByBeyondSelect    = 1 << 1 // SqlSupportedGroupBy.SQL_GROUP_BY_BEYOND_SELECT
	minimumGrammar         = 1 << 0 // SupportedSqlGrammar.SQL_MINIMUM_GRAMMAR
	transactionNoneMask    = 1 << 0 // SqlTransactionIsolationLevel.SQL_TRANSACTION_NONE
	resultSetForwardOnly   = 1 << 1 // SqlSupportedResultSetType.SQL_RESULT_SET_TYPE_FORWARD_ONLY
	concurrencyReadOnly    = 1 << 1 // SqlSupportedResultSetConcurrency.SQL_RESULT_SET_CONCURRENCY_READ_ONLY
	outerJoinsUnsupported  = 0      // SqlOuterJoinsSupportLevel.SQL_JOINS_UNSUPPORTED
	transactionNoneOrdinal = 0      // java.sql.Connection.TRANSACTION_NONE
)

// sqlInfos are the GetSqlInfo answers: every id of FlightSql.proto (arrow-go v18.8), each in
// the type the spec gives it (string, bool, int32 bit mask or ordinal, int64 limit, string
// list, convert map). The JDBC driver's DatabaseMetaData reads each id with that type and
// throws when one is missing (NullPointerException in 17 and 18.3); ADBC's GetInfo asks for
// the FLIGHT_SQL_SERVER_* ids. Limits of 0 mean "no limit or unknown" (JDBC).
func sqlInfos(version string, cancel, ingest bool) []struct {
	id  flightsql.SqlInfo
	val any
} {
	return []struct {
		id  flightsql.SqlInfo
		val any
	}{
		{flightsql.SqlInfoFlightSqlServerName, "flightsrv"},
		{flightsql.SqlInfoFlightSqlServerVersion, version},
		{flightsql.SqlInfoFlightSqlServerArrowVersion, arrowVersion},
		{flightsql.SqlInfoFlightSqlServerReadOnly, !ingest},
		{flightsql.SqlInfoFlightSqlServerSql, true},
		{flightsql.SqlInfoFlightSqlServerSubstrait, true},
		{flightsql.SqlInfoFlightSqlServerSubstraitMinVersion, "0.50.0"},
		{flightsql.SqlInfoFlightSqlServerSubstraitMaxVersion, "0.99.0"},
		{flightsql.SqlInfoFlightSqlServerTransaction, int32(flightsql.SqlTransactionNone)},
		{flightsql.SqlInfoFlightSqlServerCancel, cancel},
		{flightsql.SqlInfoFlightSqlServerBulkIngestion, ingest},
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
		{flightsql.SqlInfoKeywords, []string{"SELECT", "FROM", "WHERE", "AND", "ORDER", "BY", "LIMIT", "ASC", "DESC", "COUNT", "TIMESTAMPTZ", "EXPLAIN", "GROUP"}},
		{flightsql.SqlInfoNumericFunctions, []string{}},
		{flightsql.SqlInfoStringFunctions, []string{}},
		{flightsql.SqlInfoSystemFunctions, []string{}},
		{flightsql.SqlInfoDateTimeFunctions, []string{"date_trunc", "date_bin"}},
		{flightsql.SqlInfoSearchStringEscape, `\`},
		{flightsql.SqlInfoExtraNameChars, ""},
		{flightsql.SqlInfoSupportsColumnAliasing, true},
		{flightsql.SqlInfoNullPlusNullIsNull, true},
		{flightsql.SqlInfoSupportsConvert, map[int32][]int32{}},
		{flightsql.SqlInfoSupportsTableCorrelationNames, false},
		{flightsql.SqlInfoSupportsDifferentTableCorrelationNames, false},
		{flightsql.SqlInfoSupportsExpressionsInOrderBy, false},
		{flightsql.SqlInfoSupportsOrderByUnrelated, true},
		{flightsql.SqlInfoSupportedGroupBy, int32(groupByBeyondSelect)},
		{flightsql.SqlInfoSupportsLikeEscapeClause, false},
		{flightsql.SqlInfoSupportsNonNullableColumns, true},
		{flightsql.SqlInfoSupportedGrammar, int32(minimumGrammar)},
		{flightsql.SqlInfoANSI92SupportedLevel, int32(0)},
		{flightsql.SqlInfoSupportsIntegrityEnhancementFacility, false},
		{flightsql.SqlInfoOuterJoinsSupportLevel, int32(outerJoinsUnsupported)},
		{flightsql.SqlInfoSchemaTerm, "schema"},
		{flightsql.SqlInfoProcedureTerm, "procedure"},
		{flightsql.SqlInfoCatalogTerm, "catalog"},
		{flightsql.SqlInfoCatalogAtStart, true},
		{flightsql.SqlInfoSchemasSupportedActions, int32(0)},
		{flightsql.SqlInfoCatalogsSupportedActions, int32(0)},
		{flightsql.SqlInfoSupportedPositionedCommands, int32(0)},
		{flightsql.SqlInfoSelectForUpdateSupported, false},
		{flightsql.SqlInfoStoredProceduresSupported, false},
		{flightsql.SqlInfoSupportedSubqueries, int32(0)},
		{flightsql.SqlInfoCorrelatedSubqueriesSupported, false},
		{flightsql.SqlInfoSupportedUnions, int32(0)},
		{flightsql.SqlInfoMaxBinaryLiteralLen, int64(0)},
		{flightsql.SqlInfoMaxCharLiteralLen, int64(0)},
		{flightsql.SqlInfoMaxColumnNameLen, int64(63)}, // PostgreSQL's NAMEDATALEN - 1
		{flightsql.SqlInfoMaxColumnsInGroupBy, int64(0)},
		{flightsql.SqlInfoMaxColumnsInIndex, int64(0)},
		{flightsql.SqlInfoMaxColumnsInOrderBy, int64(0)},
		{flightsql.SqlInfoMaxColumnsInSelect, int64(0)},
		{flightsql.SqlInfoMaxColumnsInTable, int64(0)},
		{flightsql.SqlInfoMaxConnections, int64(0)},
		{flightsql.SqlInfoMaxCursorNameLen, int64(0)},
		{flightsql.SqlInfoMaxIndexLen, int64(0)},
		{flightsql.SqlInfoDBSchemaNameLen, int64(63)},
		{flightsql.SqlInfoMaxProcedureNameLen, int64(0)},
		{flightsql.SqlInfoMaxCatalogNameLen, int64(0)},
		{flightsql.SqlInfoMaxRowSize, int64(0)},
		{flightsql.SqlInfoMaxRowSizeIncludesBlobs, false},
		{flightsql.SqlInfoMaxStatementLen, int64(0)},
		{flightsql.SqlInfoMaxStatements, int64(0)},
		{flightsql.SqlInfoMaxTableNameLen, int64(63)},
		{flightsql.SqlInfoMaxTablesInSelect, int64(1)},
		{flightsql.SqlInfoMaxUsernameLen, int64(0)},
		{flightsql.SqlInfoDefaultTransactionIsolation, int64(transactionNoneOrdinal)},
		{flightsql.SqlInfoTransactionsSupported, false},
		{flightsql.SqlInfoSupportedTransactionsIsolationlevels, int32(transactionNoneMask)},
		{flightsql.SqlInfoDataDefinitionCausesTransactionCommit, false},
		{flightsql.SqlInfoDataDefinitionsInTransactionsIgnored, false},
		{flightsql.SqlInfoSupportedResultSetTypes, int32(resultSetForwardOnly)},
		{flightsql.SqlInfoSupportedConcurrenciesForResultSetUnspecified, int32(concurrencyReadOnly)},
		{flightsql.SqlInfoSupportedConcurrenciesForResultSetForwardOnly, int32(concurrencyReadOnly)},
		{flightsql.SqlInfoSupportedConcurrenciesForResultSetScrollSensitive, int32(0)},
		{flightsql.SqlInfoSupportedConcurrenciesForResultSetScrollInsensitive, int32(0)},
		{flightsql.SqlInfoBatchUpdatesSupported, false},
		{flightsql.SqlInfoSavePointsSupported, false},
		{flightsql.SqlInfoNamedParametersSupported, false},
		{flightsql.SqlInfoLocatorsUpdateCopy, false},
		{flightsql.SqlInfoStoredFunctionsUsingCallSyntaxSupported, false},
	}
}

// newerSqlInfos are ids added to FlightSql.proto after Arrow 16: the JDBC driver 15 and 16
// fail on the first DatabaseMetaData call when an answer to "all ids" carries an id they do
// not know (SqlInfo.forNumber gives null, which their EnumMap refuses). They are answered
// only when asked for by id (ADBC's GetInfo does).
var newerSqlInfos = map[uint32]bool{
	uint32(flightsql.SqlInfoFlightSqlServerBulkIngestion):               true,
	uint32(flightsql.SqlInfoFlightSqlServerIngestTransactionsSupported): true,
}

// registerSqlInfo registers the GetSqlInfo answers (sqlInfos) with b.
func registerSqlInfo(b *flightsql.BaseServer, version string, cancel, ingest bool) ([]uint32, error) {
	if version == "" {
		version = "dev"
	}
	var ids []uint32
	for _, in := range sqlInfos(version, cancel, ingest) {
		if err := b.RegisterSqlInfo(in.id, in.val); err != nil {
			return nil, err
		}
		ids = append(ids, uint32(in.id))
	}
	return ids, nil
}

// sqlInfoRequest is a GetSqlInfo command with an explicit list of ids.
type sqlInfoRequest []uint32

func (r sqlInfoRequest) GetInfo() []uint32 { return r }

// DoGetSqlInfo answers CommandGetSqlInfo: the ids asked for that the server knows (unknown
// ids are left out rather than failing the whole request), or, when none is asked for, every
// id except newerSqlInfos.
func (s *Server) DoGetSqlInfo(ctx context.Context, cmd flightsql.GetSqlInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	known := map[uint32]bool{}
	for _, id := range s.sqlInfoIDs {
		known[id] = true
	}
	var ids sqlInfoRequest
	if asked := cmd.GetInfo(); len(asked) > 0 {
		for _, id := range asked {
			if known[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			b := array.NewRecordBuilder(s.alloc, schema_ref.SqlInfo)
			defer b.Release()
			return oneBatch(b.NewRecordBatch())
		}
	} else {
		for _, id := range s.sqlInfoIDs {
			if !newerSqlInfos[id] {
				ids = append(ids, id)
			}
		}
	}
	return s.BaseServer.DoGetSqlInfo(ctx, ids)
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
