// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

func TestLeastSquares(t *testing.T) {
	xs := []float64{4, 5, 6}
	ys := []float64{-2 + 1.1*4, -2 + 1.1*5, -2 + 1.1*6}
	b, a := leastSquares(xs, ys)
	if math.Abs(b-1.1) > 1e-12 || math.Abs(a+2) > 1e-12 {
		t.Errorf("slope %v, intercept %v; want 1.1, -2", b, a)
	}
}

// TestSlopesRange checks that slopes use 10^4..10^6 when two such n exist
// and all n otherwise.
func TestSlopesRange(t *testing.T) {
	m := models[0]
	mk := func(n int, sec float64) result {
		return result{model: m, workers: 1, o: &outcome{N: n, Method: "gva", SecPerIter: sec}}
	}
	rs := []result{mk(1000, 1), mk(10_000, 1e-2), mk(100_000, 1e-1), mk(1_000_000, 1)}
	s := fitSlopes(rs)
	if len(s) != 1 || math.Abs(s[0].slope-1) > 1e-12 || s[0].nMin != 10_000 || s[0].allN {
		t.Errorf("slopes %+v; want slope 1 from n = 10^4", s)
	}
	s = fitSlopes(rs[:2])
	if len(s) != 1 || !s[0].allN || math.Abs(s[0].slope+2) > 1e-12 {
		t.Errorf("slopes %+v; want slope -2 over all n", s)
	}
}

// TestGlmerEstimates reads the committed glmer estimates: every file of
// the comparison and every coefficient of its model.
func TestGlmerEstimates(t *testing.T) {
	est, secs, err := readGlmer("glmer_estimates.csv")
	if err != nil {
		t.Fatal(err)
	}
	for _, lf := range logitFiles {
		e := est[lf.name]
		for k, term := range []string{"(Intercept)", "x1", "x2", "x3"} {
			g, ok := e[term]
			if !ok {
				t.Errorf("%s: no %s", lf.name, term)
				continue
			}
			// glmer's estimates are near the truth they were simulated from.
			if math.Abs(g.estimate-logitTruth[k]) > 0.05 || !(g.se > 0 && g.se < 0.05) {
				t.Errorf("%s %s: estimate %v (se %v), truth %v", lf.name, term, g.estimate, g.se, logitTruth[k])
			}
		}
		if !(secs[lf.name] > 0) {
			t.Errorf("%s: glmer seconds %v", lf.name, secs[lf.name])
		}
	}
}

// TestResume writes scaling.csv rows and reads them back.
func TestResume(t *testing.T) {
	m := models[1]
	o := &outcome{N: 1000, P: 4, R: 2, Obs: 7000, Method: "rvb1", Status: "converged", Iterations: 100, Windows: 2,
		SecPerIter: 1e-3, CPUPerIter: 2e-3, SecConv: 0.5, Mean: []float64{0.5, -0.5, 0.25, -0.25}, Truth: m.Beta,
		Q025: []float64{0, -1, 0, -1}, Q975: []float64{1, 0, 1, 0}, Load: math.NaN()}
	path := filepath.Join(t.TempDir(), "scaling.csv")
	row := scalingRow(m, 2, o)
	if err := benchio.WriteCSV(path, [][]string{scalingHeader, row}); err != nil {
		t.Fatal(err)
	}
	rs, err := readScaling(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || !slices.Equal(rs[0].row, row) || rs[0].workers != 2 || rs[0].o.SecPerIter != 1e-3 || !sameCase(rs[0], m, 1000, "rvb", 0, 2) {
		t.Errorf("read back %+v", rs)
	}
	if covered(o) != 4 {
		t.Errorf("covered %d; want 4", covered(o))
	}
}

func TestTickLabel(t *testing.T) {
	for _, c := range []struct {
		m, k int
		want string
	}{{1, 3, "1e3"}, {2, 5, "2e5"}, {5, -3, "5e-3"}, {1, -2, "0.01"}, {2, 0, "2"}, {5, 2, "500"}} {
		if got := tickLabel(c.m, c.k); got != c.want {
			t.Errorf("tickLabel(%d, %d) = %q; want %q", c.m, c.k, got, c.want)
		}
	}
}

func TestMedianRun(t *testing.T) {
	for _, tc := range []struct {
		secs []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{0.3, 0.1, 0.2}, 0.2},
		{[]float64{4, 1, 3, 2}, 2},
	} {
		var runs []*outcome
		for _, s := range tc.secs {
			runs = append(runs, &outcome{SecPerIter: s})
		}
		if got := medianRun(runs).SecPerIter; got != tc.want {
			t.Errorf("%v: median run has %v s/iter, want %v", tc.secs, got, tc.want)
		}
	}
}
