"""Signed in and encrypted: ADBC and pyarrow.flight against the TLS and mutual-TLS servers of
the deployment (flightsrv_server.py), both with authentication, checked against DuckDB.

A wrong password, a missing one, a foreign token and a plaintext connection are refused; the
refusals are UNAUTHENTICATED and say nothing more.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow.flight as flight
import pytest
from adbc_driver_flightsql import DatabaseOptions
from adbc_driver_manager import AdbcStatusCode

from test_flight import _statement

UTC = timezone.utc
JAN1, AUG1 = datetime(2001, 1, 1, tzinfo=UTC), datetime(2001, 8, 1, tzinfo=UTC)
COUNT = "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?"


def adbc_connect(uri, secure, user=None, password=None, mtls=False, ca=True):
    kw = {}
    if ca:
        kw[DatabaseOptions.TLS_ROOT_CERTS.value] = secure.ca.read_text()
    if user is not None:
        kw.update(username=user, password=password)
    if mtls:
        kw[DatabaseOptions.MTLS_CERT_CHAIN.value] = secure.client_cert.read_text()
        kw[DatabaseOptions.MTLS_PRIVATE_KEY.value] = secure.client_key.read_text()
    return adbc_driver_flightsql.dbapi.connect(uri, db_kwargs=kw, autocommit=True)


def adbc_count(conn, origin="ORD"):
    with conn.cursor() as cur:
        cur.execute(COUNT, (origin, JAN1, AUG1))
        return cur.fetchone()[0]


# --- ADBC -----------------------------------------------------------------------------------

def test_adbc_tls_with_password(secure, sample):
    with adbc_connect(secure.tls_uri, secure, secure.user, secure.password) as conn:
        assert adbc_count(conn) == sample.count("ORD", JAN1, AUG1)
        assert adbc_count(conn, "SFO") == sample.count("SFO", JAN1, AUG1)
        assert conn.adbc_get_info()["vendor_name"] == "flightsrv"
        # current_user is the authenticated user (not a constant).
        with conn.cursor() as cur:
            cur.execute("SELECT current_user, session_user")
            assert cur.fetchall() == [(secure.user, secure.user)]


def test_adbc_mutual_tls_with_password(secure, sample):
    with adbc_connect(secure.mtls_uri, secure, secure.user, secure.password, mtls=True) as conn:
        assert adbc_count(conn, "DFW") == sample.count("DFW", JAN1, AUG1)


def _adbc_refusal(uri, secure, **kw):
    with pytest.raises(adbc_driver_manager.Error) as e:
        with adbc_connect(uri, secure, **kw) as conn:
            adbc_count(conn)
    return e.value


@pytest.mark.parametrize("user,password", [("analyst", "wrong password"), ("nobody", "correct horse battery staple")],
                         ids=["wrong-password", "unknown-user"])
def test_adbc_bad_credentials_are_unauthenticated(secure, user, password):
    err = _adbc_refusal(secure.tls_uri, secure, user=user, password=password)
    assert err.status_code == AdbcStatusCode.UNAUTHENTICATED, err
    assert "invalid credentials" in str(err)
    assert "analyst" not in str(err) and "nobody" not in str(err)


def test_adbc_without_credentials_is_unauthenticated(secure):
    err = _adbc_refusal(secure.tls_uri, secure)
    assert err.status_code == AdbcStatusCode.UNAUTHENTICATED, err
    assert "authentication required" in str(err)


def test_adbc_mutual_tls_needs_a_client_certificate(secure):
    err = _adbc_refusal(secure.mtls_uri, secure, user=secure.user, password=secure.password)
    assert err.status_code in (AdbcStatusCode.IO, AdbcStatusCode.UNKNOWN, AdbcStatusCode.INTERNAL), err


def test_adbc_untrusted_server_certificate(secure):
    # Without the test CA the server's certificate does not verify.
    err = _adbc_refusal(secure.tls_uri, secure, user=secure.user, password=secure.password, ca=False)
    assert err.status_code != AdbcStatusCode.OK


def test_adbc_plaintext_to_tls_server_is_refused(secure):
    with pytest.raises(adbc_driver_manager.Error):
        with adbc_driver_flightsql.dbapi.connect("grpc://" + secure.tls_addr,
                                                 db_kwargs={"username": secure.user, "password": secure.password},
                                                 autocommit=True) as conn:
            adbc_count(conn)


# --- pyarrow.flight -------------------------------------------------------------------------

def _flight_sql_count(client, options, origin="ORD"):
    # A CommandStatementQuery encoded by hand (test_flight.py).
    sql = (f"SELECT COUNT(*) FROM flights WHERE origin = '{origin}' "
           "AND timestamp >= '2001-01-01T00:00:00Z' AND timestamp < '2001-08-01T00:00:00Z'")
    info = client.get_flight_info(_statement(sql), options)
    return client.do_get(info.endpoints[0].ticket, options).read_all().column(0)[0].as_py()


def test_pyarrow_basic_handshake_bearer_token(secure, sample):
    with flight.FlightClient(secure.tls_uri, tls_root_certs=secure.ca.read_bytes()) as client:
        header = client.authenticate_basic_token(secure.user, secure.password)
        assert header[0] == b"authorization"
        assert header[1].startswith(b"Bearer ")
        token = header[1].split(b" ", 1)[1]
        assert token.count(b".") == 2  # a JWT
        opts = flight.FlightCallOptions(headers=[header])
        assert _flight_sql_count(client, opts) == sample.count("ORD", JAN1, AUG1)
        # The scheme is matched case-insensitively, and Basic works on every call too.
        lower = flight.FlightCallOptions(headers=[(b"authorization", b"bearer " + token)])
        assert _flight_sql_count(client, lower, "SFO") == sample.count("SFO", JAN1, AUG1)
        basic = base64.b64encode(f"{secure.user}:{secure.password}".encode())
        assert _flight_sql_count(client, flight.FlightCallOptions(headers=[(b"authorization", b"BASIC " + basic)]),
                                 "DFW") == sample.count("DFW", JAN1, AUG1)


def test_pyarrow_refusals(secure):
    with flight.FlightClient(secure.tls_uri, tls_root_certs=secure.ca.read_bytes()) as client:
        with pytest.raises(flight.FlightUnauthenticatedError) as e:
            client.authenticate_basic_token(secure.user, "not the password")
        assert "invalid credentials" in str(e.value)
        with pytest.raises(flight.FlightUnauthenticatedError) as e:
            _flight_sql_count(client, flight.FlightCallOptions())
        assert "authentication required" in str(e.value)
        header, token = client.authenticate_basic_token(secure.user, secure.password)
        # A modified token: one character of the signature changed.
        sig_char = token[-2:-1]
        bad = token[:-2] + (b"A" if sig_char != b"A" else b"B") + token[-1:]
        with pytest.raises(flight.FlightUnauthenticatedError) as e:
            _flight_sql_count(client, flight.FlightCallOptions(headers=[(header, bad)]))
        assert "invalid credentials" in str(e.value)


def test_pyarrow_mutual_tls(secure, sample):
    with flight.FlightClient(secure.mtls_uri, tls_root_certs=secure.ca.read_bytes(),
                             cert_chain=secure.client_cert.read_bytes(),
                             private_key=secure.client_key.read_bytes()) as client:
        opts = flight.FlightCallOptions(headers=[client.authenticate_basic_token(secure.user, secure.password)])
        assert _flight_sql_count(client, opts, "ATL") == sample.count("ATL", JAN1, AUG1)
    with flight.FlightClient(secure.mtls_uri, tls_root_certs=secure.ca.read_bytes()) as client:
        with pytest.raises(flight.FlightError):
            client.authenticate_basic_token(secure.user, secure.password)


def test_example_script_with_credentials_and_mutual_tls(secure, sample):
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, FLIGHTSRV_PASSWORD=secure.password)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "example.py"),
                          "--addr", secure.mtls_uri.split("://")[1], "--origin", "DFW", "--user", secure.user,
                          "--tls-ca", str(secure.ca), "--tls-cert", str(secure.client_cert), "--tls-key", str(secure.client_key)],
                         check=True, capture_output=True, text=True, timeout=60, env=env).stdout
    assert f"flights leaving DFW in [2001-01-01, 2001-08-01) UTC: {sample.count('DFW', JAN1, AUG1)}\n" in out
