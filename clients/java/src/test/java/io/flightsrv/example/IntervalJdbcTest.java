package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An interval (Arrow month_day_nano_interval) and a smallint (int16) read through the Arrow Flight
 * SQL JDBC driver from the server FLIGHTSRV_TEST_ADDR (or -Dflightsrv.addr) names. PostgreSQL
 * answers TIMESTAMPTZ '2001-03-01 00:00:00+00' - TIMESTAMPTZ '2001-01-31 12:30:00+00' with 28 days
 * 11:30:00 (its text, which the server writes for ::text) and 7::smallint with a smallint.
 */
class IntervalJdbcTest {
  static Connection conn;

  @BeforeAll
  static void connect() throws SQLException {
    String addr = System.getProperty("flightsrv.addr", System.getenv("FLIGHTSRV_TEST_ADDR"));
    conn = DriverManager.getConnection(FlightsExample.url(addr));
  }

  @AfterAll
  static void close() throws SQLException {
    conn.close();
  }

  @Test
  void intervalAndSmallint() throws SQLException {
    String span = "TIMESTAMPTZ '2001-03-01 00:00:00+00' - TIMESTAMPTZ '2001-01-31 12:30:00+00'";
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT " + span + " AS span, (" + span + ")::text AS t, 7::smallint AS s")) {
      assertEquals(Types.SMALLINT, rs.getMetaData().getColumnType(3));
      assertTrue(rs.next());
      Object iv = rs.getObject(1);
      // The driver's PeriodDuration: the months and days as a Period, the time as a Duration.
      assertEquals("P28D PT11H30M", iv.toString());
      assertEquals("28 days 11:30:00", rs.getString(2));
      assertEquals((short) 7, rs.getShort(3));
      assertEquals(Short.class, rs.getObject(3).getClass());
    }
  }
}
