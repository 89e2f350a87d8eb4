-- The golden SQL corpus: queries over the demo sample as the e2e tests load it (partitions
-- ORD, SFO and BOS of testdata/flights-sample.parquet; January archived as JSON, February and
-- March as Parquet, ORD's April bucket archiving, the rest hot). Queries are separated by blank
-- lines; a line "-- duckdb: …" gives DuckDB's spelling when it differs, "-- postgres: …"
-- PostgreSQL's (its table's value is json, flightsrv's bytea); other "--" lines are comments.
-- Every query has a total ORDER BY or returns at most one row. e2e/golden_test.go compares
-- each answer with PostgreSQL's over the same rows in a plain table (the oracle) and with
-- DuckDB's, which gen.py computes into golden.json. postgres.sql holds the corpus' queries
-- checked against PostgreSQL alone.

-- table-less statements
SELECT 1

SELECT 1 + 2 AS three, 'a' || 'b' AS ab, NULL::int AS n

SELECT CASE WHEN 2 > 1 THEN 'yes' ELSE 'no' END, COALESCE(NULL, 5), NULLIF(3, 3)

SELECT lower('ABC'), upper('abc'), length('héllo'), substring('flightsrv' from 3 for 4)

SELECT 7 % 3, -7 % 3, 2 * 3 - 1, 1.5 + 2

SELECT 1 LIMIT 0

-- interval arithmetic with months and years (calendar months, the day clamped to the month's end)
SELECT TIMESTAMPTZ '2001-01-31 10:00:00+00' + INTERVAL '1 month' AS a, TIMESTAMPTZ '2004-02-29 12:00:00+00' + INTERVAL '1 year' AS b, TIMESTAMPTZ '2001-03-31 00:00:00+00' - INTERVAL '1 month' AS c

SELECT TIMESTAMPTZ '2001-01-31 10:00:00+00' - INTERVAL '1 year 2 months 3 days' AS d

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= TIMESTAMPTZ '2001-04-01 00:00:00+00' - INTERVAL '2 months' AND timestamp < TIMESTAMPTZ '2001-03-01 00:00:00+00' + INTERVAL '1 month'

-- a column ± interval: months on the calendar (day clamped to the month's end), then days and time
SELECT id, timestamp + INTERVAL '1 month' AS a, timestamp - INTERVAL '3 months 2 days 1 hour' AS b, INTERVAL '36 hours' + timestamp AS c FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-30' AND timestamp < '2001-06-01' ORDER BY timestamp, id LIMIT 12

SELECT id, timestamp - INTERVAL '1 year 1 month' AS a, timestamp + INTERVAL '2 years 11 months 30 minutes' AS b FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-29' AND timestamp < '2001-04-01' ORDER BY timestamp, id LIMIT 10

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND timestamp + INTERVAL '1 month' >= TIMESTAMPTZ '2001-06-30 00:00:00+00'

SELECT date_trunc('month', timestamp + INTERVAL '1 month') AS m, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT min(timestamp - INTERVAL '90 minutes'), max(timestamp + INTERVAL '1 day') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01'

-- plain scans with expressions
SELECT timestamp, id, value->>'destination' AS dest FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-01-02' ORDER BY timestamp, id LIMIT 10

SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' ORDER BY timestamp DESC, id DESC LIMIT 7

SELECT id, (value->>'distance')::int * 2 AS d2 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-11' ORDER BY id LIMIT 5

SELECT id, value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' ORDER BY value->>'destination', id LIMIT 12

SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-01' AND timestamp < '2001-05-02' ORDER BY id DESC LIMIT 5 OFFSET 3

SELECT id, timestamp FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-30' AND timestamp < '2001-07-01' ORDER BY 2, 1 LIMIT 4

SELECT id AS flight FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-15' AND timestamp < '2001-01-16' ORDER BY flight LIMIT 3

SELECT upper(value->>'destination') || '-' || lower(origin) AS route, id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02' ORDER BY id LIMIT 5

SELECT id, length(value->>'destination'), substring(id from 7 for 4) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-05-05' AND timestamp < '2001-05-06' ORDER BY id LIMIT 5

SELECT id, replace(value->>'destination', 'A', 'a') FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-02' AND timestamp < '2001-02-03' ORDER BY id LIMIT 6

SELECT id, starts_with(value->>'destination', 'S') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-02' ORDER BY id LIMIT 8

SELECT id, concat(value->>'destination', '/', (value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-06-15' AND timestamp < '2001-06-16' ORDER BY id LIMIT 5

SELECT id, CASE WHEN (value->>'delay')::int > 30 THEN 'late' WHEN (value->>'delay')::int < 0 THEN 'early' ELSE 'on time' END AS status FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-03' AND timestamp < '2001-03-04' ORDER BY id LIMIT 10

SELECT id, CASE value->>'destination' WHEN 'LAX' THEN 1 WHEN 'SEA' THEN 2 END AS code FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-03' AND timestamp < '2001-03-04' ORDER BY id LIMIT 10

SELECT id, NULLIF((value->>'delay')::int, 0) AS nz FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-20' AND timestamp < '2001-01-21' ORDER BY id LIMIT 10

SELECT id, COALESCE(value->>'nosuch', value->>'destination') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-20' AND timestamp < '2001-01-21' ORDER BY id LIMIT 5

SELECT id, value->>'nosuch' AS missing FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-20' AND timestamp < '2001-04-21' ORDER BY id LIMIT 3

SELECT id, (value->>'distance')::float8 / 100 AS hundreds FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-14' AND timestamp < '2001-02-15' ORDER BY id LIMIT 5

SELECT id, (value->>'delay')::int % 7 AS m FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-14' AND timestamp < '2001-02-15' ORDER BY id LIMIT 8

SELECT id, -((value->>'delay')::int) AS neg FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-14' AND timestamp < '2001-02-15' ORDER BY id LIMIT 4

SELECT id, json_extract_path_text(value, 'destination') AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-04-04' AND timestamp < '2001-04-05' ORDER BY id LIMIT 5
-- duckdb: SELECT id, json_extract_string(value, '$.destination') AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-04-04' AND timestamp < '2001-04-05' ORDER BY id LIMIT 5

SELECT id, value #>> '{destination}' AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-04' AND timestamp < '2001-04-05' ORDER BY id LIMIT 5
-- duckdb: SELECT id, json_extract_string(value, '$.destination') AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-04' AND timestamp < '2001-04-05' ORDER BY id LIMIT 5

SELECT id, (value->'delay')::text AS raw FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-04' AND timestamp < '2001-03-05' ORDER BY id LIMIT 5
-- duckdb: SELECT id, (value->'delay')::varchar AS raw FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-04' AND timestamp < '2001-03-05' ORDER BY id LIMIT 5

SELECT id, convert_from(value, 'UTF8') LIKE '%"destination":"LAX"%' AS to_lax FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-04' AND timestamp < '2001-03-05' ORDER BY id LIMIT 8
-- postgres: SELECT id, value::text LIKE '%"destination":"LAX"%' AS to_lax FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-04' AND timestamp < '2001-03-05' ORDER BY id LIMIT 8
-- duckdb: SELECT id, value::varchar LIKE '%"destination":"LAX"%' AS to_lax FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-04' AND timestamp < '2001-03-05' ORDER BY id LIMIT 8

SELECT id, extract(hour from timestamp) AS h, extract(minute from timestamp) AS mi FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-09' AND timestamp < '2001-05-10' ORDER BY id LIMIT 6
-- duckdb: SELECT id, CAST(extract(hour from timestamp) AS DECIMAL(38,0)) AS h, CAST(extract(minute from timestamp) AS DECIMAL(38,0)) AS mi FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-09' AND timestamp < '2001-05-10' ORDER BY id LIMIT 6

SELECT id, date_part('dow', timestamp) AS dow, date_part('doy', timestamp) AS doy FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-05-09' AND timestamp < '2001-05-12' ORDER BY id LIMIT 6
-- duckdb: SELECT id, date_part('dow', timestamp)::DOUBLE AS dow, date_part('doy', timestamp)::DOUBLE AS doy FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-05-09' AND timestamp < '2001-05-12' ORDER BY id LIMIT 6

SELECT id, extract(year from timestamp) AS y, extract(month from timestamp) AS m, extract(day from timestamp) AS d, extract(quarter from timestamp) AS q FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-06-29' AND timestamp < '2001-07-01' ORDER BY id LIMIT 4
-- duckdb: SELECT id, CAST(extract(year from timestamp) AS DECIMAL(38,0)) AS y, CAST(extract(month from timestamp) AS DECIMAL(38,0)) AS m, CAST(extract(day from timestamp) AS DECIMAL(38,0)) AS d, CAST(extract(quarter from timestamp) AS DECIMAL(38,0)) AS q FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-06-29' AND timestamp < '2001-07-01' ORDER BY id LIMIT 4

SELECT id, date_trunc('hour', timestamp) AS h FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-09' AND timestamp < '2001-01-10' ORDER BY id LIMIT 5

SELECT id, to_char(timestamp, 'YYYY-MM-DD HH24:MI') AS t FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-09' AND timestamp < '2001-02-10' ORDER BY id LIMIT 5
-- duckdb: SELECT id, strftime(timestamp, '%Y-%m-%d %H:%M') AS t FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-09' AND timestamp < '2001-02-10' ORDER BY id LIMIT 5

SELECT id, to_char(timestamp, 'Mon DD, YYYY') AS t FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-09' AND timestamp < '2001-06-10' ORDER BY id LIMIT 3
-- duckdb: SELECT id, strftime(timestamp, '%b %d, %Y') AS t FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-09' AND timestamp < '2001-06-10' ORDER BY id LIMIT 3

SELECT * FROM flights WHERE origin = 'XXX' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' ORDER BY timestamp, id

SELECT id, value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02' AND value->>'destination' = 'NOWHERE' ORDER BY id

-- residual filters
SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'delay')::int > 60

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' = 'LAX'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' IN ('LGA', 'DCA', 'ORD')

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' NOT IN ('LGA', 'DCA', 'ORD')

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-01' AND timestamp < '2001-05-01' AND (value->>'delay')::int BETWEEN 10 AND 20

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-01' AND timestamp < '2001-05-01' AND (value->>'delay')::int NOT BETWEEN -5 AND 5

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' LIKE 'S%'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' ILIKE 's_a'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' NOT LIKE '%A%'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND ((value->>'delay')::int > 100 OR value->>'destination' = 'SFO')

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND NOT ((value->>'delay')::int > 0)

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'nosuch' IS NULL

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' IS NOT NULL

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'nosuch' IS DISTINCT FROM 'x'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' IS NOT DISTINCT FROM 'MSP'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND id LIKE '%00'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND id >= '0001500000'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND extract(hour from timestamp) = 7

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND date_trunc('month', timestamp) = '2001-03-01'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'distance')::int > 2000 AND (value->>'delay')::int < 0

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND CASE WHEN (value->>'delay')::int > 15 THEN true ELSE false END

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND length(value->>'destination') = 3

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND lower(value->>'destination') = 'lax'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND starts_with(value->>'destination', 'L')

-- the route in any form and position
SELECT count(*) FROM flights WHERE timestamp >= '2001-03-01' AND (value->>'delay')::int > 5 AND origin = 'ORD' AND timestamp < '2001-04-01'

SELECT count(*) FROM flights WHERE 'ORD' = origin AND '2001-03-01' <= timestamp AND '2001-04-01' > timestamp

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp > '2001-03-01 06:00' AND timestamp <= '2001-03-02 06:00'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp BETWEEN '2001-03-01' AND '2001-03-31'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp >= '2001-02-15' AND timestamp < '2001-06-01' AND timestamp < '2001-05-15'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '1900-01-01' AND timestamp < '9999-12-31'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= TIMESTAMPTZ '2001-03-31 23:00:00+00' AND timestamp < TIMESTAMPTZ '2001-04-01 01:00:00+00'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31T20:00:00-05:00' AND timestamp < '2001-04-01T04:00:00+01:00'

-- several partitions
SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT origin, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY origin ORDER BY origin

SELECT origin, count(*) FROM flights WHERE origin = ANY('{ORD,BOS}') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin
-- duckdb: SELECT origin, count(*) FROM flights WHERE origin IN ('ORD', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin

SELECT origin, count(*) FROM flights WHERE origin = ANY(ARRAY['SFO', 'XXX']) AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin
-- duckdb: SELECT origin, count(*) FROM flights WHERE origin IN ('SFO', 'XXX') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin

SELECT origin, id, timestamp FROM flights WHERE origin IN ('ORD', 'SFO') AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' ORDER BY timestamp, id LIMIT 10

SELECT origin, id FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-01-31' AND timestamp < '2001-02-02' ORDER BY timestamp DESC, id DESC LIMIT 6

SELECT origin, max((value->>'delay')::int) FROM flights WHERE origin IN ('BOS', 'SFO', 'ORD') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO') AND origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-05-01' AND timestamp < '2001-06-01' GROUP BY d ORDER BY count(*) DESC, d LIMIT 5

-- aggregates
SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(*), min(timestamp), max(timestamp) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01' AND timestamp < '2001-05-01'

SELECT count(id), count(DISTINCT value->>'destination') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT sum((value->>'delay')::int), avg((value->>'delay')::int), min((value->>'delay')::int), max((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT sum((value->>'distance')::int) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-04-01'

SELECT avg((value->>'distance')::float8) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-07-01'

SELECT min(value->>'destination'), max(value->>'destination'), min(id), max(id) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(*) FILTER (WHERE (value->>'delay')::int > 30), count(*) FILTER (WHERE value->>'destination' = 'LGA'), count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT sum((value->>'delay')::int) FILTER (WHERE value->>'destination' = 'LAX') FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(*), sum((value->>'delay')::int), avg((value->>'delay')::int), min(id) FROM flights WHERE origin = 'XXX' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(*) + 1, sum((value->>'delay')::int) / count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'
-- duckdb: SELECT count(*) + 1, sum((value->>'delay')::int) // count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(DISTINCT date_trunc('day', timestamp)) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT max(length(value->>'destination')), min(extract(hour from timestamp)) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'
-- duckdb: SELECT max(length(value->>'destination')), min(CAST(extract(hour from timestamp) AS DECIMAL(38,0))) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' HAVING count(*) > 100

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' HAVING count(*) > 100000

SELECT CASE WHEN count(*) > 1000 THEN 'many' ELSE 'few' END FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

-- GROUP BY
SELECT value->>'destination' AS dest, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY dest ORDER BY count(*) DESC, dest LIMIT 10

SELECT value->>'destination', count(*), avg((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 HAVING count(*) > 500 ORDER BY 2 DESC, 1

SELECT value->>'destination' AS d, max((value->>'delay')::int) AS worst FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY value->>'destination' ORDER BY worst DESC, d LIMIT 8

SELECT date_trunc('month', timestamp) AS m, count(*), min(value->>'destination'), max(id) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY m ORDER BY m

SELECT date_trunc('month', timestamp) AS m, avg((value->>'delay')::int) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1 DESC

SELECT date_trunc('week', timestamp) AS w, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY w ORDER BY w

SELECT date_trunc('day', timestamp) AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY d ORDER BY d

SELECT date_trunc('hour', timestamp) AS h, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-02' GROUP BY h ORDER BY h

SELECT date_trunc('quarter', timestamp) AS q, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY q ORDER BY q

SELECT date_trunc('year', timestamp) AS y, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY y ORDER BY y

SELECT date_bin(INTERVAL '6 hours', timestamp, TIMESTAMPTZ '2001-01-01') AS b, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-10' AND timestamp < '2001-03-12' GROUP BY b ORDER BY b
-- duckdb: SELECT time_bucket(INTERVAL '6 hours', timestamp, TIMESTAMPTZ '2001-01-01') AS b, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-10' AND timestamp < '2001-03-12' GROUP BY b ORDER BY b

SELECT date_bin(INTERVAL '90 minutes', timestamp, TIMESTAMPTZ '2001-01-01 00:15:00+00') AS b, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-06-10' AND timestamp < '2001-06-11' GROUP BY b ORDER BY b
-- duckdb: SELECT time_bucket(INTERVAL '90 minutes', timestamp, TIMESTAMPTZ '2001-01-01 00:15:00+00') AS b, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-06-10' AND timestamp < '2001-06-11' GROUP BY b ORDER BY b

SELECT extract(hour from timestamp) AS h, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' GROUP BY 1 ORDER BY 1
-- duckdb: SELECT CAST(extract(hour from timestamp) AS DECIMAL(38,0)) AS h, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' GROUP BY 1 ORDER BY 1

SELECT extract(dow from timestamp) AS dow, count(*), avg((value->>'delay')::int) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY dow ORDER BY dow
-- duckdb: SELECT CAST(extract(dow from timestamp) AS DECIMAL(38,0)) AS dow, count(*), avg((value->>'delay')::int) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY dow ORDER BY dow

SELECT extract(month from timestamp) AS m, value->>'destination' AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 HAVING count(*) >= 150 ORDER BY 1, 2
-- duckdb: SELECT CAST(extract(month from timestamp) AS DECIMAL(38,0)) AS m, value->>'destination' AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 HAVING count(*) >= 150 ORDER BY 1, 2

SELECT CASE WHEN (value->>'delay')::int > 60 THEN 'late' ELSE 'ok' END AS s, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1 ORDER BY 1

SELECT (value->>'delay')::int / 60 AS hours_late, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1
-- duckdb: SELECT (value->>'delay')::int // 60 AS hours_late, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT substring(value->>'destination' from 1 for 1) AS letter, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY letter ORDER BY letter

SELECT length(id), count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT value->>'destination' AS d, count(*) FILTER (WHERE (value->>'delay')::int > 15) AS late, count(*) AS total FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY d HAVING count(*) FILTER (WHERE (value->>'delay')::int > 15) > 50 ORDER BY late DESC, d

SELECT value->>'destination' AS d, min(timestamp), max(timestamp) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY d ORDER BY d LIMIT 5

SELECT value->>'destination' AS d, sum((value->>'distance')::int) AS miles FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-05-01' GROUP BY d ORDER BY miles DESC, d LIMIT 5

SELECT value->>'destination' AS d, count(DISTINCT date_trunc('day', timestamp)) AS days FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' GROUP BY d ORDER BY days DESC, d LIMIT 6

SELECT origin, value->>'destination' AS d, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin, d ORDER BY 3 DESC, 2 LIMIT 3

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin = 'XXX' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY d ORDER BY d

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY d HAVING count(*) > 1000000 ORDER BY d

SELECT count(*) AS n, value->>'destination' AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-06-01' AND timestamp < '2001-07-01' GROUP BY 2 ORDER BY n DESC, d LIMIT 4 OFFSET 2

SELECT upper(value->>'destination') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY upper(value->>'destination') ORDER BY 2 DESC, 1 LIMIT 5

SELECT COALESCE(NULLIF(value->>'destination', 'LGA'), 'NYC') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 4

SELECT NULLIF(value->>'destination', 'LGA') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY 1 ORDER BY 1 NULLS FIRST LIMIT 4

SELECT NULLIF(value->>'destination', 'LGA') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY 1 ORDER BY 1 DESC NULLS LAST LIMIT 4

SELECT NULLIF(value->>'destination', 'LGA') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY 1 ORDER BY 1 DESC NULLS FIRST LIMIT 4

-- ORDER BY expressions, DISTINCT
SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' ORDER BY delay DESC, id LIMIT 10

SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' ORDER BY (value->>'distance')::int DESC, id LIMIT 5

SELECT id, value->>'destination' FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' ORDER BY length(value->>'destination') DESC, value->>'destination', id LIMIT 5

SELECT id, timestamp FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' ORDER BY extract(minute from timestamp) DESC, timestamp, id LIMIT 5

SELECT DISTINCT value->>'destination' AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' ORDER BY d LIMIT 10

SELECT DISTINCT extract(hour from timestamp) AS h FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02' ORDER BY h
-- duckdb: SELECT DISTINCT CAST(extract(hour from timestamp) AS DECIMAL(38,0)) AS h FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02' ORDER BY h

SELECT DISTINCT origin, value->>'destination' AS d FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-06-01' AND timestamp < '2001-06-02' AND value->>'destination' LIKE 'L%' ORDER BY 1, 2

SELECT count(DISTINCT id) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03'

-- subqueries and WITH
SELECT * FROM (SELECT id, timestamp FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01') t LIMIT 0

SELECT * FROM (SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02') t WHERE delay > 60 ORDER BY delay DESC, id LIMIT 5

SELECT d, n FROM (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1) s WHERE n > 400 ORDER BY n DESC, d

SELECT count(*), max(n) FROM (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1) s

WITH x AS (SELECT id, (value->>'delay')::int AS d FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01') SELECT count(*), sum(d), max(d) FROM x WHERE d > 100

WITH daily AS (SELECT date_trunc('day', timestamp) AS day, count(*) AS n FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-05-01' AND timestamp < '2001-06-01' GROUP BY 1) SELECT day, n FROM daily WHERE n > 75 ORDER BY day

WITH a AS (SELECT id, value->>'destination' AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-08'), b AS (SELECT d, count(*) AS n FROM a GROUP BY d) SELECT d, n FROM b ORDER BY n DESC, d LIMIT 5

SELECT t.id, t.dest FROM (SELECT id, value->>'destination' AS dest, timestamp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-01' AND timestamp < '2001-05-02') AS t ORDER BY t.timestamp DESC, t.id LIMIT 3

SELECT * FROM (SELECT * FROM (SELECT id, (value->>'distance')::int AS dist FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-02') a WHERE dist > 500) b ORDER BY dist DESC, id LIMIT 4

SELECT avg(delay) FROM (SELECT (value->>'delay')::int AS delay FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' ORDER BY timestamp LIMIT 100) t

WITH f(i, d) AS (SELECT id, value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-02') SELECT i, d FROM f ORDER BY i LIMIT 3

-- UNION ALL and UNION
SELECT id, 'ORD' AS o FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-01 06:30' UNION ALL SELECT id, 'SFO' FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-01' AND timestamp < '2001-03-01 07:00' ORDER BY 1, 2

SELECT count(*) FROM (SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' UNION ALL SELECT id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01') u

SELECT d FROM (SELECT value->>'destination' AS d FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-01-03' UNION SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-01-03') u ORDER BY d LIMIT 12

SELECT value->>'destination' AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-01-02' UNION SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-01-02' ORDER BY d LIMIT 10

SELECT 'first' AS k, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-04-01' UNION ALL SELECT 'second', count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-01' AND timestamp < '2001-07-01' ORDER BY k

-- tiers and bucket edges
SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-31 12:00' AND timestamp < '2001-02-01 12:00' AND (value->>'delay')::int >= 0

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 12:00' AND timestamp < '2001-04-01 12:00' AND value->>'destination' <> 'LGA'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-30 12:00' AND timestamp < '2001-05-01 12:00' AND (value->>'distance')::int < 1000

SELECT id, timestamp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 23:00' AND timestamp < '2001-04-01 06:00' ORDER BY timestamp, id

SELECT date_trunc('month', timestamp) AS m, count(*) FILTER (WHERE (value->>'delay')::int > 0) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-15' AND timestamp < '2001-05-15' GROUP BY 1 ORDER BY 1

SELECT id FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'delay')::int > 400 ORDER BY id

SELECT id, (value->>'delay')::int FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'delay')::int < -40 ORDER BY timestamp, id

-- the analytical mode (session option analytical = on): reads without a partition pin read
-- every partition of the range (here ORD, SFO and BOS), discovered from the route rows
-- mode: analytical
SELECT origin, count(*) FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin

-- mode: analytical
SELECT count(*) FROM flights WHERE timestamp >= '2001-03-15' AND timestamp < '2001-04-15'

-- mode: analytical
SELECT min(timestamp), max(timestamp), count(*) FROM flights WHERE timestamp >= '2001-02-01' AND timestamp < '2001-05-01'

-- mode: analytical
SELECT origin, timestamp, id FROM flights WHERE timestamp >= '2001-04-01' AND timestamp < '2001-04-02' ORDER BY timestamp, id LIMIT 10

-- mode: analytical
SELECT origin, id FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-07-01' ORDER BY timestamp DESC, id DESC LIMIT 5

-- mode: analytical
SELECT value->>'destination' AS dest, count(*), avg((value->>'delay')::int) FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-02-01' AND (value->>'delay')::int > 60 GROUP BY 1 HAVING count(*) > 5 ORDER BY 2 DESC, 1 LIMIT 10

-- mode: analytical
SELECT date_trunc('month', timestamp) AS m, count(*) FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

-- mode: analytical
SELECT count(*) FROM flights WHERE timestamp >= '2002-01-01' AND timestamp < '2002-02-01'

-- mode: analytical
SELECT origin, count(*) FROM flights WHERE timestamp >= '2001-06-30' AND timestamp < '2001-07-01' AND origin <> 'SFO' GROUP BY 1 ORDER BY 1

-- mode: analytical
SELECT origin, count(*) AS n FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-01-08' GROUP BY 1 UNION ALL SELECT 'all', count(*) FROM flights WHERE timestamp >= '2001-01-01' AND timestamp < '2001-01-08' ORDER BY 1

-- mode: analytical
SELECT origin, count(*) FROM flights WHERE timestamp >= '2001-03-01' AND timestamp < '2001-05-01' AND origin IN ('ORD', 'BOS') GROUP BY 1 ORDER BY 1
