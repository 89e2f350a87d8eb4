"""Client Substrait plans from an independent producer (substrait-python's plan builders, the
Substrait project's own Python package) run on the same executor as SQL: sent through ADBC
(cursor.execute with the plan's bytes) and through pyarrow.flight
(CommandStatementSubstraitPlan), their answers must equal the SQL statement's and DuckDB's over
the sample. Also the analytical mode (session option analytical = on) from pyarrow.flight with
a cookie middleware, for SQL and for a plan without a partition pin, checked against DuckDB.
"""

from __future__ import annotations

from datetime import datetime, timezone

import adbc_driver_flightsql.dbapi
import pyarrow as pa
import pyarrow.flight as flight
import pytest
import substrait.builders.plan as P
import substrait.builders.type as T
from substrait.builders.extended_expression import aggregate_function, column, literal, scalar_function
from substrait.extension_registry import ExtensionRegistry

from test_flight import _any, _field, _statement
from test_sessions import CookieJar, _set

UTC = timezone.utc
CMP = "extension:io.substrait:functions_comparison"
BOOL = "extension:io.substrait:functions_boolean"
AGG = "extension:io.substrait:functions_aggregate_generic"
DT = "extension:io.substrait:functions_datetime"
REGISTRY = ExtensionRegistry(load_default_extensions=True)
# The table's base schema, as the server describes it (GetTables / TableSchema).
SCHEMA = T.named_struct(
    ["origin", "timestamp", "id", "value"],
    T.struct([T.string(nullable=False), T.precision_timestamp_tz(9, nullable=False),
              T.string(nullable=False), T.binary(nullable=False)], nullable=False))


def ts(s: str):
    d = datetime.fromisoformat(s).replace(tzinfo=UTC)
    return literal(int(d.timestamp()) * 10**9, T.precision_timestamp_tz(9, nullable=False))


def text(s: str):
    return literal(s, T.string(nullable=False))


def conj(*exprs):
    return scalar_function(BOOL, "and", list(exprs))


def plan_bytes(rel) -> bytes:
    return rel(REGISTRY).SerializeToString()


def count_plan():
    """COUNT(*) of ORD's March–April with a residual filter in the middle of the conjunction."""
    read = P.read_named_table("flights", SCHEMA)
    cond = conj(
        scalar_function(CMP, "gte", [column("timestamp"), ts("2001-03-01")]),
        scalar_function(CMP, "not_equal", [column("id"), text("0000000010")]),
        scalar_function(CMP, "equal", [column("origin"), text("ORD")]),
        scalar_function(CMP, "lt", [column("timestamp"), ts("2001-05-01")]))
    return P.aggregate(P.filter(read, cond), [], [aggregate_function(AGG, "count", [], alias="n")])


def first_flights_plan():
    """SFO's first 20 flights of February (archived) as (id, timestamp), skipping 5."""
    read = P.read_named_table("flights", SCHEMA)
    cond = conj(
        scalar_function(CMP, "equal", [column("origin"), text("SFO")]),
        scalar_function(CMP, "gte", [column("timestamp"), ts("2001-02-01")]),
        scalar_function(CMP, "lt", [column("timestamp"), ts("2001-03-01")]))
    sorted_ = P.sort(P.filter(read, cond), [column("timestamp"), column("id")])
    return P.fetch(P.select(sorted_, [column("id"), column("timestamp")]), literal(5, T.i64()), literal(20, T.i64()))


def per_origin_plan():
    """Per origin, the flights and the last departure of June, without a partition pin (the
    analytical mode), ordered by origin."""
    read = P.read_named_table("flights", SCHEMA)
    cond = conj(
        scalar_function(CMP, "gte", [column("timestamp"), ts("2001-06-01")]),
        scalar_function(CMP, "lt", [column("timestamp"), ts("2001-07-01")]))
    agg = P.aggregate(P.filter(read, cond), [column("origin")],
                      [aggregate_function(AGG, "count", [], alias="n"),
                       aggregate_function(DT, "max", [column("timestamp")], alias="last")])
    return P.sort(agg, [column("origin")])


def substrait_descriptor(plan: bytes) -> flight.FlightDescriptor:
    """CommandStatementSubstraitPlan{plan: SubstraitPlan{plan}} as a command descriptor."""
    return flight.FlightDescriptor.for_command(_any("CommandStatementSubstraitPlan", _field(1, _field(1, plan))))


def read_all(client, descriptor):
    info = client.get_flight_info(descriptor)
    return client.do_get(info.endpoints[0].ticket).read_all()


def adbc_rows(uri, operation):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(operation)
        return cur.fetch_arrow_table()


def test_count_plan_equals_sql_and_duckdb(uri, sample):
    got = adbc_rows(uri, plan_bytes(count_plan()))
    sql = adbc_rows(uri, "SELECT count(*) AS n FROM flights WHERE timestamp >= '2001-03-01' AND id <> '0000000010'"
                         " AND origin = 'ORD' AND timestamp < '2001-05-01'")
    want = sample.db.execute("SELECT count(*) FROM flights WHERE origin = 'ORD' AND ts >= '2001-03-01'"
                             " AND ts < '2001-05-01' AND id <> '0000000010'").fetchone()[0]
    assert got.column("n").to_pylist() == sql.column("n").to_pylist() == [want]
    assert want > 5000


def test_sorted_fetch_plan_equals_sql_and_duckdb(uri, sample):
    got = adbc_rows(uri, plan_bytes(first_flights_plan()))
    sql = adbc_rows(uri, "SELECT id, timestamp FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01'"
                         " AND timestamp < '2001-03-01' ORDER BY timestamp, id LIMIT 20 OFFSET 5")
    want = sample.db.execute("SELECT id, ts FROM flights WHERE origin = 'SFO' AND ts >= '2001-02-01' AND ts < '2001-03-01'"
                             " ORDER BY ts, id LIMIT 20 OFFSET 5").fetchall()
    assert got.column("id").to_pylist() == sql.column("id").to_pylist() == [i for i, _ in want]
    assert got.column("timestamp").to_pylist() == sql.column("timestamp").to_pylist() == [t.replace(tzinfo=UTC) for _, t in want]


def test_plan_through_pyarrow_flight(uri):
    with flight.FlightClient(uri) as client:
        table = read_all(client, substrait_descriptor(plan_bytes(count_plan())))
        sql = read_all(client, _statement("SELECT count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01'"
                                          " AND timestamp < '2001-05-01' AND id <> '0000000010'"))
    assert table.column("n").to_pylist() == sql.column("n").to_pylist()


def test_plan_without_a_route_is_refused(uri):
    read = P.read_named_table("flights", SCHEMA)
    rel = P.filter(read, scalar_function(CMP, "equal", [column("origin"), text("ORD")]))
    with pytest.raises(adbc_driver_flightsql.dbapi.ProgrammingError) as e:
        adbc_rows(uri, plan_bytes(rel))
    assert "flights needs timestamp >= <start> AND timestamp < <end>" in str(e.value)


@pytest.fixture
def analytical(uri):
    """A pyarrow.flight client whose session has the analytical mode on."""
    jar = CookieJar()
    with flight.FlightClient(uri, middleware=[jar]) as client:
        assert _set(client, analytical="on") == {}
        yield client


def june_per_origin(sample):
    return sample.db.execute("SELECT origin, count(*), max(ts) FROM flights WHERE ts >= '2001-06-01' AND ts < '2001-07-01'"
                             " GROUP BY origin ORDER BY origin").fetchall()


def test_analytical_mode_sql(uri, analytical, sample):
    sql = ("SELECT origin, count(*) AS n, max(timestamp) AS last FROM flights"
           " WHERE timestamp >= '2001-06-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin")
    # Refused outside the mode, with the way to enable it.
    with flight.FlightClient(uri) as plain, pytest.raises(pa.ArrowInvalid) as e:
        plain.get_flight_info(_statement(sql))
    assert "session option analytical = on" in str(e.value)
    table = read_all(analytical, _statement(sql))
    want = june_per_origin(sample)
    assert len(want) > 200  # every airport of the sample: more than --max-partitions lists
    assert table.column("origin").to_pylist() == [o for o, _, _ in want]
    assert table.column("n").to_pylist() == [n for _, n, _ in want]
    assert table.column("last").to_pylist() == [t.replace(tzinfo=UTC) for _, _, t in want]
    explain = read_all(analytical, _statement("EXPLAIN " + sql)).column(0).to_pylist()
    assert any(f"analytical mode: no partition pinned, {len(want)} partition(s)" in line for line in explain)


def test_analytical_mode_substrait_plan(analytical, sample):
    table = read_all(analytical, substrait_descriptor(plan_bytes(per_origin_plan())))
    want = june_per_origin(sample)
    assert table.column("origin").to_pylist() == [o for o, _, _ in want]
    assert table.column("n").to_pylist() == [n for _, n, _ in want]
    assert table.column("last").to_pylist() == [t.replace(tzinfo=UTC) for _, _, t in want]
