package pgregex

import "regexp/syntax"

// looksBehindPattern reports whether the Go pattern goPattern (a compiled Regexp's String) asserts on
// the text before a position: ^ (at the text's start, or after a newline in newline-sensitive
// mode), \A, and the word boundaries \b and \B (PostgreSQL's \m, \M, \y and \Y translate to
// them). Searching a suffix of a subject sees the suffix's start as the text's start, so such
// a pattern must be searched in the whole subject (Go's FindAll) to match as PostgreSQL's
// search, which keeps its position in the whole string. A pattern that does not parse is
// reported as looking behind (the caller then takes the whole-subject search). Compile
// records it as Regexp.LooksBehind.
func looksBehindPattern(goPattern string) bool {
	re, err := syntax.Parse(goPattern, syntax.Perl)
	if err != nil {
		return true
	}
	return looksBehind(re)
}

func looksBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if looksBehind(sub) {
			return true
		}
	}
	return false
}
