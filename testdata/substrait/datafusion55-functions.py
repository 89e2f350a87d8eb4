"""Writes datafusion55-functions.json: DataFusion 55's Substrait plans (datafusion.substrait.Producer,
from SQL over flights(origin varchar, timestamp timestamptz, id varchar, value bytea)) of one
expression each, {expression: base64 plan}, for substrait/datafusion_test.go.
Run with a Python that has datafusion 55: python datafusion55-functions.py > datafusion55-functions.json"""
import base64
import json

from datafusion import SessionContext
from datafusion.substrait import Producer

EXPRESSIONS = [
    "strpos(id, '8')", "btrim(id, '0')", "ltrim(id)", "rtrim(id, '0')", "reverse(id)", "translate(id, '01', 'ab')",
    "replace(id, '00', 'x')", "repeat(id, 2)", "left(id, 3)", "right(id, 3)", "coalesce(nullif(id, '0'), 'Z')",
    "date_trunc('hour', \"timestamp\")", "date_trunc('week', \"timestamp\")", "date_part('hour', \"timestamp\")",
    "extract(dow FROM \"timestamp\")", "floor(CAST(substr(id, 7, 4) AS DOUBLE))", "ceil(CAST(substr(id, 7, 4) AS DOUBLE))",
    "round(CAST(substr(id, 7, 4) AS DOUBLE) / 7)", "round(CAST(substr(id, 7, 4) AS DOUBLE) / 7, 2)",
    "round(CAST(substr(id, 7, 4) AS BIGINT))", "ends_with(id, '0')", "id ~ '^0+14[0-9]{3}[05]0$'",
    "\"timestamp\" + INTERVAL '6 hours'", "\"timestamp\" - INTERVAL '1 month 2 days'", "CAST(substr(id, 7, 4) AS INT) % 7",
    "ntile(3) OVER (ORDER BY id)",
    # refused
    "regexp_replace(id, '^0+', '')", "id ~* '^0+'", "id ~ '^0.1'", "date_part('second', \"timestamp\")",
    "round(CAST(substr(id, 7, 4) AS DOUBLE), 23)", "floor(CAST(substr(id, 7, 4) AS DECIMAL(10, 2)))",
]

ctx = SessionContext()
ctx.sql("CREATE TABLE flights (origin varchar, timestamp timestamp with time zone, id varchar, value bytea)").collect()
out = {}
for e in EXPRESSIONS:
    sql = f"SELECT {e} AS x FROM flights WHERE origin = 'ORD' AND \"timestamp\" >= '2001-04-01' AND \"timestamp\" < '2001-04-03'"
    out[e] = base64.b64encode(Producer.to_substrait_plan(ctx.sql(sql).logical_plan(), ctx).encode()).decode()
print(json.dumps(out, indent=1, sort_keys=True))
