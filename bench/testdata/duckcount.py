"""DuckDB side of flightsrv's benchmarks (bench/count_bench_test.go, bench/scan_bench_test.go).

Reads one JSON request per line on stdin, {"sql": "...", "params": [...]}, runs it on one
in-memory DuckDB connection and answers one JSON line on stdout:
{"count": <first column of the first row>, "ns": <execution time>, "rchar": <bytes read>}
or {"error": "..."}. With "fetch": "arrow" in the request (and no params) the whole result is
fetched as a pyarrow Table instead (con.sql(sql).to_arrow_table(), DuckDB's own Arrow
export) and count is its number of rows (the scan benchmark). The time is measured here,
around execute+fetch only, with time.perf_counter_ns, so process start-up and the pipe are
not in it. rchar is the growth of this process's /proc/self/io rchar counter (bytes returned
by read-like system calls, all threads) during the query, minus the cost of reading the
counter itself, or -1 where /proc is missing.
"""
import json
import sys
import time

import duckdb


def rchar():
    try:
        with open("/proc/self/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def fetch_arrow(con, sql):
    """Runs sql as a relation and returns the whole result as a pyarrow Table, DuckDB's own
    Arrow export (a DB-API cursor's Arrow fetch makes an extra copy of the rows):
    to_arrow_table in DuckDB 1.4 and later, arrow() before."""
    rel = con.sql(sql)
    fetch = getattr(rel, "to_arrow_table", None) or rel.arrow
    return fetch()


def main():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    # What reading the counter costs by itself, subtracted from every measurement.
    a = rchar()
    b = rchar()
    overhead = b - a if a >= 0 else 0
    print(json.dumps({"ready": True, "duckdb": duckdb.__version__,
                      "threads": con.execute("SELECT current_setting('threads')").fetchall()[0][0]}), flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            r0 = rchar()
            t0 = time.perf_counter_ns()
            if req.get("fetch") == "arrow":
                table = fetch_arrow(con, req["sql"])
                t1 = time.perf_counter_ns()
                count = table.num_rows
                del table  # freed here, outside the timed section, not by the next request
            else:
                # fetchall: a result left unfinished would block the next con.sql.
                row = con.execute(req["sql"], req.get("params") or []).fetchall()[0]
                t1 = time.perf_counter_ns()
                count = int(row[0])
            r1 = rchar()
            out = {"count": count, "ns": t1 - t0, "rchar": (r1 - r0 - overhead) if r0 >= 0 else -1}
        except Exception as e:  # reported to the benchmark, which fails
            out = {"error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
