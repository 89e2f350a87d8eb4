"""Golden answers of package ops's operator tests, computed by DuckDB (the test oracle).

Regenerate (from the repository root; needs DuckDB and pyarrow in .venv, see below):

    .venv/bin/python scan/ops/testdata/gen.py

    # once, when .venv lacks them:
    python3 -m venv .venv && .venv/bin/pip install duckdb pyarrow

It writes scan/ops/testdata/rows.json (the input rows, which the Go tests load into Arrow
batches) and scan/ops/testdata/golden.json (each case: its expression or sort keys in the
small JSON language below, the SQL DuckDB ran, and DuckDB's answer). The Go tests
(ops_golden_test.go) build the same operators from the same JSON and compare; they do not
need Python.

Expression language (shared with the Go side, which builds Substrait from it):
    {"col": NAME}                                  a column
    {"lit": V, "type": "i64|fp64|string|bool|ts"}  a literal (V null: a typed NULL; ts: ns)
    {"fn": F, "args": [E, ...]}                    F in equal not_equal lt lte gt gte and or
                                                   not is_null is_not_null add subtract multiply
    {"in": E, "list": [LIT, ...]}                  SQL IN (Substrait SingularOrList)
    {"cast": E, "type": "fp64|string"}             CAST
    {"trunc": UNIT, "arg": E}                      date_trunc(UNIT, E) (round_calendar)
    {"bin": STRIDE_NS, "origin": NS, "arg": E}     date_bin (round_temporal); DuckDB calls it
                                                   time_bucket(stride, E, origin)

DuckDB's timestamps are microseconds and ours nanoseconds: DuckDB gets each instant floored to
the microsecond (ts_us, floored here in Python); every bin width and origin below is a whole
number of microseconds, so flooring to the bin commutes with that flooring, and bins come back
as epoch_us(...) * 1000 nanoseconds. Comparisons and
sorts on timestamps use the exact nanosecond integers (ts_ns), which order as the instants do.
DuckDB's sort is not stable, so every ORDER BY ends with the input row number rn: the answer of
a stable sort.
"""

import datetime as dt
import json
import math
import os

import duckdb
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def ns(y, mo, d, h=0, mi=0, s=0, frac_ns=0):
    t = dt.datetime(y, mo, d, h, mi, s, tzinfo=dt.timezone.utc)
    delta = t - EPOCH
    return (delta.days * 86400 + delta.seconds) * 10**9 + frac_ns


# The input rows: rn is the input order. Ties on every column, NULLs in every nullable column,
# NaN, -0.0, infinities, pre-1970 and leap-day instants, instants with nanosecond fractions,
# the ends of the nanosecond range.
TS = [
    ns(2024, 2, 29, 12, 34, 56, 789012345),   # leap day, nanoseconds
    ns(2024, 2, 29),                          # leap day midnight
    ns(2000, 2, 29, 23, 59, 59, 999999999),   # leap day of a 400-year
    ns(1900, 3, 1),                           # 1900 is not a leap year
    ns(1960, 2, 29, 6, 30),                   # pre-1970 leap day
    -1,                                       # 1969-12-31T23:59:59.999999999
    -1000,                                    # 1969-12-31T23:59:59.999999
    0,                                        # the epoch
    1,                                        # the epoch + 1 ns
    ns(1678, 6, 15, 10, 0),                   # near the start of the ns range
    ns(2262, 4, 11, 23, 47, 16),              # near its end
    ns(1999, 12, 31, 23, 59, 59, 500000000),
    ns(2000, 1, 1),                           # a Saturday
    ns(2023, 12, 31, 23, 59, 59),             # a Sunday
    ns(2024, 1, 1),                           # a Monday
    ns(2100, 2, 28, 23, 0),                   # 2100 is not a leap year
    ns(2100, 3, 1),
    ns(1969, 7, 20, 20, 17, 40),
    ns(1904, 2, 29, 12),
    ns(2001, 9, 9, 1, 46, 40),
    ns(1965, 11, 30, 23, 59, 59, 999999000),
    ns(2024, 3, 31, 0, 0, 0, 1000),
    ns(1970, 1, 4),                           # a Sunday
    ns(1970, 1, 5),                           # a Monday
]

IDS = ["b", "a", None, "a", "c", "", "b", "ab", "a\u00e9", "B", None, "z", "a", "b"]
GRPS = [1, 2, None, 3, 2, 1, None, 3, 2, 2, 1, 0, -5]
XS = ["1.5", "-0.0", "0.0", "NaN", None, "-Infinity", "Infinity", "10", "1.5", "NaN", "-2.25", "3", None, "1e300"]
FLAGS = [True, False, None, True, True, False, None, False]
VALS = ["", "00", "0001", "01", None, "ff", "0100", "00", "7f80", None, "01", "fe"]


def build_rows():
    rows = []
    n = 48
    for i in range(n):
        ts = TS[i % len(TS)] if i % 11 != 10 else None
        if i >= len(TS) and ts is not None and i % 3 == 0:
            ts = TS[(i * 7) % len(TS)]  # ties on ts
        rows.append({
            "rn": i,
            "ts": ts,
            "id": IDS[(i * 5) % len(IDS)],
            "grp": GRPS[(i * 3) % len(GRPS)],
            "x": XS[(i * 3) % len(XS)],
            "flag": FLAGS[(i * 5) % len(FLAGS)],
            "val": VALS[(i * 7) % len(VALS)],
        })
    return rows


def lit(v, t):
    return {"lit": v, "type": t}


def col(c):
    return {"col": c}


def fn(f, *args):
    return {"fn": f, "args": list(args)}


T0 = ns(2000, 1, 1)
T1 = ns(2024, 1, 1)

FILTERS = {
    "grp_eq_2": fn("equal", col("grp"), lit(2, "i64")),
    "grp_ne_2": fn("not_equal", col("grp"), lit(2, "i64")),
    "grp_gte_2_and_x_lt_10": fn("and", fn("gte", col("grp"), lit(2, "i64")), fn("lt", col("x"), lit(10.0, "fp64"))),
    "grp_lt_2_or_flag": fn("or", fn("lt", col("grp"), lit(2, "i64")), col("flag")),
    "not_flag": fn("not", col("flag")),
    "not_grp1_or_idb": fn("not", fn("or", fn("equal", col("grp"), lit(1, "i64")), fn("equal", col("id"), lit("b", "string")))),
    "grp_is_null": fn("is_null", col("grp")),
    "id_not_null_and_ts_gte": fn("and", fn("is_not_null", col("id")), fn("gte", col("ts"), lit(T0, "ts"))),
    "grp_in_1_3": {"in": col("grp"), "list": [lit(1, "i64"), lit(3, "i64")]},
    "grp_in_1_null": {"in": col("grp"), "list": [lit(1, "i64"), lit(None, "i64")]},
    "not_grp_in_1_null": fn("not", {"in": col("grp"), "list": [lit(1, "i64"), lit(None, "i64")]}),
    "not_grp_in_1_3": fn("not", {"in": col("grp"), "list": [lit(1, "i64"), lit(3, "i64")]}),
    "id_in_a_c": {"in": col("id"), "list": [lit("a", "string"), lit("c", "string"), lit("", "string")]},
    "and3": fn("and", fn("gte", col("grp"), lit(1, "i64")), fn("lte", col("grp"), lit(3, "i64")), col("flag")),
    "or3": fn("or", fn("is_null", col("id")), fn("equal", col("grp"), lit(0, "i64")), fn("lt", col("ts"), lit(0, "ts"))),
    "x_lt_10": fn("lt", col("x"), lit(10.0, "fp64")),
    "x_ne_1_5": fn("not_equal", col("x"), lit(1.5, "fp64")),
    # The front end's scan filter: and(and(equal(partition, 'p'), gte(ts, start)), lt(ts, end)).
    "plan_shape": fn("and", fn("and", fn("equal", col("id"), lit("a", "string")), fn("gte", col("ts"), lit(T0, "ts"))), fn("lt", col("ts"), lit(T1, "ts"))),
    "ts_range_pre1970": fn("and", fn("gte", col("ts"), lit(ns(1900, 1, 1), "ts")), fn("lt", col("ts"), lit(0, "ts"))),
    "flag_eq_true": fn("equal", col("flag"), lit(True, "bool")),
    "grp_plus_1_gt_2": fn("gt", fn("add", col("grp"), lit(1, "i64")), lit(2, "i64")),
    "id_gte_b": fn("gte", col("id"), lit("b", "string")),
    "null_literal": fn("equal", col("grp"), lit(None, "i64")),
    "always_true": lit(True, "bool"),
    "flag_column": col("flag"),
}

UNITS = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"]

PROJECTS = {f"trunc_{u}": {"trunc": u, "arg": col("ts")} for u in UNITS}
BINS = [
    ("bin_15m", 15 * 60 * 10**9, ns(2000, 1, 1), "15 minutes"),
    ("bin_90m_odd_origin", 90 * 60 * 10**9, ns(2001, 1, 1, 0, 7), "90 minutes"),
    ("bin_1d_noon", 86400 * 10**9, ns(1999, 12, 31, 12), "1 day"),
    ("bin_7d_monday", 7 * 86400 * 10**9, ns(2024, 1, 1), "7 days"),
    ("bin_1500ms", 1500 * 10**6, 250 * 10**6, "1500 milliseconds"),
    ("bin_37us", 37 * 1000, ns(2020, 5, 5, 5, 5, 5, 5000), "37 microseconds"),
    ("bin_1h_pre1970_origin", 3600 * 10**9, ns(1901, 1, 1, 0, 30), "1 hour"),
]
for name, stride, origin, _ in BINS:
    PROJECTS[name] = {"bin": stride, "origin": origin, "arg": col("ts")}
PROJECTS["grp_plus_1"] = fn("add", col("grp"), lit(1, "i64"))
PROJECTS["grp_times_grp"] = fn("multiply", col("grp"), col("grp"))
PROJECTS["cast_grp_fp64"] = {"cast": col("grp"), "type": "fp64"}
PROJECTS["cast_grp_string"] = {"cast": col("grp"), "type": "string"}
PROJECTS["trunc_day_eq_literal"] = fn("equal", {"trunc": "day", "arg": col("ts")}, lit(ns(2024, 2, 29), "ts"))

SORTS = {
    "ts_asc_nulls_last": [("ts", False, False)],
    "ts_desc_nulls_first": [("ts", True, True)],
    "grp_asc_nf_ts_desc_nl": [("grp", False, True), ("ts", True, False)],
    "grp_desc_nl_id_asc_nf": [("grp", True, False), ("id", False, True)],
    "x_asc_nulls_last": [("x", False, False)],
    "x_desc_nulls_first": [("x", True, True)],
    "x_asc_nulls_first": [("x", False, True)],
    "id_asc_nl_val_desc_nf": [("id", False, False), ("val", True, True)],
    "flag_desc_nl_grp_asc_nl": [("flag", True, False), ("grp", False, False)],
    "val_asc_nulls_first": [("val", False, True)],
    "grp_asc_ties": [("grp", False, False)],
    "flag_x_id_ts": [("flag", False, True), ("x", True, False), ("id", True, True), ("ts", False, False)],
}
FETCHES = [(0, 0), (0, 1), (0, 5), (3, 7), (10, 100), (47, 5), (0, 48), (50, 3)]


def sql_expr(e):
    if "col" in e:
        return {"ts": "ts_ns"}.get(e["col"], e["col"])
    if "lit" in e:
        v, t = e["lit"], e["type"]
        sqlt = {"i64": "BIGINT", "fp64": "DOUBLE", "string": "VARCHAR", "bool": "BOOLEAN", "ts": "BIGINT"}[t]
        if v is None:
            return f"CAST(NULL AS {sqlt})"
        if t == "string":
            return "'" + v.replace("'", "''") + "'"
        if t == "bool":
            return "TRUE" if v else "FALSE"
        if t == "fp64":
            return f"CAST('{v!r}' AS DOUBLE)"
        return f"CAST({v} AS BIGINT)"
    if "in" in e:
        return f"({sql_expr(e['in'])} IN ({', '.join(sql_expr(x) for x in e['list'])}))"
    if "cast" in e:
        target = {"fp64": "DOUBLE", "string": "VARCHAR"}[e["type"]]
        return f"CAST({sql_expr(e['cast'])} AS {target})"
    if "trunc" in e:
        assert e["arg"] == col("ts")
        return f"(epoch_us(date_trunc('{e['trunc']}', ts_us)) * 1000)"
    if "bin" in e:
        assert e["arg"] == col("ts")
        stride_us, origin_us = e["bin"] // 1000, e["origin"] // 1000
        assert e["bin"] % 1000 == 0 and e["origin"] % 1000 == 0
        return f"(epoch_us(time_bucket(to_microseconds({stride_us}), ts_us, make_timestamp({origin_us}))) * 1000)"
    f, args = e["fn"], [sql_expr(a) for a in e["args"]]
    ops = {"equal": "=", "not_equal": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">=",
           "add": "+", "subtract": "-", "multiply": "*"}
    if f in ops:
        return f"({args[0]} {ops[f]} {args[1]})"
    if f in ("and", "or"):
        return "(" + f" {f.upper()} ".join(args) + ")"
    if f == "not":
        return f"(NOT {args[0]})"
    if f == "is_null":
        return f"({args[0]} IS NULL)"
    if f == "is_not_null":
        return f"({args[0]} IS NOT NULL)"
    raise ValueError(f)


def order_sql(keys):
    parts = []
    for c, desc, nulls_first in keys:
        c = {"ts": "ts_ns"}.get(c, c)
        parts.append(f"{c} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}")
    return ", ".join(parts + ["rn"])


def main():
    rows = build_rows()
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    table = pa.table({
        "rn": pa.array([r["rn"] for r in rows], pa.int64()),
        "ts_ns": pa.array([r["ts"] for r in rows], pa.int64()),
        "ts_us": pa.array([None if r["ts"] is None else r["ts"] // 1000 for r in rows], pa.int64()).cast(pa.timestamp("us")),
        "id": pa.array([r["id"] for r in rows], pa.string()),
        "grp": pa.array([r["grp"] for r in rows], pa.int64()),
        "x": pa.array([None if r["x"] is None else float(r["x"]) for r in rows], pa.float64()),
        "flag": pa.array([r["flag"] for r in rows], pa.bool_()),
        "val": pa.array([None if r["val"] is None else bytes.fromhex(r["val"]) for r in rows], pa.binary()),
    })
    con.register("src", table)
    con.execute("CREATE TABLE t AS SELECT * FROM src")

    cases = []
    for name, pred in FILTERS.items():
        sql = f"SELECT rn FROM t WHERE {sql_expr(pred)} ORDER BY rn"
        cases.append({"name": name, "kind": "filter", "expr": pred, "sql": sql,
                      "rows": [r[0] for r in con.execute(sql).fetchall()]})
    for name, e in PROJECTS.items():
        sql = f"SELECT {sql_expr(e)} FROM t ORDER BY rn"
        vals = [r[0] for r in con.execute(sql).fetchall()]
        out = []
        for v in vals:
            if isinstance(v, float):
                out.append("NaN" if math.isnan(v) else repr(v))
            else:
                out.append(v)
        cases.append({"name": name, "kind": "project", "expr": e, "sql": sql, "values": out})
    for name, keys in SORTS.items():
        sql = f"SELECT rn FROM t ORDER BY {order_sql(keys)}"
        fetches = []
        for off, lim in FETCHES:
            fsql = f"{sql} LIMIT {lim} OFFSET {off}"
            fetches.append({"offset": off, "limit": lim, "sql": fsql,
                            "rows": [r[0] for r in con.execute(fsql).fetchall()]})
        cases.append({"name": name, "kind": "sort",
                      "keys": [{"col": c, "desc": d, "nulls_first": nf} for c, d, nf in keys],
                      "sql": sql, "rows": [r[0] for r in con.execute(sql).fetchall()], "fetches": fetches})

    with open(os.path.join(HERE, "rows.json"), "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        json.dump({"generator": "scan/ops/testdata/gen.py", "duckdb": duckdb.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
