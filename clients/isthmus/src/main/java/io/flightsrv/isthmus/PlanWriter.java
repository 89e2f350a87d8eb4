package io.flightsrv.isthmus;

import io.substrait.isthmus.SqlToSubstrait;
import io.substrait.isthmus.sql.SubstraitCreateStatementParser;
import io.substrait.plan.PlanProtoConverter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.calcite.prepare.Prepare;

/**
 * Writes the Substrait plans isthmus produces from SQL, for the producers' suite.
 *
 * <p>Arguments: the table's CREATE TABLE statement. Standard input: one query a line, {@code
 * name<TAB>sql}. Standard output: one line a query, {@code name<TAB>ok<TAB>base64 plan} or
 * {@code name<TAB>error<TAB>isthmus's message} (its exception class and message, on one line).
 */
public final class PlanWriter {
  public static void main(String[] args) throws Exception {
    Prepare.CatalogReader catalog = SubstraitCreateStatementParser.processCreateStatementsToCatalog(args);
    SqlToSubstrait converter = new SqlToSubstrait();
    PlanProtoConverter toProto = new PlanProtoConverter();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      String[] parts = line.split("\t", 2);
      String out;
      try {
        byte[] plan = toProto.toProto(converter.convert(parts[1], catalog)).toByteArray();
        out = parts[0] + "\tok\t" + Base64.getEncoder().encodeToString(plan);
      } catch (Exception | Error e) {
        String msg = e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage());
        out = parts[0] + "\terror\t" + msg.replaceAll("\\s+", " ");
      }
      System.out.println(out);
      System.out.flush();
    }
  }
}
