package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A parameter cast to smallint or integer ({@code ?::smallint}, {@code CAST(? AS smallint)},
 * {@code ?::int}) bound with {@code setLong} through the Arrow Flight SQL JDBC driver, against
 * the server FLIGHTSRV_TEST_ADDR (or -Dflightsrv.addr) names. The server declares the parameter
 * bigint (Arrow int64), so the driver sends the long as it is, and casts it as PostgreSQL casts
 * a bigint parameter (its JDBC driver declares setLong's parameter int8): 123 is the smallint
 * 123, and 40000 is PostgreSQL's 22003 "smallint out of range" (int82), never the smallint
 * -25536 the driver answered when the server streamed the long under a smallint column.
 */
class ParamCastJdbcTest {
  static Connection conn;

  @BeforeAll
  static void connect() throws SQLException {
    conn = Drivers.connect("");
  }

  @AfterAll
  static void close() throws SQLException {
    Drivers.close(conn, Drivers.leaksBindings(conn));
  }

  /** The one row of sql with $1 bound by setLong(v): [JDBC type, value]. */
  static Object[] one(String sql, long v) throws SQLException {
    try (PreparedStatement p = conn.prepareStatement(sql)) {
      assertEquals(Types.BIGINT, p.getParameterMetaData().getParameterType(1), sql);
      p.setLong(1, v);
      try (ResultSet rs = p.executeQuery()) {
        assertTrue(rs.next(), sql);
        return new Object[] {rs.getMetaData().getColumnType(1), rs.getObject(1)};
      }
    }
  }

  /**
   * Asserts that sql bound with setLong(v) is refused with INVALID_ARGUMENT and msg. The driver
   * (18.3.0) throws the server's refusal of a bound value from executeQuery as its (shaded,
   * unchecked) FlightRuntimeException rather than an SQLException; its status() is the gRPC
   * status, read by reflection since the class is shaded.
   */
  static void refused(String sql, long v, String msg) throws Exception {
    Exception e = assertThrows(Exception.class, () -> one(sql, v), sql + " " + v);
    StringBuilder text = new StringBuilder();
    boolean seen = false;
    for (Throwable c = e; c != null; c = c.getCause()) {
      text.append(c.getClass().getName()).append(": ").append(c.getMessage()).append('\n');
      if (c.getClass().getSimpleName().equals("FlightRuntimeException")) {
        seen = true;
        Object status = c.getClass().getMethod("status").invoke(c);
        Object code = status.getClass().getMethod("code").invoke(status);
        assertEquals("INVALID_ARGUMENT", code.toString(), sql + " " + v);
        assertEquals(msg, status.getClass().getMethod("description").invoke(status), sql + " " + v);
        // The SQLSTATE travels in the status details (google.rpc.ErrorInfo, metadata
        // sqlstate), which the driver keeps as the raw trailer: its serialized map entry.
        Object md = status.getClass().getMethod("metadata").invoke(status);
        byte[] details = (byte[]) md.getClass().getMethod("getByte", String.class).invoke(md, "grpc-status-details-bin");
        String raw = new String(details, java.nio.charset.StandardCharsets.ISO_8859_1);
        assertTrue(raw.contains("sqlstate\u0012\u000522003"), sql + " " + v + ": " + raw);
      }
    }
    assertTrue(seen, "no FlightRuntimeException in " + text);
  }

  @Test
  void smallintInRange() throws SQLException {
    assertEquals(Types.SMALLINT, one("SELECT ?::smallint", 123)[0]);
    assertEquals((short) 123, one("SELECT ?::smallint", 123)[1]);
    assertEquals((short) -32768, one("SELECT CAST(? AS smallint)", -32768)[1]);
    assertEquals(124, one("SELECT ?::smallint + 1", 123)[1]);
    assertEquals(2147483647, one("SELECT ?::int", 2147483647L)[1]);
  }

  @Test
  void outOfRangeIsRefused() throws Exception {
    for (String sql : new String[] {"SELECT ?::smallint", "SELECT CAST(? AS smallint)", "SELECT ?::smallint + 1"}) {
      for (long v : new long[] {40000, 70000, -32769}) {
        refused(sql, v, "smallint out of range");
      }
    }
    refused("SELECT ?::int", 3000000000L, "integer out of range");
    // The routed table: a bound past smallint's range is refused, not compared.
    refused("SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00'"
        + " AND timestamp < '2001-04-01 18:00' AND (value->>'delay')::smallint < ?::smallint", 70000, "smallint out of range");
  }
}
