"""ADBC side of flightsrv's endpoint benchmark (bench/adbc_bench_test.go).

Reads one JSON request per line on stdin, {"uri": "grpc://host:port", "sql": "..."}, runs the
query with ADBC's Flight SQL driver (adbc_driver_flightsql.dbapi, the Go driver underneath,
which fetches a result's endpoints concurrently, each from the first of its locations that
answers) on one connection per URI kept across requests, reads the whole result as Arrow
record batches and answers one JSON line on stdout:
{"rows": <rows>, "batches": <batches>, "first_ns": <time to the first batch>, "ns": <time to
the last>} or {"error": "..."}. Times are measured here with time.perf_counter_ns from just
before cursor.execute (GetFlightInfo) to the first batch handed out and to the end of the
stream, so process start-up and the pipe are not in them.
"""
import json
import sys
import time

import adbc_driver_flightsql
import adbc_driver_flightsql.dbapi as flightsql


def main():
    conns = {}
    print(json.dumps({"ready": True, "adbc": getattr(adbc_driver_flightsql, "__version__", "")}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        try:
            conn = conns.get(req["uri"])
            if conn is None:
                conn = conns[req["uri"]] = flightsql.connect(req["uri"], autocommit=True)
            start = time.perf_counter_ns()
            cur = conn.cursor()
            cur.execute(req["sql"])
            reader = cur.fetch_record_batch()
            first, rows, batches = None, 0, 0
            for batch in reader:
                if first is None:
                    first = time.perf_counter_ns() - start
                rows += batch.num_rows
                batches += 1
            total = time.perf_counter_ns() - start
            cur.close()
            out = {"rows": rows, "batches": batches, "first_ns": first if first is not None else total, "ns": total}
        except Exception as e:  # reported to the benchmark, which fails
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)
    for conn in conns.values():
        conn.close()


if __name__ == "__main__":
    main()
