package substrait

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// maxChainDepth bounds CheckDepth's estimate of a statement's parse-tree depth.
//
// PostgreSQL's grammar reduces left-associative chains (a + b + c …, a::t::t …, a IS NULL IS
// NULL …, q1 UNION q2 UNION …, t1 JOIN t2 ON … JOIN …) without growing bison's stack, so the
// parser accepts them at any length, but the tree it builds is as deep as the chain, and
// pg_query's C code that serialises it recurses once a level with no check of its own: about
// 25,000 levels overflow the parsing thread's C stack and the process dies (SIGSEGV in cgo),
// found by a trial of 25,000 `+1` terms. Everything nesting by brackets or right recursion
// grows bison's stack instead, which is bounded (syntaxError's "memory exhausted"), and the
// tree pg_query hands back is decoded at most 10,000 protobuf levels deep, two a level of
// operators: no statement with a chain deeper than about 5,000 operators was ever answered.
// The estimate counts more than the depth (every keyword of a segment, for one), so a statement
// past it may be shallower than that; those seen (TestCheckDepth) were refused by the parse or
// by planning's bounds (256 UNION branches, 4,096 relations) anyway.
const maxChainDepth = 10_000

// CheckDepth refuses (errTooDeep, SQLSTATE 54001) a statement whose parse tree could be deeper
// than maxChainDepth, before PostgreSQL's parser builds it (above). The estimate, from
// PostgreSQL's own lexer (pg_query Scan: no recursion), never undercounts. A bracket level
// ((), [] and CASE … END) is cut into segments by the separators of flat lists (a comma, AND,
// OR, WHEN, THEN, ELSE) and by set operations and joins; a segment is as deep as its tokens,
// except identifiers, constants and parameters, plus its deepest bracketed level, and a
// bracketed level as deep as its deepest segment plus its set operations and joins (which
// chain across the segments) plus one. A statement shorter than maxChainDepth bytes cannot
// exceed it (a token is a byte at least) and is not scanned. Text that does not scan is left to the parser, which reports it.
func CheckDepth(sql string) error {
	if len(sql) <= maxChainDepth {
		return nil
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return nil
	}
	// frame is a bracket level: the open segment's tokens (seg) and deepest bracketed level
	// (child), the deepest closed segment (best), the set operations and joins (rel).
	type frame struct{ seg, child, best, rel int }
	depth := func(f frame) int { return max(f.best, f.seg+f.child) + f.rel }
	frames := []frame{{}}
	for _, t := range res.GetTokens() {
		top := &frames[len(frames)-1]
		switch t.Token {
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT,
			pg.Token_IDENT, pg.Token_UIDENT, pg.Token_ICONST, pg.Token_FCONST, pg.Token_SCONST,
			pg.Token_USCONST, pg.Token_BCONST, pg.Token_XCONST, pg.Token_PARAM,
			pg.Token_ASCII_46, pg.Token_ASCII_59: // . ;
		case pg.Token_ASCII_44, pg.Token_AND, pg.Token_OR, pg.Token_WHEN, pg.Token_THEN, pg.Token_ELSE: // ,
			top.best = max(top.best, top.seg+top.child)
			top.seg, top.child = 0, 0
		case pg.Token_ASCII_40, pg.Token_ASCII_91, pg.Token_CASE: // ( [ CASE
			frames = append(frames, frame{})
		case pg.Token_ASCII_41, pg.Token_ASCII_93, pg.Token_END_P: // ) ] END
			if len(frames) == 1 {
				top.seg++
				break
			}
			d := depth(*top) + 1
			frames = frames[:len(frames)-1]
			top = &frames[len(frames)-1]
			top.child = max(top.child, d)
			top.seg++ // the bracketed operand is a level of the chain it stands in
		case pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_JOIN:
			top.best = max(top.best, top.seg+top.child)
			top.seg, top.child = 0, 0
			top.rel++
		default:
			top.seg++
		}
		if depth(*top) > maxChainDepth {
			return errTooDeep("10,000 levels of chained operators, casts, set operations or joins")
		}
	}
	return nil
}
