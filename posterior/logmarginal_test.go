// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestLogMarginalKnown: for draws of q = N(0, 1.3²) and an unnormalised
// target Z N(0.3, 1), the estimate of log Z is within 4 standard errors of
// log Z = 2.5, and exact with a zero standard error when q is the target.
func TestLogMarginalKnown(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	logNorm := func(x, m, s float64) float64 {
		return -0.5*math.Log(2*math.Pi) - math.Log(s) - 0.5*(x-m)*(x-m)/(s*s)
	}
	const logZ = 2.5
	for _, s := range []int{100, 1000, 10000} {
		logw := make([]float64, s)
		same := make([]float64, s)
		for i := range logw {
			x := 1.3 * rng.NormFloat64()
			logw[i] = logZ + logNorm(x, 0.3, 1) - logNorm(x, 0, 1.3)
			same[i] = logZ + logNorm(x, 0, 1.3) - logNorm(x, 0, 1.3)
		}
		got, se, err := posterior.LogMarginal(logw)
		if err != nil {
			t.Fatal(err)
		}
		if !(se > 0) || math.Abs(got-logZ) > 4*se {
			t.Errorf("%d draws: %v ± %v, want %v", s, got, se, logZ)
		}
		got, se, _ = posterior.LogMarginal(same)
		if math.Abs(got-logZ) > 1e-12 || se > 1e-12 {
			t.Errorf("%d draws of the target itself: %v ± %v, want %v exactly", s, got, se, logZ)
		}
	}
	if _, _, err := posterior.LogMarginal([]float64{1}); err == nil {
		t.Error("one draw: no error")
	}
}

// TestLogMarginalBruteForce: on a tiny Poisson random-intercept model (6
// subjects of 4 counts, an intercept, prior sd 2), the importance
// estimate of log p(y) from a GVA fit's ratios agrees with nested
// numerical integration (b_i inside, then beta and omega on a grid, each
// checked by halving its spacing) within 4 of its standard errors plus
// 1e-3.
func TestLogMarginalBruteForce(t *testing.T) {
	m, counts := tinyPoisson(t, 1, 1)
	const priorSD = 2
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, se, err := posterior.LogMarginal(res.LogWeights)
	if err != nil {
		t.Fatal(err)
	}
	k, _, _ := posterior.ParetoK(res.LogWeights)

	// log p(y | beta, omega) integrates each b_i = exp(-omega) u over u ~
	// N(0, 1) by the trapezoid rule; the counts of a subject enter through
	// their sum and number.
	logLik := func(beta, omega float64, h float64) float64 {
		sd := math.Exp(-omega)
		var total float64
		for _, c := range counts {
			var sum, lfact float64
			for _, v := range c {
				sum += v
				lg, _ := math.Lgamma(v + 1)
				lfact += lg
			}
			n := float64(len(c))
			var acc float64
			for u := -10.0; u <= 10+h/2; u += h {
				eta := beta + sd*u
				acc += math.Exp(sum*eta - n*math.Exp(eta) - lfact - 0.5*u*u)
			}
			total += math.Log(acc * h / math.Sqrt(2*math.Pi))
		}
		return total
	}
	logPrior := func(x float64) float64 {
		return -0.5*math.Log(2*math.Pi*priorSD*priorSD) - 0.5*x*x/(priorSD*priorSD)
	}
	// The grid spans 12 sds of q's marginals either side of their means.
	n, r, _ := m.Dims()
	mu := res.Mu[n*r:]
	cov := res.GlobalCov()
	sb, so := math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1))
	brute := func(steps int, h float64) float64 {
		db, do := 24*sb/float64(steps), 24*so/float64(steps)
		var vals []float64
		for a := 0; a <= steps; a++ {
			beta := mu[0] - 12*sb + float64(a)*db
			for b := 0; b <= steps; b++ {
				omega := mu[1] - 12*so + float64(b)*do
				v := logLik(beta, omega, h) + logPrior(beta) + logPrior(omega) + math.Log(db*do)
				if a == 0 || a == steps {
					v += math.Log(0.5)
				}
				if b == 0 || b == steps {
					v += math.Log(0.5)
				}
				vals = append(vals, v)
			}
		}
		top := math.Inf(-1)
		for _, v := range vals {
			top = max(top, v)
		}
		var s float64
		for _, v := range vals {
			s += math.Exp(v - top)
		}
		return top + math.Log(s)
	}
	coarse, fine := brute(80, 0.1), brute(160, 0.05)
	if math.Abs(coarse-fine) > 1e-4 {
		t.Fatalf("the quadrature has not converged: %v with twice the spacing, %v", coarse, fine)
	}
	t.Logf("log p(y): importance sampling %.4f ± %.4f (k = %.2f, %d draws), quadrature %.5f; ELBO %.4f", got, se, k, len(res.LogWeights), fine, res.LowerBound)
	if math.Abs(got-fine) > 4*se+1e-3 {
		t.Errorf("log p(y) %v ± %v, quadrature %v", got, se, fine)
	}
	if res.LowerBound > fine {
		t.Errorf("the lower bound %v exceeds log p(y) %v", res.LowerBound, fine)
	}
}
