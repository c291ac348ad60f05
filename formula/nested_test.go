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

// TestNestBuild: with Options.Nest, (1 | site/plot) and (1 | site) +
// (1 | plot) with plot labels unique across sites are glmm.Nested models
// of 3 subjects (sites) with 3 local variables each (the site and its 2
// plots); without it, or when plot is not nested in site, the crossed
// model of before.
func TestNestBuild(t *testing.T) {
	var site, plot, uplot, cross []string
	var y []float64
	for i := range 36 {
		s := []string{"A", "B", "C"}[i%3]
		p := []string{"1", "2"}[i/3%2]
		site, plot, uplot = append(site, s), append(plot, p), append(uplot, s+p)
		cross = append(cross, []string{"x", "y"}[i%2])
		y = append(y, float64(i%4))
	}
	fr, err := datasets.NewFrame(datasets.NewCategorical("site", site), datasets.NewCategorical("plot", plot),
		datasets.NewCategorical("uplot", uplot), datasets.NewCategorical("cross", cross), datasets.NewNumeric("y", y))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src    string
		opts   Options
		nested bool
	}{
		{"y ~ 1 + (1 | site/plot)", Options{Family: glmm.Poisson, Nest: NestAlways}, true},
		{"y ~ 1 + (1 | site) + (1 | uplot)", Options{Family: glmm.Poisson, Nest: NestAlways}, true},
		{"y ~ 1 + (1 | site/plot)", Options{Family: glmm.Poisson}, false},
		{"y ~ 1 + (1 | site/plot)", Options{Family: glmm.Poisson, Nest: NestAlways, LocalFactor: "site:plot"}, false},
		{"y ~ 1 + (1 | site) + (1 | cross)", Options{Family: glmm.Poisson, Nest: NestAuto}, false},
		{"y ~ 1 + (1 | site/plot)", Options{Family: glmm.Poisson, Nest: NestAuto}, false}, // 3 sites
	} {
		f, err := Parse(c.src)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, fr, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if (d.Nested() != nil) != c.nested || (d.Model() != nil) == c.nested {
			t.Fatalf("%s %+v: nested %v, model %v", c.src, c.opts, d.Nested() != nil, d.Model() != nil)
		}
		if !c.nested {
			continue
		}
		m := d.Nested()
		if n, _, g := m.Dims(); n != 3 || g != 3 {
			t.Errorf("%s: %d subjects, %d globals", c.src, n, g)
		}
		for _, s := range m.BlockSizes() {
			if s != 3 {
				t.Errorf("%s: sizes %v", c.src, m.BlockSizes())
			}
		}
		if a, b := m.FactorNames(); a != "site" || (b != "site:plot" && b != "uplot") {
			t.Errorf("%s: factors %s, %s", c.src, a, b)
		}
		if len(d.Rows()) != 36 {
			t.Errorf("%s: %d rows", c.src, len(d.Rows()))
		}
	}
}

// TestNestNotNested: Options.Nest NestAlways with a factor that is not
// nested is an error naming the row and the levels.
func TestNestNotNested(t *testing.T) {
	fr, err := datasets.NewFrame(datasets.NewCategorical("site", []string{"A", "A", "B", "B"}),
		datasets.NewCategorical("plot", []string{"p", "q", "p", "r"}), datasets.NewNumeric("y", []float64{1, 2, 3, 4}))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("y ~ 1 + (1 | site) + (1 | plot)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(f, fr, Options{Family: glmm.Poisson, Nest: NestAlways})
	if !errors.Is(err, glmm.ErrNotNested) || !strings.Contains(err.Error(), "row 3") {
		t.Fatalf("error %v, want row 3 wrapping glmm.ErrNotNested", err)
	}
	t.Log(err)
}

// TestNestNewData: NewData and NewCrossed code new rows of a nested design,
// compacted or not, by its levels of a:b (the subjects of NewData) and of
// a: a known site:plot gets its level, a new plot or site -1.
func TestNestNewData(t *testing.T) {
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
	d, err := Build(f, fr, Options{Family: glmm.Poisson, Nest: NestAlways})
	if err != nil {
		t.Fatal(err)
	}
	nf, err := datasets.NewFrame(datasets.NewCategorical("site", []string{"B", "B", "D"}), datasets.NewCategorical("plot", []string{"2", "3", "1"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		if compact {
			d.Compact()
		}
		_, _, group, known, err := d.NewData(nf)
		if err != nil {
			t.Fatal(err)
		}
		crossed, err := d.NewCrossed(nf)
		if err != nil {
			t.Fatal(err)
		}
		_, inner := d.Nested().Levels()
		want := slices.Index(inner, "B:2")
		if want < 0 || group[0] != want || !known[0] || group[1] != -1 || known[1] || group[2] != -1 || known[2] {
			t.Errorf("compact %v: a:b levels %v, known %v; want %d (B:2 of %v), -1, -1", compact, group, known, want, inner)
		}
		b := slices.Index(d.Config().Crossed[0].Levels, "B")
		if len(crossed) != 1 || b < 0 || crossed[0][0] != b || crossed[0][1] != b || crossed[0][2] != -1 {
			t.Errorf("compact %v: levels of site %v, want [%d %d -1]", compact, crossed, b, b)
		}
	}
}
