// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// poissonDraw draws a Poisson variate by inversion of the cdf.
func poissonDraw(rng *rand.Rand, mu float64) float64 {
	u := rng.Float64()
	k, pk := 0, math.Exp(-mu)
	cdf := pk
	for u > cdf && k < 1000 {
		k++
		pk *= mu / float64(k)
		cdf += pk
	}
	return float64(k)
}

// randomModel builds a model of n subjects (1 to 7 rows each, in random
// order) with p fixed effects (an intercept and normal covariates) and r
// random effects (an intercept and normal covariates), random offsets and,
// with weighted, random weights; responses are drawn from the family at a
// random truth.
func randomModel(t testing.TB, rng *rand.Rand, fam glmm.Family, n, p, r int, weighted bool) *glmm.Model {
	t.Helper()
	return randomLinkModel(t, rng, fam, glmm.CanonicalLink, n, p, r, weighted)
}

// randomLinkModel is randomModel with the given link.
func randomLinkModel(t testing.TB, rng *rand.Rand, fam glmm.Family, link glmm.Link, n, p, r int, weighted bool) *glmm.Model {
	t.Helper()
	m, err := glmm.New(randomLinkConfig(rng, fam, link, n, p, r, weighted))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// randomCrossedModel is randomLinkModel with two crossed factors of 3 and
// 4 levels, each row meeting a random level of each.
func randomCrossedModel(t testing.TB, rng *rand.Rand, fam glmm.Family, n, p, r int) *glmm.Model {
	t.Helper()
	cfg := randomLinkConfig(rng, fam, glmm.CanonicalLink, n, p, r, false)
	for c, nl := range []int{3, 4} {
		cr := glmm.Crossed{Name: fmt.Sprintf("f%d", c), NumLevels: nl, Index: make([]int, len(cfg.Y))}
		for k := range cr.Index {
			cr.Index[k] = rng.IntN(nl)
		}
		cfg.Crossed = append(cfg.Crossed, cr)
	}
	m, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.NumCrossed() != 2 {
		t.Fatalf("%d crossed factors", m.NumCrossed())
	}
	return m
}

// randomLinkConfig is the configuration of randomLinkModel.
func randomLinkConfig(rng *rand.Rand, fam glmm.Family, link glmm.Link, n, p, r int, weighted bool) glmm.Config {
	var group []int
	for i := range n {
		for range 1 + rng.IntN(7) {
			group = append(group, i)
		}
	}
	rng.Shuffle(len(group), func(a, b int) { group[a], group[b] = group[b], group[a] })
	nobs := len(group)
	x := mat.NewDense(nobs, p, nil)
	z := mat.NewDense(nobs, r, nil)
	y := make([]float64, nobs)
	trials := make([]float64, nobs)
	off := make([]float64, nobs)
	var w []float64
	if weighted {
		w = make([]float64, nobs)
	}
	beta := make([]float64, p)
	for k := range beta {
		beta[k] = 0.5 * rng.NormFloat64()
	}
	b := make([]float64, n*r)
	for k := range b {
		b[k] = 0.7 * rng.NormFloat64()
	}
	for k := range nobs {
		x.Set(k, 0, 1)
		for c := 1; c < p; c++ {
			x.Set(k, c, rng.NormFloat64())
		}
		z.Set(k, 0, 1)
		for c := 1; c < r; c++ {
			z.Set(k, c, rng.NormFloat64())
		}
		off[k] = 0.2 * rng.NormFloat64()
		eta := off[k]
		for c := range p {
			eta += x.At(k, c) * beta[c]
		}
		for c := range r {
			eta += z.At(k, c) * b[group[k]*r+c]
		}
		trials[k] = 1
		switch fam {
		case glmm.Poisson:
			y[k] = poissonDraw(rng, math.Exp(eta+1))
		case glmm.Bernoulli:
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				y[k] = 1
			}
		case glmm.Binomial:
			trials[k] = float64(1 + rng.IntN(12))
			pr := 1 / (1 + math.Exp(-eta))
			for range int(trials[k]) {
				if rng.Float64() < pr {
					y[k]++
				}
			}
		}
		if weighted {
			w[k] = 0.5 + rng.Float64()
		}
	}
	cfg := glmm.Config{Family: fam, Link: link, Y: y, Offset: off, Weights: w, X: x, Z: z, Group: group, NumGroups: n}
	if fam == glmm.Binomial {
		cfg.Trials = trials
	}
	return cfg
}

// logJoint returns Global + Local over all subjects at x = (b~, theta_g)
// and, unless grad is nil, writes the gradient into grad.
func logJoint(t testing.TB, tg *Target, ws any, x, grad []float64) float64 {
	n, _, _ := tg.Dims()
	nr := tg.at(n)
	var gl, gg []float64
	if grad != nil {
		clear(grad)
		gl, gg = grad[:nr], grad[nr:]
	}
	v, err := tg.Local(ws, 0, n, x[nr:], x[:nr], gl, gg)
	if err != nil {
		t.Fatal(err)
	}
	if gg == nil {
		// glmm.Nested's Global writes its gradient.
		gg = make([]float64, len(x)-nr)
	}
	return v + tg.Global(x[nr:], gg)
}
