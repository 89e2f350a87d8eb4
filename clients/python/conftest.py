"""Fixtures of the Python client tests: one real flightsrv server per session and DuckDB
reading the committed sample independently.

The server is the one FLIGHTSRV_TEST_ADDR (host:port) names — `make test-clients` starts one
for the Python and Java suites together — or else a `flightsrv demo` this session starts on a
free port and stops by its pid: built with `go build` into a temporary directory, or the
binary FLIGHTSRV_BIN names.
"""

from __future__ import annotations

import os
import sys
import tempfile
from datetime import timezone
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import flightsrv_server  # noqa: E402

UTC = timezone.utc


@pytest.fixture(scope="session")
def server_addr() -> str:
    """host:port of a flightsrv serving the demo table `flights`."""
    addr = os.environ.get("FLIGHTSRV_TEST_ADDR")
    if addr:
        yield addr
        return
    with tempfile.TemporaryDirectory(prefix="flightsrv-bin-") as tmp:
        binary = os.environ.get("FLIGHTSRV_BIN")
        binary = Path(binary).resolve() if binary else flightsrv_server.build(Path(tmp))
        srv = flightsrv_server.start(binary)  # in its own temporary directory, removed by stop()
        try:
            yield srv.addr
        finally:
            exited = srv.proc.poll()
            log = srv.log()
            srv.stop()
    if exited is not None:
        pytest.fail(f"flightsrv exited during the tests with status {exited}:\n{log}")


@pytest.fixture(scope="session")
def uri(server_addr) -> str:
    return "grpc://" + server_addr


class Sample:
    """Answers from DuckDB over testdata/flights-sample.parquet, mapped the way the demo loads
    it: origin → origin, date (zone-less, read as UTC) → timestamp, id → id, and
    {"delay", "distance", "destination"} → value."""

    def __init__(self) -> None:
        self.db = duckdb.connect()
        self.db.execute("SET TimeZone = 'UTC'")
        self.db.execute(
            "CREATE VIEW flights AS SELECT origin, date AS ts, id, delay, distance, destination "
            f"FROM read_parquet('{flightsrv_server.SAMPLE.as_posix()}')")

    def count(self, origin, start, end) -> int:
        return self.db.execute(
            "SELECT count(*) FROM flights WHERE origin = ? AND ts >= ? AND ts < ?",
            [origin, naive_utc(start), naive_utc(end)]).fetchone()[0]

    def rows(self, origin, start, end, limit, desc=False):
        """[(origin, ts as aware UTC datetime, id, {delay, distance, destination})…] in
        (timestamp, id) order."""
        d = "DESC" if desc else "ASC"
        out = self.db.execute(
            "SELECT origin, ts, id, delay, distance, destination FROM flights "
            f"WHERE origin = ? AND ts >= ? AND ts < ? ORDER BY ts {d}, id {d} LIMIT ?",
            [origin, naive_utc(start), naive_utc(end), limit]).fetchall()
        return [(o, ts.replace(tzinfo=UTC), i, {"delay": dl, "distance": ds, "destination": dst})
                for o, ts, i, dl, ds, dst in out]


def naive_utc(t):
    """A datetime as naive UTC (DuckDB's TIMESTAMP)."""
    return t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo else t


@pytest.fixture(scope="session")
def sample() -> Sample:
    return Sample()
