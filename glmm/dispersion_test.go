// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/stat/distuv"
)

// dispersionCases are (family, y, psi) triples of the families with a
// dispersion parameter.
var dispersionCases = []struct {
	f      Family
	y, psi float64
}{
	{Gaussian, 0, 0}, {Gaussian, 3.5, -1}, {Gaussian, -250, 3}, {Gaussian, 1e3, 6},
	{NegBinomial, 0, 0}, {NegBinomial, 1, -2}, {NegBinomial, 7, 1}, {NegBinomial, 40, 3},
	{NegBinomial, 200, -0.5}, {NegBinomial, 3, 12},
}

// TestDispersionDerivativesFD checks Derivs and PsiDeriv against central
// differences of LogLik, and LogLik with Constant against the densities of
// gonum's distuv (Normal; Gamma-Poisson through its closed form).
func TestDispersionDerivativesFD(t *testing.T) {
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-4}
	for _, c := range dispersionCases {
		for _, eta := range []float64{-8, -1, 0, 0.4, 2.5, 6} {
			if c.f == Gaussian {
				eta *= math.Exp(c.psi)
			}
			name := fmt.Sprintf("%v y=%v psi=%v eta=%v", c.f, c.y, c.psi, eta)
			ll := c.f.LogLik(c.y, 1, eta, c.psi)
			d1, d2, d3 := c.f.Derivs(c.y, 1, eta, c.psi)
			dp := c.f.PsiDeriv(c.y, 1, eta, c.psi)
			step := settings.Step
			if c.f == Gaussian {
				step *= math.Exp(c.psi)
			}
			s := &fd.Settings{Formula: fd.Central, Step: step}
			checks := []struct {
				what      string
				got, want float64
			}{
				{"d1", d1, fd.Derivative(func(e float64) float64 { return c.f.LogLik(c.y, 1, e, c.psi) }, eta, s)},
				{"d2", d2, fd.Derivative(func(e float64) float64 { d, _, _ := c.f.Derivs(c.y, 1, e, c.psi); return d }, eta, s)},
				{"d3", d3, fd.Derivative(func(e float64) float64 { _, d, _ := c.f.Derivs(c.y, 1, e, c.psi); return d }, eta, s)},
				{"dpsi", dp, fd.Derivative(func(p float64) float64 { return c.f.LogLik(c.y, 1, eta, p) }, c.psi, settings)},
			}
			for _, k := range checks {
				scale := math.Max(math.Abs(k.want), 1e-3*math.Max(1, math.Abs(ll)))
				if math.Abs(k.got-k.want) > 1e-5*scale {
					t.Errorf("%s: %s = %v, finite difference %v", name, k.what, k.got, k.want)
				}
			}
			var want float64
			switch c.f {
			case Gaussian:
				want = distuv.Normal{Mu: eta, Sigma: math.Exp(c.psi)}.LogProb(c.y)
			case NegBinomial:
				// The Gamma-Poisson mixture, written out: with p = phi/(phi+mu),
				// Gamma(y+phi)/(Gamma(phi) y!) p^phi (1-p)^y.
				phi, mu := math.Exp(c.psi), math.Exp(eta)
				a, _ := math.Lgamma(c.y + phi)
				b, _ := math.Lgamma(phi)
				f, _ := math.Lgamma(c.y + 1)
				want = a - b - f + phi*math.Log(phi/(phi+mu)) + c.y*math.Log(mu/(phi+mu))
			}
			if got := ll + c.f.Constant(c.y, 1); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: log density %v, want %v", name, got, want)
			}
		}
	}
}

// TestDispersionNormalises checks that the densities integrate (Gaussian)
// or sum (negative binomial) to 1, and that the negative binomial has mean
// exp(eta) and variance mu + mu^2/phi.
func TestDispersionNormalises(t *testing.T) {
	for _, psi := range []float64{-1, 0.5, 2} {
		eta := 0.7
		var s float64
		sd := math.Exp(psi)
		h := sd / 200
		for y := eta - 12*sd; y <= eta+12*sd; y += h {
			s += h * math.Exp(Gaussian.LogLik(y, 1, eta, psi)+Gaussian.Constant(y, 1))
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("gaussian psi=%v: density integrates to %v", psi, s)
		}
		for _, eta := range []float64{-1, 1.5, 3} {
			var tot, m1, m2 float64
			for y := 0.0; y < 5000; y++ {
				pr := math.Exp(NegBinomial.LogLik(y, 1, eta, psi) + NegBinomial.Constant(y, 1))
				tot += pr
				m1 += pr * y
				m2 += pr * y * y
			}
			mu, phi := math.Exp(eta), math.Exp(psi)
			v := m2 - m1*m1
			if math.Abs(tot-1) > 1e-10 || math.Abs(m1-mu) > 1e-8*mu || math.Abs(v-(mu+mu*mu/phi)) > 1e-7*v {
				t.Errorf("negbinomial eta=%v psi=%v: total %v, mean %v (want %v), variance %v (want %v)", eta, psi, tot, m1, mu, v, mu+mu*mu/phi)
			}
		}
	}
}

// TestDispersionCheckResponse covers the responses the new families accept.
func TestDispersionCheckResponse(t *testing.T) {
	for _, c := range []struct {
		f    Family
		y, m float64
		ok   bool
	}{
		{Gaussian, -3.25, 1, true}, {Gaussian, 1e300, 1, true}, {Gaussian, math.NaN(), 1, false},
		{Gaussian, math.Inf(-1), 1, false}, {Gaussian, 2, 3, false},
		{NegBinomial, 0, 1, true}, {NegBinomial, 12, 1, true}, {NegBinomial, -1, 1, false},
		{NegBinomial, 0.5, 1, false}, {NegBinomial, 2, 2, false},
	} {
		if err := c.f.CheckResponse(c.y, c.m); (err == nil) != c.ok {
			t.Errorf("%v y=%v m=%v: error %v", c.f, c.y, c.m, err)
		}
	}
	for _, s := range []string{"gaussian", "Gaussian", "negbinomial", "nbinom2"} {
		if f, err := ParseFamily(s); err != nil || !f.HasDispersion() {
			t.Errorf("ParseFamily(%q) = %v, %v", s, f, err)
		}
	}
	if Poisson.HasDispersion() || Bernoulli.DispersionName() != "" || Gaussian.DispersionName() != "sigma" || NegBinomial.DispersionName() != "phi" {
		t.Error("HasDispersion or DispersionName wrong")
	}
}
