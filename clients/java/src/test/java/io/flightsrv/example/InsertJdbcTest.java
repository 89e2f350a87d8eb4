package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Calendar;
import java.util.HashMap;
import java.util.Map;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;

/**
 * INSERT through the JDBC driver into the routed table {@code events} of the ingest server
 * ({@code FLIGHTSRV_TEST_INGEST_ADDR}, started by clients/python/flightsrv_server.py): a
 * prepared INSERT executed with {@code executeBatch} of 1,000 rows a batch (the driver binds
 * every row of the batch and sends them in one DoPut; it reports the rows stored as one count),
 * read back through a query and compared row by row; UPDATE refused.
 */
class InsertJdbcTest {
  static final Calendar UTC = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
  static final int BATCH = 1000;

  static String addr() {
    String a = System.getProperty("flightsrv.ingest.addr", System.getenv("FLIGHTSRV_TEST_INGEST_ADDR"));
    assertNotNull(a, "FLIGHTSRV_TEST_INGEST_ADDR not set: run the tests through flightsrv_server.py (make test-clients)");
    return a;
  }

  @Test
  void executeBatchOfPreparedInsert() throws SQLException {
    String channel = "jdbc-" + System.nanoTime();
    // Inside the table's writable window (the last three days), to the millisecond: the
    // driver binds setTimestamp as epoch milliseconds.
    Instant base = Instant.now().truncatedTo(ChronoUnit.MILLIS).minus(2, ChronoUnit.HOURS);
    Map<String, Instant> times = new HashMap<>();
    Map<String, String> values = new HashMap<>();
    try (Connection conn = DriverManager.getConnection(FlightsExample.url(addr()));
        PreparedStatement ps =
            conn.prepareStatement("INSERT INTO events (channel, timestamp, id, value) VALUES (?, ?, ?, ?)")) {
      for (int b = 0; b < 2; b++) {
        for (int i = 0; i < BATCH; i++) {
          String id = String.format("j%d-%04d", b, i);
          Instant at = base.plusMillis(b * BATCH + i);
          String value = "{\"batch\":" + b + ",\"i\":" + i + "}";
          ps.setString(1, channel);
          ps.setTimestamp(2, Timestamp.from(at), UTC);
          ps.setString(3, id);
          ps.setString(4, value);
          ps.addBatch();
          times.put(id, at);
          values.put(id, value);
        }
        int[] counts = ps.executeBatch();
        long total = 0;
        for (int c : counts) {
          total += c;
        }
        assertEquals(BATCH, total, "rows stored by batch " + b);
      }
      try (PreparedStatement q = conn.prepareStatement(
          "SELECT timestamp, id, value FROM events WHERE channel = ? AND timestamp >= ? AND timestamp < ?")) {
        q.setString(1, channel);
        q.setTimestamp(2, Timestamp.from(base.minus(1, ChronoUnit.HOURS)), UTC);
        q.setTimestamp(3, Timestamp.from(base.plus(1, ChronoUnit.HOURS)), UTC);
        int rows = 0;
        try (ResultSet rs = q.executeQuery()) {
          while (rs.next()) {
            String id = rs.getString(2);
            Instant at = rs.getTimestamp(1, UTC).toLocalDateTime().toInstant(ZoneOffset.UTC);
            assertEquals(times.get(id), at, "time of " + id);
            assertArrayEquals(values.get(id).getBytes(StandardCharsets.UTF_8), rs.getBytes(3), "value of " + id);
            rows++;
          }
        }
        assertEquals(2 * BATCH, rows);
      }
      try (Statement st = conn.createStatement()) {
        SQLException e = assertThrows(SQLException.class, () -> st.executeUpdate("UPDATE events SET value = 'x' WHERE channel = 'a'"));
        String all = "";
        for (Throwable c = e; c != null; c = c.getCause()) {
          all += c.getMessage() + "\n";
        }
        assertTrue(all.contains("UPDATE is not supported"), all);
      }
    }
  }
}
