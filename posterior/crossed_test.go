// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestCrossedEffectsMoments checks the closed-form mean and sd of each
// crossed effect u_l = exp(-a_l omega_u) v_l, and the log-normal sd of the
// factor, against draws from the joint Gaussian of theta_g.
func TestCrossedEffectsMoments(t *testing.T) {
	// Two subjects, a factor of three levels with unequal information so
	// that the weights a_l differ.
	y := []float64{0, 1, 2, 0, 5, 9, 12, 1, 0, 30, 2, 3}
	item := []int{0, 0, 1, 1, 2, 2, 2, 2, 2, 2, 1, 0}
	group := []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}
	nobs := len(y)
	z := mat.NewDense(nobs, 1, nil)
	for k := range nobs {
		z.Set(k, 0, 1)
	}
	m, err := glmm.New(glmm.Config{Family: glmm.Poisson, Y: y, Z: z, Group: group, NumGroups: 2,
		Crossed: []glmm.Crossed{{Name: "item", Index: item, NumLevels: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, g := m.Dims()
	_, _, first, omega := m.CrossedFactor(0)
	a := m.CrossedWeights(0)
	if a[0] == a[2] {
		t.Fatalf("weights %v do not differ", a)
	}
	mu := make([]float64, g)
	for k := range mu {
		mu[k] = 0.3 * float64(k%4-1)
	}
	mu[omega] = 0.4
	// A covariance with correlation between the effects and omega_u.
	rng := rand.New(rand.NewPCG(1, 1))
	b := mat.NewDense(g, g, nil)
	for i := range g {
		for j := range g {
			b.Set(i, j, 0.2*rng.NormFloat64())
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1, b)
	for i := range g {
		cov.SetSym(i, i, cov.At(i, i)+0.05)
	}
	ce := crossedEffects(m, 0, mu, &cov)
	var ch mat.Cholesky
	if !ch.Factorize(&cov) {
		t.Fatal("covariance not positive definite")
	}
	var low mat.TriDense
	ch.LTo(&low)
	drng := rand.New(rand.NewPCG(2, 2))
	zd := make([]float64, g)
	const draws = 400000
	var sum, sum2 [3]float64
	var sds []float64
	x := make([]float64, g)
	for range draws {
		for k := range zd {
			zd[k] = drng.NormFloat64()
		}
		for i := range g {
			x[i] = mu[i]
			for j := 0; j <= i; j++ {
				x[i] += low.At(i, j) * zd[j]
			}
		}
		for l := range 3 {
			u := math.Exp(-a[l]*x[omega]) * x[first+l]
			sum[l] += u
			sum2[l] += u * u
		}
		sds = append(sds, math.Exp(-x[omega]))
	}
	for l := range 3 {
		mean := sum[l] / draws
		sd := math.Sqrt(sum2[l]/draws - mean*mean)
		e := ce.Effects[l]
		if math.Abs(e.Mean-mean) > 5*sd/math.Sqrt(draws) || math.Abs(e.SD-sd) > 0.01*sd {
			t.Errorf("level %d: mean %v sd %v, draws give %v %v", l, e.Mean, e.SD, mean, sd)
		}
	}
	mc := SampleMarginal("sd", sds)
	if math.Abs(ce.SD.Mean-mc.Mean) > 0.005*mc.Mean || math.Abs(ce.SD.Q975-mc.Q975) > 0.01*mc.Q975 {
		t.Errorf("sd of the factor: %+v, draws give %+v", ce.SD, mc)
	}
}
