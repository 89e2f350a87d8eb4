"""SQL written by real generators, answered as PostgreSQL answers it.

Each query is produced the way a BI tool or library produces it, then run twice: through ADBC's
Flight SQL driver against the demo server, and through psycopg against a real PostgreSQL
server holding the same rows in a plain table (the oracle); the results must be equal, column
for column, row for row (floats to a relative 1e-9, numerics as floats, instants in UTC).

- SQLAlchemy's PostgreSQL dialect compiles the queries Superset builds: a virtual dataset
  (`(SELECT … FROM flights WHERE origin = …) AS virtual_table`) with the time filter outside
  it, written as Superset's PostgreSQL engine spec writes time literals
  (`TO_TIMESTAMP('…', 'YYYY-MM-DD HH24:MI:SS.US')`), its time grain expressions, metrics
  (COUNT(*), SUM, AVG, MAX, COUNT(DISTINCT)), GROUP BY, ORDER BY a metric and the row limit.
- ibis compiles expressions to SQL for its PostgreSQL backend without a connection
  (`ibis.to_sql(expr, dialect="postgres")`).
- Grafana's PostgreSQL macros are expanded as Grafana expands them ($__timeFilter,
  $__timeGroup, $__timeGroupAlias, $__timeFrom/$__timeTo, $__time, $__timeEpoch).
- Metabase's query shapes are written out: schema-qualified quoted identifiers, DATE_TRUNC,
  CAST(… AS date), the report time zone's AT TIME ZONE.

PostgreSQL is the one FLIGHTSRV_TEST_PG_URL names (`make test-clients` runs the suites under
scripts/with-postgres.sh); the table holds the sample's rows of ORIGINS.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import os
import re

import adbc_driver_flightsql.dbapi
import ibis
import psycopg
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
from ibis import _
from sqlalchemy.dialects import postgresql

import flightsrv_server

ORIGINS = ("ORD", "SFO", "BOS")
UTC = dt.timezone.utc

@pytest.fixture(scope="module")
def pg():
    url = os.environ.get("FLIGHTSRV_TEST_PG_URL")
    if not url:
        pytest.fail("FLIGHTSRV_TEST_PG_URL is not set: run through `make test-clients` or scripts/with-postgres.sh")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        conn.execute('CREATE TEMPORARY TABLE flights (origin text NOT NULL, "timestamp" timestamptz NOT NULL, '
                     "id text NOT NULL, value json NOT NULL)")
        tbl = pq.read_table(flightsrv_server.SAMPLE, filters=[("origin", "in", list(ORIGINS))])
        cols = tbl.to_pydict()
        with conn.cursor().copy('COPY flights (origin, "timestamp", id, value) FROM STDIN') as copy:
            for o, d, i, dl, ds, dst in zip(cols["origin"], cols["date"], cols["id"], cols["delay"], cols["distance"], cols["destination"]):
                # The demo's value: {"delay", "distance", "destination"} (flightsrv load's JSON).
                value = json.dumps({"delay": dl, "distance": ds, "destination": dst}, separators=(",", ":"))
                copy.write_row((o, d.replace(tzinfo=UTC), i, value))
        conn.execute("ANALYZE flights")
        (n,), = conn.execute("SELECT count(*) FROM flights").fetchall()
        assert n == tbl.num_rows > 25000
        yield conn


@pytest.fixture(scope="module")
def conn(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as c:
        yield c


def norm(v):
    """A value as both sides compare it: numerics as floats, instants as aware UTC datetimes."""
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(UTC)
    return v


def same(a, b) -> bool:
    a, b = norm(a), norm(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=1e-9)
    return a == b


def check(conn, pg, sql: str, pg_sql: str | None = None) -> int:
    """Runs sql on flightsrv and PostgreSQL (pg_sql where it must be spelled differently) and
    asserts equal results; returns the rows."""
    want = pg.execute(pg_sql or sql).fetchall()
    with conn.cursor() as cur:
        cur.execute(sql)
        got = cur.fetchall()
    assert len(got) == len(want), f"{len(got)} rows, PostgreSQL {len(want)}:\n{sql}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w) and all(same(x, y) for x, y in zip(g, w)), f"row {i}: {g}, PostgreSQL {w}:\n{sql}"
    assert want, f"PostgreSQL answers no row: the query checks nothing\n{sql}"
    return len(want)


# --- Superset through SQLAlchemy ------------------------------------------------------------

# Superset's PostgresEngineSpec time grain expressions ({col} the temporal column).
SUPERSET_GRAINS = {
    None: "{col}",
    "PT1S": "DATE_TRUNC('second', {col})",
    "PT5S": "DATE_TRUNC('minute', {col}) + INTERVAL '5 seconds' * FLOOR(EXTRACT(SECOND FROM {col}) / 5)",
    "PT30S": "DATE_TRUNC('minute', {col}) + INTERVAL '30 seconds' * FLOOR(EXTRACT(SECOND FROM {col}) / 30)",
    "PT1M": "DATE_TRUNC('minute', {col})",
    "PT5M": "DATE_TRUNC('hour', {col}) + INTERVAL '5 minutes' * FLOOR(EXTRACT(MINUTE FROM {col}) / 5)",
    "PT10M": "DATE_TRUNC('hour', {col}) + INTERVAL '10 minutes' * FLOOR(EXTRACT(MINUTE FROM {col}) / 10)",
    "PT15M": "DATE_TRUNC('hour', {col}) + INTERVAL '15 minutes' * FLOOR(EXTRACT(MINUTE FROM {col}) / 15)",
    "PT30M": "DATE_TRUNC('hour', {col}) + INTERVAL '30 minutes' * FLOOR(EXTRACT(MINUTE FROM {col}) / 30)",
    "PT1H": "DATE_TRUNC('hour', {col})",
    "P1D": "DATE_TRUNC('day', {col})",
    "P1W": "DATE_TRUNC('week', {col})",
    "P1M": "DATE_TRUNC('month', {col})",
    "P3M": "DATE_TRUNC('quarter', {col})",
    "P1Y": "DATE_TRUNC('year', {col})",
}


def superset_dttm(t: dt.datetime) -> str:
    """Superset's PostgreSQL literal for a datetime (PostgresEngineSpec.convert_dttm)."""
    return f"""TO_TIMESTAMP('{t.isoformat(sep=" ", timespec="microseconds")}', 'YYYY-MM-DD HH24:MI:SS.US')"""


def superset_query(virtual_sql: str, grain: str | None, start, end, groupby=(), metrics=("count",),
                   order_desc=True, row_limit=10000, extra_where=None) -> str:
    """The SELECT Superset's query builder makes over a virtual dataset, compiled by
    SQLAlchemy's PostgreSQL dialect with the literals inlined (what it sends)."""
    vt = sa.text(virtual_sql).columns(sa.column("timestamp"), sa.column("id"), sa.column("delay"),
                                       sa.column("distance"), sa.column("dest"), sa.column("origin")).subquery("virtual_table")
    ts = sa.literal_column(SUPERSET_GRAINS[grain].format(col='"timestamp"'))
    defs = {
        "count": sa.func.count().label("count"),
        "SUM(distance)": sa.func.sum(vt.c.distance).label("SUM(distance)"),
        "AVG(delay)": sa.func.avg(vt.c.delay).label("AVG(delay)"),
        "MAX(delay)": sa.func.max(vt.c.delay).label("MAX(delay)"),
        "COUNT_DISTINCT(dest)": sa.func.count(sa.distinct(vt.c.dest)).label("COUNT_DISTINCT(dest)"),
    }
    cols = []
    if grain is not None or not groupby:
        cols.append(ts.label("__timestamp"))
    cols += [vt.c[g] for g in groupby]
    ms = [defs[m] for m in metrics]
    where = [vt.c.timestamp >= sa.literal_column(superset_dttm(start)), vt.c.timestamp < sa.literal_column(superset_dttm(end))]
    if extra_where is not None:
        where.append(extra_where(vt))
    q = sa.select(*cols, *ms).select_from(vt).where(sa.and_(*where))
    keys = ([ts] if cols and cols[0].name == "__timestamp" else []) + [vt.c[g] for g in groupby]
    q = q.group_by(*keys)
    # Superset orders by the first metric, then (for a total order here) by the keys.
    q = q.order_by(ms[0].desc() if order_desc else ms[0].asc(), *keys).limit(row_limit)
    return str(q.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))


VIRTUAL_ORD = ("SELECT timestamp, id, (value->>'delay')::int AS delay, (value->>'distance')::int AS distance, "
               "value->>'destination' AS dest, origin FROM flights WHERE origin = 'ORD'")
VIRTUAL_SFO_BOS = ("SELECT timestamp, id, (value->>'delay')::int AS delay, (value->>'distance')::int AS distance, "
                   "value->>'destination' AS dest, origin FROM flights WHERE origin IN ('SFO', 'BOS')")


def d(y, m, day, h=0, mi=0):
    return dt.datetime(y, m, day, h, mi)


SUPERSET_CASES = [
    # (virtual dataset, grain, start, end, groupby, metrics)
    (VIRTUAL_ORD, "P1D", d(2001, 3, 25), d(2001, 4, 5), (), ("count",)),
    (VIRTUAL_ORD, "P1W", d(2001, 1, 1), d(2001, 7, 1), (), ("count", "AVG(delay)")),
    (VIRTUAL_ORD, "P1M", d(2001, 1, 1), d(2001, 7, 1), ("dest",), ("SUM(distance)",)),
    (VIRTUAL_ORD, "P3M", d(2001, 1, 1), d(2001, 7, 1), (), ("count", "MAX(delay)", "COUNT_DISTINCT(dest)")),
    (VIRTUAL_ORD, "P1Y", d(2001, 1, 1), d(2002, 1, 1), (), ("count",)),
    (VIRTUAL_ORD, "PT1H", d(2001, 3, 31, 12), d(2001, 4, 1, 12), (), ("count", "AVG(delay)")),
    (VIRTUAL_ORD, "PT1M", d(2001, 5, 10, 6), d(2001, 5, 10, 9), (), ("count",)),
    (VIRTUAL_ORD, "PT1S", d(2001, 5, 10, 6), d(2001, 5, 10, 7), (), ("count",)),
    (VIRTUAL_ORD, "PT5S", d(2001, 5, 10, 6), d(2001, 5, 10, 7), (), ("count",)),
    (VIRTUAL_ORD, "PT30S", d(2001, 5, 10, 6), d(2001, 5, 10, 7), (), ("count",)),
    (VIRTUAL_ORD, "PT5M", d(2001, 5, 10, 6), d(2001, 5, 10, 12), (), ("count",)),
    (VIRTUAL_ORD, "PT10M", d(2001, 3, 31, 20), d(2001, 4, 1, 4), (), ("count", "AVG(delay)")),
    (VIRTUAL_ORD, "PT15M", d(2001, 6, 1), d(2001, 6, 2), (), ("count",)),
    (VIRTUAL_ORD, "PT30M", d(2001, 3, 31, 12), d(2001, 4, 1, 12), (), ("count",)),
    (VIRTUAL_SFO_BOS, "P1D", d(2001, 2, 10), d(2001, 2, 17), ("origin",), ("count", "AVG(delay)")),
    (VIRTUAL_SFO_BOS, "P1M", d(2001, 1, 1), d(2001, 7, 1), ("origin", "dest"), ("count",)),
    (VIRTUAL_SFO_BOS, None, d(2001, 5, 1), d(2001, 6, 1), ("dest",), ("count", "SUM(distance)")),
    (VIRTUAL_SFO_BOS, "P1W", d(2001, 1, 25), d(2001, 5, 5), ("origin",), ("MAX(delay)", "COUNT_DISTINCT(dest)")),
    # An inverted range: PostgreSQL answers no row, and so must flightsrv (checked below).
]


@pytest.mark.parametrize("case", SUPERSET_CASES, ids=lambda c: f"{c[1]}-{'+'.join(c[4])}-{'+'.join(c[5])}")
def test_superset_through_sqlalchemy(conn, pg, case):
    virtual, grain, start, end, groupby, metrics = case
    sql = superset_query(virtual, grain, start, end, groupby=groupby, metrics=metrics)
    assert "AS virtual_table" in sql and "TO_TIMESTAMP(" in sql and "LIMIT 10000" in sql
    check(conn, pg, sql)


def test_superset_filters_and_empty_ranges(conn, pg):
    """Superset's adhoc filters beside the time filter; an empty and an inverted time range
    answer no rows, as PostgreSQL does."""
    sql = superset_query(VIRTUAL_SFO_BOS, "P1D", d(2001, 4, 28), d(2001, 5, 3), groupby=("dest",), metrics=("count",),
                         extra_where=lambda vt: sa.and_(vt.c.dest.in_(["LAX", "SEA", "LGA"]), vt.c.delay > 0))
    check(conn, pg, sql)
    for start, end in ((d(2001, 3, 20), d(2001, 3, 20)), (d(2001, 4, 10), d(2001, 4, 5))):
        sql = superset_query(VIRTUAL_ORD, "P1D", start, end)
        assert pg.execute(sql).fetchall() == []
        with conn.cursor() as cur:
            cur.execute(sql)
            assert cur.fetchall() == []


# --- ibis -----------------------------------------------------------------------------------

def ibis_flights():
    return ibis.table({"origin": "string", "timestamp": "timestamp('UTC')", "id": "string", "value": "json"}, name="flights")


def ibis_cases():
    t = ibis_flights()
    ts = lambda s: ibis.timestamp(s, timezone="UTC")  # noqa: E731
    ord_mixed = t.filter((t.origin == "ORD") & (t.timestamp >= ts("2001-03-25 00:00:00")) & (t.timestamp < ts("2001-04-05 00:00:00")))
    sfo = t.filter((t.origin == "SFO") & t.timestamp.between(ts("2001-02-01 00:00:00"), ts("2001-02-28 23:59:59")))
    three = t.filter(t.origin.isin(list(ORIGINS)) & (t.timestamp >= ts("2001-01-01 00:00:00")) & (t.timestamp < ts("2001-07-01 00:00:00")))
    return [
        ("count by day", ord_mixed.group_by(day=_.timestamp.truncate("D")).aggregate(n=_.count()).order_by("day")),
        ("count by origin and month", three.group_by(["origin", _.timestamp.truncate("M").name("m")]).aggregate(n=_.count()).order_by(["origin", "m"])),
        ("hour histogram", sfo.group_by(h=_.timestamp.hour()).aggregate(n=_.count(), first=_.timestamp.min(), last=_.timestamp.max()).order_by("h")),
        ("top ids", ord_mixed.select("id", "timestamp").order_by([ibis.desc("timestamp"), "id"]).limit(10)),
        ("offset page", sfo.select("id").order_by("id").limit(5, offset=40)),
        ("string functions", sfo.select(a=_.id.substr(6, 4), b=_.id.length(), c=_.origin.lower(), d=_.id.startswith("00002")).order_by(["a", "b"]).limit(10)),
        ("distinct count", three.aggregate(n=_.count(), ids=_.id.nunique(), days=_.timestamp.date().nunique())),
        ("weekday", three.group_by(w=_.timestamp.day_of_week.index()).aggregate(n=_.count()).order_by("w")),
        ("having", three.group_by("origin").aggregate(n=_.count()).filter(_.n > 10000).order_by("origin")),
        ("epoch seconds", ord_mixed.select("id", e=_.timestamp.epoch_seconds()).order_by("id").limit(5)),
        ("month and hour", three.filter(_.origin != "SFO").group_by(m=_.timestamp.month(), h=_.timestamp.hour()).aggregate(n=_.count()).order_by(["m", "h"])),
        ("case", sfo.group_by(part=ibis.cases((_.timestamp.hour() < 12, "am"), else_="pm")).aggregate(n=_.count()).order_by("part")),
    ]


@pytest.mark.parametrize("name", [c[0] for c in ibis_cases()])
def test_ibis_postgres_sql(conn, pg, name):
    expr = next(e for n, e in ibis_cases() if n == name)
    check(conn, pg, str(ibis.to_sql(expr, dialect="postgres")))


# --- Grafana ----------------------------------------------------------------------------------

def grafana_interval_seconds(s: str) -> int:
    n, unit = int(s[:-1]), s[-1]
    return n * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


def grafana_expand(sql: str, frm: dt.datetime, to: dt.datetime) -> str:
    """Expands Grafana's PostgreSQL macros as its data source does (time range in UTC, RFC 3339
    with nanoseconds, interval in seconds)."""
    rfc = lambda t: t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731 (Go's RFC3339Nano of a whole second)

    def group(a, alias):
        secs = grafana_interval_seconds(a[1].strip("'\""))
        return f"floor(extract(epoch from {a[0]})/{secs})*{secs}" + (' AS "time"' if alias else "")

    macros = {
        "__time": lambda a: f'{a[0]} AS "time"',
        "__timeEpoch": lambda a: f'extract(epoch from {a[0]}) as "time"',
        "__timeFilter": lambda a: f"{a[0]} BETWEEN '{rfc(frm)}' AND '{rfc(to)}'",
        "__timeFrom": lambda a: f"'{rfc(frm)}'",
        "__timeTo": lambda a: f"'{rfc(to)}'",
        "__timeGroup": lambda a: group(a, False),
        "__timeGroupAlias": lambda a: group(a, True),
        "__unixEpochFilter": lambda a: f"{a[0]} >= {int(frm.timestamp())} AND {a[0]} <= {int(to.timestamp())}",
    }

    def repl(m):
        return macros[m.group(1)]([a.strip() for a in m.group(2).split(",")] if m.group(2) else [])

    return re.sub(r"\$(__\w+)\(([^()]*)\)", repl, sql)


GRAFANA_PANELS = [
    ("SELECT $__timeGroupAlias(timestamp, '1h'), count(*) AS flights FROM flights WHERE $__timeFilter(timestamp) AND origin = 'ORD' GROUP BY 1 ORDER BY 1",
     d(2001, 3, 31), d(2001, 4, 2)),
    ("SELECT $__timeGroupAlias(timestamp, '5m'), avg((value->>'delay')::int) AS delay FROM flights WHERE $__timeFilter(timestamp) AND origin = 'ORD' GROUP BY 1 ORDER BY 1",
     d(2001, 5, 10, 6), d(2001, 5, 10, 12)),
    ("SELECT $__timeGroup(timestamp, '1d') AS time, value->>'destination' AS metric, count(*) AS value FROM flights WHERE $__timeFilter(timestamp) AND origin = 'BOS' AND value->>'destination' IN ('LGA', 'DCA') GROUP BY 1, 2 ORDER BY 1, 2",
     d(2001, 1, 10), d(2001, 1, 14)),
    ("SELECT $__time(timestamp), (value->>'delay')::int AS delay FROM flights WHERE $__timeFilter(timestamp) AND origin = 'SFO' ORDER BY 1, id",
     d(2001, 2, 14, 10), d(2001, 2, 14, 12)),
    ("SELECT $__timeEpoch(timestamp), id FROM flights WHERE $__timeFilter(timestamp) AND origin = 'BOS' ORDER BY 1, 2",
     d(2001, 6, 10, 6), d(2001, 6, 10, 9)),
    ("SELECT $__timeGroupAlias(timestamp, '6h'), max((value->>'delay')::int), min((value->>'delay')::int) FROM flights WHERE timestamp >= $__timeFrom() AND timestamp < $__timeTo() AND origin IN ('ORD', 'BOS') GROUP BY 1 ORDER BY 1",
     d(2001, 3, 30), d(2001, 4, 3)),
    ("SELECT $__timeGroupAlias(timestamp, '30m'), origin AS metric, count(*) FROM flights WHERE $__timeFilter(timestamp) AND origin IN ('ORD', 'SFO') GROUP BY 1, 2 ORDER BY 1, 2",
     d(2001, 4, 1), d(2001, 4, 1, 6)),
]


@pytest.mark.parametrize("panel", GRAFANA_PANELS, ids=lambda p: p[0][7:40])
def test_grafana_macros(conn, pg, panel):
    template, frm, to = panel
    sql = grafana_expand(template, frm.replace(tzinfo=UTC), to.replace(tzinfo=UTC))
    assert "$__" not in sql
    check(conn, pg, sql)


# --- Metabase ---------------------------------------------------------------------------------

F = '"public"."flights"'


def metabase(origin: str, start: str, end: str, select: str, group: str | None, order: str, limit: str = "") -> str:
    """A Metabase native-query shape: schema-qualified quoted identifiers, the filter on the
    table's columns with `timestamp with time zone` literals."""
    where = (f'WHERE ({F}."origin" = \'{origin}\') AND ({F}."timestamp" >= timestamp with time zone \'{start}\') '
             f'AND ({F}."timestamp" < timestamp with time zone \'{end}\')')
    g = f" GROUP BY {group}" if group else ""
    return f"SELECT {select} FROM {F} {where}{g} ORDER BY {order}{limit}"


METABASE_QUERIES = [
    metabase("BOS", "2001-01-08 00:00:00.000Z", "2001-01-15 00:00:00.000Z",
             f'CAST({F}."timestamp" AS date) AS "timestamp", COUNT(*) AS "count"', f'CAST({F}."timestamp" AS date)', f'CAST({F}."timestamp" AS date) ASC'),
    metabase("SFO", "2001-01-01 00:00:00.000Z", "2001-07-01 00:00:00.000Z",
             f'DATE_TRUNC(\'month\', {F}."timestamp") AS "timestamp", COUNT(*) AS "count"', f'DATE_TRUNC(\'month\', {F}."timestamp")', f'DATE_TRUNC(\'month\', {F}."timestamp") ASC'),
    # The report time zone: Metabase converts the column to it before truncating.
    metabase("ORD", "2001-03-30 05:00:00.000Z", "2001-04-03 05:00:00.000Z",
             f'CAST(({F}."timestamp" AT TIME ZONE \'America/Chicago\') AS date) AS "timestamp", COUNT(*) AS "count"',
             f'CAST(({F}."timestamp" AT TIME ZONE \'America/Chicago\') AS date)', f'CAST(({F}."timestamp" AT TIME ZONE \'America/Chicago\') AS date) ASC'),
    metabase("ORD", "2001-03-25 00:00:00.000Z", "2001-04-08 00:00:00.000Z",
             f'DATE_TRUNC(\'hour\', ({F}."timestamp" AT TIME ZONE \'America/Chicago\')) AS "timestamp", COUNT(*) AS "count"',
             "1", "1 ASC"),
    # Week starting on Sunday (Metabase's default start of week).
    metabase("BOS", "2001-02-01 00:00:00.000Z", "2001-05-01 00:00:00.000Z",
             f'(DATE_TRUNC(\'week\', ({F}."timestamp" + INTERVAL \'1 day\')) + INTERVAL \'-1 day\') AS "timestamp", COUNT(*) AS "count"',
             "1", "1 ASC"),
    metabase("ORD", "2001-04-01 00:00:00.000Z", "2001-05-01 00:00:00.000Z",
             f'({F}."value"->>\'destination\') AS "destination", AVG(CAST(({F}."value"->>\'delay\') AS integer)) AS "avg", '
             f'SUM(CAST(({F}."value"->>\'distance\') AS integer)) AS "sum"', "1", '"avg" DESC, 1 ASC', " LIMIT 10"),
    metabase("SFO", "2001-02-01 08:00:00.000Z", "2001-03-01 08:00:00.000Z",
             f'EXTRACT(hour FROM ({F}."timestamp" AT TIME ZONE \'America/Los_Angeles\')) AS "timestamp", COUNT(*) AS "count"', "1", "1 ASC"),
    metabase("SFO", "2001-06-01 00:00:00.000Z", "2001-06-02 00:00:00.000Z",
             f'{F}."id" AS "id", {F}."timestamp" AS "timestamp", {F}."origin" AS "origin"', None,
             f'{F}."timestamp" DESC, {F}."id" ASC', " LIMIT 2000"),
]


@pytest.mark.parametrize("sql", METABASE_QUERIES, ids=range(len(METABASE_QUERIES)))
def test_metabase_shapes(conn, pg, sql):
    # PostgreSQL holds the rows in a temporary table: schema pg_temp where Metabase writes public.
    check(conn, pg, sql, pg_sql=sql.replace('"public"', '"pg_temp"'))
