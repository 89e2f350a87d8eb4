"""Substrait plans of the producers' suite (test_producers.py) written with ibis and compiled
by ibis-substrait 4.0.1 (Substrait 0.56: extension URIs, before URNs).

Runs in its own venv (.venv-ibis: ibis-framework 9, substrait < 0.24, which conflict with the
client tests' packages). Prints one JSON object: {query name: {"plan": base64} or {"error":
ibis-substrait's own message}}. The names are those of test_producers.QUERIES; each expression
is what an ibis user writes for that query's SQL.
"""

from __future__ import annotations

import base64
import json
import sys

import ibis
from ibis_substrait.compiler.core import SubstraitCompiler

t = ibis.table(dict(origin="string", timestamp="timestamp('UTC')", id="string", value="binary"), name="flights")


def ts(s: str):
    return ibis.timestamp(s if " " in s else s + " 00:00:00")


def month(lo: str, hi: str):
    return (t.timestamp >= ts(lo)) & (t.timestamp < ts(hi))


def count(f):
    return f.aggregate(n=f.count())


APR = ("2001-04-01", "2001-05-01")


def queries():
    q = {}
    q["count_hot_month"] = lambda: count(t.filter((t.origin == "ORD") & month(*APR)))
    q["count_archived_month"] = lambda: count(t.filter((t.origin == "ORD") & month("2001-02-01", "2001-03-01")))
    q["count_across_tiers"] = lambda: count(t.filter((t.origin == "ATL") & month("2001-03-15 12:00:00", "2001-04-15")))

    def min_max():
        f = t.filter((t.origin == "SFO") & month("2001-03-01", "2001-06-01"))
        return f.aggregate(lo=f.timestamp.min(), hi=f.timestamp.max())
    q["min_max_timestamp"] = min_max
    q["in_list"] = lambda: count(t.filter(t.origin.isin(["ORD", "ATL", "SFO"]) & month(*APR)))
    q["or_chain"] = lambda: count(t.filter(((t.origin == "ORD") | (t.origin == "DEN")) & month(*APR)))
    q["between"] = lambda: count(t.filter((t.origin == "DEN") & t.timestamp.between(ts("2001-04-01"), ts("2001-04-30"))))
    q["offset_literals"] = lambda: count(t.filter(
        (t.origin == "ORD") & (t.timestamp >= ibis.timestamp("2001-04-01T02:00:00+02:00"))
        & (t.timestamp < ibis.timestamp("2001-05-01T00:00:00Z"))))
    q["strict_bounds"] = lambda: count(t.filter((t.origin == "DEN") & (t.timestamp > ts("2001-04-01")) & (t.timestamp <= ts("2001-04-30"))))
    q["residual_filter"] = lambda: count(t.filter((t.origin == "ORD") & month(*APR) & (t.id >= "0001700000")))
    q["timestamp_residual_in_or"] = lambda: count(t.filter(
        (t.origin == "ORD") & month(*APR) & ((t.timestamp < ts("2001-04-10")) | (t.id >= "0001900000"))))
    q["like_residual"] = lambda: count(t.filter((t.origin == "LAX") & month(*APR) & t.id.like("00015%")))
    q["ilike_residual"] = lambda: count(t.filter((t.origin == "LAX") & month(*APR) & t.id.ilike("00015%")))
    q["projection_sorted_limit"] = lambda: (
        t.filter((t.origin == "ORD") & month("2001-04-02 06:00:00", "2001-04-03"))
        .order_by([t.timestamp, t.id]).select("id", "timestamp").limit(10))
    q["order_desc_limit"] = lambda: (
        t.filter((t.origin == "LAX") & month("2001-01-01", "2001-07-01"))
        .order_by([t.timestamp.desc(), t.id.desc()]).select("id").limit(5))

    def group_by_origin():
        f = t.filter(t.origin.isin(["ORD", "ATL", "DEN"]) & month(*APR))
        return f.group_by("origin").aggregate(n=f.count(), lo=f.timestamp.min(), hi=f.timestamp.max()).order_by("origin")
    q["group_by_origin"] = group_by_origin

    def group_sum_avg():
        f = t.filter(t.origin.isin(["ORD", "SFO"]) & month(*APR))
        n = f.id.length()
        return f.group_by("origin").aggregate(s=n.sum(), a=n.cast("float64").mean()).order_by("origin")
    q["group_sum_avg"] = group_sum_avg
    q["count_last_hot_month"] = lambda: count(t.filter((t.origin == "ORD") & month("2001-06-01", "2001-07-01")))

    def min_max_archived():
        f = t.filter((t.origin == "SFO") & month("2001-01-01", "2001-02-01"))
        return f.aggregate(lo=f.timestamp.min(), hi=f.timestamp.max())
    q["min_max_archived"] = min_max_archived
    q["week_across_months_and_tiers"] = lambda: count(t.filter((t.origin == "DEN") & month("2001-03-28", "2001-04-04")))
    five = ["ORD", "LAX", "ATL", "DEN", "SFO"]

    def group_count_archived():
        f = t.filter(t.origin.isin(five) & month("2001-02-01", "2001-03-01"))
        return f.group_by("origin").aggregate(n=f.count()).order_by("origin")
    q["group_count_archived"] = group_count_archived

    def group_having():
        f = t.filter(t.origin.isin(five) & month(*APR))
        g = f.group_by("origin").aggregate(n=f.count())
        return g.filter(g.n > 1500).order_by("origin")
    q["group_having"] = group_having

    def sum_single():
        f = t.filter((t.origin == "ATL") & month(*APR))
        return f.aggregate(s=f.id.length().sum())
    q["sum_single"] = sum_single

    def count_column():
        f = t.filter((t.origin == "ATL") & month(*APR))
        return f.aggregate(n=f.id.count())
    q["count_column"] = count_column

    def max_text_per_group():
        f = t.filter(t.origin.isin(["ORD", "ATL"]) & month(*APR))
        return f.group_by("origin").aggregate(hi=f.id.max(), lo=f.id.min()).order_by("origin")
    q["max_text_per_group"] = max_text_per_group
    q["not_equal_residual"] = lambda: count(t.filter((t.origin == "ORD") & month(*APR) & (t.id != "0001700030")))
    q["in_list_residual_or"] = lambda: count(t.filter(
        t.origin.isin(["ORD", "ATL"]) & month(*APR) & ((t.id < "0001500000") | (t.id > "0001900000"))))
    q["limit_offset"] = lambda: t.filter((t.origin == "SFO") & month(*APR)).order_by("id").select("id").limit(5, offset=10)
    q["distinct_origins"] = lambda: (
        t.filter(t.origin.isin(["ORD", "ATL", "XXX"]) & month(*APR)).select("origin").distinct().order_by("origin"))
    return q


def main() -> int:
    compiler = SubstraitCompiler()
    out = {}
    for name, build in queries().items():
        try:
            out[name] = {"plan": base64.b64encode(compiler.compile(build()).SerializeToString()).decode()}
        except Exception as e:  # ibis-substrait's own refusal
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
