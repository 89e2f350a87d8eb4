package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * What the tests need of the flight-sql-jdbc-driver version on the class path (18.3.0 by
 * default; {@code make test-clients} also runs the tests with 15.0.2 and 16.1.0).
 */
final class Drivers {
  private Drivers() {}

  /** The address of the demo server the tests run against (host:port). */
  static String addr() {
    return System.getProperty("flightsrv.addr", System.getenv("FLIGHTSRV_TEST_ADDR"));
  }

  /** A connection to the demo server with extra URL properties (e.g. "&flightsrv.time_parameters=text"). */
  static Connection connect(String extra) throws SQLException {
    return DriverManager.getConnection(FlightsExample.url(addr()) + extra);
  }

  /** The major version of the driver (15, 16, 18). */
  static int major(Connection conn) throws SQLException {
    return conn.getMetaData().getDriverMajorVersion();
  }

  /**
   * Whether the driver leaks the DoPut answer of every parameter binding: flight-sql-jdbc 15
   * and 16 never read nor release the PutResult a server answers a binding with (the
   * DoPutPreparedStatementResult holding the updated handle, which every Flight SQL server
   * built on arrow-go sends), so a connection that bound parameters reports "Memory was leaked"
   * when it closes. 17 and newer read it and use the handle.
   */
  static boolean leaksBindings(Connection conn) throws SQLException {
    return major(conn) < 17;
  }

  /**
   * Closes conn, which must report the driver's leak when leaks is true (a driver bug,
   * reproduced) and close cleanly otherwise.
   */
  static void close(Connection conn, boolean leaks) {
    try {
      conn.close();
      if (leaks) {
        fail("the driver's leak is fixed: drop the expectation");
      }
    } catch (SQLException e) {
      if (!leaks) {
        fail("close: " + e.getMessage());
      }
      // 18.3.0 says so; 15 and 16 say "Failed to clean up client resources" with the leak as
      // the cause.
      String all = "";
      for (Throwable c = e; c != null; c = c.getCause()) {
        all += c.getMessage() + "\n";
      }
      assertTrue(all.contains("Memory was leaked"), all);
    }
  }
}
