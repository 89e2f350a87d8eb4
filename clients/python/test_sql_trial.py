"""What a new user's trial of `make demo` found, through ADBC's Flight SQL driver: errors of
expressions are INVALID_ARGUMENT in PostgreSQL's words, UNION of selects without a table,
now() that fetchall() can convert, a column plus an interval (checked against DuckDB reading
the committed sample), length of a bytea.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest
from adbc_driver_manager import AdbcStatusCode

UTC = timezone.utc
ORD_MAY30 = ("FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-30' "
             "AND timestamp < '2001-06-01'")


@pytest.fixture(scope="module")
def conn(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


def rows(conn, sql):
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetchall()


@pytest.mark.parametrize("sql,message", [
    ("SELECT 1/0", "division by zero"),
    ("SELECT 2147483647::int + 1", "integer out of range"),
    ("SELECT (value->>'destination')::int " + ORD_MAY30, "invalid input syntax for type integer"),
    ("SELECT id FROM flights WHERE origin = ORD AND timestamp >= '2001-05-30' AND timestamp < '2001-06-01'",
     'column "ord" does not exist'),
    ("SELEC 1", 'syntax error at or near "SELEC"'),
])
def test_errors_in_postgresql_words(conn, sql, message):
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        rows(conn, sql)
    assert e.value.status_code == AdbcStatusCode.INVALID_ARGUMENT
    assert message in str(e.value)
    assert "INTERNAL" not in str(e.value)


def test_union_of_selects_without_a_table(conn):
    assert rows(conn, "SELECT 2 AS x UNION SELECT 1 UNION SELECT 2 ORDER BY 1") == [(1,), (2,)]
    assert sorted(rows(conn, "SELECT 1 UNION ALL SELECT 1")) == [(1,), (1,)]


def test_now_fetches_as_a_datetime(conn):
    before = datetime.now(UTC) - timedelta(seconds=1)
    (now, ts), = rows(conn, "SELECT now(), current_timestamp")
    assert now == ts
    assert before <= now <= datetime.now(UTC) + timedelta(seconds=1)


def test_now_has_the_columns_type(conn, sample):
    # now() is declared timestamp[ns, UTC], the type of every table's timestamp column, holding
    # PostgreSQL's microseconds (PostgreSQL's timestamptz and DuckDB's now() are microsecond
    # types): one instant type in a select list, so DuckDB reading the Arrow result compares
    # the two columns without a cast, and fetchall() converts both to datetimes.
    with conn.cursor() as cur:
        cur.execute("SELECT now() AS n, timestamp " + ORD_MAY30 + " AND timestamp < now() - INTERVAL '1 day' ORDER BY timestamp, id")
        table = cur.fetch_arrow_table()
    assert table.schema.field("n").type == table.schema.field("timestamp").type == pa.timestamp("ns", tz="UTC")
    assert table.num_rows == sample.count("ORD", datetime(2001, 5, 30, tzinfo=UTC), datetime(2001, 6, 1, tzinfo=UTC)) > 100
    ns = table.column("n").cast(pa.int64()).to_pylist()
    assert len(set(ns)) == 1 and ns[0] % 1000 == 0  # evaluated once per statement, in whole microseconds
    import duckdb
    result = table  # noqa: F841 (DuckDB reads the local Arrow table by its name)
    (later,), = duckdb.sql("SELECT count(*) FROM result WHERE n > timestamp + INTERVAL '25 years'").fetchall()
    assert later == table.num_rows


def test_column_plus_interval_equals_duckdb(conn, sample):
    got = rows(conn, "SELECT id, timestamp + INTERVAL '1 month', timestamp - INTERVAL '3 months 2 days 1 hour' "
                     + ORD_MAY30 + " ORDER BY timestamp, id")
    want = sample.db.execute(
        "SELECT id, ts::TIMESTAMPTZ + INTERVAL '1 month', ts::TIMESTAMPTZ - INTERVAL '3 months 2 days 1 hour' "
        "FROM flights WHERE origin = 'ORD' AND ts >= '2001-05-30' AND ts < '2001-06-01' ORDER BY ts, id").fetchall()
    assert len(got) == len(want) > 100
    assert got == [(i, a.astimezone(UTC), b.astimezone(UTC)) for i, a, b in want]
    assert any(a.day == 30 and a.month == 6 for _, a, _ in got if a)  # May 31 + 1 month: June 30


def test_octet_length_of_value_counts_bytes(conn, sample):
    # The demo declares value json: length(json) does not exist (PostgreSQL's 42883), and the
    # octets of its text are the document's bytes.
    with pytest.raises(adbc_driver_manager.ProgrammingError, match=r"function length\(json\) does not exist"):
        rows(conn, "SELECT id, length(value) " + ORD_MAY30)
    got = rows(conn, "SELECT id, octet_length(value::text) " + ORD_MAY30 + " ORDER BY id")
    want = sample.db.execute(
        "SELECT id, octet_length(json_object('delay', delay, 'distance', distance, 'destination', destination)::VARCHAR::BLOB) "
        "FROM flights WHERE origin = 'ORD' AND ts >= '2001-05-30' AND ts < '2001-06-01' ORDER BY id").fetchall()
    assert got == want
