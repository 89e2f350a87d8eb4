package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ParameterMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
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
 * Timestamps bound and read back through the JDBC driver, in a JVM whose default zone is the
 * pom's {@code jvm.timezone} (America/Chicago; the pom runs this class again in a UTC JVM),
 * with each driver version {@code make test-clients} runs (15.0.2, 16.1.0, 18.3.0).
 *
 * <p>By default flightsrv declares time parameters as timestamp[ms, UTC]: {@code setTimestamp}
 * with a UTC Calendar binds exactly to the millisecond, never finer (the driver turns every
 * {@code setTimestamp} into epoch milliseconds, Avatica's TypedValue). To the microsecond (and
 * beyond), connect with the property {@code flightsrv.time_parameters=text}: time parameters are
 * then declared utf8 and bound with {@code setString} (or {@code setObject} of a String) of an
 * ISO 8601 instant, e.g. {@code instant.toString()} or {@code offsetDateTime.toString()}; a
 * value without an offset is UTC. {@code setObject} with java.time values is refused by the
 * driver whatever the declaration (DriverQuirksJdbcTest). Instants read back exactly to the
 * microsecond with {@code getTimestamp(i, utcCalendar).toLocalDateTime()} as a UTC wall-clock
 * time (every version), or {@code getObject(i, Instant.class)} (17 and newer).
 */
class TimeParamsJdbcTest {
  static final Calendar UTC = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
  static final String COUNT =
      "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?";
  // ORD's first two flights of the sample leave at 05:57, the third at 06:00 (DuckDB:
  // SELECT date, id FROM 'testdata/flights-sample.parquet' WHERE origin = 'ORD' ORDER BY 1, 2 LIMIT 3)
  static final Instant FIRST = Instant.parse("2001-01-01T05:57:00Z");
  static final Instant SIX = Instant.parse("2001-01-01T06:00:00Z");
  static final Instant MICRO = FIRST.plusNanos(1000);

  /** conn declares timestamp parameters (the default), text those of the flightsrv.time_parameters=text connection. */
  static Connection conn, text;

  @BeforeAll
  static void connect() throws SQLException {
    conn = Drivers.connect("");
    text = Drivers.connect("&flightsrv.time_parameters=text");
  }

  @AfterAll
  static void close() throws SQLException {
    if (conn != null) {
      Drivers.close(conn, Drivers.leaksBindings(conn)); // fails if the driver's allocator leaked
    }
    if (text != null) {
      Drivers.close(text, Drivers.leaksBindings(text));
    }
  }

  static long count(String origin, Instant from, Instant to) throws SQLException {
    try (PreparedStatement ps = conn.prepareStatement(COUNT)) {
      ps.setString(1, origin);
      ps.setTimestamp(2, Timestamp.from(from), UTC);
      ps.setTimestamp(3, Timestamp.from(to), UTC);
      return single(ps);
    }
  }

  /** COUNT over [from, to) with the bounds bound as the given objects (strings) on the text connection. */
  static long countText(Object from, Object to) throws SQLException {
    try (PreparedStatement ps = text.prepareStatement(COUNT)) {
      ps.setString(1, "ORD");
      ps.setObject(2, from);
      ps.setString(3, to.toString());
      return single(ps);
    }
  }

  /** The JDBC type the driver reports for timestamp[ns, UTC]: TIMESTAMP before 17. */
  static int timestampType(Connection c) throws SQLException {
    return Drivers.major(c) >= 17 ? Types.TIMESTAMP_WITH_TIMEZONE : Types.TIMESTAMP;
  }

  /**
   * Reads the instant of column i exactly in any JVM zone and with every driver version:
   * getTimestamp with a UTC Calendar gives the UTC wall-clock time (its own instant is shifted
   * by the JVM's offset, apache/arrow-java#732). From 17 on, getObject(i, Instant.class) and
   * OffsetDateTime.class give the instant directly, and must agree.
   */
  static Instant instant(ResultSet rs, int i) throws SQLException {
    Instant t = rs.getTimestamp(i, UTC).toLocalDateTime().toInstant(ZoneOffset.UTC);
    if (Drivers.major(rs.getStatement().getConnection()) >= 17) {
      assertEquals(t, rs.getObject(i, Instant.class));
      assertEquals(t, rs.getObject(i, OffsetDateTime.class).toInstant());
    }
    return t;
  }

  static long single(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      assertTrue(rs.next());
      return rs.getLong(1);
    }
  }

  @Test
  void jvmZoneIsThePoms() {
    String want = System.getProperty("flightsrv.jvm.timezone");
    assertEquals(want, TimeZone.getDefault().getID(), "surefire's jvm.timezone");
    if (!want.equals("UTC")) {
      assertTrue(TimeZone.getDefault().getOffset(FIRST.toEpochMilli()) != 0);
    }
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
    assertEquals(0, count("ORD", FIRST.plusMillis(1), SIX));
    assertEquals(0, count("ORD", Instant.parse("2001-01-01T00:00:00Z"), FIRST));
    assertEquals(3, count("ORD", FIRST, Instant.parse("2001-01-01T06:00:00.001Z")));
  }

  /**
   * The driver's limit, reproduced: setTimestamp drops what is finer than a millisecond, so a
   * lower bound 1 µs after the 05:57 flights still counts them, whatever the declared unit.
   */
  @Test
  void setTimestampIsCutToTheMillisecond() throws SQLException {
    assertEquals(2, count("ORD", MICRO, SIX), "the driver's setTimestamp keeps microseconds now");
  }

  @Test
  void textParametersAreDeclaredUtf8() throws SQLException {
    for (Connection c : List.of(conn, text)) {
      try (PreparedStatement ps = c.prepareStatement(COUNT)) {
        ParameterMetaData md = ps.getParameterMetaData();
        assertEquals(Types.VARCHAR, md.getParameterType(1));
        int want = c == text ? Types.VARCHAR : timestampType(c);
        assertEquals(want, md.getParameterType(2));
        assertEquals(want, md.getParameterType(3));
      }
    }
  }

  /** ISO strings on the text connection bind exactly to the microsecond. */
  @Test
  void isoStringsKeepMicroseconds() throws SQLException {
    assertEquals(0, countText(MICRO.toString(), SIX));
    assertEquals(2, countText(FIRST.toString(), MICRO));
    assertEquals(0, countText(FIRST.minusNanos(1000).toString(), FIRST));
    assertEquals(1, countText(SIX.minusNanos(1000).toString(), SIX.plusNanos(1000)));
    assertEquals(0, countText(SIX.plusNanos(1000).toString(), SIX.plusSeconds(60)));
    assertEquals(FlightsJdbcTest.ORD, countText("2001-01-01T00:00:00Z", "2001-08-01T00:00:00Z"));
    // java.time values, as strings: an offset of their own, or none (UTC).
    assertEquals(0, countText(MICRO.atOffset(ZoneOffset.ofHours(-6)).toString(), SIX));
    assertEquals(2, countText(OffsetDateTime.parse("2001-01-01T00:57:00-05:00").toString(), MICRO));
    assertEquals(0, countText(LocalDateTime.parse("2001-01-01T05:57:00.000001").toString(), SIX));
    assertEquals(2, countText(LocalDateTime.parse("2001-01-01T05:57:00").toString(), MICRO));
  }

  /** A µs instant bound as text comes back exact, through both accessors and in any JVM zone. */
  @Test
  void microsecondsRoundTrip() throws SQLException {
    Instant t = Instant.parse("2001-03-15T12:34:56.123456Z");
    try (PreparedStatement ps = text.prepareStatement("SELECT CAST(? AS timestamptz) AS t")) {
      ps.setString(1, t.toString());
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(timestampType(text), rs.getMetaData().getColumnType(1));
        assertEquals(t, instant(rs, 1));
      }
    }
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
          rows.add(instant(rs, 1) + " " + rs.getString(2));
        }
      }
      assertEquals(List.of("2001-01-01T05:57:00Z 0000000190", "2001-01-01T05:57:00Z 0000000200",
          "2001-01-01T06:00:00Z 0000000230"), rows);
    }
  }
}
