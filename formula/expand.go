// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"math"
	"slices"
	"strings"
)

// Parse reads a model formula in lme4's syntax. The returned error is a
// *SyntaxError naming the offending token and its column. Parse checks the
// formula alone; Build checks it against a data frame.
//
// The grammar, loosest operator first:
//
//	formula  = response "~" sum
//	response = name | "cbind(" name "," name ")" | "cbind(" name "," name "-" name ")"
//	sum      = ["+" | "-"] product {("+" | "-") product}
//	product  = inter {("*" | "/") inter}
//	inter    = power {":" power}
//	power    = atom ["^" integer]
//	atom     = name | number | fn "(" name ")" | "offset(" variable ")"
//	         | "I(" arith ")" | tf "(" arith ")"
//	         | "(" sum ")" | "(" sum "|" group ")" | "(" sum "||" group ")"
//
// Names are R's syntactic names or `quoted names`; fn is factor,
// as.factor, log, sqrt, exp or scale, and tf one of log, sqrt and exp; arith is
// arithmetic of one column (numbers, + - * / ^, parentheses, log, sqrt
// and exp).
func Parse(s string) (*Formula, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	lhs, _, rhs, err := p.parseTop()
	if err != nil {
		return nil, err
	}
	f := &Formula{src: s}
	f.fixed.intercept = true
	if f.resp, err = parseResponse(lhs); err != nil {
		return nil, err
	}
	f.resp.pos = lhs.first().pos
	e := &expander{f: f, m: &f.fixed, fixed: true}
	terms, err := e.eval(rhs, ctx{top: true})
	if err != nil {
		return nil, err
	}
	f.fixed.terms = orderTerms(terms)
	for _, v := range f.fixed.vars {
		if v.col == f.resp.y.col || f.resp.kind == respFailures && v.col == f.resp.second.col {
			return nil, &SyntaxError{Pos: v.pos, Token: v.token(), Msg: "the response is also used as a predictor"}
		}
	}
	for _, v := range f.offsets {
		if v.col == f.resp.y.col {
			return nil, &SyntaxError{Pos: v.pos, Token: v.token(), Msg: "the response is also used as an offset"}
		}
	}
	// (lhs | a/b) is (lhs | a) + (lhs | a:b), as in lme4.
	var rs []random
	for _, r := range f.randoms {
		groups, err := nestedGroups(r.groupNode)
		if err != nil {
			return nil, err
		}
		if groups == nil {
			rs = append(rs, r)
			continue
		}
		for _, g := range groups {
			c := r
			c.groupNode = g
			rs = append(rs, c)
		}
	}
	f.randoms = rs
	for k := range f.randoms {
		r := &f.randoms[k]
		if err := r.expand(f); err != nil {
			return nil, err
		}
		for _, v := range r.lhs.vars {
			if v.col == f.resp.y.col || f.resp.kind == respFailures && v.col == f.resp.second.col {
				return nil, &SyntaxError{Pos: v.pos, Token: v.token(), Msg: "the response is also used as a random-effects covariate"}
			}
		}
		if r.group == f.resp.y.col {
			return nil, &SyntaxError{Pos: r.groupPos, Token: r.group, Msg: "the response is also used as the grouping factor"}
		}
	}
	return f, nil
}

// parseResponse checks the left-hand side: a name or one of the two cbind
// forms of a binomial response.
func parseResponse(n node) (response, error) {
	switch n := n.(type) {
	case *identNode:
		if n.tok.text == "." {
			return response{}, errAt(n.tok, "'.' is not a response")
		}
		return response{y: plainVar(n.tok)}, nil
	case *callNode:
		if n.fn.text != "cbind" {
			return response{}, errAt(n.fn, "the response must be a column name or cbind(successes, failures)")
		}
		if len(n.args) != 2 {
			return response{}, errAt(n.fn, "cbind() in the response takes two arguments: successes and failures")
		}
		s, ok := n.args[0].(*identNode)
		if !ok {
			return response{}, errAt(n.args[0].first(), "the successes in cbind() must be a column name")
		}
		r := response{y: plainVar(s.tok)}
		switch a := n.args[1].(type) {
		case *identNode:
			r.kind, r.second = respFailures, plainVar(a.tok)
		case *binNode:
			n1, ok1 := a.l.(*identNode)
			s1, ok2 := a.r.(*identNode)
			if a.op.kind != tokMinus || !ok1 || !ok2 {
				return response{}, errAt(a.op, "the failures in cbind() must be a column name or n - successes")
			}
			if s1.tok.text != s.tok.text {
				return response{}, errAt(s1.tok, "in cbind(s, n - s) both s must be the same column")
			}
			r.kind, r.second = respTrials, plainVar(n1.tok)
		default:
			return response{}, errAt(a.first(), "the failures in cbind() must be a column name or n - successes")
		}
		if r.second.col == r.y.col {
			return response{}, errAt(n.args[1].first(), "successes and failures are the same column")
		}
		return r, nil
	}
	return response{}, errAt(n.first(), "the response must be a column name or cbind(successes, failures)")
}

func plainVar(t token) variable {
	return variable{col: t.text, pos: t.pos, label: t.text}
}

// ctx is where an expression stands: top is true along the chain of sums
// at the top of the right-hand side (where offsets and random-effects terms
// may be added), inner is true inside an interaction (where 0 and 1 may not
// appear), neg is true in the right operand of a removal.
type ctx struct {
	top, inner, neg bool
}

// expander turns expressions into ordered lists of terms, following R's
// terms.formula: + is union, - removes, a:b crosses, a*b = a + b + a:b,
// a/b = a + (all of a):b and (a + b)^2 = (a + b)*(a + b).
type expander struct {
	f     *Formula
	m     *model
	fixed bool // expanding the fixed part, where offsets and bars may appear
}

func (e *expander) variable(v variable) int {
	if e.m.index == nil {
		e.m.index = make(map[string]int)
	}
	if k, ok := e.m.index[v.label]; ok {
		return k
	}
	e.m.index[v.label] = len(e.m.vars)
	e.m.vars = append(e.m.vars, v)
	return len(e.m.vars) - 1
}

func (e *expander) eval(n node, c ctx) ([]term, error) {
	switch n := n.(type) {
	case *identNode:
		if n.tok.text == "." {
			return nil, errAt(n.tok, "'.' (all other columns) is not supported; name the columns")
		}
		return []term{{e.variable(plainVar(n.tok))}}, nil

	case *numNode:
		if c.inner {
			return nil, errAt(n.tok, "a number cannot appear inside an interaction")
		}
		switch v := number(n.tok); v {
		case 0, 1:
			// 1 adds the intercept and 0 removes it; removing either
			// does the opposite.
			e.m.intercept = (v == 1) != c.neg
			return nil, nil
		}
		return nil, errAt(n.tok, "a number is not a term (only 0 and 1 are, for the intercept)")

	case *callNode:
		return e.call(n, c)

	case *parenNode:
		return e.eval(n.x, c)

	case *barNode:
		if !e.fixed {
			return nil, errAt(n.bar, "random-effects term inside a random-effects term")
		}
		if !c.top || c.neg {
			return nil, errAt(n.open, "a random-effects term must be added to the formula, not combined with other terms")
		}
		e.f.randoms = append(e.f.randoms, random{pos: n.open.pos, double: n.bar.kind == tokBar2, lhsNode: n.lhs, groupNode: n.group, barTok: n.bar})
		return nil, nil

	case *negNode:
		if c.neg {
			return nil, errAt(n.op, "a removal inside a removal is not supported")
		}
		c.neg = true
		// Nothing precedes a leading minus, so there is nothing to remove
		// but the intercept.
		_, err := e.eval(n.x, c)
		return nil, err

	case *binNode:
		switch n.op.kind {
		case tokPlus:
			l, err := e.eval(n.l, c)
			if err != nil {
				return nil, err
			}
			r, err := e.eval(n.r, c)
			if err != nil {
				return nil, err
			}
			// Each + copies the sum so far, so the limit also keeps a
			// long sum from costing time quadratic in its length.
			if len(l)+len(r) > maxTerms {
				return nil, errAt(n.op, "too many terms")
			}
			return union(l, r), nil
		case tokMinus:
			if c.neg {
				return nil, errAt(n.op, "a removal inside a removal is not supported")
			}
			l, err := e.eval(n.l, c)
			if err != nil {
				return nil, err
			}
			rc := c
			rc.neg = true
			r, err := e.eval(n.r, rc)
			if err != nil {
				return nil, err
			}
			return difference(l, r), nil
		}
		in := ctx{inner: true, neg: c.neg}
		l, err := e.eval(n.l, in)
		if err != nil {
			return nil, err
		}
		if n.op.kind == tokCaret {
			return power(l, n.r, n.op)
		}
		r, err := e.eval(n.r, in)
		if err != nil {
			return nil, err
		}
		if len(l) == 0 {
			return nil, errAt(n.op, "nothing to the left of "+n.op.text)
		}
		if len(r) == 0 {
			return nil, errAt(n.op, "nothing to the right of "+n.op.text)
		}
		if len(l)*len(r) > maxTerms {
			return nil, errAt(n.op, "too many terms")
		}
		switch n.op.kind {
		case tokColon:
			return cross(l, r), nil
		case tokStar:
			return union(union(l, r), cross(l, r)), nil
		case tokSlash:
			var all term
			for _, t := range l {
				all = or(all, t)
			}
			return union(l, cross([]term{all}, r)), nil
		}
	}
	return nil, errAt(n.first(), "unexpected expression")
}

// call handles a function call on the right-hand side.
func (e *expander) call(n *callNode, c ctx) ([]term, error) {
	name := n.fn.text
	switch name {
	case "factor", "as.factor", "log", "sqrt", "exp", "scale":
		v, err := transformed(n, e.f.src)
		if err != nil {
			return nil, err
		}
		return []term{{e.variable(v)}}, nil
	case "offset":
		if !e.fixed {
			return nil, errAt(n.fn, "offset() inside a random-effects term")
		}
		if !c.top || c.neg {
			return nil, errAt(n.fn, "offset() must be added to the formula, not combined with other terms")
		}
		if len(n.args) != 1 {
			return nil, errAt(n.fn, "offset() takes one argument")
		}
		var v variable
		switch a := n.args[0].(type) {
		case *identNode:
			if a.tok.text == "." {
				return nil, errAt(a.tok, "'.' is not a column")
			}
			v = plainVar(a.tok)
		case *callNode:
			var err error
			if v, err = transformed(a, e.f.src); err != nil {
				return nil, err
			}
			if v.isFactor() {
				return nil, errAt(a.fn, "an offset must be numeric")
			}
			if v.fn == "scale" {
				return nil, errAt(a.fn, "an offset is added as it is: scale() has no place in it")
			}
		default:
			return nil, errAt(n.args[0].first(), "offset() takes a column name or log(column)")
		}
		e.f.offsets = append(e.f.offsets, v)
		return nil, nil
	case "cbind":
		return nil, errAt(n.fn, "cbind() is only allowed as the response")
	case "poly":
		return nil, errAt(n.fn, "poly() is not supported; write the powers, as x + I(x^2) (raw, not orthogonal, polynomials)")
	case "I":
		v, err := transformed(n, e.f.src)
		if err != nil {
			return nil, err
		}
		return []term{{e.variable(v)}}, nil
	}
	return nil, errAt(n.fn, "unknown function "+name+"() (supported: factor, as.factor, log, sqrt, exp, I, scale, offset)")
}

// transformed reads fn(name) for a transformation or factor, or the
// arithmetic of one column in I(expr) or log(), sqrt() and exp() of an
// expression (compileArith).
func transformed(n *callNode, src string) (variable, error) {
	name := n.fn.text
	switch name {
	case "factor", "as.factor", "log", "sqrt", "exp", "I", "scale":
	case "cbind", "offset":
		return variable{}, errAt(n.fn, name+"() cannot be nested")
	default:
		return variable{}, errAt(n.fn, "unknown function "+name+"() (supported: factor, as.factor, log, sqrt, exp, I, scale, offset)")
	}
	if len(n.args) != 1 {
		return variable{}, errAt(n.fn, name+"() takes one argument")
	}
	a, ok := n.args[0].(*identNode)
	if name == "I" || !ok && name != "factor" && name != "as.factor" && name != "scale" {
		// I(x) is x, as in R; log(x + 1) an expression of x.
		var body node = n
		if name == "I" {
			body = n.args[0]
		}
		expr, col, err := compileArith(body)
		if err != nil {
			return variable{}, err
		}
		label := expr.String()
		if name == "I" {
			label = "I(" + label + ")"
		}
		// The call as written, from its name to its parenthesis
		// (positions count characters).
		text := string([]rune(src)[n.fn.pos-1 : n.close.pos])
		return variable{col: col, fn: name, pos: n.fn.pos, label: label, text: text, expr: expr}, nil
	}
	if !ok || a.tok.text == "." {
		return variable{}, errAt(n.args[0].first(), name+"() takes a column name")
	}
	return variable{col: a.tok.text, fn: name, pos: n.fn.pos, label: name + "(" + a.tok.text + ")"}, nil
}

// power expands l^k as the k-fold product l*l*...*l.
func power(l []term, expo node, op token) ([]term, error) {
	num, ok := expo.(*numNode)
	if !ok {
		return nil, errAt(expo.first(), "the exponent of ^ must be a positive integer")
	}
	k := number(num.tok)
	if k < 1 || k != math.Trunc(k) || k > 32 {
		return nil, errAt(num.tok, "the exponent of ^ must be a positive integer (at most 32)")
	}
	if len(l) == 0 {
		return nil, errAt(num.tok, "nothing to raise to a power")
	}
	res := l
	for i := 1; i < int(k); i++ {
		if len(res)*len(l) > maxTerms {
			return nil, errAt(op, "too many terms")
		}
		res = union(res, cross(res, l))
	}
	return res, nil
}

// or returns the union of the variables of a and b, sorted.
func or(a, b term) term {
	t := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(t, v) {
			t = append(t, v)
		}
	}
	slices.Sort(t)
	return t
}

// cross returns the interactions a:b of every term of l with every term of
// r, l outermost, without repeats.
func cross(l, r []term) []term {
	var res []term
	seen := make(map[string]bool)
	for _, a := range l {
		for _, b := range r {
			t := or(a, b)
			if k := termKey(t); !seen[k] {
				seen[k] = true
				res = append(res, t)
			}
		}
	}
	return res
}

// union returns the terms of l then those of r not already present.
func union(l, r []term) []term {
	res := slices.Clone(l)
	seen := make(map[string]bool, len(l)+len(r))
	for _, t := range l {
		seen[termKey(t)] = true
	}
	for _, t := range r {
		if k := termKey(t); !seen[k] {
			seen[k] = true
			res = append(res, t)
		}
	}
	return res
}

// difference returns the terms of l not in r.
func difference(l, r []term) []term {
	drop := make(map[string]bool, len(r))
	for _, t := range r {
		drop[termKey(t)] = true
	}
	var res []term
	for _, t := range l {
		if !drop[termKey(t)] {
			res = append(res, t)
		}
	}
	return res
}

// orderTerms sorts terms by their number of variables, keeping the formula
// order among terms of equal degree, as R's terms.formula does.
func orderTerms(ts []term) []term {
	res := slices.Clone(ts)
	slices.SortStableFunc(res, func(a, b term) int { return len(a) - len(b) })
	return res
}

// expand turns the left of the bar into terms, with an implicit intercept,
// and checks the grouping factor; f is the formula it belongs to.
func (r *random) expand(f *Formula) error {
	r.lhs.intercept = true
	e := &expander{f: f, m: &r.lhs}
	terms, err := e.eval(r.lhsNode, ctx{})
	if err != nil {
		return err
	}
	r.lhs.terms = orderTerms(terms)
	switch g := r.groupNode.(type) {
	case *identNode:
		if g.tok.text == "." {
			return errAt(g.tok, "'.' is not a grouping factor")
		}
		r.group, r.groupPos = g.tok.text, g.tok.pos
	case *callNode:
		a, ok := g.args[0].(*identNode)
		if g.fn.text != "factor" && g.fn.text != "as.factor" || len(g.args) != 1 || !ok {
			return errAt(g.fn, "the grouping factor must be a column name")
		}
		r.group, r.groupPos = a.tok.text, a.tok.pos
	case *binNode:
		if g.op.kind != tokColon {
			return errAt(g.op, "the grouping factor must be a column name, an interaction a:b or a nesting a/b")
		}
		cols, err := interactionCols(g)
		if err != nil {
			return err
		}
		r.group, r.groupPos, r.groupCols = strings.Join(cols, ":"), g.first().pos, cols
	default:
		return errAt(g.first(), "the grouping factor must be a column name")
	}
	if r.lhs.index != nil {
		if _, ok := r.lhs.index[r.group]; ok {
			return errAt(r.barTok, "the grouping factor "+r.group+" is also a random-effects covariate")
		}
	}
	if !r.lhs.intercept && len(r.lhs.terms) == 0 {
		return errAt(r.barTok, "no random effects to the left of "+r.barTok.text)
	}
	return nil
}

// interactionCols returns the columns of an interaction of grouping
// factors a:b:...; each must be a column name.
func interactionCols(n node) ([]string, error) {
	switch g := n.(type) {
	case *identNode:
		if g.tok.text == "." {
			return nil, errAt(g.tok, "'.' is not a grouping factor")
		}
		return []string{g.tok.text}, nil
	case *binNode:
		if g.op.kind != tokColon {
			break
		}
		a, err := interactionCols(g.l)
		if err != nil {
			return nil, err
		}
		b, err := interactionCols(g.r)
		if err != nil {
			return nil, err
		}
		return append(a, b...), nil
	}
	return nil, errAt(n.first(), "an interaction of grouping factors must join column names, as a:b")
}

// nestedGroups returns, for a nesting a/b/c, the grouping factors a, a:b
// and a:b:c, as lme4 expands it; nil for any other grouping factor.
func nestedGroups(n node) ([]node, error) {
	g, ok := n.(*binNode)
	if !ok || g.op.kind != tokSlash {
		return nil, nil
	}
	outer, err := nestedGroups(g.l)
	if err != nil {
		return nil, err
	}
	if outer == nil {
		outer = []node{g.l}
	}
	if inner, ok := g.r.(*binNode); ok && inner.op.kind == tokSlash {
		return nil, errAt(inner.op, "write a nesting left to right, as a/b/c")
	}
	last := outer[len(outer)-1]
	return append(outer, &binNode{op: token{kind: tokColon, text: ":", pos: g.op.pos}, l: last, r: g.r}), nil
}
