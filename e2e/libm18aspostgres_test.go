package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
)

// TestLibmAsPostgres (issue 18): exp, ln, log (base 10) and power/^ of double precision
// answer PostgreSQL's text to the last digit over 20,000 inputs each, sent to both in one
// VALUES list: random magnitudes, integers, halves, values near 1, powers of ten, subnormals,
// inputs whose results lie near overflow and in the subnormal range, negative bases with
// integer exponents, zeros, infinities and NaN (PostgreSQL's dexp, dlog1, dlog10 and dpow
// answer the GNU C library's exp, log, log10 and pow). Their errors keep PostgreSQL's
// SQLSTATE and message: ln and log of zero and below 2201E, zero to a negative power and a
// negative number to a non-integer power 2201F, overflow and underflow 22003.
func TestLibmAsPostgres(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pg := pgUTC(t, ctx, e.url)
	cl := dial(t, e.off)
	rng := rand.New(rand.NewSource(18))
	const n = 20000

	expIn := libmSpecials(0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 709.78, -745.1, 1e-320, -1e-320, 22, 1, -1, 0.5)
	for len(expIn) < n {
		switch len(expIn) % 6 {
		case 0:
			expIn = append(expIn, -745+rng.Float64()*1454.7) // the whole range without an error
		case 1:
			expIn = append(expIn, rng.NormFloat64()*20)
		case 2:
			expIn = append(expIn, float64(rng.Intn(1455)-745))
		case 3:
			expIn = append(expIn, float64(rng.Intn(600)-300)/2)
		case 4:
			expIn = append(expIn, []float64{700 + rng.Float64()*9.78, -745 + rng.Float64()*37}[rng.Intn(2)]) // near overflow, subnormal results
		default:
			expIn = append(expIn, math.Copysign(math.Ldexp(1+rng.Float64(), -rng.Intn(1070)), rng.Float64()-0.5)) // tiny magnitudes
		}
	}
	logIn := libmSpecials(math.Inf(1), math.NaN(), 1, 15, 176, 10, 1e22, 1e-300, 5e-324, math.MaxFloat64, 0.9375, 1.064)
	for len(logIn) < n {
		switch len(logIn) % 6 {
		case 0:
			logIn = append(logIn, math.Float64frombits(rng.Uint64()>>1&^(0x7ff<<52)|uint64(1+rng.Intn(2046))<<52)) // any positive normal
		case 1:
			logIn = append(logIn, 1+rng.NormFloat64()*0.05) // near 1
		case 2:
			logIn = append(logIn, float64(1+rng.Intn(1000000)))
		case 3:
			logIn = append(logIn, float64(1+rng.Intn(2000))/2)
		case 4:
			logIn = append(logIn, math.Float64frombits(1+rng.Uint64()>>12)) // subnormal
		default:
			logIn = append(logIn, strconvPow10(rng.Intn(617)-308))
		}
	}
	var powIn [][2]float64
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5, 9, -8, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, 1e300} {
		for _, y := range []float64{0, math.Copysign(0, -1), 1, 2, 3, -2, -3, 1.5, 0.5, math.Inf(1), math.Inf(-1), math.NaN(), 1e-20, -1e-20} {
			if libmPowError(x, y) {
				continue
			}
			powIn = append(powIn, [2]float64{x, y})
		}
	}
	for len(powIn) < n {
		var x, y float64
		switch len(powIn) % 7 {
		case 0:
			x, y = rng.Float64()*100, rng.Float64()*40-20
		case 1:
			x, y = float64(rng.Intn(201)-100), float64(rng.Intn(101)-50) // negative bases, integer exponents
		case 2:
			x, y = float64(1+rng.Intn(400))/2, float64(rng.Intn(41)-20)/2
		case 3:
			x, y = math.Float64frombits(rng.Uint64()>>1), rng.NormFloat64()
		case 4: // results near overflow and in the subnormal range
			x = 1.5 + rng.Float64()*8.5
			y = []float64{1000 + rng.Float64()*23.9, -1073 + rng.Float64()*50}[rng.Intn(2)] / math.Log2(x)
		case 5:
			x, y = -(1 + rng.Float64()*3), float64(rng.Intn(1001)-500)
		default:
			x, y = math.Float64frombits(1+rng.Uint64()>>12), rng.Float64() // subnormal bases
		}
		if !libmPowError(x, y) {
			powIn = append(powIn, [2]float64{x, y})
		}
	}

	checked, bad := 0, 0
	for _, c := range []struct {
		name, sel string
		rows      [][]float64
	}{
		{"exp", "exp(x)::text", libmRows(expIn)},
		{"ln", "ln(x)::text", libmRows(logIn)},
		{"log", "log(x)::text", libmRows(logIn)},
		{"power", "power(x, y)::text, (x ^ y)::text", libmPairs(powIn)},
	} {
		m := libmCompare(t, ctx, pg, cl, c.name, c.sel, c.rows)
		t.Logf("%s: %d inputs, %d answers differ from PostgreSQL's", c.name, len(c.rows), m)
		checked, bad = checked+len(c.rows), bad+m
	}
	t.Logf("%d inputs checked, %d mismatches", checked, bad)

	// The values of the trial's report, and errors.
	comparePG(t, ctx, pg, one(cl), sameSQL(pgText,
		"SELECT (9::float8 ^ 1.5::float8)::text, log(15::float8)::text, exp(22::float8)::text, ln(176::float8)::text, power(2::float8, 0.5::float8)::text, pow(10::float8, -2::float8)::text")...)
	for q, state := range map[string]string{
		"SELECT ln(0::float8)": "2201E", "SELECT ln(-1::float8)": "2201E", "SELECT log(0::float8)": "2201E", "SELECT log(-1e-300::float8)": "2201E",
		"SELECT power(0::float8, -1::float8)": "2201F", "SELECT power(-8::float8, 1::float8 / 3)": "2201F", "SELECT (-0.5::float8) ^ 0.5::float8": "2201F",
		"SELECT exp(710::float8)": "22003", "SELECT exp(-746::float8)": "22003", "SELECT exp(1e308::float8)": "22003",
		"SELECT power(10::float8, 309::float8)": "22003", "SELECT power(10::float8, -400::float8)": "22003", "SELECT power(-2::float8, 1e300::float8)": "22003",
		"SELECT power(0.5::float8, 1e19::float8)": "22003", "SELECT power(1e-320::float8, 2::float8)": "22003",
	} {
		refusedAsPostgres(t, ctx, cl, pg, q, state)
	}
}

// libmSpecials is the special inputs as rows.
func libmSpecials(xs ...float64) []float64 { return xs }

// strconvPow10 is the double nearest 10^k (as the text 1e<k> reads).
func strconvPow10(k int) float64 {
	v, _ := strconv.ParseFloat(fmt.Sprintf("1e%d", k), 64)
	return v
}

// libmPowError reports whether PostgreSQL's dpow raises an error for x, y: zero to a
// negative power, a negative number to a non-integer power, or a finite result beyond the
// range or rounding to zero (by |y·log2|x|| against the exponent range, with a margin).
func libmPowError(x, y float64) bool {
	switch {
	case math.IsNaN(x) || math.IsNaN(y):
		return false
	case x == 0 && y < 0, x < 0 && math.Floor(y) != y:
		return true
	case math.IsInf(x, 0) || math.IsInf(y, 0) || x == 0 || y == 0:
		return false
	}
	e := y * math.Log2(math.Abs(x))
	return e > 1023.95 || e < -1073.5
}

func libmRows(xs []float64) [][]float64 {
	rows := make([][]float64, len(xs))
	for i, x := range xs {
		rows[i] = []float64{x}
	}
	return rows
}

func libmPairs(ps [][2]float64) [][]float64 {
	rows := make([][]float64, len(ps))
	for i, p := range ps {
		rows[i] = []float64{p[0], p[1]}
	}
	return rows
}

// libmCompare runs SELECT i, <sel> over the rows as VALUES lists (columns x and y of double
// precision; 8,000 rows a query, under the server's 1 MiB of SQL text) on PostgreSQL and
// flightsrv and returns how many rows' texts differ, reporting the first few.
func libmCompare(t *testing.T, ctx context.Context, pg *pgx.Conn, cl *flightsql.Client, name, sel string, rows [][]float64) int {
	t.Helper()
	cols := "i, x"
	if len(rows[0]) == 2 {
		cols = "i, x, y"
	}
	bad := 0
	for start := 0; start < len(rows); start += 8000 {
		chunk := rows[start:min(start+8000, len(rows))]
		var b strings.Builder
		fmt.Fprintf(&b, "SELECT i, %s FROM (VALUES ", sel)
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "(%d", i)
			for _, v := range r {
				fmt.Fprintf(&b, ", '%s'::float8", libmText(v))
			}
			b.WriteString(")")
		}
		fmt.Fprintf(&b, ") v(%s) ORDER BY i", cols)
		q := b.String()
		want := pgTextRows(t, ctx, pg, q)
		got := textColumns(mustRun(t, cl, q))
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, PostgreSQL %d", name, len(got), len(want))
		}
		for i := range want {
			if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
				if bad < 10 {
					t.Errorf("%s%v = %v, PostgreSQL %v", name, chunk[i], got[i][1:], want[i][1:])
				}
				bad++
			}
		}
	}
	return bad
}

// libmText is float8in's text of v.
func libmText(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
