"""Connections kept across token lifetimes (issue 20): ADBC against the short-token server of
the deployment (flightsrv_server.py: bearer tokens of SHORT_TOKEN_TTL seconds, no clock-skew
leeway). A call whose bearer has passed half its lifetime is answered with a fresh one in the
response header `authorization`, which ADBC's Flight SQL driver adopts: a connection in use
stays signed in; one left idle past its token's expiry is refused UNAUTHENTICATED.
"""

from __future__ import annotations

import time

import adbc_driver_manager
import pytest
from adbc_driver_manager import AdbcStatusCode

from test_security import JAN1, AUG1, adbc_connect, adbc_count


@pytest.fixture(scope="session")
def short(deployment, secure):
    addr = deployment.get("FLIGHTSRV_TEST_SHORT_TOKEN_ADDR")
    if not addr:
        pytest.fail("FLIGHTSRV_TEST_SHORT_TOKEN_ADDR not set: run the tests through flightsrv_server.py (make test-clients)")
    return "grpc+tls://" + addr, float(deployment["FLIGHTSRV_TEST_SHORT_TOKEN_TTL"])


def test_adbc_connection_kept_across_three_token_lifetimes(secure, short, sample):
    uri, ttl = short
    want = sample.count("ORD", JAN1, AUG1)
    with adbc_connect(uri, secure, secure.user, secure.password) as conn:
        start = time.monotonic()
        queries = 0
        # Never idle for more than a fraction of a lifetime: every query is answered.
        while time.monotonic() - start < 3.5 * ttl:
            assert adbc_count(conn) == want, f"query {queries} after {time.monotonic() - start:.1f} s"
            queries += 1
            time.sleep(ttl / 8)
        assert queries >= 10
        # Idle past the latest token's expiry (issued at most now, in whole seconds): refused.
        time.sleep(ttl + 1.1)
        with pytest.raises(adbc_driver_manager.Error) as e:
            adbc_count(conn)
        assert e.value.status_code == AdbcStatusCode.UNAUTHENTICATED, e.value
        assert "invalid credentials" in str(e.value)
