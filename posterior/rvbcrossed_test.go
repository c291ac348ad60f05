// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestRVBCrossed: RVB1 and RVB2 fit a Poisson model with a crossed factor
// (simulated with known truth): the summaries keep the crossed factor
// apart from the random-effect parameters, its sd and the fixed effects
// lie within their intervals widened by two posterior sds of the truth,
// and the bound is within a nat of GVA's or above it.
func TestRVBCrossed(t *testing.T) {
	const n, per, items = 150, 6, 12
	beta := []float64{0.3, 0.5}
	const sdSubj, sdItem = 0.5, 0.7
	rng := rand.New(rand.NewPCG(11, 3))
	u := make([]float64, items)
	for l := range u {
		u[l] = sdItem * rng.NormFloat64()
	}
	nobs := n * per
	x, z := mat.NewDense(nobs, 2, nil), mat.NewDense(nobs, 1, nil)
	y := make([]float64, nobs)
	group, item := make([]int, nobs), make([]int, nobs)
	for i := range n {
		b := sdSubj * rng.NormFloat64()
		for j := range per {
			k := i*per + j
			xv := rng.NormFloat64()
			x.Set(k, 0, 1)
			x.Set(k, 1, xv)
			z.Set(k, 0, 1)
			group[k], item[k] = i, rng.IntN(items)
			mu := math.Exp(beta[0] + beta[1]*xv + b + u[item[k]])
			// Poisson by inversion.
			c, p, s, v := 0.0, math.Exp(-mu), math.Exp(-mu), rng.Float64()
			for v > s {
				c++
				p *= mu / c
				s += p
			}
			y[k] = c
		}
	}
	m, err := glmm.New(glmm.Config{Family: glmm.Poisson, Y: y, X: x, Z: z, Group: group, NumGroups: n,
		Crossed: []glmm.Crossed{{Name: "item", Index: item, NumLevels: items}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	gva, err := vi.Fit(ctx, m, vi.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{posterior.RVB1, posterior.RVB2} {
		pool := parallel.NewPool(ctx, 2)
		tg, vm, err := posterior.NewTarget(pool, m, method, posterior.AtStart)
		pool.Close()
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		res, err := vi.Fit(ctx, tg, vi.Settings{Method: vm, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		s, err := posterior.SummarizeFit(ctx, res, tg, m, 1000, 1)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		t.Logf("%s: bound %.2f (GVA %.2f), item sd %.3f [%.3f, %.3f], subject sd %.3f", method, res.LowerBound, gva.LowerBound,
			s.Crossed[0].SD.Mean, s.Crossed[0].SD.Q025, s.Crossed[0].SD.Q975, s.SD[0].Mean)
		if len(s.Fixed) != 2 || len(s.Omega) != 1 || len(s.Crossed) != 1 || len(s.Crossed[0].Effects) != items {
			t.Fatalf("%s: %d fixed, %d omega, %d crossed: want 2, 1 and 1 of %d levels", method, len(s.Fixed), len(s.Omega), len(s.Crossed), items)
		}
		covers := func(name string, mg posterior.Marginal, truth float64) {
			if truth < mg.Q025-2*mg.SD || truth > mg.Q975+2*mg.SD {
				t.Errorf("%s: %s %.3f [%.3f, %.3f] far from the truth %.3f", method, name, mg.Mean, mg.Q025, mg.Q975, truth)
			}
		}
		for k, b := range beta {
			covers(s.Fixed[k].Name, s.Fixed[k], b)
		}
		covers("item sd", s.Crossed[0].SD, sdItem)
		covers("subject sd", s.SD[0], sdSubj)
		if res.LowerBound < gva.LowerBound-1 {
			t.Errorf("%s: bound %.2f more than a nat below GVA's %.2f", method, res.LowerBound, gva.LowerBound)
		}
	}
}
