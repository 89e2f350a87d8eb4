package substrait_test

// numericFuzzSQL seeds FuzzSQL with numeric constructs (substrait/numeric.go): literals,
// casts with type modifiers, arithmetic, the rounding functions and fused quotients.
var numericFuzzSQL = []string{
	"SELECT 0.1 + 0.2 = 0.3, 1.50 * -2, round(1.2345, 2), trunc(-1.99, 1), ceil(2.1), floor(-2.1), abs(-1.50)",
	"SELECT '1.005'::numeric(10,2), 12.345::decimal(5,2), 7::numeric, (1.25 * 4)::int, 123.456::text, 1.5::float8",
	"SELECT round(1.0 / 3, 4), (1 / 3.0)::numeric(10,5), floor(7 / 2.0), round(2 / 3.0, 20)",
	"SELECT 1.5 IN (1.50, 2), 1.5 BETWEEN 1 AND 2, COALESCE(NULL, 2.50), -(1.25), round(5, 2), round(1234.5, -2)",
	"SELECT 1.5 UNION ALL SELECT 2.25 UNION SELECT 3", "SELECT column1 * 2 FROM (VALUES (1), (2.5), (NULL)) v",
	"SELECT avg(length(id)) / 2, 1 / avg(length(id) * 0.5), CASE WHEN id > 'a' THEN 1.5 ELSE 2 END / 3 FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01' GROUP BY id",
	"SELECT avg(id::numeric), sum(length(id)::float8::numeric) FILTER (WHERE id > 'a') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'",
	"SELECT 7.5 % 2, mod(-10, 3.3), mod(2.25, 0), avg(1.5), avg(id::numeric(10,2)) FILTER (WHERE id > '0') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'",
}
