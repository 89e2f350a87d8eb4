package substrait_test

// joinFuzzSQL seeds FuzzSQL with joins and subqueries (join.go, values.go).
var joinFuzzSQL = []string{
	"SELECT a.id, b.id FROM messages a JOIN messages b ON a.id = b.id AND a.timestamp < b.timestamp WHERE a.channel_id = 'g' AND b.channel_id = 'h' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-02-01' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-02-01'",
	"SELECT * FROM (VALUES (1, 'a'), (2, NULL)) AS v(k, s) NATURAL FULL JOIN (VALUES (2, 'b')) AS w(k, t) LEFT JOIN (SELECT 1 AS k) x USING (k) CROSS JOIN (VALUES (true)) y",
	"SELECT id, (SELECT max(m.id) FROM messages m WHERE m.channel_id = f.channel_id AND m.timestamp >= '2026-01-01' AND m.timestamp < '2026-02-01') FROM messages f WHERE f.channel_id = 'g' AND f.timestamp >= '2026-01-01' AND f.timestamp < '2026-02-01' AND f.id NOT IN (SELECT 'x') AND EXISTS (SELECT 1 FROM messages e WHERE e.id = f.id AND e.channel_id = 'h' AND e.timestamp >= '2026-01-01' AND e.timestamp < '2026-02-01')",
	// Correlated NOT IN, NOT IN under OR, correlations of any shape over their domain, LIMIT
	// per row, a grouped outer query, LATERAL (join.go, domain.go).
	"SELECT id FROM messages a WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02' AND (a.id = 'x' OR NOT (a.id IN (SELECT b.id FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND b.value = a.value))) AND a.id NOT IN (SELECT c.id FROM messages c WHERE c.channel_id = 'i' AND c.timestamp >= '2026-01-01' AND c.timestamp < '2026-01-02' AND c.timestamp > a.timestamp)",
	"SELECT a.id, (SELECT count(*) + 1 FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND b.timestamp < a.timestamp HAVING count(*) > 1), (SELECT b.id FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND b.id > a.id ORDER BY 1 LIMIT 1 OFFSET 1), (SELECT a.id || 'x' WHERE a.id > 'm') FROM messages a WHERE a.channel_id = 'g' AND a.timestamp >= '2026-01-01' AND a.timestamp < '2026-01-02'",
	"SELECT v.k, count(*), (SELECT max(w.x) FROM (VALUES (1, 'a'), (2, NULL)) w(x, k) WHERE w.k IS NOT DISTINCT FROM v.k GROUP BY w.k) FROM (VALUES ('a'), (NULL)) v(k) LEFT JOIN LATERAL (SELECT DISTINCT y FROM (VALUES (1), (2)) u(y) WHERE u.y::text <> v.k) t ON true GROUP BY v.k",
	// An outer time filter over a domain, ALL and ANY with comparisons, correlated UNION,
	// WITH, DISTINCT ON and windows (domain.go, quantified.go).
	"SELECT id FROM (SELECT a.id, a.timestamp FROM messages a WHERE a.channel_id = 'g' AND EXISTS (SELECT 1 FROM messages b WHERE b.channel_id = 'h' AND b.timestamp >= '2026-01-01' AND b.timestamp < '2026-01-02' AND b.timestamp < a.timestamp)) v WHERE timestamp >= '2026-01-01' AND timestamp < '2026-01-02'",
	"SELECT x, x > ALL (SELECT y FROM (VALUES (1), (NULL)) b(y)), x <> ANY (SELECT y FROM (VALUES (2)) b(y) WHERE y > x), x = ALL (SELECT 1 UNION SELECT y FROM (VALUES (1)) d(y) WHERE y = x) FROM (VALUES (1), (NULL)) a(x) WHERE x <= ANY (SELECT max(y) FROM (VALUES (3)) c(y) GROUP BY y) OR NOT x < ALL (SELECT 2)",
	"SELECT k, EXISTS (SELECT 1 FROM (VALUES ('a')) w(j) WHERE j = k UNION ALL SELECT 2 WHERE k IS NULL), (WITH t AS (SELECT 1 AS n) SELECT max(n) FROM t WHERE n::text <> k), t.r FROM (VALUES ('a'), (NULL)) v(k) CROSS JOIN LATERAL (SELECT DISTINCT ON (y % 2) y, rank() OVER (ORDER BY y) AS r FROM (VALUES (1), (2), (3)) u(y) WHERE y::text > k ORDER BY y % 2, y DESC) t",
}
