-- The golden corpus' PostgreSQL-only part: queries over the same rows as corpus.sql (its
-- header), checked against PostgreSQL alone (e2e/golden_test.go), in the block format of
-- corpus.sql. These are what BI tools and analysts write that DuckDB spells or answers
-- differently: to_char patterns, ::text output of every type, numeric, AT TIME ZONE, windows,
-- GROUPING SETS, INTERSECT/EXCEPT, the generators' shapes. Directives, in comment lines of a
-- block:
--   -- postgres: SQL    what PostgreSQL runs where it must be spelled differently (value is
--                       json in PostgreSQL's table, bytea in flightsrv);
--   -- mode: analytical the query runs in a session with the analytical mode on;
--   -- refused: NAME    the engine refuses the construct NAME today (UNIMPLEMENTED), one of
--                       corpusRefusals in e2e/golden_test.go; PostgreSQL must answer it.

-- filters and CASE over every tier
SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND (value->>'delay')::int BETWEEN 30 AND 45 ORDER BY timestamp, id

SELECT id, value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' AND value->>'destination' IN ('DCA', 'LGA') AND (value->>'delay')::int <= 0 ORDER BY id

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' AND ((value->>'delay')::int > 20 OR (value->>'distance')::int < 400) AND NOT value->>'destination' = 'LAX'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND (value->>'delay')::int IS NOT NULL AND value->>'destination' <> 'MSP' AND value->>'destination' <> 'DTW'

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' AND value->>'destination' LIKE '_A_' AND (value->>'distance')::int > 300

SELECT id, CASE WHEN (value->>'delay')::int >= 60 THEN 'severe' WHEN (value->>'delay')::int >= 15 THEN 'late' WHEN (value->>'delay')::int < -10 THEN 'early' ELSE 'ok' END AS s FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY timestamp, id LIMIT 25

SELECT CASE WHEN (value->>'distance')::int < 500 THEN 'short' WHEN (value->>'distance')::int < 1500 THEN 'medium' ELSE 'long' END AS haul, count(*), avg((value->>'delay')::int)::float8 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT id, CASE value->>'destination' WHEN 'LGA' THEN 'New York' WHEN 'JFK' THEN 'New York' WHEN 'EWR' THEN 'New York' ELSE value->>'destination' END AS city FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 20

SELECT count(*) FILTER (WHERE CASE WHEN (value->>'delay')::int > 0 THEN true END) AS late, count(*) FILTER (WHERE CASE WHEN (value->>'delay')::int > 0 THEN true END IS NULL) AS other FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04'

SELECT id, (value->>'delay')::int > 15 AS late, (value->>'delay')::int > 15 IS TRUE AS t, NULLIF((value->>'delay')::int, 0) > 15 IS NOT FALSE AS nf FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 15

SELECT id, greatest((value->>'delay')::int, 0) AS g, least((value->>'delay')::int, 10) AS l, greatest(value->>'destination', 'M') AS gs FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 15

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND (value->>'delay')::int NOT IN (0, 1, 2) AND value->>'destination' NOT LIKE 'M%'

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'destination' = 'LGA' OR value->>'destination' = 'DCA' OR value->>'destination' = 'ORD')

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' AND value->>'destination' ILIKE '%a%' AND value->>'destination' NOT ILIKE 'l%'

SELECT id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' AND (value->>'delay')::int IS NULL ORDER BY id

SELECT id, timestamp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND timestamp >= '2001-03-31 22:00' AND timestamp < '2001-04-01 03:00' ORDER BY timestamp DESC, id DESC

SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'delay')::int > 180

SELECT id FROM flights WHERE origin = 'ORD' AND timestamp = TIMESTAMPTZ '2001-05-11 07:00:00+00' ORDER BY id

SELECT count(*) FROM flights WHERE origin = 'ORD' AND NOT (timestamp < '2001-06-25') AND timestamp < '2001-06-27'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-01' AND timestamp < '2001-04-01'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND origin = 'SFO' AND timestamp >= '2001-05-01' AND timestamp < '2001-06-01'

-- COALESCE and NULLIF
SELECT id, COALESCE(NULLIF((value->>'delay')::int, 0), -999) AS d0, COALESCE(value->>'nosuch', 'n/a') AS x FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 12

SELECT COALESCE(NULLIF(value->>'destination', 'LAX'), 'Los Angeles') AS d, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 6

SELECT sum(COALESCE(NULLIF((value->>'delay')::int, 0), 0)), count(NULLIF((value->>'delay')::int, 0)), count(NULLIF((value->>'delay')::int, 0)) FILTER (WHERE (value->>'distance')::int > 1000) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04'

SELECT id, NULLIF(value->>'destination', value->>'destination') AS n, COALESCE(NULL, NULL, value->>'destination') AS c FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT avg(NULLIF((value->>'delay')::int, 0)::float8), min(NULLIF(value->>'destination', 'ATL')), max(COALESCE(NULLIF((value->>'delay')::int, 0), -1)) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17'

-- string functions
SELECT id, left(value->>'destination', 1) AS l, right(id, 3) AS r, lpad(value->>'destination', 6, '*') AS lp, rpad(value->>'destination', 5, '-') AS rp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 10

SELECT id, split_part('2001-05-10', '-', 2) AS m, strpos(value->>'destination', 'A') AS p, position('S' IN value->>'destination') AS q FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 10

SELECT id, initcap(lower(value->>'destination') || ' airport') AS name, reverse(value->>'destination') AS rv, repeat(value->>'destination', 2) AS rp FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 10

SELECT id, btrim('  ' || (value->>'destination') || '  ') AS b, ltrim('xx' || (value->>'destination'), 'x') AS l, rtrim((value->>'destination') || '00', '0') AS r FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 10

SELECT id, upper(substr(id, 8)) AS s, substring(value->>'destination', 2) AS t, substring(value->>'destination' from 2 for 1) AS u FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 10

SELECT id, concat(origin, '-', value->>'destination', '-', (value->>'delay')::int) AS route, origin || '→' || (value->>'destination') AS arrow FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 10

SELECT id, length((value->>'destination') || id), octet_length('é' || (value->>'destination')), char_length('é' || (value->>'destination')) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 5

SELECT id, replace(replace(value->>'destination', 'A', '4'), 'O', '0') AS leet FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 10

SELECT left(value->>'destination', 1) AS letter, count(*), string_agg(DISTINCT value->>'destination', ',' ORDER BY value->>'destination') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' AND value->>'destination' ~ '^S[A-Z]{2}$' GROUP BY 1 ORDER BY 1

SELECT id, value->>'destination' ~* '^l' AS l, value->>'destination' !~ 'A' AS no_a, regexp_replace(value->>'destination', '[AEIOU]', '_', 'g') AS r FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 10

SELECT starts_with(value->>'destination', 'D') AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' GROUP BY 1 ORDER BY 1

SELECT id, lpad((value->>'delay')::int::text, 5, '0') AS padded, (value->>'delay')::int::text || ' min' AS t FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 10

SELECT id, left(value->>'destination', -1) AS l, right(value->>'destination', -1) AS r, split_part((value->>'destination') || '-x-y', '-', 3) AS p FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 6

-- date_trunc, date_bin, extract, date_part
SELECT date_trunc('minute', timestamp) AS m, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND timestamp < '2001-05-10 09:00' GROUP BY 1 ORDER BY 1

SELECT date_trunc('day', timestamp) AS d, count(*), min(id) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 1

SELECT date_trunc('week', timestamp) AS w, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT date_trunc('month', timestamp)::date AS m, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' GROUP BY 1 ORDER BY 1

SELECT date_trunc('quarter', timestamp) AS q, origin, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT date_bin(INTERVAL '15 minutes', timestamp, TIMESTAMPTZ '2001-01-01') AS b, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' AND timestamp < '2001-01-10 12:00' GROUP BY 1 ORDER BY 1

SELECT date_bin(INTERVAL '1 day', timestamp, TIMESTAMPTZ '2001-01-01 06:00:00+00') AS b, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 1

SELECT date_bin(INTERVAL '7 days', timestamp, TIMESTAMPTZ '2001-01-01') AS b, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT extract(epoch from timestamp) AS e, id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY timestamp, id LIMIT 5

SELECT extract(isodow from timestamp) AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT extract(week from timestamp) AS w, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' GROUP BY 1 ORDER BY 1

SELECT extract(doy from timestamp) AS d, extract(day from timestamp) AS dd, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1, 2 ORDER BY 1

SELECT extract(year from timestamp)::int AS y, extract(month from timestamp)::int AS m, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT date_part('hour', timestamp)::int AS h, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY 1 ORDER BY 1

SELECT id, extract(second from timestamp)::float8 AS s, extract(isoyear from timestamp)::int AS iy FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT floor(extract(epoch from timestamp) / 3600) * 3600 AS hour_epoch, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND timestamp < '2001-05-11' GROUP BY 1 ORDER BY 1

SELECT timestamp::date AS d, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' GROUP BY 1 ORDER BY 1

SELECT CAST(timestamp AS date) AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY 1 ORDER BY 1 DESC

SELECT date(timestamp) AS d, count(*), date('2001-04-01') AS c FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 1

SELECT date_trunc('day', timestamp)::date - DATE '2001-01-01' AS day_no, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' GROUP BY 1 ORDER BY 1

-- to_char patterns
SELECT id, to_char(timestamp, 'YYYY-MM-DD"T"HH24:MI:SS') AS iso FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 5

SELECT id, to_char(timestamp, 'FMMonth FMDD, YYYY') AS a, to_char(timestamp, 'Day') AS b, to_char(timestamp, 'FMDay') AS c FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT id, to_char(timestamp, 'HH12:MI AM') AS a, to_char(timestamp, 'HH12:MI pm') AS b, to_char(timestamp, 'hh:mi a.m.') AS c FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 8

SELECT id, to_char(timestamp, 'IYYY-"W"IW-ID') AS iso_week, to_char(timestamp, 'WW') AS ww, to_char(timestamp, 'CC') AS cc FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 6

SELECT id, to_char(timestamp, 'Q') AS q, to_char(timestamp, 'DDD') AS doy, to_char(timestamp, 'D') AS dow, to_char(timestamp, 'J') AS julian FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 6

SELECT id, to_char(timestamp, 'YYYY-MM-DD HH24:MI:SS TZ') AS tz, to_char(timestamp, 'OF') AS of FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 4

SELECT id, to_char(timestamp, 'MON mon Mon MONTH month') AS a, to_char(timestamp, 'DY dy Dy') AS b FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 4

SELECT id, to_char(timestamp, 'YY YYY Y,YYY') AS a, to_char(timestamp, 'SSSS') AS secs, to_char(timestamp, 'MS US') AS frac FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 4

SELECT to_char(timestamp, 'YYYY-MM') AS month, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT to_char(date_trunc('week', timestamp), 'YYYY-MM-DD') AS week, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' GROUP BY 1 ORDER BY 1

SELECT to_char(timestamp, 'Dy') AS dow, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, extract(dow from timestamp) ORDER BY extract(dow from timestamp)

SELECT id, to_char(timestamp, 'FMHH12 FMMI') AS a, to_char(timestamp, 'RM') AS rm, to_char(timestamp, 'fmrm') AS rm2 FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 5

SELECT id, to_char(timestamp, 'DDth Mon') AS a, to_char(timestamp, 'FMDDTH') AS b FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 6

SELECT to_char(timestamp, 'HH24') AS h, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' GROUP BY 1 ORDER BY 1

-- intervals and date arithmetic
SELECT id, timestamp + INTERVAL '90 minutes' AS a, timestamp - INTERVAL '1 week' AS b FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 5

SELECT id, timestamp + INTERVAL '1 month 2 days' AS a, timestamp - INTERVAL '1 year' AS b FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 5

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND timestamp > TIMESTAMPTZ '2001-05-17 00:00:00+00' - INTERVAL '2 days'

SELECT DATE '2001-03-01' - DATE '2001-02-01' AS days, DATE '2001-02-28' + 1 AS next

SELECT date_trunc('day', timestamp)::date - 1 AS prev, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY 1 ORDER BY 1

SELECT id, (timestamp + INTERVAL '30 days')::date AS due FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= TIMESTAMPTZ '2001-04-01 00:00:00+00' - INTERVAL '1 day' AND timestamp < TIMESTAMPTZ '2001-04-01 00:00:00+00' + INTERVAL '1 day'

SELECT max(timestamp) - min(timestamp) AS span FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17'

-- intervals as values (Arrow month_day_nano_interval): timestamp - timestamp, age, constants,
-- ::text in PostgreSQL's output form, arithmetic, comparisons and ordering, extract(epoch)
SELECT INTERVAL '1 day 2 hours 3 minutes 4 seconds' AS a, INTERVAL '-1 second' AS b, INTERVAL '3 months 2 days' AS c, INTERVAL '0.5 seconds' AS d, INTERVAL '1.5 years' AS e, INTERVAL '1.5 months' AS f, INTERVAL '1 day ago' AS g, '2 weeks 1.25 days'::interval AS h

SELECT INTERVAL '1 day 02:03:04'::text AS a, INTERVAL '-1 second'::text AS b, INTERVAL '3 mons 2 days'::text AS c, INTERVAL '0.5 seconds'::text AS d, INTERVAL '-1 day 2 hours'::text AS e, INTERVAL '1 year -1 month'::text AS f, INTERVAL '100 hours'::text AS g, INTERVAL '0'::text AS h, INTERVAL '-2 years -3 months -00:00:01.25'::text AS i, INTERVAL '1 year 1 mon 1 day 00:00:00.000001'::text AS j

SELECT id, timestamp - TIMESTAMPTZ '2001-01-01 00:00:00+00' AS since, (timestamp - TIMESTAMPTZ '2001-05-10 12:00:00+00')::text AS t FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-11' ORDER BY since DESC, id LIMIT 20

SELECT id, (timestamp - date_trunc('month', timestamp))::text AS into_month, date_trunc('day', timestamp) - timestamp AS before_midnight FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-30' AND timestamp < '2001-02-02' ORDER BY timestamp, id LIMIT 30

SELECT date_trunc('month', timestamp) AS m, max(timestamp) - min(timestamp) AS spread, (max(timestamp) - min(timestamp))::text AS spread_text FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT id, age(timestamp, TIMESTAMPTZ '2000-02-29 18:45:30.5+00')::text AS a, age(TIMESTAMPTZ '2001-01-31 00:00:00+00', timestamp) AS b, age(timestamp, TIMESTAMPTZ '2001-03-31 23:00:00+00') AS c FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY timestamp, id LIMIT 30

SELECT age(TIMESTAMPTZ '2001-03-01 00:00:00+00', TIMESTAMPTZ '2001-01-31 12:30:00+00') AS a, age(TIMESTAMPTZ '2001-01-31 12:30:00+00', TIMESTAMPTZ '2001-03-01 00:00:00+00') AS b, age(TIMESTAMPTZ '2004-02-29 00:00:00+00', TIMESTAMPTZ '2001-03-31 23:59:59.5+00')::text AS c, age(TIMESTAMPTZ '2001-01-01 00:00:00+00', TIMESTAMPTZ '2001-01-01 00:00:00+00')::text AS d

SELECT (INTERVAL '1 day' * 1.5)::text AS a, (INTERVAL '1 month' * 0.5)::text AS b, (INTERVAL '1 month' / 3)::text AS c, (3 * INTERVAL '1 hour')::text AS d, (INTERVAL '1 year' * 0.1)::text AS e, (INTERVAL '1 mon 1 day' / 7)::text AS f, INTERVAL '1 day' + INTERVAL '1 hour' AS g, INTERVAL '1 day' - INTERVAL '1 month' AS h, -INTERVAL '1 day 1 hour' AS i, INTERVAL '2 mons 3 days 04:05:06' * -2.5 AS j

SELECT INTERVAL '1 month' = INTERVAL '30 days' AS a, INTERVAL '1 day' > INTERVAL '23 hours' AS b, INTERVAL '1 day' < '25 hours' AS c, INTERVAL '1 mon' < INTERVAL '29 days 25:00' AS d, INTERVAL '-1 day' <> INTERVAL '-24 hours' AS e, INTERVAL '1 year' >= INTERVAL '360 days' AS f

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND timestamp - date_trunc('day', timestamp) > INTERVAL '18 hours'

SELECT id, (value->>'delay')::int * INTERVAL '1 minute' AS late, ((value->>'delay')::int * INTERVAL '90 seconds')::text AS late_text FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-04-10' AND timestamp < '2001-04-11' ORDER BY late DESC, id LIMIT 15

SELECT id, timestamp + (timestamp - date_trunc('month', timestamp)) AS twice, timestamp - justify_hours(INTERVAL '50 hours') AS back, timestamp + (value->>'delay')::int * INTERVAL '1 minute' / 2 AS half_late FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-31' AND timestamp < '2001-02-01' ORDER BY timestamp, id LIMIT 20

SELECT extract(epoch from INTERVAL '1 day 1 second') AS a, date_part('epoch', INTERVAL '1 year 1 month') AS b, extract(epoch from INTERVAL '-1.5 seconds') AS c, extract(epoch from INTERVAL '2 years 3 mons 4 days 00:00:00.000001') AS d

SELECT value->>'destination' AS dest, extract(epoch from max(timestamp) - min(timestamp)) AS secs, count(timestamp - TIMESTAMPTZ '2001-02-01 00:00:00+00') AS n FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01' AND timestamp < '2001-03-01' GROUP BY 1 ORDER BY 1

SELECT justify_hours(INTERVAL '50 hours')::text AS a, justify_days(INTERVAL '65 days')::text AS b, justify_interval(INTERVAL '1 mon -1 hour')::text AS c, justify_hours(INTERVAL '-1 day 25 hours')::text AS d, justify_interval(INTERVAL '-1 mon 35 days 25:00') AS e

SELECT id, timestamp + INTERVAL '1.5 months' AS a, timestamp - INTERVAL '0.25 months 1 hour' AS b, TIMESTAMPTZ '2001-01-31 10:00:00+00' + INTERVAL '1.5 months' AS c FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-30' AND timestamp < '2001-02-01' ORDER BY timestamp, id LIMIT 20

SELECT id, timestamp - date_trunc('hour', timestamp) AS past, (timestamp - date_trunc('hour', timestamp)) IS NULL AS n, NULLIF(timestamp - date_trunc('hour', timestamp), INTERVAL '0') AS nz, GREATEST(timestamp - date_trunc('hour', timestamp), INTERVAL '30 minutes') AS g, timestamp - date_trunc('hour', timestamp) BETWEEN INTERVAL '10 minutes' AND INTERVAL '20 minutes' AS b, timestamp - date_trunc('hour', timestamp) IN (INTERVAL '0', INTERVAL '30 minutes') AS i, CASE timestamp - date_trunc('hour', timestamp) WHEN INTERVAL '0' THEN 'on the hour' ELSE 'past' END AS c FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-05-01' AND timestamp < '2001-05-02' ORDER BY timestamp, id LIMIT 40

SELECT count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' AND (value->>'delay')::smallint IN (0, 5, 10) AND (value->>'distance')::smallint = ANY(ARRAY[185, 200, 3000000000])

SELECT * FROM (SELECT id, timestamp - TIMESTAMPTZ '2001-02-01 00:00:00+00' AS d FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-02-25' AND timestamp < '2001-03-03') s WHERE d > INTERVAL '27 days 12:00' ORDER BY d DESC, id LIMIT 25

SELECT id, lag(id) OVER (ORDER BY timestamp, id) AS prev, timestamp - lag(timestamp) OVER (ORDER BY timestamp, id) AS gap FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31 18:00' AND timestamp < '2001-04-01 06:00' ORDER BY timestamp, id

SELECT a.id, b.d FROM (SELECT id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-10' AND timestamp < '2001-04-11') a JOIN (SELECT id, timestamp - date_trunc('day', timestamp) AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-04-10' AND timestamp < '2001-04-11') b ON a.id = b.id ORDER BY b.d, a.id LIMIT 30

SELECT value->>'destination' AS dest, sum(timestamp - date_trunc('day', timestamp)) AS total, avg(timestamp - date_trunc('day', timestamp)) AS mean, avg((value->>'delay')::int * INTERVAL '1 minute')::text AS mean_late, sum(INTERVAL '1 mon 1 day' * (value->>'distance')::int / 1000) FILTER (WHERE (value->>'delay')::int > 10) AS f FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 ORDER BY 1

SELECT id, COALESCE(CASE WHEN (value->>'delay')::int > 0 THEN (value->>'delay')::int * INTERVAL '1 minute' END, INTERVAL '0')::text AS late FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-04-01' AND timestamp < '2001-04-01 03:00' ORDER BY timestamp, id

-- casts and ::text output of every type
SELECT 1::text, (-2)::smallint::text, 3000000000::bigint::text, 1.5::float8::text, (-0.0)::float8::text, 1e15::float8::text, 1e16::float8::text

SELECT true::text, false::text, (1 < 2)::text, NULL::boolean::text, 'yes'::boolean, 'off'::boolean, 't'::boolean

SELECT TIMESTAMPTZ '2001-04-01 06:59:00+00'::text, TIMESTAMPTZ '2001-04-01 06:59:00.5+00'::text, TIMESTAMPTZ '2001-04-01 06:59:00.123456+00'::text

SELECT TIMESTAMP '2001-04-01 06:59:00'::text, DATE '2001-04-01'::text, TIMESTAMP '2001-04-01 00:00:00.000010'::text

SELECT 1.50::text, 0.1 + 0.2 = 0.3, (0.1 + 0.2)::text, 123.456::numeric(6,2)::text, (-2.5)::numeric(4,0)::text, 1e2::text

SELECT 2.5::int, (-2.5)::int, 3.5::int, 2.5::float8::int, 2.4999::int, (-0.5)::int, 0.5::float8::int

SELECT '42'::int + 1, ' 7 '::int, '3.25'::float8 * 2, '2001-04-01'::date, '2001-04-01 12:00+02'::timestamptz

SELECT CAST('12' AS integer), CAST(12.7 AS integer), CAST(12 AS text) || 'x', CAST(1 AS boolean), CAST('1.5' AS numeric(3,1))

SELECT id, timestamp::text AS t, (value->>'delay')::int::text AS dl, ((value->>'distance')::int::float8 / 7)::text AS f FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 5

SELECT id, timestamp::date::text AS d, (timestamp AT TIME ZONE 'UTC')::text AS w, ((value->>'delay')::int > 0)::text AS b FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT id, (value->>'distance')::int::numeric(8,2)::text AS n, ((value->>'distance')::int::float8 / 3)::numeric(10,3)::text AS q, (value->>'distance')::int::bigint::text AS b FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 5

SELECT id, (value->>'delay')::float8::int AS i, (value->>'distance')::bigint AS b, ((value->>'distance')::float8 / 7)::int AS r FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 8

SELECT id, value->>'delay' || '' AS t, (value->'destination')::text AS j FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 5

SELECT 10 / 4, -7 / 2, 10 % 4, 10::float8 / 4, (-8) % 3, 7 / -2

SELECT abs(-5), abs(-2.5), mod(17, 5), mod(-17, 5), sign(-3.2::float8), sign(0::float8), sqrt(16::float8), power(2, 0.5::float8), round(2.5::float8), round(-3.5::float8), round(7)

-- smallint: int2 end to end, promoted as PostgreSQL promotes it
SELECT 1::smallint AS a, 32767::int2 AS b, (-32768)::smallint AS c, '-7'::int2 AS d, 2.5::smallint AS e, CAST(-2.5 AS smallint) AS f

SELECT 1::smallint + 1::smallint AS a, 2::int2 * 3::int2 AS b, 7::int2 / 2::int2 AS c, 7::int2 % 3::int2 AS d, -(5::int2) AS e, 32767::smallint + 1 AS f, 1::smallint + 1::bigint AS g, 1::smallint + 0.5 AS h

SELECT id, (value->>'delay')::smallint AS d, (value->>'delay')::smallint + 1::smallint AS d1, (value->>'delay')::smallint * 2 AS d2 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-11' ORDER BY d, id LIMIT 20

SELECT value->>'destination' AS dest, sum((value->>'delay')::smallint) AS s, min((value->>'delay')::int2) AS lo, max((value->>'delay')::int2) AS hi, count((value->>'delay')::int2) AS n FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

SELECT (value->>'distance')::smallint / 100::smallint AS band, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' GROUP BY 1 ORDER BY 1

-- extract of fractional seconds
SELECT extract(second from TIMESTAMPTZ '2001-01-01 00:00:01.5+00') AS s, extract(milliseconds from TIMESTAMPTZ '2001-01-01 00:00:01.5+00') AS ms, extract(epoch from TIMESTAMPTZ '2001-01-01 00:00:01.5+00') AS e

SELECT date_part('second', TIMESTAMPTZ '2001-01-01 00:00:01.5+00') AS s, date_part('microseconds', TIMESTAMPTZ '2001-01-01 00:00:01.25+00') AS us, date_part('dow', TIMESTAMPTZ '2001-01-01 00:00:01.5+00') AS dow

SELECT id, extract(second from timestamp + INTERVAL '1.25 seconds') AS s, extract(milliseconds from timestamp + INTERVAL '0.5 seconds') AS ms, date_part('minute', timestamp) AS m FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 5

SELECT 123456789012345678::float8, 9007199254740993::float8, (-9007199254740993)::float8::text

SELECT (1::float8 / 3)::text, (2::float8 / 3)::text

SELECT 1e-7::float8::text

SELECT 123456789012345678::float8::text

SELECT 'NaN'::float8::text, '-Infinity'::float8::text

-- numeric rounding
SELECT round(2.5), round(-2.5), round(2.45, 1), round(-2.45, 1), round(1234.5678, -2), round(0.5::float8), round(1.5::float8), round(2.5::float8)

SELECT trunc(2.99), trunc(-2.99), trunc(1234.5678, 2), trunc(1234.5678, -2), ceil(2.1), ceil(-2.1), floor(2.9), floor(-2.9)

SELECT round(10::numeric / 3, 4), round(2::numeric / 3, 10), round(100.0 * 7 / 9, 2), trunc(100.0 * 7 / 9, 2)

SELECT id, round((value->>'distance')::int::numeric / 60, 2) AS hours, round(((value->>'delay')::int)::numeric * 1.1, 1) AS d11 FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 10

SELECT id, round(((value->>'distance')::float8 / 7)::numeric, 1) AS r1, trunc(((value->>'distance')::float8 / 7)::numeric, 1) AS t1 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 10

SELECT value->>'destination' AS d, round(avg((value->>'delay')::int)::numeric, 2) AS avg_delay, round(100.0 * count(*) FILTER (WHERE (value->>'delay')::int > 15) / count(*), 1) AS pct_late FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 HAVING count(*) > 200 ORDER BY 1

SELECT round(sum((value->>'distance')::int)::numeric / count(*), 3) AS mean_dist, ceil(avg((value->>'distance')::int)) AS c, floor(avg((value->>'distance')::int)) AS f FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17'

SELECT id, ceil((value->>'distance')::int::float8 / 100) AS c, floor((value->>'distance')::int::float8 / 100) AS f, trunc((value->>'distance')::int::float8 / 100) AS t, round((value->>'distance')::int::float8 / 100) AS r FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id LIMIT 10

SELECT id, (value->>'distance')::int::numeric(10,2) * 1.0375 AS fare, ((value->>'distance')::int::numeric(10,2) * 1.0375)::numeric(10,2) AS rounded FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 8

SELECT id, round((value->>'delay')::int / 7.0, 3) AS r FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 8

SELECT 1.005::numeric(4,2), 1.015::numeric(4,2), -1.005::numeric(4,2), 99.995::numeric(5,2)

SELECT 0.1::float8 + 0.2::float8 = 0.3::float8, 0.1 + 0.2 = 0.3

-- aggregates with FILTER, HAVING
SELECT count(*), count((value->>'delay')::int), sum((value->>'delay')::int), min((value->>'delay')::int), max((value->>'delay')::int), avg((value->>'delay')::int)::float8 FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05'

SELECT count(*) FILTER (WHERE (value->>'delay')::int > 0) AS late, sum((value->>'distance')::int) FILTER (WHERE value->>'destination' = 'LAX') AS lax_miles, avg((value->>'delay')::int) FILTER (WHERE (value->>'distance')::int > 2000) AS long_avg, max(timestamp) FILTER (WHERE (value->>'delay')::int > 100) AS last_bad FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17'

SELECT value->>'destination' AS d, count(*) AS n, count(*) FILTER (WHERE (value->>'delay')::int > 15) AS late FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 HAVING count(*) FILTER (WHERE (value->>'delay')::int > 15) >= 3 ORDER BY late DESC, d

SELECT value->>'destination' AS d, sum((value->>'distance')::int) AS miles FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY 1 HAVING sum((value->>'distance')::int) > 20000 AND min((value->>'delay')::int) < 0 ORDER BY 2 DESC, 1

SELECT origin, count(DISTINCT value->>'destination') AS dests, count(DISTINCT date_trunc('day', timestamp)) AS days FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin ORDER BY origin

SELECT min(timestamp), max(timestamp), min(id), max(id), min(value->>'destination'), max(value->>'destination') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17'

SELECT stddev((value->>'delay')::int::float8), variance((value->>'delay')::int::float8), stddev_pop((value->>'distance')::int::float8), var_samp((value->>'distance')::int::float8) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17'

SELECT bool_and((value->>'delay')::int > -60), bool_or((value->>'delay')::int > 300), every((value->>'distance')::int > 50) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04'

SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY (value->>'delay')::int) AS med, percentile_disc(0.9) WITHIN GROUP (ORDER BY (value->>'delay')::int) AS p90, mode() WITHIN GROUP (ORDER BY (value->>'delay')::int) AS top FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01'

SELECT value->>'destination' AS d, percentile_cont(0.5) WITHIN GROUP (ORDER BY (value->>'distance')::int::float8) AS med FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' GROUP BY 1 HAVING count(*) > 20 ORDER BY 1

SELECT string_agg(value->>'destination', ',' ORDER BY value->>'destination') FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' AND timestamp < '2001-01-10 08:00'

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' HAVING count(*) > 0

SELECT count(*), sum((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND (value->>'delay')::int > 10000 HAVING count(*) = 0

SELECT avg((value->>'delay')::int::float8) AS a, sum((value->>'delay')::int)::float8 / count(*) AS b, avg((value->>'distance')::int) > 700 AS far FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05'

SELECT count(*) AS n FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND value->>'destination' = 'SFO' GROUP BY origin HAVING origin <> 'SFO' ORDER BY n

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 HAVING count(DISTINCT origin) = 3 ORDER BY 2 DESC, 1 LIMIT 10

SELECT sum((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 0) - sum(-(value->>'delay')::int) FILTER (WHERE (value->>'delay')::int < 0) AS net, count(*) FILTER (WHERE (value->>'delay')::int = 0) AS on_time FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08'

-- ORDER BY, LIMIT, OFFSET
SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' ORDER BY delay DESC NULLS LAST, id LIMIT 10 OFFSET 5

SELECT id, value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY value->>'destination' DESC, id ASC LIMIT 7

SELECT id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-01' AND timestamp < '2001-06-01' ORDER BY timestamp, id OFFSET 20000

SELECT id, timestamp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY timestamp DESC, id LIMIT 3 OFFSET 100

SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY n DESC, d LIMIT 5 OFFSET 5

SELECT id FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY (value->>'distance')::int DESC, (value->>'delay')::int, id FETCH FIRST 6 ROWS ONLY

SELECT id, (value->>'delay')::int FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY abs((value->>'delay')::int) DESC, id LIMIT 5

SELECT id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT ALL OFFSET 280

SELECT id, value->>'destination' AS d FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY 2 NULLS FIRST, 1 DESC LIMIT 4

-- CTEs and subqueries in FROM
WITH late AS (SELECT id, value->>'destination' AS d, (value->>'delay')::int AS delay FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND (value->>'delay')::int > 30) SELECT d, count(*), max(delay) FROM late GROUP BY d ORDER BY 2 DESC, d LIMIT 5

WITH daily AS (SELECT date_trunc('day', timestamp) AS day, count(*) AS n, avg((value->>'delay')::int) AS a FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' GROUP BY 1) SELECT day, n, round(a::numeric, 2) FROM daily WHERE n > 130 ORDER BY day

WITH a AS (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' GROUP BY 1), b AS (SELECT d, n, round(100.0 * n / sum(n) OVER (), 2) AS pct FROM a) SELECT d, n, pct FROM b ORDER BY n DESC, d LIMIT 5

SELECT hour, n FROM (SELECT extract(hour from timestamp) AS hour, count(*) AS n FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' GROUP BY 1) t WHERE n >= 40 ORDER BY hour

SELECT * FROM (SELECT id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17') x WHERE delay > 20 AND dest <> 'LGA' ORDER BY delay DESC, id LIMIT 8

WITH x AS (SELECT * FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08') SELECT count(*), min(timestamp), max(id) FROM x

WITH x AS (SELECT timestamp AS t, id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') SELECT date_trunc('month', t) AS m, count(*) FROM x WHERE t >= '2001-03-15' GROUP BY 1 ORDER BY 1

SELECT count(*) FROM (SELECT DISTINCT value->>'destination' FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01') t

SELECT d, n FROM (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3) top ORDER BY d

SELECT s.origin, s.n FROM (SELECT origin, count(*) AS n FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY origin) AS s WHERE s.n > 10000 ORDER BY s.origin

-- UNION, INTERSECT, EXCEPT
SELECT value->>'destination' AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' INTERSECT SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY d

SELECT value->>'destination' AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' EXCEPT SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY d

SELECT value->>'destination' AS d FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' UNION SELECT value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND value->>'destination' LIKE 'S%' ORDER BY d LIMIT 15

SELECT 'late' AS k, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND (value->>'delay')::int > 15 UNION ALL SELECT 'early', count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND (value->>'delay')::int < 0 UNION ALL SELECT 'all', count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY 1

SELECT origin, value->>'destination' AS d FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND timestamp < '2001-01-02' INTERSECT SELECT origin, value->>'destination' FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND timestamp >= '2001-06-29' ORDER BY 1, 2

SELECT value->>'destination' AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' INTERSECT ALL SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY d

SELECT value->>'destination' AS d FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' EXCEPT ALL SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY d

SELECT 1 AS x UNION SELECT 2 UNION SELECT 1 ORDER BY x

SELECT 3 AS x INTERSECT SELECT 3 EXCEPT SELECT 4 ORDER BY x

SELECT extract(month from timestamp)::int AS m FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' UNION SELECT extract(month from timestamp)::int FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY m

-- window functions
SELECT id, row_number() OVER (ORDER BY timestamp, id) AS rn FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY rn LIMIT 20

SELECT id, (value->>'delay')::int, rank() OVER (ORDER BY (value->>'delay')::int DESC) AS r, dense_rank() OVER (ORDER BY (value->>'delay')::int DESC) AS dr FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY r, id LIMIT 20

SELECT id, value->>'destination', lag((value->>'delay')::int) OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id) AS prev, lead((value->>'delay')::int, 1, 0) OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id) AS next FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY value->>'destination', timestamp, id

SELECT id, sum((value->>'delay')::int) OVER (ORDER BY timestamp, id ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS moving FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY timestamp, id

SELECT id, avg((value->>'distance')::int) OVER (PARTITION BY date_trunc('day', timestamp)) AS day_avg FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY timestamp, id LIMIT 30

SELECT date_trunc('day', timestamp) AS day, count(*) AS n, sum(count(*)) OVER (ORDER BY date_trunc('day', timestamp)) AS running FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' GROUP BY 1 ORDER BY 1

SELECT value->>'destination' AS d, count(*) AS n, rank() OVER (ORDER BY count(*) DESC) AS r, round(100.0 * count(*) / sum(count(*)) OVER (), 2) AS pct FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY r, d LIMIT 10

SELECT * FROM (SELECT value->>'destination' AS d, id, (value->>'delay')::int AS delay, row_number() OVER (PARTITION BY value->>'destination' ORDER BY (value->>'delay')::int DESC, id) AS rn FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17') t WHERE rn <= 2 ORDER BY d, rn

SELECT id, ntile(4) OVER (ORDER BY (value->>'distance')::int, id) AS q, percent_rank() OVER (ORDER BY (value->>'distance')::int) AS pr, cume_dist() OVER (ORDER BY (value->>'distance')::int) AS cd FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id

SELECT id, first_value(id) OVER w AS f, last_value(id) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS l, nth_value(id, 2) OVER w AS second FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' WINDOW w AS (PARTITION BY value->>'destination' ORDER BY timestamp, id) ORDER BY id

SELECT origin, date_trunc('month', timestamp) AS m, count(*) AS n, count(*) - lag(count(*)) OVER (PARTITION BY origin ORDER BY date_trunc('month', timestamp)) AS change FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT id, min((value->>'delay')::int) OVER (PARTITION BY value->>'destination') AS best, max((value->>'delay')::int) OVER (PARTITION BY value->>'destination') AS worst, count(*) OVER (PARTITION BY value->>'destination') AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' ORDER BY id

SELECT id, (value->>'delay')::int - avg((value->>'delay')::int) OVER () AS dev FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND timestamp < '2001-05-11' ORDER BY id

SELECT id, count(*) OVER (ORDER BY timestamp RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS upto FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY timestamp, id

-- GROUPING SETS, ROLLUP, CUBE
SELECT origin, date_trunc('month', timestamp) AS m, count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY ROLLUP (origin, date_trunc('month', timestamp)) ORDER BY 1 NULLS LAST, 2 NULLS LAST

SELECT value->>'destination' AS d, extract(dow from timestamp) AS dow, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' GROUP BY CUBE (1, 2) ORDER BY 1 NULLS FIRST, 2 NULLS FIRST

SELECT origin, value->>'destination' AS d, count(*), GROUPING(origin, value->>'destination') AS g FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND timestamp < '2001-01-08' GROUP BY GROUPING SETS ((origin), (value->>'destination'), ()) ORDER BY 4, 1, 2

SELECT value->>'destination' AS d, sum((value->>'distance')::int) AS miles FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY ROLLUP (value->>'destination') ORDER BY 2 DESC, 1 LIMIT 6

SELECT origin, count(*), avg((value->>'delay')::int::float8) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY GROUPING SETS (origin, ()) ORDER BY 1 NULLS LAST

SELECT origin FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY ROLLUP (origin) ORDER BY 1 NULLS LAST

SELECT 1 AS one, GROUPING(origin) AS g FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-10' GROUP BY GROUPING SETS ((origin), ()) ORDER BY 2

-- AT TIME ZONE and local time
SELECT id, timestamp AT TIME ZONE 'America/Chicago' AS local, (timestamp AT TIME ZONE 'America/Chicago')::text AS t FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND timestamp >= '2001-04-01 06:00' AND timestamp < '2001-04-01 10:00' ORDER BY timestamp, id

SELECT date_trunc('day', timestamp AT TIME ZONE 'America/Los_Angeles') AS local_day, count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' GROUP BY 1 ORDER BY 1

SELECT extract(hour from timestamp AT TIME ZONE 'America/New_York') AS h, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY 1 ORDER BY 1

SELECT CAST(timestamp AT TIME ZONE 'America/Chicago' AS date) AS d, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 1

SELECT to_char(timestamp AT TIME ZONE 'Europe/Paris', 'YYYY-MM-DD HH24:MI') AS paris, id FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 5

SELECT date_trunc('month', timestamp, 'Asia/Tokyo') AS m, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT (TIMESTAMP '2001-04-01 02:30:00' AT TIME ZONE 'America/Chicago')::text, (TIMESTAMPTZ '2001-10-28 07:30:00+00' AT TIME ZONE 'America/Chicago')::text, timezone('Asia/Kolkata', TIMESTAMPTZ '2001-01-01 00:00:00+00')::text

SELECT count(*) FROM flights WHERE origin IN ('ORD', 'SFO', 'BOS') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (timestamp AT TIME ZONE 'America/Chicago')::date = DATE '2001-04-01'

SELECT date_trunc('week', timestamp AT TIME ZONE 'America/Chicago') AT TIME ZONE 'America/Chicago' AS week_start, count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' GROUP BY 1 ORDER BY 1

-- JSON operators on value
SELECT id, value->'delay' AS j, value->>'delay' AS t, value #> '{destination}' AS p, value #>> '{distance}' AS q FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 6

SELECT id, json_extract_path_text(value, 'destination') AS d, json_extract_path(value, 'delay')::text AS j FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY id LIMIT 6

SELECT (value->>'delay')::float8 AS f, (value->>'distance')::bigint AS b, (value->>'destination')::text AS s FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 4

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND value->>'nosuch' IS NULL AND value->'delay' IS NOT NULL

SELECT value->>'destination' AS d, sum((value->>'distance')::int) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' GROUP BY value->>'destination' ORDER BY 2 DESC, 1 LIMIT 4

SELECT id, value->>'delay' = '0' AS zero, (value->'destination')::text = '"LGA"' AS lga FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 10

SELECT id, value FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 3

SELECT count(*) FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-01-25' AND timestamp < '2001-05-05' AND (value->>'delay')::int IN (SELECT 1)

-- joins and subqueries in expressions
SELECT f.id, g.id, g.value->>'destination' FROM flights f JOIN flights g ON f.id = g.id WHERE f.origin = 'BOS' AND f.timestamp >= '2001-01-10' AND f.timestamp < '2001-01-17' AND g.origin = 'BOS' AND g.timestamp >= '2001-01-10' AND g.timestamp < '2001-01-17' ORDER BY 1 LIMIT 5

SELECT a.d, a.n, b.n FROM (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-02-01' GROUP BY 1) a LEFT JOIN (SELECT value->>'destination' AS d, count(*) AS n FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-07-01' GROUP BY 1) b ON a.d = b.d ORDER BY 1

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND value->>'destination' IN (SELECT value->>'destination' FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17')

SELECT count(*) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' AND EXISTS (SELECT 1 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' AND value->>'destination' = 'DCA')

SELECT id, (value->>'delay')::int - (SELECT avg((value->>'delay')::int) FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17') AS vs_avg FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-05-10' AND timestamp < '2001-05-17' ORDER BY id LIMIT 5

SELECT DISTINCT ON (value->>'destination') value->>'destination' AS d, id, (value->>'delay')::int FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY value->>'destination', (value->>'delay')::int DESC, id

SELECT n FROM generate_series(1, 5) AS n ORDER BY n

SELECT x FROM unnest(ARRAY[3, 1, 2]) AS x ORDER BY x

SELECT value->>'destination', (regexp_match(value->>'destination', '^(.)(.)'))[2] FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 3

SELECT sum((value->>'distance')::bigint * 1000000000000000) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08'

-- the analytical mode: every partition of the range
-- mode: analytical
SELECT origin, count(*), avg((value->>'delay')::int::float8) FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY origin ORDER BY origin

-- mode: analytical
SELECT date_trunc('day', timestamp) AS day, count(*) FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 ORDER BY 1

-- mode: analytical
SELECT value->>'destination' AS d, count(*) FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' AND (value->>'delay')::int > 60 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 8

-- mode: analytical
SELECT origin, value->>'destination' AS d, count(*), rank() OVER (PARTITION BY origin ORDER BY count(*) DESC) AS r FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1, 2 ORDER BY 1, 4, 2 LIMIT 12

-- mode: analytical
SELECT origin, extract(hour from timestamp)::int AS h, count(*) FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY ROLLUP (1, 2) ORDER BY 1 NULLS LAST, 2 NULLS LAST

-- mode: analytical
SELECT origin, round(100.0 * count(*) FILTER (WHERE (value->>'delay')::int > 15) / count(*), 2) AS pct FROM flights WHERE timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 ORDER BY 1

-- what BI tools send: Superset (virtual datasets, time grains, TO_TIMESTAMP filters)
SELECT DATE_TRUNC('day', timestamp) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-03-25 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-04-05 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('day', timestamp) ORDER BY __timestamp LIMIT 10000

SELECT DATE_TRUNC('week', timestamp) AS __timestamp, dest AS dest, AVG(delay) AS "AVG(delay)" FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-03-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('week', timestamp), dest ORDER BY __timestamp, dest LIMIT 50

SELECT dest AS dest, COUNT(*) AS count FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-05-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-06-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY dest ORDER BY count DESC, dest LIMIT 10

SELECT DATE_TRUNC('month', timestamp) AS __timestamp, SUM((value->>'distance')::int) AS "SUM(distance)" FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-07-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('month', timestamp) ORDER BY "SUM(distance)" DESC LIMIT 10000

SELECT DATE_TRUNC('hour', timestamp) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-04-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-04-02 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('hour', timestamp) ORDER BY __timestamp

SELECT DATE_TRUNC('minute', timestamp) + INTERVAL '5 minute' * FLOOR(EXTRACT(minute FROM timestamp) / 5) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-05-10 06:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-05-10 12:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY 1 ORDER BY 1

SELECT DATE_TRUNC('hour', timestamp) + INTERVAL '30 minute' * FLOOR(EXTRACT(minute FROM timestamp) / 30) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-03-31 12:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-04-01 12:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY 1 ORDER BY 1

SELECT DATE_TRUNC('quarter', timestamp) AS __timestamp, MAX(delay) AS "MAX(delay)", MIN(delay) AS "MIN(delay)" FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-07-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('quarter', timestamp) ORDER BY __timestamp

SELECT DATE_TRUNC('year', timestamp) AS __timestamp, COUNT(DISTINCT dest) AS "COUNT_DISTINCT(dest)" FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2002-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('year', timestamp) ORDER BY __timestamp

SELECT origin AS origin, dest AS dest, COUNT(*) AS count FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-02-14 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-02-21 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND dest IN ('LAX', 'LGA', 'SEA') GROUP BY origin, dest ORDER BY count DESC, origin, dest LIMIT 100

SELECT COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-06-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-06-08 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') LIMIT 50000

SELECT id AS id, timestamp AS timestamp, delay AS delay FROM (SELECT origin, timestamp, id, (value->>'delay')::int AS delay, value->>'destination' AS dest FROM flights WHERE origin IN ('SFO', 'BOS')) AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-04-30 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-05-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND delay > 30 ORDER BY timestamp DESC, id LIMIT 20

SELECT DATE_TRUNC('day', timestamp) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-03-20 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-03-20 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('day', timestamp) ORDER BY __timestamp

SELECT DATE_TRUNC('day', timestamp) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-04-10 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-04-05 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY DATE_TRUNC('day', timestamp) ORDER BY __timestamp

-- Superset's sub-minute grains and intervals times numbers
SELECT DATE_TRUNC('minute', timestamp + INTERVAL '7 seconds' * EXTRACT(minute FROM timestamp)) + INTERVAL '5 seconds' * FLOOR(EXTRACT(SECOND FROM timestamp + INTERVAL '7 seconds' * EXTRACT(minute FROM timestamp)) / 5) AS __timestamp, COUNT(*) AS count FROM (SELECT * FROM flights WHERE origin = 'ORD') AS virtual_table WHERE timestamp >= TO_TIMESTAMP('2001-05-10 06:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') AND timestamp < TO_TIMESTAMP('2001-05-10 08:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US') GROUP BY 1 ORDER BY 1

SELECT id, timestamp - INTERVAL '1 hour' * 2 AS a, timestamp + INTERVAL '90 seconds' * 1.5 AS b, timestamp + 3 * INTERVAL '1 day 2 hours' AS c, timestamp + INTERVAL '1 minute' * ((value->>'delay')::int) AS arrival FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY id LIMIT 10

SELECT id, timestamp + INTERVAL '1 second' * ((value->>'distance')::float8 / 7) AS t FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' ORDER BY id LIMIT 10

-- Metabase (schema-qualified quoted identifiers, CAST AS date, report time zone)
SELECT "public"."flights"."origin" AS "origin", CAST("public"."flights"."timestamp" AS date) AS "timestamp", COUNT(*) AS "count" FROM "public"."flights" WHERE ("public"."flights"."origin" = 'BOS') AND ("public"."flights"."timestamp" >= timestamp with time zone '2001-01-08 00:00:00.000Z') AND ("public"."flights"."timestamp" < timestamp with time zone '2001-01-15 00:00:00.000Z') GROUP BY "public"."flights"."origin", CAST("public"."flights"."timestamp" AS date) ORDER BY "public"."flights"."origin" ASC, CAST("public"."flights"."timestamp" AS date) ASC
-- postgres: SELECT "pg_temp"."flights"."origin" AS "origin", CAST("pg_temp"."flights"."timestamp" AS date) AS "timestamp", COUNT(*) AS "count" FROM "pg_temp"."flights" WHERE ("pg_temp"."flights"."origin" = 'BOS') AND ("pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-01-08 00:00:00.000Z') AND ("pg_temp"."flights"."timestamp" < timestamp with time zone '2001-01-15 00:00:00.000Z') GROUP BY "pg_temp"."flights"."origin", CAST("pg_temp"."flights"."timestamp" AS date) ORDER BY "pg_temp"."flights"."origin" ASC, CAST("pg_temp"."flights"."timestamp" AS date) ASC

SELECT DATE_TRUNC('month', "public"."flights"."timestamp") AS "timestamp", COUNT(*) AS "count" FROM "public"."flights" WHERE "public"."flights"."origin" = 'SFO' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-01-01 00:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-07-01 00:00:00.000Z' GROUP BY DATE_TRUNC('month', "public"."flights"."timestamp") ORDER BY DATE_TRUNC('month', "public"."flights"."timestamp") ASC
-- postgres: SELECT DATE_TRUNC('month', "pg_temp"."flights"."timestamp") AS "timestamp", COUNT(*) AS "count" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'SFO' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-01-01 00:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-07-01 00:00:00.000Z' GROUP BY DATE_TRUNC('month', "pg_temp"."flights"."timestamp") ORDER BY DATE_TRUNC('month', "pg_temp"."flights"."timestamp") ASC

SELECT CAST(("public"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) AS "timestamp", COUNT(*) AS "count" FROM "public"."flights" WHERE "public"."flights"."origin" = 'ORD' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-03-30 05:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-04-03 05:00:00.000Z' GROUP BY CAST(("public"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) ORDER BY CAST(("public"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) ASC
-- postgres: SELECT CAST(("pg_temp"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) AS "timestamp", COUNT(*) AS "count" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'ORD' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-03-30 05:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-04-03 05:00:00.000Z' GROUP BY CAST(("pg_temp"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) ORDER BY CAST(("pg_temp"."flights"."timestamp" AT TIME ZONE 'America/Chicago') AS date) ASC

SELECT DATE_TRUNC('week', ("public"."flights"."timestamp" + INTERVAL '1 day')) + INTERVAL '-1 day' AS "timestamp", COUNT(*) AS "count" FROM "public"."flights" WHERE "public"."flights"."origin" = 'BOS' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-02-01 00:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-05-01 00:00:00.000Z' GROUP BY 1 ORDER BY 1 ASC
-- postgres: SELECT DATE_TRUNC('week', ("pg_temp"."flights"."timestamp" + INTERVAL '1 day')) + INTERVAL '-1 day' AS "timestamp", COUNT(*) AS "count" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'BOS' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-02-01 00:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-05-01 00:00:00.000Z' GROUP BY 1 ORDER BY 1 ASC

SELECT ("public"."flights"."value"->>'destination') AS "destination", AVG(CAST(("public"."flights"."value"->>'delay') AS integer)) AS "avg" FROM "public"."flights" WHERE "public"."flights"."origin" = 'ORD' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-04-01 00:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-05-01 00:00:00.000Z' GROUP BY 1 ORDER BY 2 DESC, 1 ASC LIMIT 10
-- postgres: SELECT ("pg_temp"."flights"."value"->>'destination') AS "destination", AVG(CAST(("pg_temp"."flights"."value"->>'delay') AS integer)) AS "avg" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'ORD' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-04-01 00:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-05-01 00:00:00.000Z' GROUP BY 1 ORDER BY 2 DESC, 1 ASC LIMIT 10

SELECT "public"."flights"."id" AS "id", "public"."flights"."timestamp" AS "timestamp" FROM "public"."flights" WHERE "public"."flights"."origin" = 'SFO' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-06-01 00:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-06-02 00:00:00.000Z' ORDER BY "public"."flights"."timestamp" DESC, "public"."flights"."id" ASC LIMIT 2000
-- postgres: SELECT "pg_temp"."flights"."id" AS "id", "pg_temp"."flights"."timestamp" AS "timestamp" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'SFO' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-06-01 00:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-06-02 00:00:00.000Z' ORDER BY "pg_temp"."flights"."timestamp" DESC, "pg_temp"."flights"."id" ASC LIMIT 2000

SELECT EXTRACT(hour FROM ("public"."flights"."timestamp" AT TIME ZONE 'America/Los_Angeles')) AS "timestamp", COUNT(*) AS "count" FROM "public"."flights" WHERE "public"."flights"."origin" = 'SFO' AND "public"."flights"."timestamp" >= timestamp with time zone '2001-02-01 08:00:00.000Z' AND "public"."flights"."timestamp" < timestamp with time zone '2001-03-01 08:00:00.000Z' GROUP BY 1 ORDER BY 1 ASC
-- postgres: SELECT EXTRACT(hour FROM ("pg_temp"."flights"."timestamp" AT TIME ZONE 'America/Los_Angeles')) AS "timestamp", COUNT(*) AS "count" FROM "pg_temp"."flights" WHERE "pg_temp"."flights"."origin" = 'SFO' AND "pg_temp"."flights"."timestamp" >= timestamp with time zone '2001-02-01 08:00:00.000Z' AND "pg_temp"."flights"."timestamp" < timestamp with time zone '2001-03-01 08:00:00.000Z' GROUP BY 1 ORDER BY 1 ASC

-- Grafana (macros as Grafana expands them: $__timeGroupAlias, $__timeGroup, $__timeFilter)
SELECT floor(extract(epoch from timestamp)/3600)*3600 AS "time", count(*) AS "flights" FROM flights WHERE timestamp BETWEEN '2001-03-31T00:00:00Z' AND '2001-04-02T00:00:00Z' AND origin = 'ORD' GROUP BY 1 ORDER BY 1

SELECT floor(extract(epoch from timestamp)/300)*300 AS "time", avg((value->>'delay')::int) AS "delay" FROM flights WHERE timestamp BETWEEN '2001-05-10T06:00:00Z' AND '2001-05-10T12:00:00Z' AND origin = 'ORD' GROUP BY 1 ORDER BY 1

SELECT floor(extract(epoch from timestamp)/86400)*86400 AS "time", value->>'destination' AS metric, count(*) AS value FROM flights WHERE timestamp BETWEEN '2001-01-10T00:00:00Z' AND '2001-01-14T00:00:00Z' AND origin = 'BOS' AND value->>'destination' IN ('LGA', 'DCA') GROUP BY 1, 2 ORDER BY 1, 2

SELECT timestamp AS "time", (value->>'delay')::int AS delay FROM flights WHERE timestamp BETWEEN '2001-02-14T10:00:00Z' AND '2001-02-14T12:00:00Z' AND origin = 'SFO' ORDER BY 1, id

SELECT extract(epoch from timestamp) AS time_sec, id FROM flights WHERE timestamp BETWEEN '2001-06-10T00:00:00Z' AND '2001-06-10T03:00:00Z' AND origin = 'BOS' ORDER BY 1, 2

SELECT floor(extract(epoch from timestamp)/3600)*3600 AS "time", max((value->>'delay')::int) FROM flights WHERE timestamp BETWEEN '2001-03-31T20:00:00Z' AND '2001-04-01T04:00:00Z' AND origin IN ('ORD', 'BOS') GROUP BY 1 ORDER BY 1

-- Tableau and DBeaver
SELECT CAST("flights"."origin" AS TEXT) AS "origin", SUM(1) AS "cnt:flights:ok" FROM "public"."flights" "flights" WHERE "flights"."origin" IN ('ORD', 'SFO') AND "flights"."timestamp" >= '2001-03-01' AND "flights"."timestamp" < '2001-04-15' GROUP BY 1 ORDER BY 1
-- postgres: SELECT CAST("flights"."origin" AS TEXT) AS "origin", SUM(1) AS "cnt:flights:ok" FROM "pg_temp"."flights" "flights" WHERE "flights"."origin" IN ('ORD', 'SFO') AND "flights"."timestamp" >= '2001-03-01' AND "flights"."timestamp" < '2001-04-15' GROUP BY 1 ORDER BY 1

SELECT DATE_TRUNC('MONTH', CAST("flights"."timestamp" AS TIMESTAMP)) AS "tmn:timestamp:ok", SUM(CAST(("flights"."value"->>'distance') AS BIGINT)) AS "sum:distance:ok" FROM "public"."flights" "flights" WHERE "flights"."origin" = 'BOS' AND "flights"."timestamp" >= '2001-01-01' AND "flights"."timestamp" < '2001-07-01' GROUP BY 1 ORDER BY 1
-- postgres: SELECT DATE_TRUNC('MONTH', CAST("flights"."timestamp" AS TIMESTAMP)) AS "tmn:timestamp:ok", SUM(CAST(("flights"."value"->>'distance') AS BIGINT)) AS "sum:distance:ok" FROM "pg_temp"."flights" "flights" WHERE "flights"."origin" = 'BOS' AND "flights"."timestamp" >= '2001-01-01' AND "flights"."timestamp" < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT CAST(EXTRACT(YEAR FROM "flights"."timestamp") AS BIGINT) AS "yr:timestamp:ok", CAST(EXTRACT(MONTH FROM "flights"."timestamp") AS BIGINT) AS "mn:timestamp:ok", COUNT(DISTINCT ("flights"."value"->>'destination')) AS "ctd:destination:ok" FROM "public"."flights" "flights" WHERE "flights"."origin" = 'SFO' AND "flights"."timestamp" >= '2001-01-01' AND "flights"."timestamp" < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2
-- postgres: SELECT CAST(EXTRACT(YEAR FROM "flights"."timestamp") AS BIGINT) AS "yr:timestamp:ok", CAST(EXTRACT(MONTH FROM "flights"."timestamp") AS BIGINT) AS "mn:timestamp:ok", COUNT(DISTINCT ("flights"."value"->>'destination')) AS "ctd:destination:ok" FROM "pg_temp"."flights" "flights" WHERE "flights"."origin" = 'SFO' AND "flights"."timestamp" >= '2001-01-01' AND "flights"."timestamp" < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT * FROM public.flights WHERE origin = 'BOS' AND timestamp >= '2001-04-15' AND timestamp < '2001-04-16' ORDER BY timestamp, id LIMIT 200
-- postgres: SELECT * FROM pg_temp.flights WHERE origin = 'BOS' AND timestamp >= '2001-04-15' AND timestamp < '2001-04-16' ORDER BY timestamp, id LIMIT 200

SELECT count(*) FROM (SELECT id, timestamp FROM public.flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01') dbvrcnt
-- postgres: SELECT count(*) FROM (SELECT id, timestamp FROM pg_temp.flights WHERE origin = 'ORD' AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01') dbvrcnt

SELECT f.* FROM flights f WHERE f.origin = 'SFO' AND f.timestamp >= '2001-01-31 23:00' AND f.timestamp < '2001-02-01 01:00' ORDER BY f.timestamp, f.id

-- avg of integers is numeric: PostgreSQL's exact quotient (its text through round and casts)
SELECT value->>'destination' AS d, avg((value->>'delay')::int), round(avg((value->>'delay')::int), 12)::text, avg(DISTINCT (value->>'distance')::int)::numeric(12,6)::text FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-20' AND timestamp < '2001-04-10' GROUP BY 1 HAVING count(*) > 20 ORDER BY 1

SELECT origin, date_trunc('month', timestamp) AS m, avg((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 0), trunc(avg((value->>'distance')::bigint), 15)::text FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT id, round(avg((value->>'delay')::int) OVER (PARTITION BY value->>'destination' ORDER BY timestamp, id ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), 18)::text FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03' ORDER BY timestamp, id

-- RANGE frames with an offset over every tier
SELECT id, count(*) OVER w, sum((value->>'delay')::int) OVER w, min(id) OVER w FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' WINDOW w AS (ORDER BY timestamp RANGE BETWEEN INTERVAL '90 minutes' PRECEDING AND INTERVAL '30 minutes' FOLLOWING) ORDER BY timestamp, id

SELECT origin, date_trunc('day', timestamp) AS day, count(*) AS n, sum(count(*)) OVER (PARTITION BY origin ORDER BY date_trunc('day', timestamp) RANGE BETWEEN '6 days' PRECEDING AND CURRENT ROW) AS week FROM flights WHERE origin IN ('BOS', 'ORD') AND timestamp >= '2001-03-01' AND timestamp < '2001-05-01' GROUP BY 1, 2 ORDER BY 1, 2

SELECT id, (value->>'distance')::int AS dist, count(*) OVER (ORDER BY (value->>'distance')::int DESC RANGE BETWEEN 100 PRECEDING AND 100 FOLLOWING) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-30' AND timestamp < '2001-02-02' ORDER BY id

-- array_agg: its text (array_out) and array_to_string over every tier
SELECT value->>'destination' AS d, array_agg((value->>'delay')::int ORDER BY (value->>'delay')::int DESC)::text, array_to_string(array_agg(id ORDER BY id), ';') FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' GROUP BY 1 HAVING count(*) > 3 ORDER BY 1

SELECT origin, date_trunc('month', timestamp) AS m, array_to_string(array_agg(DISTINCT_DEST ORDER BY DISTINCT_DEST), ',') FROM (SELECT origin, timestamp, value->>'destination' AS DISTINCT_DEST FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND (value->>'delay')::int > 120) t GROUP BY 1, 2 ORDER BY 1, 2

-- numeric display scales: avg of integers written as text at select_div_scale's scale, + - * of it, CASE and COALESCE of numerics of different scales (the chosen branch's scale), over every tier
SELECT value->>'destination' AS d, avg((value->>'delay')::int)::text AS mean, (avg((value->>'distance')::int) * 100)::text AS x100, COALESCE(avg((value->>'delay')::int) FILTER (WHERE (value->>'delay')::int > 60), 0)::text AS late FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING avg((value->>'delay')::int) > 0 ORDER BY 1

SELECT date_trunc('month', timestamp) AS m, 'mean ' || avg((value->>'delay')::int) AS label, (CASE WHEN count(*) > 1000 THEN avg((value->>'distance')::bigint) ELSE 0 END)::text AS dist, (avg(DISTINCT (value->>'delay')::int) - 0.5)::text AS dd FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

SELECT id, (CASE WHEN (value->>'delay')::int > 0 THEN (value->>'delay')::int * 1.5 ELSE 0 END)::text AS c, COALESCE(NULLIF((value->>'delay')::int, 0) * 0.25, 1)::text AS z FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

SELECT origin, COALESCE(avg((value->>'delay')::int), 0) AS mean, CASE WHEN count(*) > 10 THEN avg((value->>'delay')::int) ELSE 0 END AS big, round(avg((value->>'delay')::int) * 100, 1) AS pct, avg((value->>'delay')::int) * 1.5::float8 AS f FROM flights WHERE origin IN ('ORD', 'BOS', 'SFO') AND timestamp >= '2001-03-15' AND timestamp < '2001-04-15' GROUP BY 1 HAVING avg((value->>'delay')::int) > 2 ORDER BY 1

-- to_char of numbers (numeric_to_char's 9, 0, point, comma, D, G, FM) over every tier
SELECT value->>'destination' AS d, to_char(avg((value->>'delay')::int), '999.99') AS mean, to_char(avg((value->>'distance')::int), 'FM9,999.0') AS dist, to_char(sum((value->>'distance')::bigint), '9,999,999') AS total, to_char(count(*), 'FM00000') AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

SELECT id, to_char((value->>'distance')::int * 1.05, 'FM99,990.00') AS miles, to_char((value->>'delay')::int, '0000') AS late FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

-- to_char's sign, Roman, ordinal, V, EEEE, L and quoted-text patterns, of integers, bigints and doubles, hot
SELECT id, to_char((value->>'delay')::int, 'S999') AS s, to_char((value->>'delay')::int, '999PR') AS pr, to_char((value->>'delay')::int, 'FMSG999') AS sg, to_char((value->>'distance')::int, 'FMRN') AS rn, to_char((value->>'delay')::int, '999MI') AS mi FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-06-01' AND timestamp < '2001-06-08' ORDER BY timestamp, id LIMIT 20

-- the same, archived
SELECT id, to_char((value->>'distance')::float8, '9.99EEEE') AS e, to_char((value->>'delay')::float8 / 8, 'FM990.0000MI') AS mi, to_char((value->>'distance')::int, 'FM9999th') AS th, to_char((value->>'delay')::bigint, 'PL9999V99') AS v FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-02-10' AND timestamp < '2001-02-17' ORDER BY timestamp, id LIMIT 20

-- the same, mixed, of aggregates
SELECT value->>'destination' AS d, to_char(count(*), 'L99,999') AS n, to_char(sum((value->>'distance')::bigint), '9.999EEEE') AS total, to_char(max((value->>'delay')::int), '"max: "999TH') AS mx, to_char(min((value->>'delay')::int), 'FMS9990') AS mn, to_char(count(*), 'rn') AS r FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

-- to_char of timestamps without time zone (no zone name) and one prefix, one suffix per keyword, mixed
SELECT id, to_char(timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "TZ="TZ OF') AS local, to_char(timestamp, 'FMTMMonth tzh:tzm of FMOF DDTHSP Y,YYYth') AS odd FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-03' ORDER BY id LIMIT 6

-- to_char of intervals (differences of timestamps: days, hours past noon, negative fields), mixed
SELECT id, to_char(timestamp - TIMESTAMPTZ '2001-03-31', 'FMDD "days" HH24:MI:SS') AS since, to_char(TIMESTAMPTZ '2001-03-31 12:00' - timestamp, 'DD HH12 AM SSSS') AS until FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-30' AND timestamp < '2001-04-02' ORDER BY id LIMIT 8

-- numeric quotients at PostgreSQL's select_div_scale, as values and as text (the share of each destination, a mean written as sum / count) over every tier
SELECT value->>'destination' AS d, count(*) * 100.0 / sum(count(*)) OVER () AS share, (count(*) * 100.0 / sum(count(*)) OVER ())::text AS share_text, (sum((value->>'distance')::int)::numeric / count(*))::text AS mean FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

SELECT id, ((value->>'distance')::int / 8.0)::text AS eighths, (value->>'delay')::int / 4.0 AS quarters FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

-- subqueries under OR and NOT (mark joins): EXISTS anywhere in WHERE and in the select list, IN under AND and OR, over every tier
SELECT id, EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'SFO' AND b.timestamp >= '2001-03-20' AND b.timestamp < '2001-04-10' AND b.value->>'destination' = a.value->>'destination') AS sfo_too FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-03-31' AND a.timestamp < '2001-04-02' AND ((a.value->>'delay')::int > 45 OR a.value->>'destination' IN (SELECT value->>'destination' FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' AND (value->>'delay')::int > 90)) ORDER BY id

SELECT value->>'destination' AS d, count(*) FROM flights a WHERE origin = 'ORD' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' AND ((value->>'distance')::int > 2500 OR NOT EXISTS (SELECT 1 FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-01' AND b.timestamp < '2001-05-01' AND b.value->>'destination' = a.value->>'destination')) GROUP BY 1 ORDER BY 1

-- correlated subqueries of any shape (decorrelated over the outer values they read): a window of time before each row, a grouped outer query, the latest earlier flight, LATERAL's top n per row, correlated NOT IN and NOT IN under OR, over every tier
SELECT a.id, (SELECT count(*) FROM flights b WHERE b.origin = 'ORD' AND b.timestamp >= '2001-01-10' AND b.timestamp < '2001-01-12' AND b.timestamp < a.timestamp AND b.timestamp >= a.timestamp - interval '1 hour') AS n FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-01-11' AND a.timestamp < '2001-01-11 10:00' ORDER BY 1

SELECT t.dest, t.n, (SELECT count(*) + 0 FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-01-10' AND b.timestamp < '2001-01-17' AND b.value->>'destination' = t.dest) AS bos, (SELECT COALESCE(max((b.value->>'delay')::int), -1) FROM flights b WHERE b.origin = 'SFO' AND b.timestamp >= '2001-02-10' AND b.timestamp < '2001-02-17' AND b.value->>'destination' = t.dest) AS sfo FROM (SELECT value->>'destination' AS dest, count(*) AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-01-10' AND timestamp < '2001-01-17' GROUP BY 1) t ORDER BY 1

SELECT a.id, (SELECT b.id FROM flights b WHERE b.origin = 'ORD' AND b.timestamp >= '2001-05-09' AND b.timestamp < '2001-05-11' AND b.value->>'destination' = a.value->>'destination' AND b.timestamp < a.timestamp ORDER BY b.timestamp DESC, b.id DESC LIMIT 1) AS prev FROM flights a WHERE a.origin = 'BOS' AND a.timestamp >= '2001-05-10' AND a.timestamp < '2001-05-10 12:00' ORDER BY 1

SELECT d.dest, t.id, t.delay FROM (VALUES ('DEN'), ('LAX'), ('MSP'), ('ZZZ')) d(dest) CROSS JOIN LATERAL (SELECT id, (value->>'delay')::int AS delay FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-28' AND timestamp < '2001-04-04' AND value->>'destination' = d.dest ORDER BY (value->>'delay')::int DESC, id LIMIT 3) t ORDER BY 1, 3 DESC, 2

SELECT count(*) FROM flights a WHERE a.origin = 'SFO' AND a.timestamp >= '2001-03-28' AND a.timestamp < '2001-04-04' AND a.value->>'destination' NOT IN (SELECT b.value->>'destination' FROM flights b WHERE b.origin = 'BOS' AND b.timestamp >= '2001-03-28' AND b.timestamp < '2001-04-04' AND b.timestamp::date = a.timestamp::date)

SELECT value->>'destination' AS d, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' AND ((value->>'delay')::int > 120 OR value->>'destination' NOT IN (SELECT b.value->>'destination' FROM flights b WHERE b.origin = 'ORD' AND b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-02')) GROUP BY 1 ORDER BY 1

-- mode: analytical
SELECT a.origin, count(*) FROM flights a WHERE a.timestamp >= '2001-03-31' AND a.timestamp < '2001-04-01' AND EXISTS (SELECT 1 FROM flights b WHERE b.timestamp >= '2001-03-31' AND b.timestamp < '2001-04-01' AND b.origin = a.value->>'destination' AND b.timestamp > a.timestamp + interval '6 hours') GROUP BY 1 ORDER BY 1

-- avg of numerics of one scale (numeric(p,s) casts, arithmetic with decimal literals): PostgreSQL's numeric_avg, the exact sum over the count at select_div_scale's scale, as values and as text, with FILTER, HAVING and round, over every tier
SELECT value->>'destination' AS d, avg((value->>'delay')::numeric(8,2)) AS a, avg((value->>'distance')::int * 1.5)::text AS t, (avg((value->>'delay')::numeric(10,3)) FILTER (WHERE (value->>'delay')::int > 0))::text AS late, round(avg((value->>'distance')::numeric(10,2)), 4) AS r FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING avg((value->>'delay')::numeric(8,2)) > 0 ORDER BY 1

SELECT origin, date_trunc('month', timestamp) AS m, avg((value->>'delay')::numeric(6,1))::text AS mean, 'avg ' || avg((value->>'distance')::int * 0.25) AS label, avg((value->>'delay')::numeric(6,1)) - avg((value->>'delay')::int) AS diff FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1, 2 ORDER BY 1, 2

-- % and mod of numerics (PostgreSQL's mod_var: the larger scale, the dividend's sign), over every tier
SELECT id, ((value->>'distance')::numeric(10,2) % 7.5)::text AS m, mod((value->>'delay')::int * 1.25, 4) AS d, (value->>'delay')::int % 2.5 AS h FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

-- UNION ALL and VALUES of numerics of different scales (each value exact in a column of the larger scale), over every tier
SELECT d, n FROM (SELECT value->>'destination' AS d, (value->>'delay')::numeric(8,2) / 4 AS n FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' UNION ALL SELECT value->>'destination', (value->>'distance')::int * 1.5 FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-02' UNION ALL SELECT column1, column2 FROM (VALUES ('ZZZ', 1), ('ZZY', 2.125)) v) t ORDER BY d, n

-- quotients of averages (numerics whose display scale varies by row) at select_div_scale of each row's display scales, as text, over every tier
SELECT value->>'destination' AS d, (avg((value->>'delay')::int) / 4)::text AS q, (avg((value->>'distance')::numeric(10,1)) / 2)::text AS h FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING avg((value->>'delay')::int) <> 0 ORDER BY 1

-- sum and avg of JSON text cast to numeric without a scale (each value's own display scale), grouped, over every tier
SELECT value->>'destination' AS d, avg((value->>'delay')::numeric)::text AS a, sum((value->>'distance')::numeric) AS s, avg((value->>'distance')::numeric) FILTER (WHERE (value->>'delay')::int > 0) AS f FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

-- aggregates of numerics over windows (sum, min, max at the argument's scale; avg as numeric_avg, its text at select_div_scale's scale) and Superset's share of a total, over every tier
SELECT id, sum((value->>'distance')::int * 0.25) OVER (ORDER BY timestamp, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, (avg((value->>'delay')::numeric(8,2)) OVER (ORDER BY timestamp RANGE BETWEEN '2 hours' PRECEDING AND CURRENT ROW))::text AS a, min((value->>'delay')::int * 1.5) OVER (ORDER BY timestamp, id) AS lo, max((value->>'distance')::numeric(10,1)) OVER () AS hi FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-31 18:00' AND timestamp < '2001-04-01 06:00' ORDER BY timestamp, id

SELECT value->>'destination' AS d, sum((value->>'distance')::int * 1.5) AS miles, (sum((value->>'distance')::int * 1.5) / sum(sum((value->>'distance')::int * 1.5)) OVER ())::text AS share, 100 * sum((value->>'distance')::int * 1.5) / sum(sum((value->>'distance')::int * 1.5)) OVER () AS pct FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1

SELECT origin, date_trunc('day', timestamp) AS day, (avg(sum((value->>'delay')::int * 0.5)) OVER (PARTITION BY origin ORDER BY date_trunc('day', timestamp) ROWS 2 PRECEDING))::text AS ma, (lag(sum((value->>'delay')::int * 0.5), 1, 0) OVER (PARTITION BY origin ORDER BY date_trunc('day', timestamp)))::text AS prev FROM flights WHERE origin IN ('BOS', 'SFO') AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1, 2 ORDER BY 1, 2

-- DISTINCT aggregates of numerics (distinct values, the exact sum of them, numeric_avg of the two) and the variance family of integers and numerics (numeric_stddev_internal: exact sums, select_div_scale's scale, sqrt_var's rounding), as text, over every tier
SELECT value->>'destination' AS d, count(DISTINCT (value->>'delay')::int * 0.5) AS n, sum(DISTINCT (value->>'distance')::numeric(10,1)) AS s, avg(DISTINCT (value->>'delay')::numeric(8,2))::text AS a, stddev((value->>'delay')::int)::text AS sd, var_pop((value->>'distance')::int * 0.1)::text AS vp FROM flights WHERE origin = 'ORD' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 HAVING count(*) > 1 ORDER BY 1

SELECT date_trunc('month', timestamp) AS m, stddev_samp((value->>'distance')::bigint)::text AS sd, variance((value->>'delay')::numeric(8,2))::text AS v, round(stddev_pop((value->>'delay')::int), 2) AS r FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-01-01' AND timestamp < '2001-07-01' GROUP BY 1 ORDER BY 1

-- sqrt, exp, ln, log and sign of numerics (PostgreSQL's result scales, as text), over every tier
SELECT id, sqrt((value->>'distance')::numeric(10,2))::text AS r, ln((value->>'distance')::int * 1.0)::text AS l, log(2, (value->>'distance')::int)::text AS l2, sign((value->>'delay')::int * 1.5)::text AS s, exp((value->>'delay')::int * 0.01)::text AS e FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

-- date ± interval (Metabase's and Tableau's CAST(ts AS date) + INTERVAL): a timestamp without time zone, grouped and as text, over every tier
SELECT CAST(timestamp AS date) + INTERVAL '1 day' AS next_day, (CAST(timestamp AS date) - INTERVAL '1 month')::text AS prev, (INTERVAL '2 hours' + timestamp::date)::text AS two, count(*) FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1, 2, 3 ORDER BY 1

-- real (float4): float32 columns, single precision arithmetic and float4out's text, real beside other numbers in double precision, over every tier
SELECT id, (value->>'distance')::real / 7::real AS r, ((value->>'distance')::real / 7::real)::text AS t, (value->>'delay')::real * 0.5 AS d, -(value->>'delay')::real AS n FROM flights WHERE origin = 'SFO' AND timestamp >= '2001-03-31' AND timestamp < '2001-04-01' ORDER BY timestamp, id

SELECT value->>'destination' AS d, avg((value->>'delay')::real) AS a, min((value->>'distance')::real / 3::real) AS lo, max((value->>'distance')::real / 3::real)::text AS hi, stddev_pop((value->>'delay')::real) AS sd FROM flights WHERE origin = 'BOS' AND timestamp >= '2001-03-25' AND timestamp < '2001-04-05' GROUP BY 1 ORDER BY 1
