"""Sessions: the current catalog and schema through ADBC (GetSessionOptions), session options
set and refused, and opt-in IPC compression of query results chosen per session — through
pyarrow.flight with a cookie middleware (the session travels in a cookie), checked against
DuckDB.

ADBC's own session options are checked only where they do not depend on the session cookie:
ADBC 1.13 picks up a DoAction's Set-Cookie header only when the finished stream is collected,
so the next call may go out without it.
"""

from __future__ import annotations

from datetime import datetime, timezone
from http.cookies import SimpleCookie

import adbc_driver_flightsql.dbapi
import adbc_driver_manager
import pyarrow.flight as flight
import pytest
from adbc_driver_flightsql import ConnectionOptions

from test_flight import _field, _parse, _statement

UTC = timezone.utc
JAN1, AUG1 = datetime(2001, 1, 1, tzinfo=UTC), datetime(2001, 8, 1, tzinfo=UTC)
OPTION = ConnectionOptions.OPTION_SESSION_OPTION_PREFIX.value


# --- ADBC -----------------------------------------------------------------------------------

def test_adbc_current_catalog_and_schema(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn:
        assert conn.adbc_current_catalog == ""
        assert conn.adbc_current_db_schema == "public"
        options = conn.adbc_connection.get_option(ConnectionOptions.OPTION_SESSION_OPTIONS.value)
        assert options.replace(" ", "") == '{"analytical":"off","catalog":"","endpoints":"single","ipc_compression":"none","schema":"public"}'


@pytest.mark.parametrize("name,value", [("schema", "no_such_schema"), ("catalog", "other"),
                                        ("no_such_option", "x"), ("ipc_compression", "snappy")])
def test_adbc_refused_session_options(uri, name, value):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn:
        with pytest.raises(adbc_driver_manager.Error) as e:
            conn.adbc_connection.set_options(**{OPTION + name: value})
        assert ("invalid name" if name == "no_such_option" else "invalid value") in str(e.value)


def test_adbc_accepted_session_options(uri):
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn:
        conn.adbc_connection.set_options(**{OPTION + "schema": "PUBLIC", OPTION + "catalog": "",
                                            OPTION + "ipc_compression": "zstd"})


# --- pyarrow.flight with a cookie middleware ------------------------------------------------

class CookieJar(flight.ClientMiddlewareFactory):
    """Keeps the cookies the server sets and sends them back (what JDBC's and arrow-go's cookie
    middlewares do)."""

    def __init__(self):
        self.cookies: dict[str, str] = {}

    def start_call(self, info):
        return _CookieMiddleware(self)


class _CookieMiddleware(flight.ClientMiddleware):
    def __init__(self, jar):
        self.jar = jar

    def sending_headers(self):
        if not self.jar.cookies:
            return {}
        return {"cookie": "; ".join(f"{k}={v}" for k, v in self.jar.cookies.items())}

    def received_headers(self, headers):
        for h in headers.get("set-cookie", []):
            for name, morsel in SimpleCookie(h).items():
                if morsel["max-age"] not in ("", None) and int(morsel["max-age"]) <= 0:
                    self.jar.cookies.pop(name, None)
                else:
                    self.jar.cookies[name] = morsel.value


def _string_option(name: str, value: str) -> bytes:
    """One map entry of SetSessionOptionsRequest.session_options (field 1): key, and a
    SessionOptionValue whose string_value (field 1) is value."""
    return _field(1, _field(1, name) + _field(2, _field(1, value)))


def _options(client) -> dict[str, str]:
    body = list(client.do_action(flight.Action("GetSessionOptions", b"")))[0].body.to_pybytes()
    out = {}
    for entry in _parse(body).get(1, []):
        e = _parse(entry)
        out[e[1][0].decode()] = _parse(e[2][0]).get(1, [b""])[0].decode()
    return out


def _set(client, **options) -> dict[str, int]:
    """SetSessionOptions; returns the errors by option (SetSessionOptionsResult.ErrorValue)."""
    req = b"".join(_string_option(k, v) for k, v in options.items())
    body = list(client.do_action(flight.Action("SetSessionOptions", req)))[0].body.to_pybytes()
    errors = {}
    for entry in _parse(body).get(1, []):
        e = _parse(entry)
        errors[e[1][0].decode()] = _parse(e[2][0]).get(1, [0])[0]
    return errors


@pytest.fixture
def session_client(uri):
    jar = CookieJar()
    with flight.FlightClient(uri, middleware=[jar]) as c:
        yield c, jar


def test_session_options_travel_in_the_cookie(session_client, uri):
    client, jar = session_client
    assert _options(client) == {"catalog": "", "schema": "public", "ipc_compression": "none", "endpoints": "single", "analytical": "off"}
    assert _set(client, schema="PUBLIC", ipc_compression="LZ4", catalog="x", bogus="y") == {"catalog": 2, "bogus": 1}
    assert "flightsrv_session" in jar.cookies
    assert _options(client) == {"catalog": "", "schema": "public", "ipc_compression": "lz4", "endpoints": "single", "analytical": "off"}
    # Without the cookie (another client) the defaults apply: nothing is kept on the server.
    with flight.FlightClient(uri) as other:
        assert _options(other)["ipc_compression"] == "none"
    # CloseSession drops the cookie.
    list(client.do_action(flight.Action("CloseSession", b"")))
    assert "flightsrv_session" not in jar.cookies
    assert _options(client)["ipc_compression"] == "none"


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_ipc_compression_per_session(uri, sample, codec):
    jar = CookieJar()
    with flight.FlightClient(uri, middleware=[jar]) as client:
        sql = ("SELECT timestamp, id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01T00:00:00Z'"
               " AND timestamp < '2001-08-01T00:00:00Z' ORDER BY timestamp, id")
        plain = client.get_flight_info(_statement(sql))
        assert b'"compression"' not in plain.endpoints[0].ticket.ticket  # off by default
        assert _set(client, ipc_compression=codec) == {}
        info = client.get_flight_info(_statement(sql))
        # The session's choice is sealed into the ticket, so DoGet needs no session.
        assert f'"compression":"{codec}"'.encode() in info.endpoints[0].ticket.ticket
        with flight.FlightClient(uri) as other:  # no cookie: the ticket alone decides
            table = other.do_get(info.endpoints[0].ticket).read_all()
        want = sample.rows("SFO", JAN1, AUG1, 100000)
        assert table.num_rows == len(want) == sample.count("SFO", JAN1, AUG1)
        assert table.column("id").to_pylist() == [r[2] for r in want]
        assert table.column("timestamp").to_pylist() == [r[1] for r in want]


def test_adbc_get_info_every_code(uri):
    """ADBC GetInfo for every standard info code (vendor 0–6 map to GetSqlInfo ids, driver
    100–103) and codes it does not know answers without failing."""
    import pyarrow as pa
    codes = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 100, 101, 102, 103]
    with adbc_driver_flightsql.dbapi.connect(uri, autocommit=True) as conn:
        rows = pa.RecordBatchReader.from_stream(conn.adbc_connection.get_info(codes)).read_all().to_pylist()
    info = {r["info_name"]: r["info_value"] for r in rows}
    assert sorted(info) == codes
    assert info[0] == "flightsrv"                        # vendor name
    assert info[2].startswith("18.")                     # vendor Arrow version
    assert info[3] is True and info[4] is True           # SQL, Substrait
    assert info[5] == "0.50.0" and info[6] == "0.99.0"   # Substrait versions
    assert info[100] == "ADBC Flight SQL Driver - Go"
