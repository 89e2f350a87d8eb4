"""Golden answers of the SQL corpus (testdata/sql/corpus.sql), computed by DuckDB.

Regenerate (from the repository root; needs DuckDB in .venv, which `make test-clients` or
`make bench-venv` creates):

    .venv/bin/python testdata/sql/gen.py

DuckDB reads testdata/flights-sample.parquet and builds the table the e2e tests serve: the
partitions ORD, SFO and BOS, `timestamp` the zone-less `date` read as UTC (TIMESTAMPTZ in a UTC
session), `id`, and `value` the JSON object {"delay", "distance", "destination"} of the other
columns (what `flightsrv load` stores), typed JSON so that ->, ->> work as in PostgreSQL. Each
query of the corpus runs as written, or as its "-- duckdb:" spelling where DuckDB's differs
(time_bucket for date_bin, strftime for to_char, // for integer division…).

golden.json holds, per query: the SQL flightsrv runs, the SQL DuckDB ran, whether it runs in
the analytical mode (no partition pin: every partition of the range), the kind of each
result column (int, float, text, bool, timestamp) and the rows, with timestamps as RFC 3339 UTC
strings with microseconds and floats as JSON numbers. The Go test (e2e/golden_test.go) runs
every query through flightsrv with pushdown on and off and compares kinds and values (floats to
a relative 1e-9), in order: every query has a total ORDER BY or returns at most one row. It
compares every answer with PostgreSQL's too (the oracle, over the same rows), and the queries
of postgres.sql with PostgreSQL's alone.
"""

import datetime as dt
import decimal
import json
import os

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PARTITIONS = ("ORD", "SFO", "BOS")


def read_corpus(path):
    """Blocks separated by blank lines; '-- duckdb:' lines give DuckDB's spelling, a line
    '-- mode: analytical' runs the query in a session with the analytical mode on."""
    queries = []
    for block in open(path).read().split("\n\n"):
        sql, duck, analytical = [], None, False
        for line in block.strip().split("\n"):
            if line.startswith("-- duckdb:"):
                duck = line[len("-- duckdb:"):].strip()
            elif line.strip() == "-- mode: analytical":
                analytical = True
            elif line.startswith("--") or not line.strip():
                continue
            else:
                sql.append(line.strip())
        if sql:
            q = " ".join(sql)
            queries.append({"sql": q, "duckdb": duck or q, "analytical": analytical})
    return queries


def kind(type_code):
    t = str(type_code).upper()
    if t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"):
        return "int"
    if t in ("FLOAT", "DOUBLE") or t.startswith("DECIMAL"):
        return "float"
    if t in ("VARCHAR", "JSON"):
        return "text"
    if t == "BOOLEAN":
        return "bool"
    if t.startswith("TIMESTAMP"):
        return "timestamp"
    raise ValueError("unexpected DuckDB type " + t)


def value(v, k):
    if v is None:
        return None
    if k == "timestamp":
        return v.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if k == "float":
        return float(v)
    if k == "int":
        return int(v)
    return v


def main():
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    sample = os.path.join(ROOT, "testdata", "flights-sample.parquet")
    con.execute(
        """CREATE TABLE flights AS SELECT origin, date::TIMESTAMPTZ AS "timestamp", id,
        json_object('delay', delay, 'distance', distance, 'destination', destination) AS value
        FROM read_parquet(?) WHERE origin IN ?""",
        [sample, list(PARTITIONS)],
    )
    out = []
    for q in read_corpus(os.path.join(HERE, "corpus.sql")):
        cur = con.execute(q["duckdb"])
        kinds = [kind(d[1]) for d in cur.description]
        rows = [[value(v, k) for v, k in zip(r, kinds)] for r in cur.fetchall()]
        o = {"sql": q["sql"], "duckdb": q["duckdb"], "kinds": kinds, "rows": rows}
        if q["analytical"]:
            o["analytical"] = True
        out.append(o)
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{len(out)} queries, {sum(len(o['rows']) for o in out)} rows")


if __name__ == "__main__":
    main()
