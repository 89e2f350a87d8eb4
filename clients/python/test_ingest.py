"""Writes through ADBC's Flight SQL driver (adbc_driver_flightsql.dbapi): `adbc_ingest`
(Flight SQL bulk ingest, CommandStatementIngest) into the routed table `events` of the ingest
server (FLIGHTSRV_TEST_INGEST_ADDR, flightsrv_server.py), every row read back through queries
and compared with what was sent.

ROWS rows go through `adbc_ingest` (200,000 by default, to keep `make test` short);
FLIGHTSRV_INGEST_TEST_ROWS sets another count (`make test-ingest-1m` runs the issue's
1,000,000 and prints the rate).

The table has day buckets writable for the last three days at the server's clock, so the rows
are stamped in the last day. Each test writes channels of its own.
"""

from __future__ import annotations

import json
import os
import random
import time
from datetime import datetime, timedelta, timezone

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow as pa
import pytest

UTC = timezone.utc
ROWS = int(os.environ.get("FLIGHTSRV_INGEST_TEST_ROWS", "200000"))


@pytest.fixture(scope="module")
def ingest_uri(deployment) -> str:
    addr = deployment.get("FLIGHTSRV_TEST_INGEST_ADDR")
    if not addr:
        pytest.fail("FLIGHTSRV_TEST_INGEST_ADDR not set: run the tests through flightsrv_server.py (make test-clients)")
    return "grpc://" + addr


@pytest.fixture()
def conn(ingest_uri):
    with adbc_driver_flightsql.dbapi.connect(ingest_uri, autocommit=True) as c:
        yield c


def events(prefix: str, n: int, seed: int) -> tuple[pa.Table, dict[str, tuple[str, datetime, str]]]:
    """n wide rows over four channels named after prefix, in the last 20 hours; and, by id,
    each row's channel, time and the JSON value the server must store (compact, columns in
    order), computed here independently of the server."""
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)
    channels = [f"{prefix}-{i}" for i in range(4)]
    cols = {"channel": [], "timestamp": [], "id": [], "delay": [], "note": []}
    want = {}
    for i in range(n):
        ch = rng.choice(channels)
        at = now - timedelta(microseconds=rng.randrange(20 * 3600 * 10**6))
        rid = f"{prefix}-{i:07d}"
        delay = rng.randrange(-50, 200)
        note = None if i % 7 == 0 else f"n{rng.randrange(1000)}"
        for k, v in zip(cols, (ch, at, rid, delay, note)):
            cols[k].append(v)
        want[rid] = (ch, at, json.dumps({"delay": delay, "note": note}, separators=(",", ":")))
    table = pa.table({
        "channel": pa.array(cols["channel"], pa.string()),
        "timestamp": pa.array(cols["timestamp"], pa.timestamp("us", tz="UTC")),
        "id": pa.array(cols["id"], pa.string()),
        "delay": pa.array(cols["delay"], pa.int64()),
        "note": pa.array(cols["note"], pa.string()),
    })
    return table, want


def read_back(conn, channels: set[str]) -> dict[str, tuple[str, datetime, str]]:
    """Every stored row of channels, by id, through a query per channel."""
    now = datetime.now(UTC)
    got = {}
    with conn.cursor() as cur:
        for ch in sorted(channels):
            cur.execute("SELECT timestamp, id, value FROM events WHERE channel = ? AND timestamp >= ? AND timestamp < ?",
                        (ch, now - timedelta(days=3), now + timedelta(days=1)))
            t = cur.fetch_arrow_table()
            for at, rid, val in zip(t["timestamp"].to_pylist(), t["id"].to_pylist(), t["value"].to_pylist()):
                got[rid] = (ch, at, val.decode())
    return got


def count(conn, channels: set[str]) -> int:
    now = datetime.now(UTC)
    total = 0
    with conn.cursor() as cur:
        for ch in sorted(channels):
            cur.execute("SELECT COUNT(*) FROM events WHERE channel = ? AND timestamp >= ? AND timestamp < ?",
                        (ch, now - timedelta(days=3), now + timedelta(days=1)))
            total += cur.fetchone()[0]
    return total


@pytest.mark.parametrize("mode", ["append", "create_append"])
def test_adbc_ingest(conn, mode):
    table, want = events(f"ingest-{mode}", ROWS, seed=21)
    with conn.cursor() as cur:
        start = time.monotonic()
        # In batches of 50,000 rows: ADBC's driver sends each batch as one gRPC message, which
        # its client refuses beyond 16 MiB (a 1M-row table in one chunk is 67 MB).
        n = cur.adbc_ingest("events", pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=50_000)), mode=mode)
        elapsed = time.monotonic() - start
    print(f"adbc_ingest {mode}: {n} rows in {elapsed:.1f} s, {n / elapsed:,.0f} rows/s")
    assert n == ROWS
    channels = {c for c, _, _ in want.values()}
    got = read_back(conn, channels)
    assert len(got) == ROWS
    assert got == want


@pytest.mark.parametrize("mode", ["create", "replace"])
def test_adbc_ingest_refuses_defining_a_table(conn, mode):
    table, want = events(f"refused-{mode}", 10, seed=5)
    with conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error, match="--table") as err:
            cur.adbc_ingest("events", table, mode=mode)
    assert err.value.status_code == adbc_driver_manager.AdbcStatusCode.INVALID_ARGUMENT
    assert count(conn, {c for c, _, _ in want.values()}) == 0


def test_adbc_ingest_bad_row_stores_nothing(conn):
    table, want = events("bad-row", 50_000, seed=7)
    ts = table["timestamp"].to_pylist()
    ts[31_337] = None  # a row without a time, in the middle of the stream
    table = table.set_column(1, "timestamp", pa.array(ts, pa.timestamp("us", tz="UTC")))
    with conn.cursor() as cur:
        with pytest.raises(adbc_driver_manager.Error, match="row 31337") as err:
            cur.adbc_ingest("events", table, mode="append")
    assert err.value.status_code == adbc_driver_manager.AdbcStatusCode.INVALID_ARGUMENT
    assert count(conn, {c for c, _, _ in want.values()}) == 0


@pytest.mark.parametrize("mode", ["append", "create_append"])
def test_adbc_ingest_empty(conn, mode):
    """No rows (an empty table, a reader without batches) store nothing and count 0: ADBC's
    driver then sends a DoPut stream without any message."""
    table, _ = events(f"empty-{mode}", 0, seed=3)
    with conn.cursor() as cur:
        assert cur.adbc_ingest("events", table, mode=mode) == 0
        assert cur.adbc_ingest("events", pa.RecordBatchReader.from_batches(table.schema, []), mode=mode) == 0
    assert count(conn, {f"empty-{mode}-{i}" for i in range(4)}) == 0


def test_adbc_ingest_nested_and_non_finite(conn):
    """Wide rows whose other columns are a struct, a list, a map and floats: nested values are
    stored as nested JSON and NaN and the infinities as PostgreSQL's to_jsonb writes them
    ("NaN", "Infinity", "-Infinity"), never null. The expected values are written out here."""
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    table = pa.table({
        "channel": pa.array(["nested"] * 3, pa.string()),
        "timestamp": pa.array([at] * 3, pa.timestamp("us", tz="UTC")),
        "id": pa.array(["n-0", "n-1", "n-2"], pa.string()),
        "f": pa.array([float("nan"), float("inf"), -1.5], pa.float64()),
        "r": pa.array([float("-inf"), 0.5, None], pa.float32()),
        "pt": pa.array([{"x": 1, "label": "a"}, None, {"x": None, "label": "c\"d"}],
                       pa.struct([("x", pa.int64()), ("label", pa.string())])),
        "xs": pa.array([[1.5, float("nan")], [], None], pa.list_(pa.float64())),
        "tags": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
    })
    want = {
        "n-0": '{"f":"NaN","r":"-Infinity","pt":{"x":1,"label":"a"},"xs":[1.5,"NaN"],"tags":{"k":1}}',
        "n-1": '{"f":"Infinity","r":0.5,"pt":null,"xs":[],"tags":null}',
        "n-2": '{"f":-1.5,"r":null,"pt":{"x":null,"label":"c\\"d"},"xs":null,"tags":{}}',
    }
    with conn.cursor() as cur:
        assert cur.adbc_ingest("events", table, mode="append") == 3
    got = read_back(conn, {"nested"})
    assert {rid: v for rid, (_, _, v) in got.items()} == want


def test_adbc_executemany_insert(conn):
    """A prepared INSERT bound to many parameter rows in one DoPut (executemany), the count
    exact; a literal INSERT through cursor.execute, run at once by the server."""
    table, want = events("many", 5_000, seed=11)
    rows = list(zip(*(table[c].to_pylist() for c in ("channel", "timestamp", "id"))))
    values = [want[rid][2] for _, _, rid in rows]
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO events (channel, timestamp, id, value) VALUES (?, ?, ?, ?)",
                        [(ch, at, rid, v) for (ch, at, rid), v in zip(rows, values)])
        assert cur.rowcount == len(rows)
        ch, at, rid = "many-literal", datetime.now(UTC).replace(microsecond=123456) - timedelta(hours=1), "lit-1"
        cur.execute(f"INSERT INTO events VALUES ('{ch}', TIMESTAMPTZ '{at.isoformat()}', '{rid}', '{{\"a\":1}}')")
        want[rid] = (ch, at, '{"a":1}')
    got = read_back(conn, {c for c, _, _ in want.values()})
    assert got == want


def test_adbc_update_and_delete_refused(conn):
    # Refused by name where they are executed (the server answers ADBC's prepare of a statement
    # it refuses with a handle, and the refusal at execution: docs/flightsql-clients.md), once
    # with parameters; executemany of no parameter rows executes nothing, as PEP 249 drivers do.
    with conn.cursor() as cur:
        for sql, params, name in (("UPDATE events SET value = 'x' WHERE channel = 'a'", None, "UPDATE"),
                                  ("DELETE FROM events WHERE channel = 'a'", None, "DELETE"),
                                  ("DELETE FROM events WHERE channel = ?", [("a",)], "DELETE")):
            with pytest.raises(adbc_driver_manager.Error, match=name) as err:
                if params is None:
                    cur.execute(sql)
                else:
                    cur.executemany(sql, params)
            assert err.value.status_code == adbc_driver_manager.AdbcStatusCode.NOT_IMPLEMENTED
