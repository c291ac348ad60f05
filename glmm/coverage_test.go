// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStructureCoverage: on data simulated with known truth for each new
// random-effects structure and link, GVA's 95% intervals of the fixed
// effects cover the truth in at least 85% of 30 replicates (the expected
// count is 57 of 60; 51 is 2.8 binomial sds below it), and the
// intervals of the structure's sds in at least 80%.
func TestStructureCoverage(t *testing.T) {
	longtest.Require(t, "fits 90 models")
	const reps = 30
	beta := []float64{-0.3, 0.6}
	for _, tc := range []struct {
		name string
		sim  func(rng *rand.Rand) (glmm.Config, []float64) // config and true sds
	}{
		{"crossed", func(rng *rand.Rand) (glmm.Config, []float64) {
			return simStructure(rng, beta, glmm.Bernoulli, glmm.CanonicalLink, 20, false)
		}},
		{"blocks", func(rng *rand.Rand) (glmm.Config, []float64) {
			return simStructure(rng, beta, glmm.Poisson, glmm.CanonicalLink, 0, true)
		}},
		{"probit", func(rng *rand.Rand) (glmm.Config, []float64) {
			return simStructure(rng, beta, glmm.Bernoulli, glmm.Probit, 0, false)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			covered, total, sdCovered, sdTotal := 0, 0, 0, 0
			for rep := range reps {
				rng := rand.New(rand.NewPCG(uint64(rep), 77))
				cfg, sds := tc.sim(rng)
				m, err := glmm.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: uint64(rep + 1), Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				n, r, _ := m.Dims()
				mu, cov := res.Mu[n*r:], res.GlobalCov()
				for k, b := range beta {
					total++
					if sd := math.Sqrt(cov.At(k, k)); math.Abs(mu[k]-b) <= 1.96*sd {
						covered++
					}
				}
				// The sds: exp(-omega) for a crossed factor and for the
				// diagonal of W of independent blocks.
				var idx []int
				if m.NumCrossed() > 0 {
					_, _, _, omega := m.CrossedFactor(0)
					idx = append(idx, omega)
				} else {
					for l := range r {
						idx = append(idx, m.P()+glmm.OmegaIndex(l, l, r))
					}
				}
				for k, j := range idx {
					if k >= len(sds) {
						break
					}
					sdTotal++
					s := math.Sqrt(cov.At(j, j))
					lo, hi := math.Exp(-(mu[j] + 1.96*s)), math.Exp(-(mu[j] - 1.96*s))
					if lo <= sds[k] && sds[k] <= hi {
						sdCovered++
					}
				}
			}
			t.Logf("%s: beta %d of %d, sds %d of %d", tc.name, covered, total, sdCovered, sdTotal)
			if float64(covered) < 0.85*float64(total) {
				t.Errorf("beta intervals cover %d of %d", covered, total)
			}
			if float64(sdCovered) < 0.8*float64(sdTotal) {
				t.Errorf("sd intervals cover %d of %d", sdCovered, sdTotal)
			}
		})
	}
}

// simStructure simulates 150 subjects of 12 rows with a covariate x:
// with items > 0 a random intercept of sd 0.7 crossed with items of sd
// 0.5; with blocks independent random intercept and slope of sds 0.6 and
// 0.4 (REBlocks); else a random intercept of sd 0.8. It returns the
// config and the sds of the structure to cover.
func simStructure(rng *rand.Rand, beta []float64, fam glmm.Family, link glmm.Link, items int, blocks bool) (glmm.Config, []float64) {
	const n, per = 150, 12
	nobs := n * per
	r := 1
	if blocks {
		r = 2
	}
	x := mat.NewDense(nobs, 2, nil)
	z := mat.NewDense(nobs, r, nil)
	y := make([]float64, nobs)
	group := make([]int, nobs)
	var item []int
	u := make([]float64, items)
	for l := range u {
		u[l] = 0.5 * rng.NormFloat64()
	}
	sds := []float64{0.8}
	switch {
	case items > 0:
		sds = []float64{0.5}
		item = make([]int, nobs)
	case blocks:
		sds = []float64{0.6, 0.4}
	}
	k := 0
	for i := range n {
		b0, b1 := sds[0]*rng.NormFloat64(), 0.0
		if items > 0 {
			b0 = 0.7 * rng.NormFloat64()
		}
		if blocks {
			b1 = sds[1] * rng.NormFloat64()
		}
		for range per {
			xv := rng.NormFloat64()
			x.Set(k, 0, 1)
			x.Set(k, 1, xv)
			z.Set(k, 0, 1)
			eta := beta[0] + beta[1]*xv + b0
			if blocks {
				z.Set(k, 1, xv)
				eta += b1 * xv
			}
			if items > 0 {
				l := rng.IntN(items)
				item[k] = l
				eta += u[l]
			}
			switch {
			case fam == glmm.Poisson:
				y[k] = distuv.Poisson{Lambda: math.Exp(eta), Src: rng}.Rand()
			case rng.Float64() < successProb(link, eta):
				y[k] = 1
			}
			group[k] = i
			k++
		}
	}
	cfg := glmm.Config{Family: fam, Link: link, Y: y, X: x, Z: z, Group: group, NumGroups: n}
	if items > 0 {
		cfg.Crossed = []glmm.Crossed{{Name: "item", Index: item, NumLevels: items}}
	}
	if blocks {
		cfg.REBlocks = []int{0, 1}
	}
	return cfg, sds
}

// successProb returns the probability of a success at eta under link.
func successProb(link glmm.Link, eta float64) float64 {
	if link == glmm.CanonicalLink {
		return 1 / (1 + math.Exp(-eta))
	}
	return glmm.LinkMean(link, eta)
}
