package io.flightsrv.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every no-argument {@link DatabaseMetaData} method of the driver on the class path answers
 * without an exception (BI tools such as DBeaver call most of them at connect). {@code make
 * test-clients} runs this class with flight-sql-jdbc-driver 18.3.0 and again with 15.0.2 and
 * 16.1.0 ({@code -Dflight-sql-jdbc.version=…}), whose SqlInfo enums know fewer ids.
 */
class MetadataJdbcTest {
  @Test
  void everyNoArgumentMethodAnswers() throws SQLException {
    String addr = System.getProperty("flightsrv.addr", System.getenv("FLIGHTSRV_TEST_ADDR"));
    try (Connection conn = DriverManager.getConnection(FlightsExample.url(addr))) {
      DatabaseMetaData md = conn.getMetaData();
      Method[] methods = DatabaseMetaData.class.getMethods();
      Arrays.sort(methods, Comparator.comparing(Method::getName));
      List<String> failures = new ArrayList<>();
      int called = 0;
      for (Method m : methods) {
        if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers())) {
          continue;
        }
        called++;
        try {
          Object r = m.invoke(md);
          if (r instanceof ResultSet) {
            try (ResultSet rs = (ResultSet) r) {
              while (rs.next()) {
                for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                  rs.getObject(i);
                }
              }
            }
          }
        } catch (InvocationTargetException e) {
          failures.add(m.getName() + ": " + e.getCause());
        } catch (ReflectiveOperationException e) {
          failures.add(m.getName() + ": " + e);
        }
      }
      assertEquals(List.of(), failures, "DatabaseMetaData methods that threw");
      assertTrue(called > 130, "only " + called + " methods called");
      // The answers are the server's, not the driver's defaults.
      assertEquals("flightsrv", md.getDatabaseProductName());
      assertEquals("\"", md.getIdentifierQuoteString());
      assertFalse(md.isReadOnly()); // rows can be written (bulk ingest, INSERT)
      assertFalse(md.supportsTransactions());
      assertEquals(Connection.TRANSACTION_NONE, md.getDefaultTransactionIsolation());
      assertTrue(md.supportsResultSetType(ResultSet.TYPE_FORWARD_ONLY));
      assertFalse(md.supportsResultSetType(ResultSet.TYPE_SCROLL_INSENSITIVE));
      assertEquals(63, md.getMaxTableNameLength());
      assertTrue(md.getTimeDateFunctions().contains("date_trunc"), md.getTimeDateFunctions());
      // And a query works with this driver version.
      try (Statement st = conn.createStatement();
          ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM flights WHERE origin = 'ORD'" + FlightsJdbcTest.RANGE)) {
        assertTrue(rs.next());
        assertEquals(FlightsJdbcTest.ORD, rs.getLong(1));
      }
    }
  }
}
