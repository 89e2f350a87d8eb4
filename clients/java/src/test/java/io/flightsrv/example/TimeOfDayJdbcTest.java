package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Time;
import java.sql.Types;
import java.time.LocalTime;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL's time without time zone through the JDBC driver: a time column is JDBC's TIME
 * (Arrow time64[us]), and {@code setTime} binds a parameter of type time (CAST(? AS time)),
 * which the server declares time32[ms] (the driver writes milliseconds of the local day into
 * any time vector). The expected texts are PostgreSQL's for the same values (time '06:59:30' +
 * interval '1 hour' is 07:59:30).
 *
 * <p>The driver reads a time as milliseconds of the day in UTC: {@code getTime(i).getTime()} is
 * the time of day in every JVM zone, while {@code getTime(i)}, {@code getString(i)} and {@code
 * getObject(i, LocalTime.class)} show it shifted into a JVM zone that is not UTC (06:59:30 is
 * 00:59:30 in America/Chicago; apache/arrow-java#732).
 */
class TimeOfDayJdbcTest {
  static Connection conn;

  @BeforeAll
  static void connect() throws SQLException {
    conn = Drivers.connect("");
  }

  @AfterAll
  static void close() throws SQLException {
    if (conn != null) {
      Drivers.close(conn, Drivers.leaksBindings(conn));
    }
  }

  @Test
  void timeColumnsAreTime() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(
            "SELECT time '06:59:30' AS t, (time '06:59:30' + interval '1 hour')::text AS s");
        ResultSet rs = ps.executeQuery()) {
      assertEquals(Types.TIME, rs.getMetaData().getColumnType(1));
      assertTrue(rs.next());
      assertEquals(LocalTime.of(6, 59, 30), LocalTime.ofNanoOfDay(rs.getTime(1).getTime() * 1_000_000L));
      assertEquals("07:59:30", rs.getString(2));
    }
  }

  @Test
  void setTimeBindsATimeOfDay() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT (CAST(? AS time) + interval '1 hour')::text AS s")) {
      ps.setTime(1, Time.valueOf("06:59:30"));
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals("07:59:30", rs.getString(1));
      }
    }
  }
}
