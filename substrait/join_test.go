package substrait_test

// joinFuzzSQL seeds FuzzSQL with joins and subqueries (join.go, values.go).
var joinFuzzSQL = []string{
	"SELECT a.id, b.id FROM messages a JOIN messages b ON a.id = b.id AND a.timestamp < b.timestamp WHERE a.channel_id = 'g' AND b.channel_id = 'h' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-02-01' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01'",
	"SELECT * FROM (VALUES (1, 'a'), (2, NULL)) AS v(k, s) NATURAL FULL JOIN (VALUES (2, 'b')) AS w(k, t) LEFT JOIN (SELECT 1 AS k) x USING (k) CROSS JOIN (VALUES (true)) y",
	"SELECT id, (SELECT max(m.id) FROM messages m WHERE m.channel_id = f.channel_id AND m.timestamp >= '2026-01-01' AND m.timestamp < '2026-02-01') FROM messages f WHERE f.channel_id = 'g' AND f.timestamp >= '2026-01-01' AND f.timestamp < '2026-02-01' AND f.id NOT IN (SELECT 'x') AND EXISTS (SELECT 1 FROM messages e WHERE e.id = f.id AND e.channel_id = 'h' AND e.timestamp >= '2026-01-01' AND e.timestamp < '2026-02-01')",
	"SELECT count(*) FROM flights a, flights b WHERE a.origin = b.value->>'destination' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND a.origin IN (SELECT origin FROM flights WHERE timestamp >= '2026-01-01' AND timestamp < '2026-01-02')",
}
