// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestCoverageKnownTruth: on data simulated from known parameters, the 95%
// intervals of RVB1 expanded at the start (glmmfit's default) and of RVB2
// cover beta and the random-intercept sd (exact: sd = exp(-omega), omega
// Gaussian) in at least 80% of 30 replicates. The nominal rate is 95%; the
// bound leaves room for Monte Carlo error and for the approximation, which
// covers beta of the Poisson random slope 77 of 90 times by either method
// (the binomial sd of the count is 2).
func TestCoverageKnownTruth(t *testing.T) {
	longtest.Require(t, "fits 180 models")
	const reps = 30
	for _, tc := range []struct {
		family string
		beta   []float64
		cov    [][]float64
	}{
		{"bernoulli", []float64{-0.5, 1, 0.5}, [][]float64{{1}}},
		{"poisson", []float64{0.5, -0.5, 0.3}, [][]float64{{0.5, -0.1}, {-0.1, 0.3}}},
		{"binomial", []float64{-1, 0.5, 0.5}, [][]float64{{0.8}}},
	} {
		for _, method := range []rvb.Method{rvb.RVB1, rvb.RVB2} {
			name := fmt.Sprintf("%s/r=%d/%v", tc.family, len(tc.cov), method)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				family, err := glmm.ParseFamily(tc.family)
				if err != nil {
					t.Fatal(err)
				}
				covered, total, sdCovered, sdTotal := 0, 0, 0, 0
				for rep := range reps {
					fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: tc.family, Subjects: 300, Obs: 7, Beta: tc.beta, RECov: tc.cov, Seed: uint64(2000 + rep)})
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
					pool := parallel.NewPool(context.Background(), 0)
					tg, err := rvb.NewAtStart(pool, m, method)
					pool.Close()
					if err != nil {
						t.Fatal(err)
					}
					res, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.BlockDiag, Seed: uint64(rep), Workers: 1})
					if err != nil {
						t.Fatalf("replicate %d: %v", rep, err)
					}
					n, r, _ := m.Dims()
					mu := res.Mu[n*r:]
					cov := res.GlobalCov()
					for k, b := range tc.beta {
						total++
						s := math.Sqrt(cov.At(k, k))
						if math.Abs(mu[k]-b) <= 1.96*s {
							covered++
						}
					}
					if r == 1 {
						p := len(tc.beta)
						s := math.Sqrt(cov.At(p, p))
						lo, hi := math.Exp(-(mu[p] + 1.96*s)), math.Exp(-(mu[p] - 1.96*s))
						sdTotal++
						if sd := math.Sqrt(tc.cov[0][0]); lo <= sd && sd <= hi {
							sdCovered++
						}
					}
				}
				t.Logf("beta %d of %d, sd %d of %d", covered, total, sdCovered, sdTotal)
				if float64(covered) < 0.8*float64(total) {
					t.Errorf("beta intervals cover %d of %d", covered, total)
				}
				if float64(sdCovered) < 0.8*float64(sdTotal) {
					t.Errorf("sd intervals cover %d of %d", sdCovered, sdTotal)
				}
			})
		}
	}
}
