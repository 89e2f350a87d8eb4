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
// operators (syntaxError's "recursion depth": 54001 too): a chain deeper than about 5,000
// operators is refused there, past PostgreSQL's own limit (its max_stack_depth of 2 MB stops a
// chain of `+ 1` between 4,000 and 5,000 terms, also 54001). The estimate counts operators
// with a precedence as the tree they build and every other token of a segment (keywords) as a
// level, so it is at least the depth and close to it for arithmetic: a statement past it
// (TestCheckDepth) is past the decoder's limit too, or refused by planning's bounds (256
// UNION branches, 4,096 relations). The binder, the executor's compiler and its evaluation
// recurse once a level on goroutine stacks, which grow (to 1 GB): 5,000 levels are far within.
const maxChainDepth = 10_000

// CheckDepth refuses (errTooDeep, SQLSTATE 54001) a statement whose parse tree could be deeper
// than maxChainDepth, before PostgreSQL's parser builds it (above). The estimate, from
// PostgreSQL's own lexer (pg_query Scan: no recursion), never undercounts. A bracket level
// ((), [] and CASE … END) is cut into segments by the separators of flat lists (a comma, AND,
// OR, WHEN, THEN, ELSE) and by set operations and joins. Within a segment the operators
// PostgreSQL's grammar declares with a precedence (+ - * / % ^, comparisons, other symbolic
// operators, unary minus and NOT, the :: cast) build the tree the grammar builds (gram.y's
// precedence declarations), so a segment is as deep as that tree, each bracketed operand one
// level deeper than its content, plus one level for every other token (keywords, IS NULL,
// COLLATE…), which may each add one; a bracketed level is as deep as its deepest segment plus
// its set operations and joins (which chain across the segments) plus one. A sum of products
// of casts is as deep as its sum: `a::float8 * b::float8 + …` of 2,500 terms is about 2,500
// levels, which PostgreSQL (its max_stack_depth of 2 MB reached past about 4,000) and we answer.
// A statement shorter than maxChainDepth bytes cannot exceed it (a token is a byte at least)
// and is not scanned. Text that does not scan is left to the parser, which reports it.
func CheckDepth(sql string) error {
	if len(sql) <= maxChainDepth {
		return nil
	}
	res, err := pg.Scan(sql)
	if err != nil {
		return nil
	}
	frames := []depthFrame{newDepthFrame()}
	for _, t := range res.GetTokens() {
		top := &frames[len(frames)-1]
		switch t.Token {
		case pg.Token_SQL_COMMENT, pg.Token_C_COMMENT, pg.Token_ASCII_59: // ;
		case pg.Token_IDENT, pg.Token_UIDENT, pg.Token_ICONST, pg.Token_FCONST, pg.Token_SCONST,
			pg.Token_USCONST, pg.Token_BCONST, pg.Token_XCONST, pg.Token_PARAM:
			top.seg.operand(0)
		case pg.Token_ASCII_46: // . (a qualified name or a field: its name is not an operand)
			top.seg.name = true
		case pg.Token_ASCII_44, pg.Token_AND, pg.Token_OR, pg.Token_WHEN, pg.Token_THEN, pg.Token_ELSE: // ,
			top.closeSegment()
		case pg.Token_ASCII_40, pg.Token_ASCII_91, pg.Token_CASE: // ( [ CASE
			frames = append(frames, newDepthFrame())
		case pg.Token_ASCII_41, pg.Token_ASCII_93, pg.Token_END_P: // ) ] END
			if len(frames) == 1 {
				top.seg.other()
				break
			}
			top.closeSegment()
			d := top.best + top.rel + 1
			frames = frames[:len(frames)-1]
			top = &frames[len(frames)-1]
			top.seg.name = false
			top.seg.operand(d)
		case pg.Token_UNION, pg.Token_INTERSECT, pg.Token_EXCEPT, pg.Token_JOIN:
			top.closeSegment()
			top.rel++
		default:
			top.seg.token(t.Token)
		}
		if top.depth() > maxChainDepth {
			return errTooDeep("10,000 levels of chained operators, casts, set operations or joins")
		}
	}
	return nil
}

// depthFrame is a bracket level of CheckDepth: its open segment, its deepest closed segment
// (best) and its set operations and joins (rel).
type depthFrame struct {
	seg       depthChain
	best, rel int
}

func newDepthFrame() depthFrame { return depthFrame{seg: depthChain{expect: true}} }

func (f *depthFrame) closeSegment() {
	f.best = max(f.best, f.seg.finish())
	f.seg = depthChain{expect: true}
}

// depth bounds the frame's depth so far.
func (f *depthFrame) depth() int { return max(f.best, f.seg.bound()) + f.rel }

// depthChain is a segment read as operator-precedence parsing reads it, with depths for
// values: operands holds the depths of the subtrees built, ops the operators waiting for
// their right operand.
type depthChain struct {
	operands []int
	ops      []depthOp
	expect   bool // an operand is expected next (a + or - there is unary)
	name     bool // the next token is a name (of a type after ::, a field after .)
	deepest  int  // the deepest subtree built so far
	others   int  // tokens of no declared precedence, one level each at most
}

type depthOp struct {
	prec  int
	unary bool
}

// Precedences of gram.y (higher binds tighter); adjacent operands (a call's name and its
// arguments, a subscript) bind tightest.
const (
	precNot     = 3
	precCompare = 5
	precOp      = 8
	precAdd     = 9
	precMul     = 10
	precPow     = 11
	precUMinus  = 14
	precAdjoin  = 16
)

func (c *depthChain) push(d int) {
	c.operands = append(c.operands, d)
	c.deepest = max(c.deepest, d)
}

func (c *depthChain) pop() int {
	if len(c.operands) == 0 {
		return 0
	}
	d := c.operands[len(c.operands)-1]
	c.operands = c.operands[:len(c.operands)-1]
	return d
}

// reduce applies the waiting operators binding at least as tightly as prec (left
// associativity; unary operators are applied only by a looser binary operator or the end).
func (c *depthChain) reduce(prec int) {
	for len(c.ops) > 0 {
		op := c.ops[len(c.ops)-1]
		if op.prec < prec || (op.unary && op.prec == prec) {
			return
		}
		c.ops = c.ops[:len(c.ops)-1]
		if op.unary {
			c.push(c.pop() + 1)
			continue
		}
		r, l := c.pop(), c.pop()
		c.push(max(l, r) + 1)
	}
}

func (c *depthChain) binary(prec int) {
	if c.expect {
		c.push(0) // a keyword stood for the left operand
	}
	c.reduce(prec)
	c.ops = append(c.ops, depthOp{prec: prec})
	c.expect = true
}

func (c *depthChain) operand(d int) {
	if c.name && d == 0 {
		c.name = false
		return
	}
	c.name = false
	if !c.expect {
		c.binary(precAdjoin)
	}
	c.push(d)
	c.expect = false
}

func (c *depthChain) other() {
	if c.name {
		c.name = false
		return
	}
	c.others++
}

func (c *depthChain) token(t pg.Token) {
	if c.name && t != pg.Token_TYPECAST {
		c.other() // a type or field name that is a keyword
		return
	}
	switch t {
	case pg.Token_ASCII_43, pg.Token_ASCII_45: // + -
		if c.expect {
			c.ops = append(c.ops, depthOp{prec: precUMinus, unary: true})
			return
		}
		c.binary(precAdd)
	case pg.Token_ASCII_42, pg.Token_ASCII_47, pg.Token_ASCII_37: // * / %
		c.binary(precMul)
	case pg.Token_ASCII_94: // ^
		c.binary(precPow)
	case pg.Token_ASCII_60, pg.Token_ASCII_62, pg.Token_ASCII_61, pg.Token_LESS_EQUALS, pg.Token_GREATER_EQUALS, pg.Token_NOT_EQUALS:
		c.binary(precCompare)
	case pg.Token_Op:
		c.binary(precOp)
	case pg.Token_NOT, pg.Token_NOT_LA:
		if c.expect {
			c.ops = append(c.ops, depthOp{prec: precNot, unary: true})
			return
		}
		c.others++
	case pg.Token_TYPECAST: // postfix: one level on the operand before it
		if c.expect {
			c.push(0)
		}
		c.push(c.pop() + 1)
		c.expect = false
		c.name = true
	default:
		c.others++
	}
}

// bound is at least the depth of the segment's tree however it ends: every waiting operator
// may add a level above the deepest subtree.
func (c *depthChain) bound() int { return c.deepest + len(c.ops) + c.others }

// finish applies the waiting operators and returns the segment's depth.
func (c *depthChain) finish() int {
	c.reduce(0)
	d := 0
	for _, o := range c.operands {
		d = max(d, o)
	}
	return d + c.others
}
