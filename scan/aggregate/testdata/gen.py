#!/usr/bin/env python3
"""Golden answers for scan/aggregate, computed by DuckDB (the test oracle).

Regenerate (from the repository root):

    .venv/bin/python scan/aggregate/testdata/gen.py

(if `import duckdb` fails: python3 -m venv .venv && .venv/bin/pip install duckdb pyarrow)

It writes, next to this script:
  - <table>.arrow: the input tables (Arrow IPC files) the Go test reads;
  - golden.json: one case per (table, query): the Spec in column names, the SQL DuckDB ran, and
    the expected rows in output order (groups in order of first appearance, i.e. ORDER BY the
    smallest row number `rn` of the group), or the expected error.

Values in golden.json: null; integers (ints, uints, counts, sums, timestamps in their unit,
date32 in days) as decimal strings; floats as JSON numbers or "NaN", "Infinity", "-Infinity";
booleans; text as strings; binary as lowercase hex strings.
"""

import json
import math
import os
import datetime as dt

import duckdb
import pyarrow as pa
import pyarrow.ipc as ipc

HERE = os.path.dirname(os.path.abspath(__file__))
NAN = float("nan")
INF = float("inf")
N = None

# ---------------------------------------------------------------------------------------------
# Input tables.

T_COLUMNS = [
    # name, type, values (24 rows)
    ("rn", pa.int64(), list(range(24))),
    ("g1", pa.string(), ["a", "b", N, "a", "c", "b", "a", N, "c", "d", "a", "b",
                         "a", N, "c", "b", "e", "a", "b", "c", N, "a", "d", "b"]),
    ("g2", pa.int32(), [1, 2, 1, N, 2, 1, 3, 3, N, 1, 2, 2,
                        1, 1, N, 3, 2, 1, 3, 2, 1, N, 2, 1]),
    ("f", pa.bool_(), [True, False, N, True, True, False, True, N, True, False, True, True,
                       False, True, True, N, True, False, True, True, False, True, N, True]),
    ("f2", pa.bool_(), [False, False, True, N, True, False, False, True, True, True, False, N,
                        True, False, False, True, False, True, N, False, True, False, True, False]),
    ("i8", pa.int8(), [1, -1, N, 127, -128, 5, 5, 0, N, -7, 3, 3,
                       100, -100, 2, N, 8, -9, 10, 11, -12, 13, 1, 0]),
    ("i16", pa.int16(), [300, -300, N, 32767, -32768, 5, 5, 0, N, -7, 3, 3,
                         1000, -1000, 2, N, 8, -9, 10, 11, -12, 13, 300, 0]),
    ("i32", pa.int32(), [70000, -70000, N, 2147483647, -2147483648, 5, 5, 0, N, -7, 3, 3,
                         2147483647, -1000, 2, N, 8, -9, 10, 11, -12, 13, 70000, 0]),
    ("i64", pa.int64(), [10**15, -(10**15), N, 4 * 10**18, -(4 * 10**18), 5, 5, 0, N, -7, 3, 3,
                         4 * 10**18, -1000, 2, N, 8, -9, 10, 11, -12, 13, 10**15, 0]),
    ("u8", pa.uint8(), [1, 255, N, 0, 254, 5, 5, 0, N, 7, 3, 3,
                        200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1, 0]),
    ("u16", pa.uint16(), [1, 65535, N, 0, 65534, 5, 5, 0, N, 7, 3, 3,
                          200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1, 0]),
    ("u32", pa.uint32(), [1, 4294967295, N, 0, 4294967294, 5, 5, 0, N, 7, 3, 3,
                          200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1, 0]),
    ("u64", pa.uint64(), [1, 2**61, N, 0, 2**61 + 1, 5, 5, 0, N, 7, 3, 3,
                          200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1, 0]),
    ("f32", pa.float32(), [1.5, -2.25, N, NAN, 0.0, 5.0, 5.0, -0.5, N, INF, 3.0, 3.0,
                           -INF, 1e30, 2.0, N, 8.0, -9.0, 10.0, 11.0, -12.0, 13.0, 1.5, 0.0]),
    # Dyadic values of modest magnitude: every partial sum is exact, so sums do not depend on
    # the order of addition (which differs between DuckDB and every split of the input).
    ("f64", pa.float64(), [1.5, -2.25, N, 2.5e14, -2.5e14, 5.0, 5.0, 0.125, N, -7.0, 3.0, 3.0,
                           NAN, -0.0, 2.0, N, 8.0, -9.0, 10.0, 11.0, NAN, 13.0, 1.5, 0.0]),
    ("b", pa.bool_(), [True, False, N, True, False, True, True, N, False, True, True, True,
                       False, True, N, True, True, True, True, True, False, True, True, True]),
    ("s", pa.string(), ["b", "a", N, "", "é", "z", "Z", "ab", N, "a", "zz", "é",
                        "b", "aa", "\u00e9t\u00e9", N, "Ä", "ä", "a\u0000b", "~", "b", "", "x", "y"]),
    ("ls", pa.large_string(), ["q", "p", N, "pp", "p", "", "Ω", "q", N, "r", "r", "ω",
                               "a", N, "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]),
    ("bin", pa.binary(), [b"\x01", b"\x00", N, b"", b"\xff", b"\x00\x00", b"\x7f", b"\x80", N,
                          b"\x01\x02", b"\x01", b"\xff\xff", b"a", b"b", N, b"c", b"d", b"e",
                          b"f", b"g", b"\x00", b"h", b"i", b"j"]),
    ("ts_s", pa.timestamp("s"), [1000, -1000, N, 0, 2**40, -(2**40), 5, 5, N, 7, 3, 3,
                                 200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1000, 0]),
    ("ts_ms", pa.timestamp("ms", tz="UTC"), [1000, -1000, N, 0, 2**40, -(2**40), 5, 5, N, 7, 3, 3,
                                             200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1000, 0]),
    ("ts_us", pa.timestamp("us", tz="America/New_York"),
     [1000, -1000, N, 0, 2**50, -(2**50), 5, 5, N, 7, 3, 3,
      200, 100, 2, N, 8, 9, 10, 11, 12, 13, 1000, 0]),
    ("ts_ns", pa.timestamp("ns"), [1001, -1001, N, 0, 2**60, -(2**60), 5, 5, N, 7, 3, 3,
                                   201, 101, 2, N, 8, 9, 10, 11, 12, 13, 1001, 0]),
    ("d", pa.date32(), [18000, -18000, N, 0, 2**20, -(2**20), 5, 5, N, 7, 3, 3,
                        200, 100, 2, N, 8, 9, 10, 11, 12, 13, 18000, 0]),
    ("gf", pa.float64(), [0.0, -0.0, NAN, N, 1.5, NAN, 0.0, N, -0.0, 1.5, 2.0, NAN,
                          0.0, 1.5, N, -0.0, NAN, 2.0, 0.0, 1.5, 2.0, NAN, -0.0, 0.0]),
]

BIG_COLUMNS = [
    ("rn", pa.int64(), list(range(9))),
    # Group x's i64 sum is 1, group y's 0, with intermediate sums outside int64 in any order.
    ("g", pa.string(), ["x", "x", "y", "y", "y", "y", "x", N, "x"]),
    ("f", pa.bool_(), [False, True, True, False, True, True, True, False, False]),
    ("i64", pa.int64(), [2**63 - 1, -(2**63), 9 * 10**18, 9 * 10**18, -9 * 10**18, -9 * 10**18,
                         5, N, -3]),
    ("u64", pa.uint64(), [2**64 - 1, 1, 2**63 - 10, 2**63, 0, 5, N, 7, 2**64 - 1]),
]


def table(columns, rows=None):
    arrays, fields = [], []
    for name, typ, values in columns:
        if rows is not None:
            values = values[:rows]
        arrays.append(pa.array(values, type=typ))
        fields.append(pa.field(name, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


TABLES = {
    "t": table(T_COLUMNS),
    "t_one": table(T_COLUMNS, rows=1),
    "t_empty": table(T_COLUMNS, rows=0),
    "big": table(BIG_COLUMNS),
}

# ---------------------------------------------------------------------------------------------
# Queries: (groups, measures); a measure is (func, arg, distinct, filter).

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOATS = ["f32", "f64"]
NUMERIC = INTS + FLOATS
OTHERS = ["b", "s", "ls", "bin", "ts_s", "ts_ms", "ts_us", "ts_ns", "d"]
VALUES = NUMERIC + OTHERS


def measures_for(x):
    ms = [("count_star", None, False, None), ("count", x, False, None),
          ("min", x, False, None), ("max", x, False, None),
          ("count", x, True, None),
          ("count", x, False, "f"), ("min", x, False, "f"), ("max", x, False, "f2"),
          ("count", x, True, "f2"), ("count_star", None, False, "f2")]
    if x in NUMERIC:
        ms += [("sum", x, False, None), ("avg", x, False, None),
               ("sum", x, True, None), ("avg", x, True, None),
               ("sum", x, False, "f"), ("avg", x, False, "f2"),
               ("sum", x, True, "f"), ("avg", x, True, "f2")]
    return ms


def t_queries():
    qs = []
    for x in VALUES:
        qs.append(([], measures_for(x)))
        qs.append((["g1"], measures_for(x)))
        qs.append(([x], [("count_star", None, False, None), ("count", "i32", False, None),
                         ("sum", "i16", False, "f"), ("count", "s", True, None),
                         ("max", "ts_ns", False, None)]))
    qs += [
        (["g1", "g2"], [("count_star", None, False, None), ("sum", "i64", False, None),
                        ("min", "s", False, None), ("count", "f64", True, "f")]),
        (["g2", "g1"], [("avg", "f64", False, None), ("max", "bin", False, "f")]),
        (["g1", "b", "d"], [("count_star", None, False, None), ("min", "ts_us", False, None)]),
        (["s", "ts_ns"], [("count_star", None, False, None)]),
        (["gf"], [("count_star", None, False, None), ("sum", "f64", False, None),
                  ("min", "gf", False, None), ("count", "gf", True, None)]),
        (["gf", "bin", "ls"], [("count_star", None, False, None)]),
        (["g1"], []),  # SELECT DISTINCT g1
        (["f", "f2"], [("count_star", None, False, "f"), ("max", "f64", False, "f2")]),
    ]
    return qs


def big_queries():
    return [
        ([], [("count_star", None, False, None), ("sum", "i64", False, None),
              ("avg", "i64", False, None), ("min", "i64", False, None), ("max", "i64", False, None),
              ("sum", "i64", True, None), ("avg", "u64", False, None), ("min", "u64", False, None),
              ("max", "u64", False, None), ("sum", "u64", False, "f"), ("count", "u64", True, None),
              ("avg", "u64", True, None)]),
        ([], [("sum", "u64", False, None)]),  # overflows int64
        ([], [("sum", "i64", False, "f")]),  # overflows int64
        (["g"], [("sum", "i64", False, None), ("min", "u64", False, None)]),
        (["g"], [("sum", "u64", False, None)]),  # overflows int64
        (["g"], [("avg", "u64", False, None), ("avg", "i64", True, None), ("sum", "u64", True, "f")]),
    ]


# ---------------------------------------------------------------------------------------------

SQL_FUNC = {"count_star": "count", "count": "count", "sum": "sum", "avg": "avg", "min": "min", "max": "max"}


def q(name):
    return '"' + name + '"'


def measure_sql(m):
    fn, arg, distinct, filt = m
    if fn == "count_star":
        s = "count(*)"
    else:
        s = "%s(%s%s)" % (SQL_FUNC[fn], "DISTINCT " if distinct else "", q(arg))
    if filt is not None:
        s += " FILTER (WHERE %s)" % q(filt)
    return s


def canon(value, typ):
    if value is None:
        return None
    if pa.types.is_floating(typ):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if pa.types.is_boolean(typ):
        return value
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        return value.hex()
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return value
    return str(int(value))


def column_values(col, want):
    """The values of DuckDB's result column col, as the Go output type want would hold them."""
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_timestamp(want):
        col = col.cast(pa.timestamp(want.unit, tz=col.type.tz)).cast(pa.int64())
    elif pa.types.is_date32(want):
        col = col.cast(pa.int32())
    return col.to_pylist()


def output_type(tab, fn, arg):
    if fn in ("count", "count_star"):
        return pa.int64()
    t = tab.schema.field(arg).type
    if fn == "avg":
        return pa.float64()
    if fn == "sum":
        return pa.float64() if pa.types.is_floating(t) else pa.int64()
    return t


def run(con, tname, tab, groups, measures):
    names = ["m%d" % i for i in range(len(measures))]
    sel = [q(g) for g in groups] + ["%s AS %s" % (measure_sql(m), q(n)) for m, n in zip(measures, names)]
    sql = "SELECT %s FROM %s" % (", ".join(sel) if sel else "count(*) AS _", q(tname))
    if groups:
        sql += " GROUP BY %s ORDER BY min(%s)" % (", ".join(q(g) for g in groups), q("rn"))
    res = con.sql(sql).to_arrow_table()
    types = [tab.schema.field(g).type for g in groups] + [output_type(tab, m[0], m[1]) for m in measures]
    cols = [column_values(res.column(i), t) for i, t in enumerate(types)]
    nrows = res.num_rows
    case = {
        "table": tname,
        "groups": groups,
        "measures": [{"func": m[0], "arg": m[1], "distinct": m[2], "filter": m[3], "name": n}
                     for m, n in zip(measures, names)],
        "sql": sql,
    }
    # A sum of integers outside int64 is an error in flightsrv (DuckDB's is a HUGEINT).
    for i, m in enumerate(measures):
        if m[0] == "sum" and types[len(groups) + i] == pa.int64():
            for v in cols[len(groups) + i]:
                if v is not None and not (-(2**63) <= int(v) < 2**63):
                    case["error"] = "aggregate: sum overflows int64"
                    return case
    case["rows"] = [[canon(cols[c][r], types[c]) for c in range(len(types))] for r in range(nrows)]
    return case


def dump(cases):
    """golden.json's text: one case per block, one result row per line."""
    def enc(v):
        return json.dumps(v, ensure_ascii=False)
    out = ['{"generator": %s,\n "cases": [' % enc("testdata/gen.py, duckdb " + duckdb.__version__)]
    for i, c in enumerate(cases):
        head = {k: v for k, v in c.items() if k != "rows"}
        lines = ['  {' + ", ".join("%s: %s" % (enc(k), enc(v)) for k, v in head.items())]
        if "rows" in c:
            rows = [enc(r) for r in c["rows"]]
            lines[0] += ', "rows": ['
            lines += ["    " + r + ("," if j + 1 < len(rows) else "") for j, r in enumerate(rows)]
            lines.append("  ]}" + ("," if i + 1 < len(cases) else ""))
        else:
            lines[0] += "}" + ("," if i + 1 < len(cases) else "")
        out += lines
    out.append("]}")
    return "\n".join(out) + "\n"


def main():
    con = duckdb.connect()
    con.sql("SET TimeZone = 'UTC'")
    for name, tab in TABLES.items():
        con.register(name, tab)
        with ipc.new_file(os.path.join(HERE, name + ".arrow"), tab.schema) as w:
            w.write_table(tab)
    cases = []
    for tname in ("t", "t_one", "t_empty"):
        for groups, measures in t_queries():
            cases.append(run(con, tname, TABLES[tname], groups, measures))
    for groups, measures in big_queries():
        cases.append(run(con, "big", TABLES["big"], groups, measures))
    with open(os.path.join(HERE, "golden.json"), "w") as f:
        f.write(dump(cases))
    print("wrote %d cases" % len(cases))


if __name__ == "__main__":
    main()
