// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestAbbreviate: the correlation table's headers are prefixes of at least
// six bytes, each long enough to tell its name from the others'.
func TestAbbreviate(t *testing.T) {
	for _, c := range []struct {
		names, want []string
	}{
		{[]string{"(Intr)", "Anger", "GenderM"}, []string{"(Intr)", "Anger", "Gender"}},
		{[]string{"(Intr)", "btypescold", "btypeshout", "situself"}, []string{"(Intr)", "btypesc", "btypesh", "situse"}},
		{[]string{"treatmentterbinafine", "treatmentterbinafine:time"}, []string{"treatm", "treatmentterbinafine:"}},
		{[]string{"x", "x"}, []string{"x", "x"}},
	} {
		if got := abbreviate(c.names, 6); !reflect.DeepEqual(got, c.want) {
			t.Errorf("abbreviate(%q) = %q, want %q", c.names, got, c.want)
		}
	}
}

// TestWrapWords: wrapWords breaks at spaces within the width and keeps a
// longer word whole.
func TestWrapWords(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  []string
	}{
		{"not run: the fit did not end normally", 16, []string{"not run: the fit", "did not end", "normally"}},
		{"a verylongword b", 4, []string{"a", "verylongword", "b"}},
		{"", 10, nil},
	} {
		if got := wrapWords(c.s, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

// TestBoundLineSaysWhyDrawsCut: the summary's bound line names the draws
// and the reason when they were cut (drawsCut), and is the plain line
// otherwise.
func TestBoundLineSaysWhyDrawsCut(t *testing.T) {
	for _, c := range []struct {
		lb   lowerBound
		want string
	}{
		{lowerBound{Value: -381021.26, MCSE: 1.34, Draws: 20, Cut: "fewer for 100000 subjects"}, "± 1.34 (Monte Carlo s.e. from 20 draws, fewer for"},
		{lowerBound{Value: -797.68, MCSE: 0.19, Draws: 1000}, "ELBO -797.68 ± 0.19 (Monte Carlo s.e.); all"},
	} {
		c.lb.Constants = constantsNote
		var b strings.Builder
		writeText(&b, &document{LowerBound: c.lb})
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%d draws, reason %q: the summary lacks %q:\n%s", c.lb.Draws, c.lb.Cut, c.want, b.String())
		}
	}
}
