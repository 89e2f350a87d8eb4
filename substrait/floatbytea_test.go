package substrait_test

// floatByteaFuzzSQL are FuzzSQL's seeds of float comparisons in PostgreSQL's order (NaN,
// infinities, -0; scan/ops floatcmp.go), RANGE offsets over reals and quoted offsets
// (winrange.go), and bytea text in both formats and its errors (bytea.go).
var floatByteaFuzzSQL = []string{
	`SELECT 'NaN'::float8 = 'NaN'::float8, 'NaN'::real > 'Infinity'::real, '-0'::float8 IN (0, 'NaN'), greatest('NaN'::float8, 1), nullif('NaN'::float8, 'NaN') FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT count(*) OVER (ORDER BY length(id)::real RANGE BETWEEN '2' PRECEDING AND 'NaN' FOLLOWING), max(length(id)::float8 * 'Infinity') OVER (ROWS 1 PRECEDING) FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
	`SELECT '\x6162'::bytea::text, 'a\\b'::bytea, '\141'::bytea, '\x616'::bytea, id::bytea::text, ('\x' || id)::bytea FROM messages WHERE channel_id = 'general' AND timestamp >= '2026-01-01' AND timestamp < '2026-02-01'`,
}
