"""Python example client of flightsrv, through ADBC's Flight SQL driver (DB-API 2.0).

Counts the flights leaving one airport in a time range and prints its first ten flights, with
`?` parameters bound from Python datetimes. Start the server with `make demo`, then:

    .venv/bin/python clients/python/example.py --addr 127.0.0.1:32010 --origin ORD

Against a server with authentication and TLS (`flightsrv serve --auth-users … --tls-cert …`),
give the user (the password comes from FLIGHTSRV_PASSWORD, never from the command line) and the
CA that signed the server's certificate (and, for mutual TLS, a client certificate and key):

    FLIGHTSRV_PASSWORD=… .venv/bin/python clients/python/example.py --addr HOST:PORT \
        --user analyst --tls-ca ca.pem [--tls-cert client.pem --tls-key client-key.pem]

Every query over a routed table pins one partition (here the origin airport) and a half-open
time range [start, end); the server refuses anything else with INVALID_ARGUMENT.
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import datetime, timezone

import adbc_driver_flightsql.dbapi
from adbc_driver_flightsql import DatabaseOptions

COUNT_SQL = "SELECT COUNT(*) FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?"
FIRST_SQL = ("SELECT timestamp, id, value FROM flights WHERE origin = ? AND timestamp >= ? AND timestamp < ?"
             " ORDER BY timestamp, id LIMIT ?")


def count_flights(cur, origin: str, start: datetime, end: datetime) -> int:
    """COUNT(*) of origin's flights in [start, end). Aware datetimes are instants; the server
    reads naive ones as UTC."""
    cur.execute(COUNT_SQL, (origin, start, end))
    return cur.fetchone()[0]


def first_flights(cur, origin: str, start: datetime, end: datetime, n: int = 10):
    """origin's first n flights in [start, end) in (timestamp, id) order, as
    (timestamp, id, {"delay", "distance", "destination"}) tuples."""
    cur.execute(FIRST_SQL, (origin, start, end, n))
    return [(ts, fid, json.loads(value)) for ts, fid, value in cur.fetchall()]


def connect(args):
    """An ADBC connection to args.addr: plaintext, or TLS verified with --tls-ca (and a client
    certificate for mutual TLS); with --user, authenticated with FLIGHTSRV_PASSWORD."""
    kw = {}
    scheme = "grpc"
    if args.tls_ca:
        scheme = "grpc+tls"
        with open(args.tls_ca) as f:
            kw[DatabaseOptions.TLS_ROOT_CERTS.value] = f.read()
        if args.tls_cert:
            with open(args.tls_cert) as f:
                kw[DatabaseOptions.MTLS_CERT_CHAIN.value] = f.read()
            with open(args.tls_key) as f:
                kw[DatabaseOptions.MTLS_PRIVATE_KEY.value] = f.read()
    if args.user:
        kw.update(username=args.user, password=os.environ.get("FLIGHTSRV_PASSWORD", ""))
    return adbc_driver_flightsql.dbapi.connect(f"{scheme}://{args.addr}", db_kwargs=kw, autocommit=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--addr", default=os.environ.get("FLIGHTSRV_LISTEN", "127.0.0.1:32010"), help="server host:port")
    ap.add_argument("--origin", default="ORD", help="origin airport (the partition value)")
    ap.add_argument("-n", type=int, default=10, help="how many flights to print")
    ap.add_argument("--user", help="user name (password from FLIGHTSRV_PASSWORD): Basic handshake, then a bearer token")
    ap.add_argument("--tls-ca", help="PEM CA certificates: connect over TLS (grpc+tls://) and verify the server with them")
    ap.add_argument("--tls-cert", help="PEM client certificate, for mutual TLS (with --tls-key)")
    ap.add_argument("--tls-key", help="PEM private key of --tls-cert")
    args = ap.parse_args()

    start = datetime(2001, 1, 1, tzinfo=timezone.utc)
    end = datetime(2001, 8, 1, tzinfo=timezone.utc)
    # autocommit=True: flightsrv has no transactions (each write request is all or nothing on
    # its own), so there is nothing to commit (without it the DB-API layer warns that it
    # cannot disable autocommit).
    with connect(args) as conn:
        with conn.cursor() as cur:
            n = count_flights(cur, args.origin, start, end)
            print(f"flights leaving {args.origin} in [{start:%Y-%m-%d}, {end:%Y-%m-%d}) UTC: {n}")
            # The same count with naive datetimes, which the server reads as UTC.
            naive = count_flights(cur, args.origin, start.replace(tzinfo=None), end.replace(tzinfo=None))
            print(f"  (with naive datetimes, read as UTC: {naive})")
            rows = first_flights(cur, args.origin, start, end, args.n)
            print(f"first {len(rows)} flights:")
            for ts, fid, v in rows:
                print(f"  {ts.astimezone(timezone.utc):%Y-%m-%d %H:%M}Z  {fid}  to {v['destination']:<4}"
                      f"  {v['distance']:>5} mi  delay {v['delay']:>4} min")


if __name__ == "__main__":
    main()
