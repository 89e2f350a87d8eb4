package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * SET and RESET through the driver (issue 18): those that keep the semantics every flightsrv
 * statement has are no-ops answering an update count of 0 on execute, executeUpdate and a
 * prepared statement; one that would change them is refused naming the setting
 * (docs/sql.md, statements without a table).
 */
class SetJdbcTest {
  static final String[] ACCEPTED = {
    "SET TimeZone = 'UTC'", "SET application_name = 'jdbc'", "SET extra_float_digits = 3",
    "SET DateStyle = 'ISO, MDY'", "SET statement_timeout = 0", "RESET ALL",
  };

  @Test
  void acceptedSetsAreNoOps() throws SQLException {
    try (Connection conn = Drivers.connect("")) {
      for (String sql : ACCEPTED) {
        try (Statement st = conn.createStatement()) {
          assertEquals(0, st.executeUpdate(sql), sql);
          assertFalse(st.execute(sql), sql + ": execute reports no result set");
        }
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
          assertEquals(0, ps.executeUpdate(), sql + " prepared");
        }
      }
      Drivers.close(conn, false);
    }
  }

  @Test
  void semanticsChangingSetIsRefusedByName() throws SQLException {
    try (Connection conn = Drivers.connect("")) {
      try (Statement st = conn.createStatement()) {
        SQLException e = assertThrows(SQLException.class, () -> st.executeUpdate("SET TimeZone = 'America/Chicago'"));
        String all = "";
        for (Throwable c = e; c != null; c = c.getCause()) {
          all += c.getMessage() + "\n";
        }
        // The driver quotes the statement in its own message; the server's names the setting
        // and the value statements run with.
        assertTrue(all.contains("SET TimeZone to this value is not supported: flightsrv statements run with TimeZone UTC"), all);
      }
      Drivers.close(conn, false);
    }
  }
}
