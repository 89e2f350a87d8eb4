package pgnumfmt

// IntIn reads text as PostgreSQL 15's int2in (bits 16), int4in (bits 32) and int8in (bits 64)
// read it (pg_strtoint16, pg_strtoint32, pg_strtoint64 and scanint8): optional white space
// (C's isspace: space, \t, \n, \v, \f, \r), an optional sign, one or more decimal digits,
// optional white space. Nothing else: no base prefix (0x, 0o, 0b), no digit separator (_),
// and leading zeros are decimal ('0012' is 12). Text that is not such a number is an *Error of
// SQLSTATE 22P02 ("invalid input syntax for type smallint", "integer" or "bigint"); digits
// past the type's range are one of 22003 ("value out of range for type …"), found as the
// digits are read (PostgreSQL's order: '99999999999x'::int is out of range). Messages never
// quote the text. It allocates nothing; safe for concurrent use.
func IntIn(s string, bits int) (int64, error) {
	var lim uint64 // the magnitude limit of a negative number; a positive one's is lim-1
	switch bits {
	case 16:
		lim = 1 << 15
	case 32:
		lim = 1 << 31
	default:
		lim = 1 << 63
	}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) || s[i] < '0' || s[i] > '9' {
		return 0, intSyntax(bits)
	}
	max := lim - 1
	if neg {
		max = lim
	}
	var v uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if v > (max-d)/10 {
			return 0, &Error{Code: "22003", Msg: "value out of range for type " + intName(bits)}
		}
		v = v*10 + d
	}
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i != len(s) {
		return 0, intSyntax(bits)
	}
	if neg {
		return -int64(v-1) - 1, nil // -lim without overflowing int64
	}
	return int64(v), nil
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func intName(bits int) string {
	switch bits {
	case 16:
		return "smallint"
	case 32:
		return "integer"
	}
	return "bigint"
}

func intSyntax(bits int) *Error {
	return &Error{Code: "22P02", Msg: "invalid input syntax for type " + intName(bits)}
}

// BoolIn reads text as PostgreSQL's boolin reads it (parse_bool_with_len between optional
// white space): case-insensitively, a non-empty prefix of true, false, yes or no, a prefix of
// on or off of two characters or more ('o' alone is ambiguous), or 1 or 0. Other text is an
// *Error of SQLSTATE 22P02 ("invalid input syntax for type boolean") that does not quote it.
func BoolIn(s string) (bool, error) {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	t := s[i:j]
	prefix := func(word string, min int) bool {
		if len(t) < min || len(t) > len(word) {
			return false
		}
		for k := range len(t) {
			c := t[k]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != word[k] {
				return false
			}
		}
		return true
	}
	switch {
	case prefix("true", 1), prefix("yes", 1), prefix("on", 2), t == "1":
		return true, nil
	case prefix("false", 1), prefix("no", 1), prefix("off", 2), t == "0":
		return false, nil
	}
	return false, &Error{Code: "22P02", Msg: "invalid input syntax for type boolean"}
}
