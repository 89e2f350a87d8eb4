"""Start and stop a real `flightsrv demo` server for the client examples and tests.

The demo loads the committed sample of 300,000 real 2001 US flights into an embedded SQLite
store in a fresh directory, archives January–March 2001 to Parquet and serves the table
`flights` on a free 127.0.0.1 port. The server is stopped by its process id.

As a program it runs a command with one such server up and FLIGHTSRV_TEST_ADDR (host:port)
pointing at it, like scripts/with-postgres.sh does for PostgreSQL:

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
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "testdata" / "flights-sample.parquet"

# Loading and archiving the sample takes about 20 s on two cores; allow for a slow machine.
START_TIMEOUT = 240.0


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


def start(binary: Path, workdir: Path | None = None, timeout: float = START_TIMEOUT) -> DemoServer:
    """Starts `binary demo` on a free 127.0.0.1 port with its data under workdir (a new
    temporary directory when None) and waits until it accepts connections."""
    own = workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="flightsrv-clients-")) if own else Path(workdir)
    port = free_port()
    addr = f"127.0.0.1:{port}"
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(binary), "demo", "--data", str(workdir / "demo"), "--sample", str(SAMPLE), "--listen", addr],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    srv = DemoServer(proc, addr, workdir, log_path, own)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            out = srv.log()
            srv.stop()
            raise RuntimeError(f"flightsrv demo exited with status {proc.returncode}:\n{out}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return srv
        except OSError:
            pass
        if time.monotonic() > deadline:
            out = srv.log()
            srv.stop()
            raise RuntimeError(f"flightsrv demo did not accept connections on {addr} within {timeout:.0f} s:\n{out}")
        time.sleep(0.2)


def main() -> int:
    ap = argparse.ArgumentParser(description="Run a command with a flightsrv demo server up (FLIGHTSRV_TEST_ADDR=host:port).")
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
        srv = start(binary)
        try:
            print(f"flightsrv_server: demo on {srv.addr} (pid {srv.proc.pid}), ready in {time.monotonic() - t0:.1f} s",
                  file=sys.stderr, flush=True)
            env = dict(os.environ, FLIGHTSRV_TEST_ADDR=srv.addr)
            rc = subprocess.call(cmd, env=env)
            if srv.proc.poll() is not None:
                print(f"flightsrv_server: the server exited during the run (status {srv.proc.returncode}):\n{srv.log()}",
                      file=sys.stderr)
                rc = rc or 1
            return rc
        finally:
            srv.stop()


if __name__ == "__main__":
    sys.exit(main())
