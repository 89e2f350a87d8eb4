// Package pgnumfmt is PostgreSQL's to_char for numbers (formatting.c's numeric_to_char and
// int4/int8_to_char, NUM_processor's to_char direction), for the template patterns 9, 0, . and
// D (the C locale's point), , and G (its comma), the FM prefix, and characters that are no
// pattern (copied to the output). The value is rounded half away from zero to the template's
// digits after the point (numeric_round); a value with more integer digits than the template
// shows # in every digit position. Other patterns (S, MI, PL, SG, PR, EEEE, RN, TH, V, L,
// quoted text) are refused by Parse, by name. Templates are read-only once parsed: a Template
// may be used by several goroutines.
package pgnumfmt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// numPart is one element of a parsed number template.
type numPart struct {
	kind byte   // '9', '0', '.', ',' or 0 for literal text
	text string // the literal
}

// Template is a parsed to_char template for numbers (Parse).
type Template struct {
	parts     []numPart
	pre, post int  // digit positions before and after the point
	decimal   bool // the template has a point
	fill      bool // FM
	zeroStart int  // 0-based position of the first 0 before the point (valid when zero)
	zero      bool // a 0 before the point
	zeroEnd   int  // pre + post at the last 0
}

// Parse reads a to_char template for numbers; a pattern it does not implement
// is an error naming it.
func Parse(f string) (*Template, error) {
	t := &Template{}
	for i := 0; i < len(f); {
		c := f[i]
		up := strings.ToUpper(f[i:min(i+2, len(f))])
		switch {
		case up == "FM" && (f[i:i+2] == "FM" || f[i:i+2] == "fm"):
			t.fill = true
			i += 2
			continue
		case c == '9':
			if t.decimal {
				t.post++
			} else {
				t.pre++
			}
			t.parts = append(t.parts, numPart{kind: '9'})
		case c == '0':
			if !t.zero && !t.decimal {
				t.zero, t.zeroStart = true, t.pre
			}
			if t.decimal {
				t.post++
			} else {
				t.pre++
			}
			t.zeroEnd = t.pre + t.post
			t.parts = append(t.parts, numPart{kind: '0'})
		case c == '.' || c == 'D' || c == 'd':
			if t.decimal {
				return nil, errors.New("multiple decimal points")
			}
			t.decimal = true
			t.parts = append(t.parts, numPart{kind: '.'})
		case c == ',' || c == 'G' || c == 'g':
			t.parts = append(t.parts, numPart{kind: ','})
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '"' || c == '\\':
			return nil, fmt.Errorf("the number pattern %q", f[i:])
		default:
			t.parts = append(t.parts, numPart{text: string(c)})
		}
		i++
	}
	if t.pre+t.post == 0 {
		return nil, errors.New("a template without digit positions")
	}
	if t.decimal && t.post == 0 {
		return nil, errors.New("a template whose point has no digit position after it")
	}
	return t, nil
}

// Format writes d (finite) as numeric_to_char writes it with t.
func (t *Template) Format(d *apd.Decimal) string {
	// numeric_round(value, post), then numeric_out: exactly post digits after the point.
	ctx := apd.BaseContext.WithPrecision(100)
	ctx.Rounding = apd.RoundHalfUp
	var r apd.Decimal
	if _, err := ctx.Quantize(&r, d, -int32(t.post)); err != nil {
		r.Set(d)
	}
	if r.IsZero() {
		r.Negative = false // numeric has no negative zero
	}
	org := r.Text('f')
	sign := byte('+')
	if strings.HasPrefix(org, "-") {
		sign, org = '-', org[1:]
	}
	preLen := len(org)
	if p := strings.IndexByte(org, '.'); p >= 0 {
		preLen = p
	}
	number := org
	outPreSpaces := 0
	if preLen < t.pre {
		outPreSpaces = t.pre - preLen
	} else if preLen > t.pre {
		b := []byte(strings.Repeat("#", t.pre+t.post+1))
		b[t.pre] = '.'
		number = string(b)
	}
	return t.process(number, outPreSpaces, sign)
}

// process is NUM_processor's to_char direction for the patterns Template knows.
func (t *Template) process(number string, outPreSpaces int, sign byte) string {
	var out strings.Builder
	signWrote := sign == '+' && t.fill // FM: a positive number needs no sign
	lastRelevant := -1                 // index into number; -1: none
	if t.fill && t.decimal {
		if p := strings.IndexByte(number, '.'); p >= 0 {
			lastRelevant = p
			for k := p + 1; k < len(number); k++ {
				if number[k] != '0' {
					lastRelevant = k
				}
			}
			if t.zeroEnd > outPreSpaces {
				lz := min(len(number)-1, t.zeroEnd-outPreSpaces)
				if lastRelevant < lz {
					lastRelevant = lz
				}
			}
		}
	}
	np := 0 // the next character of number
	at := func(k int) byte {
		if k < len(number) {
			return number[k]
		}
		return 0
	}
	numIn := false
	cur := 0
	predecSpace := func() bool {
		return !t.zero && np == 0 && at(0) == '0' && t.post != 0
	}
	lastIsPoint := lastRelevant >= 0 && at(lastRelevant) == '.'
	for _, p := range t.parts {
		switch p.kind {
		case 0:
			out.WriteString(p.text)
			continue
		case ',':
			if !numIn {
				if !t.fill {
					out.WriteByte(' ')
				}
			} else {
				out.WriteByte(',')
			}
			continue
		}
		// NUM_numpart_to_char.
		numIn = false
		if !signWrote && (cur >= outPreSpaces || (t.zero && t.zeroStart == cur)) && (!predecSpace() || lastIsPoint) {
			if sign == '-' {
				out.WriteByte('-')
			} else if !t.fill {
				out.WriteByte(' ')
			}
			signWrote = true
		}
		switch {
		case cur < outPreSpaces && (t.zeroStart > cur || !t.zero):
			if !t.fill {
				out.WriteByte(' ')
			}
		case t.zero && cur < outPreSpaces && t.zeroStart <= cur:
			out.WriteByte('0')
			numIn = true
		default:
			if at(np) == '.' {
				out.WriteByte('.')
			} else {
				switch {
				case lastRelevant >= 0 && np > lastRelevant && p.kind != '0':
				case predecSpace():
					if !t.fill {
						out.WriteByte(' ')
					} else if lastIsPoint {
						out.WriteByte('0')
					}
				default:
					if c := at(np); c != 0 {
						out.WriteByte(c)
					}
					numIn = true
				}
			}
			if at(np) != 0 {
				np++
			}
		}
		cur++
	}
	return out.String()
}
