// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestCoverageKnownTruth: on data simulated from known parameters, the 95%
// intervals for beta from GVA with Snngm cover the truth in at least 88% of
// seeded replicates, for every family and r in {1, 2}, and so do those of
// the dispersion parameter of the families with one.
func TestCoverageKnownTruth(t *testing.T) {
	longtest.Require(t, "fits 450 models")
	const reps = 50
	for _, tc := range []struct {
		family string
		beta   []float64
		cov    [][]float64
		disp   float64
	}{
		{"bernoulli", []float64{-0.5, 1, 0.5}, [][]float64{{1}}, 0},
		{"bernoulli", []float64{-0.5, 1, 0.5}, [][]float64{{1, 0.2}, {0.2, 0.5}}, 0},
		{"poisson", []float64{0.5, -0.5, 0.3}, [][]float64{{0.5}}, 0},
		{"poisson", []float64{0.5, -0.5, 0.3}, [][]float64{{0.5, -0.1}, {-0.1, 0.3}}, 0},
		{"binomial", []float64{-1, 0.5, 0.5}, [][]float64{{0.8}}, 0},
		{"binomial", []float64{-1, 0.5, 0.5}, [][]float64{{0.8, 0.1}, {0.1, 0.4}}, 0},
		{"gaussian", []float64{2, -1, 0.5}, [][]float64{{0.6}}, 0.7},
		{"gaussian", []float64{2, -1, 0.5}, [][]float64{{0.6, 0.1}, {0.1, 0.3}}, 0.7},
		{"negbinomial", []float64{0.5, -0.5, 0.3}, [][]float64{{0.5}}, 2},
	} {
		name := fmt.Sprintf("%s/r=%d", tc.family, len(tc.cov))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			family, err := glmm.ParseFamily(tc.family)
			if err != nil {
				t.Fatal(err)
			}
			covered, total := 0, 0
			dispCovered, dispTotal := 0, 0
			for rep := range reps {
				fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: tc.family, Subjects: 300, Obs: 7, Beta: tc.beta, RECov: tc.cov, Dispersion: tc.disp, Seed: uint64(1000 + rep)})
				if err != nil {
					t.Fatal(err)
				}
				f, err := formula.Parse(truth.Formula)
				if err != nil {
					t.Fatal(err)
				}
				d, err := formula.Build(f, fr, formula.Options{Family: family})
				if err != nil {
					t.Fatal(err)
				}
				m := d.Model()
				res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: uint64(rep), Workers: 1})
				if err != nil {
					t.Fatalf("replicate %d: %v", rep, err)
				}
				s, err := posterior.Summarize(res, m, 100, 1)
				if err != nil {
					t.Fatal(err)
				}
				for k, b := range tc.beta {
					total++
					if s.Fixed[k].Q025 <= b && b <= s.Fixed[k].Q975 {
						covered++
					}
				}
				if d := s.Dispersion; d != nil {
					dispTotal++
					if d.Q025 <= tc.disp && tc.disp <= d.Q975 {
						dispCovered++
					}
				}
			}
			rate := float64(covered) / float64(total)
			t.Logf("%s: %d of %d intervals cover the truth (%.1f%%)", name, covered, total, 100*rate)
			if rate < 0.88 {
				t.Errorf("coverage %.3f, want >= 0.88", rate)
			}
			if family.HasDispersion() {
				dr := float64(dispCovered) / float64(dispTotal)
				t.Logf("%s: %d of %d intervals of %s cover the truth", name, dispCovered, dispTotal, family.DispersionName())
				if dispTotal != reps || dr < 0.88 {
					t.Errorf("%s: %d of %d intervals cover the truth, want >= 88%%", family.DispersionName(), dispCovered, dispTotal)
				}
			}
		})
	}
}
