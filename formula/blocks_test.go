// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// TestIndependentBlocks: under IndependentDoubleBar each term of a || and
// its intercept, and each | term, is a block of glmm's REBlocks, in the
// order of the random-effect columns; one block gives nil; an intercept or
// a term written twice is an error.
func TestIndependentBlocks(t *testing.T) {
	fr := fuzzFrame([]byte("independent blocks of random effects, as in lme4's double bar"))
	for _, c := range []struct {
		formula string
		names   []string
		blocks  []int
		err     string
	}{
		{"y ~ x + (1 + t || id)", []string{"(Intercept)", "t"}, []int{0, 1}, ""},
		{"y ~ x + (1 | id) + (0 + t | id)", []string{"(Intercept)", "t"}, []int{0, 1}, ""},
		{"y ~ x + (1 + t | id) + (0 + x | id)", []string{"(Intercept)", "t", "x"}, []int{0, 0, 1}, ""},
		{"y ~ x + (0 + t + x || id) + (1 | id)", []string{"(Intercept)", "t", "x"}, []int{2, 0, 1}, ""},
		{"y ~ x + (1 + t | id)", []string{"(Intercept)", "t"}, nil, ""},
		{"y ~ x + (1 | id) + (1 + t | id)", nil, nil, "the intercept is in two random-effects terms for id"},
		{"y ~ x + (0 + t | id) + (0 + t | id)", nil, nil, "the term t is in two"},
	} {
		f, err := Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, fr, Options{Family: glmm.Poisson, DoubleBar: IndependentDoubleBar})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: error %v, want %q", c.formula, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.formula, err)
		}
		if got := d.RandomNames(); !slices.Equal(got, c.names) {
			t.Errorf("%s: random effects %q, want %q", c.formula, got, c.names)
		}
		// Blocks are labels: compare the partition they make.
		got := d.Config().REBlocks
		if (got == nil) != (c.blocks == nil) {
			t.Fatalf("%s: blocks %v, want %v", c.formula, got, c.blocks)
		}
		for a := range got {
			for b := range got {
				if (got[a] == got[b]) != (c.blocks[a] == c.blocks[b]) {
					t.Errorf("%s: blocks %v, want the partition of %v", c.formula, got, c.blocks)
				}
			}
		}
		if d.Model().IndependentBlocks() != (got != nil) {
			t.Errorf("%s: the model's IndependentBlocks is %v", c.formula, got == nil)
		}
	}
}

// TestNestedGroups: (1 | site/plot) with plot labels repeated across sites
// is (1 | site) + (1 | site:plot): the subjects are the 6 site:plot
// combinations, site is a crossed factor of 3 levels, and NewData finds
// the training combinations again; a missing column of an interaction is
// named.
func TestNestedGroups(t *testing.T) {
	var site, plot []string
	var y []float64
	for i := range 36 {
		site = append(site, []string{"A", "B", "C"}[i%3])
		plot = append(plot, []string{"1", "2"}[i/3%2])
		y = append(y, float64(i%4))
	}
	fr, err := datasets.NewFrame(datasets.NewCategorical("site", site), datasets.NewCategorical("plot", plot), datasets.NewNumeric("y", y))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("y ~ 1 + (1 | site/plot)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(f, fr, Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	if d.GroupName() != "site:plot" || len(d.GroupLevels()) != 6 || d.Model().NumCrossed() != 1 {
		t.Fatalf("subjects %s with %d levels, %d crossed factors", d.GroupName(), len(d.GroupLevels()), d.Model().NumCrossed())
	}
	if name, levels, _, _ := d.Model().CrossedFactor(0); name != "site" || len(levels) != 3 {
		t.Errorf("crossed factor %s with %d levels", name, len(levels))
	}
	_, _, group, known, err := d.NewData(fr)
	if err != nil {
		t.Fatal(err)
	}
	for k, g := range group {
		if !known[k] || d.GroupLevels()[g] != site[k]+":"+plot[k] {
			t.Fatalf("row %d: level %v (known %v), want %s:%s", k, g, known[k], site[k], plot[k])
		}
	}
	noPlot, _ := datasets.NewFrame(datasets.NewCategorical("site", site), datasets.NewNumeric("y", y))
	if _, err := Build(f, noPlot, Options{Family: glmm.Poisson}); err == nil || !strings.Contains(err.Error(), `"plot"`) {
		t.Errorf("a missing plot column: %v", err)
	}
}
