// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func simModel(t *testing.T, family string, subjects int, cov [][]float64, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: family, Subjects: subjects, Obs: 7, Beta: []float64{0.2, -0.5, 0.4}, RECov: cov, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := glmm.ParseFamily(family)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestRulesReachOptimum: every step rule, run on GVA from the default
// start, ends within a few nats of the best bound found, and no rule's bound
// is above Snngm's by more than Monte Carlo error (they all estimate the
// same optimum, which Snngm reaches).
func TestRulesReachOptimum(t *testing.T) {
	m := simModel(t, "poisson", 120, [][]float64{{0.5, 0.1}, {0.1, 0.3}}, 7)
	type out struct {
		lb, se float64
	}
	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		got := map[vi.Optimizer]out{}
		for _, opt := range []vi.Optimizer{vi.Snngm, vi.Adam, vi.NAdam, vi.PGA, vi.Nagm, vi.VOGN} {
			res, err := vi.Fit(context.Background(), m, vi.Settings{Method: method, Optimizer: opt, Seed: 3, MaxIter: 30000})
			if method == vi.BlockDiag && opt == vi.PGA {
				// ProxGenAdam is unstable with a covariance factor: the
				// paper's Table 11 reports it diverging on RVB too. The
				// fit must say so: diverged, or a final bound whose Monte
				// Carlo error shows heavy tails (its median draw can be
				// sound while a few draws are far down).
				if (res.Status != vi.Diverged || err == nil) && !(res.LowerBoundSE > 1) {
					t.Errorf("rvb/pga: status %v, error %v, bound %v ± %v; want diverged or an unreliable bound", res.Status, err, res.LowerBound, res.LowerBoundSE)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v/%v: %v", method, opt, err)
			}
			t.Logf("%v/%v: bound %.3f ± %.3f after %d iterations (%v)", method, opt, res.LowerBound, res.LowerBoundSE, res.Iterations, res.Status)
			got[opt] = out{res.LowerBound, res.LowerBoundSE}
		}
		ref := got[vi.Snngm]
		for opt, o := range got {
			if o.lb > ref.lb+4*math.Hypot(o.se, ref.se)+0.05 {
				t.Errorf("%v/%v: bound %.3f above Snngm's %.3f", method, opt, o.lb, ref.lb)
			}
			if o.lb < ref.lb-3 {
				t.Errorf("%v/%v: bound %.3f more than 3 nats below Snngm's %.3f", method, opt, o.lb, ref.lb)
			}
		}
	}
}
