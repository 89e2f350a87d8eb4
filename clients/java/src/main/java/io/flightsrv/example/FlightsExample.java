package io.flightsrv.example;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.TimeZone;
import java.util.Calendar;
import java.util.Properties;
import java.time.Instant;
import java.sql.Timestamp;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

/**
 * Java example client of flightsrv through the Apache Arrow Flight SQL JDBC driver: counts the
 * flights leaving one airport and prints its first ten flights in (timestamp, id) order.
 *
 * <p>Start the server with {@code make demo}, then from {@code clients/java}:
 *
 * <pre>
 * mvn -q compile exec:java -Dexec.args="127.0.0.1:32010 ORD"
 * </pre>
 *
 * <p>Against a server with authentication and TLS, set FLIGHTSRV_USER and FLIGHTSRV_PASSWORD,
 * and FLIGHTSRV_TLS_CA to the PEM file of the CA that signed the server's certificate (the
 * driver's {@code useEncryption=true&tlsRootCerts=…}; for mutual TLS also FLIGHTSRV_TLS_CERT and
 * FLIGHTSRV_TLS_KEY, its {@code clientCertificate} and {@code clientKey}): the driver then shakes
 * hands with Basic credentials and sends the bearer token it gets on every call.
 *
 * <p>(The JDBC driver needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED} on JDK 17 and
 * later; {@code .mvn/jvm.config} passes it to Maven's JVM, which {@code exec:java} runs in.)
 *
 * <p>Every query over a routed table pins one partition (the origin airport) and a half-open
 * time range; the server refuses anything else with INVALID_ARGUMENT. The driver prepares every
 * query, so a plain {@link Statement} works as well as a {@link PreparedStatement}.
 */
public final class FlightsExample {
  private FlightsExample() {}

  /** The JDBC URL of a flightsrv listening on addr (host:port) without TLS. */
  public static String url(String addr) {
    return "jdbc:arrow-flight-sql://" + addr + "/?useEncryption=false";
  }

  public static void main(String[] args) throws SQLException {
    String addr = args.length > 0 ? args[0] : envOr("FLIGHTSRV_LISTEN", "127.0.0.1:32010");
    String origin = args.length > 1 ? args[1] : "ORD";
    run(addr, origin, System.out, properties(System.getenv("FLIGHTSRV_USER"), System.getenv("FLIGHTSRV_PASSWORD"),
        System.getenv("FLIGHTSRV_TLS_CA"), System.getenv("FLIGHTSRV_TLS_CERT"), System.getenv("FLIGHTSRV_TLS_KEY")));
  }

  /**
   * The connection properties for a user (none when null) and TLS verified with the PEM CA file
   * caPem (plaintext when null), with a client certificate and key for mutual TLS (when not null).
   */
  public static Properties properties(String user, String password, String caPem, String certPem, String keyPem) {
    Properties p = new Properties();
    if (user != null && !user.isEmpty()) {
      p.setProperty("user", user);
      p.setProperty("password", password == null ? "" : password);
    }
    if (caPem != null && !caPem.isEmpty()) {
      p.setProperty("useEncryption", "true");
      p.setProperty("tlsRootCerts", caPem);
      if (certPem != null && !certPem.isEmpty()) {
        p.setProperty("clientCertificate", certPem);
        p.setProperty("clientKey", keyPem);
      }
    } else {
      p.setProperty("useEncryption", "false");
    }
    return p;
  }

  /** Prints origin's flight count over January–July 2001 and its first ten flights to out. */
  public static void run(String addr, String origin, PrintStream out) throws SQLException {
    run(addr, origin, out, properties(null, null, null, null, null));
  }

  /** Like {@link #run(String, String, PrintStream)}, connecting with the given properties. */
  public static void run(String addr, String origin, PrintStream out, Properties props) throws SQLException {
    try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + addr + "/", props)) {
      // The airport and the time bounds are bound parameters; pass a UTC Calendar to
      // setTimestamp so the JVM's zone does not shift the instants.
      String range = " AND timestamp >= ? AND timestamp < ?";
      Calendar utc = Calendar.getInstance(TimeZone.getTimeZone("UTC"));
      Timestamp from = Timestamp.from(Instant.parse("2001-01-01T00:00:00Z"));
      Timestamp to = Timestamp.from(Instant.parse("2001-08-01T00:00:00Z"));
      try (PreparedStatement ps =
          conn.prepareStatement("SELECT COUNT(*) FROM flights WHERE origin = ?" + range)) {
        ps.setString(1, origin);
        ps.setTimestamp(2, from, utc);
        ps.setTimestamp(3, to, utc);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          out.printf("flights leaving %s in [2001-01-01, 2001-08-01) UTC: %d%n", origin, rs.getLong(1));
        }
      }
      try (PreparedStatement ps = conn.prepareStatement(
          "SELECT timestamp, id, value FROM flights WHERE origin = ?" + range
              + " ORDER BY timestamp, id LIMIT 10")) {
        ps.setString(1, origin);
        ps.setTimestamp(2, from, utc);
        ps.setTimestamp(3, to, utc);
        try (ResultSet rs = ps.executeQuery()) {
          out.println("first flights:");
          while (rs.next()) {
            // timestamp[ns, UTC] arrives as TIMESTAMP_WITH_TIMEZONE; read it as an instant.
            OffsetDateTime ts = rs.getObject(1, OffsetDateTime.class).withOffsetSameInstant(ZoneOffset.UTC);
            String value = new String(rs.getBytes(3), StandardCharsets.UTF_8);
            out.printf("  %s  %s  %s%n", ts, rs.getString(2), value);
          }
        }
      }
    }
  }

  private static String envOr(String key, String def) {
    String v = System.getenv(key);
    return v == null || v.isEmpty() ? def : v;
  }
}
