"""Fixtures of the Python client tests: one real flightsrv server per session and DuckDB
reading the committed sample independently.

The servers are the ones the FLIGHTSRV_TEST_* variables name — `make test-clients` starts them
for the Python and Java suites together — or else ones this session starts on free ports and
stops by their pids (flightsrv_server.start_deployment): built with `go build` into a
temporary directory, or the binary FLIGHTSRV_BIN names.
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
def deployment() -> dict[str, str]:
    """The FLIGHTSRV_TEST_* variables (see flightsrv_server.py): from the environment when
    FLIGHTSRV_TEST_ADDR is set (`make test-clients`), else of a deployment this session
    starts and stops."""
    if os.environ.get("FLIGHTSRV_TEST_ADDR"):
        yield {k: v for k, v in os.environ.items() if k.startswith("FLIGHTSRV_TEST_")}
        return
    with tempfile.TemporaryDirectory(prefix="flightsrv-bin-") as tmp:
        binary = os.environ.get("FLIGHTSRV_BIN")
        binary = Path(binary).resolve() if binary else flightsrv_server.build(Path(tmp))
        dep = flightsrv_server.start_deployment(binary)  # in its own temporary directory
        try:
            yield dep.env()
        finally:
            exited = [(s.proc.poll(), s.log()) for s in dep.servers() if s.proc.poll() is not None]
            dep.stop()
    if exited:
        pytest.fail(f"a flightsrv exited during the tests with status {exited[0][0]}:\n{exited[0][1]}")


@pytest.fixture(scope="session")
def server_addr(deployment) -> str:
    """host:port of a flightsrv serving the demo table `flights` (plaintext, no authentication)."""
    return deployment["FLIGHTSRV_TEST_ADDR"]


@pytest.fixture(scope="session")
def uri(server_addr) -> str:
    return "grpc://" + server_addr


class Secure:
    """The secured servers of the deployment: TLS and mutual TLS, both with authentication."""

    def __init__(self, env: dict[str, str]) -> None:
        missing = [k for k in ("FLIGHTSRV_TEST_TLS_ADDR", "FLIGHTSRV_TEST_MTLS_ADDR", "FLIGHTSRV_TEST_CA")
                   if not env.get(k)]
        if missing:
            pytest.fail(f"{', '.join(missing)} not set: run the tests through flightsrv_server.py (make test-clients)")
        self.tls_uri = "grpc+tls://" + env["FLIGHTSRV_TEST_TLS_ADDR"]
        self.mtls_uri = "grpc+tls://" + env["FLIGHTSRV_TEST_MTLS_ADDR"]
        self.tls_addr = env["FLIGHTSRV_TEST_TLS_ADDR"]
        self.ca = Path(env["FLIGHTSRV_TEST_CA"])
        self.client_cert = Path(env["FLIGHTSRV_TEST_CLIENT_CERT"])
        self.client_key = Path(env["FLIGHTSRV_TEST_CLIENT_KEY"])
        self.user = env["FLIGHTSRV_TEST_USER"]
        self.password = env["FLIGHTSRV_TEST_PASSWORD"]


@pytest.fixture(scope="session")
def secure(deployment) -> Secure:
    return Secure(deployment)


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

    def count_all(self, start, end) -> int:
        """The rows of every origin in [start, end)."""
        return self.db.execute("SELECT count(*) FROM flights WHERE ts >= ? AND ts < ?",
                               [naive_utc(start), naive_utc(end)]).fetchone()[0]

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
