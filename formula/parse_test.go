// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseValid(t *testing.T) {
	for _, test := range []struct {
		src       string
		canonical string
		terms     []string // fixed terms in R's order
		icpt      bool
		resp      string
		group     string
		rterms    []string
		ricpt     bool
		cols      []string
	}{
		{
			src:       "y ~ lbase*trt + lage + V4 + (1 | subject)",
			canonical: "y ~ 1 + lbase + trt + lage + V4 + lbase:trt + (1 | subject)",
			terms:     []string{"lbase", "trt", "lage", "V4", "lbase:trt"},
			icpt:      true, resp: "y", group: "subject", ricpt: true,
			rterms: []string{},
			cols:   []string{"y", "lbase", "trt", "lage", "V4", "subject"},
		},
		{
			// R labels an interaction by the order of first appearance.
			src:       "y ~ b:a + a + (x | g)",
			canonical: "y ~ 1 + a + b:a + (1 + x | g)",
			terms:     []string{"a", "b:a"},
			icpt:      true, resp: "y", group: "g", ricpt: true,
			rterms: []string{"x"},
			cols:   []string{"y", "b", "a", "x", "g"},
		},
		{
			src:       "y~a*b*c+(1|g)",
			canonical: "y ~ 1 + a + b + c + a:b + a:c + b:c + a:b:c + (1 | g)",
			terms:     []string{"a", "b", "c", "a:b", "a:c", "b:c", "a:b:c"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "a", "b", "c", "g"},
		},
		{
			src:       "y ~ (a + b + c)^2 - a:b - 1 + offset(log(e)) + (0 + t | id)",
			canonical: "y ~ 0 + a + b + c + a:c + b:c + offset(log(e)) + (0 + t | id)",
			terms:     []string{"a", "b", "c", "a:c", "b:c"},
			icpt:      false, resp: "y", group: "id", ricpt: false, rterms: []string{"t"},
			cols: []string{"y", "a", "b", "c", "e", "t", "id"},
		},
		{
			// lme4's nesting: (1 | a/b) is (1 | a) + (1 | a:b).
			src:       "y ~ x + (1 | site/plot/tree)",
			canonical: "y ~ 1 + x + (1 | site) + (1 | site:plot) + (1 | site:plot:tree)",
			terms:     []string{"x"},
			icpt:      true, resp: "y", group: "site", ricpt: true, rterms: []string{},
			cols: []string{"y", "x", "site", "plot", "tree"},
		},
		{
			src:       "y ~ x + (1 + x | a:b)",
			canonical: "y ~ 1 + x + (1 + x | a:b)",
			terms:     []string{"x"},
			icpt:      true, resp: "y", group: "a:b", ricpt: true, rterms: []string{"x"},
			cols: []string{"y", "x", "a", "b"},
		},
		{
			// Arithmetic of one column, named as R deparses it; I(x) is
			// x under another name, and the same expression twice is
			// one variable.
			src:       "y ~ t + I(t^2) + I((t - 1)*2) + log(x + 1) + I(-x/10) + t:I(t^2) + I(t^2) + (1 + I(t^2) | id) + offset(log(`e f` + 0.5))",
			canonical: "y ~ 1 + t + I(t^2) + I((t - 1) * 2) + log(x + 1) + I(-x/10) + t:I(t^2) + offset(log(`e f` + 0.5)) + (1 + I(t^2) | id)",
			terms:     []string{"t", "I(t^2)", "I((t - 1) * 2)", "log(x + 1)", "I(-x/10)", "t:I(t^2)"},
			icpt:      true, resp: "y", group: "id", ricpt: true, rterms: []string{"I(t^2)"},
			cols: []string{"y", "t", "x", "e f", "id"},
		},
		{
			src:       "y ~ scale(x) + (scale(t) | g)",
			canonical: "y ~ 1 + scale(x) + (1 + scale(t) | g)",
			terms:     []string{"scale(x)"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{"scale(t)"},
			cols: []string{"y", "x", "t", "g"},
		},
		{
			src:       "y ~ (a + b)/c + (1 + t || id)",
			canonical: "y ~ 1 + a + b + a:b:c + (1 + t || id)",
			terms:     []string{"a", "b", "a:b:c"},
			icpt:      true, resp: "y", group: "id", ricpt: true, rterms: []string{"t"},
			cols: []string{"y", "a", "b", "c", "t", "id"},
		},
		{
			src:       "y ~ (a + b):c + (1 | g)",
			canonical: "y ~ 1 + a:c + b:c + (1 | g)",
			terms:     []string{"a:c", "b:c"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "a", "b", "c", "g"},
		},
		{
			src:       "y ~ a*b - a + (1 | g)",
			canonical: "y ~ 1 + b + a:b + (1 | g)",
			terms:     []string{"b", "a:b"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "a", "b", "g"},
		},
		{
			src:       "y ~ -1 + x + (1 | g)",
			canonical: "y ~ 0 + x + (1 | g)",
			terms:     []string{"x"},
			icpt:      false, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "x", "g"},
		},
		{
			src:       "y ~ 0 + x + (1 | g)",
			canonical: "y ~ 0 + x + (1 | g)",
			terms:     []string{"x"},
			icpt:      false, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "x", "g"},
		},
		{
			src:       "y ~ x + 0 + (x - 1 | g)",
			canonical: "y ~ 0 + x + (0 + x | g)",
			terms:     []string{"x"},
			icpt:      false, resp: "y", group: "g", ricpt: false, rterms: []string{"x"},
			cols: []string{"y", "x", "g"},
		},
		{
			src:       "y ~ x - 1 + 1 + (1 | g)",
			canonical: "y ~ 1 + x + (1 | g)",
			terms:     []string{"x"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "x", "g"},
		},
		{
			src:       "cbind(incidence, size - incidence) ~ period + (1 | herd)",
			canonical: "cbind(incidence, size - incidence) ~ 1 + period + (1 | herd)",
			terms:     []string{"period"},
			icpt:      true, resp: "cbind(incidence, size - incidence)", group: "herd", ricpt: true, rterms: []string{},
			cols: []string{"incidence", "size", "period", "herd"},
		},
		{
			src:       "cbind(s,f)~x+(1|g)",
			canonical: "cbind(s, f) ~ 1 + x + (1 | g)",
			terms:     []string{"x"},
			icpt:      true, resp: "cbind(s, f)", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"s", "f", "x", "g"},
		},
		{
			src:       "`a b` ~ factor(period) + log(age) + x.1_z + (1 | `the id`)",
			canonical: "`a b` ~ 1 + factor(period) + log(age) + x.1_z + (1 | `the id`)",
			terms:     []string{"factor(period)", "log(age)", "x.1_z"},
			icpt:      true, resp: "`a b`", group: "the id", ricpt: true, rterms: []string{},
			cols: []string{"a b", "period", "age", "x.1_z", "the id"},
		},
		{
			src:       "y ~ 1 + (1 | g)",
			canonical: "y ~ 1 + (1 | g)",
			terms:     []string{},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{},
			cols: []string{"y", "g"},
		},
		{
			// No random term: Parse accepts it, Build rejects it.
			src:       "y ~ x + x + x:x",
			canonical: "y ~ 1 + x",
			terms:     []string{"x"},
			icpt:      true, resp: "y", group: "", ricpt: false, rterms: nil,
			cols: []string{"y", "x"},
		},
		{
			src:       "y ~ ((a)) + (1 + a*f | g) + (1 | g)",
			canonical: "y ~ 1 + a + (1 + a + f + a:f | g) + (1 | g)",
			terms:     []string{"a"},
			icpt:      true, resp: "y", group: "g", ricpt: true, rterms: []string{"a", "f", "a:f"},
			cols: []string{"y", "a", "f", "g"},
		},
	} {
		f, err := Parse(test.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", test.src, err)
			continue
		}
		if got := f.String(); got != test.canonical {
			t.Errorf("Parse(%q).String() = %q, want %q", test.src, got, test.canonical)
		}
		if got := f.Terms(); !slices.Equal(got, test.terms) {
			t.Errorf("Parse(%q).Terms() = %q, want %q", test.src, got, test.terms)
		}
		if f.Intercept() != test.icpt {
			t.Errorf("Parse(%q).Intercept() = %v, want %v", test.src, f.Intercept(), test.icpt)
		}
		if got := f.Response(); got != test.resp {
			t.Errorf("Parse(%q).Response() = %q, want %q", test.src, got, test.resp)
		}
		if got := f.Group(); got != test.group {
			t.Errorf("Parse(%q).Group() = %q, want %q", test.src, got, test.group)
		}
		if got := f.RandomTerms(); !slices.Equal(got, test.rterms) || (got == nil) != (test.rterms == nil) {
			t.Errorf("Parse(%q).RandomTerms() = %q, want %q", test.src, got, test.rterms)
		}
		if f.RandomIntercept() != test.ricpt {
			t.Errorf("Parse(%q).RandomIntercept() = %v, want %v", test.src, f.RandomIntercept(), test.ricpt)
		}
		if got := f.Columns(); !slices.Equal(got, test.cols) {
			t.Errorf("Parse(%q).Columns() = %q, want %q", test.src, got, test.cols)
		}
		if f.Source() != test.src {
			t.Errorf("Source() = %q, want %q", f.Source(), test.src)
		}
		if err := checkCanonical(f); err != "" {
			t.Error(err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, test := range []struct {
		src   string
		pos   int
		token string
		msg   string
		unsup bool
	}{
		{src: "", pos: 1, token: "", msg: "empty formula"},
		{src: "~ x", pos: 1, token: "~", msg: "missing response"},
		{src: "y x", pos: 3, token: "x", msg: "want ~"},
		{src: "y + x", pos: 6, token: "", msg: "missing ~"},
		{src: "y ~", pos: 4, token: "", msg: "missing predictors"},
		{src: "y ~ x +", pos: 8, token: "", msg: "unexpected end"},
		{src: "y ~ x ~ z", pos: 7, token: "~", msg: "more than one ~"},
		{src: "y ~ (x + z", pos: 5, token: "(", msg: "unmatched ("},
		{src: "y ~ x + z)", pos: 10, token: ")", msg: "unmatched )"},
		{src: "y ~ x $ z", pos: 7, token: "$", msg: "unexpected character"},
		{src: "y ~ x %in% z", pos: 7, token: "%", msg: "%in%"},
		{src: "y ~ x == 2", pos: 7, token: "=", msg: "comparison"},
		{src: "y ~ 2x", pos: 5, token: "2x", msg: "malformed number"},
		{src: "y ~ 2", pos: 5, token: "2", msg: "not a term"},
		{src: "y ~ x:1", pos: 7, token: "1", msg: "inside an interaction"},
		{src: "y ~ I(x*z)", pos: 9, token: "z", msg: "one column; for a product of columns write x:z"},
		{src: "y ~ I(2)", pos: 7, token: "2", msg: "uses no column"},
		{src: "y ~ I(x:z)", pos: 8, token: ":", msg: "not arithmetic"},
		{src: "y ~ I(factor(x))", pos: 7, token: "factor", msg: "unknown function factor() in an expression"},
		{src: "y ~ I(x, 2)", pos: 5, token: "I", msg: "takes one argument"},
		{src: "y ~ factor(x + 1)", pos: 12, token: "x", msg: "takes a column name"},
		{src: "y ~ scale(x + 1)", pos: 11, token: "x", msg: "takes a column name"},
		{src: "y ~ x + offset(scale(e))", pos: 16, token: "scale", msg: "scale() has no place in it"},
		{src: "y ~ I(scale(x))", pos: 7, token: "scale", msg: "unknown function scale() in an expression"},
		{src: "y ~ poly(x)", pos: 5, token: "poly", msg: "write the powers, as x + I(x^2)"},
		{src: "y ~ ns(x, 3)", pos: 5, token: "ns", msg: "unknown function ns()"},
		{src: "y ~ log(x, 2)", pos: 5, token: "log", msg: "takes one argument"},
		{src: "y ~ log(x + z)", pos: 13, token: "z", msg: "one column"},
		{src: "y ~ factor()", pos: 12, token: ")", msg: "needs an argument"},
		{src: "y ~ cbind(a, b)", pos: 5, token: "cbind", msg: "only allowed as the response"},
		{src: "log(y) ~ x", pos: 1, token: "log", msg: "the response must be"},
		{src: "cbind(s) ~ x", pos: 1, token: "cbind", msg: "two arguments"},
		{src: "cbind(s, n - t) ~ x", pos: 14, token: "t", msg: "same column"},
		{src: "cbind(s, n + s) ~ x", pos: 12, token: "+", msg: "n - successes"},
		{src: "cbind(s, s) ~ x", pos: 10, token: "s", msg: "same column"},
		{src: "y ~ .", pos: 5, token: ".", msg: "'.'"},
		{src: "y ~ x | g", pos: 7, token: "|", msg: "must be in parentheses"},
		{src: "y ~ (x | )", pos: 10, token: ")", msg: "missing grouping factor"},
		{src: "y ~ ( | g)", pos: 7, token: "|", msg: "missing effects"},
		{src: "y ~ (1 | g | h)", pos: 12, token: "|", msg: "more than one bar"},
		{src: "y ~ x:(1 | g)", pos: 7, token: "(", msg: "must be added to the formula"},
		{src: "y ~ x - (1 | g)", pos: 9, token: "(", msg: "must be added to the formula"},
		{src: "y ~ (1 + (1 | h) | g)", pos: 13, token: "|", msg: "inside a random-effects term"},
		{src: "y ~ (1 | a/(b/c))", pos: 12, token: "(", msg: "join column names"},
		{src: "y ~ (1 | a:log(b))", pos: 12, token: "log", msg: "join column names"},
		{src: "y ~ (1 | log(g))", pos: 10, token: "log", msg: "grouping factor must be a column name"},
		{src: "y ~ (0 | g)", pos: 8, token: "|", msg: "no random effects"},
		{src: "y ~ (1 + g | g)", pos: 12, token: "|", msg: "also a random-effects covariate"},
		{src: "y ~ x:offset(z)", pos: 7, token: "offset", msg: "must be added to the formula"},
		{src: "y ~ (1 + offset(z) | g)", pos: 10, token: "offset", msg: "inside a random-effects term"},
		{src: "y ~ offset(factor(z))", pos: 12, token: "factor", msg: "must be numeric"},
		{src: "y ~ x^z", pos: 7, token: "z", msg: "positive integer"},
		{src: "y ~ x^0", pos: 7, token: "0", msg: "positive integer"},
		{src: "y ~ (a+b+c+d+e+f+g+h+i+j+k+l+m)^13", pos: 32, token: "^", msg: "too many terms"},
		{src: "y ~ x^2^2", pos: 8, token: "^", msg: "chained ^"},
		{src: "y ~ x - (z - w)", pos: 12, token: "-", msg: "removal inside a removal"},
		{src: "y ~ x + y", pos: 9, token: "y", msg: "response is also used"},
		{src: "y ~ x + (1 + y | g)", pos: 14, token: "y", msg: "response is also used as a random"},
		{src: "y ~ x + (1 | y)", pos: 14, token: "y", msg: "response is also used as the grouping"},
		{src: "y ~ `x", pos: 5, token: "`", msg: "unterminated"},
		{src: "y ~ ``", pos: 5, token: "``", msg: "empty quoted"},
		{src: "y ~ ()", pos: 6, token: ")", msg: "empty parentheses"},
		{src: "y ~ x * ", pos: 9, token: "", msg: "unexpected end"},
		{src: "y ~ * x", pos: 5, token: "*", msg: "unexpected operator"},
		{src: "y ~ a, b", pos: 6, token: ",", msg: "outside a function call"},
		{src: "y ~ \xff", pos: 5, token: "\\xff", msg: "unexpected character"},
		// Letters beyond ASCII make names (TestParseUnicodeNames); other
		// characters do not.
		{src: "y ~ €", pos: 5, token: "€", msg: "unexpected character"},
		// Positions count characters, not bytes (ö, ß and € take 2, 2
		// and 3).
		{src: "größe ~ €", pos: 9, token: "€", msg: "unexpected character"},
		{src: "y ~ `€ x` + *", pos: 13, token: "*", msg: "unexpected operator"},
		{src: "y ~ " + strings.Repeat("(", 200) + "x" + strings.Repeat(")", 200), pos: 0, token: "(", msg: "nested too deeply"},
	} {
		f, err := Parse(test.src)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", test.src, f)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): error %v is a %T, want *SyntaxError", test.src, err, err)
			continue
		}
		if test.pos > 0 && se.Pos != test.pos || se.Token != test.token {
			t.Errorf("Parse(%q): error at character %d token %q, want character %d token %q (%v)", test.src, se.Pos, se.Token, test.pos, test.token, err)
		}
		if !strings.Contains(se.Msg, test.msg) {
			t.Errorf("Parse(%q): message %q does not contain %q", test.src, se.Msg, test.msg)
		}
		if errors.Is(err, ErrUnsupported) != test.unsup {
			t.Errorf("Parse(%q): errors.Is(err, ErrUnsupported) = %v, want %v", test.src, !test.unsup, test.unsup)
		}
		// The message names the token and its column.
		if msg := err.Error(); test.token != "" && !strings.Contains(msg, test.token) && !strings.Contains(msg, strings.Trim(strings.ReplaceAll(test.token, `\`, `\\`), " ")) {
			t.Errorf("Parse(%q): message %q does not name the token %q", test.src, msg, test.token)
		}
	}
}

// FuzzParse checks that Parse never panics, that its errors are located
// inside the formula, and that the canonical form of what it accepts reads
// back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"y ~ lbase*trt + lage + V4 + (1 | subject)",
		"cbind(incidence, size - incidence) ~ period + (1 | herd)",
		"y ~ (a + b + c)^2 - a:b - 1 + offset(log(e)) + (0 + t | id)",
		"y ~ (a + b)/c + (1 + t || id)",
		"`a b` ~ factor(p) + (x | `g h`)",
		"y ~ x:(1 | g)",
		"y ~ x + (1 | site/plot) + (1 | a:b)",
		"y ~ (1 | a/b/c) + (0 + x | g)",
		"y ~ ((((",
		"y ~ t + I(t^2) + log(x + 1) + scale(z) + offset(log(e/2)) + (1 + I(-t/2) | g)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): error %v is a %T, want *SyntaxError", s, err, err)
			}
			n := utf8.RuneCountInString(s)
			if se.Pos < 1 || se.Pos > n+1 {
				t.Fatalf("Parse(%q): error at character %d outside [1, %d]", s, se.Pos, n+1)
			}
			if se.Token != "" && se.Pos+utf8.RuneCountInString(se.Token)-1 > n && !strings.HasPrefix(se.Token, `\x`) {
				t.Fatalf("Parse(%q): token %q at character %d runs past the end", s, se.Token, se.Pos)
			}
			return
		}
		if err := checkCanonical(fm); err != "" {
			t.Fatal(err)
		}
	})
}

// checkCanonical checks that the canonical form of f reads back to a
// formula with the same terms, and that the form of that one is a fixed
// point. (Only the order of variables within an interaction label may
// change once, as the order of first appearance changes.)
func checkCanonical(f *Formula) string {
	c := f.String()
	g, err := Parse(c)
	if err != nil {
		return fmt.Sprintf("Parse(%q) accepted, but its canonical form %q fails: %v", f.Source(), c, err)
	}
	if !sameTerms(f.Terms(), g.Terms()) || f.Intercept() != g.Intercept() ||
		!sameTerms(f.RandomTerms(), g.RandomTerms()) || f.RandomIntercept() != g.RandomIntercept() ||
		f.Group() != g.Group() || f.Response() != g.Response() {
		return fmt.Sprintf("canonical form %q of %q changes the model: %q", c, f.Source(), g.String())
	}
	h, err := Parse(g.String())
	if err != nil || h.String() != g.String() {
		return fmt.Sprintf("canonical form of %q is not a fixed point: %q then %q (%v)", f.Source(), g.String(), h, err)
	}
	return ""
}

// sameTerms reports whether a and b list the same terms in the same order,
// comparing interactions as sets of variables.
func sameTerms(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		x, y := strings.Split(a[k], ":"), strings.Split(b[k], ":")
		slices.Sort(x)
		slices.Sort(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}

// TestParseUnicodeNames: letters beyond ASCII make names, as in R in a
// UTF-8 locale.
func TestParseUnicodeNames(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"y ~ é", "é"},
		{"y ~ größe + (1 | id)", "größe"},
		{"y ~ âge2 + (1 | id)", "âge2"},
	} {
		f, err := Parse(c.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if cols := f.Columns(); !slices.Contains(cols, c.want) {
			t.Errorf("Parse(%q): columns %v, want %q among them", c.src, cols, c.want)
		}
	}
}

// TestGroupColumns: the data columns of every grouping factor, once each,
// the parts of an interaction or nesting included.
func TestGroupColumns(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"y ~ x + (1 | g)", []string{"g"}},
		{"y ~ x + (1 | a:b)", []string{"a", "b"}},
		{"y ~ x + (1 | a/b) + (1 | c) + (0 + x | c)", []string{"a", "b", "c"}},
	} {
		f, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.GroupColumns(); !slices.Equal(got, c.want) {
			t.Errorf("%s: GroupColumns %q, want %q", c.src, got, c.want)
		}
	}
}
