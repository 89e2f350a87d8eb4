package ops

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLibmAsPostgres: exp, ln, log (base 10) and power answer PostgreSQL 15's exp, ln, log
// and power of double precision (dexp, dlog1, dlog10, dpow over Debian 12's GNU C library) to
// the last digit where Go's math package misses by a unit in the last place: values read
// from PostgreSQL 15.18 (SELECT f(x)::text).
func TestLibmAsPostgres(t *testing.T) {
	check := func(name string, got float64, want string) {
		t.Helper()
		if s := strconv.FormatFloat(got, 'g', -1, 64); s != want {
			t.Errorf("%s = %s, PostgreSQL %s", name, s, want)
		}
	}
	for x, want := range map[float64]string{22: "3.584912846131592e+09", -740: "4.2e-322", 709.7: "1.6549840276802644e+308", 1e-300: "1",
		0.5: "1.6487212707001282", -1.25: "0.2865047968601901"} {
		check("exp("+strconv.FormatFloat(x, 'g', -1, 64)+")", glibcExp(x), want)
	}
	for x, want := range map[float64]string{176: "5.170483995038151", 5e-324: "-744.4400719213812", 1.0625: "0.06062462181643484",
		0.95: "-0.05129329438755058", 1e300: "690.7755278982137", 48: "3.871201010907891"} {
		check("ln("+strconv.FormatFloat(x, 'g', -1, 64)+")", glibcLog(x), want)
	}
	for x, want := range map[float64]string{15: "1.1760912590556813", 1e22: "22", 119: "2.075546961392531", 5e-324: "-323.3062153431158",
		536: "2.72916478969277", 0.001: "-3"} {
		check("log("+strconv.FormatFloat(x, 'g', -1, 64)+")", glibcLog10(x), want)
	}
	for xy, want := range map[[2]float64]string{{9, 1.5}: "27", {-3, 5}: "-243", {47.5, -3.5}: "1.353855664296275e-06", {2, -1074}: "5e-324",
		{10, 308}: "1e+308", {89, -1.5}: "0.0011910088539397303", {math.Copysign(0, -1), 3}: "-0", {3, -1.5}: "0.19245008972987526",
		{1.5, 1000}: "1.2338405969061735e+176"} {
		got, err := pgPow(xy[0], xy[1])
		if err != nil {
			t.Errorf("power%v: %v", xy, err)
		}
		check("power("+strconv.FormatFloat(xy[0], 'g', -1, 64)+", "+strconv.FormatFloat(xy[1], 'g', -1, 64)+")", got, want)
	}
	for _, c := range []struct {
		x, y float64
		code string
	}{{0, -1, "2201F"}, {-8, 1.0 / 3, "2201F"}, {10, 309, "22003"}, {10, -400, "22003"}, {-2, 1e300, "22003"}, {0.5, 1e19, "22003"}} {
		if _, err := pgPow(c.x, c.y); !isDataError(err, c.code) {
			t.Errorf("power(%v, %v): %v, want SQLSTATE %s", c.x, c.y, err, c.code)
		}
	}
	for _, c := range [][3]float64{{math.NaN(), 0, 1}, {1, math.NaN(), 1}, {-8, math.NaN(), math.NaN()}, {math.Inf(-1), 3, math.Inf(-1)}, {math.Inf(-1), -3, math.Copysign(0, -1)},
		{0.5, math.Inf(-1), math.Inf(1)}, {-1, math.Inf(1), 1}, {2, math.Inf(-1), 0}} {
		got, err := pgPow(c[0], c[1])
		if err != nil || math.Float64bits(got) != math.Float64bits(c[2]) && !(math.IsNaN(got) && math.IsNaN(c[2])) {
			t.Errorf("power(%v, %v) = %v, %v; want %v", c[0], c[1], got, err, c[2])
		}
	}
}

// TestLibmAsCLibrary: glibcExp, glibcLog, glibcLog10 and glibcPow answer this machine's C
// library's exp, log, log10 and pow (what PostgreSQL calls) bit for bit over about 3,600,000
// answers (random bit patterns, random magnitudes, integers, halves, values near 1 and powers
// of ten, subnormals, results near overflow and in the subnormal range, negative bases with
// integer exponents, zeros, infinities, NaN), through a small C program. It needs a C
// compiler and the GNU C library on a processor with fused multiply-add (the variant the
// functions here follow) and is skipped elsewhere.
func TestLibmAsCLibrary(t *testing.T) {
	ref := libmReference(t)
	rng := rand.New(rand.NewSource(18))
	var xs []float64
	add := func(n int, f func() float64) {
		for range n {
			xs = append(xs, f())
		}
	}
	uniform := func(lo, hi float64) func() float64 { return func() float64 { return lo + (hi-lo)*rng.Float64() } }
	bits := func() float64 { return math.Float64frombits(rng.Uint64()) }
	add(200000, uniform(-50, 50))
	add(200000, uniform(-746, 710))
	add(100000, uniform(-746, -700))
	add(100000, uniform(500, 710))
	add(100000, func() float64 { return math.Round(uniform(-746, 710)()*2) / 2 })
	add(100000, bits)
	libmCompare(t, ref, "exp", xs, glibcExp)

	xs = xs[:0]
	add(300000, uniform(0, 1000))
	add(200000, uniform(0.9, 1.1))
	add(100000, func() float64 { return math.Round(uniform(0, 2000)()) / 2 })
	add(100000, func() float64 { return math.Float64frombits(rng.Uint64() >> 12) })
	add(100000, func() float64 { return math.Pow(10, float64(rng.Intn(600)-300)) })
	add(200000, func() float64 { return math.Abs(bits()) })
	libmCompare(t, ref, "log", xs, glibcLog)
	libmCompare(t, ref, "log10", xs, glibcLog10)

	var in []float64
	pair := func(n int, x, y func() float64) {
		for range n {
			in = append(in, x(), y())
		}
	}
	pair(300000, uniform(0, 100), uniform(-20, 20))
	pair(200000, func() float64 { return math.Round(uniform(-100, 100)()) }, func() float64 { return float64(rng.Intn(401) - 200) })
	pair(200000, func() float64 { return math.Float64frombits(rng.Uint64() >> uint(rng.Intn(13))) }, func() float64 { return math.Float64frombits(rng.Uint64() >> uint(rng.Intn(13))) })
	for range 100000 { // results near overflow and in the subnormal range
		x := 1 + rng.Float64()*10
		in = append(in, x, (rng.Float64()*200-100+[]float64{709, -745, -708}[rng.Intn(3)])/math.Log(x))
	}
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), 0.5, -0.5, 2, -2, 3, -3, 1e-310, -1e-310, 1e300, 1e19, -1e19, 1e-20}
	for _, x := range special {
		for _, y := range special {
			in = append(in, x, y)
		}
	}
	want := libmRun(t, ref, "pow", in)
	bad := 0
	for i := range want {
		x, y := in[2*i], in[2*i+1]
		if got := glibcPow(x, y); math.Float64bits(got) != math.Float64bits(want[i]) && !(math.IsNaN(got) && math.IsNaN(want[i])) {
			if bad++; bad <= 10 {
				t.Errorf("pow(%v, %v) = %v, the C library %v", x, y, got, want[i])
			}
		}
	}
	t.Logf("pow: %d inputs, %d differ", len(want), bad)
}

// libmReference builds the C program that reads doubles (pairs for pow) from its standard
// input and writes the C library's exp, log, log10 or pow of each, or skips the test.
func libmReference(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("short")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	if info, err := os.ReadFile("/proc/cpuinfo"); err != nil || !strings.Contains(string(info), " fma ") {
		t.Skip("not a processor with fused multiply-add")
	}
	if out, err := exec.Command("ldd", "--version").CombinedOutput(); err != nil || !strings.Contains(strings.ToUpper(string(out)), "GLIBC") {
		t.Skip("not the GNU C library")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "ref.c")
	prog := `#include <math.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
	double v[2], r;
	int n = strcmp(argv[1], "pow") == 0 ? 2 : 1;
	while (fread(v, sizeof(double), n, stdin) == (size_t)n) {
		if (strcmp(argv[1], "exp") == 0) r = exp(v[0]);
		else if (strcmp(argv[1], "log") == 0) r = log(v[0]);
		else if (strcmp(argv[1], "log10") == 0) r = log10(v[0]);
		else r = pow(v[0], v[1]);
		fwrite(&r, sizeof r, 1, stdout);
	}
	return 0;
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ref")
	if out, err := exec.Command(cc, "-O2", "-o", bin, src, "-lm").CombinedOutput(); err != nil {
		t.Skipf("cc: %v %s", err, out)
	}
	return bin
}

// libmRun is the C library's fn of the inputs (pairs for pow), through ref.
func libmRun(t *testing.T, ref, fn string, in []float64) []float64 {
	t.Helper()
	var b bytes.Buffer
	if err := binary.Write(&b, binary.NativeEndian, in); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ref, fn)
	cmd.Stdin = &b
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	res := make([]float64, len(out)/8)
	if err := binary.Read(bytes.NewReader(out), binary.NativeEndian, res); err != nil {
		t.Fatal(err)
	}
	return res
}

// libmCompare checks f against the C library's fn over xs.
func libmCompare(t *testing.T, ref, fn string, xs []float64, f func(float64) float64) {
	t.Helper()
	want := libmRun(t, ref, fn, xs)
	if len(want) != len(xs) {
		t.Fatalf("%s: %d answers for %d inputs", fn, len(want), len(xs))
	}
	bad := 0
	for i, x := range xs {
		if got := f(x); math.Float64bits(got) != math.Float64bits(want[i]) && !(math.IsNaN(got) && math.IsNaN(want[i])) {
			if bad++; bad <= 10 {
				t.Errorf("%s(%v) = %v, the C library %v", fn, x, got, want[i])
			}
		}
	}
	t.Logf("%s: %d inputs, %d differ", fn, len(xs), bad)
}

// isDataError reports whether err is a *DataError of SQLSTATE code.
func isDataError(err error, code string) bool {
	de, ok := err.(*DataError)
	return ok && de.Code == code
}

// BenchmarkLibm: the per-call cost of exp, log, log10 and pow as PostgreSQL's C library
// computes them (glibc*) beside Go's math package, over 1,024 inputs a round (ns/op is 1,024
// calls).
func BenchmarkLibm(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	xs, ys := make([]float64, 1024), make([]float64, 1024)
	for i := range xs {
		xs[i], ys[i] = rng.Float64()*100, rng.Float64()*20-10
	}
	var sink float64
	for _, c := range []struct {
		name string
		f    func(x, y float64) float64
	}{
		{"exp/glibc", func(x, _ float64) float64 { return glibcExp(x) }}, {"exp/math", func(x, _ float64) float64 { return math.Exp(x) }},
		{"log/glibc", func(x, _ float64) float64 { return glibcLog(x) }}, {"log/math", func(x, _ float64) float64 { return math.Log(x) }},
		{"log10/glibc", func(x, _ float64) float64 { return glibcLog10(x) }}, {"log10/math", func(x, _ float64) float64 { return math.Log10(x) }},
		{"pow/glibc", glibcPow}, {"pow/math", math.Pow},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				for i, x := range xs {
					sink += c.f(x, ys[i])
				}
			}
		})
	}
	_ = sink
}
