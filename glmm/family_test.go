// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
)

// familyCases are (family, y, m) triples covering the edges of each support.
var familyCases = []struct {
	f    Family
	y, m float64
}{
	{Poisson, 0, 1}, {Poisson, 1, 1}, {Poisson, 3, 1}, {Poisson, 40, 1},
	{Bernoulli, 0, 1}, {Bernoulli, 1, 1},
	{Binomial, 0, 10}, {Binomial, 3, 10}, {Binomial, 10, 10}, {Binomial, 1, 1}, {Binomial, 17, 50},
}

// etaGrid spans [-30, 30], with points near 0 and at the ends.
func etaGrid() []float64 {
	var g []float64
	for eta := -30.0; eta <= 30; eta += 0.75 {
		g = append(g, eta)
	}
	return append(g, -1e-3, 1e-3, 0.3, -29.9, 29.9)
}

// closeRel reports whether got agrees with want to tol relative to scale.
func closeRel(got, want, scale, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Abs(scale)
}

// meanSplit returns the mean per trial and one minus it, computed
// independently of the package (from math.Exp directly, in long form).
func meanSplit(f Family, eta float64) (mu, mu1 float64) {
	if f == Poisson {
		return math.Exp(eta), math.NaN()
	}
	if eta >= 0 {
		return 1 / (1 + math.Exp(-eta)), math.Exp(-eta) / (1 + math.Exp(-eta))
	}
	return math.Exp(eta) / (1 + math.Exp(eta)), 1 / (1 + math.Exp(eta))
}

func TestFamilyDerivativesFD(t *testing.T) {
	const tol = 1e-6
	settings := &fd.Settings{Formula: fd.Central, Step: 1e-4}
	for _, c := range familyCases {
		for _, eta := range etaGrid() {
			name := fmt.Sprintf("%v y=%v m=%v eta=%v", c.f, c.y, c.m, eta)
			d1, d2, d3 := c.f.Derivs(c.y, c.m, eta, 0)
			mu, mu1 := meanSplit(c.f, eta)

			// d1 against the central difference of LogLik, relative to the
			// size of the terms y(1-p) and (m-y)p (y and mu for Poisson).
			scale1 := c.y + mu
			if c.f != Poisson {
				scale1 = c.y*mu1 + (c.m-c.y)*mu
			}
			got := fd.Derivative(func(e float64) float64 { return c.f.LogLik(c.y, c.m, e, 0) }, eta, settings)
			if !closeRel(got, d1, scale1, tol) {
				t.Errorf("%s: d1 = %v, finite difference %v", name, d1, got)
			}

			// d2 and d3 do not depend on y; difference d1 and d2 at the y
			// whose d1 is small, so that the difference keeps its relative
			// accuracy (d1 = y - m mu loses it near y = m mu otherwise).
			yd := 0.0
			if c.f != Poisson && eta > 0 {
				yd = c.m
			}
			if e1, e2, e3 := c.f.Derivs(yd, c.m, eta, 0); e2 != d2 || e3 != d3 || (yd == c.y && e1 != d1) {
				t.Errorf("%s: d2, d3 depend on y", name)
			}
			got = fd.Derivative(func(e float64) float64 { d, _, _ := c.f.Derivs(yd, c.m, e, 0); return d }, eta, settings)
			if !closeRel(got, d2, d2, tol) {
				t.Errorf("%s: d2 = %v, finite difference %v", name, d2, got)
			}
			scale3 := d3
			if c.f != Poisson {
				scale3 = d2 // d3 = -d2 tanh(eta/2) vanishes at eta = 0
			}
			got = fd.Derivative(func(e float64) float64 { _, d, _ := c.f.Derivs(c.y, c.m, e, 0); return d }, eta, settings)
			if !closeRel(got, d3, scale3, tol) {
				t.Errorf("%s: d3 = %v, finite difference %v", name, d3, got)
			}

			// Closed forms computed here from the mean.
			var wantLL, wantD1 float64
			if c.f == Poisson {
				wantLL, wantD1 = c.y*eta-mu, c.y-mu
			} else {
				wantLL = c.y*eta - c.m*math.Log(1+math.Exp(eta))
				wantD1 = c.y - c.m*mu
			}
			if ll := c.f.LogLik(c.y, c.m, eta, 0); !closeRel(ll, wantLL, math.Max(1, math.Abs(wantLL)), 1e-12) {
				t.Errorf("%s: LogLik = %v, want %v", name, ll, wantLL)
			}
			if !closeRel(d1, wantD1, math.Max(1, scale1), 1e-12) {
				t.Errorf("%s: d1 = %v, want %v", name, d1, wantD1)
			}
			if m := c.f.Mean(eta); !closeRel(m, mu, mu, 1e-14) {
				t.Errorf("%s: Mean = %v, want %v", name, m, mu)
			}
		}
	}
}

// TestFamilyExtremes checks stability where naive formulas overflow or
// cancel.
func TestFamilyExtremes(t *testing.T) {
	for _, c := range []struct {
		f          Family
		y, m, eta  float64
		wantLL     float64
		wantD1     float64
		relLL, rel float64
	}{
		// log(1 + exp(800)) overflows naively; the answer is -800 - tiny.
		{Bernoulli, 0, 1, 800, -800, -1, 1e-15, 1e-15},
		// y = m at large eta: both terms ~ 40 cancel naively.
		{Bernoulli, 1, 1, 40, -math.Exp(-40), math.Exp(-40), 1e-12, 1e-12},
		{Binomial, 5, 5, 40, -5 * math.Exp(-40), 5 * math.Exp(-40), 1e-12, 1e-12},
		{Binomial, 0, 5, -40, -5 * math.Exp(-40), -5 * math.Exp(-40), 1e-12, 1e-12},
		{Bernoulli, 1, 1, -800, -800, 1, 1e-15, 1e-15},
	} {
		ll := c.f.LogLik(c.y, c.m, c.eta, 0)
		d1, d2, d3 := c.f.Derivs(c.y, c.m, c.eta, 0)
		if !closeRel(ll, c.wantLL, c.wantLL, c.relLL) || !closeRel(d1, c.wantD1, c.wantD1, c.rel) {
			t.Errorf("%v y=%v m=%v eta=%v: LogLik %v d1 %v, want %v %v", c.f, c.y, c.m, c.eta, ll, d1, c.wantLL, c.wantD1)
		}
		for _, v := range []float64{d2, d3} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%v eta=%v: non-finite derivative %v", c.f, c.eta, v)
			}
		}
	}
	// The Poisson mean is clamped, so LogLik stays finite far beyond it.
	for _, eta := range []float64{MaxPoissonEta, 710, 1e6} {
		ll := Poisson.LogLik(2, 1, eta, 0)
		d1, d2, d3 := Poisson.Derivs(2, 1, eta, 0)
		want := 2*eta - math.Exp(MaxPoissonEta)
		if ll != want || d1 != 2-math.Exp(MaxPoissonEta) || d2 != -math.Exp(MaxPoissonEta) || d3 != d2 {
			t.Errorf("eta=%v: LogLik %v (want %v), derivatives %v %v %v", eta, ll, want, d1, d2, d3)
		}
	}
}

// logFact returns log k! as a sum of logs.
func logFact(k int) float64 {
	s := 0.0
	for i := 2; i <= k; i++ {
		s += math.Log(float64(i))
	}
	return s
}

func TestFamilyConstant(t *testing.T) {
	for y := 0; y <= 200; y += 7 {
		got := Poisson.Constant(float64(y), 1)
		if want := -logFact(y); !closeRel(got, want, math.Max(1, math.Abs(want)), 1e-12) {
			t.Errorf("poisson y=%d: %v, want %v", y, got, want)
		}
		for _, m := range []int{y, y + 1, y + 13, 2*y + 5} {
			got := Binomial.Constant(float64(y), float64(m))
			want := logFact(m) - logFact(y) - logFact(m-y)
			if !closeRel(got, want, math.Max(1, math.Abs(want)), 1e-11) {
				t.Errorf("binomial y=%d m=%d: %v, want %v", y, m, got, want)
			}
		}
	}
	// Large counts against math.Lgamma directly.
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	if got, want := Poisson.Constant(1e6, 1), -lg(1e6+1); got != want {
		t.Errorf("poisson 1e6: %v, want %v", got, want)
	}
	for _, y := range []float64{0, 1} {
		if c := Bernoulli.Constant(y, 1); c != 0 {
			t.Errorf("bernoulli y=%v: constant %v", y, c)
		}
	}
	// The constants normalise: sum_y exp(LogLik + Constant) = 1.
	for _, c := range []struct {
		f   Family
		m   float64
		eta float64
		top int
	}{{Poisson, 1, 1.3, 200}, {Bernoulli, 1, -0.7, 1}, {Binomial, 12, 0.4, 12}} {
		s := 0.0
		for y := 0; y <= c.top; y++ {
			s += math.Exp(c.f.LogLik(float64(y), c.m, c.eta, 0) + c.f.Constant(float64(y), c.m))
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("%v: probabilities sum to %v", c.f, s)
		}
	}
}

func TestParseFamily(t *testing.T) {
	for _, c := range []struct {
		s    string
		want Family
		ok   bool
	}{
		{"poisson", Poisson, true}, {"Poisson", Poisson, true}, {"BERNOULLI", Bernoulli, true},
		{"binomial", Binomial, true}, {" binomial ", Binomial, true}, {"gaussian", Gaussian, true}, {"negbinomial", NegBinomial, true}, {"normal", 0, false}, {"", 0, false},
	} {
		f, err := ParseFamily(c.s)
		if (err == nil) != c.ok || f != c.want {
			t.Errorf("ParseFamily(%q) = %v, %v", c.s, f, err)
		}
		if c.ok && f.String() != stringsLower(c.s) {
			t.Errorf("%v.String() = %q", f, f.String())
		}
	}
	if s := Family(0).String(); s != "Family(0)" {
		t.Errorf("zero family prints %q", s)
	}
}

func stringsLower(s string) string {
	out := []byte{}
	for _, c := range []byte(s) {
		if c == ' ' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out = append(out, c)
	}
	return string(out)
}

func TestCheckResponse(t *testing.T) {
	for _, c := range []struct {
		f    Family
		y, m float64
		ok   bool
	}{
		{Poisson, 0, 1, true}, {Poisson, 17, 1, true}, {Poisson, -1, 1, false}, {Poisson, 1.5, 1, false},
		{Poisson, math.NaN(), 1, false}, {Poisson, math.Inf(1), 1, false}, {Poisson, 2, 3, false},
		{Bernoulli, 0, 1, true}, {Bernoulli, 1, 1, true}, {Bernoulli, 2, 1, false}, {Bernoulli, 0.5, 1, false},
		{Bernoulli, 1, 2, false},
		{Binomial, 0, 1, true}, {Binomial, 4, 4, true}, {Binomial, 5, 4, false}, {Binomial, 1, 0, false},
		{Binomial, 0, 0, false}, {Binomial, 1, 2.5, false}, {Binomial, -1, 3, false}, {Binomial, 1.2, 3, false},
		{Binomial, 1, math.NaN(), false},
		{Family(0), 0, 1, false},
	} {
		err := c.f.CheckResponse(c.y, c.m)
		if (err == nil) != c.ok {
			t.Errorf("%v y=%v m=%v: error %v", c.f, c.y, c.m, err)
		}
		if err != nil && c.f.Valid() && !errors.Is(err, ErrResponse) {
			t.Errorf("%v y=%v m=%v: %v does not wrap ErrResponse", c.f, c.y, c.m, err)
		}
	}
}
