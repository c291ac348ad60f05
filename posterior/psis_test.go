// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGPDShapeRecovers: the shape fitted to 4000 draws of a generalized
// Pareto distribution of known shape is within 0.08 of it.
func TestGPDShapeRecovers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []float64{-0.3, 0.2, 0.5, 0.8, 1.2} {
		x := make([]float64, 4000)
		for i := range x {
			u := rng.Float64()
			// Inverse cdf of the GPD with scale 1.
			x[i] = (math.Pow(1-u, -k) - 1) / k
		}
		slices.Sort(x)
		if got, _ := gpdFit(x); math.Abs(got-k) > 0.08 {
			t.Errorf("shape %v: fitted %v", k, got)
		}
	}
}

// TestParetoKImportance: importance sampling of N(0, 1) from N(0, s^2).
// A proposal narrower than the target, s = 0.5, has ratios
// exp(1.5 x^2) (up to a constant), whose tail falls as t^(-4/3): k = 0.75.
// A wider one, s = 2, has bounded ratios: k below ParetoKGood. And q equal
// to p gives ratios all equal: -Inf.
func TestParetoKImportance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	logw := func(s float64) []float64 {
		w := make([]float64, 10000)
		for i := range w {
			x := s * rng.NormFloat64()
			// log N(x; 0, 1) - log N(x; 0, s^2).
			w[i] = -0.5*x*x + 0.5*x*x/(s*s) + math.Log(s)
		}
		return w
	}
	k, tail, err := ParetoK(logw(0.5))
	t.Logf("narrow proposal: k = %.3f", k)
	if err != nil || math.Abs(k-0.75) > 0.12 || tail != 300 {
		t.Errorf("narrow proposal: k = %v, tail %d, %v; want 0.75 from 300 ratios", k, tail, err)
	}
	if k, _, err := ParetoK(logw(2)); err != nil || !(k < ParetoKGood) {
		t.Errorf("wide proposal: k = %v, %v; want below %v", k, err, ParetoKGood)
	}
	if k, _, err := ParetoK(make([]float64, 100)); err != nil || !math.IsInf(k, -1) {
		t.Errorf("exact proposal: k = %v, %v", k, err)
	}
	if _, _, err := ParetoK(make([]float64, 10)); err == nil {
		t.Error("10 draws: no error")
	}
}

// TestPSISCorrects: draws from N(mu, s^2) reweighted towards N(0, 1) by
// PSIS give the target's mean, sd and quantiles within their Monte Carlo
// error, where the draws themselves are mu off in the mean: a wider
// proposal (bounded ratios, k < 0) and a narrower one (k about 0.28,
// whose largest ratios the smoothing replaces).
func TestPSISCorrects(t *testing.T) {
	for _, c := range []struct{ mu, sd float64 }{{0.3, 1.2}, {0.2, 0.85}} {
		rng := rand.New(rand.NewPCG(7, 7))
		const s = 4000
		x, logw := make([]float64, s), make([]float64, s)
		for i := range x {
			x[i] = c.mu + c.sd*rng.NormFloat64()
			z := (x[i] - c.mu) / c.sd
			logw[i] = -0.5*x[i]*x[i] + 0.5*z*z + math.Log(c.sd)
		}
		w, k, err := PSIS(logw)
		if err != nil || !(k < ParetoKBad) {
			t.Fatalf("%+v: k = %v, %v", c, k, err)
		}
		var sum float64
		for _, v := range w {
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("%+v: weights sum to %v", c, sum)
		}
		ess := EffectiveDraws(w)
		m := WeightedMarginal("x", x, w)
		se := 1 / math.Sqrt(ess)
		t.Logf("%+v: k = %.2f, effective draws %.0f of %d: mean %.3f sd %.3f, quantiles %.3f %.3f", c, k, ess, s, m.Mean, m.SD, m.Q025, m.Q975)
		if math.Abs(m.Mean) > 4*se || math.Abs(m.SD-1) > 4*se || math.Abs(m.Q025+1.96) > 0.15 || math.Abs(m.Q975-1.96) > 0.15 || math.Abs(m.Q50) > 0.1 {
			t.Errorf("%+v: reweighted %+v, want N(0, 1)", c, m)
		}
		if ess < s/4 || ess > s {
			t.Errorf("%+v: %.0f effective draws of %d", c, ess, s)
		}
	}
}
