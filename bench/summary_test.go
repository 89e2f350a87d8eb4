package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// Targets of issue 3, checked on the whole-history count.
const (
	targetArchiveSpeedup = 50.0  // pushdown at least this many times faster than the scan path
	targetArchiveBytes   = 100.0 // and reading at least this many times fewer bytes
	targetDirect         = 1.5   // pushdown latency at most this multiple of the store's own
)

// printSummary prints the table of every measured variant, the ratios and the targets.
func (s *suite) printSummary(w io.Writer) {
	fmt.Fprintf(w, "\n=== COUNT(*) of %s's flights: summary ===\n", airport)
	fmt.Fprintf(w, "source %s: %s rows read, %s %s flights loaded through load.File (month buckets, window 12, as of %s) in %s; ",
		s.source, group(s.loaded.Read), group(s.loaded.Appended), airport, asOf.Format("2006-01-02"), s.loadTime.Round(100*time.Millisecond))
	fmt.Fprintf(w, "%d buckets archived to Parquet (%s payload bytes) in %s\n", len(s.payloads), group(s.payBytes), s.archTime.Round(100*time.Millisecond))
	fmt.Fprintf(w, "reference counts (arrow-go%s over the source file):", map[bool]string{true: " and DuckDB", false: ""}[s.duck != nil])
	for _, r := range benchRanges {
		fmt.Fprintf(w, " %s %s = %s;", r.name, r, group(s.ref[r.name]))
	}
	fmt.Fprintln(w, " every variant returned them.")
	fmt.Fprintf(w, "PostgreSQL %s on 127.0.0.1 (VACUUM ANALYZE after the load and after archiving); archive on file:// (local disk, page cache warm).\n", s.pgVersion)
	if s.duck != nil {
		fmt.Fprintf(w, "DuckDB %s, %s threads, default settings; timed inside Python around execute+fetch.\n", s.duck.version, s.duck.threads)
	} else {
		fmt.Fprintf(w, "DuckDB comparisons skipped: %v\n", s.duckErr)
	}
	fmt.Fprintln(w, "latency: p50 of the timed iterations (mean beside it). bytes: per query in the steady state, and for the first query after start-up")
	fmt.Fprintln(w, "  hot tier: PostgreSQL wire bytes received by flightsrv (server→client, counted by a TCP proxy in an untimed pass)")
	fmt.Fprintln(w, "  archive tier: object-store bytes (routing.ReadStats.BytesRead); DuckDB: bytes its process read from the payload files (/proc rchar)")
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "range\ttier\tpath\tpushdown\tp50\tmean\truns\tbytes/query\tfirst query\tbytes of\thot rows\thot stmts\t")
	for _, r := range benchRanges {
		for _, tier := range []string{tierHot, tierArchive} {
			for _, v := range s.variants(tier) {
				res := s.results[key(tier, r, v.via, v.pushdown)]
				pd := "-"
				if v.via == viaFlight || v.via == viaEngine {
					pd = map[bool]string{true: "on", false: "off"}[v.pushdown]
				}
				if res == nil {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\tnot run\t\t\t\t\t\t\t\t\n", r.name, tier, v.via, pd)
					continue
				}
				bytes, first, what := s.bytesOf(tier, v.via, res.fig)
				p50 := dur(res.p50)
				if res.inner > 0 {
					p50 = dur(res.inner) + " (in DuckDB)"
				}
				rows, stmts := "-", "-"
				if v.via != viaDuck {
					rows, stmts = group(int64(res.fig.hotRows)), trimFloat(res.fig.hotStmts)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n",
					r.name, tier, v.via, pd, p50, dur(res.mean), res.n, bytes, first, what, rows, stmts)
			}
		}
	}
	tw.Flush()

	fmt.Fprintln(w, "\nratios (p50 latency; bytes per steady-state query, first query in parentheses)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "range\ttier\tpath\tscan/pushdown latency\tscan/pushdown bytes\tpushdown/direct latency\t")
	for _, r := range benchRanges {
		for _, tier := range []string{tierHot, tierArchive} {
			for _, via := range []string{viaFlight, viaEngine} {
				on, off := s.results[key(tier, r, via, true)], s.results[key(tier, r, via, false)]
				direct := s.results[key(tier, r, s.directVia(tier), false)]
				lat, byt, dir := "-", "-", "-"
				if on != nil && off != nil {
					lat = times(ratio(off.latency(), on.latency()))
					b1, c1 := s.routedBytes(tier, off.fig)
					b0, c0 := s.routedBytes(tier, on.fig)
					byt = times(ratioF(b1, b0)) + " (" + times(ratioF(c1, c0)) + ")"
				}
				if on != nil && direct != nil {
					dir = times(ratio(on.latency(), direct.latency())) + " vs " + s.directVia(tier)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", r.name, tier, via, lat, byt, dir)
			}
		}
	}
	tw.Flush()

	fmt.Fprintf(w, "\ntargets (issue 3, whole history %s)\n", fullRange)
	for _, via := range []string{viaFlight, viaEngine} {
		on, off := s.results[key(tierArchive, fullRange, via, true)], s.results[key(tierArchive, fullRange, via, false)]
		if on == nil || off == nil {
			fmt.Fprintf(w, "  archive, %-9s: not measured\n", via)
			continue
		}
		sp := ratio(off.latency(), on.latency())
		fmt.Fprintf(w, "  archive, %-9s: pushdown %s faster than the scan path (target ≥ %v×): %s\n", via, times(sp), targetArchiveSpeedup, verdictMin(sp, targetArchiveSpeedup))
	}
	if on, off := s.results[key(tierArchive, fullRange, viaFlight, true)], s.results[key(tierArchive, fullRange, viaFlight, false)]; on != nil && off != nil {
		b1, c1 := s.routedBytes(tierArchive, off.fig)
		b0, c0 := s.routedBytes(tierArchive, on.fig)
		cold := ratioF(c1, c0)
		fmt.Fprintf(w, "  archive, bytes    : scan %s B vs pushdown %s B on the first query = %s fewer (target ≥ %v×): %s; steady state %s B vs %s B = %s fewer\n",
			group(int64(c1)), group(int64(c0)), times(cold), targetArchiveBytes, verdictMin(cold, targetArchiveBytes),
			group(int64(b1)), group(int64(b0)), times(ratioF(b1, b0)))
	}
	for _, tier := range []string{tierHot, tierArchive} {
		direct := s.results[key(tier, fullRange, s.directVia(tier), false)]
		for _, via := range []string{viaFlight, viaEngine} {
			on := s.results[key(tier, fullRange, via, true)]
			if on == nil || direct == nil {
				fmt.Fprintf(w, "  %-7s, %-9s: pushdown vs %s not measured\n", tier, via, s.directVia(tier))
				continue
			}
			x := ratio(on.latency(), direct.latency())
			fmt.Fprintf(w, "  %-7s, %-9s: pushdown %s vs %s %s = %s (target ≤ %v×): %s\n", tier, via, dur(on.latency()),
				s.directVia(tier), dur(direct.latency()), times(x), targetDirect, verdictMax(x, targetDirect))
		}
	}
	fmt.Fprintln(w)
}

type variantID struct {
	via      string
	pushdown bool
}

func (s *suite) variants(tier string) []variantID {
	return []variantID{{viaFlight, true}, {viaFlight, false}, {viaEngine, true}, {viaEngine, false}, {s.directVia(tier), false}}
}

func (s *suite) directVia(tier string) string {
	if tier == tierHot {
		return viaPG
	}
	return viaDuck
}

// bytesOf returns the steady-state and first-query bytes of a variant and what they count.
func (s *suite) bytesOf(tier, via string, f figures) (steady, first, what string) {
	if !f.measured {
		return "-", "-", "-"
	}
	switch {
	case via == viaDuck:
		return group(int64(f.fileRead)), group(int64(f.coldFileRead)), "files (rchar)"
	case tier == tierHot:
		return group(int64(f.pgRecv)), group(int64(f.coldPGRecv)), "PG wire"
	}
	return group(int64(f.obj)), group(int64(f.coldObj)), "object store"
}

// routedBytes returns the steady-state and first-query bytes compared for a routed variant:
// PostgreSQL wire bytes on the hot tier, object-store bytes on the archive tier.
func (s *suite) routedBytes(tier string, f figures) (steady, first float64) {
	if tier == tierHot {
		return f.pgRecv, f.coldPGRecv
	}
	return f.obj, f.coldObj
}

func ratio(a, b time.Duration) float64 { return ratioF(float64(a), float64(b)) }

func ratioF(a, b float64) float64 {
	if b == 0 {
		if a == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return a / b
}

func times(x float64) string {
	switch {
	case math.IsNaN(x):
		return "n/a"
	case math.IsInf(x, 1):
		return "∞"
	case x >= 100:
		return group(int64(math.Round(x))) + "×"
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64) + "×"
	}
	return strconv.FormatFloat(x, 'f', 2, 64) + "×"
}

func verdictMin(x, target float64) string {
	if x >= target {
		return "MET"
	}
	return fmt.Sprintf("MISSED (%s of the target; %.1f× short)", times(x), target/x)
}

func verdictMax(x, target float64) string {
	if x <= target {
		return "MET"
	}
	return fmt.Sprintf("MISSED by %.0f%% (%s over %v×)", (x/target-1)*100, times(x), target)
}

// dur formats a latency with three significant digits.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + " µs"
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
}

// group formats n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// TestFormatting checks the helpers the summary table is printed with.
func TestFormatting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{group(0), "0"}, {group(999), "999"}, {group(1000), "1,000"}, {group(166341), "166,341"}, {group(-1234567), "-1,234,567"},
		{times(1.234), "1.23×"}, {times(12.34), "12.3×"}, {times(1234.4), "1,234×"}, {times(math.Inf(1)), "∞"}, {times(math.NaN()), "n/a"},
		{dur(352 * time.Microsecond), "352 µs"}, {dur(5031842 * time.Nanosecond), "5.03 ms"}, {dur(73021428), "73.0 ms"}, {dur(1063360389), "1.06 s"},
		{verdictMin(60, 50), "MET"}, {verdictMax(1.6, 1.5), "MISSED by 7% (1.60× over 1.5×)"},
		{median([]time.Duration{3, 1, 2}).String(), "2ns"}, {median([]time.Duration{4, 1, 2, 3}).String(), "2ns"}, {mean([]time.Duration{1, 2, 6}).String(), "3ns"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
