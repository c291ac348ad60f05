// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

func simulated(t *testing.T, family string, cov [][]float64, beta []float64, n int, seed uint64) *glmm.Model {
	return simulatedDisp(t, family, cov, beta, 0, n, seed)
}

// simulatedDisp is simulated for a family with a dispersion parameter.
func simulatedDisp(t *testing.T, family string, cov [][]float64, beta []float64, disp float64, n int, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: family, Subjects: n, Obs: 7, Beta: beta, RECov: cov, Dispersion: disp, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	fam, _ := glmm.ParseFamily(family)
	d, err := formula.Build(f, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestStart: the start's precision is positive definite, beta is near the
// truth on a large simulation, and the start is close to the optimum: a
// GVA fit from it gains little over the bound of its first window.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("fits three models of 2000 subjects; run without -short")
	}
	for _, tc := range []struct {
		family string
		cov    [][]float64
		disp   float64
	}{
		{"bernoulli", [][]float64{{1}}, 0},
		{"poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}, 0},
		{"binomial", [][]float64{{0.8, 0.1, 0}, {0.1, 0.4, 0}, {0, 0, 0.2}}, 0},
		{"gaussian", [][]float64{{0.8, 0.1}, {0.1, 0.4}}, 0.6},
		{"negbinomial", [][]float64{{0.5}}, 3},
	} {
		t.Run(tc.family, func(t *testing.T) {
			beta := []float64{-0.5, 0.5, 0.3}
			m := simulatedDisp(t, tc.family, tc.cov, beta, tc.disp, 2000, 11)
			n, r, g := m.Dims()
			theta := make([]float64, n*r+g)
			prec := make([]float64, arrowhead.Len(n, r, g))
			if err := startModel(m, theta, prec); err != nil {
				t.Fatal(err)
			}
			checkPositiveDefinite(t, n, r, g, prec)
			for k, b := range beta {
				if d := math.Abs(theta[n*r+k] - b); d > 0.15 {
					t.Errorf("beta[%d] = %.3f at the start, truth %.3f", k, theta[n*r+k], b)
				}
			}
			if k, ok := m.Dispersion(); ok {
				// Within 10% of the truth: 14000 observations place it to
				// a few percent.
				if got := math.Exp(theta[n*r+k]); math.Abs(got-tc.disp) > 0.1*tc.disp {
					t.Errorf("%s = %.3f at the start, truth %v", m.Family().DispersionName(), got, tc.disp)
				}
			}
			res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, Window: 50})
			if err != nil {
				t.Fatal(err)
			}
			first := res.Trace[0].LowerBound
			gain := res.LowerBound - first
			t.Logf("bound %.2f at the first window, %.2f at the end (%d iterations)", first, res.LowerBound, res.Iterations)
			// The start leaves out the dependence between omega and the
			// b_i, whose cost grows with the number of local variables.
			if gain > 1+0.002*float64(n*r) {
				t.Errorf("the fit gained %.2f nats over its start", gain)
			}
		})
	}
}

// checkPositiveDefinite fails the test unless prec, an arrowhead matrix in
// compressed form, has a Cholesky factor.
func checkPositiveDefinite(t *testing.T, n, r, g int, prec []float64) {
	t.Helper()
	tf := arrowhead.Wrap(n, r, g, append([]float64(nil), prec...))
	sum := make([]float64, g*(g+1)/2)
	if err := tf.CholRange(0, n, tf.Data(), sum); err != nil {
		t.Fatal(err)
	}
	if err := tf.CholGlobal(tf.Data(), sum); err != nil {
		t.Fatal(err)
	}
}

// startModel runs m's start on a pool of GOMAXPROCS workers.
func startModel(m *glmm.Model, theta, prec []float64) error {
	pool := parallel.NewPool(context.Background(), 0)
	defer pool.Close()
	return m.Start(pool, theta, prec)
}
