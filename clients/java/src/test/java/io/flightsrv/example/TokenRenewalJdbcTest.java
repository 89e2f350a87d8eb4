package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A JDBC connection kept across token lifetimes (issue 20), against the short-token server of
 * the test deployment (clients/python/flightsrv_server.py: bearer tokens of
 * FLIGHTSRV_TEST_SHORT_TOKEN_TTL seconds, no clock-skew leeway). A call whose bearer has
 * passed half its lifetime is answered with a fresh one in the response header
 * {@code authorization}, which the driver adopts: a connection queried at intervals shorter
 * than a lifetime stays signed in for more than three lifetimes; one left idle past its
 * token's expiry is refused UNAUTHENTICATED.
 */
class TokenRenewalJdbcTest {
  @Test
  void connectionKeptAcrossThreeTokenLifetimes() throws Exception {
    String addr = SecurityJdbcTest.need("FLIGHTSRV_TEST_SHORT_TOKEN_ADDR");
    long ttlMillis = Long.parseLong(SecurityJdbcTest.need("FLIGHTSRV_TEST_SHORT_TOKEN_TTL")) * 1000;
    SecurityJdbcTest.env();
    try (Connection conn = DriverManager.getConnection("jdbc:arrow-flight-sql://" + addr,
        SecurityJdbcTest.props(SecurityJdbcTest.user, SecurityJdbcTest.password))) {
      long start = System.nanoTime();
      int queries = 0;
      while ((System.nanoTime() - start) / 1_000_000 < ttlMillis * 7 / 2) {
        assertEquals(FlightsJdbcTest.ORD, SecurityJdbcTest.countOrd(conn),
            "query " + queries + " after " + (System.nanoTime() - start) / 1_000_000 + " ms");
        queries++;
        Thread.sleep(ttlMillis / 8);
      }
      assertTrue(queries >= 10, queries + " queries");
      // Idle past the latest token's expiry (issued at most now, in whole seconds): refused.
      Thread.sleep(ttlMillis + 1100);
      SQLException e = assertThrows(SQLException.class, () -> SecurityJdbcTest.countOrd(conn));
      String text = FlightsJdbcTest.chain(e);
      assertTrue(text.contains("UNAUTHENTICATED"), text);
    }
  }
}
