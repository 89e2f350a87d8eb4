package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.List;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * flightsrv through the Apache Arrow Flight SQL JDBC driver, the way a Java program or a BI tool
 * such as DBeaver reaches it. The server is a {@code flightsrv demo} whose address (host:port)
 * comes from the system property {@code flightsrv.addr} or the environment variable
 * FLIGHTSRV_TEST_ADDR; {@code make test-clients} starts one and sets it.
 *
 * <p>Expected values come from DuckDB over testdata/flights-sample.parquet (the queries are in
 * the comments); the Python suite compares the server with DuckDB directly over many more cases.
 */
class FlightsJdbcTest {
  static final String RANGE =
      " AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'";
  static final Calendar UTC = Calendar.getInstance(TimeZone.getTimeZone("UTC"));

  // SELECT origin, count(*) FROM 'testdata/flights-sample.parquet'
  //   WHERE origin IN ('ORD', 'SFO', 'DFW', 'ATL') GROUP BY 1
  static final long ORD = 16569, SFO = 6003, DFW = 15684;
  // ... AND date >= '2001-03-15' AND date < '2001-04-15' (straddles the archived/hot boundary)
  static final long ORD_MAR15_APR15 = 2796, DFW_MAR15_APR15 = 2634;

  static String addr;
  static Connection conn;

  @BeforeAll
  static void connect() throws SQLException {
    addr = System.getProperty("flightsrv.addr", System.getenv("FLIGHTSRV_TEST_ADDR"));
    if (addr == null || addr.isEmpty()) {
      throw new IllegalStateException("set FLIGHTSRV_TEST_ADDR (or -Dflightsrv.addr) to host:port of a running"
          + " `flightsrv demo` (`make demo`), or run `make test-clients`, which starts one");
    }
    conn = DriverManager.getConnection(FlightsExample.url(addr));
  }

  @AfterAll
  static void close() throws SQLException {
    if (conn != null) {
      conn.close(); // also fails the suite if the driver's allocator leaked
    }
  }

  static long count(String sql) throws SQLException {
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      assertTrue(rs.next());
      long n = rs.getLong(1);
      assertFalse(rs.next());
      return n;
    }
  }

  /** The text of every message in e's cause chain (the gRPC status is in a driver cause). */
  static String chain(Throwable e) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      sb.append(t).append('\n');
    }
    return sb.toString();
  }

  @Test
  void executeQueryCount() throws SQLException {
    assertEquals(ORD, count("SELECT COUNT(*) FROM flights WHERE origin = 'ORD'" + RANGE));
    assertEquals(ORD_MAR15_APR15, count("SELECT COUNT(*) FROM flights WHERE origin = 'ORD'"
        + " AND timestamp >= TIMESTAMPTZ '2001-03-15T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-04-15T00:00:00Z'"));
    assertEquals(0, count("SELECT COUNT(*) FROM flights WHERE origin = 'ZZZ'" + RANGE));
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM flights WHERE origin = 'SFO'" + RANGE)) {
      ResultSetMetaData md = rs.getMetaData();
      assertEquals(1, md.getColumnCount());
      assertEquals("count", md.getColumnName(1));
      assertEquals(Types.BIGINT, md.getColumnType(1));
    }
  }

  @Test
  void preparedStatementSetString() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT COUNT(*) FROM flights WHERE origin = ?"
        + " AND timestamp >= TIMESTAMPTZ '2001-03-15T00:00:00Z' AND timestamp < TIMESTAMPTZ '2001-04-15T00:00:00Z'")) {
      // The same statement re-executed with new values binds each time (DoPut on one handle).
      for (Object[] c : new Object[][] {{"ORD", ORD_MAR15_APR15}, {"DFW", DFW_MAR15_APR15}, {"ZZZ", 0L}}) {
        ps.setString(1, (String) c[0]);
        try (ResultSet rs = ps.executeQuery()) {
          assertTrue(rs.next());
          assertEquals((long) c[1], rs.getLong(1), (String) c[0]);
        }
      }
    }
  }

  @Test
  void preparedStatementSetStringAndSetTimestamp() throws SQLException {
    String sql = "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?";
    Timestamp from = Timestamp.from(Instant.parse("2001-03-15T00:00:00Z"));
    Timestamp to = Timestamp.from(Instant.parse("2001-04-15T00:00:00Z"));
    // flight-sql-jdbc-driver 18.3.0 writes setTimestamp's epoch milliseconds unscaled into the
    // timestamp vector of the unit the server declares (apache/arrow-java#838); flightsrv declares
    // timestamp[ms, UTC] parameters so that the bounds arrive exactly.
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      ps.setString(1, "ORD");
      ps.setTimestamp(2, from, UTC);
      ps.setTimestamp(3, to, UTC);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(ORD_MAR15_APR15, rs.getLong(1));
      }
    }
  }

  @Test
  void limitParameter() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT id FROM flights WHERE origin = ?" + RANGE + " ORDER BY timestamp, id LIMIT ?")) {
      ps.setString(1, "ORD");
      ps.setInt(2, 3);
      List<String> ids = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getString(1));
        }
      }
      assertEquals(List.of("0000000190", "0000000200", "0000000230"), ids);
    }
  }

  // SELECT strftime(date, '%Y-%m-%dT%H:%M:%SZ'), id, delay, distance, destination
  //   FROM 'testdata/flights-sample.parquet' WHERE origin = 'ORD' ORDER BY date, id LIMIT 10
  // (two flights share 05:57: id breaks the tie)
  static final String[][] ORD_FIRST = {
    {"2001-01-01T05:57:00Z", "0000000190", "{\"delay\":-1,\"distance\":723,\"destination\":\"ALB\"}"},
    {"2001-01-01T05:57:00Z", "0000000200", "{\"delay\":-18,\"distance\":678,\"destination\":\"PHL\"}"},
    {"2001-01-01T06:00:00Z", "0000000230", "{\"delay\":-31,\"distance\":1846,\"destination\":\"SFO\"}"},
    {"2001-01-01T06:35:00Z", "0000000610", "{\"delay\":15,\"distance\":473,\"destination\":\"BUF\"}"},
    {"2001-01-01T06:37:00Z", "0000000630", "{\"delay\":-5,\"distance\":719,\"destination\":\"EWR\"}"},
    {"2001-01-01T06:55:00Z", "0000000800", "{\"delay\":-13,\"distance\":606,\"destination\":\"ATL\"}"},
    {"2001-01-01T07:21:00Z", "0000001200", "{\"delay\":31,\"distance\":235,\"destination\":\"DTW\"}"},
    {"2001-01-01T07:34:00Z", "0000001350", "{\"delay\":62,\"distance\":802,\"destination\":\"DFW\"}"},
    {"2001-01-01T07:44:00Z", "0000001470", "{\"delay\":-16,\"distance\":1012,\"destination\":\"TPA\"}"},
    {"2001-01-01T07:46:00Z", "0000001510", "{\"delay\":9,\"distance\":802,\"destination\":\"DFW\"}"},
  };

  @Test
  void limitQueryRows() throws SQLException {
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT * FROM flights WHERE origin = 'ORD'" + RANGE
            + " ORDER BY timestamp, id LIMIT 10")) {
      ResultSetMetaData md = rs.getMetaData();
      assertEquals(4, md.getColumnCount());
      String[] names = {"origin", "timestamp", "id", "value"};
      int[] types = {Types.VARCHAR, Types.TIMESTAMP_WITH_TIMEZONE, Types.VARCHAR, Types.VARBINARY};
      for (int i = 0; i < 4; i++) {
        assertEquals(names[i], md.getColumnName(i + 1));
        assertEquals(types[i], md.getColumnType(i + 1), names[i]);
      }
      int n = 0;
      while (rs.next()) {
        String[] want = ORD_FIRST[n++];
        assertEquals("ORD", rs.getString("origin"));
        Instant ts = Instant.parse(want[0]);
        // Read instants with getObject(…, OffsetDateTime/Instant). flight-sql-jdbc-driver 18.3.0
        // shifts getTimestamp's result by the JVM's zone offset (even with a UTC Calendar) unless
        // the JVM runs in UTC, and getObject(i) throws "not implemented" for
        // TIMESTAMP_WITH_TIMEZONE (apache/arrow-java#732).
        assertEquals(ts, rs.getObject("timestamp", OffsetDateTime.class).toInstant());
        assertEquals(ts, rs.getObject("timestamp", Instant.class));
        assertEquals(want[1], rs.getString("id"));
        assertArrayEquals(want[2].getBytes(StandardCharsets.UTF_8), rs.getBytes("value"));
      }
      assertEquals(ORD_FIRST.length, n);
    }
  }

  @Test
  void descendingOrder() throws SQLException {
    // ... ORDER BY date DESC, id DESC LIMIT 3
    List<String> ids = new ArrayList<>();
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT id FROM flights WHERE origin = 'ORD'" + RANGE
            + " ORDER BY timestamp DESC, id DESC LIMIT 3")) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    }
    assertEquals(List.of("0002999970", "0002999890", "0002999750"), ids);
  }

  @Test
  void allRowsOfAPartition() throws SQLException {
    // Every SFO row: many batches, all read (the driver stops at an empty batch).
    long n = 0;
    String last = "";
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT timestamp, id FROM flights WHERE origin = 'SFO'" + RANGE
            + " ORDER BY timestamp, id")) {
      while (rs.next()) {
        String key = rs.getObject(1, OffsetDateTime.class).toInstant() + " " + rs.getString(2);
        assertTrue(key.compareTo(last) > 0, key);
        last = key;
        n++;
      }
    }
    assertEquals(SFO, n);
  }

  @Test
  void emptyResult() throws SQLException {
    String sql = "SELECT * FROM flights WHERE origin = 'ZZZ'" + RANGE;
    try (PreparedStatement ps = conn.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      ResultSetMetaData md = rs.getMetaData();
      assertEquals(4, md.getColumnCount());
      assertEquals("timestamp", md.getColumnName(2));
      assertEquals(Types.TIMESTAMP_WITH_TIMEZONE, md.getColumnType(2));
      assertFalse(rs.next());
    }
    // Through a plain Statement, flight-sql-jdbc-driver 18.3.0 lists every column twice in the
    // metadata of a result without rows (apache/arrow-java#44, fixed after 18.3.0): check the
    // first four only.
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      ResultSetMetaData md = rs.getMetaData();
      for (int i = 0; i < 4; i++) {
        assertEquals(List.of("origin", "timestamp", "id", "value").get(i), md.getColumnName(i + 1));
      }
      assertFalse(rs.next());
    }
  }

  @Test
  void databaseMetaData() throws SQLException {
    DatabaseMetaData md = conn.getMetaData();
    assertEquals("flightsrv", md.getDatabaseProductName());
    assertFalse(md.isReadOnly()); // rows can be written (bulk ingest, INSERT)
  }

  @Test
  void getTables() throws SQLException {
    DatabaseMetaData md = conn.getMetaData();
    List<String> rows = new ArrayList<>();
    try (ResultSet rs = md.getTables(null, null, "%", null)) {
      while (rs.next()) {
        rows.add(rs.getString("TABLE_CAT") + "|" + rs.getString("TABLE_SCHEM") + "|"
            + rs.getString("TABLE_NAME") + "|" + rs.getString("TABLE_TYPE"));
      }
    }
    assertEquals(List.of("null|public|flights|TABLE"), rows);
    // DBeaver lists tables per schema and type.
    try (ResultSet rs = md.getTables(null, "public", "flights", new String[] {"TABLE"})) {
      assertTrue(rs.next());
      assertEquals("flights", rs.getString("TABLE_NAME"));
      assertFalse(rs.next());
    }
    try (ResultSet rs = md.getTables(null, null, "%", new String[] {"VIEW"})) {
      assertFalse(rs.next());
    }
    try (ResultSet rs = md.getTables(null, null, "nothing%", null)) {
      assertFalse(rs.next());
    }
  }

  @Test
  void getColumns() throws SQLException {
    DatabaseMetaData md = conn.getMetaData();
    List<String> cols = new ArrayList<>();
    try (ResultSet rs = md.getColumns(null, "public", "flights", "%")) {
      while (rs.next()) {
        assertEquals("flights", rs.getString("TABLE_NAME"));
        cols.add(rs.getInt("ORDINAL_POSITION") + " " + rs.getString("COLUMN_NAME") + " "
            + rs.getInt("DATA_TYPE") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("NULLABLE"));
      }
    }
    int noNulls = DatabaseMetaData.columnNoNulls;
    assertEquals(List.of(
        "1 origin " + Types.VARCHAR + " TEXT " + noNulls,
        "2 timestamp " + Types.TIMESTAMP_WITH_TIMEZONE + " TIMESTAMPTZ " + noNulls,
        "3 id " + Types.VARCHAR + " TEXT " + noNulls,
        "4 value " + Types.VARBINARY + " BYTEA " + noNulls), cols);
    try (ResultSet rs = md.getColumns(null, null, "flights", "time%")) {
      assertTrue(rs.next());
      assertEquals("timestamp", rs.getString("COLUMN_NAME"));
      assertFalse(rs.next());
    }
  }

  @Test
  void getTableTypesSchemasCatalogs() throws SQLException {
    DatabaseMetaData md = conn.getMetaData();
    List<String> types = new ArrayList<>();
    try (ResultSet rs = md.getTableTypes()) {
      while (rs.next()) {
        types.add(rs.getString("TABLE_TYPE"));
      }
    }
    assertEquals(List.of("TABLE"), types);
    List<String> schemas = new ArrayList<>();
    try (ResultSet rs = md.getSchemas()) {
      while (rs.next()) {
        schemas.add(rs.getString("TABLE_SCHEM"));
      }
    }
    assertEquals(List.of("public"), schemas);
    try (ResultSet rs = md.getCatalogs()) {
      assertFalse(rs.next());
    }
  }

  @Test
  void primaryAndForeignKeys() throws SQLException {
    // DBeaver calls these for a table's Keys tab. The logical primary key is the physical one:
    // (partition column, timestamp, id); routed tables have no foreign keys.
    DatabaseMetaData md = conn.getMetaData();
    List<String> pk = new ArrayList<>();
    try (ResultSet rs = md.getPrimaryKeys(null, "public", "flights")) {
      while (rs.next()) {
        pk.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ"));
      }
    }
    assertEquals(List.of("origin:1", "timestamp:2", "id:3"), pk);
    try (ResultSet rs = md.getImportedKeys(null, "public", "flights")) {
      assertFalse(rs.next());
    }
  }

  @Test
  void rejectedPredicateIsInvalidArgument() {
    // No lower time bound: refused before any bucket is read, with a message that carries
    // no value from the query.
    SQLException e = assertThrows(SQLException.class,
        () -> count("SELECT COUNT(*) FROM flights WHERE origin = 'QQX' AND timestamp < '2001-08-01T00:00:00Z'"));
    String text = chain(e);
    assertTrue(text.contains("INVALID_ARGUMENT"), text);
    assertTrue(text.contains("flights needs timestamp >= <start>"), text);
    // The driver quotes the SQL text in its own message; the server's status must not.
    String status = text.substring(text.indexOf("INVALID_ARGUMENT"));
    assertFalse(status.contains("QQX"), status);
  }

  @Test
  void unsupportedSqlIsUnimplemented() {
    SQLException e = assertThrows(SQLException.class, () -> count(
        "WITH RECURSIVE r(id) AS (SELECT a.id FROM flights a WHERE a.origin = 'ORD'"
            + " AND a.timestamp >= '2001-01-01T00:00:00Z' AND a.timestamp < '2001-08-01T00:00:00Z'"
            + " UNION ALL SELECT id FROM r) SEARCH DEPTH FIRST BY id SET o SELECT COUNT(*) FROM r"));
    String text = chain(e);
    assertTrue(text.contains("UNIMPLEMENTED"), text);
    assertTrue(text.contains("not supported"), text);
  }

  @Test
  void connectionUsableAfterErrors() throws SQLException {
    assertThrows(SQLException.class, () -> count("SELECT set_byte('x'::bytea, 0, 1)"));
    assertEquals(DFW, count("SELECT COUNT(*) FROM flights WHERE origin = 'DFW'" + RANGE));
  }

  @Test
  void jsonGroupByHavingAndResidualFilters() throws SQLException {
    // SELECT destination, count(*), avg(delay) FROM 'testdata/flights-sample.parquet'
    //   WHERE origin = 'ORD' AND delay > 15 GROUP BY 1 HAVING count(*) > 150 ORDER BY 2 DESC, 1
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT value->>'destination' AS dest, count(*) AS n,"
            + " avg((value->>'delay')::int) AS avg_delay FROM flights WHERE origin = 'ORD'" + RANGE
            + " AND (value->>'delay')::int > 15 GROUP BY 1 HAVING count(*) > 150 ORDER BY n DESC, dest")) {
      ResultSetMetaData md = rs.getMetaData();
      assertEquals("dest", md.getColumnName(1));
      assertEquals(Types.BIGINT, md.getColumnType(2));
      // avg of integers is numeric, as in PostgreSQL (README, "numeric"): a BigDecimal of
      // scale 20 holding PostgreSQL's 9822 / 172 = 57.1046511627906977.
      assertEquals(Types.DECIMAL, md.getColumnType(3));
      assertTrue(rs.next());
      assertEquals("LGA", rs.getString(1));
      assertEquals(172, rs.getLong(2));
      assertEquals(new BigDecimal("57.10465116279069770000"), rs.getBigDecimal(3));
      assertEquals(57.104651162790695, rs.getDouble(3), 1e-9);
      assertFalse(rs.next());
    }
  }

  @Test
  void preparedStatementOverSeveralPartitions() throws SQLException {
    // SELECT origin, count(*) FROM 'testdata/flights-sample.parquet' WHERE origin IN ('ORD', 'DFW')
    //   AND destination = 'ATL' AND delay > 0 GROUP BY 1 ORDER BY 1   -- DFW 215, ORD 206
    try (PreparedStatement ps = conn.prepareStatement("SELECT origin, count(*) FROM flights"
        + " WHERE origin IN ('ORD', 'DFW')" + RANGE + " AND value->>'destination' = ?"
        + " AND (value->>'delay')::int > 0 GROUP BY origin ORDER BY origin")) {
      ps.setString(1, "ATL");
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals("DFW", rs.getString(1));
        assertEquals(215, rs.getLong(2));
        assertTrue(rs.next());
        assertEquals("ORD", rs.getString(1));
        assertEquals(206, rs.getLong(2));
        assertFalse(rs.next());
      }
    }
  }

  @Test
  void validationQueriesOfPoolsAndBiTools() throws SQLException {
    assertEquals(1, count("SELECT 1"));
    try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT version(), current_schema()")) {
      assertTrue(rs.next());
      assertTrue(rs.getString(1).startsWith("PostgreSQL"), rs.getString(1));
      assertEquals("public", rs.getString(2));
    }
    // SELECT count(*) FROM 'testdata/flights-sample.parquet' WHERE origin = 'SFO'
    //   AND destination LIKE 'S%' AND distance BETWEEN 300 AND 700
    assertEquals(954, count("SELECT count(*) FROM (SELECT * FROM flights WHERE origin = 'SFO'" + RANGE
        + ") t WHERE value->>'destination' LIKE 'S%' AND (value->>'distance')::int BETWEEN 300 AND 700"));
  }

  @Test
  void example() throws SQLException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    FlightsExample.run(addr, "ORD", new PrintStream(buf, true, StandardCharsets.UTF_8));
    String out = buf.toString(StandardCharsets.UTF_8);
    assertTrue(out.startsWith("flights leaving ORD in [2001-01-01, 2001-08-01) UTC: " + ORD + "\n"), out);
    String[] lines = out.split("\n");
    assertEquals(2 + ORD_FIRST.length, lines.length, out);
    for (int i = 0; i < ORD_FIRST.length; i++) {
      assertTrue(lines[2 + i].contains(ORD_FIRST[i][1] + "  " + ORD_FIRST[i][2]), lines[2 + i]);
    }
  }

  /**
   * sum(bigint) is numeric, as PostgreSQL types it (Arrow decimal128(38, 0)): the driver reads it
   * as DECIMAL and BigDecimal, and a total past bigint's range answers exactly.
   */
  @Test
  void sumOfBigintReadsAsBigDecimal() throws SQLException {
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT sum(x) AS s FROM (SELECT 9223372036854775807::bigint AS x"
            + " UNION ALL SELECT 1::bigint UNION ALL SELECT 40::bigint) t")) {
      assertEquals(Types.DECIMAL, rs.getMetaData().getColumnType(1));
      assertTrue(rs.next());
      BigDecimal want = new BigDecimal(BigInteger.valueOf(Long.MAX_VALUE).add(BigInteger.valueOf(41)));
      assertEquals(want, rs.getBigDecimal(1));
      assertFalse(rs.next());
    }
  }
}
