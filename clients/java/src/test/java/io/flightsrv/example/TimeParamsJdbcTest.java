package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.List;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Timestamps bound with {@code setTimestamp} and read back with {@code getObject} in a JVM whose
 * default zone is not UTC (the pom runs the tests in America/Chicago).
 *
 * <p>flight-sql-jdbc-driver 18.3.0 turns a {@code setTimestamp} value into epoch milliseconds
 * (Avatica's TypedValue) and, without a Calendar, shifts it by the JVM zone's offset; the server
 * declares timestamp parameters as timestamp[ms, UTC], into which the driver writes those
 * milliseconds exactly. So: pass a UTC Calendar, and expect millisecond precision from
 * {@code setTimestamp}. Instants read with {@code getObject(i, OffsetDateTime.class)} or
 * {@code Instant.class} are exact ({@code getTimestamp} is shifted by the zone, arrow-java#732).
 */
class TimeParamsJdbcTest {
  static final Calendar UTC = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
  static final String COUNT =
      "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?";
  // ORD's first two flights of the sample leave at 05:57, the third at 06:00 (DuckDB:
  // SELECT date, id FROM 'testdata/flights-sample.parquet' WHERE origin = 'ORD' ORDER BY 1, 2 LIMIT 3)
  static final Instant FIRST = Instant.parse("2001-01-01T05:57:00Z");

  static Connection conn;

  @BeforeAll
  static void connect() throws SQLException {
    String addr = System.getProperty("flightsrv.addr", System.getenv("FLIGHTSRV_TEST_ADDR"));
    conn = DriverManager.getConnection(FlightsExample.url(addr));
  }

  @AfterAll
  static void close() throws SQLException {
    if (conn != null) {
      conn.close(); // fails if the driver's allocator leaked
    }
  }

  static long count(String origin, Instant from, Instant to) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(COUNT)) {
      ps.setString(1, origin);
      ps.setTimestamp(2, Timestamp.from(from), UTC);
      ps.setTimestamp(3, Timestamp.from(to), UTC);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        return rs.getLong(1);
      }
    }
  }

  @Test
  void jvmIsNotUtc() {
    assertNotEquals(0, TimeZone.getDefault().getOffset(FIRST.toEpochMilli()),
        "run with -Djvm.timezone=America/Chicago (the pom's default)");
  }

  @Test
  void setTimestampWithUtcCalendar() throws SQLException {
    assertEquals(FlightsJdbcTest.ORD,
        count("ORD", Instant.parse("2001-01-01T00:00:00Z"), Instant.parse("2001-08-01T00:00:00Z")));
    assertEquals(FlightsJdbcTest.ORD_MAR15_APR15,
        count("ORD", Instant.parse("2001-03-15T00:00:00Z"), Instant.parse("2001-04-15T00:00:00Z")));
    // The bounds are exact to the millisecond: [first, first + 1 ms) holds both 05:57 flights,
    // [first + 1 ms, 06:00) none, and [midnight, first) none.
    assertEquals(2, count("ORD", FIRST, FIRST.plusMillis(1)));
    assertEquals(0, count("ORD", FIRST.plusMillis(1), Instant.parse("2001-01-01T06:00:00Z")));
    assertEquals(0, count("ORD", Instant.parse("2001-01-01T00:00:00Z"), FIRST));
    assertEquals(3, count("ORD", FIRST, Instant.parse("2001-01-01T06:00:00.001Z")));
  }

  @Test
  void instantsReadBackExactly() throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement("SELECT timestamp, id FROM flights WHERE origin = ?"
        + " AND timestamp >= ? AND timestamp < ? ORDER BY timestamp, id")) {
      ps.setString(1, "ORD");
      ps.setTimestamp(2, Timestamp.from(FIRST), UTC);
      ps.setTimestamp(3, Timestamp.from(FIRST.plusSeconds(240)), UTC);
      List<String> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime odt = rs.getObject(1, OffsetDateTime.class);
          assertEquals(odt.toInstant(), rs.getObject(1, Instant.class));
          rows.add(odt.withOffsetSameInstant(ZoneOffset.UTC) + " " + rs.getString(2));
        }
      }
      assertEquals(List.of("2001-01-01T05:57Z 0000000190", "2001-01-01T05:57Z 0000000200",
          "2001-01-01T06:00Z 0000000230"), rows);
    }
  }
}
