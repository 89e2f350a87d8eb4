package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Parameters PostgreSQL types numeric, and parameters compared with an integer, through the
 * Arrow Flight SQL JDBC driver, which converts each Java value into the type the server declares
 * for the parameter (docs/sql.md, "Parameters"):
 *
 * <ul>
 *   <li>a parameter compared with an integer ({@code (value->>'delay')::int >= ?}) is declared
 *       double precision, so that setDouble(12.5) and setBigDecimal(12.5) arrive whole and compare
 *       as PostgreSQL compares an integer with them (trial24's D2: declared bigint, the driver
 *       truncated 12.5 to 12 and the count included the delays of 12); setLong and setInt work as
 *       before;
 *   <li>a numeric parameter ({@code ?::numeric(10,2)}, {@code round(?::numeric, 2)}, {@code x *
 *       ?} beside a numeric) is declared DECIMAL, numeric(10,2) for a cast to it and
 *       decimal(38,16) otherwise, which setBigDecimal fills when the BigDecimal's scale is the
 *       declared one: the driver refuses any other scale, and refuses setInt, setLong and
 *       setDouble on a DECIMAL parameter (its converter casts the value to BigDecimal), before
 *       anything reaches the server — never a silent change of the value.
 * </ul>
 */
class NumericParamsJdbcTest {
  static Connection conn;

  /** MSP's flights of 2001-05-10 with a delay of at least the parameter (trial24's D2). */
  static final String DELAYED = "SELECT count(*) FROM flights WHERE origin = 'MSP' AND timestamp >= '2001-05-10'"
      + " AND timestamp < '2001-05-11' AND (value->>'delay')::int >= ?";

  @BeforeAll
  static void connect() throws SQLException {
    conn = Drivers.connect("");
  }

  @AfterAll
  static void close() throws SQLException {
    Drivers.close(conn, Drivers.leaksBindings(conn));
  }

  interface Binder {
    void bind(PreparedStatement p) throws SQLException;
  }

  /** The one value of sql's one row with its parameters bound by b, its declared type checked. */
  static Object one(String sql, int declared, Binder b) throws SQLException {
    try (PreparedStatement p = conn.prepareStatement(sql)) {
      ParameterMetaData md = p.getParameterMetaData();
      for (int i = 1; i <= md.getParameterCount(); i++) {
        assertEquals(declared, md.getParameterType(i), sql + " $" + i);
      }
      b.bind(p);
      try (ResultSet rs = p.executeQuery()) {
        assertTrue(rs.next(), sql);
        return rs.getObject(1);
      }
    }
  }

  @Test
  void integerComparedWithAFraction() throws SQLException {
    long atLeast12 = (Long) one(DELAYED, Types.DOUBLE, p -> p.setLong(1, 12));
    long atLeast13 = (Long) one(DELAYED, Types.DOUBLE, p -> p.setInt(1, 13));
    // The trial's day has a delay of exactly 12: >= 12.5 is >= 13, not >= 12.
    assertNotEquals(atLeast12, atLeast13);
    assertEquals(atLeast13, one(DELAYED, Types.DOUBLE, p -> p.setDouble(1, 12.5)));
    assertEquals(atLeast13, one(DELAYED, Types.DOUBLE, p -> p.setBigDecimal(1, new BigDecimal("12.5"))));
    assertEquals(atLeast12, one(DELAYED, Types.DOUBLE, p -> p.setDouble(1, 12.0)));
    String between = DELAYED.replace(">= ?", "BETWEEN ? AND ?");
    assertEquals(atLeast13, one(between, Types.DOUBLE, p -> {
      p.setDouble(1, 12.5);
      p.setDouble(2, 1e6);
    }));
    String in = DELAYED.replace(">= ?", "IN (?, ?)");
    assertEquals(atLeast12 - atLeast13, one(in, Types.DOUBLE, p -> {
      p.setDouble(1, 12.0);
      p.setDouble(2, 12.5);
    }));
  }

  @Test
  void numericParameters() throws SQLException {
    assertEquals(new BigDecimal("12.50"), one("SELECT ?::numeric(10,2)", Types.DECIMAL, p -> p.setBigDecimal(1, new BigDecimal("12.50"))));
    assertEquals(new BigDecimal("2.35"),
        one("SELECT round(?::numeric, 2)", Types.DECIMAL, p -> p.setBigDecimal(1, new BigDecimal("2.345").setScale(16))));
    assertEquals("2.345", one("SELECT (?::numeric)::text", Types.DECIMAL, p -> p.setBigDecimal(1, new BigDecimal("2.345").setScale(16)))
        .toString().replaceAll("0+$", ""));
    // The delays of MSP's day times 1.25, summed exactly.
    BigDecimal sum = (BigDecimal) one("SELECT sum((value->>'delay')::numeric(10,2) * ?) FROM flights WHERE origin = 'MSP'"
        + " AND timestamp >= '2001-05-10' AND timestamp < '2001-05-11'", Types.DECIMAL, p -> p.setBigDecimal(1, new BigDecimal("1.25").setScale(16)));
    BigDecimal delays = new BigDecimal(((Number) one("SELECT sum((value->>'delay')::int) FROM flights WHERE origin = 'MSP'"
        + " AND timestamp >= '2001-05-10' AND timestamp < '2001-05-11'", Types.DECIMAL, p -> {})).longValue());
    assertEquals(0, delays.multiply(new BigDecimal("1.25")).compareTo(sum), sum + " vs " + delays);
  }

  /**
   * What the driver does with values that are not a BigDecimal of the declared scale: it refuses
   * them itself (a BigDecimal of another scale by Arrow's DecimalVector, any other Java type by
   * its converter), before anything reaches the server; after the vector's refusal the
   * parameter vectors leak (as in DriverQuirksJdbcTest), after its converter's they do not.
   */
  @Test
  void decimalParameterRefusesOtherValues() throws SQLException {
    String type = "expected Arrow type Decimal(38, 16, 128)";
    Object[][] cases = {
      {(Binder) p -> p.setBigDecimal(1, new BigDecimal("2.5")), "BigDecimal scale must equal that in the Arrow vector: 1 != 16", true},
      {(Binder) p -> p.setInt(1, 2), "Binding value of type INTEGER is not yet supported for " + type, false},
      {(Binder) p -> p.setLong(1, 2), "Binding value of type LONG is not yet supported for " + type, false},
      {(Binder) p -> p.setDouble(1, 2.5), "Binding value of type DOUBLE is not yet supported for " + type, false},
    };
    for (Object[] c : cases) {
      Connection conn = Drivers.connect("");
      try (PreparedStatement p = conn.prepareStatement("SELECT round(?::numeric, 2)")) {
        ((Binder) c[0]).bind(p);
        p.executeQuery().close();
        fail("bound: " + c[1]);
      } catch (Exception e) {
        String all = "";
        for (Throwable t = e; t != null; t = t.getCause()) {
          all += t.getClass().getName() + ": " + t.getMessage() + "\n";
        }
        assertTrue(all.contains((String) c[1]), all);
      }
      Drivers.close(conn, (Boolean) c[2]);
    }
  }
}
