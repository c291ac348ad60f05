// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func simModel(t *testing.T, family string, subjects int, cov [][]float64, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: family, Subjects: subjects, Obs: 7, Beta: []float64{0.2, -0.5, 0.4}, RECov: cov, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := glmm.ParseFamily(family)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestRulesReachOptimum: every step rule, run on GVA from the default
// start, ends within a few nats of the best bound found, and no rule's bound
// is above Snngm's by more than Monte Carlo error (they all estimate the
// same optimum, which Snngm reaches).
func TestRulesReachOptimum(t *testing.T) {
	m := simModel(t, "poisson", 120, [][]float64{{0.5, 0.1}, {0.1, 0.3}}, 7)
	type out struct {
		lb, se float64
	}
	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		got := map[vi.Rule]out{}
		for _, opt := range vi.Rules() {
			res, err := vi.Fit(context.Background(), m, vi.Settings{Method: method, Rule: opt, Seed: 3, MaxIter: 30000})
			if method == vi.BlockDiag && opt == (vi.PGA{}) {
				// ProxGenAdam is unstable with a covariance factor: the
				// paper's Table 11 reports it diverging on RVB too. The
				// fit must say so: diverged, or a final bound whose Monte
				// Carlo error shows heavy tails (its median draw can be
				// sound while a few draws are far down).
				if (res.Status != vi.Diverged || err == nil) && !(res.LowerBoundSE > 1) {
					t.Errorf("rvb/pga: status %v, error %v, bound %v ± %v; want diverged or an unreliable bound", res.Status, err, res.LowerBound, res.LowerBoundSE)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%v/%v: %v", method, opt, err)
			}
			t.Logf("%v/%v: bound %.3f ± %.3f after %d iterations (%v)", method, opt, res.LowerBound, res.LowerBoundSE, res.Iterations, res.Status)
			got[opt] = out{res.LowerBound, res.LowerBoundSE}
		}
		ref := got[vi.Snngm{}]
		for opt, o := range got {
			if o.lb > ref.lb+4*math.Hypot(o.se, ref.se)+0.05 {
				t.Errorf("%v/%v: bound %.3f above Snngm's %.3f", method, opt, o.lb, ref.lb)
			}
			if o.lb < ref.lb-3 {
				t.Errorf("%v/%v: bound %.3f more than 3 nats below Snngm's %.3f", method, opt, o.lb, ref.lb)
			}
		}
	}
}

// TestRuleDefaults: the result names the rule with its defaults filled in
// (Snngm's step from the method's Alpha0 and the number of free
// parameters), keeps a rule's own values, and every rule's name parses back
// to its zero value.
func TestRuleDefaults(t *testing.T) {
	m := simModel(t, "poisson", 30, [][]float64{{0.5}}, 7)
	n, r, g := m.Dims()
	free := float64(n*r + g + n*(1+g) + g*(g+1)/2) // GVA's lambda, r = 1
	for _, c := range []struct {
		set  vi.Settings
		want vi.Rule
	}{
		{vi.Settings{}, vi.Snngm{Alpha: vi.DefaultAlpha0 * math.Sqrt(free), Alpha0: vi.DefaultAlpha0, Beta1: 0.9, Beta2: 0.999}},
		{vi.Settings{Rule: vi.Snngm{Alpha0: 0.01, Beta1: 0.5}}, vi.Snngm{Alpha: 0.01 * math.Sqrt(free), Alpha0: 0.01, Beta1: 0.5, Beta2: 0.999}},
		{vi.Settings{Rule: vi.Adam{}}, vi.Adam{Alpha: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}},
		{vi.Settings{Rule: vi.PGA{Eps: 1e-6}}, vi.PGA{Alpha: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-6}},
		{vi.Settings{Rule: vi.Nagm{}}, vi.Nagm{Alpha: 0.01, Beta1: 0.9, Clip: 5e5}},
		{vi.Settings{Rule: vi.VOGN{Alpha: 0.1}}, vi.VOGN{Alpha: 0.1, Beta1: 0.9, Beta2: 0.999}},
	} {
		c.set.MaxIter, c.set.FinalDraws, c.set.Seed = 2, 10, 1
		res, err := vi.Fit(context.Background(), m, c.set)
		if err != nil {
			t.Fatal(err)
		}
		if res.Rule != c.want {
			t.Errorf("%#v: result's rule %#v, want %#v", c.set.Rule, res.Rule, c.want)
		}
	}
	for _, rule := range vi.Rules() {
		got, err := vi.ParseRule(strings.ToUpper(rule.String()))
		if err != nil || got != rule {
			t.Errorf("ParseRule(%q) = %#v, %v; want %#v", rule, got, err, rule)
		}
	}
	if _, err := vi.ParseRule("sgd"); err == nil || !strings.Contains(err.Error(), "snngm, adam, nadam, pga, nagm, vogn") {
		t.Errorf("ParseRule(\"sgd\"): error %v, want one listing the rules", err)
	}
}
