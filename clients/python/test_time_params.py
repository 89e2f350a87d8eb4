"""Time parameters bound the ways Python users bind them through ADBC — aware and naive
datetimes, ISO 8601 strings, pyarrow timestamps of every unit — kept to the microsecond,
checked against DuckDB reading the sample."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest

UTC = timezone.utc
COUNT = "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?"
US = timedelta(microseconds=1)


@pytest.fixture(scope="module")
def conn(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


def first_departure(sample, origin):
    """The first departure instant of origin in the sample and how many flights share it."""
    rows = sample.rows(origin, datetime(2001, 1, 1, tzinfo=UTC), datetime(2001, 8, 1, tzinfo=UTC), 50)
    at = rows[0][1]
    return at, sum(1 for r in rows if r[1] == at)


def count(conn, origin, start, end):
    with conn.cursor() as cur:
        cur.execute(COUNT, (origin, start, end))
        return cur.fetchone()[0]


@pytest.mark.parametrize("origin", ["ORD", "SFO", "DFW"])
def test_iso_strings(conn, sample, origin):
    start, end = datetime(2001, 3, 15, tzinfo=UTC), datetime(2001, 4, 15, tzinfo=UTC)
    want = sample.count(origin, start, end)
    for s, e in [("2001-03-15T00:00:00Z", "2001-04-15T00:00:00Z"),
                 ("2001-03-15 00:00:00", "2001-04-15 00:00:00"),               # zone-less: UTC
                 ("2001-03-14T18:00:00-06:00", "2001-04-14T19:00:00-05:00"),   # Chicago, CST and CDT
                 ("2001-03-15T00:00:00.000000Z", "2001-04-15T00:00:00.000000+00:00")]:
        assert count(conn, origin, s, e) == want, (s, e)


def test_microsecond_precision(conn, sample):
    at, n = first_departure(sample, "ORD")
    assert n == 2  # two ORD flights leave at the first minute of the sample
    assert count(conn, "ORD", at, at + US) == n
    assert count(conn, "ORD", at + US, at + timedelta(minutes=3)) == 0
    assert count(conn, "ORD", at - US, at) == 0
    iso = lambda t: t.isoformat(timespec="microseconds")  # noqa: E731
    assert count(conn, "ORD", iso(at), iso(at + US)) == n
    assert count(conn, "ORD", iso(at + US), iso(at + timedelta(minutes=3))) == 0
    naive = at.replace(tzinfo=None)
    assert count(conn, "ORD", naive, naive + US) == n


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC", "America/Chicago"])
def test_any_timestamp_unit_and_zone(conn, sample, unit, tz):
    start, end = datetime(2001, 5, 1, tzinfo=UTC), datetime(2001, 6, 1, tzinfo=UTC)
    typ = pa.timestamp(unit, tz=tz)
    params = pa.record_batch([pa.array(["ATL"]), pa.array([start], typ), pa.array([end], typ)], names=["1", "2", "3"])
    with conn.cursor() as cur:
        cur.execute(COUNT, params)
        assert cur.fetchone()[0] == sample.count("ATL", start, end)


def test_text_that_is_no_timestamp(conn):
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        count(conn, "ORD", "next tuesday", "2001-08-01T00:00:00Z")
    assert "parameter $2: invalid input syntax for type timestamp with time zone" in str(e.value)
    assert "tuesday" not in str(e.value)
