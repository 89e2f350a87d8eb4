// Package pgnumfmt is PostgreSQL's to_char for numbers: its template parser for
// numbers (its keyword table, quoting rules and NUMDesc_prepare checks) and NUM_processor's
// to_char direction, fed as numeric_to_char, int4_to_char, int8_to_char, float4_to_char and
// float8_to_char feed it, in the C locale (lc_numeric and lc_monetary C, the test server's:
// D writes ".", G ",", L a space, S "-" or "+").
//
// Every pattern is implemented: 9, 0, . and D, , and G, FM, S, MI, PL, SG, PR, L, RN and rn
// (1 to 3999, else 15 #), TH and th, V, EEEE, and B, C and SP (which PostgreSQL reads and
// writes nothing for); text in double quotes (a backslash quoting the next character), a
// backslash before a double quote outside them, and any other character are copied. The
// outputs are PostgreSQL's to the byte, its oddities included (checked against a real server
// by TestToCharAsPostgres and e2e's TestToCharNumberAsPostgres): a sign written where the
// first digit would be, a float whose digits PostgreSQL cuts at 15 (6 for real) significant
// ones ending the output there, EEEE ignoring the template's other characters. Errors are
// PostgreSQL's: a template it rejects is a *Error of SQLSTATE 42601 from Parse; a value it
// cannot write (RN of a value outside integer's range, V overflowing bigint) one of 22003
// from the formatting method. Two things PostgreSQL leaves to the C compiler are refused
// (*Error of 0A000): V of more than 9 digits for an integer and of more than 22 for a double.
//
// Templates are read-only once parsed: a Template may be used by several goroutines.
package pgnumfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Error is a template PostgreSQL rejects or a value it cannot write with it, with the
// SQLSTATE PostgreSQL reports (42601 syntax_error, 22003 numeric_value_out_of_range, 22P02
// invalid_text_representation), or a case this package refuses (0A000). Msg quotes no value.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func syntaxError(msg string) *Error { return &Error{Code: "42601", Msg: msg} }

// Keyword ids (PostgreSQL's NUM_poz; lower-case rn and th are their own).
const (
	kComma = iota + 1
	kDec
	k0
	k9
	kB
	kC
	kD
	kE
	kFM
	kG
	kL
	kMI
	kPL
	kPR
	kRN
	kSG
	kSP
	kS
	kTH
	kV
	krn
	kth
)

// keywords is NUM_keywords in its order: among those sharing a first character the longer
// comes first, and the first that starts the text wins.
var keywords = []struct {
	name string
	id   int
}{
	{",", kComma}, {".", kDec}, {"0", k0}, {"9", k9}, {"B", kB}, {"C", kC}, {"D", kD},
	{"EEEE", kE}, {"FM", kFM}, {"G", kG}, {"L", kL}, {"MI", kMI}, {"PL", kPL}, {"PR", kPR},
	{"RN", kRN}, {"SG", kSG}, {"SP", kSP}, {"S", kS}, {"TH", kTH}, {"V", kV},
	{"b", kB}, {"c", kC}, {"d", kD}, {"eeee", kE}, {"fm", kFM}, {"g", kG}, {"l", kL},
	{"mi", kMI}, {"pl", kPL}, {"pr", kPR}, {"rn", krn}, {"sg", kSG}, {"sp", kSP}, {"s", kS},
	{"th", kth}, {"v", kV},
}

// Flags of a number description (NUM_F_*).
const (
	fDecimal = 1 << iota
	fZero
	fBlank
	fFill
	fLSign
	fBracket
	fMinus
	fPlus
	fRoman
	fMulti
	fEEEE
)

// Where S writes its sign.
const (
	lsignNone = iota
	lsignPre
	lsignPost
)

// node is one element of a parsed template: a keyword (id) or copied text.
type node struct {
	id   int
	text string
}

// desc is PostgreSQL's NUMDesc: the digit positions before and after the point, the flags,
// where S goes, V's digits, and the first and last 0 (zeroStart 0-based, valid with fZero).
type desc struct {
	pre, post, lsign, flag, preLsignNum, multi, zeroStart, zeroEnd int
}

func (d *desc) is(f int) bool { return d.flag&f != 0 }

// Template is a parsed to_char template for numbers (Parse).
type Template struct {
	nodes []node
	d     desc
}

// Parse reads a to_char template for numbers as PostgreSQL's parse_format does; a template
// PostgreSQL rejects is a *Error (42601) with PostgreSQL's message.
func Parse(f string) (*Template, error) {
	t := &Template{}
	zeroStart1 := 0 // NUMDesc's zero_start: 1-based, 0 when no 0
	for i := 0; i < len(f); {
		id := 0
		for _, k := range keywords {
			if strings.HasPrefix(f[i:], k.name) {
				id = k.id
				i += len(k.name)
				break
			}
		}
		if id != 0 {
			if err := t.d.prepare(id, &zeroStart1); err != nil {
				return nil, err
			}
			t.nodes = append(t.nodes, node{id: id})
			continue
		}
		switch {
		case f[i] == '"':
			i++
			for i < len(f) {
				if f[i] == '"' {
					i++
					break
				}
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				t.nodes = append(t.nodes, node{text: f[i : i+1]})
				i++
			}
		case f[i] == '\\' && i+1 < len(f) && f[i+1] == '"':
			t.nodes = append(t.nodes, node{text: `"`})
			i += 2
		default:
			t.nodes = append(t.nodes, node{text: f[i : i+1]})
			i++
		}
	}
	t.d.zeroStart = max(zeroStart1-1, 0)
	return t, nil
}

// prepare is NUMDesc_prepare: it records keyword id in d, or rejects the template.
func (d *desc) prepare(id int, zeroStart1 *int) error {
	if d.is(fEEEE) && id != kE {
		return syntaxError(`"EEEE" must be the last pattern used`)
	}
	switch id {
	case k9:
		if d.is(fBracket) {
			return syntaxError(`"9" must be ahead of "PR"`)
		}
		switch {
		case d.is(fMulti):
			d.multi++
		case d.is(fDecimal):
			d.post++
		default:
			d.pre++
		}
	case k0:
		if d.is(fBracket) {
			return syntaxError(`"0" must be ahead of "PR"`)
		}
		if !d.is(fZero) && !d.is(fDecimal) {
			d.flag |= fZero
			*zeroStart1 = d.pre + 1
		}
		if d.is(fDecimal) {
			d.post++
		} else {
			d.pre++
		}
		d.zeroEnd = d.pre + d.post
	case kB:
		if d.pre == 0 && d.post == 0 && !d.is(fZero) {
			d.flag |= fBlank
		}
	case kD, kDec:
		if d.is(fDecimal) {
			return syntaxError("multiple decimal points")
		}
		if d.is(fMulti) {
			return syntaxError(`cannot use "V" and decimal point together`)
		}
		d.flag |= fDecimal
	case kFM:
		d.flag |= fFill
	case kS:
		if d.is(fLSign) {
			return syntaxError(`cannot use "S" twice`)
		}
		if d.is(fPlus) || d.is(fMinus) || d.is(fBracket) {
			return syntaxError(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if !d.is(fDecimal) {
			d.lsign, d.preLsignNum = lsignPre, d.pre
			d.flag |= fLSign
		} else if d.lsign == lsignNone {
			d.lsign = lsignPost
			d.flag |= fLSign
		}
	case kMI:
		if d.is(fLSign) {
			return syntaxError(`cannot use "S" and "MI" together`)
		}
		d.flag |= fMinus
	case kPL:
		if d.is(fLSign) {
			return syntaxError(`cannot use "S" and "PL" together`)
		}
		d.flag |= fPlus
	case kSG:
		if d.is(fLSign) {
			return syntaxError(`cannot use "S" and "SG" together`)
		}
		d.flag |= fMinus | fPlus
	case kPR:
		if d.is(fLSign) || d.is(fPlus) || d.is(fMinus) {
			return syntaxError(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		d.flag |= fBracket
	case kRN, krn:
		d.flag |= fRoman
	case kV:
		if d.is(fDecimal) {
			return syntaxError(`cannot use "V" and decimal point together`)
		}
		d.flag |= fMulti
	case kE:
		if d.is(fEEEE) {
			return syntaxError(`cannot use "EEEE" twice`)
		}
		if d.is(fBlank) || d.is(fFill) || d.is(fLSign) || d.is(fBracket) || d.is(fMinus) || d.is(fPlus) || d.is(fRoman) || d.is(fMulti) {
			return syntaxError(`"EEEE" is incompatible with other formats`)
		}
		d.flag |= fEEEE
	}
	return nil
}

// Numeric writes d (finite) as numeric_to_char does.
func (t *Template) Numeric(d *apd.Decimal) (string, error) {
	n := t.d
	switch {
	case n.is(fRoman):
		// numeric_int4: rounded half away from zero; outside integer's range an error.
		var r apd.Decimal
		if _, err := roundCtx(d, 0).Quantize(&r, d, 0); err != nil {
			return "", outOfRange("integer")
		}
		v, err := r.Int64()
		if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
			return "", outOfRange("integer")
		}
		return t.process(n, roman(v), 0, 0)
	case n.is(fEEEE):
		s := sciText(d, n.post)
		if s[0] != '-' {
			s = " " + s
		}
		return t.process(n, s, 0, 0)
	}
	val := d
	if n.is(fMulti) {
		val = new(apd.Decimal).Set(d)
		val.Exponent += int32(n.multi)
		n.pre += n.multi
	}
	var r apd.Decimal
	if _, err := roundCtx(val, n.post).Quantize(&r, val, -int32(n.post)); err != nil {
		return "", &Error{Code: "22003", Msg: "value out of range for to_char"}
	}
	if r.IsZero() {
		r.Negative = false // numeric has no negative zero
	}
	return t.decimalText(n, r.Text('f'))
}

// roundCtx is a context rounding half away from zero (numeric_round's rule) with the
// precision d needs at places digits after the point.
func roundCtx(d *apd.Decimal, places int) *apd.Context {
	digits := d.NumDigits() + int64(d.Exponent) + int64(places) + 2
	ctx := apd.BaseContext.WithPrecision(uint32(max(digits, 16)))
	ctx.Rounding = apd.RoundHalfUp
	return ctx
}

// sciText is numeric_out_sci(d, places): d's significand rounded half away from zero to
// places digits after the point (10.00 when it rounds up to ten), then e and the exponent of
// d's first digit with its sign and at least two digits.
func sciText(d *apd.Decimal, places int) string {
	exp := int64(0)
	if !d.IsZero() {
		exp = d.NumDigits() + int64(d.Exponent) - 1
	}
	sig := apd.Decimal{Coeff: d.Coeff, Exponent: d.Exponent - int32(exp), Negative: d.Negative}
	var r apd.Decimal
	if _, err := roundCtx(&sig, places).Quantize(&r, &sig, -int32(places)); err != nil {
		r.Set(&sig)
	}
	if r.IsZero() {
		r.Negative = false
	}
	return fmt.Sprintf("%se%+03d", r.Text('f'), exp)
}

// Int4 writes v as int4_to_char does (to_char of smallint and integer).
func (t *Template) Int4(v int32) (string, error) {
	n := t.d
	switch {
	case n.is(fRoman):
		return t.process(n, roman(int64(v)), 0, 0)
	case n.is(fEEEE):
		// Through float8, which holds every integer exactly: printf's %+.*e.
		return t.process(n, floatSci(float64(v), n.post), 0, 0)
	}
	if n.is(fMulti) {
		if n.multi > 9 {
			return "", &Error{Code: "0A000", Msg: `"V" of more than 9 digits for an integer is not supported`}
		}
		// int4_to_char multiplies in 32 bits, wrapping as PostgreSQL (built with -fwrapv) does.
		v *= int32(pow10[n.multi])
		n.pre += n.multi
	}
	return t.integerText(n, strconv.FormatInt(int64(v), 10))
}

// Int8 writes v as int8_to_char does (to_char of bigint).
func (t *Template) Int8(v int64) (string, error) {
	n := t.d
	switch {
	case n.is(fRoman):
		if v < math.MinInt32 || v > math.MaxInt32 {
			return "", outOfRange("integer")
		}
		return t.process(n, roman(v), 0, 0)
	case n.is(fEEEE):
		s := sciText(apd.New(v, 0), n.post)
		if s[0] != '-' {
			s = " " + s
		}
		return t.process(n, s, 0, 0)
	}
	if n.is(fMulti) {
		if n.multi > 18 {
			return "", outOfRange("bigint") // dtoi8 of 10^multi
		}
		p := int64(pow10[n.multi])
		if v != 0 && (v > math.MaxInt64/p || v < math.MinInt64/p) {
			return "", outOfRange("bigint")
		}
		v *= p
		n.pre += n.multi
	}
	return t.integerText(n, strconv.FormatInt(v, 10))
}

func outOfRange(typ string) *Error {
	return &Error{Code: "22003", Msg: typ + " out of range"}
}

// pow10 are the powers of ten a double holds exactly.
var pow10 = func() (p [23]float64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Float8 writes v as float8_to_char does: at most 15 (DBL_DIG) significant digits.
func (t *Template) Float8(v float64) (string, error) {
	return t.float(v, 15, func(x float64) float64 { return x })
}

// Float4 writes v as float4_to_char does: at most 6 (FLT_DIG) significant digits, V's
// product computed in single precision.
func (t *Template) Float4(v float32) (string, error) {
	return t.float(float64(v), 6, func(x float64) float64 { return float64(float32(x)) })
}

func (t *Template) float(v float64, digits int, narrow func(float64) float64) (string, error) {
	n := t.d
	switch {
	case n.is(fRoman):
		r := math.RoundToEven(v) // rint
		iv := int64(math.MaxInt32)
		if !math.IsNaN(r) && r >= math.MinInt32 && r < -math.MinInt32 {
			iv = int64(r)
		}
		return t.process(n, roman(iv), 0, 0)
	case n.is(fEEEE):
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b := []byte(strings.Repeat("#", n.pre+n.post+6))
			b[0], b[n.pre+1] = ' ', '.'
			return t.process(n, string(b), 0, 0)
		}
		return t.process(n, floatSci(v, n.post), 0, 0)
	}
	val := v
	if n.is(fMulti) {
		if n.multi >= len(pow10) {
			return "", &Error{Code: "0A000", Msg: `"V" of more than 22 digits for double precision is not supported`}
		}
		val = narrow(v * narrow(pow10[n.multi]))
		n.pre += n.multi
	}
	preLen := len(cFloat(math.Abs(val), 0))
	if preLen >= digits {
		n.post = 0
	} else if preLen+n.post > digits {
		n.post = digits - preLen
	}
	return t.decimalText(n, cFloat(val, n.post))
}

// cFloat is PostgreSQL's snprintf "%.*f": the C library's digits, NaN, Infinity and
// -Infinity spelled out.
func cFloat(v float64, places int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(v, 'f', places, 64)
}

// floatSci is printf's "%+.*e" of v (finite) with the plus sign a space: correctly rounded,
// ties to even, at least two exponent digits.
func floatSci(v float64, places int) string {
	s := strconv.FormatFloat(v, 'e', places, 64)
	if s[0] != '-' {
		s = " " + s
	}
	return s
}

// integerText is the common tail of int4_to_char and int8_to_char: org is the decimal text
// of the (multiplied) value.
func (t *Template) integerText(n desc, org string) (string, error) {
	sign := byte('+')
	if org[0] == '-' {
		sign, org = '-', org[1:]
	}
	preLen := len(org)
	number := org
	if n.post > 0 {
		number = org + "." + strings.Repeat("0", n.post)
	}
	return t.finish(n, number, preLen, sign)
}

// decimalText is the common tail of numeric_to_char and float8_to_char: org is the value's
// text with its digits after the point.
func (t *Template) decimalText(n desc, org string) (string, error) {
	sign := byte('+')
	if org[0] == '-' {
		sign, org = '-', org[1:]
	}
	preLen := len(org)
	if p := strings.IndexByte(org, '.'); p >= 0 {
		preLen = p
	}
	return t.finish(n, org, preLen, sign)
}

// finish pads a number with fewer digits before the point than the template has, or
// replaces one with more by # in every position, and processes it.
func (t *Template) finish(n desc, number string, preLen int, sign byte) (string, error) {
	outPreSpaces := 0
	if preLen < n.pre {
		outPreSpaces = n.pre - preLen
	} else if preLen > n.pre {
		b := []byte(strings.Repeat("#", n.pre+n.post+1))
		b[n.pre] = '.'
		number = string(b)
	}
	return t.process(n, number, outPreSpaces, sign)
}

// roman is int_to_roman: 1 to 3999 in upper-case Roman numerals, anything else 15 #.
func roman(v int64) string {
	if v < 1 || v > 3999 {
		return strings.Repeat("#", 15)
	}
	ones := []string{"", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"}
	tens := []string{"", "X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"}
	hundreds := []string{"", "C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"}
	return strings.Repeat("M", int(v/1000)) + hundreds[v/100%10] + tens[v/10%10] + ones[v%10]
}

// Ordinal is PostgreSQL's get_th, the suffix TH and th write for numbers and timestamp
// fields alike: the English ordinal suffix of the digits s (st, nd, rd; th for the teens and
// the rest), upper-cased when upper. s must not be empty.
func Ordinal(s string, upper bool) string {
	suf := "th"
	if n := len(s); !(n > 1 && s[n-2] == '1') {
		switch s[n-1] {
		case '1':
			suf = "st"
		case '2':
			suf = "nd"
		case '3':
			suf = "rd"
		}
	}
	if upper {
		return strings.ToUpper(suf)
	}
	return suf
}

// process is NUM_processor's to_char direction: number is the value's text without its sign
// (digits, a point, or # when too wide; the Roman numeral for RN; the whole output for
// EEEE), outPreSpaces the template's digit positions before the point that number leaves
// empty, sign '+', '-' or 0 (RN). A NUL PostgreSQL writes into its output (SG of RN, a
// digit position past a number cut short) ends the output there, as it does PostgreSQL's.
func (t *Template) process(n desc, number string, outPreSpaces int, sign byte) (string, error) {
	if n.is(fEEEE) {
		return number, nil
	}
	if n.is(fRoman) {
		n.lsign, n.preLsignNum, n.post, n.pre, outPreSpaces = 0, 0, 0, 0, 0
		n.flag = fRoman | n.flag&fFill
	}
	fill, zero, decimal := n.is(fFill), n.is(fZero), n.is(fDecimal)
	signWrote := false
	if n.is(fPlus) || n.is(fMinus) {
		signWrote = !(n.is(fPlus) && !n.is(fMinus))
	} else {
		if sign != '-' && fill {
			n.flag &^= fBracket
		}
		signWrote = sign == '+' && fill && !n.is(fLSign)
		if n.lsign == lsignPre && n.pre == n.preLsignNum {
			n.lsign = lsignPost
		}
	}
	bracket, lsign := n.is(fBracket), n.is(fLSign)
	numCount := n.post + n.pre - 1
	lastRelevant := -1 // index into number of the last digit FM keeps after the point
	if fill && decimal {
		if p := strings.IndexByte(number, '.'); p >= 0 {
			lastRelevant = p
			for k := p + 1; k < len(number); k++ {
				if number[k] != '0' {
					lastRelevant = k
				}
			}
			if n.zeroEnd > outPreSpaces {
				lastRelevant = max(lastRelevant, min(len(number)-1, n.zeroEnd-outPreSpaces))
			}
		}
	}
	if !signWrote && outPreSpaces == 0 {
		numCount++
	}
	at := func(k int) byte {
		if k < len(number) {
			return number[k]
		}
		return 0
	}
	signChar := func(plus, minus byte) byte {
		if sign == '-' {
			return minus
		}
		return plus
	}
	lastIsPoint := lastRelevant >= 0 && number[lastRelevant] == '.'
	out := make([]byte, 0, len(t.nodes)+len(number)+16)
	np, numCurr, numIn := 0, 0, false
	predecSpace := func() bool { return !zero && np == 0 && at(0) == '0' && n.post != 0 }
	numpart := func(id int) { // NUM_numpart_to_char
		numIn = false
		if !signWrote && (numCurr >= outPreSpaces || zero && n.zeroStart == numCurr) && (!predecSpace() || lastIsPoint) {
			switch {
			case lsign:
				if n.lsign == lsignPre {
					out = append(out, signChar('+', '-'))
					signWrote = true
				}
			case bracket:
				out = append(out, signChar(' ', '<'))
				signWrote = true
			case sign == '+':
				if !fill {
					out = append(out, ' ')
				}
				signWrote = true
			case sign == '-':
				out = append(out, '-')
				signWrote = true
			}
		}
		switch {
		case numCurr < outPreSpaces && (n.zeroStart > numCurr || !zero):
			if !fill {
				out = append(out, ' ')
			}
		case zero && numCurr < outPreSpaces && n.zeroStart <= numCurr:
			out = append(out, '0')
			numIn = true
		default:
			switch {
			case at(np) == '.':
				out = append(out, '.')
			case lastRelevant >= 0 && np > lastRelevant && id != k0:
			case predecSpace():
				if !fill {
					out = append(out, ' ')
				} else if lastIsPoint {
					out = append(out, '0')
				}
			default:
				out = append(out, at(np))
				numIn = true
			}
			if at(np) != 0 {
				np++
			}
		}
		end := numCount
		if outPreSpaces != 0 {
			end++
		}
		if decimal {
			end++
		}
		if lastRelevant >= 0 && lastRelevant == np {
			end = numCurr
		}
		if numCurr+1 == end {
			if signWrote && bracket {
				out = append(out, signChar(' ', '>'))
			} else if lsign && n.lsign == lsignPost {
				out = append(out, signChar('+', '-'))
			}
		}
		numCurr++
	}
	for _, nd := range t.nodes {
		if nd.id == 0 {
			out = append(out, nd.text...)
			continue
		}
		switch nd.id {
		case k9, k0, kDec, kD:
			if !n.is(fRoman) {
				numpart(nd.id)
			}
		case kComma, kG:
			switch {
			case numIn:
				out = append(out, ',')
			case !fill:
				out = append(out, ' ')
			}
		case kL:
			out = append(out, ' ') // the C locale has no currency symbol: PostgreSQL writes a space
		case kRN, krn:
			s := number[min(np, len(number)):]
			if nd.id == krn {
				s = strings.ToLower(s)
			}
			if !fill {
				s = fmt.Sprintf("%15s", s)
			}
			out = append(out, s...)
		case kTH, kth:
			if n.is(fRoman) || at(0) == '#' || sign == '-' || decimal {
				continue
			}
			if len(number) == 0 || number[len(number)-1] < '0' || number[len(number)-1] > '9' {
				return "", &Error{Code: "22P02", Msg: fmt.Sprintf("%q is not a number", number)}
			}
			out = append(out, Ordinal(number, nd.id == kTH)...)
		case kMI:
			switch {
			case sign == '-':
				out = append(out, '-')
			case !fill:
				out = append(out, ' ')
			}
		case kPL:
			switch {
			case sign == '+':
				out = append(out, '+')
			case !fill:
				out = append(out, ' ')
			}
		case kSG:
			out = append(out, sign)
		}
	}
	if k := strings.IndexByte(string(out), 0); k >= 0 {
		out = out[:k]
	}
	return string(out), nil
}
