// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// tailModel is reliability's simulated Bernoulli model (TestLargeCovariates,
// TestRVB2ModeFailure) in which subject 45's five responses are all 1.
func tailModel(t *testing.T) *glmm.Model {
	t.Helper()
	fr, _, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: 150, Obs: 5,
		Beta: []float64{0.5, 0.3, 0.4}, RECov: [][]float64{{0.5}}, Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse("y ~ t + x1 + (1 | id)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model()
	if y, _, _ := m.Response(45); y[0]+y[1]+y[2]+y[3]+y[4] != 5 {
		t.Fatalf("subject 45 responses %v, want all 1", y)
	}
	return m
}

// TestModeInTheTail: an all-1 Bernoulli subject under a tiny random-effect
// precision has its conditional mode far out, where every gradient term is
// below 1e-9 and Newton alone moves about one unit per step. At the theta_g
// of reliability's TestRVB2ModeFailure (log W = -12.7, a draw a fit made)
// and at smaller precisions, the solve must converge within 20 iterations,
// to a point where the conditional density's gradient (from package glmm's
// Family.Derivs, an independent code) vanishes, and Local's gradient must
// match finite differences.
func TestModeInTheTail(t *testing.T) {
	m := tailModel(t)
	const subj = 45
	lo, hi := m.SubjectRows(subj)
	y, tr, w := m.Response(subj)
	z := m.ZRows(subj)
	for _, logW := range []float64{-12.723067711462072, -30, -100} {
		thetaG := []float64{0.7268445282677173, -0.5986376292442553, 0.3258085400620902, logW}
		tg, err := NewRVB2(m, MaxNewton(20))
		if err != nil {
			t.Fatal(err)
		}
		ws := tg.NewWorkspace().(*workspace)
		tg.setGlobal(ws, thetaG)
		if err := tg.prepare(ws, subj, thetaG, nil); err != nil {
			t.Fatalf("log W %v: %v", logW, err)
		}
		b := ws.center[0]
		// The mode solves sum_j (1 - p_j) = Omega b with 1 - p_j about
		// exp(-b): b grows like -2 log W.
		if b < -logW {
			t.Errorf("log W %v: mode %v, want one far out", logW, b)
		}
		eta := make([]float64, hi-lo)
		m.FixedEta(subj, thetaG[:3], eta)
		omega := math.Exp(2 * logW)
		g, scale := -omega*b, omega*math.Abs(b)
		for j := range eta {
			d1, _, _ := m.Family().Derivs(y[j], tr[j], eta[j]+z[j]*b, 0)
			g += w[j] * z[j] * d1
			scale += math.Abs(w[j] * z[j] * d1)
		}
		t.Logf("log W %v: mode %.6f, gradient %.3g against terms of %.3g", logW, b, g, scale)
		if !(math.Abs(g) <= 1e-10*scale) {
			t.Errorf("log W %v: gradient %.3g at the mode %v, terms of %.3g", logW, g, b, scale)
		}

		// Local's gradient in (b~, theta_g), RVB2's implicit derivatives of
		// the mode included, by fourth-order differences.
		x := append([]float64{0.3}, thetaG...)
		f := func(x []float64) float64 {
			v, err := tg.Local(ws, subj, subj+1, x[1:], x[:1], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		got := make([]float64, len(x))
		if _, err := tg.Local(ws, subj, subj+1, x[1:], x[:1], got[:1], got[1:]); err != nil {
			t.Fatal(err)
		}
		want := gradient5(f, x, 1e-4)
		for k := range x {
			if e := math.Abs(got[k]-want[k]) / math.Max(1, math.Abs(want[k])); e > 1e-6 {
				t.Errorf("log W %v, component %d: gradient %.10g, finite difference %.10g", logW, k, got[k], want[k])
			}
		}
	}
}
