package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Time;
import java.sql.Timestamp;
import java.sql.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * {@code SELECT ?}, a parameter nothing in the statement types, through the JDBC driver. The
 * driver converts each value into the vector of the parameter schema the server declared at
 * prepare (it sends no type of its own), so flightsrv declares such a parameter text, the type
 * PostgreSQL gives a parameter of type unknown that nothing resolves ({@code PREPARE p AS
 * SELECT $1} has a text parameter): setString answers as PostgreSQL's JDBC driver does (text;
 * setNull is flightsrv's refusal of a NULL parameter, where PostgreSQL answers NULL), and the
 * driver itself refuses setDate, setTime, setTimestamp, setBigDecimal,
 * setBoolean and setBytes into a text parameter (PostgreSQL's JDBC driver sends their types
 * and answers date, time, timestamp, numeric, boolean, bytea): a statement that types the
 * parameter ({@code CAST(? AS date)}) binds them and answers PostgreSQL's value (but a numeric
 * parameter, which flightsrv refuses by name).
 */
class UntypedParamsJdbcTest {
  static Connection conn;

  @BeforeAll
  static void open() throws SQLException {
    conn = Drivers.connect("");
  }

  @AfterAll
  static void close() throws SQLException {
    Drivers.close(conn, Drivers.leaksBindings(conn));
  }

  @Test
  void selectStringAndNull() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT ?")) {
      assertEquals(1, ps.getParameterMetaData().getParameterCount());
      assertEquals(Types.VARCHAR, ps.getParameterMetaData().getParameterType(1));
      ps.setString(1, "x");
      try (ResultSet rs = ps.executeQuery()) {
        assertEquals("?column?", rs.getMetaData().getColumnName(1));
        assertEquals(Types.VARCHAR, rs.getMetaData().getColumnType(1));
        assertTrue(rs.next());
        assertEquals("x", rs.getString(1));
        assertFalse(rs.next());
      }
      // A NULL parameter is bound as a NULL of its type (text here), as PostgreSQL binds it.
      ps.setNull(1, Types.NULL);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertNull(rs.getString(1));
        assertFalse(rs.next());
      }
    }
  }

  @Test
  void selectOtherTypesRefusedByTheDriver() throws SQLException {
    Executable[] binds = {
      () -> bindAndRun(ps -> ps.setDate(1, Date.valueOf("2001-02-03"))),
      () -> bindAndRun(ps -> ps.setTime(1, Time.valueOf("10:11:12"))),
      () -> bindAndRun(ps -> ps.setTimestamp(1, Timestamp.valueOf("2001-02-03 10:11:12"))),
      () -> bindAndRun(ps -> ps.setBigDecimal(1, new BigDecimal("1.50"))),
      () -> bindAndRun(ps -> ps.setBoolean(1, true)),
      () -> bindAndRun(ps -> ps.setBytes(1, new byte[] {1, 2, 3})),
    };
    for (Executable bind : binds) {
      Throwable e = assertThrows(Throwable.class, bind);
      String all = "";
      for (Throwable c = e; c != null; c = c.getCause()) {
        all += " " + c.getMessage();
      }
      assertTrue(all.contains("not yet supported for expected Arrow type Utf8"), all);
    }
  }

  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  static void bindAndRun(Binder b) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT ?")) {
      b.bind(ps);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
      }
    }
  }

  /** The statement types the parameter: each setter binds and answers PostgreSQL's value. */
  @Test
  void typedByTheStatement() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT CAST(? AS date) - 1")) {
      ps.setDate(1, Date.valueOf("2001-02-03"));
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(Date.valueOf("2001-02-02"), rs.getDate(1));
      }
    }
    try (PreparedStatement ps = conn.prepareStatement("SELECT NOT CAST(? AS boolean)")) {
      ps.setBoolean(1, true);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertFalse(rs.getBoolean(1));
        assertFalse(rs.wasNull());
      }
    }
    try (PreparedStatement ps = conn.prepareStatement("SELECT length(CAST(? AS bytea))")) {
      ps.setBytes(1, new byte[] {1, 2, 3});
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(3, rs.getInt(1));
      }
    }
  }

  /** The text of the one row of sql with $1 bound by setString(v), checking $1 is declared text. */
  static String text(String sql, String v) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(sql)) {
      assertEquals(Types.VARCHAR, ps.getParameterMetaData().getParameterType(1), sql);
      ps.setString(1, v);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next(), sql);
        return rs.getString(1);
      }
    }
  }

  /** Every message of t and its causes, joined. */
  static String messages(Throwable t) {
    String all = "";
    for (Throwable c = t; c != null; c = c.getCause()) {
      all += " " + c.getMessage();
    }
    return all;
  }

  /**
   * Parameters PostgreSQL types text (trial27): a json or jsonb one (its text, read by
   * json_in: setString binds it, and a text that is not JSON is PostgreSQL's 22P02), a regular
   * expression's pattern and substring's FROM of a text ({@code substring(s FROM $1)} is the
   * pattern form in PostgreSQL). A bytea parameter is Binary (setBytes, above); bytea text
   * ({@code '\x0102'}) binds with setString through a cast to text first.
   */
  @Test
  void textParameters() throws SQLException {
    assertEquals("{\"a\": [1, 2]}", text("SELECT CAST(CAST(? AS json) AS text)", "{\"a\": [1, 2]}"));
    assertEquals("x", text("SELECT CAST(? AS json) ->> 'a'", "{\"a\": \"x\"}"));
    assertEquals("{\"a\": 1, \"bb\": 2}", text("SELECT ?::jsonb::text", "{\"bb\":2, \"a\":1}"));
    String bad = messages(assertThrows(Throwable.class, () -> text("SELECT CAST(? AS json)::text", "{bad")));
    assertTrue(bad.contains("invalid input syntax for type json"), bad);
    assertEquals("123", text("SELECT substring('abc123' FROM ?)", "[0-9]+"));
    assertEquals("true", text("SELECT CAST('abc' ~ ? AS text)", "^a.c$"));
    assertEquals("a#b#c", text("SELECT regexp_replace('a1b22c', ?, '#', 'g')", "[0-9]+"));
    assertEquals("0102", text("SELECT encode(CAST(CAST(? AS text) AS bytea), 'hex')", "\\x0102"));
    // setString into a bytea parameter is the driver's refusal (its Binary converter takes
    // byte[] only), before anything reaches the server.
    try (PreparedStatement ps = conn.prepareStatement("SELECT CAST(? AS bytea)")) {
      assertEquals(Types.VARBINARY, ps.getParameterMetaData().getParameterType(1));
      ps.setString(1, "\\x0102");
      String e = messages(assertThrows(Throwable.class, () -> ps.executeQuery().close()));
      assertTrue(e.contains("not yet supported for expected Arrow type Binary"), e);
    }
  }

  /**
   * to_hex and div of a parameter the statement leaves untyped. PostgreSQL cannot prepare
   * {@code to_hex($1)} without a parameter type (42725, "is not unique": its JDBC driver
   * declares setInt's int4 and setLong's int8); this driver declares no type of its own, so it
   * is refused at prepare, and a cast in the SQL gives the type. div's parameters are numeric,
   * as PostgreSQL types them: declared DECIMAL(38, 16), bound with setBigDecimal at that scale.
   */
  @Test
  void toHexAndDiv() throws SQLException {
    String e = messages(assertThrows(SQLException.class, () -> conn.prepareStatement("SELECT to_hex(?)").close()));
    assertTrue(e.contains("function to_hex(unknown) is not unique"), e);
    try (PreparedStatement ps = conn.prepareStatement("SELECT div(?, 2)")) {
      assertEquals(Types.DECIMAL, ps.getParameterMetaData().getParameterType(1));
      ps.setBigDecimal(1, new BigDecimal("-7.5").setScale(16));
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(new BigDecimal("-3"), rs.getBigDecimal(1));
      }
    }
    try (PreparedStatement ps = conn.prepareStatement("SELECT to_hex(CAST(? AS int)), div(CAST(? AS bigint), 2)")) {
      ps.setLong(1, -1);
      ps.setLong(2, -7);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals("ffffffff", rs.getString(1));
        assertEquals(new BigDecimal("-3"), rs.getBigDecimal(2));
      }
    }
  }
}
