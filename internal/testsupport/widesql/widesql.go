// Package widesql writes the wide statements of the binding and planning benchmarks
// (substrait.BenchmarkWideBind, query.BenchmarkWideStatement): select lists of many columns,
// over the flights table of the demo (origin, timestamp, id, value: JSON).
package widesql

import (
	"fmt"
	"strings"
)

// Items is n select-list items item(i) AS <prefix>i for i in 1…n, comma-separated.
func Items(n int, prefix string, item func(i int) string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("%s AS %s%d", item(i+1), prefix, i+1)
	}
	return strings.Join(items, ", ")
}

// Consts is a table-less SELECT of the n integer constants 1…n named <prefix>1….
func Consts(n int, prefix string) string {
	return "SELECT " + Items(n, prefix, func(i int) string { return fmt.Sprint(i) })
}

// Members is a SELECT of n JSON members of flights (value->>'k1'…) named <prefix>1…, under
// where (" WHERE …", the routed predicate).
func Members(n int, prefix, where string) string {
	return "SELECT " + Items(n, prefix, func(i int) string { return fmt.Sprintf("value->>'k%d'", i) }) + " FROM flights" + where
}

// Ordinals is "1, 2, …, n" (a GROUP BY of the first n output columns).
func Ordinals(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i + 1)
	}
	return strings.Join(keys, ", ")
}
