// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"slices"
	"strconv"
	"strings"
)

// Formula is a parsed model formula: a response, fixed-effect terms in R's
// order, offsets and random-effects terms. It is made by Parse and holds no
// data; Build combines it with a data frame. A Formula is immutable and safe
// for concurrent use.
type Formula struct {
	src     string
	resp    response
	fixed   model
	offsets []variable
	randoms []random
}

// responseKind tells how the response is written.
type responseKind int

const (
	respSingle   responseKind = iota // y
	respFailures                     // cbind(s, f): trials s + f
	respTrials                       // cbind(s, n - s): trials n
)

type response struct {
	pos    int // column of the response's first token
	kind   responseKind
	y      variable // the response, or the successes of cbind
	second variable // the failures or the trials of cbind
}

// variable is one predictor as written: a column, possibly transformed.
// Its label is R's name for it, such as "lbase" or "factor(period)".
type variable struct {
	col   string
	fn    string // "", "factor", "as.factor", "log", "sqrt", "exp" or "I"
	pos   int    // 1-based column of the first occurrence
	label string
	// expr is the arithmetic of I(expr), or of log(), sqrt() or exp() of
	// more than a column name, the function included, and text the call
	// as written; nil and "" for others.
	expr *arith
	text string
}

// token returns the variable as written at pos, for errors.
func (v variable) token() string {
	if v.text != "" {
		return v.text
	}
	return v.label
}

// display returns the variable as it should be written in a formula.
func (v variable) display() string {
	if v.expr != nil {
		return v.label
	}
	if v.fn == "" {
		return quoteName(v.col)
	}
	return v.fn + "(" + quoteName(v.col) + ")"
}

// quoteName returns s, backquoted unless it is a syntactic name.
func quoteName(s string) string {
	ok := s != "" && isIdentStart(s[0]) && !(s[0] == '.' && len(s) > 1 && isDigit(s[1])) && s != "."
	for i := 0; ok && i < len(s); i++ {
		ok = isIdentPart(s[i])
	}
	if ok {
		return s
	}
	return "`" + s + "`"
}

// isFactor reports whether the variable asks for categorical coding of a
// possibly numeric column.
func (v variable) isFactor() bool { return v.fn == "factor" || v.fn == "as.factor" }

// term is an interaction of variables, given by their indices in the
// model's variable list in increasing order; the empty term is the
// intercept.
type term []int

// model is the expansion of the right-hand side of a formula (or of the
// left of a bar): its variables in order of first appearance, its terms
// ordered as R orders them and whether it has an intercept.
type model struct {
	vars      []variable
	index     map[string]int
	terms     []term
	intercept bool
}

// random is one random-effects term (lhs | group) or (lhs || group).
type random struct {
	lhs      model
	group    string
	groupPos int
	// groupCols are the columns of an interaction grouping factor a:b,
	// whose name group is "a:b"; nil for a single column.
	groupCols []string
	double    bool // written with ||
	pos       int  // column of its opening parenthesis

	// The unexpanded parts, kept by the parser until expand.
	lhsNode, groupNode node
	barTok             token
}

// String returns the formula in a canonical form: terms expanded and in R's
// order, the intercept explicit. It parses to a formula with the same
// terms, though the variables of an interaction may then be listed in
// another order, as their order of first appearance may change.
func (f *Formula) String() string {
	var b strings.Builder
	b.WriteString(f.resp.String())
	b.WriteString(" ~ ")
	b.WriteString(f.fixed.String())
	for _, o := range f.offsets {
		b.WriteString(" + offset(" + o.display() + ")")
	}
	for _, r := range f.randoms {
		bar := " | "
		if r.double {
			bar = " || "
		}
		g := quoteName(r.group)
		if r.groupCols != nil {
			q := make([]string, len(r.groupCols))
			for k, c := range r.groupCols {
				q[k] = quoteName(c)
			}
			g = strings.Join(q, ":")
		}
		b.WriteString(" + (" + r.lhs.String() + bar + g + ")")
	}
	return b.String()
}

// Source returns the formula as given to Parse.
func (f *Formula) Source() string { return f.src }

// Intercept reports whether the fixed effects include an intercept.
func (f *Formula) Intercept() bool { return f.fixed.intercept }

// Terms returns the labels of the fixed-effect terms in R's order, without
// the intercept: main effects first, then two-way interactions and so on,
// each group in the order of the formula, as "a", "a:b".
func (f *Formula) Terms() []string { return f.fixed.labels() }

// Response returns the response as written in canonical form, such as "y"
// or "cbind(s, n - s)".
func (f *Formula) Response() string { return f.resp.String() }

// Group returns the grouping factor of the first random-effects term, or ""
// if the formula has none.
func (f *Formula) Group() string {
	if len(f.randoms) == 0 {
		return ""
	}
	return f.randoms[0].group
}

// RandomTerms returns the labels of the terms of the first random-effects
// term, without its intercept (see RandomIntercept).
func (f *Formula) RandomTerms() []string {
	if len(f.randoms) == 0 {
		return nil
	}
	return f.randoms[0].lhs.labels()
}

// RandomIntercept reports whether the first random-effects term has an
// intercept.
func (f *Formula) RandomIntercept() bool {
	return len(f.randoms) > 0 && f.randoms[0].lhs.intercept
}

// Columns returns the names of the data columns the formula uses, each
// once, in order of first use.
func (f *Formula) Columns() []string {
	var cols []string
	add := func(c string) {
		if c != "" && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	add(f.resp.y.col)
	add(f.resp.second.col)
	for _, v := range f.fixed.vars {
		add(v.col)
	}
	for _, v := range f.offsets {
		add(v.col)
	}
	for _, r := range f.randoms {
		for _, v := range r.lhs.vars {
			add(v.col)
		}
		if r.groupCols != nil {
			for _, c := range r.groupCols {
				add(c)
			}
			continue
		}
		add(r.group)
	}
	return cols
}

// GroupColumns returns the data columns of the formula's grouping
// factors, each once: a and b for (1 | a:b) or (1 | a/b).
func (f *Formula) GroupColumns() []string {
	var cols []string
	for _, r := range f.randoms {
		gs := r.groupCols
		if gs == nil {
			gs = []string{r.group}
		}
		for _, c := range gs {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

func (r response) String() string {
	y := r.y.display()
	switch r.kind {
	case respFailures:
		return "cbind(" + y + ", " + r.second.display() + ")"
	case respTrials:
		return "cbind(" + y + ", " + r.second.display() + " - " + y + ")"
	}
	return y
}

// termLabel returns R's label of a term: its variables in order of first
// appearance, joined by ":".
func (m *model) termLabel(t term) string {
	parts := make([]string, len(t))
	for k, v := range t {
		parts[k] = m.vars[v].label
	}
	return strings.Join(parts, ":")
}

func (m *model) labels() []string {
	l := make([]string, len(m.terms))
	for k, t := range m.terms {
		l[k] = m.termLabel(t)
	}
	return l
}

func (m *model) String() string {
	parts := []string{"0"}
	if m.intercept {
		parts[0] = "1"
	}
	for _, t := range m.terms {
		vs := make([]string, len(t))
		for k, v := range t {
			vs[k] = m.vars[v].display()
		}
		parts = append(parts, strings.Join(vs, ":"))
	}
	return strings.Join(parts, " + ")
}

// termKey returns a map key identifying the set of variables of t.
func termKey(t term) string {
	var b strings.Builder
	for _, v := range t {
		b.WriteString(strconv.Itoa(v))
		b.WriteByte(',')
	}
	return b.String()
}

// scaled returns the first variable of the formula written scale(x), if
// any.
func (f *Formula) scaled() (variable, bool) {
	vars := slices.Clone(f.fixed.vars)
	for _, r := range f.randoms {
		vars = append(vars, r.lhs.vars...)
	}
	for _, v := range vars {
		if v.fn == "scale" {
			return v, true
		}
	}
	return variable{}, false
}
