"""The SQL people and their tools write, through ADBC's Flight SQL driver: JSON fields of
`value`, residual filters, GROUP BY, HAVING, several partitions, table-less statements. Each
answer is checked against DuckDB reading the committed sample independently (the `sample`
fixture), and read back through polars and through DuckDB over the Arrow result, the way a
notebook would.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import duckdb
import polars as pl
import pytest
from adbc_driver_manager import AdbcStatusCode

UTC = timezone.utc
JAN1, AUG1 = datetime(2001, 1, 1, tzinfo=UTC), datetime(2001, 8, 1, tzinfo=UTC)
APR1, JUN1 = datetime(2001, 4, 1, tzinfo=UTC), datetime(2001, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def conn(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


def arrow(conn, sql, params=None):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetch_arrow_table()


def naive(t):
    return t.astimezone(UTC).replace(tzinfo=None)


def close(a, b):
    return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9))


@pytest.mark.parametrize("origin,start,end", [("ORD", JAN1, AUG1), ("DFW", APR1, JUN1), ("SFO", datetime(2001, 3, 15, tzinfo=UTC), datetime(2001, 4, 15, tzinfo=UTC))])
def test_json_group_by_having_with_parameters(conn, sample, origin, start, end):
    got = arrow(conn,
                "SELECT value->>'destination' AS dest, count(*) AS n, avg((value->>'delay')::int) AS avg_delay "
                "FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ? "
                "AND (value->>'delay')::int > 15 GROUP BY 1 HAVING count(*) > 20 ORDER BY n DESC, dest",
                (origin, start, end))
    want = sample.db.execute(
        "SELECT destination, count(*), avg(delay) FROM flights WHERE origin = ? AND ts >= ? AND ts < ? "
        "AND delay > 15 GROUP BY 1 HAVING count(*) > 20 ORDER BY 2 DESC, 1",
        [origin, naive(start), naive(end)]).fetchall()
    assert got.column_names == ["dest", "n", "avg_delay"]
    # avg of integers is numeric, as in PostgreSQL: Decimal values at scale 20 (docs/sql.md, "numeric").
    assert str(got.schema.field("n").type) == "int64" and str(got.schema.field("avg_delay").type) == "decimal128(38, 20)"
    rows = list(zip(*[got.column(i).to_pylist() for i in range(3)]))
    assert len(rows) == len(want) and len(rows) > 0
    for (d, n, a), (wd, wn, wa) in zip(rows, want):
        assert (d, n) == (wd, wn) and close(float(a), wa)


def test_residual_filters_read_through_polars(conn, sample):
    got = arrow(conn,
                "SELECT id, (value->>'delay')::int AS delay, (value->>'distance')::int AS distance "
                "FROM flights WHERE timestamp >= '2001-02-01' AND origin = 'SFO' AND timestamp < '2001-06-01' "
                "AND value->>'destination' IN ('LAX', 'SAN') AND (value->>'distance')::int BETWEEN 300 AND 500 "
                "ORDER BY id")
    df = pl.from_arrow(got)
    assert df.height > 0
    summary = df.select(pl.len(), pl.col("delay").mean(), pl.col("distance").max()).row(0)
    want = sample.db.execute(
        "SELECT count(*), avg(delay), max(distance) FROM flights WHERE origin = 'SFO' "
        "AND ts >= '2001-02-01' AND ts < '2001-06-01' AND destination IN ('LAX', 'SAN') "
        "AND distance BETWEEN 300 AND 500").fetchone()
    assert summary[0] == want[0] and close(summary[1], want[1]) and summary[2] == want[2]
    ids = sample.db.execute(
        "SELECT id FROM flights WHERE origin = 'SFO' AND ts >= '2001-02-01' AND ts < '2001-06-01' "
        "AND destination IN ('LAX', 'SAN') AND distance BETWEEN 300 AND 500 ORDER BY id").fetchall()
    assert df["id"].to_list() == [i for (i,) in ids]


def test_duckdb_over_the_arrow_result(conn, sample):
    tbl = arrow(conn,
                "SELECT origin, value->>'destination' AS dest, (value->>'delay')::int AS delay "
                "FROM flights WHERE origin IN ('ORD', 'ATL') AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01'")
    got = duckdb.sql("SELECT origin, dest, count(*), sum(delay) FROM tbl GROUP BY ALL "
                     "HAVING count(*) > 100 ORDER BY ALL").fetchall()
    want = sample.db.execute(
        "SELECT origin, destination, count(*), sum(delay) FROM flights WHERE origin IN ('ORD', 'ATL') "
        "AND ts >= '2001-03-01' AND ts < '2001-05-01' GROUP BY ALL HAVING count(*) > 100 ORDER BY ALL").fetchall()
    assert got == want and len(got) > 0


def test_several_partitions(conn, sample):
    got = arrow(conn,
                "SELECT origin, count(*) AS n, min(timestamp) AS first FROM flights "
                "WHERE origin IN ('ORD', 'DFW', 'ZZZ') AND timestamp >= ? AND timestamp < ? GROUP BY origin ORDER BY origin",
                (JAN1, AUG1)).to_pylist()
    want = sample.db.execute(
        "SELECT origin, count(*), min(ts) FROM flights WHERE origin IN ('ORD', 'DFW') GROUP BY 1 ORDER BY 1").fetchall()
    assert [(r["origin"], r["n"], naive(r["first"])) for r in got] == want


def test_any_with_a_list_parameter(conn, sample):
    """origin = ANY(?) bound to a Python list (ADBC sends it as list<utf8>): one fan-out per
    partition, as IN (…) does."""
    origins = ["SFO", "ORD", "BOS", "ZZZ"]
    got = arrow(conn,
                "SELECT origin, count(*) AS n, max(timestamp) AS last FROM flights "
                "WHERE origin = ANY(?) AND timestamp >= ? AND timestamp < ? GROUP BY origin ORDER BY origin",
                (origins, APR1, JUN1)).to_pylist()
    want = sample.db.execute(
        "SELECT origin, count(*), max(ts) FROM flights WHERE origin IN ('SFO', 'ORD', 'BOS') AND ts >= ? AND ts < ?"
        " GROUP BY 1 ORDER BY 1", [naive(APR1), naive(JUN1)]).fetchall()
    assert len(want) == 3
    assert [(r["origin"], r["n"], naive(r["last"])) for r in got] == want


def test_current_user_without_authentication(conn):
    assert arrow(conn, "SELECT current_user AS u").to_pylist() == [{"u": "flightsrv"}]


def test_date_functions_and_case(conn, sample):
    got = arrow(conn,
                "SELECT extract(month from timestamp) AS m, "
                "count(*) FILTER (WHERE CASE WHEN (value->>'delay')::int > 30 THEN true ELSE false END) AS late, "
                "count(*) AS total FROM flights WHERE origin = 'ATL' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' "
                "GROUP BY 1 ORDER BY 1").to_pylist()
    want = sample.db.execute(
        "SELECT month(ts), count(*) FILTER (WHERE delay > 30), count(*) FROM flights WHERE origin = 'ATL' "
        "AND ts >= '2001-01-01' AND ts < '2001-07-01' GROUP BY 1 ORDER BY 1").fetchall()
    assert [(r["m"], r["late"], r["total"]) for r in got] == want


def test_tableless_statements(conn):
    assert arrow(conn, "SELECT 1 AS one").to_pylist() == [{"one": 1}]
    assert arrow(conn, "SELECT version()").column(0)[0].as_py().startswith("PostgreSQL")
    row = arrow(conn, "SELECT current_database() AS db, current_schema() AS s").to_pylist()
    assert row == [{"db": "flightsrv", "s": "public"}]
    assert arrow(conn, "SHOW timezone").to_pylist() == [{"TimeZone": "UTC"}]


def test_missing_route_names_the_partition_column(conn):
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        arrow(conn, "SELECT * FROM flights LIMIT 5")
    assert e.value.status_code == AdbcStatusCode.INVALID_ARGUMENT
    assert "flights needs origin = <value> and timestamp >= <start> AND timestamp < <end>" in str(e.value)


def test_intervals_and_smallints_read_by_adbc(conn, sample):
    """An interval (Arrow month_day_nano_interval) and a smallint (int16) reach ADBC and pyarrow
    as those types: each airport's span of departures in March (max - min, days of 24 hours and
    the rest, PostgreSQL's timestamp - timestamp) and its smallest delay as smallint, checked
    against DuckDB's timestamps and delays of the sample."""
    got = arrow(conn,
                "SELECT origin, max(timestamp) - min(timestamp) AS span, min((value->>'delay')::smallint) AS lo, "
                "(max(timestamp) - min(timestamp))::text AS span_text "
                "FROM flights WHERE origin IN ('ORD', 'SFO') AND timestamp >= '2001-03-01' AND timestamp < '2001-04-01' "
                "GROUP BY origin ORDER BY origin")
    assert str(got.schema.field("span").type) == "month_day_nano_interval"
    assert str(got.schema.field("lo").type) == "int16"
    want = sample.db.execute(
        "SELECT origin, max(ts), min(ts), min(delay) FROM flights WHERE origin IN ('ORD', 'SFO') "
        "AND ts >= '2001-03-01' AND ts < '2001-04-01' GROUP BY origin ORDER BY origin").fetchall()
    rows = got.to_pylist()
    assert [r["origin"] for r in rows] == [w[0] for w in want]
    for r, (_, hi, lo, delay) in zip(rows, want):
        span = hi - lo
        us = span.seconds * 1_000_000 + span.microseconds
        assert (r["span"].months, r["span"].days, r["span"].nanoseconds) == (0, span.days, us * 1000)
        h, rest = divmod(us, 3_600_000_000)
        m, rest = divmod(rest, 60_000_000)
        s, frac = divmod(rest, 1_000_000)
        text = f"{span.days} day{'s' if span.days != 1 else ''} " if span.days else ""
        text += f"{h:02d}:{m:02d}:{s:02d}" + (f".{frac:06d}".rstrip("0") if frac else "")
        assert r["span_text"] == text
        assert r["lo"] == delay
