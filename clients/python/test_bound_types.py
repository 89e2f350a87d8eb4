"""Parameters a statement leaves untyped (`SELECT ?`) take the types of the values ADBC's
driver binds (their Arrow types, sent with the parameters), as PostgreSQL types them from the
parameter types declared at Parse: the column is named ?column? and typed as the value."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import adbc_driver_flightsql.dbapi
import pyarrow as pa
import pytest


@pytest.mark.parametrize("value, arrow_type", [
    (date(2001, 2, 3), pa.date32()),
    (41, pa.int64()),
    ("text", pa.string()),
    (2.5, pa.float64()),
    (datetime(2001, 1, 1, 10, tzinfo=timezone.utc), pa.timestamp("ns", tz="UTC")),
])
def test_select_bound_parameter(uri, value, arrow_type):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT ?", (value,))
        table = cur.fetch_arrow_table()
    assert table.schema.names == ["?column?"]
    assert table.schema.types == [arrow_type]
    assert table.column(0).to_pylist() == [value]


def test_untyped_parameter_beside_typed_ones(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT ? + 1 AS n, ? AS d", (41, date(2001, 2, 3)))
        assert cur.fetchall() == [(42, date(2001, 2, 3))]


@pytest.mark.parametrize("sql, values, want", [
    # A parameter cast to varchar(n): PostgreSQL's answer is the text cut to n characters.
    ("SELECT ?::varchar(3)", ("abcdef",), "abc"),
    ("SELECT CAST(? AS varchar(10))", ("abc",), "abc"),
    ("SELECT ?::varchar(3) AS v, 1 AS n", ("abcdef",), "abc"),
])
def test_bound_schema_is_the_declared_one(uri, sql, values, want):
    """trial26 I2: the batches of a statement executed with bound parameters have the schema
    its FlightInfo declares; ADBC's driver refuses anything else ("endpoint 0 returned
    inconsistent schema")."""
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(sql, values)
        assert cur.fetchall()[0][0] == want


@pytest.mark.parametrize("sql, array, want", [
    # Arrow int8 declares a smallint parameter: smallint * integer is integer (-256, PostgreSQL's).
    ("SELECT ? * 2", pa.array([-128], pa.int8()), -256),
    # Arrow float32 declares a real parameter: real / integer is double precision.
    ("SELECT ? / 3", pa.array([1.0], pa.float32()), 1.0 / 3),
])
def test_narrow_bound_types_answer_as_declared(uri, sql, array, want):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(sql, pa.record_batch([array], names=["p"]))
        assert cur.fetchall() == [(want,)]


def test_negated_parameter_takes_the_bound_type(uri):
    """trial26: -? bound an int (Arrow int64) is bigint negation, as PostgreSQL answers with
    psycopg's int8 parameter; not "could not determine the type of the operand"."""
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT -?", (7,))
        assert cur.fetchall() == [(-7,)]
        cur.execute("SELECT - ? + 1", (7,))
        assert cur.fetchall() == [(-6,)]


def test_bigint_parameter_does_not_cast_to_boolean(uri):
    """PostgreSQL has no bigint → boolean cast (42846), only integer's."""
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        with pytest.raises(Exception, match="cannot cast type bigint to boolean"):
            cur.execute("SELECT ?::boolean", (1,))
            cur.fetchall()


@pytest.mark.parametrize("sql, values, want", [
    # trial27: an untyped parameter in substring's FROM is the pattern (substring(text, unknown)
    # is substring(text, text) in PostgreSQL), as is a regular expression's.
    ("SELECT substring('abc123' from ?)", ("[0-9]+",), [("123",)]),
    ("SELECT substring(? from ?)", ("flight 1234", "[0-9]{2}"), [("12",)]),
    ("SELECT regexp_replace('a1b22c', ?, '#', 'g')", ("[0-9]+",), [("a#b#c",)]),
    # A bound int declares bigint, as psycopg's int8: to_hex, div and generate_series resolve
    # as PostgreSQL resolves them with that type (without one, to_hex(unknown) and
    # generate_series(unknown, …) are PostgreSQL's 42725 too).
    ("SELECT to_hex(?)", (255,), [("ff",)]),
    ("SELECT to_hex(?)", (-1,), [("ffffffffffffffff",)]),
    ("SELECT div(?, 3)", (-7,), [(Decimal("-2"),)]),
    ("SELECT * FROM generate_series(?, ?, ?)", (10, 1, -4), [(10,), (6,), (2,)]),
    # trial28: a timedelta (ADBC binds duration[us]) is the interval psycopg sends PostgreSQL
    # for it: whole days, then the rest of the day ('-1 days +23:00:00' for minus an hour).
    ("SELECT ?::text", (timedelta(hours=1, minutes=30),), [("01:30:00",)]),
    ("SELECT ?::text", (timedelta(hours=-1),), [("-1 days +23:00:00",)]),
    ("SELECT (timestamp '2001-04-01 00:00' + ?)::text", (timedelta(days=1, hours=2),), [("2001-04-02 02:00:00",)]),
])
def test_parameters_resolve_as_postgres(uri, sql, values, want):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute(sql, values)
        assert cur.fetchall() == want
