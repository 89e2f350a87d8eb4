package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.ResultSet;
import java.util.Properties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Arrow Flight SQL JDBC driver against the secured servers of the test deployment
 * (clients/python/flightsrv_server.py): TLS with a user and password, mutual TLS, and the
 * refusals (wrong password, no password, plaintext, no client certificate).
 */
class SecurityJdbcTest {
  static String tlsAddr, mtlsAddr, ca, clientCert, clientKey, user, password;

  @BeforeAll
  static void env() {
    tlsAddr = need("FLIGHTSRV_TEST_TLS_ADDR");
    mtlsAddr = need("FLIGHTSRV_TEST_MTLS_ADDR");
    ca = need("FLIGHTSRV_TEST_CA");
    clientCert = need("FLIGHTSRV_TEST_CLIENT_CERT");
    clientKey = need("FLIGHTSRV_TEST_CLIENT_KEY");
    user = need("FLIGHTSRV_TEST_USER");
    password = need("FLIGHTSRV_TEST_PASSWORD");
  }

  static String need(String name) {
    String v = System.getenv(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalStateException(name + " is not set: run through `make test-clients`"
          + " (clients/python/flightsrv_server.py starts the secured servers)");
    }
    return v;
  }

  static Properties props(String user, String password) {
    Properties p = new Properties();
    if (user != null) {
      p.setProperty("user", user);
      p.setProperty("password", password);
    }
    p.setProperty("useEncryption", "true");
    p.setProperty("tlsRootCerts", ca);
    return p;
  }

  static long countOrd(Connection conn) throws SQLException {
    try (Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM flights WHERE origin = 'ORD'" + FlightsJdbcTest.RANGE)) {
      assertTrue(rs.next());
      long n = rs.getLong(1);
      assertFalse(rs.next());
      return n;
    }
  }

  @Test
  void tlsWithPassword() throws SQLException {
    try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + tlsAddr, props(user, password))) {
      assertEquals(FlightsJdbcTest.ORD, countOrd(conn));
      assertEquals("flightsrv", conn.getMetaData().getDatabaseProductName());
    }
  }

  @Test
  void mutualTls() throws SQLException {
    Properties p = props(user, password);
    p.setProperty("clientCertificate", clientCert);
    p.setProperty("clientKey", clientKey);
    try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + mtlsAddr, p)) {
      assertEquals(FlightsJdbcTest.ORD, countOrd(conn));
    }
  }

  @Test
  void wrongPasswordIsUnauthenticated() {
    SQLException e = assertThrows(SQLException.class, () -> {
      try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + tlsAddr, props(user, "wrong"))) {
        countOrd(conn);
      }
    });
    String text = FlightsJdbcTest.chain(e);
    assertTrue(text.contains("UNAUTHENTICATED"), text);
    assertTrue(text.contains("invalid credentials"), text);
  }

  @Test
  void noPasswordIsUnauthenticated() {
    SQLException e = assertThrows(SQLException.class, () -> {
      try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + tlsAddr, props(null, null))) {
        countOrd(conn);
      }
    });
    String text = FlightsJdbcTest.chain(e);
    assertTrue(text.contains("UNAUTHENTICATED"), text);
  }

  @Test
  void plaintextIsRefused() {
    Properties p = props(user, password);
    p.setProperty("useEncryption", "false");
    assertThrows(SQLException.class, () -> {
      try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + tlsAddr, p)) {
        countOrd(conn);
      }
    });
  }

  @Test
  void mutualTlsNeedsAClientCertificate() {
    assertThrows(SQLException.class, () -> {
      try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + mtlsAddr, props(user, password))) {
        countOrd(conn);
      }
    });
  }

  @Test
  void exampleWithCredentialsAndMutualTls() throws SQLException {
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    FlightsExample.run(mtlsAddr, "ORD", new java.io.PrintStream(buf, true, java.nio.charset.StandardCharsets.UTF_8),
        FlightsExample.properties(user, password, ca, clientCert, clientKey));
    String out = buf.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(out.startsWith("flights leaving ORD in [2001-01-01, 2001-08-01) UTC: " + FlightsJdbcTest.ORD + "\n"), out);
  }
}
