package substrait_test

// numericFuzzSQL seeds FuzzSQL with numeric constructs (substrait/numeric.go): literals,
// casts with type modifiers, arithmetic, the rounding functions and fused quotients.
var numericFuzzSQL = []string{
	// Issue 18's trial: power of a float and a numeric, numeric constants cast to float past
	// 38 digits, timestamp - date, datetime types of UNION and COALESCE.
	"SELECT power(1.5::real, 2.0::numeric), pow(2.0, length(id)::float8), 1e40::float8, (-0.0)::real, CAST(1e-400 AS float8), log(2::real, 8::numeric) FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02'",
	"SELECT timestamp - '2026-01-01'::date, timestamp::timestamp - '2026-01-01', '2026-01-02'::date - timestamp, timestamp + '1', now() * '1' FROM messages WHERE channel_id = 'g' AND timestamp >= '2026-01-01' AND timestamp < '2026-01-02' UNION ALL SELECT NULL, NULL, NULL, COALESCE('2026-01-01'::date, now()::timestamp), NULL",
	"SELECT 0.1 + 0.2 = 0.3, 1.50 * -2, round(1.2345, 2), trunc(-1.99, 1), ceil(2.1), floor(-2.1), abs(-1.50)",
	"SELECT '1.005'::numeric(10,2), 12.345::decimal(5,2), 7::numeric, (1.25 * 4)::int, 123.456::text, 1.5::float8",
	"SELECT round(1.0 / 3, 4), (1 / 3.0)::numeric(10,5), floor(7 / 2.0), round(2 / 3.0, 20)",
	"SELECT 1.5 IN (1.50, 2), 1.5 BETWEEN 1 AND 2, COALESCE(NULL, 2.50), -(1.25), round(5, 2), round(1234.5, -2)",
	"SELECT 1.5 UNION ALL SELECT 2.25 UNION SELECT 3", "SELECT column1 * 2 FROM (VALUES (1), (2.5), (NULL)) v",
	"SELECT avg(length(id)) / 2, 1 / avg(length(id) * 0.5), CASE WHEN id > 'a' THEN 1.5 ELSE 2 END / 3 FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' GROUP BY id",
	"SELECT avg(id::numeric), sum(length(id)::float8::numeric) FILTER (WHERE id > 'a') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'",
	"SELECT 7.5 % 2, mod(-10, 3.3), mod(2.25, 0), avg(1.5), avg(id::numeric(10,2)) FILTER (WHERE id > '0') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'",
}
