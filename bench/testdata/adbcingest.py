"""ADBC side of flightsrv's ingest benchmark (bench/ingest_bench_test.go).

Reads one JSON request per line on stdin, {"uri": "grpc://host:port", "table": "flights",
"ipc": "/path/rows.arrow"}, reads the Arrow IPC file's rows (untimed, kept in memory for the
next request naming the same file), then writes them with ADBC's Flight SQL driver
(adbc_driver_flightsql.dbapi, the Go driver underneath): one `adbc_ingest` in mode "append" on
a new autocommit connection (Flight SQL bulk ingest, CommandStatementIngest), and answers one
JSON line on stdout: {"rows": <rows the server reported stored>, "ns": <nanoseconds>} or
{"error": "..."}. The time is measured here with time.perf_counter_ns around adbc_ingest alone,
so reading the file, connecting and the pipe are not in it. The file's record batches are sent
as they are (ADBC's client refuses a message over 16 MiB: the benchmark writes 65,536-row
batches).
"""
import json
import sys
import time

import adbc_driver_flightsql
import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa


def main():
    tables = {}
    print(json.dumps({"ready": True, "adbc": getattr(adbc_driver_flightsql, "__version__", "")}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            data = tables.get(req["ipc"])
            if data is None:
                with pa.memory_map(req["ipc"]) as f:
                    data = tables[req["ipc"]] = pa.ipc.open_file(f).read_all()
            with flightsql.connect(req["uri"], autocommit=True) as conn:
                with conn.cursor() as cur:
                    start = time.perf_counter_ns()
                    rows = cur.adbc_ingest(req["table"], data.to_reader(), mode="append")
                    ns = time.perf_counter_ns() - start
            out = {"rows": rows, "ns": ns}
        except Exception as e:  # reported to the benchmark, which fails
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
