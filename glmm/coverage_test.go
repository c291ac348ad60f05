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
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStructureCoverage: on data simulated with known truth for each new
// random-effects structure and link, the 95% intervals of the fixed
// effects cover the truth in at least 85% of 30 replicates (the expected
// count is 57 of 60; 51 is 2.8 binomial sds below it), and the
// intervals of the structure's sds in at least 80%. The fits are
// glmmfit's defaults: GVA's, except for Bernoulli nested factors, RVB1's at
// the start (Gaussian nested factors are GVA's: measured, beta 56 and the
// sds 53 of 60).
func TestStructureCoverage(t *testing.T) {
	longtest.Require(t, "fits 120 models")
	const reps = 30
	beta := []float64{-0.3, 0.6}
	for _, tc := range []struct {
		name string
		// sim returns the target, the true sds and the indices in
		// theta_g of their omega = -log sd.
		sim func(rng *rand.Rand) (vi.Target, []float64, []int)
	}{
		{"crossed", func(rng *rand.Rand) (vi.Target, []float64, []int) {
			cfg, sds := simStructure(rng, beta, glmm.Bernoulli, glmm.CanonicalLink, 20, false)
			return modelStructure(t, cfg, sds)
		}},
		{"blocks", func(rng *rand.Rand) (vi.Target, []float64, []int) {
			cfg, sds := simStructure(rng, beta, glmm.Poisson, glmm.CanonicalLink, 0, true)
			return modelStructure(t, cfg, sds)
		}},
		{"probit", func(rng *rand.Rand) (vi.Target, []float64, []int) {
			cfg, sds := simStructure(rng, beta, glmm.Bernoulli, glmm.Probit, 0, false)
			return modelStructure(t, cfg, sds)
		}},
		{"nested", func(rng *rand.Rand) (vi.Target, []float64, []int) {
			// The default fit of a nested model: RVB1 expanded at the
			// start.
			m, sds := simNested(t, rng, beta, glmm.Bernoulli)
			tg, err := rvb.NewNestedAtStart(nil, m, rvb.RVB1)
			if err != nil {
				t.Fatal(err)
			}
			return tg, sds, []int{len(beta), len(beta) + 1}
		}},
		{"nested-gaussian", func(rng *rand.Rand) (vi.Target, []float64, []int) {
			// glmmfit's default for a Gaussian nested model: GVA on the
			// centred effects (RVB has no dispersion parameter).
			m, sds := simNested(t, rng, beta, glmm.Gaussian)
			return m, sds, []int{len(beta), len(beta) + 1}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			covered, total, sdCovered, sdTotal := 0, 0, 0, 0
			for rep := range reps {
				rng := rand.New(rand.NewPCG(uint64(rep), 77))
				m, sds, idx := tc.sim(rng)
				set := vi.Settings{Seed: uint64(rep + 1), Workers: 1}
				if _, ok := m.(*rvb.Target); ok {
					set.Method = vi.BlockDiag
				}
				res, err := vi.Fit(context.Background(), m, set)
				if err != nil {
					t.Fatal(err)
				}
				_, _, g := m.Dims()
				mu, cov := res.Mu[len(res.Mu)-g:], res.GlobalCov()
				for k, b := range beta {
					total++
					if sd := math.Sqrt(cov.At(k, k)); math.Abs(mu[k]-b) <= 1.96*sd {
						covered++
					}
				}
				for k, j := range idx {
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

// modelStructure builds the model of cfg and returns it with the sds of
// its structure and the indices of their omega in theta_g: a crossed
// factor's, or the diagonal of W of independent blocks.
func modelStructure(t *testing.T, cfg glmm.Config, sds []float64) (vi.Target, []float64, []int) {
	m, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, r, _ := m.Dims()
	var idx []int
	if m.NumCrossed() > 0 {
		_, _, _, omega := m.CrossedFactor(0)
		idx = append(idx, omega)
	} else {
		for l := range r {
			idx = append(idx, m.P()+glmm.OmegaIndex(l, l, r))
		}
	}
	return m, sds, idx[:min(len(idx), len(sds))]
}

// simNested simulates (1 | school/class) with a covariate x, Bernoulli
// rows (or Gaussian of residual sd 1): 150 schools of 2 to 4 classes
// (blocks of 3 to 5 effects) of 10 rows, sd(school) 0.8 and
// sd(school:class) 0.5. It returns the model (glmm.Nested) and the two
// sds.
//
// Measured on these data: RVB1 at the start covers beta 58 and the sds 57
// times of 60 (RVB2 the same), GVA the sds 45 times: on the centred
// effects its intervals for sd(school:class) are a third as wide as
// RVB's. With 5 rows a class, sd(school:class) is weakly identified and
// RVB1's fits set it near 0 in 8 of 30 replicates (sds covered 48 times,
// beta 53; GVA 38 and 58).
func simNested(t *testing.T, rng *rand.Rand, beta []float64, fam glmm.Family) (*glmm.Nested, []float64) {
	const schools, per = 150, 10
	sds := []float64{0.8, 0.5}
	var y, x []float64
	var outer, inner []int
	for i := range schools {
		u := sds[0] * rng.NormFloat64()
		for range 2 + rng.IntN(3) {
			v := sds[1] * rng.NormFloat64()
			c := len(inner) / per
			for range per {
				xv := rng.NormFloat64()
				eta := beta[0] + beta[1]*xv + u + v
				yv := 0.0
				switch {
				case fam == glmm.Gaussian:
					yv = eta + rng.NormFloat64()
				case rng.Float64() < 1/(1+math.Exp(-eta)):
					yv = 1
				}
				y, x = append(y, yv), append(x, 1, xv)
				outer, inner = append(outer, i), append(inner, c)
			}
		}
	}
	m, err := glmm.NewNested(glmm.NestedConfig{Family: fam, Y: y, X: mat.NewDense(len(y), 2, x),
		Outer: outer, NumOuter: schools, Inner: inner, NumInner: len(inner) / per})
	if err != nil {
		t.Fatal(err)
	}
	return m, sds
}

// simStructure simulates 150 subjects of 12 rows with a covariate x:
// with items > 0 a random intercept of sd 0.7 crossed with items of sd
// 0.5; with blocks independent random intercept and slope of sds 0.6 and
// 0.4 (REBlocks); else a random intercept of sd 0.8. It returns the
// config and the sds of the structure to cover (for items > 0, the
// items').
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
