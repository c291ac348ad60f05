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

// TestLinkDerivativesFD checks the probit and complementary log-log
// log-likelihoods against their definitions (gonum's normal cdf; 1 -
// exp(-exp(eta))) and their derivatives against central differences.
func TestLinkDerivativesFD(t *testing.T) {
	s := &fd.Settings{Formula: fd.Central, Step: 1e-4}
	for _, l := range []Link{Probit, Cloglog} {
		for _, c := range []struct{ y, m float64 }{{0, 1}, {1, 1}, {3, 10}, {10, 10}, {0, 7}} {
			for _, eta := range []float64{-6, -2.5, -0.3, 0, 0.7, 1.9, 3.5} {
				name := fmt.Sprintf("%v y=%v m=%v eta=%v", l, c.y, c.m, eta)
				p := LinkMean(l, eta)
				want := distuv.Normal{Mu: 0, Sigma: 1}.CDF(eta)
				if l == Cloglog {
					want = 1 - math.Exp(-math.Exp(eta))
				}
				if math.Abs(p-want) > 1e-14 {
					t.Errorf("%s: F = %v, want %v", name, p, want)
				}
				ll := LinkLogLik(l, c.y, c.m, eta)
				logQ := math.Log(1 - want)
				if l == Cloglog {
					logQ = -math.Exp(eta) // 1 - F, exactly
				}
				wantLL := c.y*math.Log(want) + (c.m-c.y)*logQ
				if math.Abs(ll-wantLL) > 1e-9*math.Max(1, math.Abs(wantLL)) {
					t.Errorf("%s: LogLik %v, want %v", name, ll, wantLL)
				}
				d1, d2, d3 := LinkDerivs(l, c.y, c.m, eta)
				for _, k := range []struct {
					what      string
					got, want float64
				}{
					{"d1", d1, fd.Derivative(func(e float64) float64 { return LinkLogLik(l, c.y, c.m, e) }, eta, s)},
					{"d2", d2, fd.Derivative(func(e float64) float64 { d, _, _ := LinkDerivs(l, c.y, c.m, e); return d }, eta, s)},
					{"d3", d3, fd.Derivative(func(e float64) float64 { _, d, _ := LinkDerivs(l, c.y, c.m, e); return d }, eta, s)},
				} {
					if math.Abs(k.got-k.want) > 1e-6*math.Max(1, math.Abs(k.want)) {
						t.Errorf("%s: %s = %v, finite difference %v", name, k.what, k.got, k.want)
					}
				}
				if d2 >= 0 {
					t.Errorf("%s: d2 = %v, the log-likelihood is not concave", name, d2)
				}
				if p > 1e-12 && p < 1-1e-12 {
					if back := linkOf(l, p); math.Abs(back-eta) > 1e-8*math.Max(1, math.Abs(eta)) {
						t.Errorf("%s: link of F(eta) = %v", name, back)
					}
				}
			}
		}
		// Far tails stay finite.
		for _, eta := range []float64{-40, -300, 40, 700, 1e4} {
			ll := LinkLogLik(l, 1, 3, eta)
			d1, d2, d3 := LinkDerivs(l, 1, 3, eta)
			for _, v := range []float64{ll, d1, d2, d3} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("%v eta=%v: non-finite %v (ll %v, d %v %v %v)", l, eta, v, ll, d1, d2, d3)
				}
			}
		}
	}
}
