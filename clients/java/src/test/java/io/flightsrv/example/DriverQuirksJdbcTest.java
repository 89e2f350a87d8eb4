package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Bugs of the flight-sql-jdbc-driver that flightsrv cannot answer around, reproduced on each
 * version {@code make test-clients} runs (15.0.2, 16.1.0, 18.3.0): each test asserts the
 * driver's wrong behaviour next to the right one, so that it fails once a driver fixes it.
 * clients/java/README.md lists them with what to do instead.
 */
class DriverQuirksJdbcTest {
  static final String COUNT =
      "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?";
  // ORD has no flight in the first second of 2001 and one at 05:57 (DuckDB over the sample).
  static final String EMPTY = "SELECT timestamp, id, origin FROM flights WHERE origin = 'ORD'"
      + " AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-01-01T00:00:01Z'";
  static final String ONE_MINUTE = "SELECT timestamp, id, origin FROM flights WHERE origin = 'ORD'"
      + " AND timestamp >= '2001-01-01T05:57:00Z' AND timestamp < '2001-01-01T05:58:00Z'";

  static List<String> columns(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    List<String> out = new ArrayList<>();
    for (int i = 1; i <= md.getColumnCount(); i++) {
      out.add(md.getColumnName(i));
    }
    return out;
  }

  /**
   * apache/arrow-java#44: a plain Statement whose result has no rows lists every column twice
   * (ArrowFlightStatement adds the prepared statement's dataset schema to a signature that
   * already holds it; only a non-empty batch resets it, and the driver skips empty batches, so
   * no answer shape of the server avoids it). A PreparedStatement, and any result with rows,
   * report the columns once.
   */
  @Test
  void emptyResultColumns() throws SQLException {
    List<String> cols = List.of("timestamp", "id", "origin");
    try (Connection conn = Drivers.connect("")) {
      try (PreparedStatement ps = conn.prepareStatement(EMPTY); ResultSet rs = ps.executeQuery()) {
        assertEquals(cols, columns(rs));
        assertFalse(rs.next());
      }
      try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(ONE_MINUTE)) {
        assertEquals(cols, columns(rs));
        assertTrue(rs.next());
      }
      try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(EMPTY)) {
        List<String> doubled = new ArrayList<>(cols);
        doubled.addAll(cols);
        assertEquals(doubled, columns(rs), "apache/arrow-java#44 is fixed in this driver");
        assertFalse(rs.next());
      }
      Drivers.close(conn, false);
    }
  }

  /**
   * The driver cannot bind java.time values (Avatica keeps them as plain objects, which no
   * parameter converter takes) nor a String into
   * a timestamp parameter: it refuses them itself, before anything reaches the server. When
   * the refusal comes from its parameter binder, the parameter vectors it had allocated leak,
   * and Connection.close() reports it.
   */
  @Test
  void refusedBindingLeaks() throws SQLException {
    Object[] values = {Instant.parse("2001-01-01T05:57:00Z"), OffsetDateTime.parse("2001-01-01T05:57:00Z"),
        LocalDateTime.parse("2001-01-01T05:57:00"), "2001-01-01T05:57:00Z"};
    for (Object v : values) {
      Connection conn = Drivers.connect("");
      boolean inBinder = false;
      try (PreparedStatement ps = conn.prepareStatement(COUNT)) {
        ps.setString(1, "ORD");
        ps.setTimestamp(3, Timestamp.from(Instant.parse("2001-01-01T06:00:00Z")));
        try {
          ps.setObject(2, v);
          inBinder = true;
          ps.executeQuery().close();
          fail("bound " + v.getClass());
        } catch (Exception e) {
          String m = String.valueOf(e.getMessage());
          // 18.3.0: "Binding value of type OBJECT is not yet supported for expected Arrow type
          // Timestamp(MILLISECOND, UTC)"; 15 and 16 (Avatica 1.23): "cannot convert … to OBJECT".
          assertTrue(m.contains("is not yet supported") || m.contains("cannot convert"), v.getClass() + ": " + m);
        }
      }
      assertTrue(inBinder, "setObject refused " + v.getClass());
      Drivers.close(conn, inBinder);
    }
  }

  /**
   * A binding the server refuses (INVALID_ARGUMENT naming the parameter) leaves the driver
   * usable; on 15 and 16 the connection then reports the leak of every binding's DoPut answer
   * (Drivers.leaksBindings), on 18.3.0 it closes cleanly.
   */
  @Test
  void bindingRefusedByTheServer() throws SQLException {
    Connection conn = Drivers.connect("&flightsrv.time_parameters=text");
    try (PreparedStatement ps = conn.prepareStatement(COUNT)) {
      ps.setString(1, "ORD");
      ps.setString(2, "not a time");
      ps.setString(3, "2001-01-01T06:00:00Z");
      // 18.3.0 throws the Flight error unwrapped (a RuntimeException), 15 and 16 an SQLException.
      Exception e = assertThrows(Exception.class, ps::executeQuery);
      assertTrue(e.getMessage().contains("parameter $2: invalid input syntax for type timestamp with time zone"), e.getMessage());
      ps.setString(2, "2001-01-01T05:57:00Z");
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(2, rs.getLong(1));
      }
    }
    Drivers.close(conn, Drivers.leaksBindings(conn));
  }
}
