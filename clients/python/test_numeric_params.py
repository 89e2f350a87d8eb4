"""Numeric parameters bound the ways Python users bind them through ADBC (a Decimal, an int, a
float, a str), and parameters compared with integers bound as floats: the values computed
independently (Python's decimal module rounding half away from zero, as PostgreSQL's numeric
does; DuckDB over the sample for the rows)."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal

import adbc_driver_flightsql.dbapi
import pytest

UTC = timezone.utc
DAY = ("MSP", datetime(2001, 5, 10, tzinfo=UTC), datetime(2001, 5, 11, tzinfo=UTC))
WHERE = "FROM flights WHERE origin = 'MSP' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-11'"


@pytest.fixture(scope="module")
def conn(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


def one(conn, sql, *params):
    with conn.cursor() as cur:
        cur.execute(sql, params)
        (v,), = cur.fetchall()
        return v


def delays(sample):
    return [r[3]["delay"] for r in sample.rows(*DAY, 10000) if r[3]["delay"] is not None]


@pytest.mark.parametrize("value", [Decimal("1.50"), Decimal("-2.345"), "1.50", "-0.125", 7, 2.675])
def test_numeric_parameter_text(conn, value):
    # numeric_in's text: a Decimal or str keeps its digits (display scale), a float is read
    # through its 15 significant digits, an int is whole.
    want = str(value) if not isinstance(value, float) else repr(value)
    assert one(conn, "SELECT (?::numeric)::text", value) == want
    q = Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    assert one(conn, "SELECT round(?::numeric, 2)", value) == q
    assert one(conn, "SELECT ?::numeric(10,2)", value) == q


def test_numeric_parameter_beside_numerics(conn, sample):
    ds = delays(sample)
    factor = Decimal("1.25")
    assert one(conn, f"SELECT sum((value->>'delay')::numeric(10,2) * ?) {WHERE}", factor) == sum(ds) * factor
    avg = Decimal(sum(ds)) / Decimal(len(ds))
    assert one(conn, f"SELECT round(avg((value->>'delay')::int) * ?, 2) {WHERE}", factor) == \
        (avg * factor).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    for bound in (Decimal("12.5"), "12.5", 12.5, 12):
        assert one(conn, f"SELECT count(*) {WHERE} AND (value->>'delay')::numeric > ?", bound) == \
            sum(1 for d in ds if d > Decimal(str(bound)))


@pytest.mark.parametrize("bound", [12.5, 12.0, -2.9, 12, Decimal("12.5")])
def test_integer_compared_with_a_fraction(conn, sample, bound):
    ds = delays(sample)
    assert one(conn, f"SELECT count(*) {WHERE} AND (value->>'delay')::int >= ?", bound) == \
        sum(1 for d in ds if d >= bound)
    assert one(conn, f"SELECT count(*) {WHERE} AND (value->>'delay')::int = ?", bound) == \
        sum(1 for d in ds if d == bound)
    assert one(conn, f"SELECT count(*) {WHERE} AND (value->>'delay')::int BETWEEN ? AND ?", bound, 1000) == \
        sum(1 for d in ds if bound <= d <= 1000)
