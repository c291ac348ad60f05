// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// benchModel returns a model of n subjects with ni observations each, p
// fixed effects (intercept and normal covariates) and r random effects.
func benchModel(b *testing.B, fam glmm.Family, n, ni, p, r int) *glmm.Model {
	rng := rand.New(rand.NewPCG(1, 2))
	nobs := n * ni
	x := mat.NewDense(nobs, p, nil)
	z := mat.NewDense(nobs, r, nil)
	cfg := glmm.Config{Family: fam, Y: make([]float64, nobs), X: x, Z: z, Group: make([]int, nobs), NumGroups: n}
	if fam == glmm.Binomial {
		cfg.Trials = make([]float64, nobs)
	}
	for k := range nobs {
		cfg.Group[k] = k / ni
		x.Set(k, 0, 1)
		for c := 1; c < p; c++ {
			x.Set(k, c, rng.NormFloat64())
		}
		z.Set(k, 0, 1)
		for c := 1; c < r; c++ {
			z.Set(k, c, x.At(k, c%p))
		}
		switch fam {
		case glmm.Poisson:
			cfg.Y[k] = poissonDraw(rng, 2)
		case glmm.Bernoulli:
			cfg.Y[k] = float64(rng.IntN(2))
		case glmm.Binomial:
			cfg.Trials[k] = 5
			cfg.Y[k] = float64(rng.IntN(6))
		}
	}
	mod, err := glmm.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return mod
}

// BenchmarkLocal measures Local with gradients over 1000 subjects of 7
// observations; ns/obs is the time per observation. Run it with -cpu 1.
func BenchmarkLocal(b *testing.B) {
	const n, ni = 1000, 7
	for _, c := range []struct {
		fam  glmm.Family
		p, r int
	}{
		{glmm.Bernoulli, 5, 1}, {glmm.Poisson, 5, 1}, {glmm.Binomial, 5, 1}, {glmm.Bernoulli, 5, 2}, {glmm.Poisson, 6, 3},
	} {
		b.Run(fmt.Sprintf("%v/p=%d/r=%d", c.fam, c.p, c.r), func(b *testing.B) {
			mod := benchModel(b, c.fam, n, ni, c.p, c.r)
			_, r, g := mod.Dims()
			rng := rand.New(rand.NewPCG(3, 4))
			local, thetaG := randomLocal(rng, n, r), randomGlobal(rng, c.p, r)
			gl, gg := make([]float64, n*r), make([]float64, g)
			ws := mod.NewWorkspace()
			b.ReportAllocs()
			cpu0, okCPU := processCPU()
			for b.Loop() {
				if _, err := mod.Local(ws, 0, n, thetaG, local, gl, gg); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, _ := processCPU()
			obs := float64(b.N * n * ni)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/obs, "ns/obs")
			if okCPU {
				// CPU time of the process per observation: the same as ns/obs
				// on an idle machine with -cpu 1, but robust to other load.
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/obs, "cpu-ns/obs")
			}
			if math.IsNaN(gg[0]) {
				b.Fatal("NaN gradient")
			}
		})
	}
}

// BenchmarkCrossedDesign compares the two ways to apply a crossed
// factor's design Z (one 1 per row, at the row's level) that issue 15
// weighed: Model's level index per row (gather Z v into the linear
// predictors, scatter Z' res into the gradient) against
// github.com/james-bowman/sparse's CSR products, on insteval's shape
// (73,421 rows, 1128 levels).
//
//	go test ./glmm -run X -bench CrossedDesign
func BenchmarkCrossedDesign(b *testing.B) {
	const nobs, levels = 73421, 1128
	rng := rand.New(rand.NewPCG(3, 4))
	idx := make([]int32, nobs)
	ptr, ind, val := make([]int, nobs+1), make([]int, nobs), make([]float64, nobs)
	for k := range idx {
		l := rng.IntN(levels)
		idx[k] = int32(l)
		ptr[k+1], ind[k], val[k] = k+1, l, 1
	}
	z := sparse.NewCSR(nobs, levels, ptr, ind, val)
	v, res := make([]float64, levels), make([]float64, nobs)
	for l := range v {
		v[l] = rng.NormFloat64()
	}
	for k := range res {
		res[k] = rng.NormFloat64()
	}
	eta, g := make([]float64, nobs), make([]float64, levels)
	b.Run("index/gather", func(b *testing.B) {
		for b.Loop() {
			for k, l := range idx {
				eta[k] += v[l]
			}
		}
	})
	b.Run("csr/gather", func(b *testing.B) {
		for b.Loop() {
			z.MulVecTo(eta, false, v)
		}
	})
	b.Run("index/scatter", func(b *testing.B) {
		for b.Loop() {
			for k, l := range idx {
				g[l] += res[k]
			}
		}
	})
	b.Run("csr/scatter", func(b *testing.B) {
		for b.Loop() {
			z.MulVecTo(g, true, res)
		}
	})
}
