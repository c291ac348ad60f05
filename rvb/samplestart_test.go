// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// simulatedModel builds the model of a simulated data set of n subjects
// with 7 observations each.
func simulatedModel(t *testing.T, family string, cov [][]float64, beta []float64, n int, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: family, Subjects: n, Obs: 7, Beta: beta, RECov: cov, Seed: seed})
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

// TestNewAtSampleStart: a Target at a sample's start is expanded at a
// start, bit for bit the same on 1 and 2 workers and for the same seed,
// not for another seed; the full-batch fit from it recovers the truth
// and ends where the fit from NewAtStart does, the global means within
// 0.1 posterior sd and the sds within 10%; and the start itself, after
// one iteration, has its means within 0.25 sd of that fit (at the model's
// full start, NewAtStart's, 0.08 sd at 10^5 Bernoulli subjects) and its
// sds within 25% (a Poisson random effect's sd started 17.5% short).
func TestNewAtSampleStart(t *testing.T) {
	longtest.Require(t, "fits thousands of subjects")
	for _, c := range []struct {
		name   string
		family string
		cov    [][]float64
		beta   []float64
		meth   Method
		n      int
		size   int
	}{
		{"bernoulli/rvb1", "bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, RVB1, 8000, 2000},
		{"bernoulli/rvb2", "bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, RVB2, 8000, 2000},
		{"poisson/rvb1", "poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}, []float64{0.5, 0.3, -0.2, 0.2, 0.4}, RVB1, 4000, 1000},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := simulatedModel(t, c.family, c.cov, c.beta, c.n, 7)
			build := func(workers int, seed uint64) *Target {
				pool := parallel.NewPool(context.Background(), workers)
				defer pool.Close()
				tg, err := NewAtSampleStart(pool, m, c.meth, c.size, seed)
				if err != nil {
					t.Fatal(err)
				}
				return tg
			}
			two := build(2, 1)
			if !two.ExpandedAtStart() {
				t.Error("not expanded at a start")
			}
			same := func(a, b *Target) bool {
				return slices.Equal(a.hw, b.hw) && slices.Equal(a.qw, b.qw) && slices.Equal(a.start.theta, b.start.theta) && slices.Equal(a.start.prec, b.start.prec)
			}
			if !same(build(1, 1), two) {
				t.Error("1 and 2 workers build different Targets")
			}
			if !same(build(2, 1), two) {
				t.Error("the same seed builds different Targets")
			}
			if same(build(2, 2), two) {
				t.Error("seeds 1 and 2 build the same Target")
			}
			ref, err := NewAtStart(testPool(t), m, c.meth)
			if err != nil {
				t.Fatal(err)
			}
			fit := func(tg *Target, maxIter int) *vi.Result {
				res, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2, MaxIter: maxIter, FinalDraws: 20})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			want := fit(ref, 0)
			wm, ws := want.GlobalMoments()
			one := fit(build(2, 1), 1)
			got := fit(two, 0)
			for _, r := range []struct {
				what  string
				res   *vi.Result
				tol   float64
				tolSD float64
			}{{"start", one, 0.25, 0.25}, {"fit", got, 0.1, 0.1}} {
				gm, gs := r.res.GlobalMoments()
				for j := range wm {
					if d := math.Abs(gm[j]-wm[j]) / ws[j]; d > r.tol {
						t.Errorf("%s: global %d: mean %v, %.3f sd from NewAtStart's fit's %v", r.what, j, gm[j], d, wm[j])
					}
					if d := math.Abs(gs[j]/ws[j] - 1); d > r.tolSD {
						t.Errorf("%s: global %d: sd %v, %.1f%% off NewAtStart's fit's %v", r.what, j, gs[j], 100*d, ws[j])
					}
				}
			}
			gm, gs := got.GlobalMoments()
			for k, b := range c.beta {
				if d := math.Abs(gm[k]-b) / gs[k]; d > 4 {
					t.Errorf("beta[%d] = %v, %.1f sd from the truth %v", k, gm[k], d, b)
				}
			}
		})
	}
}
