"""Start and stop a real `flightsrv demo` server for the client examples and tests.

The demo loads the committed sample of 300,000 real 2001 US flights into an embedded SQLite
store in a fresh directory, archives January–March 2001 to Parquet and serves the table
`flights` on a free 127.0.0.1 port. The server is stopped by its process id.

Beside the demo (plaintext, without authentication, as `make demo` serves on loopback),
`start_deployment` runs two `flightsrv serve` processes over the demo's data: one over TLS with
authentication (users file and token keyring), one with mutual TLS and authentication. The
certificates (a test CA, server and client) are made by certs.py.

As a program it runs a command with the three servers up and these environment variables set,
like scripts/with-postgres.sh does for PostgreSQL:

    FLIGHTSRV_TEST_ADDR         host:port of the demo (plaintext, no authentication)
    FLIGHTSRV_TEST_TLS_ADDR     host:port of the TLS server with authentication
    FLIGHTSRV_TEST_MTLS_ADDR    host:port of the mutual-TLS server with authentication
    FLIGHTSRV_TEST_CA           PEM file of the CA that signed the server and client certificates
    FLIGHTSRV_TEST_CLIENT_CERT  PEM client certificate and FLIGHTSRV_TEST_CLIENT_KEY its key
    FLIGHTSRV_TEST_USER         a user of the TLS servers and FLIGHTSRV_TEST_PASSWORD its password
    FLIGHTSRV_TEST_SHORT_TOKEN_ADDR  host:port of a TLS server with authentication whose bearer
                                tokens live SHORT_TOKEN_TTL seconds with no clock-skew leeway
                                (--auth-token-ttl, --auth-clock-skew -1s), for the tests of
                                connections kept across token lifetimes
    FLIGHTSRV_TEST_INGEST_ADDR  host:port of a `flightsrv serve` over an empty SQLite store with the
                                routed table INGEST_TABLE (plaintext, no authentication), for the
                                write tests (ingest, INSERT): they write recent rows there and
                                leave the demo's data as the sample is

    python clients/python/flightsrv_server.py --bin bin/flightsrv -- pytest clients/python

Without --bin the binary is built from this checkout with `go build`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import certs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "testdata" / "flights-sample.parquet"

# Loading and archiving the sample takes about 20 s on two cores; allow for a slow machine.
START_TIMEOUT = 240.0

# The demo table as `flightsrv serve` must name it (the banner prints the same definition).
DEMO_TABLE = "name=flights,id=flightsrv.demo.flights,partition=origin,strategy=month,window=12"

# The table of the ingest server: day buckets, writable for the last three days (UTC).
INGEST_TABLE = "name=events,id=flightsrv.clients.events,partition=channel,strategy=day,window=3"

# The token lifetime (seconds) of the short-token server.
SHORT_TOKEN_TTL = 3

# The user of the servers with authentication.
TEST_USER, TEST_PASSWORD = "analyst", "correct horse battery staple"


def free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build(out_dir: Path) -> Path:
    """Builds cmd/flightsrv into out_dir and returns the binary's path."""
    binary = out_dir / "flightsrv"
    go = os.environ.get("GO", "go")
    subprocess.run([go, "build", "-o", str(binary), "./cmd/flightsrv"], cwd=REPO, check=True)
    return binary


class DemoServer:
    """A running `flightsrv demo` process. Use start() to create one and stop() to end it."""

    def __init__(self, proc: subprocess.Popen, addr: str, workdir: Path, log_path: Path, own_workdir: bool):
        self.proc = proc
        self.addr = addr
        self.workdir = workdir
        self.log_path = log_path
        self._own_workdir = own_workdir

    @property
    def uri(self) -> str:
        return "grpc://" + self.addr

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stops the server by its pid (SIGTERM, then SIGKILL after 20 s) and removes the
        demo's data unless the caller owns the directory."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _launch(argv: list[str], addr: str, workdir: Path, log_name: str, own: bool, timeout: float) -> DemoServer:
    """Starts argv (a flightsrv command listening on addr) with its output in workdir/log_name
    and waits until it accepts connections."""
    log_path = workdir / log_name
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    srv = DemoServer(proc, addr, workdir, log_path, own)
    host, port = addr.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            out = srv.log()
            srv.stop()
            raise RuntimeError(f"{' '.join(argv[1:2])} exited with status {proc.returncode}:\n{out}")
        try:
            with socket.create_connection((host, int(port)), timeout=1):
                return srv
        except OSError:
            pass
        if time.monotonic() > deadline:
            out = srv.log()
            srv.stop()
            raise RuntimeError(f"flightsrv did not accept connections on {addr} within {timeout:.0f} s:\n{out}")
        time.sleep(0.2)


def start(binary: Path, workdir: Path | None = None, timeout: float = START_TIMEOUT) -> DemoServer:
    """Starts `binary demo` on a free 127.0.0.1 port with its data under workdir (a new
    temporary directory when None) and waits until it accepts connections. On loopback the
    demo serves without authentication."""
    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="flightsrv-clients-")) if own else Path(workdir)
    addr = f"127.0.0.1:{free_port()}"
    argv = [str(binary), "demo", "--data", str(workdir / "demo"), "--sample", str(SAMPLE), "--listen", addr]
    return _launch(argv, addr, workdir, "server.log", own, timeout)


@dataclass
class Deployment:
    """The demo and the two secured servers over its data (see the module's doc)."""

    demo: DemoServer
    tls: DemoServer
    mtls: DemoServer
    ingest: DemoServer
    short: DemoServer
    files: dict[str, Path] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The FLIGHTSRV_TEST_* variables describing the deployment."""
        return {
            "FLIGHTSRV_TEST_ADDR": self.demo.addr,
            "FLIGHTSRV_TEST_TLS_ADDR": self.tls.addr,
            "FLIGHTSRV_TEST_MTLS_ADDR": self.mtls.addr,
            "FLIGHTSRV_TEST_CA": str(self.files["ca"]),
            "FLIGHTSRV_TEST_CLIENT_CERT": str(self.files["client_cert"]),
            "FLIGHTSRV_TEST_CLIENT_KEY": str(self.files["client_key"]),
            "FLIGHTSRV_TEST_USER": TEST_USER,
            "FLIGHTSRV_TEST_PASSWORD": TEST_PASSWORD,
            "FLIGHTSRV_TEST_INGEST_ADDR": self.ingest.addr,
            "FLIGHTSRV_TEST_SHORT_TOKEN_ADDR": self.short.addr,
            "FLIGHTSRV_TEST_SHORT_TOKEN_TTL": str(SHORT_TOKEN_TTL),
        }

    def servers(self) -> list[DemoServer]:
        return [self.short, self.ingest, self.mtls, self.tls, self.demo]

    def stop(self) -> None:
        """Stops the secured servers, then the demo (which removes the data)."""
        for s in self.servers():
            s.stop()


def start_deployment(binary: Path, timeout: float = START_TIMEOUT) -> Deployment:
    """Starts the demo, then the TLS, mutual-TLS and short-token servers with authentication over its data:
    a users file made with `flightsrv auth hash-password`, a keyring with `flightsrv auth
    new-key`, and test certificates; and the ingest server over a new SQLite store."""
    demo = start(binary, timeout=timeout)
    started: list[DemoServer] = [demo]
    try:
        sec = demo.workdir / "security"
        files = certs.make(sec)
        users, keyring = sec / "users", sec / "keyring.json"
        line = subprocess.run([str(binary), "auth", "hash-password", "--user", TEST_USER], input=TEST_PASSWORD + "\n",
                              capture_output=True, text=True, check=True).stdout
        users.write_text("# flightsrv client tests\n" + line)
        subprocess.run([str(binary), "auth", "new-key", "--keyring", str(keyring), "--id", "test-1"],
                       capture_output=True, check=True)
        files.update(users=users, keyring=keyring)
        data = demo.workdir / "demo"
        base = [str(binary), "serve", "--store", "sqlite://" + str(data / "hot.db"), "--archive", str(data / "archive"),
                "--table", DEMO_TABLE, "--auth-users", str(users), "--auth-keyring", str(keyring),
                "--tls-cert", str(files["server_cert"]), "--tls-key", str(files["server_key"])]
        servers = []
        for name, extra in (("tls", []), ("mtls", ["--tls-client-ca", str(files["ca"])]),
                            ("short", ["--auth-token-ttl", f"{SHORT_TOKEN_TTL}s", "--auth-clock-skew", "-1s"])):
            addr = f"127.0.0.1:{free_port()}"
            srv = _launch(base + ["--listen", addr] + extra, addr, demo.workdir, f"{name}.log", False, timeout)
            started.append(srv)
            servers.append(srv)
        store = "sqlite://" + str(demo.workdir / "ingest" / "hot.db")
        (demo.workdir / "ingest").mkdir()
        subprocess.run([str(binary), "migrate", "--store", store], capture_output=True, check=True)
        addr = f"127.0.0.1:{free_port()}"
        ingest = _launch([str(binary), "serve", "--store", store, "--no-auth", "--table", INGEST_TABLE, "--listen", addr],
                         addr, demo.workdir, "ingest.log", False, timeout)
        started.append(ingest)
        return Deployment(demo, servers[0], servers[1], ingest, servers[2], files)
    except BaseException:
        for s in reversed(started):
            s.stop()
        raise


def main() -> int:
    ap = argparse.ArgumentParser(description="Run a command with a flightsrv demo and two secured servers up (FLIGHTSRV_TEST_*).")
    ap.add_argument("--bin", help="flightsrv binary (default: go build into a temporary directory)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- command and arguments")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given")
    # A plain `kill` of this process must still stop the server (in the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    with tempfile.TemporaryDirectory(prefix="flightsrv-bin-") as tmp:
        binary = Path(args.bin).resolve() if args.bin else build(Path(tmp))
        t0 = time.monotonic()
        dep = start_deployment(binary)
        try:
            print(f"flightsrv_server: demo on {dep.demo.addr} (pid {dep.demo.proc.pid}), TLS on {dep.tls.addr} "
                  f"(pid {dep.tls.proc.pid}), mutual TLS on {dep.mtls.addr} (pid {dep.mtls.proc.pid}), "
                  f"ingest on {dep.ingest.addr} (pid {dep.ingest.proc.pid}), "
                  f"short tokens on {dep.short.addr} (pid {dep.short.proc.pid}), "
                  f"ready in {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
            env = dict(os.environ, **dep.env())
            rc = subprocess.call(cmd, env=env)
            for srv in dep.servers():
                if srv.proc.poll() is not None:
                    print(f"flightsrv_server: a server exited during the run (status {srv.proc.returncode}):\n{srv.log()}",
                          file=sys.stderr)
                    rc = rc or 1
            return rc
        finally:
            dep.stop()


if __name__ == "__main__":
    sys.exit(main())
