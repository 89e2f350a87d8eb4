"""flightsrv through ADBC's Flight SQL driver (adbc_driver_flightsql.dbapi), the way a Python
user reaches it, checked against DuckDB reading the committed sample independently.

ADBC prepares every query (CreatePreparedStatement → DoPut parameters → GetFlightInfo →
DoGet), so each query here also exercises the prepared-statement path of
flightsql-clients.md.
"""

from __future__ import annotations

import decimal
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest
from adbc_driver_manager import AdbcStatusCode

UTC = timezone.utc
HERE = Path(__file__).resolve().parent

# The demo archives January–March 2001 and keeps April–July hot: the cases cover archived
# buckets only, hot only, both (a range straddling 2001-04-01), tiny and absent partitions.
JAN1, AUG1 = datetime(2001, 1, 1, tzinfo=UTC), datetime(2001, 8, 1, tzinfo=UTC)
CASES = [
    ("ORD", JAN1, AUG1),
    ("ORD", datetime(2001, 3, 15, tzinfo=UTC), datetime(2001, 4, 15, tzinfo=UTC)),
    ("SFO", JAN1, datetime(2001, 2, 1, tzinfo=UTC)),
    ("DFW", datetime(2001, 5, 1, 12, 30, tzinfo=UTC), datetime(2001, 6, 2, 8, 15, 30, tzinfo=UTC)),
    ("LWB", JAN1, AUG1),
    ("ZZZ", JAN1, AUG1),
]
CASE_IDS = [f"{o}-{s:%m%d}-{e:%m%d}" for o, s, e in CASES]

TABLE_SCHEMA = pa.schema([
    pa.field("origin", pa.string(), nullable=False),
    pa.field("timestamp", pa.timestamp("ns", tz="UTC"), nullable=False),
    pa.field("id", pa.string(), nullable=False),
    pa.field("value", pa.binary(), nullable=False),
])

ROUTED = "origin = ? AND timestamp >= ? AND timestamp < ?"


def lit(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def conn(uri):
    # autocommit=True: flightsrv has no transactions (without it the DB-API layer warns).
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


@pytest.fixture
def cur(conn):
    with conn.cursor() as c:
        yield c


# --- COUNT(*) -------------------------------------------------------------------------------

@pytest.mark.parametrize("origin,start,end", CASES, ids=CASE_IDS)
def test_count_with_literals(cur, sample, origin, start, end):
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE origin = '{origin}' "
                f"AND timestamp >= TIMESTAMPTZ '{lit(start)}' AND timestamp < '{lit(end)}'")
    assert cur.fetchall() == [(sample.count(origin, start, end),)]
    assert [d[0] for d in cur.description] == ["count"]


@pytest.mark.parametrize("origin,start,end", CASES, ids=CASE_IDS)
def test_count_with_aware_datetime_parameters(cur, sample, origin, start, end):
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", (origin, start, end))
    assert cur.fetchone() == (sample.count(origin, start, end),)


@pytest.mark.parametrize("origin,start,end", CASES, ids=CASE_IDS)
def test_count_with_naive_datetime_parameters(cur, sample, origin, start, end):
    # pyarrow sends naive datetimes as zone-less timestamp[us]; the server reads them as UTC.
    naive = (start.replace(tzinfo=None), end.replace(tzinfo=None))
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", (origin, *naive))
    assert cur.fetchone() == (sample.count(origin, start, end),)


def test_count_with_parameters_in_another_zone(cur, sample):
    # Aware datetimes are instants whatever their zone: 02:00+02:00 is 00:00Z.
    plus2 = timezone(timedelta(hours=2))
    start, end = datetime(2001, 3, 15, 2, tzinfo=plus2), datetime(2001, 4, 15, 2, tzinfo=plus2)
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", ("ORD", start, end))
    assert cur.fetchone() == (sample.count("ORD", start, end),)
    assert sample.count("ORD", start, end) == sample.count("ORD", datetime(2001, 3, 15, tzinfo=UTC),
                                                            datetime(2001, 4, 15, tzinfo=UTC))


def test_count_with_dollar_placeholders(cur, sample):
    cur.execute("SELECT COUNT(*) FROM flights WHERE origin = $1 AND timestamp >= $2 AND timestamp < $3",
                ("ATL", JAN1, AUG1))
    assert cur.fetchone() == (sample.count("ATL", JAN1, AUG1),)


def test_same_statement_rebound(cur, sample):
    # The same SQL on the same cursor reuses ADBC's prepared statement and binds new values
    # to the original handle: each execution must see its own parameters.
    for origin, start, end in CASES:
        cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", (origin, start, end))
        assert cur.fetchone() == (sample.count(origin, start, end),), origin


def test_example_script(server_addr, sample):
    out = subprocess.run([sys.executable, str(HERE / "example.py"), "--addr", server_addr, "--origin", "SFO"],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    n = sample.count("SFO", JAN1, AUG1)
    assert f"flights leaving SFO in [2001-01-01, 2001-08-01) UTC: {n}\n" in out
    assert f"(with naive datetimes, read as UTC: {n})" in out
    first = sample.rows("SFO", JAN1, AUG1, 10)
    lines = out.split("first 10 flights:\n")[1].splitlines()
    assert [ln.split()[2] for ln in lines] == [r[2] for r in first]


# --- rows -----------------------------------------------------------------------------------

@pytest.mark.parametrize("origin,start,end,desc", [
    ("ORD", JAN1, AUG1, False),  # ties on timestamp at 05:57: id breaks them
    ("ORD", JAN1, AUG1, True),
    ("SFO", datetime(2001, 3, 31, 20, tzinfo=UTC), datetime(2001, 4, 1, 12, tzinfo=UTC), False),  # archive → hot
    ("LWB", JAN1, AUG1, False),  # fewer rows than the LIMIT
])
def test_limit_rows_in_order(cur, sample, origin, start, end, desc):
    d = "DESC" if desc else "ASC"
    cur.execute(f"SELECT * FROM flights WHERE {ROUTED} ORDER BY timestamp {d}, id {d} LIMIT 10",
                (origin, start, end))
    table = cur.fetch_arrow_table()
    assert table.schema == TABLE_SCHEMA
    got = [(r["origin"], r["timestamp"], r["id"], r["value"]) for r in table.to_pylist()]
    want = sample.rows(origin, start, end, 10, desc=desc)
    assert len(got) == len(want) > 0
    for g, w in zip(got, want):
        assert g[:3] == w[:3]
        assert g[1].utcoffset() == timedelta(0)
        value = json.loads(g[3])
        assert value == w[3]
        assert list(value) == ["delay", "distance", "destination"]


def test_limit_parameter_and_column_subset(cur, sample):
    cur.execute(f"SELECT id, timestamp FROM flights WHERE {ROUTED} ORDER BY timestamp, id LIMIT ?",
                ("ATL", JAN1, AUG1, 3))
    assert [d[0] for d in cur.description] == ["id", "timestamp"]
    assert cur.fetchall() == [(r[2], r[1]) for r in sample.rows("ATL", JAN1, AUG1, 3)]


def test_all_rows_of_a_partition(cur, sample):
    # Every row of one month of one airport, across several batches: count and order.
    start, end = datetime(2001, 3, 1, tzinfo=UTC), datetime(2001, 5, 1, tzinfo=UTC)
    cur.execute(f"SELECT timestamp, id FROM flights WHERE {ROUTED} ORDER BY timestamp, id", ("DFW", start, end))
    table = cur.fetch_arrow_table()
    want = sample.rows("DFW", start, end, 100000)
    assert table.num_rows == len(want) == sample.count("DFW", start, end)
    assert table.column("id").to_pylist() == [r[2] for r in want]


@pytest.mark.parametrize("placeholders", ["$1, $2, $3", "?, ?, ?"])
def test_any_bound_to_a_list(cur, sample, placeholders):
    # origin = ANY($1) with a Python list bound: ADBC sends it as one list<string> parameter; the
    # query fans out over the listed partitions (an absent one adds no row), here over an
    # archived and a hot month, grouped per origin and also as rows in (origin, timestamp, id)
    # order. DuckDB answers over the sample with list_contains.
    origins = ["SFO", "ORD", "LWB", "ZZZ"]
    start, end = datetime(2001, 3, 15, tzinfo=UTC), datetime(2001, 4, 15, tzinfo=UTC)
    p1, p2, p3 = (x.strip() for x in placeholders.split(","))
    where = f"origin = ANY({p1}) AND timestamp >= {p2} AND timestamp < {p3}"
    naive = [start.replace(tzinfo=None), end.replace(tzinfo=None)]  # DuckDB's TIMESTAMP: UTC
    cur.execute(f"SELECT origin, COUNT(*) AS n FROM flights WHERE {where} GROUP BY origin ORDER BY origin",
                (origins, start, end))
    want = sample.db.execute(
        "SELECT origin, count(*) FROM flights WHERE list_contains(?, origin) AND ts >= ? AND ts < ? "
        "GROUP BY origin ORDER BY origin", [origins, *naive]).fetchall()
    assert cur.fetchall() == want
    assert len(want) >= 2
    cur.execute(f"SELECT origin, timestamp, id FROM flights WHERE {where} ORDER BY origin, timestamp, id",
                (origins, start, end))
    got = cur.fetch_arrow_table()
    want = sample.db.execute(
        "SELECT origin, ts, id FROM flights WHERE list_contains(?, origin) AND ts >= ? AND ts < ? "
        "ORDER BY origin, ts, id", [origins, *naive]).fetchall()
    assert got.num_rows == len(want) == sum(sample.count(o, start, end) for o in origins)
    assert list(zip(got.column("origin").to_pylist(), got.column("id").to_pylist())) == [(o, i) for o, _, i in want]


def test_empty_result_has_the_schema(cur):
    cur.execute(f"SELECT * FROM flights WHERE {ROUTED}", ("ZZZ", JAN1, AUG1))
    table = cur.fetch_arrow_table()
    assert table.num_rows == 0
    assert table.schema == TABLE_SCHEMA
    cur.execute(f"SELECT * FROM flights WHERE {ROUTED}", ("ZZZ", JAN1, AUG1))
    assert cur.fetchall() == []
    assert [d[0] for d in cur.description] == TABLE_SCHEMA.names


# --- metadata -------------------------------------------------------------------------------

def test_get_info(conn):
    info = conn.adbc_get_info()
    assert info["vendor_name"] == "flightsrv"
    assert info["vendor_version"]
    assert info["vendor_arrow_version"]
    assert info["driver_name"] == "ADBC Flight SQL Driver - Go"


def test_get_table_schema(conn):
    schema = conn.adbc_get_table_schema("flights")
    assert schema.remove_metadata() == TABLE_SCHEMA
    assert [f.metadata[b"ARROW:FLIGHT:SQL:TYPE_NAME"] for f in schema] == [b"TEXT", b"TIMESTAMPTZ", b"TEXT", b"BYTEA"]
    assert conn.adbc_get_table_schema("flights", db_schema_filter="public").remove_metadata() == TABLE_SCHEMA
    with pytest.raises(adbc_driver_manager.Error):
        conn.adbc_get_table_schema("no_such_table")


def test_get_table_types(conn):
    assert conn.adbc_get_table_types() == ["TABLE"]


def test_get_objects(conn):
    objs = conn.adbc_get_objects().read_all().to_pylist()
    assert len(objs) == 1
    schemas = objs[0]["catalog_db_schemas"]
    assert [s["db_schema_name"] for s in schemas] == ["public"]
    tables = schemas[0]["db_schema_tables"]
    assert [(t["table_name"], t["table_type"]) for t in tables] == [("flights", "TABLE")]
    cols = tables[0]["table_columns"]
    assert [(c["column_name"], c["ordinal_position"], c["xdbc_type_name"]) for c in cols] == [
        ("origin", 1, "TEXT"), ("timestamp", 2, "TIMESTAMPTZ"), ("id", 3, "TEXT"), ("value", 4, "BYTEA")]
    # Table types agree with adbc_get_table_types (flightsql-clients.md).
    assert {t["table_type"] for t in tables} <= set(conn.adbc_get_table_types())


def test_get_objects_filters(conn):
    def tables(**kw):
        out = []
        for cat in conn.adbc_get_objects(**kw).read_all().to_pylist():
            for s in cat["catalog_db_schemas"] or []:
                out += [t["table_name"] for t in s["db_schema_tables"] or []]
        return out
    assert tables(depth="tables", table_name_filter="fl%") == ["flights"]
    assert tables(depth="tables", table_name_filter="fl_ghts") == ["flights"]
    assert tables(depth="tables", table_name_filter="nothing%") == []
    assert tables(depth="tables", db_schema_filter="other") == []
    assert tables(depth="tables", table_types_filter=["VIEW"]) == []
    assert tables(depth="tables", table_types_filter=["TABLE"]) == ["flights"]


@pytest.mark.parametrize("sql,params", [
    (f"SELECT * FROM flights WHERE origin = 'ORD' AND timestamp >= '{lit(JAN1)}' AND timestamp < '{lit(AUG1)}'", ()),
    (f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", ("ORD", JAN1, AUG1)),
    (f"SELECT value, id FROM flights WHERE {ROUTED} ORDER BY timestamp DESC, id DESC LIMIT 5", ("ORD", JAN1, AUG1)),
])
def test_execute_schema_equals_result_schema(cur, sql, params):
    schema = cur.adbc_execute_schema(sql)
    cur.execute(sql, params or None)
    assert cur.fetch_arrow_table().schema == schema


# --- errors ---------------------------------------------------------------------------------

# (query, parameters, the server's value-free message). The partition value QQX and the
# timestamps must not appear in the message.
REJECTED = [
    ("SELECT COUNT(*) FROM flights WHERE origin = 'QQX' AND timestamp < '2001-08-01T00:00:00Z'", None,
     "flights needs timestamp >= <start>"),
    ("SELECT * FROM flights WHERE origin = 'QQX' AND timestamp >= '2001-01-01T00:00:00Z'", None,
     "flights needs timestamp < <end>"),
    ("SELECT * FROM flights WHERE timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'", None,
     "flights needs origin = <value>"),
    ("SELECT * FROM flights WHERE (origin = 'QQX' OR id = 'ORD') AND timestamp >= ? AND timestamp < ?",
     (JAN1, AUG1), "flights needs origin = <value>"),
    (f"SELECT * FROM flights WHERE {ROUTED} LIMIT ?", ("QQX", JAN1, AUG1, -1), "LIMIT must not be negative"),
]


@pytest.mark.parametrize("sql,params,message", REJECTED, ids=[m.split(":")[0][:40] for _, _, m in REJECTED])
def test_rejected_predicates(cur, sql, params, message):
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        cur.execute(sql, params)
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.INVALID_ARGUMENT
    text = str(e.value)
    assert message in text
    for secret in ("QQX", "2001-01-01", "2001-08-01"):
        assert secret not in text


def test_inverted_range_answers_no_rows(cur):
    # As PostgreSQL: a start after the end (known once the values are bound) selects nothing.
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", ("ORD", AUG1, JAN1))
    assert cur.fetchall() == [(0,)]
    cur.execute(f"SELECT id FROM flights WHERE {ROUTED}", ("ORD", AUG1, JAN1))
    assert cur.fetchall() == []


def test_wrong_parameter_type(cur):
    # A bound value's Arrow type declares its parameter, as a type declared at Parse does in
    # PostgreSQL: an int64 compared with a timestamp is PostgreSQL's 42883.
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", ("ORD", 978307200, AUG1))
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.INVALID_ARGUMENT
    assert "operator does not exist: timestamp with time zone >= bigint" in str(e.value)


def test_refusals_with_parameters(cur, sample):
    """The server's refusal of a statement executed with parameters reaches the DB-API as it
    is, and a cursor runs the same text again once its parameters are right. (The DB-API
    swallows a NotSupportedError from the prepare and executes unprepared, which the driver
    read as a bulk ingestion: "must set IngestTargetTable"; so the server answers ADBC's
    refusals where the statement is executed.)"""
    unsupported = f"SELECT jsonb_path_query_first(value::jsonb, '$.delay') FROM flights WHERE {ROUTED}"
    for _ in range(2):  # the same text twice on one cursor
        with pytest.raises(adbc_driver_manager.NotSupportedError) as e:
            cur.execute(unsupported, ("ORD", JAN1, AUG1))
            cur.fetchall()
        assert e.value.status_code == AdbcStatusCode.NOT_IMPLEMENTED
        assert "not supported" in str(e.value) and "IngestTargetTable" not in str(e.value)
    counted = f"SELECT COUNT(*) FROM flights WHERE {ROUTED}"
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        cur.execute(counted, ("ORD", 978307200, AUG1))
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.INVALID_ARGUMENT
    assert "timestamp with time zone >= bigint" in str(e.value)
    cur.execute(counted, ("ORD", JAN1, AUG1))
    assert cur.fetchall() == [(sample.count("ORD", JAN1, AUG1),)]


@pytest.mark.parametrize("sql", [
    "WITH RECURSIVE r(id) AS (SELECT a.id FROM flights a WHERE a.origin = 'ORD'"
    " AND a.timestamp >= '2001-01-01T00:00:00Z' AND a.timestamp < '2001-08-01T00:00:00Z'"
    " UNION ALL SELECT id FROM r) SEARCH DEPTH FIRST BY id SET o SELECT id FROM r",
    "DELETE FROM flights WHERE origin = 'ORD'",
    "SELECT jsonb_path_query_first(value::jsonb, '$.delay') FROM flights WHERE origin = 'ORD'"
    " AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'",
])
def test_unsupported_sql(cur, sql):
    with pytest.raises(adbc_driver_manager.NotSupportedError) as e:
        cur.execute(sql)
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.NOT_IMPLEMENTED
    assert "not supported" in str(e.value)


@pytest.mark.parametrize("sql", [
    "SET TimeZone = 'UTC'", "SET application_name = 'adbc'", "SET DateStyle = 'ISO, MDY'",
    "SET IntervalStyle = 'postgres'", "SET extra_float_digits = 3", "SET statement_timeout = 0",
    "RESET ALL",
])
def test_set_keeping_semantics_is_a_no_op(cur, sql, sample):
    # What drivers and tools send when they connect: no rows, nothing changed (issue 18).
    cur.execute(sql)
    assert cur.fetchall() == []
    cur.adbc_statement.set_sql_query(sql)
    assert cur.adbc_statement.execute_update() == 0
    cur.execute(f"SELECT count(*) FROM flights WHERE {ROUTED}", ("ORD", JAN1, AUG1))
    assert cur.fetchall() == [(sample.count("ORD", JAN1, AUG1),)]


@pytest.mark.parametrize("sql,setting", [
    ("SET TimeZone = 'America/Chicago'", "SET TimeZone"),
    ("SET statement_timeout = '5s'", "SET statement_timeout"),
])
def test_set_changing_semantics_is_refused(cur, sql, setting):
    with pytest.raises(adbc_driver_manager.NotSupportedError) as e:
        cur.execute(sql)
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.NOT_IMPLEMENTED
    assert setting in str(e.value) and "Chicago" not in str(e.value) and "5s" not in str(e.value)


def test_window_functions(cur, sample):
    """Window functions answer through ADBC: the partition's count beside every row and the
    rows numbered in time order."""
    cur.execute("SELECT id, count(*) OVER (), row_number() OVER (ORDER BY timestamp, id) FROM flights"
                f" WHERE {ROUTED} ORDER BY 3 LIMIT 5", ("ORD", JAN1, AUG1))
    rows = cur.fetchall()
    assert [r[2] for r in rows] == [1, 2, 3, 4, 5]
    assert {r[1] for r in rows} == {sample.count("ORD", JAN1, AUG1)}


def test_unknown_table(cur):
    with pytest.raises(adbc_driver_manager.Error) as e:
        cur.execute("SELECT * FROM no_such_table WHERE origin = 'ORD'"
                    " AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'")
        cur.fetchall()
    assert e.value.status_code == AdbcStatusCode.NOT_FOUND


def test_connection_still_usable_after_errors(cur, sample):
    with pytest.raises(adbc_driver_manager.Error):
        cur.execute("SELECT set_byte('x'::bytea, 0, 1)")
    cur.execute(f"SELECT COUNT(*) FROM flights WHERE {ROUTED}", ("ORD", JAN1, AUG1))
    assert cur.fetchone() == (sample.count("ORD", JAN1, AUG1),)


def test_numeric_reads_as_decimal(cur, sample):
    """PostgreSQL's numeric arrives as Arrow decimal128(38, s), which ADBC reads as
    decimal.Decimal with the scale PostgreSQL shows: round(x::numeric, 2) of a double and of a
    numeric(10,2) product, against the sample's values rounded as PostgreSQL's numeric rounds
    (half away from zero: Python's ROUND_HALF_UP; a double becomes numeric through its 15
    significant digits, PostgreSQL's float8-to-numeric cast). e2e/numeric_test.go checks these
    expressions against a PostgreSQL server over the same rows."""
    start, end = datetime(2001, 3, 30, tzinfo=UTC), datetime(2001, 4, 3, tzinfo=UTC)
    cur.execute("SELECT id, round(((value->>'delay')::float8 / 7)::numeric, 2) AS d,"
                " round((value->>'distance')::numeric(10,2) * 1.0375, 2) AS m, 0.1 + 0.2 = 0.3 AS exact"
                f" FROM flights WHERE {ROUTED} ORDER BY timestamp, id", ("ORD", start, end))
    table = cur.fetch_arrow_table()
    assert table.schema.field(1).type == pa.decimal128(38, 2)
    assert table.schema.field(2).type == pa.decimal128(38, 2)
    rows = table.to_pylist()
    want = sample.rows("ORD", start, end, 100000)
    assert len(rows) == len(want) > 300
    cent = decimal.Decimal("0.01")
    for got, (_, _, id_, v) in zip(rows, want):
        delay = None if v["delay"] is None else decimal.Decimal(format(v["delay"] / 7, ".15g")).quantize(
            cent, rounding=decimal.ROUND_HALF_UP)
        dist = (decimal.Decimal(v["distance"]) * decimal.Decimal("1.0375")).quantize(cent, rounding=decimal.ROUND_HALF_UP)
        assert (got["id"], got["d"], got["m"]) == (id_, delay, dist)
        assert isinstance(got["m"], decimal.Decimal)
        assert str(got["m"]) == str(dist)  # the scale too: 2 digits
        assert got["exact"] is True


def test_sum_bigint_reads_as_decimal(cur, sample):
    """sum(bigint) is numeric, as PostgreSQL types it: Arrow decimal128(38, 0), which ADBC reads
    as decimal.Decimal, so a total past bigint's range answers exactly (against the sample's
    delays summed in Python's integers)."""
    start, end = datetime(2001, 3, 1, tzinfo=UTC), datetime(2001, 5, 1, tzinfo=UTC)
    cur.execute("SELECT sum((value->>'delay')::bigint * 1000000000000000) AS s, sum((value->>'delay')::int) AS i"
                f" FROM flights WHERE {ROUTED}", ("ORD", start, end))
    table = cur.fetch_arrow_table()
    assert table.schema.field(0).type == pa.decimal128(38, 0)
    assert table.schema.field(1).type == pa.int64()
    [row] = table.to_pylist()
    delays = [int(v["delay"]) for (_, _, _, v) in sample.rows("ORD", start, end, 100000) if v["delay"] is not None]
    assert len(delays) > 1000
    total = sum(delays) * 10**15
    assert abs(total) > 2**63  # past bigint's range
    assert row["s"] == decimal.Decimal(total) and isinstance(row["s"], decimal.Decimal)
    assert row["i"] == sum(delays)
