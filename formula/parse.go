// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"strconv"
)

// maxDepth bounds the nesting of parentheses and operators, so that a
// hostile formula cannot exhaust the stack.
const maxDepth = 100

// maxTerms bounds the number of terms an expansion may produce, so that
// (a + b + ... + z)^20 fails rather than exhausting memory.
const maxTerms = 4096

// node is an expression of the formula language before expansion into terms.
type node interface{ first() token }

type (
	identNode struct{ tok token }
	numNode   struct{ tok token }
	callNode  struct {
		fn, close token // the name and the closing parenthesis
		args      []node
	}
	binNode struct {
		op   token
		l, r node
	}
	// negNode is a leading unary minus: "-1 + x".
	negNode struct {
		op token
		x  node
	}
	parenNode struct {
		open token
		x    node
	}
	// barNode is a random-effects term "(lhs | group)" or "(lhs || group)".
	barNode struct {
		open, bar  token
		lhs, group node
	}
)

func (n *identNode) first() token { return n.tok }
func (n *numNode) first() token   { return n.tok }
func (n *callNode) first() token  { return n.fn }
func (n *binNode) first() token   { return n.l.first() }
func (n *negNode) first() token   { return n.op }
func (n *parenNode) first() token { return n.open }
func (n *barNode) first() token   { return n.open }

// parser is a recursive-descent parser over the tokens of one formula,
// with R's operator precedence: ~ below + and - below * and / below :
// below ^. The bar of a random-effects term is the loosest operator inside
// its parentheses.
type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func errAt(t token, msg string) *SyntaxError {
	if t.kind == tokEOF {
		return &SyntaxError{Pos: t.pos, Msg: msg}
	}
	return &SyntaxError{Pos: t.pos, Token: t.text, Msg: msg}
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return errAt(p.peek(), "formula nested too deeply")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseTop reads "response ~ rhs" and returns both sides.
func (p *parser) parseTop() (lhs node, tilde token, rhs node, err error) {
	if p.peek().kind == tokEOF {
		return nil, token{}, nil, errAt(p.peek(), "empty formula")
	}
	if p.peek().kind == tokTilde {
		return nil, token{}, nil, errAt(p.peek(), "missing response before ~")
	}
	lhs, err = p.parseSum()
	if err != nil {
		return nil, token{}, nil, err
	}
	tilde = p.next()
	if tilde.kind != tokTilde {
		if tilde.kind == tokEOF {
			return nil, token{}, nil, errAt(tilde, "missing ~ between response and predictors")
		}
		return nil, token{}, nil, errAt(tilde, "unexpected token in response, want ~")
	}
	if p.peek().kind == tokEOF {
		return nil, token{}, nil, errAt(p.peek(), "missing predictors after ~ (write 1 for an intercept only)")
	}
	rhs, err = p.parseSum()
	if err != nil {
		return nil, token{}, nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		switch t.kind {
		case tokTilde:
			return nil, token{}, nil, errAt(t, "more than one ~")
		case tokRParen:
			return nil, token{}, nil, errAt(t, "unmatched )")
		case tokBar, tokBar2:
			return nil, token{}, nil, errAt(t, "random-effects term must be in parentheses, as in (1 | g)")
		case tokComma:
			return nil, token{}, nil, errAt(t, "unexpected , outside a function call")
		}
		return nil, token{}, nil, errAt(t, "unexpected token, want an operator")
	}
	return lhs, tilde, rhs, nil
}

// parseSum reads an optionally signed sequence of products joined by + and -.
func (p *parser) parseSum() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var x node
	switch t := p.peek(); t.kind {
	case tokMinus:
		p.next()
		y, err := p.parseProd()
		if err != nil {
			return nil, err
		}
		x = &negNode{op: t, x: y}
	case tokPlus:
		p.next()
		fallthrough
	default:
		y, err := p.parseProd()
		if err != nil {
			return nil, err
		}
		x = y
	}
	for {
		t := p.peek()
		if t.kind != tokPlus && t.kind != tokMinus {
			return x, nil
		}
		p.next()
		y, err := p.parseProd()
		if err != nil {
			return nil, err
		}
		x = &binNode{op: t, l: x, r: y}
	}
}

// parseProd reads interactions joined by * and /.
func (p *parser) parseProd() (node, error) {
	x, err := p.parseInter()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokStar && t.kind != tokSlash {
			return x, nil
		}
		p.next()
		y, err := p.parseInter()
		if err != nil {
			return nil, err
		}
		x = &binNode{op: t, l: x, r: y}
	}
}

// parseInter reads powers joined by :.
func (p *parser) parseInter() (node, error) {
	x, err := p.parsePower()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tokColon {
			return x, nil
		}
		p.next()
		y, err := p.parsePower()
		if err != nil {
			return nil, err
		}
		x = &binNode{op: t, l: x, r: y}
	}
}

// parsePower reads "atom" or "atom ^ n".
func (p *parser) parsePower() (node, error) {
	x, err := p.parseAtom()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.kind != tokCaret {
		return x, nil
	}
	p.next()
	y, err := p.parseAtom()
	if err != nil {
		return nil, err
	}
	if u := p.peek(); u.kind == tokCaret {
		return nil, errAt(u, "chained ^ is not supported; add parentheses")
	}
	return &binNode{op: t, l: x, r: y}, nil
}

// parseAtom reads a name, a number, a function call or a parenthesised
// expression, which may be a random-effects term.
func (p *parser) parseAtom() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.next()
	switch t.kind {
	case tokIdent:
		if p.peek().kind == tokLParen {
			return p.parseCall(t)
		}
		return &identNode{tok: t}, nil
	case tokNumber:
		return &numNode{tok: t}, nil
	case tokLParen:
		if p.peek().kind == tokRParen {
			return nil, errAt(p.peek(), "empty parentheses")
		}
		x, err := p.parseSum()
		if err != nil {
			return nil, err
		}
		var bar *barNode
		if b := p.peek(); b.kind == tokBar || b.kind == tokBar2 {
			p.next()
			if q := p.peek(); q.kind == tokRParen || q.kind == tokEOF {
				return nil, errAt(q, "missing grouping factor after "+b.text)
			}
			g, err := p.parseSum()
			if err != nil {
				return nil, err
			}
			bar = &barNode{open: t, bar: b, lhs: x, group: g}
		}
		c := p.next()
		if c.kind != tokRParen {
			switch c.kind {
			case tokEOF:
				return nil, errAt(t, "unmatched (")
			case tokBar, tokBar2:
				return nil, errAt(c, "more than one bar in a random-effects term")
			case tokTilde:
				return nil, errAt(c, "~ inside parentheses")
			}
			return nil, errAt(c, "unexpected token, want )")
		}
		if bar != nil {
			return bar, nil
		}
		return &parenNode{open: t, x: x}, nil
	case tokEOF:
		return nil, errAt(t, "unexpected end of formula, want a term")
	case tokRParen:
		return nil, errAt(t, "unexpected ), want a term")
	case tokBar, tokBar2:
		return nil, errAt(t, "missing effects before "+t.text+" (write 1 for a random intercept)")
	case tokTilde:
		return nil, errAt(t, "unexpected ~, want a term")
	}
	return nil, errAt(t, "unexpected operator, want a term")
}

// parseCall reads the arguments of fn(...), separated by commas.
func (p *parser) parseCall(fn token) (node, error) {
	open := p.next()
	c := &callNode{fn: fn}
	if p.peek().kind == tokRParen {
		return nil, errAt(p.peek(), fn.text+"() needs an argument")
	}
	for {
		a, err := p.parseSum()
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, a)
		t := p.next()
		switch t.kind {
		case tokComma:
			continue
		case tokRParen:
			c.close = t
			return c, nil
		case tokEOF:
			return nil, errAt(open, "unmatched ( of "+fn.text+"(")
		case tokBar, tokBar2:
			return nil, errAt(t, "random-effects term inside "+fn.text+"()")
		}
		return nil, errAt(t, "unexpected token in "+fn.text+"(), want , or )")
	}
}

// number returns the value of a numeric literal.
func number(t token) float64 {
	v, err := strconv.ParseFloat(t.text, 64)
	if err != nil {
		return -1
	}
	return v
}
